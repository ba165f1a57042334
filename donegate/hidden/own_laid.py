"""The own suite's sealed files laid out once per seal, at a path that stays the same from stop to stop (issue 44
item 5: cost follows the change).

A confined stop's sealed own run reads the suite from a folder bound read-only into its walls. It was laid out afresh
at every stop (200 test files: ~0.04 CPU-s of the hook's, and their removal after the answer); now the first stop
of a seal lays it out under the state root (`state/own-suite/KEY/DIGEST`, DIGEST the store's own-suite.json's, which
the stop's store check verified), beside a record of what it wrote (`.laid`: each file's size, mtime and inode, each
folder's names), and the next stops use it as it is when what is there is exactly that record. Anything else (a
file edited, added, removed or replaced, the record unreadable) is laid out again, as the first stop did: a folder
that is not what the seal holds is never what runs. A stable path is also what one session of the first run and the
own tests would need (its walls and the launcher's recipe the same from stop to stop: docs/own-suite.md).

The state root lies outside the walls (`confine.hidden_roots`); unconfined, the runs keep laying out per stop.
`unseal` and `uninstall` remove the folder with the runs' mirrors (`hidden.forget`)."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "own-suite"  # under the state root's `state/`
RECORD = ".laid"


def folder(root: Path, key: str) -> Path:
    """Every laid-out suite of the repository keyed `key` (`paths.repo_key`)."""
    from donegate import paths

    return paths.state_dir(root) / FOLDER / key


def laid(pack: dict[str, Any], root: Path, key: str, digest: str) -> tuple[Path, list[str]] | None:
    """(the folder, pytest's arguments for a run there: `seal.own.lay_out`'s) of the sealed suite `pack` of the seal
    whose own-suite.json has `digest`: kept from an earlier stop when intact, else laid out now. None when it cannot
    be (the caller lays it out in the stop's own folder, as before)."""
    from donegate.seal import own

    base = folder(root, key)
    dest = base / digest[:24]
    if _intact(dest):
        return dest, own.args_of(pack, dest)
    import tempfile

    try:
        base.mkdir(parents=True, exist_ok=True)
        new = Path(tempfile.mkdtemp(prefix=".new-", dir=base))
    except OSError:
        return None
    try:
        own.lay_out(pack, new)
        _record(new)
        if dest.exists() or dest.is_symlink():  # (not intact: set aside, then removed)
            os.replace(dest, Path(tempfile.mkdtemp(prefix=".old-", dir=base)) / "x")
        os.replace(new, dest)
    except OSError:  # another stop of the seal switched its own in first: that one, if intact
        _gone(new)
        return (dest, own.args_of(pack, dest)) if _intact(dest) else None
    for other in base.iterdir():  # the layouts of earlier seals, and what was set aside
        if other.name != dest.name and not other.name.startswith(".new-"):
            _gone(other)
    return dest, own.args_of(pack, dest)


def _record(dest: Path) -> None:
    """What `dest` holds, written beside it: each folder's names, each file's (size, mtime_ns, inode); the files made
    read-only."""
    import marshal

    dirs: dict[str, list[str]] = {}
    files: dict[str, tuple[int, int, int]] = {}
    for top, subdirs, names in os.walk(dest):
        rel = os.path.relpath(top, dest)
        dirs[rel] = sorted([*subdirs, *names])
        for name in names:
            path = os.path.join(top, name)
            os.chmod(path, 0o444)
            st = os.lstat(path)
            files[os.path.normpath(os.path.join(rel, name))] = (st.st_size, st.st_mtime_ns, st.st_ino)
    dirs["."] = sorted([*dirs["."], RECORD])
    with open(dest / RECORD, "wb") as fh:
        fh.write(marshal.dumps({"dirs": dirs, "files": files}))


def _intact(dest: Path) -> bool:
    """`dest` holds exactly what its record says: the same names in every folder, every file regular and as written."""
    import marshal
    import stat

    try:
        with open(dest / RECORD, "rb") as fh:
            record = marshal.loads(fh.read())
        dirs, files = record["dirs"], record["files"]
        for rel, names in dirs.items():
            if sorted(os.listdir(dest / rel)) != names:
                return False
        for rel, (size, mtime, ino) in files.items():
            st = os.lstat(dest / rel)
            if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime, ino):
                return False
    except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError):
        return False
    return True


def _gone(path: Path) -> None:
    from donegate.hidden.copy import _rmtree

    try:
        _rmtree(path)
    except OSError:
        pass
