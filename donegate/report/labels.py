"""`donegate label`: a person's verdict on a block or an appeal, appended to the ledger it names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from donegate import ledger
from donegate.person import inside_session
from donegate.errors import DonegateError
from donegate.util import utc_now
from donegate.report.read import APPEALED, APPEAL_LABELS, BLOCKING, LABELS, MIN_REF, stop_row


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


def label_stop(path: Path, ref: str, label: str, note: str = "", by: dict[str, Any] | None = None) -> dict[str, Any]:
    """Append a person's label of stop `ref`; `by`: who labelled it (`donegate.person.who`), kept in the line."""
    ref = ref.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{%d,64}" % MIN_REF, ref):
        raise DonegateError(f"{ref!r} is not a stop reference",
                            f"a ref is {ledger.REF_CHARS} hex characters, as `donegate report --session ID` shows")
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
                          "verdict": rec["verdict"],
                          **({"by": by, "inside_session": inside_session(by)} if by is not None else {})}, path)
