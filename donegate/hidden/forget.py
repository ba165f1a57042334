"""What the runs keep of a repository under the state root, removed (`unseal`, `uninstall`): each harness's mirror
of the working tree (`copy.Mirror`) with its record, marks and lock, the product's kept bytecode and the own suite
laid out for the seal (`hidden.own_laid`). A mirror a
running stop holds is left and named, never removed under it; a bytecode job still writing (`pyc.hold`) is waited
for, a little, then its folder is removed (a job that starts later finds the mirror gone and writes nothing).

A repository's worktrees share its copies: a stop in any working tree of a sealed project keys them by the sealed
project (`gate.context`), so forgetting the project forgets them all. The last look at each working tree's files
(`statcache`, keyed by the tree) goes with the tree it is of."""

from __future__ import annotations

import os
from pathlib import Path

from donegate.hidden.copy import _rmtree  # the mirror's own removal (read-only folders made writable first)

SLOTS = ("", "second", "own", "own-now", "own-mixed")  # each run's mirror: the hidden run's, the second's, the own suite's
_PARTS = ("", ".clean", ".json", ".putback", ".lock")  # a mirror, its put-back folder, its record and marks, its lock
JOB_WAIT = 20.0  # seconds a bytecode job is waited for (one compiles a tree in about a second; its own bound is 120)


def forget(repo: Path, root: Path, key: str | None = None, also: tuple[Path, ...] = (),
           trees: tuple[Path, ...] | None = None, every_look: bool = False) -> tuple[int, list[str]]:
    """Remove what the runs keep of `repo` under the state root (`unseal`, `uninstall`): each slot's mirror with its
    record, marks and lock, the folders `also` names (the product's bytecode, `pyc.folder`) and the kept looks at the
    working trees `trees` (default: `repo`'s own); `every_look`: also every look a stop judged against `repo`'s seal
    (`statcache.sealed_looks`: a worktree git no longer lists too). A mirror a stop's run holds (its lock taken) is
    left. Returns (how many folders were removed, what was left: `path: why` each)."""
    from donegate import paths
    from donegate.tree import statcache

    key = key or paths.repo_key(repo)
    keys = [paths.repo_key(t) for t in trees] if trees else [key]
    keys += [k for k in (statcache.sealed_looks(root, key) if every_look else ()) if k not in keys]
    looks = [statcache.kept_files(root, k) for k in keys]
    left = [why for files in looks for f in files for why in _removed(f)]  # files: not counted as folders
    from donegate.hidden import own_laid  # the own suite laid out for its seal (`hidden.own_laid`)

    also = (*also, own_laid.folder(root, key))
    removed, more = _forget(paths.state_dir(root) / "mirror", [key + (f"-{slot}" if slot else "") for slot in SLOTS], also)
    return removed, left + more


def forget_all(root: Path) -> tuple[int, list[str]]:
    """`forget` for every repository the runs kept copies of (`uninstall --scope user`: no stop of this account is
    gated by that install now; a repository still installed at its own level gets them made again at its next stop)."""
    from donegate import paths

    mirrors, kept = paths.state_dir(root) / "mirror", paths.state_dir(root) / "pyc"
    names: set[str] = set()
    if mirrors.is_dir():
        for p in mirrors.iterdir():
            if p.name.endswith(".lock"):
                names.add(p.name[:-len(".lock")])
            elif p.is_dir() and not p.name.endswith(".clean"):
                names.add(p.name)
    from donegate.hidden import own_laid

    laid = paths.state_dir(root) / own_laid.FOLDER  # the own suites laid out for their seals
    also = tuple(sorted(p for d in (kept, laid) if d.is_dir() for p in d.iterdir() if p.is_dir()))
    looks = paths.state_dir(root) / "stat"  # every working tree's last look (not counted as folders)
    left = [why for f in (sorted(looks.glob("*.json")) if looks.is_dir() else ()) for why in _removed(f)]
    removed, more = _forget(mirrors, sorted(names), also)
    return removed, left + more


def _forget(folder: Path, names: list[str], also: tuple[Path, ...]) -> tuple[int, list[str]]:
    import fcntl

    removed, left = 0, []
    for name in names:
        fd = None
        try:
            fd = os.open(folder / f"{name}.lock", os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except FileNotFoundError:
            pass
        except OSError:  # held: a run works in it (or the lock cannot be taken)
            left.append(f"{folder / name}: in use by a stop's run (remove it once no session works there)")
            os.close(fd) if fd is not None else None
            continue
        try:
            existed, why = (folder / name).exists(), [w for part in _PARTS for w in _removed(folder / (name + part))]
            left, removed = left + why, removed + (existed and not why)
        finally:
            if fd is not None:
                os.close(fd)
    for extra in also:
        existed, why = extra.exists(), _removed_when_free(extra)
        left, removed = left + why, removed + (existed and not why)
    return removed, left


def _removed_when_free(path: Path) -> list[str]:
    """`_removed` once no bytecode job writes in `path` (a folder: its lock had, `pyc.hold`, and kept while it goes;
    a job waiting for it then finds the folder gone and writes nothing)."""
    from donegate.core.deadline import Busy, flock

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return []
    except OSError:  # not a folder (nor a job's)
        return _removed(path)
    try:
        flock(fd, JOB_WAIT)
    except Busy:
        os.close(fd)
        return [f"{path}: a bytecode job still writes in it after {JOB_WAIT:.0f} s (remove it once it is done)"]
    try:
        return _removed(path)
    finally:
        os.close(fd)


def _removed(path: Path) -> list[str]:
    if not (path.exists() or path.is_symlink()):
        return []
    try:
        _rmtree(path)
    except OSError as exc:
        return [f"{path}: {exc.strerror or exc}"]
    return []
