"""The pytest plugins of the project's environment (pytest-mock's `mocker`, hypothesis's plugin...), as the
project's own `python -m pytest` loads them (issue 46).

The hidden run turns plugin autoload off: a plugin runs inside pytest's hooks, where the verdict is made, and the
environment is the agent's to write. So the seal records the plugins the environment declares (`pytest11` entry
points, read as data from each distribution's `entry_points.txt`) with a hash of each plugin's module, and every
stop loads, by name (`-p MODULE`), those whose module is still the one sealed. A plugin whose module changed since
the seal is not loaded (its fixtures are then missing: the tests that use them fail). The project's own plugin (its
`pytest11` entry point, installed editable: typeguard's `typeguard._pytest_plugin`, anyio's, a pytest plugin's own
checkout) is loaded alike by the own suite's runs (not the hidden tests': `hidden_ones`), while its module's bytes
are the sealed ones: its developers' pytest loads it before any test, and typeguard's tests that monkeypatch it (`monkeypatch.setattr("typeguard._pytest_plugin.global_config", ...)`)
with pytester beside them patched a module pytester had dropped from `sys.modules` (24 of its tests failed only in
the kit). A plugin the agent adds (an entry point the seal did not record) or changes is never loaded: its hooks would
run where the verdict is made. Tests that use a plugin's fixtures are not double-checked by the second run (it
serves none).

A project that is pytest itself (`own_pytest`) is told apart at the seal too: its own pytest then runs the tests.
"""

from __future__ import annotations

import configparser
import hashlib
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.hidden.python import Launch


def _site_folders(launch: Launch) -> list[str]:
    """The environment's own package folders (its `.pth` path lines, the project's `src/` among them, are not)."""
    return [s for s in launch.site if os.path.basename(s.rstrip("/")) in ("site-packages", "dist-packages")]


def _module_file(module: str, folders: list[str]) -> str:
    rel = module.replace(".", "/")
    for folder in folders:
        for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
            path = os.path.join(folder, candidate)
            if os.path.isfile(path):
                return path
    return ""


def _digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def _own_file(module: str, launch: Launch, repo: str) -> str:
    """The file of `module` the run imports first, when it lies in the repository `repo` (the project's own plugin,
    installed editable), else ""."""
    if not repo:
        return ""
    path = _module_file(module, [*launch.front, *launch.site])
    root = os.path.join(os.path.realpath(repo), "")
    return path if path and os.path.realpath(path).startswith(root) else ""


def found(launch: Launch, repo: str = "") -> list[dict[str, Any]]:
    """The environment's pytest plugins: [{name, module, dist, sha256}], in a stable order. Modules that lie in the
    environment's own package folders, and those of the repository `repo` (the project's own plugin, `own: True`);
    never the kit's environment."""
    from donegate.hidden.python import KIT

    if launch.interp.source == KIT:
        return []
    folders = _site_folders(launch)
    out: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for info in sorted(Path(folder).glob("*.dist-info/entry_points.txt")):
            parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
            parser.optionxform = str  # type: ignore[assignment,method-assign]
            try:
                parser.read_string(info.read_text(encoding="utf-8", errors="replace"))
            except (configparser.Error, OSError):
                continue
            if not parser.has_section("pytest11"):
                continue
            for name, value in parser.items("pytest11"):
                module = value.split(":")[0].strip()
                path = _module_file(module, folders) if module else ""
                own = _own_file(module, launch, repo) if module and not path else ""
                if not (path or own) or name in out:
                    continue
                out[name] = {"name": name, "module": module, "dist": info.parent.name, "sha256": _digest(path or own),
                             **({"own": True} if own else {})}
    return [out[k] for k in sorted(out)]


def hidden_ones(recorded: Any, modules: list[str]) -> list[str]:
    """Of `modules`, those the hidden tests' runs load: not the project's own plugin. Its module is sealed, but what it
    imports at pytest's start is the agent's code, run before the tripwires' fingerprints; the own suite's sealed
    conftest files already run such code there (and it has no second run, by decision), the hidden run does not."""
    own = {p.get("module") for p in recorded if isinstance(p, dict) and p.get("own")} if isinstance(recorded, list) else set()
    return [m for m in modules if m not in own]


def loadable(recorded: Any, launch: Launch) -> tuple[list[str], list[str]]:
    """(modules to load, plugins not loaded because their module changed or went since the seal)."""
    ok, changed = [], []
    folders = _site_folders(launch)
    for p in recorded if isinstance(recorded, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("module"), str):
            continue
        # The run imports it from the first folder of its sys.path that holds it: a copy the project put before the
        # environment's (its root, `src/`, a path line) would be loaded instead of the one hashed.
        first = _module_file(p["module"], [*launch.front, *launch.site])
        path = first if p.get("own") else _module_file(p["module"], folders)  # the project's own: that first file
        if path and first == path and _digest(path) == p.get("sha256"):
            ok.append(p["module"])
        else:
            changed.append(str(p.get("name") or p["module"]))
    return ok, changed



def own_pytest(launch: Launch, repo: str) -> str:
    """The folder of the repository that holds the project's own pytest (`pytest` and `_pytest`: the project is
    pytest, installed editable from its checkout) among the folders its tests import from, else "". Asked at the
    seal only, of the unchanged project: a change that adds a copy of pytest never makes the kit load it."""
    folders = [*launch.front, *(s for s in launch.site if s not in _site_folders(launch))]
    root = os.path.join(os.path.realpath(repo), "")
    for folder in folders:
        real = os.path.realpath(folder)
        if (real == root.rstrip(os.sep) or real.startswith(root)) and all(
                os.path.isfile(os.path.join(real, name, "__init__.py")) for name in ("pytest", "_pytest")):
            return os.path.relpath(real, root) if real != root.rstrip(os.sep) else "."
    return ""


def blamed(imports: list[dict[str, str]], modules: list[str]) -> tuple[str, str] | None:
    """(message, fix) when a collection error was raised inside one of the environment's pytest plugins `modules`
    (the innermost file of its traceback, `runner.TestRun.imports` with module ""): a plugin made for another pytest
    (pytest-asyncio<0.24 under pytest 9: "'FixtureManager' object has no attribute '_arg2fixturedefs'") fails every
    test file's collection, and the tests' imports are not the cause. Named by its distribution, version and the
    name `-p no:` takes."""
    tops = {m.split(".")[0] for m in modules}
    for entry in imports:
        parts = Path(entry.get("file") or "").parts
        at = next((i for i, p in enumerate(parts[:-1]) if p in ("site-packages", "dist-packages")
                   and (parts[i + 1] in tops or parts[i + 1].removesuffix(".py") in tops)), None)
        if entry.get("module") or at is None:
            continue
        site, top = Path(*parts[:at + 1]), parts[at + 1].removesuffix(".py")
        for info in sorted(site.glob("*.dist-info/entry_points.txt")):
            parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
            parser.optionxform = str  # type: ignore[assignment,method-assign]
            try:
                parser.read_string(info.read_text(encoding="utf-8", errors="replace"))
                meta = (info.parent / "METADATA").read_text(encoding="utf-8", errors="replace")
            except (configparser.Error, OSError):
                continue
            names = [n for n, v in (parser.items("pytest11") if parser.has_section("pytest11") else [])
                     if v.split(":")[0].strip().split(".")[0] == top]
            if names:
                field = dict(line.split(": ", 1) for line in meta.splitlines()[:40] if ": " in line)
                dist, version = field.get("Name", top), field.get("Version", "?")
                return (f"the pytest plugin {dist} {version} ({names[0]}) fails while pytest collects the tests (in "
                        f"{'/'.join(parts[at + 1:])}): it is not made for the kit's pytest",
                        f"upgrade {dist} in the project's environment, or leave it out: addopts = -p no:{names[0]}")
    return None
