"""The feedback stage: what the agent is told. All failures of the stop together, each test's name and
assertion, store paths scrubbed, never a line of test source (`donegate.feedback`); on a pass, what the
user is told."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import feedback, paths
from donegate.outcome import ALLOW, BLOCK, Outcome


def passed(gates: dict[str, Any], accept: dict[str, Any], hint: str, leak_msg: str) -> Outcome:
    unconfined = "" if accept.get("confinement") != "none" else \
        " (unconfined: no sandbox ran the tests, see `donegate doctor`)" + (f"; {accept['note']}" if accept.get("note") else "")
    unchecked = len((accept.get("second") or {}).get("unsupported") or {})
    if unchecked:  # the second harness could not run them: passed once, not twice (the ledger says why)
        unconfined += f" ({unchecked} not double-checked: the second run cannot serve what they use)"
    return Outcome("pass", ALLOW, gates=gates,
                   system_message=leak_msg or f"donegate: {accept['total']} acceptance tests pass{unconfined}"
                   + (f"; the scan found: {hint}" if hint else ""))


def blocked(payload: dict[str, Any], cfg: dict[str, Any], gates: dict[str, Any], problems: list[str],
            failures: dict[str, str], hint: str, leak_msg: str, scrub: feedback.Scrubber) -> Outcome:
    accept = gates["acceptance"]
    text = feedback.block_text(problems, failures, claimed=feedback.claims_done(payload.get("last_assistant_message")),
                               total=accept["total"], scrub=scrub, cap=cfg["feedback_chars"],
                               note=f"donegate (a hint, not a failure): {hint}" if hint else "")
    failing = sorted(failures) + [p.split(":")[0] for p in problems]
    if accept.get("tamper"):
        failing.append("tamper")
    return Outcome("block", BLOCK, reason=text, gates=gates, failing=failing, system_message=leak_msg)


def hide_kit(text: str, root: Path) -> str:
    """An error the agent reads must not say where the kit (and so the hidden tests) lives."""
    for p in sorted({str(r) for r in (root, *paths.protected_roots(home=root))}, key=len, reverse=True):
        text = text.replace(p, "<donegate>")
    return text
