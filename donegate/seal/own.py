"""The project's own test suite in the store (docs/own-suite.md): found as pytest would find it, packed into one
store file (`own-suite.json`) with its baseline, and laid out again for a run.

Packed, not copied as files: the store's check compares its top-level files with the manifest, and the hidden run
takes every `.py` file at the store's top for a hidden test; one JSON file is verified like any store file and
is never collected.
"""

from __future__ import annotations

import ast
import binascii  # base64's own encoder and decoder, without `base64`'s import at every stop
import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator

from donegate.errors import DonegateError
from donegate.seal.store import OWN_SKIP_DIRS as SKIP_DIRS
from donegate.seal.store import OWN_SUITE

NAME = OWN_SUITE  # `seal.store` names it: a stop asks whether the store has it without importing this module
VERSION = 1
# pytest's own order of configuration files (its rootdir rules): the first holding a pytest section wins (pytest.toml
# and .pytest.toml, pytest 9's, always do; an older pytest reads neither: `pytest_files.reads_toml`).
TOMLS = ("pytest.toml", ".pytest.toml")
CONFIGS = (*TOMLS, "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
USUAL = ("tests", "test", "testing")
MAX_FILES = 5000
MAX_BYTES = 32 << 20
AGAIN_BELOW = 20.0  # seconds: a suite faster than this runs twice at the seal
KIT_INI = "[pytest]\n# Written by donegate: the project had no pytest configuration at the seal.\n"
# A test failing at the seal on one of these wanted a service or the network, which the runs' walls lack (no network):
# it never blocks, and the seal names it (`needs_service`) rather than count it with the tests failing on their own.
_SERVICE = ("ConnectionRefusedError", "ConnectionResetError", "ConnectionError", "NewConnectionError", "MaxRetryError",
            "gaierror", "Name or service not known", "name resolution", "Network is unreachable",
            "No route to host", "Connection refused", "could not connect", "Cannot connect", "ServerSelectionTimeout",
            "OperationalError: could not", "Errno 101", "Errno 111", "Errno 113")


def configured(value: Any) -> list[str] | str:
    """`own_tests:` of donegate.yaml as the seal takes it: "auto", "off" or a list of paths."""
    if isinstance(value, bool):  # YAML reads a bare `off` as false
        return "auto" if value else "off"
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise DonegateError("config key own_tests: expected auto, off or a list of paths", "fix own_tests in donegate.yaml")
    return value if isinstance(value, list) or value in ("auto", "off") else [value]


def configuration(project: Path) -> tuple[str | None, list[str]]:
    """(the configuration file pytest reads in `project`, relative; its `testpaths`)."""
    from donegate.seal.pytest_files import pytest_section, reads_toml  # (the seal's and doctor's, and a stop's that changed one)

    for name in CONFIGS:
        found = pytest_section(project / name) if (project / name).is_file() else None
        if found is not None and (name not in TOMLS or reads_toml()):
            return name, found.get("testpaths", "").split()
    return None, []



def switched_off(project: Path) -> set[str]:
    """The plugins the project's pytest configuration leaves out (`addopts = -p no:NAME`): the kit's runs, which read
    the kit's own configuration, leave them out too (the fix `blamed` gives for a plugin made for another pytest)."""
    import re

    return set(re.findall(r"-p\s*no:(\S+)", addopts(project)))


def addopts(project: Path) -> str:
    """The `addopts` of the project's pytest configuration now ("" without one)."""
    from donegate.seal.pytest_files import pytest_section

    name, _ = configuration(project)
    return (pytest_section(project / name) or {}).get("addopts", "") if name else ""


def ignored(project: Path) -> list[str]:
    """The paths the project's `addopts` leave out of collection (`--ignore=PATH`, `--ignore PATH`), relative."""
    import shlex

    try:
        words = shlex.split(addopts(project))
    except ValueError:
        return []
    out = [w.split("=", 1)[1] for w in words if w.startswith("--ignore=")]
    out += [b for a, b in zip(words, words[1:], strict=False) if a == "--ignore"]
    return [Path(os.path.normpath(p)).as_posix() for p in out if p and not os.path.isabs(p)]


def find(project: Path, named: list[str] | None = None) -> tuple[str | None, list[str], str]:
    """(configuration file, the paths pytest would collect, relative, how they were found). `named`: what
    `--own-tests` / `own_tests:` say (paths relative to the project)."""
    config, testpaths = configuration(project)
    if named:
        how, wanted = "named", named
    elif testpaths:
        how, wanted = "testpaths", testpaths
    else:
        how, wanted = "usual", [d for d in USUAL if (project / d).is_dir()]
        if not wanted:
            wanted = nested(project) + sorted(p.name for p in project.glob("test_*.py")) + sorted(p.name for p in project.glob("*_test.py"))
    out = []
    for p in wanted:
        rel = os.path.normpath(p)
        if rel.startswith("..") or os.path.isabs(rel):
            raise DonegateError(f"own tests {p!r}: outside the project", "name folders or files inside it (own_tests: in donegate.yaml)")
        if (project / rel).exists():
            out.append(rel)
        elif how == "named":
            raise DonegateError(f"own tests {p!r}: no such file or folder in {project}", "name the project's test folders (own_tests:)")
    return config, out, how


def nested(project: Path, depth: int = 3) -> list[str]:
    """The usual test folders below the project's top (`simplejson/tests`, `src/pkg/tests`; at most `depth` folders
    down, none inside another), relative: with no `testpaths` and no test folder at the top, the project's
    `python -m pytest` collects them from its folder. Not found (simplejson 4.3.0), the suite was not sealed: its
    tests stayed protected, an honest test added beside the others blocked ("protected files were changed") and a
    regression they saw passed."""
    out: list[str] = []
    for folder, dirs, _ in os.walk(project):
        rel = os.path.relpath(folder, project)
        level = 0 if rel == "." else rel.count(os.sep) + 1
        found = [d for d in dirs if d in USUAL] if level else []
        out += sorted(Path(rel, d).as_posix() for d in found)
        dirs[:] = sorted(d for d in dirs if level + 1 < depth and d not in found and d not in SKIP_DIRS
                         and not d.startswith((".", "_")) and d not in ("build", "dist", "node_modules", "venv")
                         and not d.endswith(".egg-info") and not (Path(folder) / d / "pyvenv.cfg").exists())
    return out


def _read(path: Path) -> dict[str, str]:
    data = path.read_bytes()
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": binascii.b2a_base64(data, newline=False).decode("ascii")}


TESTISH = USUAL


def product(project: Path, rel: str) -> bool:
    """Whether the file `rel` under a collected path is the product's own, never sealed as the suite's: a module or a
    data file of a package (its folder holds `__init__.py`) in no test folder (`tests`, `test`, `testing`, `test_*`,
    `*_tests`), not a test file nor a `conftest.py`. A `testpaths` that names the product's package (`testpaths = calc`, its tests
    in `calc/tests/`; or `calc tests` for its doctests) laid out its modules with the tests, and the sealed copies
    were what the tests imported: every regression passed. Its tests now import the project's (the agent's) code."""
    parts = rel.split("/")
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return False
    if any(p in TESTISH or p.startswith("test_") or p.endswith(("_tests", "_test")) for p in parts[:-1]):
        return False
    return len(parts) > 1 and (project / Path(rel).parent / "__init__.py").is_file()


def packages(project: Path, files: dict[str, Any]) -> tuple[str, list[str]]:
    """("packages", the product's package folders between a sealed test package and the product's topmost package:
    `toolz/sandbox` for `toolz/sandbox/tests/`), laid out with an empty `__init__.py` (`laid_files`), so pytest names
    the test modules below them as the project's pytest does but for the topmost package (`sandbox.tests.test_core`,
    `tests.test_dicttoolz`; toolz 1.1.0, where both were pytest's top-level `tests`); the topmost is not laid out: its
    name is what the tests import the product by. Where two laid-out packages would still both be top-level of one
    name (two of the product's topmost packages each holding a `tests` package, `a/tests/` and `b/tests/`: the seal
    refused the suite, `No module named 'tests.test_x'`), ("shims", the folders from each topmost package down),
    each laid out with `SHIM` as its `__init__.py`: the project's package loaded in its place, the laid-out folder
    first on its `__path__`, and the test modules named as the project's pytest names them (`a.tests.test_x`)."""
    between: set[str] = set()
    chain: set[str] = set()
    for name in files:
        path = Path(name)
        if path.name != "__init__.py":
            continue
        folder = path.parent.parent
        while folder != Path(".") and (project / folder / "__init__.py").is_file() and f"{folder.as_posix()}/__init__.py" not in files:
            chain.add(folder.as_posix())
            if folder.parent != Path(".") and (project / folder.parent / "__init__.py").is_file():
                between.add(folder.as_posix())
            folder = folder.parent
    laid = {Path(n).parent.as_posix() for n in files if Path(n).name == "__init__.py"} | between
    tops = [f for f in laid if Path(f).parent.as_posix() not in laid]
    if len({Path(f).name for f in tops}) < len(tops):
        return "shims", sorted(chain)
    return "packages", sorted(between)


ROOT_CONFTEST = b"# Laid out by donegate (docs/own-suite.md, shims): its folder first on sys.path from pytest's start.\n"
# The `__init__.py` of a product's package folder laid out above a sealed test package (`packages`): it loads the
# project's own package of its name in its place (the import system takes what `sys.modules` holds after it ran), with
# this folder first on the package's `__path__`, so `a.tests` is the sealed copy and `a.core` the project's.
SHIM = """\
# Laid out by donegate (docs/own-suite.md): the project's own package of this name, loaded in its place, with this
# folder (its sealed tests) first on its __path__.
def _project_package():
    import os
    import sys
    from importlib.util import module_from_spec

    here = os.path.dirname(os.path.abspath(__file__))
    parent = __name__.rpartition(".")[0]
    where = sys.modules[parent].__path__ if parent else sys.path
    path = [p for p in where if os.path.abspath(p or os.curdir) != os.path.dirname(here)]
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(__name__, path) if find is not None else None
        if spec is not None and spec.origin and os.path.dirname(os.path.abspath(spec.origin)) != here:
            break
    else:
        raise ModuleNotFoundError(f"No module named {__name__!r} in the project", name=__name__)
    module = module_from_spec(spec)
    if spec.submodule_search_locations is not None:
        spec.submodule_search_locations.insert(0, here)
    sys.modules[__name__] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(__name__, None)
        raise


_project_package()
"""


def gather(project: Path, config: str | None, found: list[str]) -> dict[str, dict[str, str]]:
    """Every file under the collected paths (caches and the product's own modules, `product`, left out), every `conftest.py` from the project's folder down to
    them, and the configuration: {relative path: content}."""
    names: set[str] = set()
    for rel in found:
        top = project / rel
        if top.is_file():
            names.add(rel)
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not (Path(folder) / d / "pyvenv.cfg").exists())
            for f in files:
                name = os.path.relpath(os.path.join(folder, f), project)
                if not f.endswith((".pyc", ".pyo")) and not product(project, name):
                    names.add(name)
        parts = Path(rel).parts
        for i in range(len(parts)):
            conftest = Path(*parts[:i], "conftest.py") if i else Path("conftest.py")
            if (project / conftest).is_file():
                names.add(str(conftest))
    # every configuration file pytest could read (the one it read, and those a later edit could make it read):
    # the weakening check compares each with what it is at a stop
    names.update(name for name in CONFIGS if (project / name).is_file())
    # what the weakening check compares besides: the coverage threshold, tox's own file and the CI workflows
    names.update(name for name in (".coveragerc", ".coveragerc.toml", "tox.toml") if (project / name).is_file())
    from donegate.seal import scripts  # (a Makefile, a noxfile, scripts/*.sh, composite actions: their test commands)

    names.update(scripts.sealed(project))
    flows = project / ".github" / "workflows"
    if flows.is_dir():
        names.update(os.path.relpath(p, project) for p in flows.iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
    if len(names) > MAX_FILES:
        raise DonegateError(f"the project's own tests hold {len(names)} files (at most {MAX_FILES} are sealed)",
                            "name the test folders with --own-tests PATH..., or switch them off: --own-tests off")
    out, size = {}, 0
    for name in sorted(names):
        p = project / name
        if p.is_symlink() or not p.is_file():
            continue
        out[name] = _read(p)
        size += p.stat().st_size
        if size > MAX_BYTES:
            raise DonegateError(f"the project's own tests hold more than {MAX_BYTES >> 20} MB",
                                "name the test folders with --own-tests PATH..., or switch them off: --own-tests off")
    return out


def pythonpath(pack: dict[str, Any]) -> list[str]:
    """The sealed configuration's `pythonpath` (pytest's ini key: folders relative to the configuration's folder, put
    first on sys.path), as sealed."""
    from donegate.core.util import parsed_ini, parsed_toml

    name = pack.get("config")
    body = (pack.get("files") or {}).get(name or "") or {}
    text = body.get("text")
    if not name or not text:
        return []
    if name.endswith(".toml"):
        data = parsed_toml(text)  # (None on Python 3.10: the key is not read, as before this was applied)
        if data is None:
            return []
        tool = data.get("tool", {}) if name not in TOMLS else {"pytest": {"ini_options": data.get("pytest")}}
        tool = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        value = (tool.get("ini_options") or {}).get("pythonpath", []) if isinstance(tool, dict) else []
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else str(value).split()
    parser = parsed_ini(text)
    if parser is None:
        return []
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    return parser.get(section, "pythonpath", fallback="").split()


def with_pythonpath(pack: dict[str, Any], launch: Any, dest: Path) -> Any:
    """`launch` with the sealed configuration's `pythonpath` folders first on sys.path, as pytest puts them: a folder
    of the sealed files (test helpers) from the laid-out suite `dest`, any other (`lib`, `src`, `.`) from the project
    as the run sees it, preceded by the laid-out suite's same folder when it holds the tests' sealed data modules
    (`pack["helpers"]`, `helper_data`; all the sealed files laid out there come first too: docs/own-suite.md). An
    entry outside the project (`..`, absolute) is left to its environment. The runs leave pytest's own handling of the key off (`hidden.runner`): the laid-out suite is not
    the project's folder, so pytest would look for `src` in it."""
    wanted = pythonpath(pack)
    if not wanted:
        return launch
    project = Path(launch.front[0])
    sealed = {Path(n).parent.as_posix() for n in pack.get("files") or {}}
    extra = []
    for entry in wanted:
        rel = os.path.normpath(entry)
        if rel.startswith("..") or os.path.isabs(rel):
            continue  # outside the project: not the project's to seal (its environment's, as before)
        inside = any(s == rel or s.startswith(rel + "/") for s in sealed) and rel != "."
        if not inside and any(rel == "." or h.startswith(rel + "/") for h in pack.get("helpers") or ()):
            extra.append(str(dest / rel))  # the tests' data modules as sealed first (`helper_data`), the rest after
        extra.append(str(dest / rel) if inside else str(project / rel))
    out = object.__new__(type(launch))  # `copy.copy`'s, without its import at a stop
    out.__dict__.update(launch.__dict__)
    out.front = [launch.front[0], *(e for e in extra if e not in launch.front), *launch.front[1:]]
    return out


def laid_files(pack: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    """(path below the folder, bytes) of each sealed file `lay_out` writes (and `hidden.own_laid` checks). A name is
    checked by its words: the folder is new and holds only what `lay_out` writes (folders and regular files, no
    link), so a name that stays below it lexically stays below it (a `resolve` a file walked every folder of the
    path: 0.08 of a stop's 0.4 CPU-s with 200 files)."""
    for name, body in pack["files"].items():
        if (rel := _below(name)) is not None:
            yield rel, body["text"].encode("utf-8") if "text" in body else binascii.a2b_base64(body["b64"])
    if pack.get("shims") and "conftest.py" not in pack["files"]:  # pytest puts a root conftest.py's folder first on
        yield "conftest.py", ROOT_CONFTEST  # sys.path as it starts: a test importing the product before gets the shim
    for key, body in (("packages", b""), ("shims", SHIM.encode("utf-8"))):  # the product's packages (`packages`)
        for folder in pack.get(key) or ():
            if isinstance(folder, str) and (rel := _below(f"{folder}/__init__.py")) is not None and f"{folder}/__init__.py" not in pack["files"]:
                yield rel, body


def _below(name: str) -> str | None:
    rel = os.path.normpath(name)
    return None if os.path.isabs(rel) or rel == ".." or rel.startswith("../") or rel == "." else rel


def lay_out(pack: dict[str, Any], dest: Path) -> list[str]:
    """The sealed files written under `dest` as they lay in the project; returns pytest's arguments for a run
    there: the sealed configuration (or the kit's empty one), `dest` as rootdir, the collected paths."""
    made: set[Path] = {dest}
    for rel, data in laid_files(pack):
        p = dest / rel
        if p.parent not in made:
            p.parent.mkdir(parents=True, exist_ok=True)
            made.add(p.parent)
        p.write_bytes(data)
    if not pack.get("config"):
        (dest / "pytest.ini").write_text(KIT_INI, encoding="utf-8")
    return args_of(pack, dest)


def args_of(pack: dict[str, Any], dest: Path) -> list[str]:
    """pytest's arguments for a run of the suite laid out in `dest` (`lay_out`)."""
    config = pack.get("config") or "pytest.ini"
    paths = [str(dest / p) for p in pack["paths"] if (dest / p).exists()]
    return ["-c", str(dest / config), "--rootdir", str(dest), *paths]


def where(files: dict[str, dict[str, str]]) -> dict[str, int]:
    """{"file::function" or "file::Class::function": line} of every test function of the sealed test files."""
    out: dict[str, int] = {}
    for name, body in files.items():
        if not name.endswith(".py") or "text" not in body or Path(name).name == "conftest.py":
            continue
        try:
            tree = ast.parse(body["text"])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{name}::{node.name}"] = node.lineno
            elif isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out[f"{name}::{node.name}::{sub.name}"] = sub.lineno
    return out


def line_of(test_id: str, lines: dict[str, int]) -> str:
    """`file:line` of a test id (its parameters dropped)."""
    base = test_id.split("[", 1)[0]
    file = base.split("::", 1)[0]
    n = lines.get(base)
    return f"{file}:{n}" if n else file


def load(store_path: Path) -> dict[str, Any] | None:
    """The packed suite of a verified store (None: it has none)."""
    from donegate.core import fsafe

    p = store_path / NAME
    if not p.exists():
        return None
    data = json.loads(fsafe.read_text(p))
    return data if isinstance(data, dict) else None


def summary(pack: dict[str, Any]) -> dict[str, Any]:
    """The manifest's short view of the packed suite (status, doctor)."""
    base = pack["baseline"]
    return {"tests": len(pack["tests"]), "passing": len(base["passing"]), "failing": len(base["failing"]),
            "skipped": len(base["skipped"]), "flaky": len(base.get("flaky") or []), "files": len(pack["files"]), "config": pack.get("config"),
            "paths": pack["paths"], "by": pack.get("by", ""), "supersedes": pack.get("supersedes", []),
            **({"doctested": sorted(pack["doctests"])[:20], "doctested_count": len(pack["doctests"])}
               if pack.get("doctests") else {}),
            **({"service": pack["service"][:3], "service_count": pack.get("service_count", len(pack["service"]))}
               if pack.get("service") else {})}


def needs_service(failing: dict[str, str]) -> list[list[str]]:
    """[[test id, why], ...] of the tests failing at the seal on a connection or a name lookup (`_SERVICE`): a
    database, a server, the network. The seal names the first in its one line."""
    return [[t, why.strip().splitlines()[0][:160]] for t, why in failing.items()
            if why.strip() and any(word in why for word in _SERVICE)]


def service_line(own: dict[str, Any] | None) -> str | None:
    """The seal's one line on the tests that need a service (None: none did), with the fix."""
    found = (own or {}).get("service") or []
    if not found:
        return None
    n = (own or {}).get("service_count") or len(found)
    return (f"warning: {n} of the project's own tests need a service or the network, which the runs' walls lack (no "
            f"network), so they fail at the seal and never block: {found[0][0]} ({found[0][1]}) (fix: give them a "
            "local stand-in (a fake, a file or in-memory database) or a skipif without the service, then seal "
            "again; or seal the others only: --own-tests PATH...)")


def describe(own: dict[str, Any] | None) -> str:
    """One line for the seal, status and doctor."""
    if not own:
        return "the project's own tests: not sealed (a store sealed before the kit kept them)"
    if own.get("off"):
        return f"the project's own tests: not sealed ({own['off']})"
    line = (f"the project's own tests: {own['passing']} of {own['tests']} pass at the seal and are kept "
            f"({', '.join(own['paths']) or 'nothing'}; {own['files']} files"
            + (f", configuration {own['config']}" if own.get("config") else "") + ")")
    if own.get("doctested"):  # (`--doctest-modules`, no `testpaths`: `seal.doctested`)
        n = own.get("doctested_count") or len(own["doctested"])
        line += (f", with the doctests of {n} of the product's modules ({', '.join(own['doctested'][:3])}"
                 + (", ..." if n > 3 else "") + ")")
    if own.get("failing") or own.get("skipped") or own.get("flaky"):
        line += (f"; {own['failing']} failing at the seal, {own['skipped']} skipped"
                 + (f" and {own['flaky']} flaky (passed once of two runs)" if own.get("flaky") else "") + " never block")
    if own.get("supersedes"):
        line += f"; superseded by the request: {', '.join(own['supersedes'][:5])}"
    return line


def seal_suite(project: Path, repo: Path, *, launch: Any, timeout: float, confine: str, allow: tuple[str, ...],
               named: list[str] | str | None, supersedes: list[str] | None = None,
               plugins: list[str] | None = None, own_pytest: str = "") -> dict[str, Any] | None:
    """Find the project's own suite, run it once in the project's environment (as the hidden tests), and return
    the pack for the store (None: `named` is "off" or nothing was found; {"off": why}: found, not kept). A suite
    that does not collect is refused in one line, with the fix. `plugins`: the environment's pytest plugins the seal
    records (`hidden.plugins`), loaded as the project's own `python -m pytest` loads them; `own_pytest`: the project
    is pytest (`hidden.plugins.own_pytest`): its own runs its suite, as it runs the hidden tests."""
    import tempfile

    from donegate.hidden import runner

    if named == "off" or named == ["off"]:
        return None
    config, found, how = find(project, None if named in (None, "auto", ["auto"]) else list(named))
    if not found:
        return None
    from donegate.seal import doctested, imported, reach

    ini = doctested.read(project, config)  # the keys that decide what its doctest options collect, read once
    doctext = doctested.texts(project, ini, how, found)  # a README's examples, which its pytest collects
    found = [*found, *doctext]
    files = gather(project, config, found)
    pack: dict[str, Any] = {"version": VERSION, "config": config, "paths": found, "by": how, "files": files}
    if any(n.startswith(".github/workflows/") for n in files):  # (a workflow's branch filters read on it)
        from donegate.seal.ci_runs import default_branches, repository

        pack["branches"], pack["repository"] = default_branches(repo), repository(repo)
    from donegate.seal import helper_data

    data = helper_data.found(project, files, helper_data.roots(pythonpath(pack)))
    if data:  # the tests' data modules outside their folders (`helper_data`): sealed, laid out first
        files.update({rel: {"text": text} for rel, text in data.items()})
        pack["helpers"] = sorted(data)
    kind, folders = packages(project, files)
    if folders:
        pack[kind] = folders
    if doctext:
        pack["doctext"] = doctext
    import copy

    # the product's modules' doctests, which its pytest collects (`--doctest-modules`, no `testpaths`): their text kept
    doctests = doctested.seal(project, ini, how, found, product)

    with tempfile.TemporaryDirectory(prefix="donegate-own-") as tmp:
        dest = Path(tmp) / "suite"
        dest.mkdir()
        layout = lay_out(pack, dest)
        launch = with_pythonpath(pack, launch, dest)
        load, folder = reach.plant(dest)  # which project files each test reaches, recorded in this one run
        mapping = copy.copy(launch)
        mapping.site = [*launch.site, folder]
        run = runner.run(dest, repo, timeout=timeout, confine=confine, project=project, python=mapping, allow=allow,
                         layout=[*layout[:4], *load, *layout[4:]], plugins=plugins or (), own_pytest=own_pytest,
                         doctests=doctests)
        again = None
        if run.results and not run.problem and run.duration < AGAIN_BELOW:  # twice where cheap: a flaky test is known
            again = runner.run(dest, repo, timeout=timeout, confine=confine, project=project, python=launch, allow=allow,
                               layout=layout, plugins=plugins or (), own_pytest=own_pytest,
                               doctests=doctests)
    fix = ("fix them, name the test folders with --own-tests PATH..., or switch them off: --own-tests off "
           "(own_tests: off in donegate.yaml)")
    if run.environment:
        raise DonegateError(f"the project's own tests cannot run: {run.environment}", fix)
    # A product module whose doctests do not collect at the seal (it does not import in the runs' walls): its doctests
    # are not kept, and the rest of the suite is sealed as it is.
    unkept = {e.get("nodeid") for e in run.errors} & set(doctests)
    run.errors = [e for e in run.errors if e.get("nodeid") not in unkept]
    doctests = {rel: m for rel, m in doctests.items() if rel not in unkept}
    if run.errors:
        from donegate.hidden.plugins import blamed

        if (plugin := blamed(run.imports, list(plugins or ()))) is not None:
            raise DonegateError(f"the project's own tests do not collect: {plugin[0]}"[:400], plugin[1])
        first = run.errors[0]
        detail = (first.get("message") or "").strip().splitlines()
        why = detail[-1] if detail else first.get("nodeid", "")
        raise DonegateError(f"the project's own tests do not collect ({len(run.errors)} error(s)): "
                            f"{first.get('nodeid') or ''}: {why}"[:400], fix)
    if run.problem and (not run.results or "timeout" in run.problem):
        # The seal's run records what each test reaches (a trace function): slower than the project's own pytest
        # (attrs 24.2.0: 1,330 tests, 29 s bare, past 120 s at the seal), and the stops run them under the same limit.
        raise DonegateError(f"the project's own tests did not run: {run.problem}"[:400], fix if "(timeout)" not in run.problem else
                            f"raise timeout: in donegate.yaml (seconds, now {timeout:g}; the stops' runs get the same), {fix}")
    if run.tamper:
        # The project's own code trips a tripwire in its own tests (tinydb's Query compares equal to anything by
        # design): the project is what it is, so the suite is not kept, and the seal of the hidden tests goes on.
        return {"off": f"not kept: they trip the run's tripwires at the seal ({run.tamper})"[:300]
                       + "; name other test folders with --own-tests PATH..., or own_tests: off to silence this"}
    if not run.collected:
        return None
    superseded = sorted(set(supersedes or ()))
    unknown = [t for t in superseded if t not in run.collected]
    if unknown:
        raise DonegateError(f"--supersedes {unknown[0]}: no such test in the project's own tests",
                            "name a test id as pytest prints it (tests/test_x.py::test_y)")
    skipped = run.skipped()
    passing = sorted(t for t in run.passing() if t not in superseded)
    failing = sorted(t for t in run.failing() if t not in skipped and t not in superseded)
    # A test that passed once and not again is flaky: it never blocks (nor would a person want it to).
    flaky = [] if again is None else [t for t in passing if (again.results.get(t) or {}).get("outcome") != "passed"]
    passing = [t for t in passing if t not in flaky]
    pack.update(tests=run.collected, baseline={"passing": passing, "failing": failing, "skipped": sorted(skipped),
                                               "flaky": flaky},
                where={**where(files), **doctested.ids(doctests)}, supersedes=superseded)
    if doctests:
        pack["doctests"] = doctests
    if doctested.wanted(ini):  # the agent's own new doctests run at the stops
        pack["doctest_modules"] = True
    shown = run.failing()
    service = needs_service({t: shown.get(t, "") for t in failing})
    if service:  # named at the seal in one line (`service_line`); like every test failing there, they never block
        pack.update(service=service[:20], service_count=len(service))
    from donegate.seal import dead, loosened

    dead.interpreter(launch.interp.version)  # (a guard on `sys.version_info` read as the project's Python runs it)
    pack["shape"], pack["shape_rules"], pack["python"] = loosened.shapes(files), loosened.RULES, launch.interp.version
    extra: dict[str, Any] = {}
    reached = reach.read(run.output, [str(project.resolve()), str(project)], extra)
    if reached is not None:
        edges = extra.pop("edges", None)  # what imports by name gave: followed by `close`, not kept
        pack["reach"] = {**reach.pack(imported.close(project, reached, edges)), "project_files": reach.project_files(project),
                         **extra}
    return pack


def supersede(pack: dict[str, Any], tests: list[str]) -> dict[str, Any]:
    """The pack with `tests` superseded (`seal --add --supersedes`): they stay sealed and never block."""
    unknown = [t for t in tests if t not in pack.get("tests", [])]
    if unknown:
        raise DonegateError(f"--supersedes {unknown[0]}: no such test in the project's own tests as sealed",
                            "name a test id as pytest prints it (tests/test_x.py::test_y); donegate status shows the suite")
    base = dict(pack["baseline"])
    base["passing"] = [t for t in base["passing"] if t not in tests]
    return {**pack, "baseline": base, "supersedes": sorted(set(pack.get("supersedes") or []) | set(tests))}
