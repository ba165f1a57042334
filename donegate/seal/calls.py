"""The helpers a test calls, followed by their syntax (`ast`): an assert moved unchanged into a helper of the test's
file, a method of its class (`self.check()`) or a conftest.py it imports the helper from (`from conftest import
check`) still counts as the test's (`donegate.seal.loosened`). A helper never called, or one that no longer asserts,
counts for nothing: the assert is removed all the same."""

from __future__ import annotations

import ast

Func = (ast.FunctionDef, ast.AsyncFunctionDef)


def defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """{name: function} a module's (or a class's) top defines, tests left out (pytest runs those itself)."""
    return {n.name: n for n in body if isinstance(n, Func) and not n.name.startswith("test")}


def from_conftest(tree: ast.Module, conftests: list[str]) -> dict[str, ast.AST]:
    """{name: function} the test file imports from a conftest.py (`from conftest import check`, `from .conftest`,
    `from tests.conftest`): `conftests`, their texts, nearest the test file first."""
    names = {a.asname or a.name: a.name for n in tree.body if isinstance(n, ast.ImportFrom)
             and (n.module or "").rsplit(".", 1)[-1] == "conftest" for a in n.names}
    if not names:
        return {}
    found: dict[str, ast.AST] = {}
    for text in reversed(conftests):  # the nearest conftest.py's name wins
        try:
            found.update(defined(ast.parse(text).body))
        except SyntaxError:
            continue
    return {alias: found[name] for alias, name in names.items() if name in found}


def reached(fn: ast.AST, helpers: dict[str, ast.AST], methods: dict[str, ast.AST] | None = None) -> list[ast.AST]:
    """The helpers `fn` calls, and those they call, each once: by name (`check()`), or a method of its class by
    `self.`/`cls.` (`methods`)."""
    out: list[ast.AST] = []
    seen: set[int] = {id(fn)}
    todo = [fn]
    while todo:
        for sub in ast.walk(todo.pop()):
            if not isinstance(sub, ast.Call):
                continue
            f = sub.func
            helper = helpers.get(f.id) if isinstance(f, ast.Name) else (
                (methods or {}).get(f.attr) if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and f.value.id in ("self", "cls") else None)
            if helper is not None and id(helper) not in seen:
                seen.add(id(helper))
                out.append(helper)
                todo.append(helper)
    return out


def conftests_of(name: str) -> list[str]:
    """The conftest.py paths of a test file's folder and its parents (relative as `name` is), nearest first."""
    parts = name.split("/")[:-1]
    return ["/".join([*parts[:i], "conftest.py"]) for i in range(len(parts), -1, -1)]


def chain(name: str, texts: dict[str, str | None]) -> list[str]:
    """The texts of the conftest.py files of a test file's folder and its parents, nearest first."""
    return [text for text in map(texts.get, conftests_of(name)) if text]
