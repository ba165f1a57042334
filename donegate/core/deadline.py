"""One deadline for the whole stop, shorter than Claude Code's hook timeout.

Claude Code kills a hook that outlives its `timeout` and lets the agent stop: a hang anywhere (a read
of a FIFO, a lock an agent holds with `flock`, a git call, the hidden run) would open the gate. So
the stop runs against one clock:

- the stages that wait take their time from it (the hidden run's timeout, the ledger lock's wait);
- a watchdog thread answers for the stop when the clock runs out: it calls `on_expire` (which writes
  the block and its ledger line without waiting on any lock) and ends the process with `os._exit`,
  whatever the main thread is stuck in. `claim()` decides who answers: the main thread claims once its
  answer is ready, and then the watchdog stands down.

The budget: the hook timeout install writes is `floor(timeout + review_timeout + hook_margin) + 1`
seconds (`config.hook_timeout`); the stop's deadline lies `RESERVE` seconds before it, which is
the interpreter's start-up before the clock starts plus the watchdog's own answer.
"""

from __future__ import annotations

import os
import threading
import time
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Callable

RESERVE = 3.0  # seconds kept between the stop's deadline and the hook timeout
LOCK_WAIT = 10.0  # seconds a stop waits at most for a lock (ledger, counters) held by someone else


class Busy(OSError):
    """A lock was not had within the time the caller could wait."""


def flock(fd: int, wait: float | None, worth_waiting: Callable[[], bool] | None = None) -> None:
    """An exclusive `flock` on `fd`, waiting at most `wait` seconds (None: as long as it takes), else Busy;
    with `worth_waiting`, asked each time the lock is found held, Busy as soon as it says no and one more
    try finds the lock still held (the holder may have let it go between the try and the question: a
    put-back lets its lock go, then takes its mark away)."""
    import fcntl

    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    end = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = end - time.monotonic()
            if worth_waiting is not None and not worth_waiting():
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except BlockingIOError:
                    raise Busy(f"the lock stayed held by another process for {wait:.1f} s") from None
            if left <= 0:
                raise Busy(f"the lock stayed held by another process for {wait:.1f} s") from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.1)


class Deadline:
    def __init__(self, seconds: float, start: float | None = None) -> None:
        self.start = time.monotonic() if start is None else start
        self.end = self.start + seconds
        self._cond = threading.Condition()
        self._claimed = False
        self._thread: threading.Thread | None = None

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def budget(self) -> float:
        return self.end - self.start

    def set_budget(self, seconds: float) -> None:
        """Move the deadline to `seconds` after the start (the config is known only after it is read)."""
        with self._cond:
            self.end = self.start + seconds
            self._cond.notify_all()

    def claim(self) -> bool:
        """Take the right to answer for this stop; False when the other side already has it."""
        with self._cond:
            if self._claimed:
                return False
            self._claimed = True
            self._cond.notify_all()
            return True

    def arm(self, on_expire: Callable[[], int]) -> None:
        """Start the watchdog: at the deadline, unless the answer was claimed, `os._exit(on_expire())`."""

        def watch() -> None:
            with self._cond:
                while not self._claimed and time.monotonic() < self.end:
                    self._cond.wait(max(0.0, self.end - time.monotonic()))
                if self._claimed:
                    return
                self._claimed = True
            code = 2
            try:
                code = on_expire()
            finally:
                os._exit(code if code in (0, 2) else 2)

        self._thread = threading.Thread(target=watch, name="donegate-deadline", daemon=True)
        self._thread.start()

    def wait_forever(self) -> None:
        """The main thread lost the claim: the watchdog is answering and will end the process."""
        while True:
            time.sleep(3600)
