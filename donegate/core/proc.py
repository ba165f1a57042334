"""The one way the kit starts a subprocess.

Argument lists only (never a shell), always a timeout, always its own process group so that a timeout
kills everything the child started (a hanging test's grandchildren too). Output goes to temporary
files rather than pipes: a grandchild that escapes the group and keeps a pipe open cannot make us wait
for an end-of-file that never comes.

Streaming (`on_line`) follows the same rule: a reader thread tails the stdout file with `pread`
(which never moves the offset the child writes at) and hands over each complete line as it lands.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from donegate.core.util import temp_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import IO, Any, Callable, Mapping, Sequence


# Where the kit looks for the programs it runs itself (bwrap, cp, ps, git). Never the session's PATH:
# settings `env` sets it, so a `bwrap` first on it would be handed the hidden run (and the nonce of its
# result stream). These folders are root's to write.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def system_tool(name: str) -> str | None:
    """The absolute path of `name` in the system's folders, or None."""
    for d in SYSTEM_PATH.split(":"):
        path = os.path.join(d, name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


class Result:
    """One finished run. (A plain class: dataclasses would add ~8 ms to every stop's start-up.)"""

    def __init__(self, argv: list[str], returncode: int | None, stdout: str, stderr: str, timed_out: bool,
                 duration: float) -> None:
        self.argv = argv
        self.returncode = returncode  # None when the run was killed for its timeout
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.duration = duration


_LIVE: set[int] = set()  # process groups of runs not yet finished (the stop's watchdog kills them)


def kill_all() -> None:
    """Kill the process group of every run still going (before the process ends without waiting)."""
    for pid in list(_LIVE):
        _killpg(pid)


def cancel(pid: int) -> None:
    """End the run `started` gave `pid`, and its group, if it is still going."""
    if pid in _LIVE:  # reaped runs leave the set: a pid the system gave again is never hit
        _killpg(pid)


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Tail:
    """Follow a growing file by descriptor and call `on_line` for each complete line."""

    POLL = 0.05

    def __init__(self, fd: int, on_line: Callable[[str], None]) -> None:
        self.fd = fd
        self.on_line = on_line
        self.pos = 0
        self.buf = b""
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="proc-tail", daemon=True)
        self.thread.start()

    def _emit(self, line: bytes) -> None:
        if self.error is None:
            try:
                self.on_line(line.decode("utf-8", "replace").rstrip("\r"))
            except BaseException as exc:  # re-raised by finish() in the caller's thread
                self.error = exc

    def _drain(self) -> None:
        while True:
            chunk = os.pread(self.fd, 65536, self.pos)
            if not chunk:
                return
            self.pos += len(chunk)
            self.buf += chunk
            *lines, self.buf = self.buf.split(b"\n")
            for line in lines:
                self._emit(line)

    def _loop(self) -> None:
        while not self.done.wait(self.POLL):
            self._drain()
        self._drain()
        if self.buf:
            self._emit(self.buf)  # a last line without a newline
            self.buf = b""

    def finish(self) -> None:
        """After the process is gone: hand over what is left, then re-raise a callback's error."""
        self.done.set()
        self.thread.join()
        if self.error is not None:
            raise self.error


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent goes (prctl PR_SET_PDEATHSIG); no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# The reaper of a `die_with_parent` run: its own session (a kill of the caller's group misses it), it
# waits on a pipe only the caller holds; a byte means the run ended normally, end-of-file that the
# caller died, and then the run's whole process group goes (PR_SET_PDEATHSIG reaches only the child:
# what the child started, e.g. Claude Code's sandbox bridge, would live on).
_REAPER = (
    "import os, signal, sys\n"
    "pgid, fd = int(sys.argv[1]), int(sys.argv[2])\n"
    "if not os.read(fd, 1):\n"
    "    try:\n"
    "        os.killpg(pgid, signal.SIGKILL)\n"
    "    except OSError:\n"
    "        pass\n"
)


def _reaper(pgid: int) -> tuple[subprocess.Popen[bytes], int] | None:
    """Start the reaper of process group `pgid`; (its process, the write end the caller keeps)."""
    import sys

    r, w = os.pipe()
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", "-c", _REAPER, str(pgid), str(r)], pass_fds=(r,),
                                start_new_session=True, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), w
    except OSError:
        os.close(w)
        return None
    finally:
        os.close(r)


def _wait(child: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until `child` ends, at most `timeout` seconds; False when it is still running. Where the system has
    pidfds (Linux 5.3), the wait wakes the moment the child ends: `Popen.wait(timeout)` polls, sleeping up to
    50 ms between looks, so a hidden run that ended after 160 ms was seen to end at 215 (a stop waits for two)."""
    try:
        fd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        import select

        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(timeout * 1000))  # readable: ended (a zombie until `wait` reaps it)
    finally:
        os.close(fd)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    on_line: Callable[[str], None] | None = None,
    die_with_parent: bool = False,
    pass_fds: Sequence[int] = (),
    started: Callable[[int], None] | None = None,
    adopted: Any = None,
) -> Result:
    """Run `argv` to completion or until `timeout` seconds pass, then kill its whole process group.

    `on_line`, if given, is called (from a reader thread) with each stdout line, newline stripped,
    as it is written; stdout is still returned whole. An exception it raises stops the calls and is
    raised here once the process is gone.
    `die_with_parent` (Linux): the child is killed when the thread that started it dies, and its whole
    process group when the caller dies, so a killed caller (kill -9 included) leaves no run behind it
    spending money.
    `pass_fds` are handed to the child and closed here once it has started (so a pipe's reader sees
    its end when the child and its own children are gone).
    `started` is called with the child's pid (its process group) once it runs: `cancel(pid)` from another
    thread ends the run early (it returns as a run killed by a signal). What it raises is raised here, once
    the child's group is killed.
    `adopted`: the process was started already from exactly this argv, environment, folder and input
    (`donegate.hidden.early.Offer`: its pid, stdout and stderr files, start time); it is followed as a run.
    """
    argv = [os.fspath(a) for a in argv]
    if adopted is not None:  # started already, from this argv (`donegate.hidden.early`): followed from here on
        with os.fdopen(adopted.out, "w+b") as out, os.fdopen(adopted.err, "w+b") as err:
            adopted.taken = True
            adopted.fds = [fd for fd in adopted.fds if fd not in (adopted.out, adopted.err)]
            return _follow(adopted, argv, out, err, adopted.t0, timeout, started, on_line, None)
    start = time.monotonic()
    with temp_file() as out, temp_file() as err, temp_file() as inp:
        if input is not None:
            inp.write(input.encode())
            inp.seek(0)
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=inp,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=_die_with_parent if die_with_parent else None,
                pass_fds=tuple(pass_fds),
            )
        finally:
            for fd in pass_fds:
                os.close(fd)
        return _follow(proc, argv, out, err, start, timeout, started, on_line,
                       _reaper(proc.pid) if die_with_parent else None)


def _follow(proc: Any, argv: list[str], out: IO[bytes], err: IO[bytes], start: float, timeout: float,
            started: Callable[[int], None] | None, on_line: Callable[[str], None] | None,
            reaper: tuple[subprocess.Popen[bytes], int] | None) -> Result:
    """`run`'s child (a Popen, or a process started early), followed until it ends or its time is up."""
    _LIVE.add(proc.pid)
    tail = None
    timed_out = False
    try:
        if started is not None:
            started(proc.pid)  # may wait (a run started before its copy is in step): the timeout counts it
        tail = _Tail(out.fileno(), on_line) if on_line is not None else None
        timed_out = not _wait(proc, max(timeout - (time.monotonic() - start), 0.0))
    finally:
        # Kill the group either way: a finished child may have left workers behind.
        _killpg(proc.pid)
        proc.wait()
        _LIVE.discard(proc.pid)
        if reaper is not None:
            os.write(reaper[1], b".")  # ended here: the reaper leaves without a kill
            os.close(reaper[1])
            reaper[0].wait()
        if tail is not None:
            tail.finish()
    out.seek(0)
    err.seek(0)
    return Result(
        argv=argv,
        returncode=None if timed_out else proc.returncode,
        stdout=out.read().decode("utf-8", "replace"),
        stderr=err.read().decode("utf-8", "replace"),
        timed_out=timed_out,
        duration=time.monotonic() - start,
    )
