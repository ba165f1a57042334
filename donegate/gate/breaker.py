"""The breaker: count blocks per session, and hand the session to a person when the loop stops paying
(`max_blocks`, `max_same_failure`). The counters live under the state root (`donegate.sessions.counters`)."""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.core import deadline
from donegate import paths
from donegate.gate.stop import log_exception
from donegate.core.outcome import ALLOW, BLOCK, Outcome
from donegate.sessions.counters import FileCounters

MAX_HINTED = 50  # hinted states remembered per session
# The two runs disagreeing (`gates.acceptance.second.disagreement`) is remembered for the session: every later stop
# checks every sealed test in the second run (`disagreed`), and this many hand the session to a person.
MAX_DISAGREEMENTS = 2


MAX_FIRSTS = 100  # repositories whose first stop a session remembers (`firsts`)


def first_stop(counters: dict[str, Any], key: str | None) -> None:
    """The session's first stop in the repository of `key` (`paths.repo_key`), kept by repository (`firsts`): a seal of
    that repository after it is "during the session" (`integrity`). A session id seen in another repository first (a
    client reusing its ids) made a first seal elsewhere read as a seal again. Counters of a kit before this hold only
    `first`: taken for the repository of the next stop."""
    now = round(time.time(), 3)
    counters.setdefault("first", now)
    if not key:
        return
    firsts = counters.get("firsts")
    if not isinstance(firsts, dict):
        firsts = counters["firsts"] = {key: counters["first"]} if counters.get("stops", 0) > 1 else {}
    if key not in firsts and len(firsts) < MAX_FIRSTS:
        firsts[key] = now


def breaker(outcome: Outcome, counters: dict[str, Any], cfg: dict[str, Any], key: str | None = None) -> Outcome:
    """Count blocks per session; hand the session to a person when the loop stops paying.

    A reviewers' hint is a block too (exit 2), but it comes on passing tests: that is progress, so it
    starts the no-progress streak over, while it still counts toward `max_blocks` (it costs a turn,
    and an agent that changes a little each time would get a new hint each time). A hint that would
    pass `max_blocks` is dropped rather than handed over: the tests pass, there is nothing to hand over.
    """
    counters["stops"] += 1
    first_stop(counters, key)  # a seal after this is "during the session" (integrity)
    ran = outcome.gates.get("acceptance")
    second = ran.get("second") if isinstance(ran, dict) else None
    if isinstance(second, dict) and second.get("disagreement"):  # never reset: not by a pass, not by a hand-over
        counters["disagreements"] = int(counters.get("disagreements") or 0) + 1
        if outcome.exit_code != ALLOW and counters["disagreements"] >= MAX_DISAGREEMENTS:
            counters.update(blocks=0, same_streak=0, last_failing=None)
            why = (f"the two runs disagreed at {counters['disagreements']} stops of this session: the code under test "
                   "behaves differently when pytest runs it (suspected special-casing of the test harness)")
            outcome.gates["handover"] = "disagreements"
            return hand_over(outcome, why, f"donegate: gave up: {why}")
    if outcome.hint:
        counters["hinted"] = [*(counters.get("hinted") or []), outcome.hint][-MAX_HINTED:]
    if outcome.exit_code == ALLOW:
        counters.update(blocks=0, same_streak=0, last_failing=None)
        return outcome
    if outcome.hint:
        if counters["blocks"] >= cfg["max_blocks"]:
            outcome.gates["breaker"] = {"hint_dropped": f"{counters['blocks']} blocks in this session (max_blocks)"}
            counters.update(blocks=0, same_streak=0, last_failing=None)
            outcome.verdict, outcome.exit_code = "pass", ALLOW
            outcome.system_message = ("donegate: the acceptance tests pass; the reviewers' findings were not sent to the "
                                      "agent (max_blocks reached), they are in the ledger")
            return outcome
        counters.update(blocks=counters["blocks"] + 1, same_streak=0, last_failing=None)
        return outcome
    same = counters["last_failing"] == outcome.failing
    retry = "retry" in outcome.gates  # the blind control: its one message is always "the same", only max_blocks ends it
    why = ""
    if counters["blocks"] >= cfg["max_blocks"]:
        why = f"{counters['blocks']} blocks in this session (max_blocks)"
    elif cfg["max_same_failure"] and same and not retry and counters["same_streak"] >= cfg["max_same_failure"]:
        accept: dict[str, Any] = outcome.gates["acceptance"] if isinstance(outcome.gates.get("acceptance"), dict) else {}
        tests_failed = bool(accept.get("failed")) or not accept
        what = "the same tests failed" if tests_failed and not blocked_by(outcome.gates, tests=False) else \
            f"the same reason blocked ({blocked_by(outcome.gates)})"
        why = f"{what} {counters['same_streak']} stops in a row (max_same_failure)"
    if why and retry:
        counters.update(blocks=0, same_streak=0, last_failing=None)
        outcome.gates["breaker"] = {"retry_done": why, "was": outcome.verdict}
        outcome.verdict, outcome.exit_code = "gave_up", ALLOW
        outcome.system_message = (f"donegate (mode: retry, a blind control): the stop was allowed after {why}; "
                                  "no test ran, nothing was verified")
        return outcome
    if why:
        counters.update(blocks=0, same_streak=0, last_failing=None)
        hand_over(outcome, why, f"donegate: gave up after {why}")
        if "leak" in outcome.gates:  # the person taking over must hear it too, not only the ledger
            outcome.system_message += ("; the session transcript also shows hidden acceptance-test content, store "
                                       "paths or the kit's hook code")
        return outcome
    counters["blocks"] += 1
    counters["same_streak"] = counters["same_streak"] + 1 if same else 1
    counters["last_failing"] = outcome.failing
    return outcome


def hand_over(outcome: Outcome, why: str, told: str) -> Outcome:
    """Let the stop through to a person: the work is not verified, and `told` (then the words saying so)
    is what the person sees. For the breaker's limits, and for what the agent cannot repair (the
    project's interpreter gone or broken), which no number of blocks would change."""
    outcome.gates["breaker"] = {"gave_up": why, "was": outcome.verdict, "blocked_by": blocked_by(outcome.gates)}
    outcome.verdict, outcome.exit_code = "gave_up", ALLOW
    outcome.system_message = (f"{told}; the stop was allowed but the work is NOT verified: "
                              "this session needs a person (see the ledger)")
    return outcome


def blocked_by(gates: dict[str, Any], tests: bool = True) -> str:
    """What blocked a stop, in one line, from its gates (the ledger's record): the scan's finding, the tripwire, the
    run's problem, the failing tests (without `tests`: only what is not a failing test). For the breaker's hand-over,
    `status`, `report`."""
    out: list[str] = []
    accept: dict[str, Any] = gates["acceptance"] if isinstance(gates.get("acceptance"), dict) else {}
    scan: dict[str, Any] = gates["scan"] if isinstance(gates.get("scan"), dict) else {}
    tamper: dict[str, Any] | None = accept["tamper"] if isinstance(accept.get("tamper"), dict) else None
    if tamper:
        out.append(f"tripwire [{tamper.get('rule', '?')}]: {tamper.get('what', '')}")
    elif accept.get("problem"):
        out.append(str(accept["problem"]))
    if scan.get("mode") == "block" and scan.get("findings"):
        f = scan["findings"][0]
        more = f" (+{len(scan['findings']) - 1} more)" if len(scan["findings"]) > 1 else ""
        out.append(f"scan [{f.get('rule')}]: {f.get('file')}:{f.get('line')} {f.get('what')}{more}")
    scope: dict[str, Any] = gates["scope"] if isinstance(gates.get("scope"), dict) else {}
    out += [f"scope: {p}" for p in (scope.get("problems") or [])[:2] if isinstance(p, str)]
    for key in ("leak", "review", "integrity", "error"):
        g = gates.get(key)
        if isinstance(g, dict) and isinstance(g.get("problem"), str) and g["problem"]:
            out.append(f"{key}: {g['problem']}")
        elif key == "error" and isinstance(g, str) and g:
            out.append(f"error: {g}")
    if tests and accept.get("failed"):
        out.append(f"{accept['failed']} of {accept.get('total', '?')} tests failing")
    return "; ".join(out)[:500]


def disagreed(root: Path, session: str) -> int:
    """How many stops of the session the two runs disagreed at (read without the lock: it changes nothing)."""
    try:
        return int(FileCounters(paths.state_dir(root)).peek(session).get("disagreements") or 0)
    except (TypeError, ValueError):
        return 0


def count(outcome: Outcome, session: str, cfg: dict[str, Any], root: Path, wait: float,
          key: str | None = None) -> dict[str, Any]:
    """Run the breaker on the session's counters (waiting at most `wait` s for their lock); `key`: the stop's
    repository's (`paths.repo_key`)."""
    counters: dict[str, Any] = {"stops": 0, "blocks": 0}
    try:
        with FileCounters(paths.state_dir(root)).transact(session, wait=wait) as counters:
            if outcome.verdict == "appealed":  # an accepted appeal uses one of the session's appeals (`appeal.count`)
                from donegate.gate import appeal

                appeal.count(outcome, counters)
            outcome = breaker(outcome, counters, cfg, key)
    except deadline.Busy:
        # Someone holds the counters' lock (an agent's `flock`?): the verdict stands, uncounted.
        outcome.gates["counter_error"] = "locked"
        if outcome.exit_code == ALLOW:
            outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + \
                "donegate: the session's block counter was locked by another process; this stop was not counted"
    except Exception:
        log_exception(root)
        outcome.gates["counter_error"] = True
        if outcome.exit_code == BLOCK:
            # Without a working counter a block could trap the session forever: let it go, say so.
            outcome.verdict, outcome.exit_code = "error", ALLOW
            outcome.system_message = "donegate: the block counter is broken; the stop was allowed unverified"
    return counters


def quiet(root: Path, counter: str = "managed:unsealed") -> tuple[int, str, str]:
    """A stop let through without a ledger line (a managed hook's stop where nothing is sealed, or
    one of the kit's own runs): one counter instead of a line per session."""
    try:
        with FileCounters(paths.state_dir(root)).transact(counter) as counters:
            counters["stops"] += 1
    except Exception:
        log_exception(root)
    return ALLOW, "", ""
