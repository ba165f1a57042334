"""The review stage (optional): the reviewers once scope and acceptance pass, as a hint or as a gate."""

from __future__ import annotations

import json
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.core import scrub as feedback
from donegate.core.fsafe import sha256 as _sha256
from donegate.tree import git
from donegate import paths
from donegate.seal import store
from donegate.errors import DonegateError
from donegate.gate.inputs import session_of
from donegate.gate.stop import log_exception, stage, time_left
from donegate.core.outcome import BLOCK, Outcome
from donegate.sessions.counters import FileCounters


def _hinted(root: Path, session: str) -> list[str]:
    return list(FileCounters(paths.state_dir(root)).peek(session).get("hinted") or [])


def review_gate(payload: dict[str, Any], cfg: dict[str, Any], root: Path, repo: Path, st: store.Store,
                passed: Outcome, scrub: feedback.Scrubber, session: str | None = None) -> Outcome:
    """The reviewers, once scope and acceptance pass (`review: hint | block`); `passed` is the outcome
    without them. Their result goes to the ledger as `gates.review`. `session`: the stop's (its context).

    - hint: standing findings go back to the agent once per state of the code (request + diff,
      hashed), labelled as a model's judgment; the next stop on a hinted state is allowed without
      running the reviewers again.
    - block: blocking findings block like a failing test, counted by the same breaker; `failing` is
      "review:<file>" per blocking finding, so reviewers flagging the same files stop after stop are
      "no progress" (their wording changes every run, their files do not).
    - a review that failed (timeout, error, no structured output, broken reviewer files, a kit bug)
      allows the stop and tells the user: verdict `review_error`. It never blocks, never passes silently.
    """
    from donegate.models import reviewer

    t0 = time.monotonic()
    base, request, mode = st.manifest["base"], st.manifest.get("request", ""), cfg["review_mode"]
    state = ""
    try:
        diff = git.diff(repo, base)
        state = _sha256(json.dumps([request, diff]).encode()).hexdigest()[:32]
        if cfg["review"] == "hint" and state in _hinted(root, session if session is not None else session_of(payload)):
            passed.gates["review"] = {"mode": mode, "skipped": "the hint for this state of the code was given", "state": state}
            return passed
        stage("the review")
        result = reviewer.review(repo, request, base, cfg, timeout=time_left(cfg["review_timeout"]), diff=diff)
    except DonegateError as exc:
        result = reviewer.error_result(mode, exc.message, time.monotonic() - t0)
    except Exception as exc:  # a kit bug in the review must not turn into a block
        result = reviewer.error_result(mode, f"internal error ({type(exc).__name__}), traceback in {log_exception(root)}",
                                       time.monotonic() - t0)
    result["state"] = state
    passed.gates["review"] = result
    told = [passed.system_message] if "leak" in passed.gates else []
    if result["verdict"] == "error":
        told.append(f"donegate: the acceptance tests pass, but the review failed ({'; '.join(result['errors'])}); "
                    "the stop was allowed WITHOUT a review (see the ledger)")
        passed.verdict, passed.system_message = "review_error", " ".join(told)
        return passed
    if result["errors"]:  # a block stands on a healthy reviewer's finding; its failed partner is still news
        told.append("donegate: part of the review failed: " + "; ".join(result["errors"]))
    claimed = feedback.claims_done(payload.get("last_assistant_message"))
    standing = reviewer.standing(result)
    if cfg["review"] == "hint" and standing:
        text = feedback.capped(scrub(reviewer.feedback(result, hint=True, claimed=claimed)), cfg["feedback_chars"], "findings")
        return Outcome("hint", BLOCK, reason=text, gates=passed.gates, system_message=" ".join(told), hint=state)
    if cfg["review"] == "block" and result["verdict"] == "block":
        text = feedback.capped(scrub(reviewer.feedback(result, hint=False, claimed=claimed)), cfg["feedback_chars"], "findings")
        failing = sorted({"review:" + (f["file"] or "-") for f in reviewer.blocking(result)})
        return Outcome("block", BLOCK, reason=text, gates=passed.gates, failing=failing, system_message=" ".join(told))
    minor = f" ({len(standing)} minor finding(s) in the ledger)" if standing else ""
    told.append(f"donegate: {passed.gates['acceptance']['total']} acceptance tests pass; the reviewers approve{minor}")
    passed.system_message = " ".join(told)
    return passed
