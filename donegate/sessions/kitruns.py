"""The kit's own headless runs (writer, reviewers), told apart from the agent's sessions.

A managed Stop hook fires in every `claude -p` on the machine, the kit's own runs included, and an
environment variable cannot say "this one is the kit's": settings `env` reaches the hook, so the agent
could set it too. Instead the kit picks the run's session id itself (`claude -p --session-id ID`) and
records it under the state root (which the deny rules and the sandbox keep from the agent) *before*
the run starts; the hook allows exactly the sessions recorded there, until their deadline. The agent's
own session id is Claude Code's choice, not the agent's, and it is never in the record.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import os
import time
from pathlib import Path

FOLDER = "kit-sessions"
SLACK = 120.0  # seconds a record outlives its run's timeout (a run killed at its timeout still stops once)


def _path(root: Path, session_id: str) -> Path:
    # The id comes from the hook's stdin: hashed, it can never name a path of its own choosing.
    digest = _sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]
    return root / "state" / FOLDER / digest


def register(root: Path, timeout: float) -> str:
    """A fresh session id for one kit run, recorded as the kit's until `timeout` (+ slack) has passed."""
    import uuid  # not on the hook's path

    session_id = str(uuid.uuid4())
    path = _path(root, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{time.time() + timeout + SLACK:.0f}\n")
    return session_id


def unregister(root: Path, session_id: str) -> None:
    try:
        _path(root, session_id).unlink()
    except OSError:
        pass


def is_kit_session(root: Path, session_id: object) -> bool:
    """Whether `session_id` is one of the kit's own runs, started and not yet past its deadline."""
    if not isinstance(session_id, str) or not session_id:
        return False
    path = _path(root, session_id)
    try:
        with open(path) as fh:
            deadline = float(fh.read().strip() or 0)
    except (OSError, ValueError):
        return False
    if time.time() > deadline:
        unregister(root, session_id)
        return False
    return True
