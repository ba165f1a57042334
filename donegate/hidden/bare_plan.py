"""The second harness's plan: which sealed tests it can run faithfully, from their syntax tree alone.

Nothing is imported: the kit's side (`second.py`) plans before it starts the run, and the supervisor inside the run
(`bare.py`) plans again from the files it reads. Standard library only: this source is sent with `bare.py`.
"""

if not globals().get("__package__"):  # sent to a run: `ast` at its top, as always
    import ast
else:  # imported by the kit: at its first use (`core.lazy`)
    from donegate.core.lazy import Lazy

    ast = Lazy("ast", globals(), "ast")  # type: ignore[assignment]
import os
import sys

TOKEN = 32  # characters of the token a passing fork gives back
SERVED = ("tmp_path", "tmp_path_factory", "monkeypatch", "capsys", "caplog", "subtests")
SEEDED = "dg_random"  # served when the kit sent the tests' seeds (`second.run`'s `seed`), as the first run serves it
SHIM = ("raises", "approx", "fail", "skip", "mark", "param", "fixture")
HARNESS = ("pytest", "_pytest", "pluggy")
# (a module's `setUpModule`/`setup_module` and their tear-downs are served: `bare_shim.plan_test`)
# (`pytest_collection_modifyitems` there is a plain function: pytest calls a conftest's, never a test module's; it is served;
# `pytest_generate_tests` is served where `_generated` reads it; `pytest_plugins` never: the plugins it loads are pytest's
# code, their fixtures and hooks run inside pytest, which the second run has none of)
MODULE_HOOKS = ("pytest_generate_tests", "pytestmark", "setup_function", "teardown_function", "setup", "teardown",
                "pytest_plugins")
# nose's set-up and tear-down of a module, a class or a method, as pytest before 8.0 calls them (its `nose` plugin): with a
# pytest that has none, plain functions (`plan`'s `nose`, `noses`), served as any of the file's
NOSE = ("setup", "teardown")


def closures(folders):
    """Whether the pytest in `folders` walks a test's fixtures depth first (pytest 9's `traverse_fixture_closure`), not
    breadth first as before (`bare_served.order`): read once a run."""
    for f in folders:
        try:
            with open(os.path.join(f, "_pytest", "fixtures.py"), "rb") as fh:
                return b"def traverse_fixture_closure(" in fh.read()
        except OSError:
            continue
    return True


def noses(folders):
    """Whether the pytest in `folders` (where the first run imports it from) calls nose's set-ups (before 8.0): asked by
    the supervisor (the kit plans its kept plans as if it did, `rewritten.build`; finding its pytest took ~4 ms a stop)."""
    return any(os.path.isfile(os.path.join(f, "_pytest", "nose.py")) for f in folders)


def unit_first(folders):
    """Whether the pytest in `folders` sets a TestCase's `setUpClass` up before its `setup_class` (it registers unittest's
    class fixture first, as pytest 8.1 on does: `_pytest/unittest.py` read, once a run); pytest 8.0 lists them by
    attribute name, `setup_class` first. The kit plans as if it did (`plan`'s `first`): the supervisor plans again where it does not."""
    for f in folders:
        try:
            with open(os.path.join(f, "_pytest", "unittest.py"), "rb") as fh:
                text = fh.read()
        except OSError:
            continue
        at = text.find(b"self._register_unittest_setup_class_fixture(")
        return at >= 0 and text.find(b"self._register_setup_class_fixture(", at) > at
    return False


def nosed(planned):
    """Whether a plan (`plan`'s answer) left a file or a class's tests out for nose's names alone, as with a pytest
    that calls them: the supervisor plans such a file again when its pytest does not."""
    whys = {f"defines {n}" for n in NOSE} | {f"a test class with {n}" for n in NOSE}
    return planned[0] in whys or any(why in whys for why, _ in planned[1].values())
# ... and a module's set-up and tear-down of each test function, as plain functions: served, each as pytest's autouse
# fixture of it, in pytest's order among the file's fixtures (`bare_served.order`)
XUNIT = ("setup_function", "teardown_function")
# ... and a plain test class's (not a TestCase's): its own set-up and tear-down, of the class and of each test method
MODULE_XUNIT = ("setUpModule", "setup_module", "tearDownModule", "teardown_module")  # the module's, once (`plan_test`)
CLASS_XUNIT = ("setup_class", "teardown_class", "setup_method", "teardown_method")
CLASS_HOOKS = ("setup_method", "teardown_method", "setup_class", "teardown_class", "setup", "teardown",
               "pytestmark", "__init__", "pytest_generate_tests")
# What a module's `pytest_generate_tests` may read of its `metafunc` where the second run serves it (`bare_served._Metafunc`)
METAFUNC = ("fixturenames", "function", "cls", "module", "parametrize")
# A unittest TestCase that changes how unittest runs a test (the second harness calls its setUp, test and tearDown
# from the program itself, `bare_served.unit_steps`), or has pytest's own xunit hooks: not double-checked.
UNIT_HOOKS = (*CLASS_HOOKS, "run", "__call__", "debug", "_callSetUp", "_callTestMethod", "_callTearDown", "_callCleanup",
              "doCleanups", "subTest", "__init_subclass__")
UNIT_SKIPS = ("skip", "skipIf", "skipUnless")  # class decorators unittest itself reads (`__unittest_skip__`)
# unittest's IsolatedAsyncioTestCase: served from Python 3.11 (its asyncio.Runner, `bare_served.unit_steps`), unless a class
# of the file's changes how it runs a test in its loop
ASYNC_HOOKS = ("_callAsync", "_callMaybeAsync", "_setupAsyncioRunner", "_tearDownAsyncioRunner", "_asyncioRunner",
               "_asyncioTestContext", "_asyncioTestLoop", "_setupAsyncioLoop", "_tearDownAsyncioLoop")



# --- the plan: the test files' syntax, nothing imported ----------------------------------------------------

def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def own_classes(tree):
    """The file's own top-level classes by name (one defined twice: None, neither is known to be the one meant)."""
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = None if node.name in classes else node
    return classes


def lineage(node, classes, outside=()):
    """(the file's own classes `node` is made of, itself first, its bases' left to right, depth first, each once: where
    pytest and unittest find a test method, the first that defines it; the names of its other bases, each class of
    `classes` defined twice or named in `outside` among them, "" for a class keyword (a metaclass) or a loop). The
    one walk of a class's bases: the plan (`plan`), the tests' reasons (`_per_test`), the held asserts
    (`answers.answer_holds`)."""
    out, other = [], []

    def walk(c, seen):
        if c.keywords or c.name in seen:
            other.append("")
            return
        if c not in out:
            out.append(c)
        for b in c.bases:
            name = _dotted(b)
            if name in outside or classes.get(name) is None:
                other.append(name)
            else:
                walk(classes[name], seen | {c.name})
    walk(node, frozenset())
    return out, other


def _deco_name(d):
    return _dotted(d.func if isinstance(d, ast.Call) else d)


def _argnames(call):
    if not call.args or not isinstance(call.args[0], ast.Constant) and not isinstance(call.args[0], (ast.List, ast.Tuple)):
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant):
        return [n.strip() for n in str(first.value).split(",") if n.strip()] if isinstance(first.value, str) else None
    names = [e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names if len(names) == len(first.elts) else None


def _params(marks):
    """(parameter names of parametrize marks, fixture names of usefixtures marks) of a test's decorators (or of a
    `pytestmark`'s marks), or a reason it cannot be run."""
    names, used = [], []
    for d in marks:
        name = _deco_name(d)
        last = name.rsplit(".", 1)[-1]
        if last == "usefixtures":  # served as pytest lists them (`bare_served.order`), when written out
            if not isinstance(d, ast.Call) or d.keywords or not all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                                   for a in d.args):
                return None, "pytest.mark.usefixtures with names that are not written out"
            used += [a.value for a in d.args]
        if last == "parametrize":
            if not isinstance(d, ast.Call) or any(k.arg in ("indirect", "scope") for k in d.keywords):
                return None, "indirect or scoped parametrize"
            argnames = _argnames(d)
            if argnames is None:
                return None, "parametrize names that are not written out"
            names += argnames
    return (names, used), ""


def _given(fn, args, seeded):
    """The arguments hypothesis's `@given` fills (keyword strategies by name, positional ones the rightmost), or a
    reason the second harness cannot run the test. It runs one with the first run's draw (`seeded.given_draw`), from
    the test's own seed: without the seeds (`seeded`), not at all."""
    given = [d for d in fn.decorator_list if _deco_name(d).rsplit(".", 1)[-1] == "given"]
    if not given:
        return (), ""
    if not seeded:
        return (), "a hypothesis @given test (the second run has no draw of the first run's to repeat)"
    d = given[0]
    if len(given) > 1 or not isinstance(d, ast.Call) or any(isinstance(a, ast.Starred) for a in d.args) \
            or any(k.arg is None for k in d.keywords) or fn.args.vararg or fn.args.kwarg or len(d.args) > len(args):
        return (), "a hypothesis @given test whose arguments the second harness cannot tell from its syntax"
    return {k.arg for k in d.keywords} | set(args[len(args) - len(d.args):] if d.args else ()), ""


MARKS = "pytestmark"  # a module's marks for each of its tests: served (`bare_shim.module_marks`) when written out as marks
MARKS_NOT_SERVED = ()  # `usefixtures` and `parametrize` there are served as on a test of its own (`_params`)


def _module_marks(tree, aliases, from_names):
    """Why the module's `pytestmark` keeps its tests from the second run ("" when it has none, or one the second harness
    serves): bound once, at the module's top, to a mark (`pytest.mark.slow`, `mark.skipif(...)`) or a list or tuple of
    them, none `usefixtures` or `parametrize`, and never read by the file's code (the program's global is named as its
    text shows it, `second.as_shown`). A class's own: `_class_marks`."""
    classes = {id(t) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for b in c.body if isinstance(b, ast.Assign)
               for t in b.targets}
    binds = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == MARKS and id(n) not in classes
             or isinstance(n, ast.arg) and n.arg == MARKS or isinstance(n, ast.alias) and (n.asname or n.name) == MARKS
             or isinstance(n, (ast.Global, ast.Nonlocal)) and MARKS in n.names
             or isinstance(n, ast.Attribute) and n.attr == MARKS]  # a class's read by the file's code
    if not binds:
        return ""
    top = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
           and any(isinstance(t, ast.Name) and t.id == MARKS for t in getattr(n, "targets", [getattr(n, "target", None)]))]
    if len(binds) != len(top) or _marks_of(tree) is None:
        return f"defines {MARKS} otherwise than once, at its top"
    return _marks_why(ast.List(_marks_of(tree), ast.Load()), aliases, from_names)


def _marks_of(tree):
    """The module's `pytestmark`'s marks, as its top binds them: once (`=`, or annotated), a mark or a list or tuple of them,
    then (a list) added to by `+=` of lists or tuples; None when bound otherwise. The program's code binds it as written
    (the second run reads the value it made: `bare_fork.module_marks`)."""
    top = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
           and [_dotted(t) for t in getattr(n, "targets", [getattr(n, "target", None)])] == [MARKS]]
    first, more = (top or [None])[0], top[1:]
    if not isinstance(first, (ast.Assign, ast.AnnAssign)) or first.value is None or more and not isinstance(first.value, ast.List) \
            or any(not (isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.value, (ast.List, ast.Tuple)))
                   for n in more):
        return None if top else []
    return [*_values(first.value), *(m for n in more for m in n.value.elts)]


def _xunit(node):
    """Whether a set-up or tear-down of pytest's xunit style is one the second harness serves: a plain function (a
    class's may be a classmethod or staticmethod), not a fixture."""
    return isinstance(node, ast.FunctionDef) and all(_deco_name(d) in ("classmethod", "staticmethod") for d in node.decorator_list)


def _scope(deco):
    """A fixture's scope as its decorator writes it ("?" when not written out as a constant: a callable's, say)."""
    if isinstance(deco, ast.Call) and deco.args:  # pytest's old positional scope
        return "?"
    for k in deco.keywords if isinstance(deco, ast.Call) else ():
        if k.arg == "scope":
            return k.value.value if isinstance(k.value, ast.Constant) else "?"
    return "function"


def _marks_why(value, aliases, from_names):
    prefixes = {f"{a}.mark" for a in aliases} | {n for n in from_names if n == "mark"}
    for m in value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]:
        name = _dotted(m.func if isinstance(m, ast.Call) else m)
        prefix, _, last = name.rpartition(".")
        if prefix not in prefixes:
            return f"defines {MARKS} with what is not written out as marks"
        if last in MARKS_NOT_SERVED or _params([m])[1]:
            return f"defines {MARKS} with pytest.mark.{last}" + (f" ({_params([m])[1]})" if _params([m])[1] else "")
    return ""


def _values(value):
    """A `pytestmark`'s marks (a mark, or a list or tuple of them)."""
    return value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]


def _class_marks(body, aliases, from_names):
    """A test class's `pytestmark` statements (of it and its own bases, `body`) the second harness serves as each of its
    tests' marks (`_marks_why`: written out as marks, one target), the rest being a hook it does not serve."""
    return [n for n in body if isinstance(n, ast.Assign) and [_dotted(t) for t in n.targets] == [MARKS]
            and not _marks_why(n.value, aliases, from_names)]


def plan(source, harness_aliases=None, served=SERVED, own=(), nose=True, first=True):
    """(module reason, {qualname: (reason, fixture names)}) for one test file, from its syntax tree; `served`: the
    fixtures the harness serves itself (a file's own fixture of that name is its own); `own`: harness names the
    project itself provides (a project that is pluggy): its tests import them as the product; `nose`: the first run's
    pytest calls nose's set-ups (`noses`); `first`: it sets a TestCase's `setUpClass` up before `setup_class` (`unit_first`)."""
    tree = ast.parse(source)
    aliases, from_names = set(), set()
    cases = set()  # how the file names unittest's TestCase (`unittest.TestCase`, `TestCase`, `ut.TestCase`)
    acases = set()  # and its IsolatedAsyncioTestCase
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            cases.update(f"{a.asname or a.name}.TestCase" for a in node.names if a.name in ("unittest", "unittest.case"))
            acases.update(f"{a.asname or a.name}.IsolatedAsyncioTestCase" for a in node.names if a.name == "unittest")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ("unittest", "unittest.case"):
            cases.update(a.asname or a.name for a in node.names if a.name == "TestCase")
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ("unittest", "unittest.async_case"):
            acases.update(a.asname or a.name for a in node.names if a.name == "IsolatedAsyncioTestCase")
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top in own:
                    continue
                if top in ("_pytest", "pluggy") or a.name != "pytest" and top == "pytest":
                    return f"imports {a.name}", {}
                if a.name == "pytest":
                    aliases.add(a.asname or "pytest")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in HARNESS \
                and (node.module or "").split(".")[0] not in own:
            if node.module != "pytest":
                return f"imports from {node.module}", {}
            for a in node.names:
                if a.name not in SHIM:
                    return f"uses pytest.{a.name}", {}
                from_names.add(a.asname or a.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr not in SHIM:
                return f"uses pytest.{node.attr}", {}
    fixtures, scopes, autos = {}, {}, []
    marked = _module_marks(tree, aliases, from_names)
    if marked:
        return marked, {}
    module_marks = _params(_marks_of(tree))[0]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.ClassDef)):
            names = [node.name] if not isinstance(node, ast.Assign) else [_dotted(t) for t in node.targets]
            hooks = [n for n in names if n in MODULE_HOOKS and not (n == MARKS and isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)))
                     and not (n in XUNIT and _xunit(node)) and not (n in NOSE and not nose)
                     and not (n == "pytest_generate_tests" and _generated(node) is not None)]
            if hooks:
                return f"defines {hooks[0]}", {}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (why := _fixture_def(node, fixtures, scopes, autos)):
            return why, {}
    xunit = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in XUNIT]
    generated = set().union(*(_generated(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pytest_generate_tests"))

    def needs(args, defs, seen, shadow=frozenset()):  # `shadow`: a test's parameters, each its name's value throughout
        for a in args:
            if a in shadow or a in served and a not in defs:
                continue
            if a not in defs:
                return f"uses the fixture {a}, which the second harness does not serve"
            why, deps = defs[a]
            if why:
                return why
            if a in seen:
                return f"the fixture {a} depends on itself"
            inner = needs(deps, defs, seen | {a}, shadow)
            if inner:
                return inner
        return ""

    def reach(args, defs, seen, shadow=frozenset()):
        """The file's fixtures a test reaches (through its fixtures too; not through one its parameter overrides)."""
        for a in args:
            if a in defs and a not in seen and a not in shadow:
                seen.add(a)
                reach(defs[a][1], defs, seen, shadow)
        return seen

    tests = {}
    classes = own_classes(tree)
    module_ups = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in MODULE_XUNIT]

    def chain(node):
        """The file's own classes `node` is made of (`lineage`), and whether unittest's TestCase is among its bases
        ("async" for its IsolatedAsyncioTestCase); None when a base is neither (another module's class, a metaclass)."""
        made, other = lineage(node, classes, cases | acases)
        if any(name not in cases and name not in acases and name != "object" for name in other):
            return None
        return made, "async" if any(name in acases for name in other) else any(name in cases for name in other)

    def test(fn, qual, skip_self, loop=False, ups=xunit, own=({}, {}, [], ([], []))):
        if isinstance(fn, ast.AsyncFunctionDef) and not loop:  # an IsolatedAsyncioTestCase's runs in its loop
            tests[qual] = ("an async test", [])
            return
        args = [a.arg for a in fn.args.args][1 if skip_self else 0:]
        drawn, why = _given(fn, args, SEEDED in served)
        if why:
            tests[qual] = (why, [])
            return
        marks, why = _params(fn.decorator_list)
        if why:
            tests[qual] = (why, [])
            return
        pnames = [*marks[0], *own[3][0], *module_marks[0], *(a for a in args if a in generated)]
        want = [a for a in args if a not in pnames and a not in drawn]
        # every fixture it reaches as pytest lists them (`bare_served.order`): the autouse ones, its `usefixtures`
        # (its own marks, its class's, its module's), its arguments; each set up in pytest's order, the xunit set-ups
        # among them, by scope: one whose scope is not written out is not known to be in its place
        defs, names = {**fixtures, **own[0]}, [n for n in [*autos, *own[2], *marks[1], *own[3][1], *module_marks[1], *want]
                                              if n not in pnames]
        # a mark's parameter overrides its name's fixture for them all (a generated one may not: reached, conservatively)
        marked, maybe = {*marks[0], *own[3][0], *module_marks[0]}, [a for a in args if a in generated and a in defs]
        reached = sorted(reach(names, defs, set(), marked))
        dynamic = [n for n in reached if {**scopes, **own[1]}.get(n) == "?"]
        tests[qual] = (needs([*names, *maybe], defs, frozenset(), marked) or (f"the fixture {dynamic[0]}'s scope is not written out (pytest "
                       "sets the fixtures up by scope)" if dynamic and (ups or module_ups or len(reached) > 1) else ""), want)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            test(node, node.name, False)
        elif isinstance(node, ast.ClassDef):
            # a unittest TestCase of the file's own, its bases unittest's or the file's (pytest collects it by any
            # name): its own bases of the file (a base class's tests, a mixin's) are its too, as pytest collects them
            made = chain(node)
            unit = made is not None and made[1]
            if not (unit or node.name.startswith("Test")):
                continue
            made = made[0] if unit else [node]
            hooks = (*UNIT_HOOKS, *ASYNC_HOOKS) if unit else CLASS_HOOKS
            body = [n for c in made for n in c.body]
            defined = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            bad = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in hooks
                   and not (n.name in CLASS_XUNIT and _xunit(n) and (not unit or _unit_xunit(n.name, defined, first))
                            or not unit and n.name in NOSE and not nose)]
            served_marks = _class_marks(body, aliases, from_names)
            bad += [_dotted(t) for n in body if isinstance(n, ast.Assign) and n not in served_marks for t in n.targets
                    if _dotted(t) in hooks and (unit or nose or _dotted(t) not in NOSE)]
            # its marks as decorators (`pytest.mark.slow`, written out): each of its tests' too, after its `pytestmark`
            marked = [d for c in made for d in c.decorator_list if not _marks_why(d, aliases, from_names)]
            decorated = [d for c in made for d in c.decorator_list
                         if d not in marked and (not unit or _deco_name(d).rsplit(".", 1)[-1] not in UNIT_SKIPS)]
            # its own fixtures (the first of its chain that defines one), each bound to the test's instance as pytest
            # binds a function-scoped one, a wider one to an instance of its own (`bare_shim.plan_test`)
            mine = ({}, {}, [])
            wrong = next((w for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                          for w in [_fixture_def(n, *mine, method="unit" if unit else True)] if w), "")
            marks = _params([*(m for n in served_marks for m in _values(n.value)), *marked])
            if unit and marks[0] and marks[0][0]:
                wrong = wrong or "a TestCase with parametrize marks"
            if unit and mine[2] and defined & set(CLASS_XUNIT[2:]):
                wrong = wrong or f"a test class with {min(defined & set(CLASS_XUNIT[2:]))} beside its own autouse fixture"
            why = ("a test class with bases" if not unit and (node.bases or node.keywords) else
                   "a decorated test class" if decorated else f"a test class with {bad[0]}" if bad else wrong or marks[1] or
                   ("an IsolatedAsyncioTestCase before Python 3.11" if unit == "async" and sys.version_info < (3, 11) else ""))
            methods = {}  # each test's name, the first class of the chain that defines it (the method pytest runs)
            for m in body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    methods.setdefault(m.name, m)
            for m in methods.values():
                if why:
                    tests[f"{node.name}::{m.name}"] = (why, [])
                else:
                    test(m, f"{node.name}::{m.name}", True, unit == "async",
                         [] if unit else [n.name for n in body if isinstance(n, ast.FunctionDef) and n.name in CLASS_XUNIT],
                         (*mine, marks[0] or ([], [])))
    return "", tests


def _generated(fn):
    """The names a module's `pytest_generate_tests` may parametrize, when the second run serves it (`bare_served._Metafunc`):
    a plain function of one argument, `metafunc`, read only as `METAFUNC` (not its `config`), each `parametrize` call's
    names written out, neither indirect nor scoped; else None. A test's argument of those names is a parameter."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or len(fn.args.args) != 1 or fn.args.vararg or fn.args.kwarg:
        return None
    meta, names, reads = fn.args.args[0].arg, set(), {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == meta:
            if n.attr not in METAFUNC or not isinstance(n.ctx, ast.Load):
                return None
            reads[id(n.value)] = n.attr
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and reads.get(id(getattr(n.func, "value", None))) == "parametrize":
            argnames = _argnames(n)
            if argnames is None or any(k.arg not in ("argvalues", "ids") for k in n.keywords) or len(n.args) > 2:
                return None
            names.update(argnames)
    # the name read otherwise (handed on, bound again): what reads it is not known
    return names if all(id(n) in reads for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == meta) else None


def _unit_xunit(name, defined, first=False):
    """Whether a TestCase's xunit set-up `name` (`CLASS_XUNIT`) is served, its class's methods `defined`: in its place
    (pytest 9 lists `setUpClass` before `setup_class`, pytest 8.0 after them): `setup_class` and `teardown_class` where
    the TestCase's class set-up is unittest's own (doing nothing), or where the first run's pytest sets `setUpClass` up
    first (`first`: `unit_first`), as the second run does; `setup_method` and `teardown_method` where no fixture of the
    class's own is autouse (pytest 8.0 lists them by name among those)."""
    return name in CLASS_XUNIT[2:] or first or not defined & {"setUpClass", "tearDownClass"}


def _fixture_def(node, fixtures, scopes, autos, method=False):
    """A fixture `node` defines, into `fixtures` ({name: (why it cannot be served, or "", what it asks for)}), `scopes`
    and `autos` (the autouse ones, in the order pytest lists them: by attribute name, `bare_served.order`); why the file
    (or, `method`, its class: "unit" for a TestCase) is not double-checked for it ("" for none). A class's own: a plain
    function of its scoped to each test, or (not a TestCase's) one scoped wider written out, a classmethod too: pytest
    binds it to an instance of its own (made at collection; the test's `self` is not it), served so (`plan_test`)."""
    for d in node.decorator_list:
        if _deco_name(d).rsplit(".", 1)[-1] == "fixture":
            name, why, auto = node.name, "", False
            for k in d.keywords if isinstance(d, ast.Call) else ():
                if k.arg == "name" and isinstance(k.value, ast.Constant):
                    name = k.value.value
                elif k.arg == "params":
                    why = f"the fixture {node.name} has params"
                elif k.arg == "autouse":
                    if not isinstance(k.value, ast.Constant):
                        return f"the fixture {node.name}'s autouse is not written out"
                    auto = bool(k.value.value)
            if isinstance(node, ast.AsyncFunctionDef):
                why = f"the fixture {node.name} is async"
            kind = [_deco_name(x) for x in node.decorator_list if x is not d]  # a wider one a classmethod too, below it
            wide = method is True and _scope(d) in ("session", "package", "module", "class") and kind in ([], ["classmethod"]) and node.decorator_list[0] is d
            if method and not wide and (kind or _scope(d) != "function"):  # a TestCase's: not as pytest 8.0 and 9 bind it
                return f"a test class with its own fixture {node.name} of another scope or kind"
            if name in fixtures and method:
                continue  # a subclass's is the one (met first: its chain's order)
            fixtures[name] = (why, [a.arg for a in node.args.args][1 if method else 0:])
            scopes[name] = _scope(d)
            if auto:
                autos.append(name)
    return ""


def inherited(classes):
    """(a class, the class of the file's own it inherits a method from, the method) for each method a class of
    `classes` (`own_classes`) takes from its bases: the first of its `lineage` that defines it, grandparents too."""
    for node in classes.values():
        made = lineage(node, classes)[0] if node is not None else []
        defined = set()
        for c in made:
            for m in c.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name not in defined:
                    defined.add(m.name)
                    if c is not node:
                        yield node, c, m


def split_id(nodeid):
    """('test_x.py', 'TestC::test_m', 'the part in brackets or None')."""
    base, bracket = nodeid, None
    if nodeid.endswith("]") and "[" in nodeid:
        base, bracket = nodeid[:nodeid.index("[")], nodeid[nodeid.index("[") + 1:-1]
    rel, _, qual = base.partition("::")
    return rel, qual, bracket
