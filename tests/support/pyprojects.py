"""Real Python projects for the hidden run: virtual environments, editable installs, wheels, offline.

Nothing comes from an index: pip runs with `--no-index` and no configuration file, and what it
installs are wheels built here: the kit's own `wheel` and `packaging` (setuptools needs them to build
an editable install) zipped from the kit's environment, and the projects' dependencies written as
files. Making a venv costs seconds, so one template venv (setuptools, wheel; no pip) is made per
session and copied (`cp -a`, links kept) into each project.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

SETUPTOOLS = ('[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
              '[project]\nname = "{name}"\nversion = "0.1"\ndependencies = {deps}\n')


def _offline() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def pip(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`pip ARGS --no-index` into the environment of `python` (this interpreter's pip, `--python`: the venvs hold no
    pip) with no configuration (so no index, no find-links of the machine)."""
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "-q", *args, "--no-index"],
                         capture_output=True, text=True, timeout=300, env=_offline(), cwd=cwd)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def installed_wheel(dist: str, out: Path) -> Path:
    """A wheel of a distribution installed in the kit's environment (pure Python: its files, zipped)."""
    d = importlib.metadata.distribution(dist)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{d.metadata['Name'].replace('-', '_')}-{d.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for f in d.files or []:
            if f.suffix == ".pyc" or f.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json") or str(f).startswith(".."):
                continue
            z.write(str(d.locate_file(f)), str(f))
        info = next(str(f.parent) for f in d.files or [] if f.name == "METADATA")
        z.writestr(f"{info}/RECORD", "")
    return path


def build_wheel(out: Path, name: str, files: dict[str, str], version: str = "1.0") -> Path:
    """A wheel of `name` holding `files` (path: text), written by hand: a dependency for a project."""
    out.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    path = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for rel, text in files.items():
            z.writestr(rel, text)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: donegate-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


def template_venv(folder: Path) -> Path:
    """A venv with setuptools (ensurepip's, as `python -m venv` installs it) and wheel (from the kit's own), to be
    copied into projects; no pip in it: this interpreter's installs into it (`pip`). Installing pip into the venv
    (ensurepip) was half of the template's CPU, and a third of each copy's files."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=300)
    wheels = folder / "wheels"
    for dist in ("packaging", "wheel"):
        installed_wheel(dist, wheels)
    import ensurepip

    (bundled,) = Path(ensurepip.__file__).parent.glob("_bundled/setuptools-*.whl")
    shutil.copy(bundled, wheels)
    pip(venv / "bin" / "python", "install", "--find-links", str(wheels), "setuptools", "wheel")
    return venv


def clone_venv(template: Path, dest: Path) -> Path:
    """A copy of the template venv at `dest` (its python a link to the same base interpreter)."""
    subprocess.run(["cp", "-a", str(template), str(dest)], check=True, timeout=120)
    return dest


def site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python3*/site-packages"))


def editable(venv: Path, project: Path, *extra: str) -> None:
    """`pip install -e PROJECT` into `venv`, as its developer would (offline, no build isolation)."""
    pip(venv / "bin" / "python", "install", "--no-build-isolation", *extra, "-e", str(project))


def kit_pth(venv: Path) -> None:
    """Make the kit importable from `venv` (as `pip install donegate` into it would): a path `.pth`."""
    import pytest
    import yaml

    lines = [str(Path(__file__).resolve().parents[2]), str(Path(pytest.__file__).parent.parent),
             str(Path(yaml.__file__).parent.parent)]
    (site_packages(venv) / "donegate-kit.pth").write_text("\n".join(dict.fromkeys(lines)) + "\n")


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest
