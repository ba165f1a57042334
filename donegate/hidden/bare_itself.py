"""What a test file says of itself once it runs as a program (the second run's `__main__`, `bare_fork`): its own module's
or file's name written out, its own file read, the name of the code running; and the tests whose multiprocessing
children run the program's file again. The kit's side only (`second.run`), from the syntax alone: such tests are not
double-checked, said why. (Moved from `bare_plan.py`.)"""

from donegate.core.lazy import Lazy
from donegate.hidden.bare_plan import _dotted, inherited, own_classes

ast = Lazy("ast", globals(), "ast")  # type: ignore[assignment]

# What reads the name of the code running (a frame's, a log record's): a test's, in the second run a program's
SELF_NAMED = ("co_name", "co_qualname", "funcName", "currentframe", "_getframe", "getframeinfo", "stack")


def names_itself(source, rel):
    """{test qualname, or "*" for every test of the file: why} for the tests that would fail in the second run however
    right the product is, where a test file is a program (its module `__main__`, its file on disk empty: `bare_fork`),
    from the syntax alone: they are not double-checked. Such a test
    - names its own module as pytest imports it (`test_x`, `test_x.handler`, `"test_x:key"`: a logger's name, a
      registry's or patch target's key written out), or its own file (`test_x.py`: a program's is named otherwise), or
    - reads its own file (`open(__file__)`, `Path(__file__).read_text()`; a file beside it, `.with_name(...)`, is not),
      or the name of the code running (`f_code.co_name`, a log record's `funcName`, `inspect.stack()`: a test's code
      is named as a program's function in the second run, `bare_fork.as_called`).
    In a test, that test; anywhere else (a fixture, a helper, a test class's own lines), every test it may reach. Run
    by the kit on the sources as sealed (the run gets them with held literals out, `answers.py`)."""
    import re

    names = sorted({rel[:-3].rpartition("/")[2], rel[:-3].replace("/", ".")}, key=len, reverse=True)
    named = re.compile("|".join(r"(?<![\w.])%s(?!\w|\.py\b)" % re.escape(n) for n in names))
    own = rel.rpartition("/")[2]
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    if not named.search(text) and "__file__" not in text and own not in text and not any(w in text for w in SELF_NAMED):
        return {}  # the common case (no parse)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    whys = (f"names its own module ({rel[:-3].rpartition('/')[2]}), which is __main__ in a program",
            "reads its own file, which the second run's program holds as sent (held values out), or empty unconfined",
            f"names its own file ({own}), which a program's is not (second.program_names)",
            "reads its own function's name, which a program's function is not (bare_fork.as_called)")

    def itself(n):  # `__file__`, or a path made of it alone
        return isinstance(n, ast.Name) and n.id == "__file__" or isinstance(n, ast.Call) and len(n.args) == 1 and \
            _dotted(n.func).rsplit(".", 1)[-1] in ("Path", "PurePath", "abspath", "realpath", "fspath", "str") and itself(n.args[0])

    def says(*nodes):
        for c in (c for node in nodes for c in ast.walk(node)):
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and named.search(c.value):
                return whys[0]
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and own in c.value:
                return whys[2]
            if isinstance(c, ast.Attribute) and c.attr in SELF_NAMED[:3] or isinstance(c, ast.Call) and \
                    _dotted(c.func).rsplit(".", 1)[-1] in SELF_NAMED[3:]:
                return whys[3]
            if isinstance(c, ast.Call) and (isinstance(c.func, ast.Attribute) and c.func.attr in ("read_text", "read_bytes", "open")
                                            and itself(c.func.value) or _dotted(c.func).rsplit(".", 1)[-1] == "open"
                                            and c.args and itself(c.args[0])):
                return whys[1]
        return ""
    return _per_test(tree, says)


# multiprocessing's start methods that run `__main__`'s file again in a fresh interpreter (`spawns`)
FRESH = ("spawn", "forkserver")
FRESH_BY_DEFAULT = ("Pool", "Process", "ProcessPoolExecutor")  # Python 3.14 on: forkserver is the default


def spawns(source, default=False):
    """{test qualname, or "*": why} for the tests that start multiprocessing children in a fresh interpreter (the
    spawn or forkserver start method named; `default`: the project's Python starts them so by default, and a pool or
    process is made), when the second run's program file is empty (unconfined: `second._programs` binds the text only
    inside bubblewrap). Such a child runs `__main__`'s file again and finds none of the test file's functions there: a
    pool mapping one starts workers until the run's time is out. Not double-checked, said why; from the sealed text."""
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    if not any(w in text for w in (*FRESH, *(FRESH_BY_DEFAULT if default else ()))):
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}

    def says(*nodes):
        for c in (c for node in nodes for c in ast.walk(node)):
            if isinstance(c, ast.Constant) and c.value in FRESH or default and isinstance(c, ast.Call) and \
                    _dotted(c.func).rsplit(".", 1)[-1] in FRESH_BY_DEFAULT:
                return ("starts multiprocessing children in a fresh interpreter (spawn, forkserver), which run the test "
                        "file again: unconfined, the second run's program file is empty")
        return ""
    return _per_test(tree, says)


def _per_test(tree, says):
    """{test qualname: why} for the tests whose own lines `says` something of; {"*": why} when lines outside any test
    (a fixture, a helper, a test class's own) do."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            why = says(node)
            out.update({node.name: why} if why else {})
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            tests = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
            rest = says(*node.decorator_list, *node.bases, *node.keywords, *(m for m in node.body if m not in tests))
            whys_of = {f"{node.name}::{m.name}": rest or says(m) for m in tests}
            out.update({k: why for k, why in whys_of.items() if why})
        elif why := says(node):
            return {"*": why}
    classes = own_classes(tree)
    for node, base, m in inherited(classes):  # a test inherited from a class of the file's own: its reason too
        if f"{base.name}::{m.name}" in out:
            out[f"{node.name}::{m.name}"] = out[f"{base.name}::{m.name}"]
    return out
