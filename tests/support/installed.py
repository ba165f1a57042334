"""An installed wheel's tree, faked: the package's parent in site-packages, the launchers under share/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repos import KIT

SITE = Path("lib") / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
SHARED = Path("share") / "donegate" / "hooks"


def fake_install(prefix: Path, site: Path = SITE, launchers: tuple[str, ...] = ("stop_gate.py", "guard.py")) -> Path:
    """An installed wheel's tree under `prefix`; returns the package's parent (site-packages)."""
    kit = prefix / site
    (kit / "donegate").mkdir(parents=True)
    (prefix / SHARED).mkdir(parents=True)
    for name in launchers:
        shutil.copy(KIT / "hooks" / name, prefix / SHARED / name)
    return kit


def copy_tree(dest: Path) -> Path:
    """The working tree as git sees it (tracked and untracked files, not the ignored node_modules or .venv)."""
    listed = subprocess.run(["git", "-C", str(KIT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = KIT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def run(argv, *, env, cwd, input=None, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout)


def build_wheel(folder: Path) -> Path:
    """The wheel built from the working tree (a copy of it in `folder`/src), in `folder`/dist."""
    src = copy_tree(folder / "src")
    dist = folder / "dist"
    # Paths are absolute: pip reads a bare `src` as a project name on the index.
    # HOME of its own: made once per run (before any test's own HOME is set), pip's cache goes there.
    (folder / "home").mkdir()
    res = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(src)],
              env={**os.environ, "HOME": str(folder / "home")}, cwd=folder, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    [wheel] = dist.glob("donegate-*.whl")
    return wheel


def wheel_venv(tmp_path: Path, wheel: Path) -> tuple[Path, Path, Path]:
    """`wheel` (the `kit_wheel` fixture: built from the working tree once per test run) installed into a
    fresh venv under tmp_path (outside the checkout); pytest and PyYAML come from this interpreter by a
    .pth file, without a download. Returns (venv, its python, its site-packages)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    res = run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--quiet", str(wheel)],
              env=os.environ, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    # pytest and PyYAML from this interpreter, without a download: their folders on the venv's path.
    site = Path(run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    env=os.environ, cwd=tmp_path).stdout.strip())
    deps = {str(Path(m.__file__).resolve().parent.parent) for m in (pytest, __import__("yaml"), __import__("pluggy"))}
    (site / "_donegate_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    return venv, py, site
