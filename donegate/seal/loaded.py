"""The product loaded from its own file (`seal.faked`'s honest look-alike of a stand-in in `sys.modules`), by `ast`.

A conftest.py that loads the project's module by path under its own name (`spec = importlib.util.
spec_from_file_location("calc", ROOT / "calc.py")`, `calc = importlib.util.module_from_spec(spec)`, `sys.modules["calc"]
= calc`, `spec.loader.exec_module(calc)`: a common way to test a script or a module off sys.path) puts the product
itself there, not a stand-in. The path is worked out without running (`Path(__file__)`, `.resolve()`, `.parent`,
`.parents[N]`, `/`, `.joinpath`, `os.path.join`, `os.path.dirname`, `os.path.abspath`, names bound once): it must
name the module's own file in the project (`calc.py`, `calc/__init__.py`, under `src/` or `lib/`), one of the
project's Python files at the seal and none of the sealed suite's. Anything else (a path not known, a file of the
tests, another module's file) stays a stand-in."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import PurePosixPath

ROOTS = ("", "src/", "lib/")  # (folders a product module lives under: the project's top, a src or lib layout)


def _bound(tree: ast.Module) -> dict[str, ast.expr]:
    """{name: its value} of the names `tree` binds once, by a plain assignment, and never otherwise."""
    seen: dict[str, list[ast.expr | None]] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for e in ast.walk(t):
                    if isinstance(e, ast.Name):
                        seen.setdefault(e.id, []).append(n.value if isinstance(t, ast.Name) else None)
        elif isinstance(n, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr,
                            ast.comprehension, ast.Import, ast.ImportFrom, ast.Global, ast.Delete)) \
                or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else \
                [(a.asname or a.name).split(".")[0] for a in n.names] if isinstance(n, (ast.Import, ast.ImportFrom)) else \
                list(n.names) if isinstance(n, ast.Global) else \
                [e.id for t in _targets(n) for e in ast.walk(t) if isinstance(e, ast.Name)]
            for name in names:
                seen.setdefault(name, []).append(None)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _targets(n: ast.AST) -> list[ast.AST]:
    if isinstance(n, ast.AugAssign):
        return [n.target]
    if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [n.target]
    if isinstance(n, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in n.items if i.optional_vars is not None]
    if isinstance(n, ast.NamedExpr):
        return [n.target]
    if isinstance(n, ast.Delete):
        return list(n.targets)
    return []


def _path(node: ast.AST, here: str, names: dict[str, ast.expr], depth: int = 0) -> PurePosixPath | str | None:
    """The project path `node` names (relative to the project's top; `here`: the file's own) or a text it is, None
    when not known without running."""
    if depth > 30:
        return None

    def go(n: ast.AST) -> PurePosixPath | str | None:
        return _path(n, here, names, depth + 1)

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return PurePosixPath(here)
        return go(names[node.id]) if node.id in names else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        got = go(node.value)
        return got.parent if isinstance(got, PurePosixPath) else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and node.slice.value >= 0:
        got = go(node.value.value)
        return _up(got, node.slice.value + 1) if isinstance(got, PurePosixPath) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _join(go(node.left), [go(node.right)])
    if isinstance(node, ast.Call) and not node.keywords:
        func = ast.unparse(node.func)
        args = node.args
        if func in ("Path", "pathlib.Path", "PurePath", "pathlib.PurePath", "str", "os.fspath", "os.path.abspath",
                    "os.path.realpath", "os.path.normpath") and len(args) == 1:
            got = go(args[0])
            return PurePosixPath(got) if isinstance(got, str) and func.endswith("Path") else got
        if func == "os.path.dirname" and len(args) == 1:
            got = go(args[0])
            return _up(got, 1) if isinstance(got, PurePosixPath) else None
        if func == "os.path.join" and args:
            return _join(go(args[0]), [go(a) for a in args[1:]])
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not args:
            return go(node.func.value)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
            return _join(go(node.func.value), [go(a) for a in args])
    return None


def _up(path: PurePosixPath, n: int) -> PurePosixPath | None:
    parts = [p for p in path.parts if p not in ("", ".")]
    return PurePosixPath(*parts[:len(parts) - n]) if len(parts) >= n else None


def _join(base: PurePosixPath | str | None, rest: list[PurePosixPath | str | None]) -> PurePosixPath | None:
    if not isinstance(base, PurePosixPath) or any(not isinstance(r, str) for r in rest):
        return None
    parts = list(base.parts)
    for piece in (p for r in rest for p in str(r).split("/")):
        if piece in ("", "."):
            continue
        if piece == "..":
            if not parts:
                return None  # (above the project's top)
            parts.pop()
        else:
            parts.append(piece)
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _call(node: ast.AST | None, name: str) -> ast.Call | None:
    """`node` when it is a call of `importlib.util.NAME` (or `util.NAME`, `NAME`)."""
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == name \
            and ast.unparse(node.func) in (name, f"util.{name}", f"importlib.util.{name}"):
        return node
    return None


def reader(file: str, tree: ast.Module, project_files: list[str] | None,
           suite: set[str]) -> Callable[[str, ast.expr | None], bool]:
    """Whether a value `tree` (the text of `file`) puts in `sys.modules` under a key is the product's module of that
    name loaded from its own file (`project_files`: the project's Python files at the seal, not known: never;
    `suite`: the sealed suite's files, never the product's)."""
    names = _bound(tree)
    known = set(project_files or ()) - suite

    def real(key: str, value: ast.expr | None) -> bool:
        if isinstance(value, ast.Name) and value.id in names:
            value = names[value.id]
        made = _call(value, "module_from_spec")
        spec = made.args[0] if made is not None and len(made.args) == 1 else None
        if isinstance(spec, ast.Name) and spec.id in names:
            spec = names[spec.id]
        found = _call(spec, "spec_from_file_location")
        if found is None or len(found.args) < 2:
            return False
        where = _path(found.args[1], file, names)
        own = key.replace(".", "/")
        return isinstance(where, PurePosixPath) and str(where) in known \
            and str(where) in {f"{r}{own}{end}" for r in ROOTS for end in (".py", "/__init__.py")}

    return real
