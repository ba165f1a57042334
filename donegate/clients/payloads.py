"""Which agent CLI sent a stop, and its payload in Claude Code's words (verified on each pinned release).

What each client sends its Stop-shaped hook:

| client | event | its own fields | the last message |
|---|---|---|---|
| Claude Code | `Stop` | `session_id`, `transcript_path`, `stop_hook_active` | `last_assistant_message` |
| Codex 0.169.0 | `Stop` | Claude Code's, plus `turn_id`, `model` | `last_assistant_message` |
| Gemini CLI 0.61.0 | `AfterAgent` | Claude Code's, plus `prompt`, `prompt_response` | `prompt_response`: the whole turn so far |
| Copilot CLI 1.0.102, its own hooks | `agentStop` | `sessionId`, `transcriptPath`, `stopReason` | none: read from its `events.jsonl` |
| Copilot CLI 1.0.102, a Claude Code install | `Stop` | Claude Code's, plus `stop_reason` | none: read from its `events.jsonl` |
| Qwen Code 0.15.10 | `Stop` | Claude Code's (`stop_hook_active` always true) | `last_assistant_message` |

The client the hook's arguments name (`--client`, written by install) wins; else the payload's shape
says it; Qwen Code's payload is Claude Code's, so its environment (`QWEN_PROJECT_DIR`, set by Qwen
Code for its hooks) tells it apart. `normalize` adds Claude Code's keys where a client has others,
so every stage reads one shape; nothing of the client's own is taken away.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLIENTS = ("claude", "codex", "gemini", "copilot", "qwen")
TAIL = 4 * 1024 * 1024  # bytes of a Copilot transcript read back for the last message


def client_of(payload: Any, named: str | None = None, env: dict[str, str] | None = None) -> str:
    """The agent's CLI that sent the stop (see the table above)."""
    if named in CLIENTS:
        return named  # type: ignore[return-value]
    if not isinstance(payload, dict):
        return "claude"
    if "sessionId" in payload or "stopReason" in payload or "stop_reason" in payload or "toolName" in payload:
        return "copilot"
    if payload.get("hook_event_name") in ("AfterAgent", "BeforeTool") or "prompt_response" in payload:
        return "gemini"
    if "turn_id" in payload and "model" in payload:
        return "codex"
    seen = os.environ if env is None else env
    if seen.get("COPILOT_CLI") == "1":
        return "copilot"
    if seen.get("QWEN_PROJECT_DIR"):
        return "qwen"
    return "claude"


def normalize(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with Claude Code's keys added where the client uses others (see the table above)."""
    client = client_of(payload, env={})
    if client not in ("copilot", "gemini"):
        return payload
    out = dict(payload)
    if client == "gemini":
        if not isinstance(out.get("last_assistant_message"), str) and isinstance(out.get("prompt_response"), str):
            out["last_assistant_message"] = out["prompt_response"]
        return out
    for theirs, ours in (("sessionId", "session_id"), ("transcriptPath", "transcript_path")):
        if ours not in out and isinstance(out.get(theirs), str):
            out[ours] = out[theirs]
    found = said_before_hook(out.get("transcript_path"), _stop_ms(out.get("timestamp")))
    if found is None:
        found = copilot_last_message(out.get("transcript_path"), at=True)
    if found is None:
        found = _written_late(out.get("transcript_path"))
    if found is not None:
        said, out["said_at"] = found  # where in the transcript: the stop's identity for its several hooks (gate.once)
        if not isinstance(out.get("last_assistant_message"), str):
            out["last_assistant_message"] = said
    return out


def copilot_last_message(transcript: Any, at: bool = False) -> Any:
    """The text of the last `assistant.message` with words in Copilot's `events.jsonl` (with `at`: and the byte
    offset of its line), or None. Only a regular file is read (a FIFO planted there is refused, never waited
    on), and only its last few MB."""
    if not isinstance(transcript, str) or not transcript:
        return None
    try:
        raw, start = _tail(transcript, os.stat(transcript).st_size)
    except OSError:
        return None
    for row, line_end in _rows_back(raw):
        text = _message(row)
        if text is not None:
            return (text, start + line_end) if at else text
    return None


def _tail(transcript: str, size: int) -> tuple[bytes, int]:
    """The transcript's last `TAIL` bytes (of `size`), and where they start (OSError: not there, not a regular file)."""
    from donegate.core import fsafe

    start = max(0, size - TAIL)
    raw, _ = fsafe.read_from(transcript, start, TAIL)
    return raw, start


def _rows_back(raw: bytes) -> Any:
    """The lines of `raw`, last first, each with the offset of its end."""
    end = len(raw)
    while end > 0:
        begin = raw.rfind(b"\n", 0, end - 1) + 1
        yield raw[begin:end], end
        end = begin


def _message(row: bytes) -> str | None:
    """The words of an `assistant.message` line, or None (another event, a message with none, a torn line)."""
    if b'"assistant.message"' not in row:
        return None
    try:
        entry = json.loads(row)
    except ValueError:
        return None
    data = entry.get("data") if isinstance(entry, dict) and entry.get("type") == "assistant.message" else None
    text = data.get("content") if isinstance(data, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def _stop_ms(stamp: Any) -> int | None:
    """The payload's `timestamp` in milliseconds: Copilot's own hook sends them, a Claude Code install under it an ISO
    time (`2026-12-05T22:33:04.591Z`) of the same instant."""
    if isinstance(stamp, int) and not isinstance(stamp, bool):
        return stamp
    if isinstance(stamp, str) and "T" in stamp:
        from datetime import datetime

        try:
            return round(datetime.fromisoformat(stamp).timestamp() * 1000)
        except ValueError:
            return None
    return None


def said_before_hook(transcript: Any, stamp: int | None, wait: float = 1.0) -> Any:
    """Copilot's last message with words before the `hook.start` event of this very stop (its input's `timestamp`
    is the payload's), with the offset of its line, or None. Copilot writes its events in a batch as it starts the
    hook: read at once, the file may not be there yet at the first stop, or end with the last turn's message at the
    next (the claim of the stop before, taken for this one's: seen on every run of Copilot 1.0.102 here). So the
    stop's own `hook.start` is waited for, never past `wait` seconds; None when it does not come (the caller reads
    the last message, as for a Copilot that writes no hook events)."""
    import time

    if not isinstance(transcript, str) or not transcript or stamp is None:
        return None
    deadline = time.monotonic() + wait
    while True:
        found = _before_hook(transcript, stamp)
        if found is not None or time.monotonic() >= deadline:
            return found or None
        time.sleep(0.01)


def _before_hook(transcript: str, stamp: int) -> Any:
    """`said_before_hook`'s one read: (text, offset) of the message, "" when the stop's hook event is there with no
    message with words before it, None when the event is not there (yet)."""
    import stat

    try:
        st = os.stat(transcript)
        if not stat.S_ISREG(st.st_mode):
            return ""  # a FIFO or a folder: never read, never waited on
        raw, start = _tail(transcript, st.st_size)
    except OSError:
        return None  # not there yet: Copilot makes it with its first batch
    hooked = False
    for row, line_end in _rows_back(raw):
        if hooked:
            text = _message(row)
            if text is not None:
                return text, start + line_end
        elif b'"hook.start"' in row:
            try:
                entry = json.loads(row)
                given = entry["data"]["input"]["timestamp"]
            except (ValueError, TypeError, KeyError):
                continue
            hooked = entry.get("type") == "hook.start" and isinstance(given, int) and abs(given - stamp) <= 1
    return "" if hooked else None


def _written_late(transcript: Any, wait: float = 1.0) -> Any:
    """Copilot writes its events.jsonl on its own schedule: on a loaded machine the hook has run before the turn's
    message was in it (the claim then went unread: seen once in two full test runs at load 14). Wait a little while
    the file grows, never past `wait` seconds, and only when no message was found at all. A path that is no regular
    file (missing, a FIFO) gets no wait: Copilot makes its events.jsonl at the session's start, so there is nothing
    to wait for (a stop's payload naming a file that is not there waited the whole second)."""
    import stat
    import time

    if not isinstance(transcript, str) or not transcript:
        return None
    try:
        if not stat.S_ISREG(os.stat(transcript).st_mode):
            return None
    except OSError:
        return None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.05)
        found = copilot_last_message(transcript, at=True)
        if found is not None:
            return found
    return None


def tool_call(payload: dict[str, Any]) -> dict[str, Any]:
    """Copilot CLI's preToolUse payload (`sessionId`, `toolName`, `toolArgs`: an object, or its JSON) in Claude
    Code's words; any other payload as it is."""
    if "toolName" not in payload:
        return payload
    args = payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {"command": args}
    return {**payload, "session_id": payload.get("sessionId"), "tool_name": payload.get("toolName"),
            "tool_input": args if isinstance(args, dict) else {}}
