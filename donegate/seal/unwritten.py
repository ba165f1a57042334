"""A hidden test file that cannot be imported yet, because it imports a name the work will add (issue 46).

A person writes `from calc import mul` at the top of the test file for the `mul` the work is to add: pytest
cannot import the file, so it collects none of its tests. The seal names them from the file's syntax, as pytest
would collect them once the import works (`ids`), and records them all failing at the seal; at a stop, a sealed
file that still cannot be imported fails each of its sealed tests with the import error (`runner.uncollected`).

What cannot be named from the syntax alone (parametrised tests, inherited or conditionally defined ones) is
refused with a fix: import the new name inside the tests instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

from donegate.errors import DonegateError

_FIX = ("import the new name inside the tests that use it (def test_x(): from calc import mul), so pytest collects "
        "the file before the work is done, then seal again")


def ids(path: Path, nodeid: str) -> list[str]:
    """The test ids pytest gives `path` (its node id `nodeid`) once it imports: test functions at the top level,
    test methods of `Test*` classes (nested ones too), in the order pytest collects them (first definition's
    place, last definition wins). Raises DonegateError (with a fix) when the syntax alone cannot say."""
    tree = ast.parse(path.read_bytes(), str(path))
    return [f"{nodeid}::{name}" for name in _collect(tree.body, path, module=True)]


def _collect(body: list[ast.stmt], path: Path, *, module: bool) -> list[str]:
    found: dict[str, list[str]] = {}  # name -> its ids, in the order a namespace's dict keeps them
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name.startswith("test"):
                _plain(stmt, path)
                found[stmt.name] = [stmt.name]
            elif stmt.name in found:
                found[stmt.name] = []
        elif isinstance(stmt, ast.ClassDef):
            if stmt.name.startswith("Test"):
                if any(not (isinstance(b, ast.Name) and b.id == "object") for b in stmt.bases) or stmt.keywords:
                    _refuse(path, f"the class {stmt.name} has a base class, whose tests the syntax does not show")
                inner = stmt.body
                if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" for s in inner):
                    found[stmt.name] = []  # pytest collects no class with an __init__
                    continue
                found[stmt.name] = [f"{stmt.name}::{n}" for n in _collect(inner, path, module=False)]
            elif stmt.name in found:
                found[stmt.name] = []
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if "__test__" in names or (module and "pytestmark" in names and "parametrize" in ast.dump(stmt)):
                _refuse(path, "it sets __test__ or a parametrize mark for the whole file")
            for n in names:
                if n in found:
                    found[n] = []
        elif any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name.startswith(("test", "Test")) for n in ast.walk(stmt)):
            _refuse(path, "a test is defined inside an if, try, with or loop")
    return [i for names in found.values() for i in names]


def _plain(fn: ast.FunctionDef | ast.AsyncFunctionDef, path: Path) -> None:
    for dec in fn.decorator_list:
        text = ast.dump(dec)
        if "parametrize" in text or "fixture" in text:
            _refuse(path, f"the test {fn.name} is parametrized (@pytest.mark.parametrize) or a fixture: its ids come from running it")


def _refuse(path: Path, why: str) -> None:
    raise DonegateError(f"{path.name} cannot be imported against the unchanged repository, and its tests cannot be "
                        f"named from its syntax: {why}", _FIX)
