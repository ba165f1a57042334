"""One session, one counter: which block counter (and cache entry) a stop belongs to.

Claude Code's `session_id` when the hook input has one. A payload with an empty or missing
`session_id` (reported against Claude Code and its plugins) must never be counted under a shared
name such as "unknown": every such session would share one block counter and one no-progress streak.

- no `session_id`, a `transcript_path`: the transcript's file name without `.jsonl` when it has the
  shape of a Claude Code session id (it is named after the session), else the whole path;
- neither: the nearest ancestor process that is not a shell (the Claude Code process that runs the
  hooks: the same one at every stop of the session, never another session's), named by its pid, its
  start time and the boot id, so a reused pid never meets an old counter. The breaker bounds it as any
  session: the counter lives as long as that process. Without /proc (not Linux), `ps` answers the
  same questions; when nothing can say which process it is, the counter is the repository's own
  (`no-session@<repo key>`, of the hook's `cwd`): shared only by unidentifiable sessions of that one repository, and still
  bounded, which a fresh counter per stop would not be (it would block forever).

`resolve` returns (session, why): `why` is "" for a real session id, else the ledger's `session_from`.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from donegate.core import proc

_SESSION_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Processes between Claude Code and the hook that change at every stop.
_WRAPPERS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env", "timeout", "nice", "nohup",
                       "stdbuf", "time", "setsid"))
_MAX_DEPTH = 12


def resolve(payload: dict) -> tuple[str, str]:
    sid = payload.get("session_id")
    if isinstance(sid, (str, int)) and not isinstance(sid, bool) and str(sid).strip():
        return str(sid), ""
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript.strip():
        stem = Path(transcript).name.removesuffix(".jsonl")
        return (stem, "transcript_path") if _SESSION_ID.fullmatch(stem) else (transcript, "transcript_path")
    parent = _ancestor()
    if parent:
        return f"no-session@{parent}", "parent_process"
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        cwd = os.getcwd()
    from donegate import paths

    return f"no-session@{paths.repo_key(Path(cwd))}", "repository"


def _proc(pid: int) -> tuple[str, int, str] | None:
    """(command name, parent pid, start time) of a process, from /proc or else from `ps`."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        return comm, int(fields[1]), fields[19]
    except (OSError, ValueError, IndexError):
        pass
    try:
        res = subprocess.run([proc.system_tool("ps") or "/bin/ps", "-o", "ppid=", "-o", "lstart=", "-o", "comm=", "-p", str(pid)],
                             capture_output=True, text=True, timeout=5)
        parts = res.stdout.split()
        if res.returncode != 0 or len(parts) < 7:
            return None
        return os.path.basename(" ".join(parts[6:])), int(parts[0]), "-".join(parts[1:6])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="utf-8") as fh:
            return fh.read().strip()[:8]
    except OSError:
        return "boot"


def _ancestor() -> str | None:
    """pid:start:boot of the nearest ancestor that is not a shell or wrapper; None when unknown."""
    pid = os.getppid()
    for _ in range(_MAX_DEPTH):
        if pid <= 1:
            return None
        info = _proc(pid)
        if info is None:
            return None
        comm, ppid, start = info
        if comm not in _WRAPPERS:
            return f"pid{pid}:{start}:{_boot_id()}"
        pid = ppid
    return None
