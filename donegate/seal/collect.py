"""What keeps a test of a module from running without touching its own source, by syntax (`ast`): a skip at the
module's (or a class's) top (`pytest.skip(..., allow_module_level=True)`, `pytest.importorskip(...)`, `pytestmark`,
`__test__ = False`, an autouse fixture that skips), a skip mark under another name (`later = pytest.mark.skip`,
then `@later`), `test_add.__test__ = False`, and a test unbound after its definition (`del test_add`,
`test_add = None`: pytest never collects it). `donegate.seal.loosened` reads these into each test's shape."""

from __future__ import annotations

import ast
from collections.abc import Callable

# A call at a module's or class's top that skips every test of it (`pytest.skip(..., allow_module_level=True)`).
CALLED = {"skip", "importorskip", "xfail", "skipTest"}
Func = (ast.FunctionDef, ast.AsyncFunctionDef)
# What pytest and unittest run before (or after) each test of a module or class: a skip there skips them all.
SETUPS = {"setUp", "setUpClass", "setUpModule", "asyncSetUp", "tearDown", "tearDownClass", "tearDownModule",
          "setup_module", "setup_class", "setup_method", "setup_function", "setup", "setUpTestData",
          "teardown_module", "teardown_class", "teardown_method", "teardown_function", "teardown"}


def _raises_skip(fn: ast.AST) -> bool:
    """A `raise SkipTest` (the class named bare, or by any attribute: `raise unittest.SkipTest`)."""
    return any(isinstance(n, ast.Raise) and n.exc is not None and "SkipTest" in ast.unparse(n.exc) for n in ast.walk(fn))


def _named(func: ast.expr) -> str:
    return str(getattr(func, "attr", None) or getattr(func, "id", ""))


def _falsy(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and not value.value


def aliased(node: ast.AST, aliases: dict[str, list[str]]) -> list[str]:
    """The marks a decorator of `node` names by an alias the module assigned once (`@later`, `@later(reason=...)`)."""
    return [m for d in getattr(node, "decorator_list", []) for m in _through(d, aliases)]


def _through(expr: ast.AST, aliases: dict[str, list[str]]) -> list[str]:
    return [m for sub in ast.walk(expr) if isinstance(sub, ast.Name) and sub.id in aliases for m in aliases[sub.id]]


def _autouse(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Call) and _named(d.func) == "fixture" and any(
        k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True for k in d.keywords)
        for d in getattr(fn, "decorator_list", []))


def skips(body: list[ast.stmt], marks: Callable[[ast.AST], list[str]], aliases: dict[str, list[str]]) -> list[str]:
    """What skips every test of a module's or class's `body`, each in a word (`marks`: `loosened._marks`)."""
    out = []
    for n in body:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        names = {getattr(t, "id", "") for t in targets}
        value = getattr(n, "value", None)
        if "pytestmark" in names and value is not None:
            out += [f"pytestmark {m}" for m in marks(value) + _through(value, aliases)]
        if "__test__" in names and _falsy(value):
            out.append("__test__ = False")
        if isinstance(n, Func):
            if _autouse(n) and marks(n):
                out.append(f"autouse fixture {n.name} skips")
            elif n.name in SETUPS and (marks(n) or _raises_skip(n)):
                out.append(f"{n.name} skips")
            continue
        if isinstance(n, (ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        for sub in ast.walk(n):
            if isinstance(sub, ast.Call) and _named(sub.func) in CALLED and not (
                    isinstance(sub.func, ast.Attribute) and _named(sub.func.value) == "mark"):  # not `pytest.mark.skip(...)`
                out.append(f"{_named(sub.func)}() at the top")
            elif isinstance(sub, ast.Raise) and sub.exc is not None and "SkipTest" in ast.unparse(sub.exc):
                out.append("SkipTest raised at the top")
    return out


def per_test(body: list[ast.stmt]) -> dict[str, list[str]]:
    """{test name: ["__test__ = False"]} for each `test_add.__test__ = False` at the module's top."""
    out: dict[str, list[str]] = {}
    for n in body:
        if isinstance(n, ast.Assign) and _falsy(n.value):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and t.attr == "__test__" and isinstance(t.value, ast.Name):
                    out.setdefault(t.value.id, []).append("__test__ = False")
    return out


def unbound(body: list[ast.stmt]) -> set[str]:
    """The test functions and classes a module's top deletes or binds to something else after defining them."""
    defined: set[str] = set()
    out: set[str] = set()
    for n in body:
        if isinstance(n, (*Func, ast.ClassDef)):
            defined.add(n.name)
            out.discard(n.name)  # defined again: the new one is read
            continue
        targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else \
            [n.target] if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
        out |= {t.id for t in targets if isinstance(t, ast.Name) and t.id in defined}
    return out


def replaced(body: list[ast.stmt]) -> set[str]:
    """The names a module's top imports and then binds to something else (`from calc import add`, then
    `add = lambda a, b: 5`, a `def add`, or `add` imported again from another module), there or under a block
    that runs (`if True:`, `try:`, `with`), through the module's namespace (`globals()['add'] = ...`,
    `globals().update(add=...)`, `vars()[...]`, `setattr(sys.modules[__name__], 'add', ...)`, `exec('add = ...')`) or
    from a function that declares it `global`: its tests no longer call what they imported. An import's fallback
    (`except ImportError: add = None`) and the other branch of an `if` are alternatives, not a rebinding."""
    imported: dict[str, str] = {}
    out: set[str] = set()
    _bind(body, imported, out, 0)
    rebound: set[str] = set()
    inner = {id(x) for stmt in body for f in ast.walk(stmt) if isinstance(f, Func) for x in ast.walk(f)}
    for n in (x for stmt in body for x in ast.walk(stmt)):
        rebound |= _by_namespace(n, id(n) not in inner)
        if isinstance(n, Func):  # `def setup_module(): global add; add = ...`
            declared = {name for g in ast.walk(n) if isinstance(g, ast.Global) for name in g.names}
            if declared:  # (most functions declare none: their body is not walked again for what they bind)
                rebound |= {t.id for a in ast.walk(n) for t in _targets(a) if isinstance(t, ast.Name) and t.id in declared}
    return out | (rebound & set(imported)) | gutted(body, set(imported))


def _targets(n: ast.AST) -> list[ast.AST]:
    return list(n.targets) if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) \
        or isinstance(n, ast.AnnAssign) and n.value is not None \
        else [n] if isinstance(n, (*Func, ast.ClassDef)) else []  # (`np: "module"` annotates, binds nothing)


def _bind(body: list[ast.stmt], imported: dict[str, str], out: set[str], depth: int) -> None:
    from donegate.seal import dead

    for n in body:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            source = getattr(n, "module", None) or ""
            for a in n.names:
                # (a plain `import os.path` binds `os`, the package itself: `import os` beside it rebinds nothing)
                plain = isinstance(n, ast.Import) and not a.asname
                name = (a.asname or a.name).split(".")[0]
                what = f".{name}" if plain else f"{source}.{a.name}"
                if name in imported and imported[name] != what:
                    out.add(name)
                imported[name] = what
            continue
        if isinstance(n, ast.If):
            falsy = dead._falsy(n.test)
            branches = [b for b, runs in ((n.body, falsy is not True), (n.orelse, falsy is not False)) if runs]
            for branch in branches:  # (each from what was bound before it: `if PY2: import x else: import y`)
                alone = dict(imported)
                _bind(branch, alone, out, depth)
                imported.update(alone)
            continue
        if isinstance(n, dead._TRIES):
            before = dict(imported)
            _bind(n.body, imported, out, depth)
            for h in n.handlers:  # (`except ImportError: add = None`: the import's fallback, from before it)
                fallback = any(w in ast.unparse(h.type) for w in ("ImportError", "ModuleNotFoundError")) if h.type else False
                alone = dict(before) if fallback else imported
                _bind(h.body, alone, out, depth)
                imported.update(alone)
            _bind(n.orelse + n.finalbody, imported, out, depth)
            continue
        if isinstance(n, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            _bind(n.body + getattr(n, "orelse", []), imported, out, depth)
            continue
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and getattr(n.value.func, "id", "") == "exec" \
                and n.value.args and depth < 3:  # `exec('add = lambda a, b: 5')`: its text read as the module's own
            text = dead.text_of(n.value.args[0])  # (built of literals too: `'add' + ' = ...'`)
            try:
                _bind(ast.parse(text).body, imported, out, depth + 1) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass
            if text is None:  # (text not known until it runs, `exec(code)`: it may bind any name the module imported)
                out |= set(imported)
            continue
        out |= {name for t in _targets(n) if (name := getattr(t, "id", getattr(t, "name", ""))) in imported}


def _namespace(node: ast.AST, top: bool) -> bool:
    """`globals()` anywhere, `vars()` at the module's top, `sys.modules[__name__]`: the module's own names."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
        return node.func.id == "globals" or node.func.id == "vars" and top
    return ast.unparse(node) in ("sys.modules[__name__]", "globals()")


def _by_namespace(n: ast.AST, top: bool) -> set[str]:
    """The names a statement or call binds through the module's namespace (`_namespace`)."""
    from donegate.seal import dead

    out = set()
    for t in _targets(n):
        if isinstance(t, ast.Subscript) and _namespace(t.value, top) and dead.text_of(t.slice) is not None:
            out.add(str(dead.text_of(t.slice)))  # `globals()['add'] = ...`
        elif isinstance(t, ast.Attribute) and _namespace(t.value, top):
            out.add(t.attr)  # `sys.modules[__name__].add = ...`
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _namespace(n.func.value, top) \
            and n.func.attr in ("update", "setdefault", "__setitem__"):
        out |= {k.arg for k in n.keywords if k.arg}  # `globals().update(add=...)`
        for a in n.args[:1]:
            if dead.text_of(a) is not None:
                out.add(str(dead.text_of(a)))  # `.setdefault('add', ...)`
            elif isinstance(a, ast.Dict):
                out |= {str(k.value) for k in a.keys if isinstance(k, ast.Constant)}  # `.update({'add': ...})`
    if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr" and len(n.args) > 1 \
            and _namespace(n.args[0], top) and dead.text_of(n.args[1]) is not None:
        out.add(str(dead.text_of(n.args[1])))  # `setattr(sys.modules[__name__], 'add', ...)`
    return out


def uses(fn: ast.AST, names: set[str]) -> list[str]:
    """A mark for each of `names` (`replaced`) the test reads."""
    return sorted({f"{n.id} imported then rebound at the module's top" for n in ast.walk(fn)
                   if isinstance(n, ast.Name) and n.id in names})


def modules(body: list[ast.stmt]) -> set[str]:
    """The names a test module's top imports a module of its project by (`import calc`, `from pkg import calc`; not
    the standard library's, nor pytest's): what a patch of the product under test would name."""
    import sys

    std = set(getattr(sys, "stdlib_module_names", ())) | {"pytest", "_pytest", "mock"}
    out = set()
    for n in body:
        if isinstance(n, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name.split(".")[0] not in std}
        elif isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] not in std:
            out |= {a.asname or a.name for a in n.names}
    return out


def _patch_target(node: ast.AST) -> tuple[str, str] | None:
    """(the patched object's dotted name, the attribute) of a patch: `monkeypatch.setattr(calc, "add", ...)` or
    `setattr(...)`, `mock.patch.object(calc, "add")`, the dotted string forms (`monkeypatch.setattr("calc.add", ...)`,
    `mock.patch("calc.add")`), an assignment `calc.add = ...`."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
        return ast.unparse(node.targets[0].value), node.targets[0].attr
    if not isinstance(node, ast.Call) or not node.args:
        return None
    f, first = node.func, node.args[0]
    name = getattr(f, "attr", getattr(f, "id", ""))
    is_object = name == "object" and getattr(getattr(f, "value", None), "attr", getattr(getattr(f, "value", None), "id", "")) == "patch"
    if name in ("setattr", "patch") or is_object:
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and "." in first.value and name != "object":
            return tuple(first.value.rsplit(".", 1))  # type: ignore[return-value]
        if isinstance(first, (ast.Name, ast.Attribute)) and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and name != "patch":
            return ast.unparse(first), node.args[1].value
    return None


def patched(fn: ast.AST, mods: set[str], outside: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset()) -> list[str]:
    """A mark for each attribute of the project's own module (`modules`) the test patches and then calls
    (`monkeypatch.setattr(calc, "add", lambda a, b: 5)`, then `assert calc.add(2, 3) == 5`): it checks the patch, not
    the product. A patch of the environment, the time, a dependency or a name it does not call is none. `outside`:
    the patches of the module's own outside its tests (`patches`: at its top, in a fixture, in `setup_module`)."""
    found = {t for n in ast.walk(fn) if (t := _patch_target(n)) is not None and t[0].split(".")[0] in mods} | set(outside)
    if not found:
        return []
    # (called: `calc.send.assert_called_once()` after a patch of `calc.send` checks the product's call of it)
    read = {(ast.unparse(n.func.value), n.func.attr) for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return sorted(f"{obj}.{attr} patched by the test, then checked" for obj, attr in found & read)


def patches(body: list[ast.stmt], mods: set[str]) -> set[tuple[str, str]]:
    """(object, attribute) of each patch of a module of the project's own (`modules`) that a test module makes
    outside its tests (at its top, in an autouse fixture, in `setup_module`): it holds for each test that calls it."""
    tests = {id(x) for n in body for t in ([n] if isinstance(n, Func) else getattr(n, "body", []) if isinstance(n, ast.ClassDef)
                                          else []) if isinstance(t, Func) and t.name.startswith("test") for x in ast.walk(t)}
    return {t for n in body for x in ast.walk(n) if id(x) not in tests and (t := _patch_target(x)) is not None
            and t[0].split(".")[0] in mods}


# What makes an imported function another without rebinding its name (`add.__code__ = ...`).
_INNARDS = {"__code__", "__defaults__", "__kwdefaults__", "__call__", "__class__"}


def gutted(body: list[ast.stmt], imported: set[str]) -> set[str]:
    """The names of `imported` whose function a module's code changes in place (`add.__code__ = (lambda a, b:
    5).__code__`, `setattr(add, '__defaults__', ...)`): read as rebound. Its `__doc__` set is none."""
    out = set()
    for n in (x for stmt in body for x in ast.walk(stmt)):
        for t in _targets(n) + ([n] if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr" else []):
            base, attr = (t.value, t.attr) if isinstance(t, ast.Attribute) else (
                (t.args[0], t.args[1].value) if isinstance(t, ast.Call) and len(t.args) > 1
                and isinstance(t.args[1], ast.Constant) else (None, None))
            while isinstance(base, ast.Attribute):
                base = base.value
            if attr in _INNARDS and isinstance(base, ast.Name) and base.id in imported:
                out.add(base.id)
    return out
