"""The one way the kit starts a subprocess.

Argument lists only (never a shell), always a timeout, always its own process group so that a timeout
kills everything the child started (a hanging test's grandchildren too). Output goes to temporary
files rather than pipes: a grandchild that escapes the group and keeps a pipe open cannot make us wait
for an end-of-file that never comes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Mapping, Sequence


@dataclass
class Result:
    argv: list[str]
    returncode: int | None  # None when the run was killed for its timeout
    stdout: str
    stderr: str
    timed_out: bool
    duration: float


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> Result:
    """Run `argv` to completion or until `timeout` seconds pass, then kill its whole process group."""
    argv = [os.fspath(a) for a in argv]
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if input is not None:
            inp.write(input.encode())
            inp.seek(0)
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=inp,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        # Kill the group either way: a finished child may have left workers behind.
        _killpg(proc.pid)
        proc.wait()
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
