"""Who made a seal, as its record says (`by`, written by `donegate.person.ownership.who`): whether it is a
person's. The Stop hook's store check blocks a seal that is not (`donegate.gate.integrity`); `status` shows
it (`donegate.person.overview`); the ledger marks a kit command run inside a session. Plain functions of the
record: nothing of the person's commands comes into a stop."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Mapping


def inside_session(by: Mapping[str, Any]) -> bool:
    """Whether a `who` answer shows a Claude Code session around the command."""
    return bool(by.get("claude_env") or by.get("claude_process"))


def not_the_persons(by: dict[str, Any] | None, first: float | None) -> str:
    """Why the current seal is not a person's (empty when it is, or when nobody recorded who sealed)."""
    if by is None or by.get("confirmed"):
        return ""
    if inside_session(by):
        # The kit refuses a seal from inside a session (`donegate.person.ownership`); one that got through anyway
        # (a first seal, or the check dodged) holds the agent's own tests: a person must look.
        where = f" (session {by['session']})" if by.get("session") else ""
        return f"the acceptance tests were sealed again from inside a Claude Code session{where}, not by a person"
    at = by.get("at")
    if first is not None and not by.get("terminal") and isinstance(at, (int, float)) and at > first:
        # No sign of a session on the seal, but it came after this session's first stop and not from a
        # terminal: the way an agent seals after hiding from `donegate.person.ownership` (variables unset, detached).
        return "the acceptance tests were sealed again during this session, after its first stop, and not from a terminal"
    return ""
