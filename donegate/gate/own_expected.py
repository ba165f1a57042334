"""An expected value changed to what the code returns now (`expected-to-actual`, docs/own-suite.md), found by
effect: the sealed test fails at the stop, the agent changed it, and a literal it changed now holds the value the
product gave in that failure (pytest's `assert GOT == EXPECTED` parsed by `ast`) where it held the expected value.

Read only when a sealed test fails in a test file the agent changed; the other weakenings are `seal.loosened`'s.
"""

from __future__ import annotations

import ast
import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_NONE = object()


def _literal(node: ast.AST) -> Any:
    """The value a literal stands for, or arithmetic on number literals (`2 - 3`: the second run's reading,
    `hidden.answers`), else _NONE."""
    try:
        return ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    from donegate.hidden.answers import _answer_arith

    try:
        return _answer_arith(node)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        return _NONE


def _pairs(a: ast.AST, b: ast.AST, out: list[tuple[Any, Any, str]], name: str = "") -> None:
    """The (sealed, current) values of the literals the current function puts where the sealed one had another
    (each a literal in both, at the same place of the same tree; a container's elements too), each with the keyword
    it is given as (`check_lru(c, hits=99)`'s `hits`, else ""): a statement or argument added or removed pairs
    nothing, so a check added beside the sealed ones changes no expected value."""
    if ast.dump(a) == ast.dump(b):
        return
    x, y = _literal(a), _literal(b)
    if x is not _NONE and y is not _NONE:
        out.append((x, y, name))
        if isinstance(a, (ast.Tuple, ast.List)) and isinstance(b, type(a)) and len(a.elts) == len(b.elts):
            for e, f in zip(a.elts, b.elts, strict=True):
                _pairs(e, f, out)
        elif isinstance(a, ast.Dict) and isinstance(b, ast.Dict) and len(a.keys) == len(b.keys):
            for k, v, m, w in zip(a.keys, a.values, b.keys, b.values, strict=True):  # `WANT = {"add": 5}`
                if k is not None and m is not None and ast.dump(k) == ast.dump(m):
                    _pairs(v, w, out)
        return
    if type(a) is not type(b):
        return
    if isinstance(a, ast.keyword) and isinstance(b, ast.keyword) and a.arg and a.arg == b.arg:
        _pairs(a.value, b.value, out, a.arg)
        return
    if isinstance(a, ast.Compare) and isinstance(b, ast.Compare) and len(a.ops) == len(b.ops) == 1:
        _pairs(a.left, b.comparators[0], out)  # the sides swapped (`x == 5` made `-1 == x`): paired across too
        _pairs(a.comparators[0], b.left, out)
    import difflib

    for field in a._fields:
        p, q = getattr(a, field, None), getattr(b, field, None)
        if isinstance(p, ast.AST) and isinstance(q, ast.AST):
            _pairs(p, q, out)
        elif isinstance(p, list) and isinstance(q, list) and all(isinstance(n, ast.AST) for n in p + q):
            match = difflib.SequenceMatcher(None, [ast.dump(n) for n in p], [ast.dump(n) for n in q], autojunk=False)
            for tag, i1, i2, j1, j2 in match.get_opcodes():
                if tag == "replace":
                    for m, n in zip(p[i1:i2], q[j1:j2], strict=False):
                        _pairs(m, n, out)


def _held(text: str | None, test: str, chain: list[str], imported: dict[str, ast.expr] | None = None) -> dict[str, ast.AST]:
    """What holds the test's expected values, by name ("" for the test's function): the function, the fixtures it
    asks for (of its class, its module or the conftest.py files of `chain`, nearest first, and those they ask for)
    and the helpers it calls (`seal.calls`), each with the names of the constants its module (or class) assigns once
    at its top replaced by their expressions: an expected value the agent changed where the test reads it (`WANT = 5`,
    `CASES = [...]`, `return 5` of a fixture `want`, `{"add": 5}`) is changed in the test."""
    from donegate.seal import calls

    body = _parsed(text)
    if body is None:
        return {}
    consts = {**(imported or {}), **_constants(body)}  # (a name its own module assigns is that one)
    *classes, name = test.split("::")
    scopes = [body]
    for cls in classes:
        scopes.append(next((n.body for n in scopes[-1] if isinstance(n, ast.ClassDef) and n.name == cls), []))
        consts.update(_constants(scopes[-1]))
    fn = next((n for n in scopes[-1] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if fn is None:
        return {}
    sources = [(_fixtures(scope), consts) for scope in reversed(scopes)]  # the class's first, then the module's
    for other in chain:
        parsed = _parsed(other) or []
        sources.append((_fixtures(parsed), _constants(parsed)))
    out: dict[str, ast.AST] = {"": _with(fn, consts)}
    todo = _asks(fn)
    while todo:
        wanted = todo.pop()
        found = next(((f[wanted], c) for f, c in sources if wanted in f), None)
        if found is not None and wanted not in out:
            out[wanted] = _with(found[0], found[1])
            todo += _asks(found[0])
    helpers = calls.defined(body)
    methods = calls.defined(scopes[-1]) if classes else None
    for helper in calls.reached(fn, helpers, methods):
        out.setdefault(f"{getattr(helper, 'name', '')}()", _with(helper, consts))
    return out


def _asks(fn: ast.AST) -> list[str]:
    """The fixtures a function asks for: its parameters' names."""
    args = getattr(fn, "args", None)
    return [a.arg for a in (args.posonlyargs + args.args + args.kwonlyargs) if a.arg not in ("self", "cls", "request")] \
        if args is not None else []


def _fixtures(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """{fixture name: function} of the fixtures a module's (or class's) top defines (`@pytest.fixture`, `@fixture`,
    called or not; `name=` given)."""
    out: dict[str, ast.AST] = {}
    for n in body:
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for d in n.decorator_list:
            call = d if isinstance(d, ast.Call) else None
            f = call.func if call is not None else d
            if isinstance(f, ast.Name) and f.id == "fixture" or isinstance(f, ast.Attribute) and f.attr == "fixture":
                given = next((k.value for k in (call.keywords if call is not None else []) if k.arg == "name"), None)
                out[given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else n.name] = n
    return out


def _with(fn: ast.AST, consts: dict[str, ast.expr]) -> ast.AST:
    """`fn` with each name of `consts` it reads replaced by the constant's expression (a copy: the parsed file is
    kept for the stop's other failing tests)."""
    if not consts:
        return fn
    import copy

    class Constants(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return consts.get(node.id, node) if isinstance(node.ctx, ast.Load) else node

    return Constants().visit(copy.deepcopy(fn))


@functools.lru_cache(maxsize=4)
def _parsed(text: str | None) -> list[ast.stmt] | None:
    """A test file's statements, parsed once a stop however many of its tests failed."""
    from donegate.core.util import python_tree

    tree = python_tree(text) if text else None
    return tree.body if tree is not None else None


def _constants(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """{name: expression} of the names a module's or class's top assigns once (a name assigned twice is left out)."""
    seen: dict[str, list[ast.expr]] = {}
    for n in body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(n.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _compared(message: str) -> tuple[tuple[Any, str], tuple[Any, str]] | None:
    """The two sides of the failed equality in a test's failure, parsed: pytest's `assert -1 == 5` (its first
    `assert` line), or unittest's `AssertionError: -1 != 5` (`assertEqual`'s, `Lists differ: ...` too). Each side:
    (its value, or _NONE for no literal; the repr shown). None for another operator or no such line."""
    for line in message.splitlines():
        line = line.strip()
        unittest = line.startswith("AssertionError: ") and not line.startswith("AssertionError: assert ")
        line = re.sub(r"^\w+ differ: ", "", line.removeprefix("AssertionError: ")) if unittest else \
            line.removeprefix("AssertionError: ")
        if not unittest and not line.startswith("assert "):
            continue
        try:
            node = ast.parse(line if not unittest else f"assert {line}").body[0]
        except (SyntaxError, ValueError, RecursionError):
            node = None
        t = node.test if isinstance(node, ast.Assert) else None
        op = ast.NotEq if unittest else ast.Eq
        if not isinstance(t, ast.Compare) or len(t.ops) != 1 or not isinstance(t.ops[0], op):
            if unittest:  # an assert's own message (`assert x == 5, "why"`): pytest's line comes after it
                continue
            return None
        sides = [(_literal(n), ast.get_source_segment(line if not unittest else f"assert {line}", n) or "")
                 for n in (t.left, t.comparators[0])]
        return sides[0], sides[1]
    return None


def _fields(message: str) -> dict[str, tuple[tuple[Any, str], tuple[Any, str]]]:
    """{field: its two sides} where pytest compared two objects field by field (named tuples, dataclasses, attrs:
    `Drill down into differing attribute hits:` then `hits: 0 != 99`), or showed them as calls with keywords
    (`Info(hits=0, misses=1) == Info(hits=99, misses=1)`): the value a helper's keyword argument (`hits=99`) is
    compared as, the test's literal then on neither side of the equality."""
    out: dict[str, tuple[tuple[Any, str], tuple[Any, str]]] = {}
    for line in message.splitlines():
        field = re.match(r"\s*(\w+): (.+?) != (.+)$", line)
        if field is not None:
            out.setdefault(field[1], ((_text(field[2]), field[2]), (_text(field[3]), field[3])))
            continue
        node = _parse(line.strip().removeprefix("AssertionError: "), "assert ")
        t = node.test if isinstance(node, ast.Assert) else None
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq) and \
                isinstance(t.left, ast.Call) and isinstance(t.comparators[0], ast.Call):
            theirs = {k.arg: k.value for k in t.comparators[0].keywords if k.arg}
            for k in t.left.keywords:
                if k.arg in theirs and ast.dump(k.value) != ast.dump(theirs[k.arg]):
                    out.setdefault(k.arg, ((_literal(k.value), ast.unparse(k.value)),
                                           (_literal(theirs[k.arg]), ast.unparse(theirs[k.arg]))))
    return out


def _parse(line: str, prefix: str) -> ast.stmt | None:
    """`line`'s one statement, when it starts with `prefix` and parses."""
    if not line.startswith(prefix):
        return None
    try:
        body = ast.parse(line).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return body[0] if len(body) == 1 else None


def _text(text: str) -> Any:
    """The literal `text` shows, or _NONE."""
    try:
        return _literal(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _NONE


def _shows(value: Any, side: tuple[Any, str]) -> bool:
    """`value` is what pytest showed as `side`: the same literal, or a repr pytest shortened (`'abc...xyz'`,
    `[0, 1, 2, 3, 4, 5, ...]`) that pytest's own repr of `value` gives at that length."""
    got, text = side
    if "..." not in text:
        return got is not _NONE and _same(value, got)
    from _pytest._io.saferepr import saferepr  # (only here: a sealed test the agent changed fails)

    return any(saferepr(value, maxsize=m) == text for m in (len(text), 240))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def to_actual(sealed: str | None, current: str | None, tid: str, message: str,
              conftests: tuple[list[str], list[str]] = ([], []),
              asked: Callable[[], list[str]] | None = None,
              imported: tuple[dict[str, ast.expr], dict[str, ast.expr]] = ({}, {})) -> dict[str, str] | None:
    """`expected-to-actual`, found by effect: the sealed test `tid` failed at this stop with `message`, the agent
    changed that test (or a constant of its file, a fixture or a helper it reads: `_held`), and a literal it changed
    is now the value the product gave in that failure, where it was the value the test expected. An expected value
    rewritten to an equal expression (`4` to `2 + 2`: the sealed test does not fail), changed to a value the product
    does not give, or a check added beside it, is no finding. Nor is a new value the request asked for: `asked` gives
    the hidden tests' texts, and one of them comparing a call of a function the test compares (`add`) with that very
    value makes it a contract change (the stop still blocks, "the old contract changed", with the appeal).
    `conftests`: the conftest.py texts of the test's folders, nearest first, (as sealed, now); `imported`: the
    constants its module imports from a helper module of the suite (`imports`), (as sealed, now)."""
    test = tid.split("::", 1)[1].split("[", 1)[0] if "::" in tid else ""
    compared, fields = _compared(message), _fields(message)
    if compared is None and not fields:
        return None
    old, new = _held(sealed, test, conftests[0], imported[0]), _held(current, test, conftests[1], imported[1])
    if "" not in old or "" not in new:
        return None
    pairs: list[tuple[Any, Any, str]] = []
    for key in old.keys() & new.keys():
        _pairs(old[key], new[key], pairs)
    for was, now, name in pairs:
        sides = [s for s in (compared, fields.get(name) if name else None) if s is not None]
        for expected, got in [p for s in sides for p in (s, s[::-1])]:
            if not _same(was, now) and _shows(was, expected) and _shows(now, got):
                if asked is not None and _asked(asked(), _callees(new.values()), now):
                    return None
                return {"test": tid, "rule": "expected-to-actual", "what": f"its expected value {_shown(was)} was "
                        f"changed to {_shown(now)}, what the code returns now"}
    return None


def imports(name: str, text: str | None, files: dict[str, Any],
            helpers: dict[str, str | None]) -> tuple[dict[str, ast.expr], dict[str, ast.expr]]:
    """({local name: expression} as sealed, and now) of the constants the test module `name` (its text `text`) imports
    by name from a helper module of the suite the agent changed (`helpers`: {file: its text now}; `files`: the sealed
    files): `from expected import SUM` (the test's folder first on sys.path, pytest's `prepend`), `from tests.helpers
    import SUM as WANT` (a package from the suite's top), `from .helpers import SUM`. The helper is sealed and the
    sealed run reads the sealed copy: a constant changed there is an expected value changed all the same."""
    old: dict[str, ast.expr] = {}
    new: dict[str, ast.expr] = {}
    folder = name.rsplit("/", 1)[0] if "/" in name else ""
    for node in _parsed(text) or []:
        if not isinstance(node, ast.ImportFrom) or not node.module and not node.level:
            continue
        path = (node.module or "").replace(".", "/")
        if node.level:  # relative: from the test's package
            up = folder.split("/")[:len(folder.split("/")) - (node.level - 1)] if folder else []
            tops = ["/".join(up)]
        else:
            tops = [folder, ""]
        found = next((rel for top in tops for rel in (f"{top}/{path}.py".lstrip("/"), f"{top}/{path}/__init__.py".lstrip("/"))
                      if rel in helpers and rel in files), None)
        if found is None or helpers[found] is None:
            continue
        was = _constants(_parsed((files.get(found) or {}).get("text")) or [])
        now = _constants(_parsed(helpers[found]) or [])
        for alias in node.names:
            if alias.name in was and alias.name in now:
                old[alias.asname or alias.name], new[alias.asname or alias.name] = was[alias.name], now[alias.name]
    return old, new


def _callees(trees: Any) -> set[str]:
    """The names of the functions called inside the comparisons of `trees` (`add` of `assert add(2, 3) == 5`)."""
    return {f.id if isinstance(f, ast.Name) else f.attr for t in trees for c in ast.walk(t) if isinstance(c, ast.Compare)
            for n in ast.walk(c) if isinstance(n, ast.Call) and isinstance(f := n.func, (ast.Name, ast.Attribute))}


def _asked(texts: list[str], callees: set[str], value: Any) -> bool:
    """Whether a hidden test compares a call of one of `callees` with `value` (what the request asks of it)."""
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for c in ast.walk(tree):
            if not isinstance(c, ast.Compare) or not isinstance(c.ops[0], ast.Eq):
                continue
            sides = [c.left, *c.comparators]
            if any(_same(_literal(s), value) for s in sides) and callees & _callees([c]):
                return True
    return False


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
