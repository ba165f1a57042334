"""A test module or conftest.py that puts what imports see ahead of the product (`seal.faked`'s `fixture-faked`), by
`ast`: a finder put on `sys.meta_path` (`sys.meta_path.insert(0, Finder())`: any import below it may be given a
stand-in), or a folder put first on `sys.path` (`sys.path.insert(0, X)`, `sys.path[:0] = [X]`,
`monkeypatch.syspath_prepend(X)`) that now holds a module of the product's name a sealed test below it imports
(`tests/fakes/calc.py`: `import calc` gets it). The folder is worked out without running (`seal.loaded`); one that
holds the product's own file (`src/`, the project's top) is no finding, nor is a folder not known (not read)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import PurePosixPath

from donegate.seal import loaded


def _puts(tree: ast.Module | None, file: str) -> set[str]:
    """What `tree` (the text of `file`) puts ahead of the product: "meta_path", or each folder put first on sys.path
    (project-relative; "?" for one not known)."""
    if tree is None:
        return set()
    names = loaded._bound(tree)
    out: set[str] = set()

    def folder(node: ast.AST) -> str:
        got = loaded._path(node, file, names)  # (a text: relative to where pytest starts, the project's top)
        got = loaded._join(PurePosixPath("."), [got]) if isinstance(got, str) and not got.startswith("/") else got
        return str(got) if isinstance(got, PurePosixPath) else "?"

    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = ast.unparse(n.func)
            given = [ast.unparse(a) for a in n.args[:2]]
            if f in ("sys.meta_path.insert", "sys.meta_path.append", "sys.meta_path.extend") or f.endswith("setattr") \
                    and (given == ["sys", "'meta_path'"] or given[:1] == ["'sys.meta_path'"]):
                out.add("meta_path")
            elif f == "sys.path.insert" and len(n.args) == 2 and not (isinstance(n.args[0], ast.Constant)
                                                                       and n.args[0].value not in (0, None)):
                out.add(folder(n.args[1]))
            elif f.endswith("syspath_prepend") and n.args:
                out.add(folder(n.args[0]))
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                text = ast.unparse(t)
                if text.startswith("sys.meta_path"):
                    out.add("meta_path")
                elif text in ("sys.path[:0]", "sys.path[0:0]") and isinstance(n.value, (ast.List, ast.Tuple)):
                    out |= {folder(e) for e in n.value.elts}
    return out


def findings(file: str, sealed: ast.Module | None, now: ast.Module | None, imported: set[str],
             own: Callable[[str], bool], product: set[str] | None, read: Callable[[str], str | None] | None
             ) -> list[dict[str, str]]:
    """`fixture-faked` for what `now` (the text of `file`) puts ahead of the product that `sealed` did not: `imported`,
    the modules the sealed tests below it import; `own(module)`, whether one is the project's; `product`, the project's
    Python files at the seal less the suite's (its own files; None, not known: no folder read); `read(path)`, a project
    file's text now."""
    out = []
    for put in sorted(_puts(now, file) - _puts(sealed, file)):
        if put == "meta_path":
            out.append({"test": file, "rule": "fixture-faked", "what": "a finder put on sys.meta_path: an import by a "
                        "test below it may be given a stand-in, not the product"})
            continue
        if put == "?" or read is None or product is None:
            continue
        base = "" if put == "." else put + "/"
        for m in sorted(m for m in imported if own(m)):
            for cand in (f"{base}{m.replace('.', '/')}.py", f"{base}{m.replace('.', '/')}/__init__.py"):
                if cand not in product and read(cand) is not None:
                    out.append({"test": file, "rule": "fixture-faked", "what": f"sys.path puts {put} first: `import {m}` "
                                f"below it gets {cand}, not the product"})
    return out
