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

import json
import os
from pathlib import Path


# In a test's files (never a file's name): it runs only with the whole suite (`donegate.seal.imported` marks it). Here,
# not there: a stop reads the map, and `imported` (ast) is the seal's to import.
WITH_ALL = "//with-all"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODULE = "_donegate_own_reach"
MARK = "DONEGATE-OWN-REACH "
RULES = 3  # 2: files looked for (stat), imports by name, an import's module not there yet, a package's __init__;
# 3: os.access, files looked for at import, folders the product lists (its own package's too), what imports gave
# (`__import__`, `import_module`, at import too), sys.modules and a package's attribute read as imports
FOLDER = ".donegate-reach"  # under the laid-out suite: never a test path (pytest skips dot folders)

PLUGIN = '''\
import builtins, importlib, importlib.util, json, os, sys, sysconfig

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
_IMPORTLIB = vars(importlib)


def _trace(frame, event, arg):
    """A call (a generator's every step too): the file of the code, read from its globals' `__file__` (its module's:
    the code's own file, a function made by `exec` in them named by the module that made it), where a frame's code
    (`f_code`) is an audit event every hook of the run sees, ~10^8 times in a generator-heavy suite; the code itself
    only where the globals name no source (code run by `exec` in a namespace of its own) and for importlib's."""
    if event == "call":
        given = frame.f_globals
        name = dict.get(given, "__file__")
        if given is _IMPORTLIB or name.__class__ is not str or not name.endswith(".py"):
            code = frame.f_code
            if code is _BY_NAME:  # a module imported by name: reached even when another test imported it first
                _by_name(frame.f_locals)
            name = code.co_filename
        _now[-1].add(_index(name))
    return None


def _by_name(given):
    try:
        _note(given["name"], given.get("package"), (), None)
    except Exception:
        return


_STD = tuple({os.path.join(p, "") for p in (sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib"),
                                            os.path.dirname(os.__file__)) if p})
_ENV = _STD + tuple({os.path.join(p, "") for p in (sysconfig.get_path("purelib"), sysconfig.get_path("platlib")) if p})
_edges = {}  # importer file -> the files its imports by name gave (at import too: a name built at run time)


def _note(name, package, fromlist, importer):
    """The modules an import gave (the module named, the submodules its `fromlist` names), found in sys.modules
    whoever imported them first: reached by the test running, and by the importing file (`close` follows them)."""
    if name.startswith("."):
        name = importlib.util.resolve_name(name, package)
    for full in [name, *(name + "." + f for f in fromlist or () if isinstance(f, str) and f != "*")]:
        file = getattr(sys.modules.get(full), "__file__", None)
        if not isinstance(file, str) or file.startswith(_ENV):
            continue
        index = _index(os.path.abspath(file))
        if _now:
            _now[-1].add(index)
        if isinstance(importer, str) and not importer.startswith(_ENV):
            _edges.setdefault(_index(os.path.abspath(importer)), set()).add(index)


def _importing(real):
    """`builtins.__import__` and `importlib.__import__`, noted: an import of a module another test imported first
    makes no frame of the module's and no audit event, whether its name is written out or built at run time."""
    def imported(name, globals=None, locals=None, fromlist=(), level=0):
        module = real(name, globals, locals, fromlist, level)
        try:
            given = globals or {}
            package = given.get("__package__")
            if level and package is None:
                package = given["__name__"] if "__path__" in given else given["__name__"].rpartition(".")[0]
            _note("." * level + name, package, fromlist, given.get("__file__"))
        except Exception:
            pass
        return module
    return imported


def _by_module_name(real):
    """`importlib.import_module`, noted at import too (the trace sees it in a test's phases only)."""
    def import_module(name, package=None):
        module = real(name, package)
        try:
            _note(name, package, (), sys._getframe(1).f_globals.get("__file__"))
        except Exception:
            pass
        return module
    return import_module


builtins.__import__ = _importing(builtins.__import__)
importlib.__import__ = _importing(importlib.__import__)
importlib.import_module = _by_module_name(importlib.import_module)


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
_AUDITED = frozenset({"open", "os.listdir", "os.scandir", *_SPAWN})  # one look for every other event (one a call: f_code)


def _audit(event, args):
    if event not in _AUDITED:
        return
    if event in ("open", "os.listdir", "os.scandir"):
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return
        path = os.path.abspath(path)
        if event != "open" and not _by_product(sys._getframe(1)):
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


def _looked(stat, answers=False):
    """`os.stat`, `os.lstat` (what os.path.exists, isfile, pathlib's exists call) and `os.access` (`answers`: it
    answers False where stat raises): no audit event. A file a test looked for, there or not, is reached (a setting
    read only when its file exists); outside a test, one not there, or one the product's code looked for (at import:
    a flag file removed changes what it set)."""
    def looked(path, *args, **kwargs):
        missing = True
        try:
            found = stat(path, *args, **kwargs)
            missing = answers and not found
            return found
        finally:
            if _now or missing or _by_product(sys._getframe(1)):
                _seen(path)
    return looked


# the harness, the kit by the names it runs under in the run (a project named donegate is a product)
_HARNESS = {"pytest", "_pytest", "pluggy", "iniconfig", "donegate_plugin", "donegate_probe", __name__}


def _by_product(frame):
    """Whether `frame` (the caller of an os function), past the standard library's frames, is not the import
    system's nor the harness's (pytest, the kit): the product's code, its tests' or a library of theirs."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(("<frozen importlib", "<frozen zipimport")):
            return False
        if not (name.startswith("<frozen ") or name == __file__ or name.startswith(_STD) and "-packages" not in name):
            return frame.f_globals.get("__name__", "").partition(".")[0] not in _HARNESS
        frame = frame.f_back
    return False


def _seen(path):
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return
    index = _index(os.path.abspath(path))
    if _now:
        _now[-1].add(index)
    else:
        _loose.add(index)


_phase_of = []
sys.addaudithook(_audit)
os.stat, os.lstat, os.access = _looked(os.stat), _looked(os.lstat), _looked(os.access, True)


def pytest_unconfigure(config):
    for nodeid, used in _uses.items():  # a session fixture set up in the first test's setup serves every test using it
        for name in used:
            _map.setdefault(nodeid, set()).update(_fixtures.get(name, ()))
    names = sorted(_files, key=_files.get)
    data = {"files": names, "tests": {k: sorted(v) for k, v in _map.items()}, "loose": sorted(_loose),
            "spawns": sorted(_spawns), "paths": [os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)],
            "edges": {k: sorted(v) for k, v in _edges.items()}}
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
        edges: dict[str, set[str]] = {}
        for importer, idx in (data.get("edges") or {}).items():
            at = rel[int(importer)] if str(importer).isdigit() and int(importer) < len(rel) else None
            if at is not None:
                edges.setdefault(at, set()).update(r for i in idx if isinstance(i, int) and 0 <= i < len(rel)
                                                   and (r := rel[i]) is not None)
        extra["edges"] = {k: sorted(v) for k, v in edges.items() if v}
    return out


def _relative(name: object, seen: list[str]) -> str | None:
    """`name` relative to the project (seen at any of `seen`), "." for its folder, None outside it."""
    for top in seen:
        if isinstance(name, str) and name.startswith(top.rstrip("/") + "/"):
            return name[len(top.rstrip("/")) + 1:]
        if name == top.rstrip("/"):  # the project's folder itself, listed
            return "."
    return None


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
        if name.endswith((".so", ".pyd")):  # an extension module (`calc.abi3.so`): imported before `calc.py`
            folder, _, base = name.rpartition("/")
            name = f"{folder}/{base.split('.', 1)[0]}.py".lstrip("/")
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
        out |= spawns  # what a test's child process imports is not traced either (`python -c 'import tool'`)
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
    if out & reached_by.get(WITH_ALL, set()):
        return None  # a test that reads a module other tests imported (`imported.WITH_ALL`): run as at the seal
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
