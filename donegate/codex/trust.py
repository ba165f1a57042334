"""Codex's hook trust: a handler runs only when the user config holds its `trusted_hash`.

Codex 0.169.0 skips an untrusted or edited hook silently (no warning, the turn ends as if there were
no hook). Trust is `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash = "sha256:..."` in
the user's config.toml, where `<file>` is the absolute path of the file that declares the hook. The
hash is sha256 over the handler's identity as compact JSON with sorted keys (openai/codex
`hooks/src/engine/discovery.rs` `command_hook_hash`; a hash worked out here made 0.169.0 run the hook,
tests/e2e/test_codex_e2e.py): any change to the command, timeout or matcher is a new hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Codex's names of the events in trust keys and in `hook_run_id`.
LABELS = {"Stop": "stop", "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use",
          "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "SubagentStop": "subagent_stop"}
DEFAULT_TIMEOUT = 600  # seconds Codex gives a hook without `timeout`


def identity(event: str, handler: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    """What Codex hashes of one command handler (fields it would not set are left out)."""
    h: dict[str, Any] = {"type": "command", "command": handler["command"],
                         "timeout": max(1, int(handler.get("timeout", DEFAULT_TIMEOUT))),
                         "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        h["statusMessage"] = handler["statusMessage"]
    out: dict[str, Any] = {"event_name": LABELS[event], "hooks": [h]}
    if matcher is not None:
        out["matcher"] = matcher
    return out


def trusted_hash(event: str, handler: dict[str, Any], matcher: str | None = None) -> str:
    text = json.dumps(identity(event, handler, matcher), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def key(file: str, event: str, group: int, handler: int = 0) -> str:
    """The trust key of a handler: the declaring file's absolute path, the event, its group and place."""
    return f"{file}:{LABELS[event]}:{group}:{handler}"
