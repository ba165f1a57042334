"""The throwaway copy of the working tree the hidden run works in: nothing the run writes outlives it.

Environments in the repository (a `.venv` with `pyvenv.cfg`, `node_modules`) are not copied but
shared: the sandbox binds them read-only, an unconfined run reaches them by a link.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from donegate import proc


def shared_dirs(repo: Path) -> list[str]:
    """Top-level folders of the repository that are environments, not code: a virtualenv (it has
    `pyvenv.cfg`) or `node_modules`. They are not copied (a project's `.venv` alone can hold tens of
    thousands of files): the sandbox binds them read-only, an unconfined run reaches them by a link."""
    out: list[str] = []
    try:
        entries = list(os.scandir(repo))
    except OSError:
        return out
    for e in entries:
        if e.is_dir(follow_symlinks=False) and (e.name == "node_modules" or os.path.exists(os.path.join(e.path, "pyvenv.cfg"))):
            out.append(e.name)
    return sorted(out)


def copy_repo(repo: Path, dest: Path, skip: list[str] | None = None) -> None:
    """A throwaway copy of the working tree (without `.git`), symlinks kept as links, without any
    bytecode: Python trusts a `.pyc` whose source has the same size and mtime, and imports a lone
    `x.pyc` where no `x.py` is, so planted bytecode would run instead of the source the scan read.

    `cp -a` (a C loop) where it exists, Python's copy otherwise; see bench/hook_bench.py for the cost.
    """
    cp = proc.system_tool("cp")
    names = [n for n in os.listdir(repo) if n != ".git" and n not in (skip or ())]
    dest.mkdir()
    done = False
    if cp and names and not _small(repo):  # starting cp costs ~10 ms: more than copying a small tree
        import subprocess

        res = subprocess.run([cp, "-a", "--", *[str(repo / n) for n in names], str(dest)],
                             capture_output=True, text=True, timeout=300)
        done = res.returncode == 0
        if not done:
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir()
    if not done:
        _pycopy(repo, dest, names)
    for top, dirs, files in os.walk(dest):
        if "__pycache__" in dirs:
            dirs.remove("__pycache__")
            shutil.rmtree(os.path.join(top, "__pycache__"), ignore_errors=True)
        for f in files:
            if f.endswith((".pyc", ".pyo")):
                os.unlink(os.path.join(top, f))


def _pycopy(src: Path, dest: Path, names: list[str]) -> None:
    """Copy `names` of `src` into `dest`: files, folders, symlinks as links; a FIFO, socket or
    device is left out (opening a FIFO to copy it would wait for a writer forever)."""
    import stat

    for n in names:
        s, d = src / n, dest / n
        mode = os.lstat(s).st_mode
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(s), d)
        elif stat.S_ISDIR(mode):
            d.mkdir()
            _pycopy(s, d, os.listdir(s))
        elif stat.S_ISREG(mode):
            shutil.copy2(s, d)


def _small(repo: Path, limit: int = 200) -> bool:
    """Fewer than `limit` files (without .git): Python copies them faster than cp starts."""
    n = 0
    for top, dirs, files in os.walk(repo):
        if top == str(repo):
            dirs[:] = [d for d in dirs if d != ".git" and d not in shared_dirs(repo)]
        n += len(files) + len(dirs)
        if n >= limit:
            return False
    return True
