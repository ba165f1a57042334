"""`donegate label`: a person's verdict on a block or an appeal, appended to the ledger it names;
`donegate approve` / `reject`: a person's decision on a session left for them (an appeal, a hand-over).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from donegate.ledger import chain as ledger
from donegate.seal.sealer import inside_session
from donegate.errors import DonegateError
from donegate.core.util import utc_now
from donegate.report.read import APPEALED, APPEAL_DECISION, APPEAL_LABELS, BLOCKING, DECISIONS, LABELS, MIN_REF, canonical_time, decision_entry, stop_row


def find_stop(path: Path, ref: str) -> tuple[str, dict[str, Any]]:
    """The stop whose line hash starts with `ref`: (its 10-character ref, its record)."""
    found: dict[str, bytes] = {}
    for _, line in ledger.read(path):
        h = ledger.line_hash(line)
        if h.startswith(ref) and b'"stop"' in line:
            found[h] = line
    stops = {}
    for h, line in found.items():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("event") == "stop":
            stops[h] = rec
    if not stops:
        raise DonegateError(f"no stop {ref} in {path}", "copy the ref from `donegate report --session ID`")
    if len(stops) > 1:
        raise DonegateError(f"{ref} names {len(stops)} stops", "give more characters of the ref")
    h, rec = stops.popitem()
    return h[: ledger.REF_CHARS], rec


def _ref(ref: str) -> str:
    ref = ref.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{%d,64}" % MIN_REF, ref):
        raise DonegateError(f"{ref!r} is not a stop reference",
                            f"a ref is {ledger.REF_CHARS} hex characters, as `donegate report --session ID` shows")
    return ref


def label_stop(path: Path, ref: str, label: str, note: str = "", by: dict[str, Any] | None = None) -> dict[str, Any]:
    """Append a person's label of stop `ref`; `by`: who labelled it (`donegate.person.ownership.who`), kept in the line.
    An appeal's label is a decision: `upheld` is `approve`, `rejected` is `reject` (one line, `decide`)."""
    ref = _ref(ref)
    if label not in LABELS + APPEAL_LABELS:
        raise DonegateError(f"unknown label {label!r}", "use justified or unjustified (a block), upheld or rejected (an appeal)")
    if not path.is_file():
        raise DonegateError(f"no ledger at {path}", "pass the ledger that holds the stop with --ledger")
    short, rec = find_stop(path, ref)
    kind, row = stop_row(rec)
    if kind == "stop" and row[3] == APPEALED:
        if label not in APPEAL_LABELS:
            raise DonegateError(f"stop {short} is an appeal: label it upheld (the test was wrong) or rejected",
                                f"donegate label {short} upheld|rejected")
        return decide(path, short, APPEAL_DECISION[label], note, by)
    elif label in APPEAL_LABELS:
        raise DonegateError(f"stop {short} is not an appeal (verdict {rec.get('verdict')}); only appeals are upheld or rejected",
                            "label blocks justified or unjustified")
    elif kind != "stop" or row[3] not in BLOCKING:
        raise DonegateError(f"stop {short} was not a block (verdict {rec.get('verdict')}); only blocks are labelled",
                            "label the stops `donegate report --session ID` shows as block or hint")
    # The stop's session, time, repo and config travel with the label: the report counts it without
    # finding the stop again (see `label_row`).
    return ledger.append({"event": "label", "time": utc_now(),
                          "ref": short, "label": label, "note": note, "session": rec["session"], "stop": rec.get("stop"),
                          "stop_time": rec["time"], "repo": rec.get("repo") or "", "config": rec["config"],
                          "verdict": rec["verdict"], **_who(by)}, path)


def _who(by: dict[str, Any] | None) -> dict[str, Any]:
    """The fields naming who wrote a label or a decision (`donegate.person.ownership`)."""
    return {"by": by, "inside_session": inside_session(by)} if by is not None else {}


# A session waits for a person when it ended on one of these; `approve` and `reject` answer it. A stop that
# passed can be rejected too (a person read the work and refused it): nothing to approve there.
DECIDABLE = ("appealed", "gave_up")
REJECTABLE = DECIDABLE + ("pass", "review_error")
APPEAL_LABEL = {v: k for k, v in APPEAL_DECISION.items()}


def decide(path: Path, ref: str, decision: str, note: str = "", by: dict[str, Any] | None = None) -> dict[str, Any]:
    """A person's decision on an appealed, handed-over or passed stop: one `decision` line in the ledger
    (on an appeal it carries the appeal's label too: `label REF rejected` writes the very same line). A
    rejection is also left for the next stop in that repository (`gate.feedback.tell_rejections`); a later
    approval of the same stop withdraws it if it was not told yet."""
    ref = _ref(ref)
    if decision not in DECISIONS:
        raise DonegateError(f"unknown decision {decision!r}", "approve or reject")
    if not path.is_file():
        raise DonegateError(f"no ledger at {path}", "pass the ledger that holds the stop with --ledger")
    short, rec = find_stop(path, ref)
    verdict = rec.get("verdict")
    if verdict not in (REJECTABLE if decision == "reject" else DECIDABLE):
        passed = verdict in REJECTABLE
        raise DonegateError(f"stop {short} ended {verdict}: " + (
            "it passed, so there is nothing to approve (reject it to send the work back)" if passed else
            "only an appeal or a hand-over (gave_up) waits for a person, and a passed stop can be rejected"),
            "donegate status lists the sessions waiting for a person, with their refs")
    label = {"label": APPEAL_LABEL[decision]} if verdict == "appealed" else {}
    line = ledger.append({"event": "decision", "time": utc_now(), "ref": short, "decision": decision, **label, "note": note,
                          "session": rec["session"], "stop": rec.get("stop"), "stop_time": rec["time"],
                          "repo": rec.get("repo") or "", "config": rec["config"], "verdict": verdict,
                          **_who(by)}, path)
    if rec.get("repo"):
        from donegate.gate import feedback

        if decision == "reject":
            feedback.add_rejection(path.parent, str(rec["repo"]), {"ref": short, "session": rec["session"], "note": note})
        else:
            feedback.withdraw_rejection(path.parent, str(rec["repo"]), short)
    return line


def decisions(files: list[Path]) -> dict[str, dict[str, Any]]:
    """The latest decision per stop ref, in ledger order (`read.decision_entry`), on a pass of their own (the report
    reads them in its one pass: `read.Partial.decisions`)."""
    out: dict[str, dict[str, Any]] = {}
    for path in files:
        for _, _, rec in ledger.matching(path, (b'"decision"', b'"label"')):  # a cheap byte test before parsing
            entry = decision_entry(rec)
            if entry is not None:
                out[entry[0]] = entry[1]
    return out


def decided_sessions(files: list[Path], made: dict[str, dict[str, Any]] | None = None) -> dict[bytes, bytes]:
    """Session -> the time of the latest stop a person decided in it (canonical UTC): the report takes
    such a session off "left for a person" unless a stop after that one failed again. `made`: the decisions,
    when already read (`decisions`)."""
    out: dict[bytes, bytes] = {}
    for rec in (decisions(files) if made is None else made).values():
        sid, when = rec.get("session"), canonical_time(rec.get("stop_time"))
        if isinstance(sid, str) and when is not None and when > out.get(sid.encode(), b""):
            out[sid.encode()] = when
    return out
