"""The run folders killed stops left behind, swept after a later stop's answer.

A stop's runs work in temporary folders (`donegate-run-*`: `runner.walls`, `early._spawn`; `donegate-own-*`: the
own suite's, `gate.own_suite`) that the hook removes once its answer is out (`copy.remove_later`). A hook killed
before that (the client's timeout, a person's Ctrl-C, a killed test run) leaves its folder for good: 466 piled up
in a day on one machine. So the child that does the put-backs after the answer (`copy.after_answer`) ends with
`sweep`: one scandir of the temporary folder(s) the stop's own runs used, and the folders there that match the
names, are the kit user's own (owner uid), are real folders (lstat: a link is never followed, nor removed) and
were not touched for `STALE` seconds are removed, at most `MOST` of them per stop. The stop pays nothing for it.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterable

NAMES = ("donegate-run-", "donegate-own-")
# A run's folder lives as long as its stop: the hook's deadline (the Stop hook timeout install writes, `timeout` +
# `review_timeout` + `hook_margin`: 450 s at the defaults) and the after-answer put-back (seconds). Its own mtime
# moves when the run lays its top entries out (start) and they go. A day is ~200 times the default's worst, and
# holds another project's stop with a timeout of hours; a folder untouched for a day has no hook left to remove it.
STALE = 86400.0
MOST = 100  # folders removed per stop: a pile (466 in a day) goes in a few stops, each child's work bounded


def once_gone(parent: int, folders: Iterable[str], remove: Callable[[Path], None]) -> None:
    """The folders of runs still letting go of them at the answer, removed once the hook (`parent`) has exited, and
    their threads with it: a first run ended unrun at a cached stop is given a moment only
    (`acceptance.Running.abandon`), and one that let go after the after-answer fork named its folder to no one. A hook
    that does not exit within 10 s (an in-process caller) keeps them: its runs name them as they end."""
    folders = list(folders)
    end = time.monotonic() + 10
    while folders and os.getppid() == parent and time.monotonic() < end:
        time.sleep(0.01)
    if os.getppid() != parent:
        for folder in folders:
            remove(Path(folder))


def sweep(bases: Iterable[str], remove: Callable[[Path], None]) -> int:
    """Remove the stale run folders of the kit's user in each of `bases` (see the module) by `remove` (`copy`'s, which
    removes the read-only folders a run made too); how many went."""
    uid, now, removed = os.geteuid(), time.time(), 0
    for base in sorted(set(bases)):
        try:
            with os.scandir(base) as entries:
                old = [e.path for e in entries if e.name.startswith(NAMES) and _stale(e, uid, now)]
        except OSError:
            continue
        for path in old[:MOST - removed]:
            try:
                remove(Path(path))
            except OSError:
                pass
            removed += 1
    return removed


def _stale(entry: os.DirEntry[str], uid: int, now: float) -> bool:
    try:
        st = entry.stat(follow_symlinks=False)  # the entry itself (lstat), never a link's target
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and now - st.st_mtime > STALE
