"""What a ledger line means: verdict codes, and the slow path of the report's reading (`json.loads`, then the
fields the report counts), which every line the fast path (`read.scan`) does not take goes through: used or
counted as skipped, never a crash.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

from donegate.core.util import utc_ms
from donegate.ledger import chain as ledger

# Verdict codes. A blocking stop is one the hook answered with exit 2; `error` blocks unless the
# block counter was broken (gates.counter_error), in which case the stop was let through. An
# `appealed` stop was let through on the agent's appeal: never a pass, always left for a person.
VERDICTS = ("pass", "review_error", "block", "hint", "gave_up", "unsealed", "error", "error", "appealed")
PASS, REVIEW_ERROR, BLOCK, HINT, GAVE_UP, UNSEALED, ERROR, ERROR_ALLOWED, APPEALED = range(9)
_CODE = {name: code for code, name in enumerate(VERDICTS) if code != ERROR_ALLOWED}
_BCODE = {name.encode(): code for name, code in _CODE.items()}
BLOCKING = frozenset((BLOCK, HINT, ERROR))
PASSING = frozenset((PASS, REVIEW_ERROR))  # the acceptance tests passed at that stop
FAILING = frozenset((BLOCK, HINT, GAVE_UP, ERROR, ERROR_ALLOWED, APPEALED))
BY = ("config", "repo", "day", "client")
LABELS = ("justified", "unjustified")  # of a block
APPEAL_LABELS = ("upheld", "rejected")  # of an appeal: the test was wrong, or the agent was
APPEALS_LISTED = 50  # appeals kept by name (the latest; the text shows the first few)
# The person's commands' own lines (`donegate.person.ownership`): read, not "ignored"; those run inside a session are listed.
PERSON_EVENTS = frozenset({"seal", "install", "uninstall", "refused", "unseal", "approve", "reject"})
INSIDE_LISTED = 50  # the kit's commands run from inside a Claude Code session, kept by name (the latest)
# A person's decisions (`donegate approve` / `reject`). An appeal's label and the decision are one thing: upheld
# (the test was wrong) approves the work, rejected refuses it.
DECISIONS = ("approve", "reject")
APPEAL_DECISION = {"upheld": "approve", "rejected": "reject"}

CHUNK = 256 << 10  # bytes read at a time
EXAMPLES = 20  # skipped lines kept by name (the text shows the first few)
ATTENTION = 10  # sessions left for a person listed by the text report
MIN_REF = 6  # hex characters `label` accepts as a stop reference

# Time and money add up as integers (the gate rounds durations to 4 decimals, costs to 6): float
# sums would differ in the last digit with the order of addition, i.e. with the number of readers.
TICKS, MICRO = 10_000, 1_000_000
_NUM = rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# A session's agent figures, packed (`_agent_bits`): cost from bit 0, time from bit 41; and their raw text's shape.
_AUSD, _ASECS = 0, 41
_FIELD, _USD_BITS, _SECS_BITS = (1 << 24) - 1, (1 << 41) - 1, (1 << 32) - 1
_AGENT = re.compile(rb'"agent_usd":(' + _NUM + rb'|null),"agent_seconds":(' + _NUM + rb'|null)').fullmatch


def decision_entry(rec: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(stop ref, the decision) of a `decision` line, or of an appeal's `label` line written before an appeal's label
    was a decision (`upheld` read as approve, `rejected` as reject); None for any other line."""
    event, ref = rec.get("event"), rec.get("ref")
    if not isinstance(ref, str):
        return None
    if event == "decision" and rec.get("decision") in DECISIONS:
        return ref[: ledger.REF_CHARS], rec
    if event == "label" and rec.get("label") in APPEAL_DECISION:
        return ref[: ledger.REF_CHARS], {**rec, "decision": APPEAL_DECISION[rec["label"]]}
    return None


def _is_num(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def canonical_time(value: Any) -> bytes | None:
    """An ISO time as the gate writes it (UTC, milliseconds); naive times are taken as UTC."""
    when = utc_ms(value)
    return None if when is None else when.isoformat(timespec="milliseconds").encode()


def review_cost(review: Any) -> float:
    """The reviewers' cost at one stop: the review's total, else the sum of its reviewers' costs."""
    if not isinstance(review, dict):
        return 0.0
    if _is_num(review.get("cost_usd")):
        return float(review["cost_usd"])
    entries = _list(review.get("reviewers"))
    return float(sum(e["cost_usd"] for e in entries if isinstance(e, dict) and _is_num(e.get("cost_usd"))))


_STOP_FIELDS = (("time", str), ("session", str), ("verdict", str), ("gates", dict), ("config", str), ("duration", float))


def stop_row(rec: dict[str, Any]) -> tuple[str, Any]:
    """('stop', row) for a stop record, or ('skip', why) when a field the report needs is missing."""
    for name, kind in _STOP_FIELDS:
        if name not in rec:
            return "skip", f"stop without '{name}'"
        value = rec[name]
        good = _is_num(value) if kind is float else isinstance(value, kind)
        if not good or (name == "session" and not value):
            return "skip", f"stop with a bad '{name}' ({json.dumps(value)[:40]})"
    gates, code = rec["gates"], _CODE.get(rec["verdict"])
    if code is None:
        return "skip", f"stop with an unknown verdict {rec['verdict'][:40]!r}"
    if code == ERROR and gates.get("counter_error"):
        code = ERROR_ALLOWED
    when = canonical_time(rec["time"])
    if when is None:
        return "skip", f"stop with a bad time {rec['time'][:40]!r}"
    accept = gates.get("acceptance")
    if isinstance(accept, dict):
        sealed, passed = _count(accept.get("total")), _count(accept.get("passed"))
    else:
        integrity = gates.get("integrity")
        sealed, passed = (_count(integrity.get("tests")) if isinstance(integrity, dict) else 0), 0
    if max(sealed, passed) > _FIELD:
        return "skip", f"stop with an implausible test count ({max(sealed, passed)})"
    repo = _str(rec.get("repo"))
    return "stop", (when, repo.encode(), rec["session"].encode(), code, sealed, passed, float(rec["duration"]),
                    rec["config"].encode(), review_cost(gates.get("review")),
                    _agent_bits(rec.get("agent_usd"), rec.get("agent_seconds"), "agent_usd" in rec), client_of(rec))


CLAUDE = b"claude"  # the client of a stop line that names none (written before the kit recorded it)


def client_of(rec: dict[str, Any]) -> bytes:
    """The stop's client (`report --by client`): its top-level `client`; a line with none, or not a non-empty string,
    is Claude Code's (written before the kit recorded it)."""
    client = rec.get("client")
    return client.encode() if isinstance(client, str) and client else CLAUDE


def agent_of(rec: dict[str, Any]) -> dict[str, Any]:
    """A stop line's figures of the agent's session: `agent` with its `usd` and `seconds` ({} when none)."""
    if "agent_usd" not in rec:
        return {}
    agent = rec["agent"] if isinstance(rec.get("agent"), dict) else {}
    return {**agent, "usd": rec.get("agent_usd"), "seconds": rec.get("agent_seconds")}


def _agent_bits(usd: Any, seconds: Any, present: bool) -> int:
    """The agent's cost and time of one stop line, packed for a session's state: cost 0 when the line has
    none, 1 when it is unknown (a model not priced), else 2 + micro-dollars; time 0 when none, else 1 +
    tenths of a second."""
    bits = 0
    if present:
        bits |= (min(round(usd * MICRO), _USD_BITS - 2) + 2 if _is_num(usd) and usd >= 0 else 1) << _AUSD
    if _is_num(seconds) and seconds >= 0:
        bits |= (min(round(seconds * 10), _SECS_BITS - 1) + 1) << _ASECS
    return bits


def _agent_text(bits: int) -> bytes:
    """A slow-path line's agent figures as the fast path keeps them: the raw text (b"" when none)."""
    if not bits:
        return b""
    usd, secs = bits >> _AUSD & _USD_BITS, bits >> _ASECS & _SECS_BITS
    return (b'"agent_usd":' + (b"null" if usd < 2 else repr((usd - 2) / MICRO).encode())
            + b',"agent_seconds":' + (b"null" if not secs else repr((secs - 1) / 10).encode()))


def _fast_agent(text: bytes) -> int:
    """`_agent_bits` from the raw `"agent_usd":X,"agent_seconds":Y` of a stop line (0: none)."""
    m = _AGENT(text)
    if m is None:
        return 0
    usd, secs = m.groups()
    return _agent_bits(None if usd == b"null" else float(usd), None if secs == b"null" else float(secs), True)


def slow_row(line: bytes) -> tuple[str, Any]:
    """Any line the fast path did not take: ('stop', row), ('write', cost), ('label', None),
    ('event', name) or ('skip', why)."""
    if not line.strip():
        return "skip", "empty"
    try:
        rec = json.loads(line)
    except ValueError:
        return "skip", "not JSON" + ("" if line.rstrip().endswith(b"}") else " (torn: cut off)")
    if not isinstance(rec, dict):
        return "skip", "not a JSON object"
    version = rec.get("v")
    if not (type(version) is int and version == ledger.SCHEMA_VERSION):
        return "skip", f"unknown schema version {json.dumps(version)[:20]}" if "v" in rec else "no schema version"
    try:
        return _event_row(rec)
    except UnicodeEncodeError:  # json.loads reads "\ud800" as a lone surrogate, which has no UTF-8
        return "skip", "a line with a lone surrogate (\\ud800-\\udfff) in a text: it has no UTF-8"


def _event_row(rec: dict[str, Any]) -> tuple[str, Any]:
    """`slow_row` of a line json.loads read as the ledger's schema."""
    event = rec.get("event")
    if event == "stop":
        return stop_row(rec)
    by = rec["by"] if isinstance(rec.get("by"), dict) else {}
    if rec.get("inside_session") is True and event != "write" and not by.get("confirmed"):
        # One of the person's commands run from inside a Claude Code session (`donegate.person.ownership`) and not
        # confirmed on the person's terminal: never a person's label or approval; listed first.
        return "inside", (_str(rec.get("time")), _str(event), _str(rec.get("command") or event),
                          _str(rec.get("repo") or by.get("gated_repo")), _str(by.get("session") or rec.get("session")))
    if event in ("write", "write_failed"):  # a failed write cost money too
        repo, cfg, cost = rec.get("repo"), rec.get("config"), rec.get("cost_usd")
        if not (isinstance(repo, str) and isinstance(cfg, str) and _is_num(cost)):
            return "skip", f"{event} without repo, config or cost_usd"
        return "write", (repo.encode(), cfg.encode(), float(cost), canonical_time(rec.get("time")))
    if event == "label":
        return label_row(rec)
    if event == "decision":  # a person's approve / reject: read on its own (`labels.decisions`); an appeal's is its label too
        return label_row(rec) if rec.get("label") in APPEAL_LABELS else ("decision", None)
    if event in PERSON_EVENTS:
        return "person", event
    return "event", str(event)[:40]


def label_row(rec: dict[str, Any]) -> tuple[str, Any]:
    """A label carries a copy of its stop's time, repo, config and session (`label_stop` takes them
    from the stop), so it is counted in the same single pass, without finding the stop's line."""
    ref, label, when = rec.get("ref"), rec.get("label"), canonical_time(rec.get("stop_time"))
    fields: list[Any] = [rec.get(k) for k in ("repo", "config", "session", "verdict")]
    if not (isinstance(ref, str) and label in LABELS + APPEAL_LABELS and when and all(isinstance(f, str) for f in fields)):
        return "skip", "label without ref, label, stop_time, repo, config, session or verdict"
    repo, cfg, session, verdict = fields
    return "label", (ref[: ledger.REF_CHARS], label, when, repo.encode(), cfg.encode(), session.encode(), verdict)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
