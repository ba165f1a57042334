"""A module not found in the hidden run: the environment's problem, or the feature the request asks for?

The seal refuses the first in one line (the module, the interpreter that ran, the fix), so the
baseline's new requirements fail on the feature, never on a missing dependency; at a stop the same
line joins the block's reasons (the agent may install what its change imports). The plugin reports
each `ModuleNotFoundError` with the file whose import asked for it (`runner.TestRun.imports`).
"""

from __future__ import annotations

import os
from pathlib import Path

from donegate import paths
from donegate.hidden.python import KIT, Interpreter, Launch


def _provided(top: str, front: list[str]) -> bool:
    return any(os.path.isdir(os.path.join(f, top)) or os.path.isfile(os.path.join(f, top + ".py")) for f in front)


def _somewhere(project: Path, top: str) -> str:
    """A folder of the project (two levels down at most) holding the package `top`, or ""."""
    for pattern in (f"*/{top}/__init__.py", f"*/*/{top}/__init__.py", f"*/{top}.py"):
        for hit in sorted(project.glob(pattern)):
            if not any(part.startswith(".") or part in ("node_modules", "site-packages") for part in hit.parts[len(project.parts):]):
                return os.path.relpath(hit.parent.parent if hit.name == "__init__.py" else hit.parent, project)
    return ""


def declared(project: Path, top: str) -> bool:
    """Whether the project declares `top` as a dependency (pyproject.toml, setup.cfg, setup.py,
    requirements*.txt), by name: `yaml` for PyYAML is not seen, and then the test's import counts as
    a missing feature."""
    import re

    names = {top.lower(), top.lower().replace("_", "-")}
    texts = []
    for name in ("pyproject.toml", "setup.cfg", "setup.py", *sorted(p.name for p in project.glob("requirements*.txt"))):
        try:
            texts.append((project / name).read_text(encoding="utf-8", errors="replace")[:200_000].lower())
        except OSError:
            pass
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    return any(pattern.search(t) for t in texts)


def missing_module(imports: list[dict[str, str]], launch: Launch, project: Path, store: Path) -> "tuple[str, str] | None":
    """(message, fix) when a module not found is the environment's doing, not a missing feature:
    - the project's own package cannot be found (it lies in a folder that is not on sys.path);
    - the project's code (or a dependency's) imports a module that is not installed;
    - a hidden test imports a module the project declares as a dependency and that is not installed.
    A test importing a module of the project that does not exist yet (`pkg.newmod`, or a new
    top-level module nobody declares) is a missing feature: a new requirement."""
    interp = launch.interp
    ran = f"with the project's interpreter {interp.describe()}"
    store_s = str(store.resolve()) + os.sep
    for entry in imports:
        module, where = entry["module"], entry["file"]
        if not module:
            continue  # another collection error's innermost file (`seal.blamed`)
        top = module.split(".")[0]
        if _provided(top, launch.front):
            continue  # the project's own package is there: a submodule of it that does not exist yet is the feature
        by_test = where.startswith(store_s) or not where
        shown = "a hidden test" if by_test else os.path.relpath(where, project) if paths.is_within(Path(where), project) else where
        folder = _somewhere(project, top)
        if folder:
            return (f"the project's own package {top} cannot be imported {ran}: it lies in {folder}/, which is not on sys.path "
                    f"(imported by {shown})", f"add pythonpath: [{folder}] to donegate.yaml, or "
                    + _install_fix(interp, project, "pip install -e .").replace("install it", "install the project", 1))
        if by_test and not declared(project, top):
            continue  # a new module the request asks for
        return (f"{module} is not installed {ran} (imported by {shown}): a missing dependency, not a new requirement",
                _install_fix(interp, project, f"pip install {top}"))
    return None


def _install_fix(interp: Interpreter, project: Path, what: str) -> str:
    if interp.source == KIT:
        return (f"give the project its own environment, which the kit then uses: python -m venv {project}/.venv, then "
                f"{project}/.venv/bin/pip install -e {project} (or {what}); or name one with --python / python: in donegate.yaml")
    return (f"install it into that environment ({interp.shown} -m pip install -e {project}, or {what}), "
            "or name another interpreter with --python / python: in donegate.yaml")
