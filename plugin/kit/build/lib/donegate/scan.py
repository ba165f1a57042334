"""A scan of the change for test-harness tricks: the product files changed since the seal, parsed with `ast`.

The rules are narrow on purpose (honest code must pass: `tests/gate/test_confine.py` keeps a corpus of honest
look-alikes that must never be flagged):

- `eq-constant`: `__eq__`, `__ne__` or `__hash__` whose whole body returns a constant (an object equal
  to anything passes every `==` a test makes);
- `imports-pytest`: product code importing `pytest`, `_pytest` or `unittest`, or reaching for
  `sys.modules["pytest"]` (product code has no business with the harness that runs it);
- `frame-walk`: `inspect.stack`, `inspect.currentframe`, `inspect.getouterframes`, `sys._getframe`,
  `traceback.extract_stack` / `walk_stack` (the calling test's frame and file);
- `gc-objects`: `gc.get_objects`, `gc.get_referrers`, `gc.get_referents` (the live pytest objects);
- `hard-exit`: `os._exit`;
- `pytest-env`: reading `PYTEST_CURRENT_TEST` (code that behaves differently under test);
- `kit-path`: a string naming the kit: `DONEGATE_*`, the kit's folders, the state root.

A finding names file:line and the rule. `scan: block` blocks the stop on a finding, `hint` tells the
agent once with the stop (not blocking), `off` does not scan. The repository's own test files are not
scanned (they may import pytest), nor files the change did not touch.
"""

from __future__ import annotations

import ast
from pathlib import Path

from donegate import git, paths, store

RULES = {
    "eq-constant": "{name} returns a constant: an object equal to anything is not a result",
    "imports-pytest": "product code reaches for the test harness ({what})",
    "frame-walk": "product code walks the call stack ({what})",
    "gc-objects": "product code searches the interpreter's live objects ({what})",
    "hard-exit": "product code ends the process without cleanup (os._exit)",
    "pytest-env": "product code reads PYTEST_CURRENT_TEST",
    "kit-path": "product code names the kit ({what})",
}
HARNESS = ("pytest", "_pytest", "unittest")
FRAMES = {("inspect", "stack"), ("inspect", "currentframe"), ("inspect", "getouterframes"), ("inspect", "trace"),
          ("sys", "_getframe"), ("traceback", "extract_stack"), ("traceback", "walk_stack"), ("traceback", "format_stack"),
          ("traceback", "print_stack")}
GC = {("gc", "get_objects"), ("gc", "get_referrers"), ("gc", "get_referents")}


class _Visitor(ast.NodeVisitor):
    def __init__(self, kit_strings: list[str]) -> None:
        self.found: list[tuple[int, str, str]] = []
        self.kit_strings = kit_strings
        self.aliases: dict[str, str] = {}  # local name -> "module" or "module.attr"

    def add(self, node: ast.AST, rule: str, **kw: str) -> None:
        self.found.append((getattr(node, "lineno", 0), rule, RULES[rule].format(**kw)))

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            top = a.name.split(".")[0]
            if top in HARNESS:
                self.add(node, "imports-pytest", what=f"import {a.name}")
            self.aliases[a.asname or top] = a.name if a.asname else top
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level == 0 and mod.split(".")[0] in HARNESS:
            self.add(node, "imports-pytest", what=f"from {mod} import ...")
        if node.level == 0:
            for a in node.names:
                self.aliases[a.asname or a.name] = f"{mod}.{a.name}"
                if (mod, a.name) in FRAMES:
                    self.add(node, "frame-walk", what=f"{mod}.{a.name}")
                elif (mod, a.name) in GC:
                    self.add(node, "gc-objects", what=f"{mod}.{a.name}")
                elif (mod, a.name) == ("os", "_exit"):
                    self.add(node, "hard-exit")
        self.generic_visit(node)

    def _dotted(self, node: ast.AST) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
            return ".".join(reversed(parts))
        return ""

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self._dotted(node)
        if name:
            head, _, attr = name.rpartition(".")
            if (head, attr) in FRAMES:
                self.add(node, "frame-walk", what=name)
            elif (head, attr) in GC:
                self.add(node, "gc-objects", what=name)
            elif (head, attr) == ("os", "_exit"):
                self.add(node, "hard-exit")
            if node.attr == "f_back":
                self.add(node, "frame-walk", what="f_back")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._dotted(node.value) == "sys.modules":
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.split(".")[0] in HARNESS:
                self.add(node, "imports-pytest", what=f'sys.modules["{key.value}"]')
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = self._dotted(node.func)
        first = node.args[0] if node.args else None
        text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        if text is not None and text.split(".")[0] in HARNESS and func in (
                "__import__", "importlib.import_module", "sys.modules.get", "import_module"):
            self.add(node, "imports-pytest", what=f"{func}({text!r})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if "PYTEST_CURRENT_TEST" in node.value:
                self.add(node, "pytest-env")
            elif "DONEGATE_" in node.value:
                self.add(node, "kit-path", what="a DONEGATE_ variable")
            else:
                for s in self.kit_strings:
                    if s in node.value:
                        self.add(node, "kit-path", what="the kit's folder")
                        break

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in ("__eq__", "__ne__", "__hash__") and _constant_body(node.body):
            self.add(node, "eq-constant", name=node.name)
        self.generic_visit(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        # __eq__ = lambda self, other: True
        for t in node.targets:
            if isinstance(t, ast.Name) and t.id in ("__eq__", "__ne__", "__hash__") and isinstance(node.value, ast.Lambda) \
                    and _is_constant(node.value.body):
                self.add(node, "eq-constant", name=t.id)
        self.generic_visit(node)


def _is_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, str) \
        or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Constant)


def _constant_body(body: list[ast.stmt]) -> bool:
    stmts = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
    return len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None and _is_constant(stmts[0].value)


def scan_source(text: str, name: str, kit_strings: list[str] | None = None) -> list[dict[str, object]]:
    """Findings in one file's source: [{file, line, rule, what}]."""
    try:
        tree = ast.parse(text, filename=name)
    except (SyntaxError, ValueError):
        return []  # the tests will say what is wrong with it
    v = _Visitor(kit_strings or [])
    v.visit(tree)
    seen, out = set(), []
    for line, rule, what in sorted(v.found):
        if (line, rule) not in seen:
            seen.add((line, rule))
            out.append({"file": name, "line": line, "rule": rule, "what": what})
    return out


def kit_strings(root: Path | None = None) -> list[str]:
    return [str(p) for p in paths.protected_roots(home=root)]


_ENVS = ("site-packages", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".git")
MAX_IGNORED = 500


def _ignored_py(repo: Path) -> list[str]:
    """Git-ignored Python files (an import does not care whether git tracks a file), without virtual
    environments and caches, at most MAX_IGNORED of them."""
    out: list[str] = []
    for name in git._lines(git._git(repo, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")):
        parts = name.rstrip("/").split("/")
        if any(p in _ENVS for p in parts):
            continue
        p = repo / name
        if name.endswith("/") and p.is_dir() and not (p / "pyvenv.cfg").exists():
            for f in p.rglob("*.py"):
                rel = f.relative_to(repo).as_posix()
                if not any(x in _ENVS for x in rel.split("/")):
                    out.append(rel)
                if len(out) >= MAX_IGNORED:
                    return out
        elif name.endswith(".py"):
            out.append(name)
    return out[:MAX_IGNORED]


def scan(repo: Path, base: str, root: Path | None = None) -> list[dict[str, object]]:
    """Findings in the product files changed since `base` (the seal's commit), git-ignored ones included."""
    strings = kit_strings(root)
    out: list[dict[str, object]] = []
    for name in dict.fromkeys([*git.changed_since(repo, base), *_ignored_py(repo)]):
        if not name.endswith(".py") or store.matches(name, store.REPO_TEST_GLOBS):
            continue
        p = repo / name
        if not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += scan_source(text, name, strings)
    return out


def problem(findings: list[dict[str, object]]) -> str:
    """One line for the agent: what was found, where, and which rule."""
    shown = "; ".join(f"{f['file']}:{f['line']} {f['what']} [{f['rule']}]" for f in findings[:5])
    more = f" (and {len(findings) - 5} more)" if len(findings) > 5 else ""
    return f"the change looks like it games the test harness: {shown}{more}"
