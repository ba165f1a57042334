"""Which project files each sealed test of the project's own suite reaches (docs/own-suite.md, "Cost follows the
change"): recorded once, at the seal's run of the suite, so a stop runs only the sealed test files a change can reach.

At the seal a small pytest plugin (`PLUGIN`, written beside the laid-out suite and loaded with `-p`) records, per
test, the source files of every Python function called during its setup, call and teardown (a trace function that
follows calls only, set for each phase and removed after it); the map goes back on pytest's own output, one marked
line, and the seal closes it over the project's static imports (a module read only for its constants is reached
through the module that imports it, a package's `__init__.py` and the conftest files above a test too), the files a
test opened or looked for (an audit hook; `os.stat` wrapped), the modules it imported by name, an import's module not
there yet, and the project's folders on the run's path. A stop then runs a sealed test file when a file its tests
reached changed; a change the map cannot place (a Python file no test reached, data read at import, a new module that
could shadow an import) runs the whole suite.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODULE = "_donegate_own_reach"
MARK = "DONEGATE-OWN-REACH "
RULES = 2  # 2: files looked for (stat), imports by name, an import's module not there yet, a package's __init__
FOLDER = ".donegate-reach"  # under the laid-out suite: never a test path (pytest skips dot folders)

PLUGIN = '''\
import importlib, importlib.util, json, os, sys

import pytest

_files = {}
_map = {}
_now = []


def _index(name):
    index = _files.get(name)
    if index is None:
        index = _files[name] = len(_files)
    return index


_BY_NAME = importlib.import_module.__code__


def _trace(frame, event, arg):
    if event == "call":
        code = frame.f_code
        if code is _BY_NAME:  # a module imported by name: reached even when another test imported it first
            _by_name(frame.f_locals)
        _now[-1].add(_index(code.co_filename))
    return None


def _by_name(given):
    try:
        name = given["name"]
        if name.startswith("."):
            name = importlib.util.resolve_name(name, given.get("package"))
        file = getattr(sys.modules.get(name), "__file__", None)
    except Exception:
        return
    if isinstance(file, str):
        _now[-1].add(_index(os.path.abspath(file)))


def _phase(item):
    _now.append(_map.setdefault(item.nodeid, set()))
    _phase_of.append(item.nodeid)
    before = sys.gettrace()
    sys.settrace(_trace)
    try:
        return (yield)
    finally:
        sys.settrace(before)
        _now.pop()
        _phase_of.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    _uses[item.nodeid] = list(getattr(item, "fixturenames", ()))
    return (yield from _phase(item))


_fixtures = {}  # a fixture of a wider scope than a test's: what its setup reached, for every test that uses it
_uses = {}


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.scope == "function" or not _now:
        return (yield)
    _now.append(_fixtures.setdefault(fixturedef.argname, set()))
    try:
        return (yield)
    finally:
        _now.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _phase(item))


_loose = set()  # files opened or folders listed outside a test's phases (at import, collection)
_spawns = set()  # tests that started a process (what it reads is not seen)
_SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn")


def _audit(event, args):
    if event in ("open", "os.listdir", "os.scandir"):
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return
        path = os.path.abspath(path)
        if event != "open" and (path in sys.path or os.path.isfile(os.path.join(path, "__init__.py"))):
            return  # the import system's listing of a folder it imports from (a new module there: `select`'s rules)
        index = _files.get(path)
        if index is None:
            index = _files[path] = len(_files)
        if _now:
            _now[-1].add(index)
        else:
            _loose.add(index)
    elif event in _SPAWN and _phase_of:
        _spawns.add(_phase_of[-1])


def _looked(stat):
    """`os.stat` and `os.lstat` (what os.path.exists, isfile, pathlib's exists call; no audit event): a file a test
    looked for, there or not, is reached (a setting read only when its file exists); outside a test, one not there."""
    def looked(path, *args, **kwargs):
        try:
            return stat(path, *args, **kwargs)
        except FileNotFoundError:
            _seen(path, True)
            raise
        finally:
            if _now:
                _seen(path, False)
    return looked


def _seen(path, missing):
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return
    index = _index(os.path.abspath(path))
    if _now:
        _now[-1].add(index)
    elif missing:
        _loose.add(index)


_phase_of = []
sys.addaudithook(_audit)
os.stat, os.lstat = _looked(os.stat), _looked(os.lstat)


def pytest_unconfigure(config):
    for nodeid, used in _uses.items():  # a session fixture set up in the first test's setup serves every test using it
        for name in used:
            _map.setdefault(nodeid, set()).update(_fixtures.get(name, ()))
    names = sorted(_files, key=_files.get)
    data = {"files": names, "tests": {k: sorted(v) for k, v in _map.items()}, "loose": sorted(_loose),
            "spawns": sorted(_spawns), "paths": [os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)]}
    out = os.fdopen(os.dup(1), "w")
    out.write("\\n''' + MARK + '''" + json.dumps(data, separators=(",", ":")) + "\\n")
    out.close()
'''


def plant(dest: Path) -> tuple[list[str], str]:
    """The plugin written under the laid-out suite `dest`: (pytest's arguments loading it, the folder to put on the
    run's sys.path)."""
    folder = dest / FOLDER
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(PLUGIN, encoding="utf-8")
    return ["-p", MODULE], str(folder)


def read(output: str, seen: list[str], extra: dict[str, Any] | None = None) -> dict[str, list[str]] | None:
    """{test id: project files it reached, relative} from the run's output; `seen`: the folders the project was seen at
    in the run (its path, or the copy's), longest first. None when the run printed no map. `extra` gets `loose` (the
    project's files opened or folders listed outside any test: at import, at collection) and `spawns` (the tests
    that started a process)."""
    line = next((ln for ln in reversed(output.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        return None
    try:
        data = json.loads(line[len(MARK):])
        names, tests = data["files"], data["tests"]
    except (ValueError, KeyError, TypeError):
        return None
    rel = [_relative(name, seen) for name in names]
    out: dict[str, list[str]] = {}
    for tid, idx in tests.items():
        out[tid] = sorted({r for i in idx if isinstance(i, int) and 0 <= i < len(rel) and (r := rel[i]) is not None})
    if extra is not None:
        loose = data.get("loose") or []
        extra["loose"] = sorted({r for i in loose if isinstance(i, int) and 0 <= i < len(rel) and (r := rel[i]) is not None})
        extra["spawns"] = sorted(t for t in data.get("spawns") or [] if isinstance(t, str))
        extra["paths"] = sorted({r for p in data.get("paths") or [] if (r := _relative(p, seen)) is not None})
    return out


def _relative(name: object, seen: list[str]) -> str | None:
    """`name` relative to the project (seen at any of `seen`), "." for its folder, None outside it."""
    for top in seen:
        if isinstance(name, str) and name.startswith(top.rstrip("/") + "/"):
            return name[len(top.rstrip("/")) + 1:]
        if name == top.rstrip("/"):  # the project's folder itself, listed
            return "."
    return None


def _imports(project: Path, name: str) -> set[str]:
    """The project's files a module imports at its top (static, `ast`): `import a.b`, `from a import b`, relative."""
    try:
        tree = ast.parse((project / name).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    here = Path(name).parent
    wanted: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [Path(*a.name.split(".")) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(max(0, node.level - 1)):
                base = base.parent
            mod = Path(*node.module.split(".")) if node.module else Path()
            start = (base / mod) if node.level else mod
            wanted.append(start)
            wanted += [start / a.name for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(arg := node.args[0], ast.Constant) \
                and isinstance(arg.value, str) and not arg.value.startswith(".") and _named_import(node.func):
            wanted.append(Path(*arg.value.split(".")))  # __import__('a.b'), import_module('a.b'): a name written out
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


def close(project: Path, reached: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each test's files with every project file they import, transitively (a module read only for its constants)."""
    memo: dict[str, set[str]] = {}

    def closure(name: str) -> set[str]:
        if name in memo:
            return memo[name]
        memo[name] = seen = {name}
        todo = [name]
        while todo:
            here = todo.pop()
            for nxt in [*_imports(project, here), *_packages(project, here)]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

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


def pack(reached: dict[str, list[str]]) -> dict[str, Any]:
    """The map as the store keeps it: file names once, each test by its file's indexes."""
    names = sorted({f for files in reached.values() for f in files})
    index = {n: i for i, n in enumerate(names)}
    return {"files": names, "tests": {t: [index[f] for f in files] for t, files in reached.items()}, "rules": RULES}


def select(kept: dict[str, Any] | None, tests: list[str], changed: list[str], test_files: set[str]) -> set[str] | None:
    """The sealed test files (relative to the project) a stop must run for `changed` (project-relative names changed
    since the seal), or None: all of them. `test_files`: the suite's own files (a change to one is not the product's:
    the sealed copies run, and the agent's own are run as they are now)."""
    if not kept or kept.get("rules") != RULES:
        return None  # no map, or one of older rules (sealed before the holes `RULES` names were closed): re-seal
    names = kept.get("files") or []
    mapped = kept.get("tests") or {}
    at_seal = set(kept.get("project_files") or [])
    reached_by: dict[str, set[str]] = {}
    for tid, idx in mapped.items():
        for i in idx:
            if isinstance(i, int) and 0 <= i < len(names):
                reached_by.setdefault(names[i], set()).add(tid.split("::", 1)[0])
    out = {t.split("::", 1)[0] for t in tests if t not in mapped}  # a test the map does not know runs every time
    opened = "loose" in kept  # the map records the files the tests opened and the folders they listed
    loose = set(kept.get("loose") or [])
    spawns = {t.split("::", 1)[0] for t in kept.get("spawns") or []}
    paths = set(kept.get("paths") or [])  # the project's folders on the run's path (one the product put there)
    for name in changed:
        if name in test_files or name.endswith((".pyc", ".pyo")) or "__pycache__/" in name or name.startswith(".claude/"):
            continue
        if name not in reached_by:  # a link to a folder swapped (the change is named by the link): what was read in it
            folder = name + "/"
            for file, by in reached_by.items():
                if file.startswith(folder):
                    out |= by
        parents = [name.rsplit("/", k)[0] for k in range(1, name.count("/") + 1)] + ["."]
        for folder in parents:  # a test that listed a folder reaches what is added to it (a plugin found by a glob)
            out |= reached_by.get(folder, set())
        if not name.endswith(".py"):
            if not opened or name in loose or any(f in loose for f in parents):
                return None  # data the product may read at import, or a map that did not record what was opened
            # Data no test opened at the seal changes no test's path through the unchanged code (a change to the
            # code that then reads it is a change the map places); what a test's child process reads is not seen.
            out |= reached_by.get(name, set()) | spawns
            continue
        if name in reached_by:
            out |= reached_by[name]
        elif name in at_seal:
            return None  # there at the seal, reached by no test as far as the map sees: it cannot place the change
        elif "/" not in name or name.startswith("src/") and name.count("/") == 1:
            return None  # a new top-level module: it could shadow what a test imports
        elif name.count("/") == 1 + name.startswith("src/") and name.endswith("/__init__.py"):
            return None  # a new top-level package: the same (the project's folder comes before the stdlib's)
        elif _on_path(name, paths):
            return None  # a new module or package in a folder the run had on its path (`vendor/`): the same
        # else a new module inside a package: reached only through a file that imports it, which changed too
    return out


def _on_path(name: str, paths: set[str]) -> bool:
    """Whether the module `name` (a project-relative file; a package by its `__init__.py`) sits directly in one of
    the folders `paths` (the project's folders on the seal run's `sys.path`), so an import by its bare name finds it."""
    parts = name.split("/")
    if parts[-1] == "__init__.py":
        parts = parts[:-1]
    return ("/".join(parts[:-1]) or ".") in paths


def project_files(project: Path) -> list[str]:
    """The project's Python files at the seal (environments and caches left out)."""
    skip = {"__pycache__", ".git", ".venv", "venv", "node_modules", ".tox", ".nox", ".pytest_cache", ".mypy_cache"}
    out = []
    for folder, dirs, files in os.walk(project):
        dirs[:] = [d for d in dirs if d not in skip and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))]
        out += [os.path.relpath(os.path.join(folder, f), project) for f in files if f.endswith(".py")]
    return sorted(out)
