"""The tests' data modules outside the test folders (docs/own-suite.md): sealed with the suite and read as sealed.

A module the sealed tests import (`from support.expected import SUM`, on sys.path by the configuration's
`pythonpath = .`) that holds data only (its top level: a docstring, `__future__` imports, assignments of literal
values) and that no other module of the project imports is the tests' own: an expected value held there and changed
to what broken code returns made the regression pass. A module with a function or a class (`calc.py`, the code under
test), or one the product imports, is the product's and is never sealed here.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from donegate.core.util import python_tree as parsed
from donegate.seal.store import OWN_SKIP_DIRS as SKIP_DIRS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

_VALUES = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load,
           ast.operator, ast.unaryop)
MAX_SCAN = 3000  # project modules read for the import graph; past it nothing is sealed here (as before)


def _tree(path: Path) -> ast.Module | None:
    try:
        return parsed(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def data_only(tree: ast.Module) -> bool:
    """Whether a module's top level holds only a docstring, `__future__` imports and assignments of literal values."""
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if value is None or not all(isinstance(t, ast.Name) for t in targets):
            return False
        if not all(isinstance(n, _VALUES) for n in ast.walk(value)):
            return False
    return True


def imports(tree: ast.Module, package: str | None) -> set[str]:
    """The dotted names a module imports (`from a import b`: `a` and `a.b`), relative ones taken from `package`
    (None: left out, a test file's are its own folder's)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package is None:
                continue
            if node.level:
                parts = package.split(".") if package else []
                keep = parts[:len(parts) - node.level + 1] if node.level <= len(parts) + 1 else []
                base = ".".join([*keep, *([base] if base else [])])
            if base:
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)
    return {n for name in out for n in _prefixes(name)}


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _module_files(project: Path, root: str, name: str) -> list[str]:
    """The project-relative files importing `name` from `root` runs (each package's `__init__.py` and the module)."""
    parts = name.split(".")
    base = Path(os.path.normpath(os.path.join(root, *parts)))
    out = []
    for i in range(1, len(parts)):
        init = Path(os.path.normpath(os.path.join(root, *parts[:i]))) / "__init__.py"
        if (project / init).is_file():
            out.append(init.as_posix())
    if (project / base.with_suffix(".py")).is_file():
        return [*out, base.with_suffix(".py").as_posix()]
    if (project / base / "__init__.py").is_file():
        return [*out, (base / "__init__.py").as_posix()]
    return []


def _root(project: Path, rel: str, name: str, roots: list[str]) -> str:
    return next((r for r in roots if (_module_files(project, r, name) or [""])[-1] == rel), ".")


def roots(paths: list[str]) -> list[str]:
    """The folders the sealed tests import from, relative to the project: its own and the configuration's
    `pythonpath` entries inside it (one outside, `..` or absolute, is its environment's)."""
    return ["."] + [r for e in paths if not os.path.isabs(e) and not (r := os.path.normpath(e)).startswith("..")]


def _walk(project: Path, skip: set[str]) -> list[str]:
    out: list[str] = []
    for folder, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and not (Path(folder) / d / "pyvenv.cfg").exists())
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), project).replace(os.sep, "/")
                if rel not in skip:
                    out.append(rel)
        if len(out) > MAX_SCAN:
            return []
    return out


def _name_of(rel: str, roots: list[str]) -> list[str]:
    """The dotted names a project file imports by, from each root."""
    out = []
    for root in roots:
        r = Path(os.path.relpath(rel, root)).as_posix()
        if r.startswith("../"):
            continue
        parts = r[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            out.append(".".join(parts))
    return out


def found(project: Path, sealed: Mapping[str, Any], roots: list[str]) -> dict[str, str]:
    """{project-relative path: text} of the tests' data modules outside the sealed files: imported by a sealed file
    from one of `roots` (the project's folder and the configuration's `pythonpath`, relative), data only, with
    every package `__init__.py` on the way data only too, and imported by no other module of the project."""
    wanted: set[str] = set()
    for name, body in sealed.items():
        text = body.get("text") if isinstance(body, dict) else None
        if not name.endswith(".py") or not isinstance(text, str):
            continue
        if (tree := parsed(text)) is not None:
            wanted |= imports(tree, None)
    candidates: dict[str, set[str]] = {}  # file: the names it is imported by
    for root in roots:
        for name in sorted(wanted):
            files = _module_files(project, root, name)
            if files and not any(f in sealed for f in files):
                candidates.setdefault(files[-1], set()).add(name)
                for f in files[:-1]:
                    candidates.setdefault(f, set())
    plain = {rel: data_only(tree) if (tree := _tree(project / rel)) is not None else False for rel in candidates}
    # a module kept with every package `__init__.py` on its way: a function or a class anywhere there is the product's
    keep = {rel for rel, by in candidates.items() if by and plain[rel]
            and all(plain.get(f, False) for name in by for f in _module_files(project, _root(project, rel, name, roots), name))}
    keep |= {f for rel in keep for name in candidates[rel] for f in _module_files(project, _root(project, rel, name, roots), name)}
    for init in [f for f in keep if f.endswith("__init__.py")]:  # a package shadows the project's: all of it data only
        folder = project / Path(init).parent
        if not all((t := _tree(p)) is not None and data_only(t) for p in folder.rglob("*.py")):
            keep = {f for f in keep if not f.startswith(Path(init).parent.as_posix() + "/")}
    if not keep:
        return {}
    candidates = {rel: candidates[rel] for rel in keep}
    texts = {rel: (project / rel).read_text(encoding="utf-8") for rel in sorted(keep)}
    names = {n for rel in candidates for n in _name_of(rel, roots)}
    others = _walk(project, set(sealed) | set(candidates))
    if not others and names:
        return {}
    for rel in others:
        tree = _tree(project / rel)
        if tree is None:
            continue
        for n in _name_of(rel, roots) or [""]:
            package = n if rel.endswith("__init__.py") else n.rsplit(".", 1)[0] if "." in n else ""
            if imports(tree, package) & names:
                return {}  # the product imports one: it is the product's
    return texts


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_UNKNOWN = object()


def _value(node: ast.expr, names: dict[str, Any]) -> Any:
    """A data module's value as Python gives it, without running it (None's stand-in `_UNKNOWN`: not worked out,
    `**` or a product past 10,000 characters included, so a stop never computes for long)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, _UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_value(e, names) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else ("set", tuple(map(repr, items))) \
            if isinstance(node, ast.Set) else (type(node).__name__, tuple(items))
    if isinstance(node, ast.Dict):
        keys = [_value(k, names) if k is not None else _UNKNOWN for k in node.keys]
        vals = [_value(v, names) for v in node.values]
        return _UNKNOWN if any(x is _UNKNOWN for x in keys + vals) else ("dict", tuple(sorted(map(repr, zip(keys, vals, strict=True)))))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _value(node.operand, names)
        return _UNKNOWN if not isinstance(v, (int, float, complex)) else -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _value(node.left, names), _value(node.right, names)
        if a is _UNKNOWN or b is _UNKNOWN:
            return _UNKNOWN
        if isinstance(node.op, ast.Mult) and any(isinstance(x, (str, bytes, tuple, list)) for x in (a, b)) \
                and len(repr(a)) * (b if isinstance(b, int) else a if isinstance(a, int) else 1) > 10_000:
            return _UNKNOWN
        try:
            return _OPS[type(node.op)](a, b)
        except Exception:  # noqa: BLE001  # (a type error, a division by zero: not worked out, read as changed)
            return _UNKNOWN
    return _UNKNOWN


def values(text: str | None) -> dict[str, Any] | None:
    """{name: value, " name": its expression dumped} of a data module's top-level assignments (None: it does not
    parse or is gone). Read only for a module that is data only (`data_only`)."""
    tree = parsed(text)
    if tree is None:
        return None
    try:
        return _assigned(tree)
    except (RecursionError, MemoryError):
        return None


def _assigned(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None) if targets else None
        if value is None:
            continue
        v = _value(value, out)
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = v
                out[" " + t.id] = ast.dump(value)  # (the expression: the same one written again is the same value)
    return out


def _same(k: str, was: dict[str, Any], now: dict[str, Any]) -> bool:
    if k not in was or k not in now:
        return False
    if was[" " + k] == now[" " + k] and was[k] is now[k] is _UNKNOWN:
        return True  # (written the same and not worked out: the names it reads are compared by their own)
    return was[k] is not _UNKNOWN and type(was[k]) is type(now[k]) and was[k] == now[k]


def changed(pack: dict[str, Any], helpers: dict[str, str | None], paths: list[str]) -> dict[str, list[str]]:
    """{test file: [the data modules' names it imports whose values changed, `support/expected.py: SUM`]} of the
    sealed test files importing a sealed data module outside the test folders (`pack["helpers"]`) that the agent
    changed (`helpers`: {file: its text now}; `paths`: the sealed configuration's `pythonpath`) in its values: a
    name gone, added or given another value (one not worked out counts as changed), or the module no longer data
    only (`PI += 1`, `globals()['PI'] = 3`, `if 1: PI = 3`, `del PI`, `PI, SUM = 3, 4`: what it ships is not what
    its assignments say) or unreadable. The sealed run reads the sealed copy; what the project holds now is what the
    product ships (a constants module only the tests read), so each such test is the old contract changed."""
    where = roots(paths)
    files = pack.get("files") or {}
    moved: dict[str, list[str]] = {}
    for rel in pack.get("helpers") or ():
        if rel not in helpers:
            continue
        tree = parsed(helpers[rel])
        if tree is not None and not data_only(tree):
            for name in _name_of(rel, where):
                moved[name] = [f"{rel}: not data only"]
            continue
        was, now = values((files.get(rel) or {}).get("text")), values(helpers[rel])
        keys = sorted(set(was or {}) | set(now or {}))
        diff = [k for k in keys if not k.startswith(" ")] if was is None or now is None else \
            [k for k in keys if not k.startswith(" ") and not _same(k, was, now)]
        if diff or now is None:
            for name in _name_of(rel, where):
                why = "gone" if helpers[rel] is None else "unreadable" if now is None else ", ".join(diff)
                moved[name] = [f"{rel}: {why}"]
    out: dict[str, list[str]] = {}
    for test, body in files.items():
        text = body.get("text") if isinstance(body, dict) else None
        if not moved or not test.endswith(".py") or test in (pack.get("helpers") or ()) or text is None:
            continue
        if (tree := parsed(text)) is None:
            continue
        names = imports(tree, None)
        hit = sorted({m for n in names if n in moved for m in moved[n]})
        if hit:
            out[test] = hit
    return out
