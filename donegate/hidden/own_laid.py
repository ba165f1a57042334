"""The own suite's sealed files laid out once per seal, at a path that stays the same from stop to stop (issue 44
item 5: cost follows the change).

A confined stop's sealed own run reads the suite from a folder bound read-only into its walls. It was laid out afresh
at every stop (200 test files: ~0.04 CPU-s of the hook's, and their removal after the answer); now the first stop
of a seal lays it out under the state root (`state/own-suite/KEY/DIGEST`, DIGEST the store's own-suite.json's, which
the stop's store check verified), beside a record of the names in each of its folders (`.laid`), and the next stops
use it when every folder holds exactly those names and every file the bytes own-suite.json holds for it (~3 ms of
CPU for 200 files). Anything else (a file edited, added, removed, replaced by a link, the record unreadable) is laid
out again: what runs is what the verified store holds, as when it was laid out in the stop's temporary folder (which
the user could write as well). A stable path is also what one session of the first run and the own tests would need
(its walls and the launcher's recipe the same from stop to stop: docs/own-suite.md).

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
    if _intact(dest, pack):
        return dest, own.args_of(pack, dest)
    from donegate.core.util import make_temp_dir

    try:
        base.mkdir(parents=True, exist_ok=True)
        new = Path(make_temp_dir(".new-", str(base)))
    except OSError:
        return None
    try:
        own.lay_out(pack, new)
        _record(new)
        if _intact(dest, pack):  # another stop of the seal switched its own in meanwhile: that one (its run may use it)
            _gone(new)
            return dest, own.args_of(pack, dest)
        if dest.exists() or dest.is_symlink():  # (not intact: set aside, then removed)
            os.replace(dest, Path(make_temp_dir(".old-", str(base))) / "x")
        os.replace(new, dest)
    except OSError:  # another stop of the seal switched its own in first: that one, if intact
        _gone(new)
        return (dest, own.args_of(pack, dest)) if _intact(dest, pack) else None
    import time

    for other in base.iterdir():  # the layouts of earlier seals, what was set aside, a killed stop's unfinished one
        if other.name != dest.name and not (other.name.startswith(".new-") and _recent(other, time.time())):
            _gone(other)
    return dest, own.args_of(pack, dest)


def _recent(path: Path, now: float) -> bool:
    """Made in the last ten minutes (another stop may be laying it out now)."""
    try:
        return now - os.lstat(path).st_mtime < 600
    except OSError:
        return False


def _record(dest: Path) -> None:
    """The names in each folder of `dest`, written beside them (what `_intact` compares); the files made read-only."""
    import marshal

    dirs: dict[str, list[str]] = {}
    for top, subdirs, names in os.walk(dest):
        dirs[os.path.relpath(top, dest)] = sorted([*subdirs, *names])
        for name in names:
            os.chmod(os.path.join(top, name), 0o444)
    dirs["."] = sorted([*dirs["."], RECORD])
    with open(dest / RECORD, "wb") as fh:
        fh.write(marshal.dumps(dirs))


def _intact(dest: Path, pack: dict[str, Any]) -> bool:
    """`dest` holds exactly what `lay_out` writes of `pack` (the store's own-suite.json, verified at this stop): the
    names its record says in every folder (a folder, not a link), and every sealed file regular and of the sealed
    bytes (200 files: ~3 ms of CPU, where laying them out took ~40)."""
    import binascii
    import marshal
    import stat

    try:
        with open(dest / RECORD, "rb") as fh:
            dirs = marshal.loads(fh.read())
        for rel, names in dirs.items():
            if not stat.S_ISDIR(os.lstat(dest / rel).st_mode) or sorted(os.listdir(dest / rel)) != names:
                return False
        from donegate.seal import own

        for rel, want in own.laid_files(pack):
            fd = os.open(dest / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fd).st_mode) or fh.read() != want:
                    return False
        if not pack.get("config"):  # the kit's empty configuration, laid out beside them
            fd = os.open(dest / "pytest.ini", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                if fh.read() != own.KIT_INI.encode("utf-8"):
                    return False
    except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        return False
    return True


def _gone(path: Path) -> None:
    from donegate.hidden.copy import _rmtree

    try:
        _rmtree(path)
    except OSError:
        pass
