"""The package's import graph has no cycle: not at module level, and not hidden in a function.

A function-level import keeps a circle from failing at import time, but the circle is still there
(doctor -> install -> model -> doctor was one): read from the source with `ast`, every
`import donegate.x` and `from donegate[.x] import y` anywhere in a module is an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "donegate"


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package under `root`."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


_NODES: dict[str, list[ast.AST]] = {}


def nodes(path: Path) -> list[ast.AST]:
    """Every node of `path`'s syntax tree (`ast.walk`), parsed once per test process for each text: five tests read
    the package's ~180 modules (~0.9 CPU-s a parse of them all); a look-alike written anew is a new text."""
    text = path.read_text(encoding="utf-8")
    if text not in _NODES:
        _NODES[text] = list(ast.walk(ast.parse(text)))
    return _NODES[text]


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, at any depth of its code."""
    top = name.split(".")[0]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)  # `from donegate import x`: the module x
    return {m for m in found if m.split(".")[0] == top and m in known and m != name}


def graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_package_has_no_import_cycle():
    edges = graph(PACKAGE)
    found = cycle(edges)
    assert found is None, "import cycle: " + " -> ".join(found or [])


def test_the_graph_sees_module_and_function_level_imports():
    edges = graph(PACKAGE)
    assert "donegate.claude.shapes" in edges["donegate.install.diagnose"]  # module level, `from x.y import z`
    assert "donegate.core.outcome" in edges["donegate.gate.appeal"]  # inside a function
    assert "donegate.claude.binary" in edges["donegate.claude.settings"]  # `from donegate.claude import binary`


def test_a_circle_hidden_in_a_function_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from . import c\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    from pkg import a\n    return a\n")
    assert cycle(graph(pkg)) == ["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text("def f():\n    import json\n    return json\n")  # honest look-alike
    assert cycle(graph(pkg)) is None


TESTS = Path(__file__).resolve().parent


def test_tests_import_helpers_from_support_only():
    # conftest holds fixtures; helpers live in tests/support. A test module importing from conftest or
    # from another test module (`from test_gate import seal`) ties tests together through their files.
    bad = []
    for f in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                last = n.split(".")[-1]
                if last == "conftest" or last.startswith("test_"):
                    bad.append(f"{f.relative_to(TESTS)}:{node.lineno}: {n}")
    assert not bad, bad


# Where a user's words come in and the kit's words go out: the parser and the commands. The rest of
# the package returns values and raises DonegateError, so that the hook, doctor, the experiment and
# the tests call the same code without a terminal in between.
FRONT = ("donegate.cli", "donegate.commands")


def talkers(root: Path) -> list[str]:
    """Modules outside cli.py and commands/ that parse arguments or print."""
    bad = []
    for name, path in modules(root).items():
        if ".".join(name.split(".")[:2]) in FRONT:
            continue
        for node in nodes(path):
            if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names) or \
                    isinstance(node, ast.ImportFrom) and node.module == "argparse":
                bad.append(f"{name}:{node.lineno}: imports argparse")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                bad.append(f"{name}:{node.lineno}: prints")
    return bad


def test_domain_modules_neither_parse_arguments_nor_print():
    assert talkers(PACKAGE) == []


def test_a_print_in_a_domain_module_is_found(tmp_path):
    pkg = tmp_path / "donegate"
    (pkg / "commands").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "commands" / "__init__.py").write_text("")
    (pkg / "commands" / "seal.py").write_text("import argparse\nprint('sealed')\n")  # a command may
    (pkg / "cli.py").write_text("import argparse\n")
    (pkg / "store.py").write_text("def seal():\n    print('sealed')\n")
    (pkg / "writer.py").write_text("from argparse import Namespace\nlog = []\nlog.append('said')\n")
    assert talkers(pkg) == ["donegate.store:2: prints", "donegate.writer:1: imports argparse"]


# The package's hallway (issue 35): a newcomer who opens donegate/ sees a few modules and the subsystems'
# folders, each file name says one room, and no module is too long to read in one sitting.
TOP_ALLOWED = 8  # flat modules at the top, besides __init__, __main__ and cli
MAX_LINES = 600


def shape(root: Path) -> dict[str, list[str]]:
    files = [f for f in root.rglob("*.py") if "__pycache__" not in f.parts]
    top = sorted(f.name for f in root.glob("*.py") if f.name not in ("__init__.py", "__main__.py", "cli.py"))
    names: dict[str, list[str]] = {}
    for f in files:
        if f.name != "__init__.py":
            names.setdefault(f.name, []).append(f.relative_to(root).as_posix())
    twins = sorted(f"{n}: {', '.join(sorted(where))}" for n, where in names.items() if len(where) > 1)
    long = sorted(f"{f.relative_to(root).as_posix()}: {n}" for f in files
                  if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    return {"top": top, "twins": twins, "long": long}


def test_the_package_is_a_short_hallway_of_rooms():
    found = shape(PACKAGE)
    assert len(found["top"]) <= TOP_ALLOWED, found["top"]
    assert found["twins"] == [], "file names used twice in the package"
    assert found["long"] == [], f"modules over {MAX_LINES} lines"


def test_the_hallway_check_sees_twins_long_modules_and_a_crowded_top(tmp_path):
    pkg = tmp_path / "donegate"
    (pkg / "gate").mkdir(parents=True)
    for name in ("__init__.py", "cli.py", "scan.py", "gate/__init__.py", "gate/scan.py"):
        (pkg / name).write_text("")
    (pkg / "gate" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    found = shape(pkg)
    assert found["twins"] == ["scan.py: gate/scan.py, scan.py"]
    assert found["long"] == [f"gate/long.py: {MAX_LINES + 1}"]
    assert found["top"] == ["scan.py"]
    (pkg / "gate" / "scan.py").rename(pkg / "gate" / "stage.py")  # honest look-alike: one name, one room
    (pkg / "gate" / "long.py").write_text("x = 1\n" * MAX_LINES)
    assert shape(pkg)["twins"] == [] and shape(pkg)["long"] == []


# One stop, one way (issue 48): a stop goes down from its entry (`donegate.gate`, what the launcher imports)
# and never up into the person's commands or the installer: what a stop needs of them lives below the stages
# (the appeal is a stage, `gate/appeal.py`; who sealed is `seal/sealer.py`; the plugin's settings entries are
# `claude/marketplace.py`; the optional review stage's prompts folder is `core/kit.py`, its headless runs' guard
# settings are written from `claude/stubs.py` and `_layout.GUARD_TOOLS`). No module is exempt from the walk.
STOP_ENTRY = "donegate.gate"
# Above the stop: the installer, the person's commands and what they read (the report; a stop that computed its
# session's time with the report's reader imported the whole report package: 11 modules, 28 ms of CPU).
ABOVE_THE_STOP = ("donegate.install", "donegate.person", "donegate.report", "donegate.commands", "donegate.cli",
                  "donegate.experiment")


def upward(edges: dict[str, set[str]], entry: str = STOP_ENTRY, above: tuple[str, ...] = ABOVE_THE_STOP) -> list[str]:
    """Each module under `above` reachable from `entry`, with the path of imports that reaches it."""
    parent: dict[str, str] = {}
    todo, seen = [entry], {entry}
    while todo:
        node = todo.pop()
        for nxt in sorted(edges.get(node, ())):
            if nxt not in seen:
                seen.add(nxt)
                parent[nxt] = node
                todo.append(nxt)
    out = []
    for m in sorted(seen):
        if any(m == a or m.startswith(a + ".") for a in above):  # donegate.cli, not donegate.clients
            path = [m]
            while path[-1] in parent:
                path.append(parent[path[-1]])
            out.append(" <- ".join(path))
    return out


def test_a_stop_never_imports_the_installer_or_the_persons_commands():
    assert upward(graph(PACKAGE)) == []


def test_the_walk_finds_a_stop_reaching_up(tmp_path):
    pkg = tmp_path / "donegate"
    for sub in ("gate", "install", "person", "seal", "models"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "gate" / "__init__.py").write_text("from donegate.gate import scope\nfrom donegate.models import reviewer\n")
    (pkg / "gate" / "scope.py").write_text("from donegate.seal import store\n")
    (pkg / "seal" / "store.py").write_text("def f():\n    from donegate.install import routes\n    return routes\n")
    (pkg / "install" / "routes.py").write_text("")
    (pkg / "models" / "reviewer.py").write_text("from donegate.person import ownership\n")  # the review stage's too
    (pkg / "person" / "ownership.py").write_text("")
    edges = graph(pkg)
    assert upward(edges) == ["donegate.install.routes <- donegate.seal.store <- donegate.gate.scope <- donegate.gate",
                             "donegate.person.ownership <- donegate.models.reviewer <- donegate.gate"]
    (pkg / "seal" / "store.py").write_text("def f():\n    from donegate.seal import held\n    return held\n")  # honest look-alike
    (pkg / "seal" / "held.py").write_text("")
    (pkg / "models" / "reviewer.py").write_text("from donegate.core import kit\n")
    (pkg / "core").mkdir()
    (pkg / "core" / "kit.py").write_text("")
    assert upward(graph(pkg)) == []


# The stop's path goes one way, down: the stages (gate/) call the runs (hidden/), both call the state they read and
# write (seal/, tree/, sessions/, ledger/, and the agents' boundaries clients/ and claude/), and everything calls the
# base (core/, config, paths, errors). The kit's own model jobs (models/, the optional review stage's reviewers)
# sit beside the runs: a stage starts them, they call the boundary to Claude Code. No module a stop reaches
# imports one of a layer above its own, at any depth of its code (docs/layout.md draws the path). Two edges are
# named: the seal's run of the project's own suite (`seal.own.seal_suite`, called by the seal command's builder
# `seal.sealing`, never by a stop) starts a hidden run, and names the environment's plugin that broke it.
STOP_LAYERS = {"gate": 4, "hidden": 3, "models": 3, "seal": 2, "tree": 2, "sessions": 2, "ledger": 2, "clients": 2,
               "claude": 2, "core": 1, "config": 1, "paths": 1, "errors": 1, "_layout": 1}
SEAL_TIME = {("donegate.seal.own", "donegate.hidden.runner"), ("donegate.seal.own", "donegate.hidden.plugins")}


def layer(module: str) -> int:
    parts = module.split(".")
    return STOP_LAYERS.get(parts[1], 9) if len(parts) > 1 else 0  # the package's own __init__: the base


def upstream(edges: dict[str, set[str]], entry: str = STOP_ENTRY, allowed: set[tuple[str, str]] = SEAL_TIME) -> list[str]:
    """Each import, by a module a stop reaches, of a module in a layer above the importer's."""
    reach, todo = {entry}, [entry]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in reach:
                reach.add(nxt)
                todo.append(nxt)
    return sorted(f"{m} -> {d}" for m in reach for d in edges.get(m, ())
                  if layer(d) > layer(m) and (m, d) not in allowed)


def test_a_stops_path_goes_one_way_down_the_layers():
    assert upstream(graph(PACKAGE)) == []


def test_the_layer_walk_finds_a_call_back_up(tmp_path):
    pkg = tmp_path / "donegate"
    files = {"__init__.py": "", "gate/__init__.py": "from donegate.hidden import runner\nfrom donegate.seal import leak_scan\n",
             "hidden/__init__.py": "", "hidden/runner.py": "from donegate.seal import store\n", "seal/__init__.py": "",
             "seal/store.py": "from donegate.core import util\n", "core/__init__.py": "", "core/util.py": "",
             "seal/leak_scan.py": "def f():\n    from donegate.hidden import runner\n    return runner\n"}
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    assert upstream(graph(pkg)) == ["donegate.seal.leak_scan -> donegate.hidden.runner"]
    (pkg / "seal" / "leak_scan.py").write_text("def f():\n    from donegate.seal import store\n    return store\n")  # honest look-alike
    assert upstream(graph(pkg)) == []
