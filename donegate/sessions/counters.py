"""Per-session counters for the breaker, behind one small storage interface.

The kit counts blocks itself: Claude Code's `stop_hook_active` is a flag, not a count, and has been
reported wrong. `FileCounters` is what the hook uses (one JSON file per session under
`$DONEGATE_HOME/state/`, read-modify-write under an exclusive lock, replaced atomically so a crash never
leaves half a file); `MemoryCounters` serves tests and in-process callers. Both are tested through
one parametrised fixture.
"""

from __future__ import annotations

import contextlib
from donegate.core.fsafe import sha256 as _sha256
import json
import os
import threading
from pathlib import Path

from donegate.core.deadline import flock
from donegate.core.util import atomic_write
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator


def fresh(session_id: str) -> dict[str, Any]:
    return {"session": session_id, "stops": 0, "blocks": 0, "same_streak": 0, "last_failing": None, "hinted": []}


class MemoryCounters:
    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transact(self, session_id: str, wait: float | None = None) -> Iterator[dict[str, Any]]:
        with self._lock:
            current = json.loads(json.dumps(self._data.get(session_id) or fresh(session_id)))
            yield current
            self._data[session_id] = current

    def peek(self, session_id: str) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self._data.get(session_id) or fresh(session_id)))


class FileCounters:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, session_id: str) -> Path:
        # A session id comes from stdin: hash it so it can never name a path of its own choosing.
        digest = _sha256(session_id.encode("utf-8", "replace")).hexdigest()[:24]
        return self.directory / f"session-{digest}.json"

    def peek(self, session_id: str) -> dict[str, Any]:
        """The session's counters as last written, without the lock (the file is replaced whole, so a
        reader never sees half of it): for readers that change nothing, which an agent's `flock` on the
        lock file must not stall."""
        from donegate.core import fsafe

        try:
            current = json.loads(fsafe.read_text(self._path(session_id), limit=1 << 20))
        except (OSError, ValueError):
            return fresh(session_id)
        return {**fresh(session_id), **current} if isinstance(current, dict) else fresh(session_id)

    @contextlib.contextmanager
    def transact(self, session_id: str, wait: float | None = None) -> Iterator[dict[str, Any]]:
        """`wait`: seconds to wait for the lock at most (None: as long as it takes), else deadline.Busy."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(session_id)
        lock_fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)
        try:
            flock(lock_fd, wait)
            from donegate.core import fsafe

            try:
                current = json.loads(fsafe.read_text(path, limit=1 << 20))
                if not isinstance(current, dict):
                    raise ValueError("not an object")
                current = {**fresh(session_id), **current}
            except FileNotFoundError:
                current = fresh(session_id)
            except (ValueError, OSError):
                # A corrupt counter (or a FIFO, a symlink, a huge file put in its place, never read)
                # must not trap the session, nor let its stop through: start counting again.
                current = fresh(session_id)
                current["corrupt"] = True
            yield current
            # not synced: a counter lost in a crash reads as corrupt and counting starts again (bounded)
            atomic_write(path, json.dumps(current), durable=False)
        finally:
            os.close(lock_fd)
