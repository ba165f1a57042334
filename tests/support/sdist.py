"""Real libraries, set up offline as their developers set them up: an sdist from tests/data unpacked into a git
repository, an in-repo `.venv` (no pip) whose site-packages hold the dependencies, and a `.pth` line for the
project's `src/` (what `pip install -e .` leaves)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def extract(sdist: Path, member_prefix: str, into: Path) -> None:
    """The files of `sdist` under `member_prefix` (after its top folder) written into `into`."""
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            name = m.name.split("/", 1)[1] if "/" in m.name else ""
            if m.isfile() and name.startswith(member_prefix):
                target = into / name[len(member_prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(m).read())  # type: ignore[union-attr]


def venv(repo: Path) -> Path:
    """An in-repo `.venv` without pip: its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    return site


def editable(repo: Path, sdist: Path) -> Path:
    """`sdist` unpacked as the repository `repo` (not yet committed), with an in-repo `.venv` holding a `.pth` line
    for its `src/`: its site-packages folder."""
    extract(sdist, "", repo)
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
    site = venv(repo)
    (site / f"{repo.name}.pth").write_text(str(repo / "src") + "\n")
    return site


def wheels(site: Path, *names: str) -> None:
    """The vendored wheels `names` (tests/data/libs/NAME-*.whl) unpacked into `site`, as pip installs a pure-Python
    wheel: its packages and its `.dist-info` (a pytest plugin's entry point with it)."""
    import zipfile

    for name in names:
        (wheel,) = (DATA / "libs").glob(f"{name}-*.whl")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
