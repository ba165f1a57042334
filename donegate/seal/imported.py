"""The static half of the own suite's reach map (`donegate.seal.reach`): what each project module imports, read with
`ast`, and each sealed test's files closed over it (a module read only for its constants is reached through the
module that imports it, a package's `__init__.py` and the conftest files above a test too).

A module can be read without being imported where it is read: from `sys.modules`, or as its package's attribute
(`pkg.mod`, `getattr(pkg, name)`), once another test imported it. Such a read is reached like an import, and when the
module is not one the reading file imports itself (or the name is built at run time) the test depends on what other
tests imported first: it is marked `WITH_ALL`, and a stop that must run it runs the whole suite (run alone, it would
fail where it passed at the seal, or pass where the suite would fail).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from donegate.seal.reach import WITH_ALL  # one mark, where a stop reads it


class _Module(NamedTuple):
    imports: set[str]  # the project files its imports name (there, or not yet in a package that is)
    reads: set[str]  # the project modules it reads without an import (`sys.modules['a.b']`, `pkg.mod`)
    folders: set[str]  # any module of these folders, read by a name built at run time ("." for the project's)


def _parse(project: Path, name: str) -> _Module:
    try:
        tree = ast.parse((project / name).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return _Module(set(), set(), set())
    here = Path(name).parent
    wanted: list[Path] = []
    read: list[Path] = []
    bound: dict[str, Path] = {}  # a name the module binds to a module it imports: what `name.attr` reads
    folders: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [Path(*a.name.split(".")) for a in node.names]
            bound.update((a.asname, Path(*a.name.split("."))) if a.asname else (a.name.split(".")[0], Path(a.name.split(".")[0]))
                         for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(max(0, node.level - 1)):
                base = base.parent
            mod = Path(*node.module.split(".")) if node.module else Path()
            start = (base / mod) if node.level else mod
            wanted.append(start)
            wanted += [start / a.name for a in node.names]
            bound.update((a.asname or a.name, start / a.name) for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and node.args and _named_import(node.func):
            given = _text(node.args[0])
            if given is not None and not given.startswith("."):
                wanted.append(Path(*given.split(".")))  # __import__('a.b'), import_module('a.b'): a name written out
    for node in ast.walk(tree):
        key = _modules_key(node)
        if key is not None:  # sys.modules['a.b'], sys.modules.get(name)
            if isinstance(key, str):
                read.append(Path(*key.split(".")))
            elif key:
                folders.add(".")  # a name built at run time: any module of the project
        elif isinstance(node, ast.Attribute) and (chain := _chain(node)) and chain[0] in bound:
            read.append(bound[chain[0]].joinpath(*chain[1:]))  # pkg.mod read as the package's attribute
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in bound:
            held = bound[node.args[0].id]
            attr = _text(node.args[1])
            if attr is not None:
                read.append(held / attr)
            else:  # any module of the package, by a name built at run time
                folders.update(r.as_posix() for root in (Path(), Path("src")) if (project / (r := root / held)).is_dir())
    reads = _files(project, read)
    return _Module(_files(project, wanted), {r for r in reads if (project / r).is_file()}, folders)


def _files(project: Path, wanted: list[Path]) -> set[str]:
    out = set()
    for w in wanted:
        for root in (Path(), Path("src")):
            for cand in (root / w.with_suffix(".py") if w.parts else None, root / w / "__init__.py" if w.parts else None):
                if cand is None:
                    continue
                if (project / cand).is_file():
                    out.add(cand.as_posix())
                elif len(w.parts) > 1 and (project / root / w.parent).is_dir():
                    # Not there at the seal, in a package that is: added, it is what this import finds (an optional
                    # module a try imports; a package folder, found before a module of the same name).
                    out.add(cand.as_posix())
    return out


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _chain(node: ast.Attribute) -> list[str]:
    """`a.b.c` as ["a", "b", "c"] ([] when it does not start with a name)."""
    names = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        names.append(value.attr)
        value = value.value
    return [value.id, *reversed(names)] if isinstance(value, ast.Name) else []


def _modules_key(node: ast.AST) -> str | bool | None:
    """For a read of `sys.modules` (`[key]`, `.get(key)`, `.values()`, ...): the module name written out, True when
    it is built at run time (or every module is read), False for the module itself (`sys.modules[__name__]`, an
    object's `__module__`); None: no such read."""
    key: ast.expr | None
    if isinstance(node, ast.Subscript):
        target, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "values", "items", "copy", "pop", "setdefault"):
        target, key = node.func.value, (node.args[0] if node.args and node.func.attr in ("get", "pop", "setdefault") else None)
    else:
        return None
    if not (isinstance(target, ast.Attribute) and target.attr == "modules" and isinstance(target.value, ast.Name)
            and target.value.id == "sys"):
        return None
    if key is not None and _text(key) is not None:
        return _text(key)
    return not (isinstance(key, ast.Name) and key.id in ("__name__", "__package__")
                or isinstance(key, ast.Attribute) and key.attr == "__module__")


def _named_import(func: ast.expr) -> bool:
    """A call of `__import__` or `import_module` (`importlib.import_module`, imported under its name)."""
    return isinstance(func, ast.Name) and func.id in ("__import__", "import_module") or \
        isinstance(func, ast.Attribute) and func.attr in ("__import__", "import_module")


def _packages(project: Path, name: str) -> list[str]:
    """The `__init__.py` files importing `name` runs first (its package's and each enclosing package's)."""
    out = []
    folder = Path(name).parent
    while folder.parts and (project / folder / "__init__.py").is_file():
        out.append((folder / "__init__.py").as_posix())
        folder = folder.parent
    return out


def close(project: Path, reached: dict[str, list[str]], edges: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Each test's files with every project file they import or read, transitively (a module read only for its
    constants), and `WITH_ALL` when one of them reads a module its imports do not give it; `edges`: {file: the files
    its imports gave in the seal's run} (a name built at run time, at import too)."""
    parsed: dict[str, _Module] = {}
    edges = edges or {}

    def module(name: str) -> _Module:
        if name not in parsed:
            parsed[name] = _parse(project, name)
        return parsed[name]

    def walk(name: str, reads: bool) -> set[str]:
        seen = {name}
        todo = [name]
        while todo:
            here = todo.pop()
            if not here.endswith(".py"):
                continue
            m = module(here)
            for nxt in [*m.imports, *_packages(project, here), *edges.get(here, ()),
                        *((*m.reads, *m.folders) if reads else ())]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    memo: dict[str, set[str]] = {}
    alone: dict[str, bool] = {}  # a module that reads only what its imports give it

    def by_itself(name: str) -> bool:
        if name not in alone:
            m = module(name)
            alone[name] = not m.folders and not (m.reads and m.reads - walk(name, False))
        return alone[name]

    def closure(name: str) -> set[str]:
        if name not in memo:
            memo[name] = found = walk(name, True)
            for f in list(found):  # a module read without an import of its own: what other tests imported first
                if f.endswith(".py") and not by_itself(f):
                    found.add(WITH_ALL)
                    break
        return memo[name]

    out = {}
    for tid, files in reached.items():
        found: set[str] = set()
        test = tid.split("::", 1)[0]
        for f in [test, *_conftests(project, test), *files]:  # the test file's own imports too (a constant it reads)
            if f.endswith(".py"):
                found |= closure(f)
            else:  # a data file it opened, a folder it listed
                found.add(f)
        out[tid] = sorted(found)
    return out


def _conftests(project: Path, test: str) -> list[str]:
    """The conftest.py files pytest imports before `test` (its folder's and each one above): what they import runs
    before the test, called into or not (a module imported for what its import sets)."""
    folders = [Path(test).parent, *Path(test).parent.parents]
    return [c.as_posix() for f in folders if (project / (c := f / "conftest.py")).is_file()]
