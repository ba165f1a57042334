"""What the Stop hook reads: Claude Code's JSON on stdin, and the environment it was started in."""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.clients.payloads import CLIENTS, client_of, normalize
from donegate.sessions import ids as sessions
from donegate.errors import DonegateError


def parse_payload(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DonegateError(f"the hook's stdin is not JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(payload, dict):
        raise DonegateError("the hook's stdin is not a JSON object")
    return normalize(payload)  # Claude Code's keys where the client (Copilot, Gemini) uses others


# Variables of the hook's environment that weaken the gate without stopping it from running.
WEAKENING = ("CLAUDE_CODE_SHELL_PREFIX", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
             "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT")


def weakened_env(cfg: dict[str, Any], seen: list[str]) -> list[str]:
    """What of the session's environment could have switched the gate off (the hook got through this
    time; a person should know): the names the launcher saw, and a block cap at or below max_blocks."""
    out = [k for k in seen if k in WEAKENING or k.startswith("DONEGATE_") and k != "DONEGATE_HOME"]
    out += [k for k in ("CLAUDE_CODE_SHELL_PREFIX",) if os.environ.get(k) and k not in out]
    cap = os.environ.get("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
    try:
        if cap and 0 < int(cap) <= cfg["max_blocks"]:
            out.append(f"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP={int(cap)}")
    except ValueError:
        pass
    return sorted(out)


def session_of(payload: dict[str, Any]) -> str:
    """The session a stop belongs to (`donegate.sessions.ids`)."""
    return sessions.resolve(payload)[0]


__all__ = ["CLIENTS", "client_of", "parse_payload", "session_of", "weakened_env"]  # the client's: donegate.clients.payloads
