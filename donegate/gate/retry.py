"""`mode: retry`, the experiment's blind control (issue 25): the stop runs no test, no reviewer, reads
no store; it is blocked with one fixed message, and the breaker lets it through after `max_blocks`
blocks, the same cap the gate has. It asks the question a sceptic asks of the gate: does the specific
failure buy anything over "keep working"? Its lines go to the ledger like any other stop's: verdict
`block` with `gates.retry`, then `gave_up` with `gates.breaker.retry_done` (nothing was verified).

Imported only when the mode is set, so the gate's stops do not load it.
"""

from __future__ import annotations

from donegate.core.outcome import BLOCK, Outcome

MESSAGE = ("donegate: keep working, verify your work. Check it against the request, run what tests you have, "
           "and fix what is missing or wrong before you stop.")


def outcome() -> Outcome:
    return Outcome("block", BLOCK, reason=MESSAGE, gates={"retry": {"tests_run": 0}}, failing=["retry"])
