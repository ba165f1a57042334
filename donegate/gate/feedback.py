"""The feedback stage: what the agent is told. All failures of the stop together, each test's name and
assertion, store paths scrubbed, never a line of test source (`donegate.core.scrub`); on a pass, what the
user is told."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.core import scrub as feedback
from donegate import paths
from donegate.core.outcome import ALLOW, BLOCK, Outcome


def passed(gates: dict[str, Any], accept: dict[str, Any], hint: str, leak_msg: str) -> Outcome:
    unconfined = "" if accept.get("confinement") != "none" else \
        " (unconfined: no sandbox ran the tests, see `donegate doctor`)" + (f"; {accept['note']}" if accept.get("note") else "")
    second = accept.get("second") or {}
    counts = second.get("not_checked") or {}
    unchecked = int(counts.get("tests") or len(second.get("unsupported") or {}))
    if unchecked:  # the second harness could not run them: passed once, not twice (the ledger names them and says why)
        given = int(counts.get("given") or 0)
        whys = ([f"{given} hypothesis @given whose draw the second run cannot repeat"] if given else []) \
            + ([f"{unchecked - given} use what the second run cannot serve"] if unchecked > given else [])
        unconfined += f" ({unchecked} not double-checked: {'; '.join(whys)}; the ledger names them)"
    return Outcome("pass", ALLOW, gates=gates,
                   system_message=leak_msg or f"donegate: {accept['total']} acceptance tests pass{unconfined}"
                   + (f"; the scan found: {hint}" if hint else ""))


def blocked(payload: dict[str, Any], cfg: dict[str, Any], gates: dict[str, Any], problems: list[str],
            failures: dict[str, str], hint: str, leak_msg: str, scrub: feedback.Scrubber,
            held: dict[str, str] | None = None) -> Outcome:
    """`held`: the held-back tests (`donegate.seal.held`): their failures are told by requirement and count only,
    and their ids are taken out of the run's problems; the stop's seed is never told."""
    from donegate.seal import held as held_back

    accept = gates["acceptance"]
    held = held or {}
    shown, counts = held_back.split(failures, held)
    told = [held_back.unnamed(p, held) for p in problems] if held else problems
    text = feedback.block_text(told, shown, claimed=feedback.claims_done(payload.get("last_assistant_message")),
                               total=accept["total"], scrub=scrub, cap=cfg["feedback_chars"],
                               note=f"donegate (a hint, not a failure): {hint}" if hint else "", held=counts)
    if accept.get("seed"):
        text = text.replace(accept["seed"], "<hidden>")
    failing = sorted(failures) + [p.split(":")[0] for p in problems]
    if accept.get("tamper"):
        failing.append("tamper")
    return Outcome("block", BLOCK, reason=text, gates=gates, failing=failing, system_message=leak_msg)


def hide_kit(text: str, root: Path) -> str:
    """An error the agent reads must not say where the kit (and so the hidden tests) lives."""
    for p in sorted({str(r) for r in (root, *paths.protected_roots(home=root))}, key=len, reverse=True):
        text = text.replace(p, "<donegate>")
    return text


# -- a person's rejection, told to the next stop in that repository ------------------------------------
#
# `donegate reject` leaves one file per rejection in state/rejected/<repo-key>/; the next stop in that
# repository that would pass (or blocks anyway) takes each by renaming it (so two stops never both tell
# it, and a rejection written meanwhile is not lost) and tells the agent. A stop that is allowed for a
# person anyway (an appeal, a hand-over, an error) leaves them for the next one.


def rejections_dir(root: Path, repo: str, key: str | None = None) -> Path:
    return paths.state_dir(root) / "rejected" / (key or paths.repo_key(Path(repo)))


def add_rejection(root: Path, repo: str, entry: dict[str, Any]) -> Path:
    import json

    from donegate.core.util import atomic_write

    path = rejections_dir(root, repo) / f"{entry['ref']}.json"
    atomic_write(path, json.dumps(entry))
    return path


def withdraw_rejection(root: Path, repo: str, ref: str) -> None:
    """A person approved a stop they had rejected: the rejection not yet told is not told."""
    try:
        (rejections_dir(root, repo) / f"{ref}.json").unlink()
    except OSError:
        pass


def tell_rejections(outcome: Outcome, root: Path, key: str | None = None) -> Outcome:
    """`key`: `paths.repo_key` of the tree judged (`outcome.repo`) when the caller has it."""
    if not outcome.repo or not (outcome.exit_code == BLOCK or outcome.verdict in ("pass", "review_error")):
        return outcome
    folder = rejections_dir(root, outcome.repo, key)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return outcome
    import json

    told = []
    for name in names:
        taken = folder / f".{name}.taken-{os.getpid()}"
        try:
            os.rename(folder / name, taken)
            entry = json.loads(taken.read_text(encoding="utf-8"))
            taken.unlink()
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict):
            told.append(entry)
    if not told:
        return outcome
    notes = "; ".join(f"stop {e.get('ref')}" + (f": {e['note']}" if e.get("note") else "") for e in told)
    text = hide_kit(f"donegate: a person rejected the work of an earlier session in this repository ({notes}). "
                    "Take that into account before you stop again.", root)
    outcome.gates["rejected"] = [e.get("ref") for e in told]
    if outcome.exit_code == BLOCK:
        outcome.reason = f"{text}\n\n{outcome.reason}"
        return outcome
    outcome.verdict, outcome.exit_code, outcome.reason = "block", BLOCK, text
    outcome.failing = ["rejected"]
    return outcome
