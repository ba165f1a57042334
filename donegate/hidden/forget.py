"""What the runs keep of a repository under the state root, removed (`unseal`, `uninstall`): each harness's mirror
of the working tree (`copy.Mirror`) with its record, marks and lock, and the product's kept bytecode. A mirror a
running stop holds is left and named, never removed under it."""

from __future__ import annotations

import os
from pathlib import Path

from donegate.hidden.copy import _rmtree  # the mirror's own removal (read-only folders made writable first)

SLOTS = ("", "second", "own", "own-now")  # each run's mirror: the hidden run's, the second opinion's, the own suite's two
_PARTS = ("", ".clean", ".json", ".putback", ".lock")  # a mirror, its put-back folder, its record and marks, its lock


def forget(repo: Path, root: Path, key: str | None = None, also: tuple[Path, ...] = ()) -> tuple[int, list[str]]:
    """Remove what the runs keep of `repo` under the state root (`unseal`, `uninstall`): each slot's mirror with its
    record, marks and lock, and the folders `also` names (the product's bytecode, `pyc.folder`); a mirror a stop's run
    holds (its lock taken) is left. Returns (how many folders were removed, what was left: `path: why` each)."""
    import fcntl

    from donegate import paths

    key = key or paths.repo_key(repo)
    folder, removed, left = paths.state_dir(root) / "mirror", 0, []
    for name in (key + (f"-{slot}" if slot else "") for slot in SLOTS):
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
        existed, why = extra.exists(), _removed(extra)
        left, removed = left + why, removed + (existed and not why)
    return removed, left


def _removed(path: Path) -> list[str]:
    if not (path.exists() or path.is_symlink()):
        return []
    try:
        _rmtree(path)
    except OSError as exc:
        return [f"{path}: {exc.strerror or exc}"]
    return []
