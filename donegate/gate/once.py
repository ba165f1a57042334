"""One verdict per stop, however many donegate hooks reach the session.

A project install, a local one, `--scope user`, the managed drop-in and the plugin can all put a
donegate Stop hook in front of one session; Claude Code runs them all, in parallel, at every stop.
Judged twice, one stop was counted twice by the breaker, an `APPEAL:` accepted by one hook was refused
by the other, and one hook's hand-over was overridden by the other's block.

So the hooks of one stop agree: each takes the session's lock under the state root (`state/stops/`);
the first judges, holds the lock until its answer is written beside it, and every other hook of the
same stop reads that answer and gives it back as its own (exit code, stdout, stderr), without judging,
counting or writing a ledger line. The hooks of one stop are the ones Claude Code started together:
the same session, prompt, transcript size and last message, and a process started before the judging
hook had answered (the next stop of a session starts only after this one's answer, even when the
agent says the same words again). A process answers one stop: an answer this very process wrote (its pid
and start time) is a stop it already judged, so a later call in the same process (`run_hook` called again
by a program or a test, where the process started before every answer) is the session's next stop.
Without /proc (not Linux) no start time is known: each hook judges.

Hooks with different state roots share nothing (each keeps its own counters and ledger). Anything
that goes wrong here (no lock within the stop's time, an unreadable answer) leaves the hook to judge
on its own, as before.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import json
import os
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import paths
from donegate.core import deadline
from donegate.sessions import ids as sessions

FOLDER = "stops"


def _now() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def started() -> float | None:
    """When this process was started, on the boot clock, rounded up to the next clock tick (/proc gives
    whole ticks: rounding up never makes a later stop look started in time); None without /proc."""
    try:
        with open("/proc/self/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        hz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return (ticks + 1) / hz


def identity(payload: dict[str, Any]) -> str:
    """What the hooks of one stop share, and the next stop of the session does not."""
    transcript = payload.get("transcript_path")
    size = -1
    if isinstance(payload.get("said_at"), int):  # Copilot CLI: where its last message ends, not hook events after it
        size = payload["said_at"]
    elif isinstance(transcript, str) and transcript:
        try:
            size = os.stat(transcript).st_size
        except OSError:
            pass
    parts = [sessions.resolve(payload)[0], str(transcript), str(size), str(payload.get("prompt_id")),
             str(payload.get("stop_hook_active")), str(payload.get("last_assistant_message"))]
    return _sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()


class Claim:
    """The stop's lock: `take` gives the answer another hook of this stop already gave, or holds the lock
    for this hook to judge; `keep` writes this hook's answer for the others and lets them in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fd: int | None = None
        self.key = ""
        self.path: Path | None = None
        self.exact = False

    def take(self, payload: dict[str, Any], wait: float) -> tuple[int, str, str] | None:
        try:
            # Copilot CLI runs the hooks of one stop one after another; its key names the stop exactly (`said_at`)
            self.exact = isinstance(payload.get("said_at"), int)
            self.key = identity(payload)
            folder = paths.state_dir(self.root) / FOLDER
            folder.mkdir(parents=True, exist_ok=True)
            name = _sha256(sessions.resolve(payload)[0].encode("utf-8", "replace")).hexdigest()[:24]
            self.path = folder / f"{name}.json"
            fd = os.open(str(folder / f"{name}.lock"), os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o600)
        except OSError:
            return None
        try:
            deadline.flock(fd, max(0.0, wait))
        except OSError:  # Busy: no answer within the stop's time; judge it here
            os.close(fd)
            return None
        self.fd = fd
        answer = self._read()
        if answer is not None:
            self.release()
        return answer

    def _read(self) -> tuple[int, str, str] | None:
        from donegate.core import fsafe

        try:
            data = json.loads(fsafe.read_text(self.path, limit=1 << 20)) if self.path else None
        except (OSError, ValueError):
            return None
        born = started()
        if not isinstance(data, dict) or data.get("stop") != self.key or born is None:
            return None
        if not isinstance(data.get("done"), (int, float)) or born > data["done"] and not self.exact:
            return None  # started after that answer: the session's next stop (unless the key names the stop exactly)
        if data.get("pid") == os.getpid() and data.get("born") == born:
            return None  # this process's own answer: each hook of a stop is a process of its own
        code, out, err = data.get("answer") or (None, None, None)
        if code not in (0, 2) or not isinstance(out, str) or not isinstance(err, str):
            return None
        return code, out, err

    def keep(self, answer: tuple[int, str, str]) -> tuple[int, str, str]:
        """Leave `answer` for the other hooks of this stop; returns it."""
        if self.fd is not None and self.path is not None:
            from donegate.core.util import atomic_write

            try:
                atomic_write(self.path, json.dumps({"stop": self.key, "done": _now(), "pid": os.getpid(), "born": started(),
                                                  "answer": list(answer)}), durable=False)
            except OSError:
                pass
        self.release()
        return answer

    def release(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
