"""An honest way out: the agent may appeal against a hidden test it believes is wrong.

An agent boxed in by a test it cannot read is the one that cheats; an explicit exit cuts that. The
form is one line, the **last non-blank line** of the agent's final message:

    APPEAL: <why the hidden test is wrong or contradicts the request>

(Markdown emphasis around `APPEAL:` is tolerated: `**APPEAL:** ...`.) Every block an appeal could
answer ends with `LINE`, which tells the agent so. An accepted appeal allows the stop with verdict
`appealed` (exit 0): the work is NOT verified, the user is told that the session needs a person, and
the ledger keeps the reason, the failing tests and the hash of the diff. It is never a pass.

Findings that can be wrong are appealable: a scan finding, and a tripwire honest code trips too (a
tracer or profiler, a stack walk, `gc`, the product importing pytest where the second run has none).
A project that means it lists the rule in `scan_allow`.

What an appeal cannot answer (it is refused, the stop is judged as it would be, and the feedback says
why): a changed protected file or a change outside `allowed` (the agent reached for what guards the
gate), a modified or missing store, hidden-test content in the transcript (the agent has seen the
tests it appeals against), hard evidence of tampering (a forged or disordered result stream, pytest's
machinery changed, an object equal to everything, the two runs disagreeing), a hidden run that did not
finish (timeout, early exit, an incomplete report: nothing was judged), a reviewers' block, failures the
agent has not been shown yet (an appeal names only what the last feedback named), and appeals past
`max_appeals` in the session.
"""

from __future__ import annotations

import re

from donegate.core.fsafe import sha256 as _sha256

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from pathlib import Path
    from typing import Any

LINE = ("If you are sure a hidden test is wrong or contradicts the request, do not work around it: end your "
        "message with a line `APPEAL: <why>`; the stop is then allowed unverified and a person decides.")
NO_APPEAL_LEFT = "(No appeal is left in this session: max_appeals.)"
MAX_REASON = 500  # characters of the reason kept in the ledger
MIN_REASON = 10  # an appeal must say why
_APPEAL = re.compile(r"[*_`\s]*APPEAL:[*_`\s]*(.*?)[*_`\s]*")
# The hidden run's own problem that still judged every test it collected (runner.run's wording).
_COLLECTION = "the hidden tests failed to collect"



def parse(message: object) -> str | None:
    """The reason of an appeal in the agent's final message, or None when there is none.

    Only the last non-blank line counts: an appeal is the message's conclusion, never a quote in it.
    An appeal without a reason returns "" (refused: it must say why)."""
    if not isinstance(message, str):
        return None
    lines = [line for line in message.splitlines() if line.strip()]
    if not lines:
        return None
    m = _APPEAL.fullmatch(lines[-1])
    return m.group(1).strip()[:MAX_REASON] if m else None


def _not_appealable(out: Any) -> str | None:
    """Why this block cannot be appealed at all (None: it can)."""
    gates = out.gates
    integrity = gates.get("integrity") or {}
    if integrity.get("ok") is False:
        return "the acceptance store was modified or is missing; a person must re-seal it, an appeal cannot answer that"
    if gates.get("leak"):
        return "the session transcript shows hidden test content; an appeal after seeing the tests is not accepted"
    scope = gates.get("scope") or {}
    if scope.get("ok") is False:
        return "protected files or files outside the allowed scope were changed; restore them first"
    if gates.get("review"):
        return "this block is the reviewers' finding, not a hidden test's; appeals are for hidden tests"
    accept = gates.get("acceptance")
    if not isinstance(accept, dict):
        return "no hidden test was judged at this stop"
    problem = accept.get("problem") or ""
    from donegate.hidden.channel import HARD  # the evidence no honest code gives

    tamper = accept.get("tamper") or {}
    if tamper and (tamper.get("rule") or "harness") in HARD:
        return "the code under test tampered with the test run; an appeal cannot answer that"
    if problem and not problem.startswith(_COLLECTION) and not tamper:
        return "the hidden tests did not run to the end, so there is no test verdict to appeal; make the run complete"
    finding = (gates.get("scan") or {}).get("problem") and (gates.get("scan") or {}).get("mode") == "block"
    own = gates.get("own") or {}
    if own.get("problem"):
        return "the project's own tests did not run to the end, so there is no test verdict to appeal; make the run complete"
    if own.get("failing") or own.get("mine") or own.get("weakened"):
        finding = True  # the project's own tests, as sealed or as the agent wrote them: a contract the request may change
    if not accept.get("failed") and not problem and not finding:
        return "no hidden test fails"
    return None  # failing tests, a tripwire honest code trips too, a scan finding: a person may judge them


def consider(out: Any, payload: dict[str, Any], cfg: dict[str, Any], root: Path, repo: Path, session: str,
             sealed: Path | None = None, manifest: dict[str, Any] | None = None) -> Any:
    """The stop's outcome once the agent's appeal (if any) is weighed: an `appealed` Outcome, or `out`
    with the appeal line (or the refusal) added to its feedback. `manifest`: the sealed store's, when the
    stop has it (its context); else read from the store."""
    if cfg["appeal"] != "on" or out.verdict != "block":
        return out  # a pass, a hint, a kit error: there is nothing to appeal, an APPEAL line is just text
    reason = parse(payload.get("last_assistant_message"))
    why_not = _not_appealable(out)
    if reason is None:
        if why_not is None:
            out.reason = _ending(out.reason, _offer(root, session, cfg), cfg["feedback_chars"])
        return out
    state = _counters(root, session)
    refused = why_not or _refusal(reason, out, state, cfg)
    if refused:
        out.gates["appeal"] = {"accepted": False, "reason": reason, "refused": refused}
        tail = f"donegate: your appeal was not accepted: {refused}."
        if why_not is None:
            tail += " " + (LINE if _left(state, cfg) else NO_APPEAL_LEFT)
        out.reason = _ending(out.reason, tail, cfg["feedback_chars"])
        return out
    return _accept(out, reason, state, root, repo, session, sealed or repo, manifest)


def _refusal(reason: str, out: Any, state: dict[str, Any], cfg: dict[str, Any]) -> str:
    if len(reason) < MIN_REASON:
        return f"say why the test is wrong in the APPEAL line (at least {MIN_REASON} characters)"
    if not _left(state, cfg):
        return f"{state.get('appeals') or 0} appeal(s) in this session already (max_appeals {cfg['max_appeals']})"
    shown = set(state.get("last_failing") or [])
    unseen = [f for f in out.failing if f not in shown]
    if not shown or unseen:
        return ("it names failures you have not been shown yet; read this feedback, then appeal if a test is still "
                "wrong (an appeal covers only the failures the last feedback named)")
    return ""


def _accept(out: Any, reason: str, state: dict[str, Any], root: Path, repo: Path, session: str, sealed: Path,
            manifest: dict[str, Any] | None = None) -> Any:
    from donegate.core.outcome import ALLOW, Outcome

    accept = out.gates["acceptance"]
    failing = [f["id"] for f in accept.get("failing", [])] or list(out.failing)
    appeals = (state.get("appeals") or 0) + 1
    manifest = manifest if manifest is not None else _manifest(root, sealed)
    out.gates["appeal"] = {"accepted": True, "reason": reason, "failing": failing, "diff_sha256": _diff_hash(repo, manifest),
                           "appeals": appeals}
    named = _named(failing, dict((manifest or {}).get("held") or {}))
    shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    msg = (f"donegate: the agent APPEALED against the hidden tests ({reason!r}); {len(failing)} of "
           f"{accept.get('total')} still fail ({shown}). The stop was allowed but the work is NOT verified: this session "
           f"needs a person (donegate report --session {session}, then donegate label REF upheld|rejected)")
    return Outcome("appealed", ALLOW, gates=out.gates, failing=out.failing, system_message=msg, repo=out.repo)


def _named(failing: list[str], held: dict[str, str]) -> list[str]:
    """The failing tests as the user is told them: a shown test by its id, a held-back one by its requirement
    and a count (its id can carry its inputs: `donegate.seal.held`)."""
    from donegate.seal.held import split

    shown, counts = split(dict.fromkeys(failing, ""), held)
    return [*shown, *(f"held-back requirement {name!r} ({n} failing)" for name, n in counts.items())]


def _manifest(root: Path, sealed: Path) -> dict[str, Any] | None:
    """The sealed store's manifest, read once for the appeal's diff hash and its held-back names."""
    from donegate.seal import store

    try:
        st = store.load(sealed, root)
        return st.manifest if st else None
    except Exception:  # a store that does not load: the stop blocked on it before any appeal was weighed
        return None


def count(out: Any, counters: dict[str, Any]) -> None:
    """Inside the stop's counter transaction: an accepted appeal uses one of the session's appeals."""
    if out.verdict == "appealed":
        counters["appeals"] = (counters.get("appeals") or 0) + 1


def _left(state: dict[str, Any], cfg: dict[str, Any]) -> bool:
    return (state.get("appeals") or 0) < cfg["max_appeals"]


def _offer(root: Path, session: str, cfg: dict[str, Any]) -> str:
    return LINE if _left(_counters(root, session), cfg) else NO_APPEAL_LEFT


def _counters(root: Path, session: str) -> dict[str, Any]:
    from donegate import paths
    from donegate.sessions.counters import FileCounters

    return FileCounters(paths.state_dir(root)).peek(session)  # never waits on the lock (the stop's deadline)


def _ending(text: str, line: str, cap: int) -> str:
    """`text` with `line` as its last line, cut so that the whole stays within `cap` characters: the
    way out must survive a long list of failures."""
    from donegate.core import scrub as feedback

    return feedback.capped(text, max(cap - len(line) - 1, 80), "failures") + "\n" + line


def _diff_hash(repo: Path, manifest: dict[str, Any] | None) -> str | None:
    """sha256 of the working tree's diff against the sealed base, untracked files included: what the person judges."""
    from donegate.tree import git

    try:
        return _sha256(git.diff(repo, manifest["base"]).encode()).hexdigest() if manifest else None
    except Exception:  # the appeal stands without its hash; the ledger shows null
        return None
