"""What a test module or a conftest.py changes for every test below it without touching a test's source, by syntax
(`ast`): a fixture the tests take that gave the product at the seal now gives a fake of it (a lambda, a `Mock`, an
autospec, a function of the file's own: `fixture-faked`), and unittest's assertion methods patched for every test
(`setattr(unittest.TestCase, 'assertEqual', ...)`, `TestCase.failureException = SkipTest`, `_baseAssertEqual`,
`addTypeEqualityFunc` with what checks nothing, `monkeypatch.setattr`, `mock.patch.object`: `assert-removed`). A
fixture giving the product configured or wrapped (`functools.partial(add)`, `Mock(wraps=add)`), a fixture added, or
unittest configured (`maxDiff`, `longMessage`) is none.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from donegate.seal import calls, collect, dead, loosened

Func = (ast.FunctionDef, ast.AsyncFunctionDef)
Reader = Callable[[str], "str | None"]  # a project file's text now, by its path relative to the project (None: none)
# What makes a stand-in (`mock.Mock(...)`, `create_autospec(add, return_value=5)`): the product passed to it as a
# spec is not what it gives, unless by `wraps=` or `side_effect=`.
MAKERS = {"Mock", "MagicMock", "AsyncMock", "NonCallableMock", "NonCallableMagicMock", "create_autospec", "PropertyMock",
          "SimpleNamespace", "patch", "object"}
# unittest's parts every assertion method goes through, beside the methods themselves (`loosened.UNITTEST`).
FRAMEWORK = {*loosened.UNITTEST, "fail", "failureException", "_baseAssertEqual", "_getAssertEqualityFunc",
             "assertRaises", "assertRaisesRegex", "assertWarns", "assertAlmostEqual", "assertNotAlmostEqual",
             "run", "__call__", "_callTestMethod"}  # (the last: the test method never called)


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _fixtures(tree: ast.Module) -> dict[str, ast.AST]:
    """{the name a test asks by: function} of the fixtures a module's top defines (`@pytest.fixture`,
    `@pytest.fixture(name='adder')`)."""
    out: dict[str, ast.AST] = {}
    for n in tree.body:
        if not isinstance(n, Func):
            continue
        for d in n.decorator_list:
            call = d if isinstance(d, ast.Call) else None
            f = call.func if call is not None else d
            if getattr(f, "attr", getattr(f, "id", "")) == "fixture":
                named = [k.value.value for k in (call.keywords if call else []) if k.arg == "name"
                         and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
                out[named[0] if named else n.name] = n
    return out


def _given(fn: ast.AST) -> list[ast.expr]:
    """What a fixture returns or yields (its own body's, not a function's it defines); `request.param`: each of its
    `params=`."""
    out, todo = [], list(getattr(fn, "body", []))
    while todo:
        n = todo.pop()
        if isinstance(n, (*Func, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None:
            out.append(n.value)
        todo.extend(ast.iter_child_nodes(n))
    params = [e for d in getattr(fn, "decorator_list", []) if isinstance(d, ast.Call) for k in d.keywords
              if k.arg == "params" and isinstance(k.value, (ast.List, ast.Tuple)) for e in k.value.elts]
    return [p for g in out for p in (params if params and ast.unparse(g) == "request.param" else [g])]


def _refers(expr: ast.AST, names: set[str]) -> bool:
    """Whether `expr` reaches one of `names` where it is what runs: a stand-in's spec is not (`_MAKERS`), its
    `wraps=`/`side_effect=` is."""
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.Call) and getattr(expr.func, "attr", getattr(expr.func, "id", "")) in MAKERS:
        return any(_refers(k.value, names) for k in expr.keywords if k.arg in ("wraps", "side_effect", "new"))
    return any(_refers(c, names) for c in ast.iter_child_nodes(expr))


def _products(fn: ast.AST, tree: ast.Module) -> set[str]:
    """The names in `fn` that stand for the product: imported from the project (`collect.modules`, at the top or in
    `fn`), or a name of `fn`'s assigned from one (`c = Calc(); c.precision = 3; return c`)."""
    names = collect.modules([*tree.body, *(n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))])
    for _ in range(5):
        more = {t.id for a in ast.walk(fn) if isinstance(a, ast.Assign) and _refers(a.value, names)
                for t in a.targets if isinstance(t, ast.Name)}
        if more <= names:
            break
        names |= more
    return names


def _gives(fn: ast.AST, tree: ast.Module, file: str = "", read: Reader | None = None, depth: int = 0) -> bool | None:
    """True: the fixture gives the product (each thing it gives refers to it); False: a fake of it (a lambda that
    does not call it, a stand-in, a function or class of the file's own or of its own body, a name it binds to one of
    those, or one a helper module of the tests makes: `_helper_fake`, where `read` gives the project's files); None:
    neither (data, nothing). A call of a function of the file's own (or of its body's) is a fake unless that function
    gives the product (`return _base()`, three calls deep)."""
    given = _given(fn)
    if not given:
        return None
    if read is not None and any(_helper_fake(g, tree, file, read) for g in given):
        return False  # (imported from the project, as the product is: read where it is made)
    names = _products(fn, tree)
    local = {d.name: d for d in ast.walk(fn) if d is not fn and isinstance(d, (*Func, ast.ClassDef))}
    funcs = {n.name: n for n in tree.body if isinstance(n, Func)} | {k: d for k, d in local.items() if isinstance(d, Func)}
    own = {n.name for n in tree.body if isinstance(n, (*Func, ast.ClassDef))} | set(local) | {  # (`FAKE = lambda a, b: 5`)
        t.id for n in [*tree.body, *ast.walk(fn)] if isinstance(n, ast.Assign) and (isinstance(n.value, ast.Lambda) or isinstance(
            n.value, ast.Call) and getattr(n.value.func, "attr", getattr(n.value.func, "id", "")) in MAKERS)
        for t in n.targets if isinstance(t, ast.Name)} - names
    verdicts: list[bool | None] = []
    for g in given:
        callee = funcs.get(g.func.id) if isinstance(g, ast.Call) and isinstance(g.func, ast.Name) else None
        if _refers(g, names):
            verdicts.append(True)
        elif callee is not None and callee is not fn and depth < 3:  # (own, so a fake, unless it gives the product)
            verdicts.append(_gives(callee, tree, depth=depth + 1) is True)
        else:
            verdicts.append(False if isinstance(g, ast.Lambda) or isinstance(g, ast.Name) and g.id in own or isinstance(
                g, ast.Call) and getattr(g.func, "attr", getattr(g.func, "id", "")) in MAKERS | own else None)
    return False if False in verdicts else True if all(v is True for v in verdicts) else None


def _helper_fake(g: ast.expr, tree: ast.Module, file: str, read: Reader | None) -> bool:
    """Whether `g` (what a fixture of `file` gives) is a fake made in another module of the tests (in the test's folder
    or under one named `test...`; `read`: its text now, by its path): a function imported from it called (`make_fake()`, `fakes.make_fake()`: `from tests.fakes
    import make_fake`, `from .fakes import ...`, `from tests import fakes`) that gives a fake as a fixture would
    (`_gives`), or given itself (`fake_add`) without calling the product, or a lambda or stand-in it binds."""
    call = g.func if isinstance(g, ast.Call) else g
    found = None
    for n in tree.body if read is not None else []:
        for a in n.names if isinstance(n, (ast.Import, ast.ImportFrom)) else []:
            bound = a.asname or a.name.split(".")[0]
            level, module = (n.level, n.module or "") if isinstance(n, ast.ImportFrom) else (0, "")
            if isinstance(call, ast.Name) and isinstance(n, ast.ImportFrom) and bound == call.id:
                found = (level, module, a.name)
            elif isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name) and bound == call.value.id:
                found = (level, f"{module}.{a.name}".strip(".") if isinstance(n, ast.ImportFrom) else a.name, call.attr)
    if found is None or read is None:
        return False
    level, module, name = found
    folder = file.rsplit("/", 1)[0] if "/" in file else ""
    base = "/".join(folder.split("/")[:len(folder.split("/")) - level + 1]) if level else ""
    rel = module.replace(".", "/")
    paths = [f"{base}/{rel}" if base else rel] if level else [rel, f"{folder}/{rel}" if folder else rel]
    # (a module of the tests': in the test's folder, or under a folder named for tests; never the product's own)
    paths = [p for p in paths if folder and p.startswith(folder + "/") or any(x.startswith("test") for x in p.split("/")[:-1])]
    helper = next((t for p in paths for t in (read(f"{p}.py"), read(f"{p}/__init__.py")) if t is not None), None)
    helper_tree = _parse(helper) if helper is not None else None
    if helper_tree is None:
        return False
    for n in helper_tree.body:
        if isinstance(n, Func) and n.name == name:  # (the product imported in it too: `from calc import add`)
            inside = ast.Module(body=[*helper_tree.body, *(x for x in ast.walk(n) if isinstance(x, (ast.Import, ast.ImportFrom)))],
                                type_ignores=[])
            if isinstance(g, ast.Call):
                return _gives(n, inside) is False
            return not any(_refers(x, _products(n, inside)) for x in n.body)
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == name for t in n.targets) and not isinstance(g, ast.Call):
            return isinstance(n.value, ast.Lambda) and not _refers(n.value, collect.modules(helper_tree.body)) or isinstance(
                n.value, ast.Call) and getattr(n.value.func, "attr", getattr(n.value.func, "id", "")) in MAKERS
    return False


def _resolved(name: str, chain: list[str | None]) -> tuple[ast.AST, ast.Module] | None:
    """The fixture `name` as pytest finds it from the first of `chain` (texts, nearest first)."""
    for text in chain:
        tree = _parse(text)
        if tree is not None and name in (found := _fixtures(tree)):
            return found[name], tree
    return None


def fixture_findings(file: str, sealed_chain: list[str | None], now: str | None,
                     read: Reader | None = None) -> list[dict[str, str]]:
    """A `fixture-faked` finding for each fixture `file` (a test module or a conftest.py) defines now that gives a
    fake of the product where the fixture of that name pytest found at the seal (`sealed_chain`: the file's sealed
    text, then its conftest.py files', nearest first) gave the product."""
    tree = _parse(now)
    if tree is None:
        return []
    out = []
    for name, fn in sorted(_fixtures(tree).items()):
        if _gives(fn, tree, file, read) is not False:
            continue
        was = _resolved(name, sealed_chain)
        if was is not None and _gives(*was):
            given = ", ".join(ast.unparse(g) for g in _given(fn))[:120]
            out.append({"test": f"{file}::{name}", "rule": "fixture-faked", "what": f"the fixture gave the product at "
                        f"the seal ({', '.join(ast.unparse(g) for g in _given(was[0]))[:80]}); now a fake of it ({given})"})
    return out


def _checks(value: ast.AST | None, tree: ast.Module) -> bool:
    """Whether what replaces an assertion method still checks: an assertion method (`self.assertDictEqual`), a
    function of the file's that asserts, raises or calls one; a lambda calling one. A `Mock`, `None`, a lambda
    that returns: no."""
    if value is None:
        return False
    if isinstance(value, ast.Attribute):
        return value.attr in FRAMEWORK or value.attr.startswith("assert")
    if isinstance(value, ast.Name):
        value = next((n for n in ast.walk(tree) if isinstance(n, Func) and n.name == value.id), None)
        if value is None:
            return True  # (imported: not known, taken as checking)
    return any(isinstance(x, (ast.Assert, ast.Raise)) or isinstance(x, ast.Call) and any(
        w in getattr(x.func, "attr", getattr(x.func, "id", "")).lower() for w in ("assert", "fail"))
        for x in ast.walk(value))


def _framework_writes(text: str | None) -> set[str]:
    """unittest's assertion parts a file replaces with what checks nothing, anywhere in it (not on `self`/`cls`:
    a test class's own, `loosened._rebound`)."""
    tree = _parse(text)
    if tree is None or not any(w in (text or "").lower() for w in ("assert", "fail", "typeequality", "testcase", "_calltestmethod")):
        return set()
    out = set()
    for n in ast.walk(tree):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr in FRAMEWORK and getattr(t.value, "id", "") not in ("self", "cls") \
                    and not _checks(getattr(n, "value", None), tree):
                out.add(f"unittest's {t.attr} replaced ({ast.unparse(t)} = ...)")
        if not isinstance(n, ast.Call):
            continue
        f = getattr(n.func, "attr", getattr(n.func, "id", ""))
        args, kw = n.args, {k.arg: k.value for k in n.keywords}
        if f == "addTypeEqualityFunc" and len(args) > 1 and not _checks(args[1], tree):
            out.add(f"unittest's assertEqual of {ast.unparse(args[0])} made to check nothing (addTypeEqualityFunc)")
        named = dead.text_of(args[1]) if len(args) > 1 else None  # (`'assert' + 'Equal'` too)
        if f in ("setattr", "object") and named in FRAMEWORK and getattr(args[0], "id", "") not in ("self", "cls"):
            if not _checks(args[2] if len(args) > 2 else kw.get("new") or kw.get("value"), tree):
                out.add(f"unittest's {named} replaced ({f}({ast.unparse(args[0])}, ...))")
        elif f in ("setattr", "object") and len(args) > 1 and named is None and ast.unparse(args[0]).endswith("TestCase"):
            out.add(f"an attribute of unittest's TestCase replaced by a name built at run time ({f}({ast.unparse(args[0])}, "
                    f"{ast.unparse(args[1])[:60]}, ...))")
        elif f in ("setattr", "patch") and args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) \
                and args[0].value.rsplit(".", 1)[-1] in FRAMEWORK and "." in args[0].value:
            if not _checks(args[1] if len(args) > 1 else kw.get("new") or kw.get("value"), tree):
                out.add(f"unittest's {args[0].value.rsplit('.', 1)[-1]} replaced ({f}({args[0].value!r}, ...))")
    return out


def framework_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """An `assert-removed` finding for each test module or conftest.py (`sealed`, `current`: {file: its text at
    the seal, now}) that now patches unittest's assertion methods to check nothing where its sealed text did not:
    every unittest assertion below it passes whatever the code does."""
    return loosened.gained(sealed, current, _framework_writes, "(every unittest assertion it reaches checks nothing)",
                           rule="assert-removed")


def _patched_below(file: str, sealed_files: dict[str, dict[str, str]], sealed: str | None, now: str | None) -> list[dict[str, str]]:
    """A `fixture-faked` finding for a conftest.py that now patches an attribute of a module of the project's own
    (`monkeypatch.setattr(calc, 'check', ...)` in an autouse fixture, at its top, in a hook), or a name of the test
    module itself (`monkeypatch.setattr(request.module, 'add', ...)`), that a sealed test below
    it calls by name: that test checks the patch. A patch of the time, the environment or what no test calls (a
    dependency the product calls) is none."""
    def made(text: str | None) -> set[tuple[str, str]]:
        tree = _parse(text)
        if tree is None:
            return set()
        mods = collect.modules(tree.body)  # (and a test module's own names: `monkeypatch.setattr(request.module, ...)`)
        return {t for t in collect.patches(tree.body, mods | {"request", "item", "node", "pyfuncitem"})
                if t[0].split(".")[0] in mods or t[0].endswith(".module")}

    added = made(now) - made(sealed)
    if not added:
        return []
    folder = file.rsplit("/", 1)[0] + "/" if "/" in file else ""
    called = set()
    for name, body in sealed_files.items():
        base = name.rsplit("/", 1)[-1]
        if name.startswith(folder) and base.startswith("test") and name.endswith(".py") and (tree := _parse(body.get("text"))):
            called |= {getattr(n.func, "attr", getattr(n.func, "id", "")) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return [{"test": file, "rule": "fixture-faked", "what": f"{obj}.{attr} patched for every test below it, and a test "
             "of it calls that: it checks the patch, not the product"} for obj, attr in sorted(added) if attr in called]


def _swapped(text: str | None, real: Callable[[ast.Module], Callable[[str, ast.expr | None], bool]] | None = None
             ) -> set[str]:
    """The modules a file puts something of its own in `sys.modules` for (`sys.modules['calc'] = fake`,
    `.update({...})`, `|= {...}`, `.setdefault`, `monkeypatch.setitem(sys.modules, 'calc', fake)`,
    `mock.patch.dict(sys.modules, {...})`), `sys.modules` reached under another name (`from sys import modules as m`, `mods = sys.modules`, `import
    sys as s`, `vars(sys)['modules']`, `getattr(sys, 'modules')`, `__import__('sys').modules`) and its key built
    or held in a name (`'ca' + 'lc'`, `NAME = 'calc'`, `for m in ['calc']`): an import of that name below it gets the
    stand-in. A name popped or deleted (imported afresh), or a key not known without running (`sys.modules[spec.name]
    = module`: a module loaded from its file), is none."""
    if "modules" not in (text or "") or (tree := _parse(text)) is None:
        return set()
    is_modules, key = _modules_of(tree)
    product = real(tree) if real is not None else (lambda _k, _v: False)

    def keys(n: ast.AST | None) -> set[str]:
        return {k for item, value in (zip(n.keys, n.values, strict=True) if isinstance(n, ast.Dict) else [])
                for k in key(item) if not product(k, value)}

    def of(n: ast.AST | None, value: ast.expr | None) -> set[str]:
        return {k for k in key(n) if not product(k, value)}

    out: set[str] = set()
    scoped = _undone(tree)
    for n in ast.walk(tree):
        if id(n) in scoped:
            continue
        if isinstance(n, ast.Assign):
            out |= {k for t in n.targets if isinstance(t, ast.Subscript) and is_modules(t.value) for k in of(t.slice, n.value)}
        elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.BitOr) and is_modules(n.target):  # (`|= {...}`)
            out |= keys(n.value)
        elif isinstance(n, ast.Call) and (n.args or n.keywords):
            f, first = ast.unparse(n.func), n.args[0] if n.args else None
            on = first is not None and (is_modules(first) or ast.unparse(first) == "'sys.modules'")
            if isinstance(n.func, ast.Attribute) and n.func.attr in ("update", "setdefault", "__setitem__") \
                    and is_modules(n.func.value):
                out |= keys(first) | {k.arg for k in n.keywords if k.arg and not product(k.arg, k.value)} | (
                    of(first, n.args[1] if len(n.args) > 1 else None) if first is not None else set())
            elif f.endswith("setitem") and on and len(n.args) > 1:
                out |= of(n.args[1], n.args[2] if len(n.args) > 2 else None)
            elif f.endswith("patch.dict") and on and len(n.args) > 1:
                out |= keys(n.args[1])
    return out


def _modules_of(tree: ast.Module) -> tuple[Callable[[ast.AST], bool], Callable[[ast.AST | None], set[str]]]:
    """(whether an expression of `tree` is `sys.modules`, by any name `tree` gives it; the texts a key can be: a
    literal, one built of literals and of names `tree` binds to one text only, a loop's name over literal texts)."""
    import copy

    sys_names = {"sys", "__import__('sys')", "importlib.import_module('sys')"} | {
        a.asname for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == "sys" and a.asname}
    texts: dict[str, set[str | None]] = {}  # {name: what it is bound to, as written} (`mods = sys.modules`)
    values: dict[str, set[str | None]] = {}  # {name: the text it holds, None not known}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    texts.setdefault(t.id, set()).add(ast.unparse(n.value) if isinstance(
                        n.value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else None)
                    values.setdefault(t.id, set()).add(dead.text_of(n.value))
        elif isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.target, ast.Name):
            values.setdefault(n.target.id, set()).add(None)
            loops = n.iter.elts if isinstance(n.iter, (ast.List, ast.Tuple, ast.Set)) else []
            values.setdefault("for " + n.target.id, set()).update(dead.text_of(e) for e in loops or [n.iter])
    sys_names |= {k for k, v in texts.items() if v and v <= sys_names}
    forms = {"modules", *(f for s in sys_names for f in (f"{s}.modules", f"vars({s})['modules']",
                                                         f"{s}.__dict__['modules']", f"getattr({s}, 'modules')"))}
    forms |= {a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "sys"
              for a in n.names if a.name == "modules" and a.asname}
    for _ in range(3):  # (`mods = sys.modules`, then `m = mods`)
        forms |= {k for k, v in texts.items() if v and v <= forms}

    def is_modules(n: ast.AST) -> bool:
        return ast.unparse(n) in forms

    known = {k: str(next(iter(v))) for k, v in values.items() if len(v) == 1 and None not in v and not k.startswith("for ")}

    class _Named(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Constant(known[node.id]) if node.id in known else node

    def key(n: ast.AST | None) -> set[str]:
        if n is None:
            return set()
        if isinstance(n, ast.Name) and None not in values.get("for " + n.id, {None}):
            return {str(x) for x in values["for " + n.id]}
        got = dead.text_of(_Named().visit(copy.deepcopy(n)))
        return {got} if got is not None else set()

    return is_modules, key


def _undone(tree: ast.Module) -> set[int]:
    """The swaps in a test function that end with it (ids of their calls): `monkeypatch.setitem` on the test's own
    (function-scoped) `monkeypatch`, `mock.patch.dict` as its context manager or its decorator. The same in a fixture,
    at module level, or left in place (`sys.modules[...] = `, `.start()`) is not."""
    out: set[int] = set()
    tops = [n for node in tree.body for n in ([node] if not isinstance(node, ast.ClassDef) else node.body)]
    for fn in tops:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test") \
                or any("fixture" in ast.unparse(d) for d in fn.decorator_list):
            continue
        out |= {id(d) for d in fn.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("patch.dict")}
        mine = "monkeypatch" in {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs]}
        for n in ast.walk(fn):
            if isinstance(n, (ast.With, ast.AsyncWith)):
                out |= {id(i.context_expr) for i in n.items if isinstance(i.context_expr, ast.Call)
                        and ast.unparse(i.context_expr.func).endswith("patch.dict")}
            elif mine and isinstance(n, ast.Call) and ast.unparse(n.func) == "monkeypatch.setitem":
                out.add(id(n))
    return out


def _own(project_files: list[str] | None) -> Callable[[str], bool]:
    """Whether a module is the project's own: a folder or a module among its Python files at the seal (the pack's
    `reach.project_files`); not known, any but the standard library's."""
    import sys

    if project_files is None:
        std = set(getattr(sys, "stdlib_module_names", ()))
        return lambda m: m.split(".")[0] not in std
    names = {p.removesuffix(".py") for f in project_files for p in f.split("/")}
    return lambda m: m.split(".")[0] in names


def _module_swaps(file: str, sealed_files: dict[str, dict[str, str]], sealed: str | None, now: str | None,
                  project_files: list[str] | None = None) -> list[dict[str, str]]:
    """A `fixture-faked` finding for a test module or conftest.py that now puts a stand-in in `sys.modules` for a
    module of the project's own (or a package of it) that a sealed test module below it (or itself) imports: those
    tests import the fake, not the product. A stand-in for a module no sealed test imports (an optional dependency the
    product reads), for one not the project's (`json`, a dependency), or one a single test makes and undoes, is none."""
    from donegate.seal import loaded

    own = _own(project_files)
    suite = set(sealed_files)
    added = {m for m in _swapped(now, lambda tree: loaded.reader(file, tree, project_files, suite)) - _swapped(sealed)
             if own(m)}
    if not added:
        return []
    return [{"test": file, "rule": "fixture-faked", "what": f"sys.modules[{m!r}] replaced: a test below it that imports "
             f"{m} gets the stand-in, not the product"} for m in sorted(added & _imported_below(file, sealed_files))]


def _imported_below(file: str, sealed_files: dict[str, dict[str, str]]) -> set[str]:
    """The modules (and their packages) the sealed test modules below `file` (or it) import by absolute name."""
    folder = file.rsplit("/", 1)[0] + "/" if "/" in file else ""
    imported: set[str] = set()
    for name, body in sealed_files.items():
        base = name.rsplit("/", 1)[-1]
        if (name == file or name.startswith(folder) and base.startswith("test")) and name.endswith(".py") \
                and (tree := _parse(body.get("text"))):
            for n in ast.walk(tree):
                named = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""] \
                    if isinstance(n, ast.ImportFrom) and not n.level else []
                imported |= {".".join(m.split(".")[:i + 1]) for m in named for i in range(m.count(".") + 1)}
    return imported


def _shadows(file: str, sealed_files: dict[str, dict[str, str]], sealed: str | None, now: str | None,
             project_files: list[str] | None, read: Reader | None) -> list[dict[str, str]]:
    """What `now` puts ahead of the product on `sys.meta_path` or `sys.path` (`seal.shadowed`)."""
    if not now or ("meta_path" not in now and "sys.path" not in now and "syspath_prepend" not in now):
        return []
    from donegate.seal import shadowed

    return shadowed.findings(file, _parse(sealed), _parse(now), _imported_below(file, sealed_files), _own(project_files),
                             None if project_files is None else set(project_files) - set(sealed_files), read)


def findings(sealed_files: dict[str, dict[str, str]], current: dict[str, str | None],
             project_files: list[str] | None = None, read: Reader | None = None) -> list[dict[str, str]]:
    """Both rules for the changed test modules or conftest.py files `current` ({file: its text now}), against the
    sealed files (`seal.own`'s pack's `files`; `project_files`: the project's Python files at the seal, if known)."""
    def sealed(name: str) -> str | None:
        return (sealed_files.get(name) or {}).get("text")

    out = framework_findings({n: sealed(n) for n in current}, current)
    for name, text in sorted(current.items()):
        chain = [name, *(c for c in calls.conftests_of(name) if c != name)]
        out += fixture_findings(name, [sealed(c) for c in chain], text, read)
        if name.rsplit("/", 1)[-1] == "conftest.py":
            out += _patched_below(name, sealed_files, sealed(name), text)
        out += _module_swaps(name, sealed_files, sealed(name), text, project_files)
        out += _shadows(name, sealed_files, sealed(name), text, project_files, read)
    return out
