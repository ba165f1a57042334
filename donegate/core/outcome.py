"""What one stop decided, and how it reaches Claude Code: exit 0 (allow) or 2 (block), stdout, stderr."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

ALLOW, BLOCK = 0, 2


class Outcome:
    """What one stop decided. (A plain class: dataclasses would add ~8 ms to every stop's start-up.)"""

    def __init__(self, verdict: str, exit_code: int, reason: str = "", gates: dict[str, Any] | None = None,
                 failing: list[str] | None = None, system_message: str = "", repo: str = "", hint: str = "") -> None:
        self.verdict = verdict  # pass | block | hint | gave_up | unsealed | error | review_error | appealed
        self.exit_code = exit_code
        self.reason = reason  # text for the agent (blocks) or the user (system message)
        self.gates = gates if gates is not None else {}
        self.failing = failing if failing is not None else []  # what the no-progress rule compares
        self.system_message = system_message
        self.repo = repo
        self.hint = hint  # a reviewers' hint: the state of the code it was given for (given once per state)
        self.quiet = False  # a managed hook's stop outside every sealed repository: counted, not recorded


# A block with nothing to say still says something: Codex (0.169.0) lets the agent stop when a hook
# exits 2 with empty stderr, or answers `decision: block` without a reason.
EMPTY_REASON = "donegate: the stop is blocked (no reason was given: a kit error; a person must look at the kit's log)"


def render(outcome: Outcome) -> tuple[int, str, str]:
    if outcome.exit_code == BLOCK:
        # Exit 2 with stderr, and the same reason as JSON on stdout: Claude Code drops some
        # stderr-only blocks (stderr matching "no such file"), never a block with stdout; Codex reads
        # the stderr of an exit 2 (its JSON only on exit 0), and fails open when stderr is empty.
        if not outcome.reason.strip():
            outcome.reason = EMPTY_REASON
        body: dict[str, Any] = {"decision": "block", "reason": outcome.reason}
        if outcome.system_message:
            body["systemMessage"] = outcome.system_message
        return BLOCK, json.dumps(body), outcome.reason + "\n"
    body = {"systemMessage": outcome.system_message} if outcome.system_message else {}
    return ALLOW, json.dumps(body) if body else "", ""
