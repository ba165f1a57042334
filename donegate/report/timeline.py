"""One session, stop by stop (`donegate report --session ID`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from donegate.ledger import chain as ledger
from donegate.errors import DonegateError
from donegate.report.read import APPEAL_LABELS, BLOCKING, ERROR, LABELS, _CODE, _is_num, _list, agent_of, review_cost
from donegate.report.text import _num, _plural


def _finding_text(f: Any) -> str:
    if not isinstance(f, dict):
        return str(f)
    where = f"{f.get('file')}:{f.get('line')}" if f.get("file") and f.get("line") else (f.get("file") or "")
    status = f" {f['status']}" if f.get("status") else ""
    return f"[{f.get('severity', '?')}{status}] {where + ': ' if where else ''}{f.get('summary') or f.get('text') or ''}".rstrip()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _timeline_stop(rec: dict[str, Any], line: bytes, labels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One stop for `--session`, tolerant of any shape a hand-edited line may have."""
    gates = _dict(rec.get("gates"))
    accept, review, integrity = gates.get("acceptance"), gates.get("review"), _dict(gates.get("integrity"))
    accept, review = (accept if isinstance(accept, dict) else None), (review if isinstance(review, dict) else None)
    problems = [*_list(_dict(gates.get("scope")).get("problems")), integrity.get("problem"),
                accept and accept.get("problem"), gates.get("error")]
    label = labels.get(ledger.stop_ref(line))
    code = _CODE.get(rec.get("verdict", ""))
    return {
        "ref": ledger.stop_ref(line), "stop": rec.get("stop"), "time": rec.get("time"), "verdict": rec.get("verdict"),
        "blocked": code in BLOCKING and not (code == ERROR and gates.get("counter_error")),
        "duration": rec.get("duration"),
        "acceptance": {k: accept.get(k) for k in ("passed", "total", "duration")} if accept else None,
        "failing": [f for f in _list(accept.get("failing")) if isinstance(f, dict)] if accept else [],
        "problems": [str(p) for p in problems if p],
        "review": None if review is None else {
            "mode": review.get("mode"), "verdict": review.get("verdict") or ("skipped" if review.get("skipped") else None),
            "findings": _list(review.get("findings")), "errors": _list(review.get("errors")),
            "cost_usd": review_cost(review), "duration": review.get("duration")},
        "blocked_by": _blocked_by(gates) if code in BLOCKING or rec.get("verdict") == "gave_up" else "",
        "breaker": gates.get("breaker"),
        "appeal": gates.get("appeal") if isinstance(gates.get("appeal"), dict) else None,
        "cached": rec.get("cached") is True,
        "leak": gates.get("leak"),
        "label": {"label": label["label"], "note": label.get("note", "")} if label else None,
    }


def _blocked_by(gates: dict[str, Any]) -> str:
    """What blocked the stop, by name (the scan's finding, the tripwire, the run's problem, failing tests)."""
    from donegate.gate.breaker import blocked_by

    try:
        return blocked_by(gates)
    except Exception:  # a hand-edited line of any shape
        return ""


# the HTML page reads stops, findings and verdicts the same way
timeline_stop, finding_text, verdict_code = _timeline_stop, _finding_text, _CODE.get


def session_timeline(files: list[Path], session: str) -> dict[str, Any]:
    """Every stop of one session, in ledger order."""
    needle = json.dumps(session)[1:-1].encode()  # as the kit writes it (escaped, ASCII)
    found: list[tuple[dict[str, Any], bytes]] = []
    labels: dict[str, dict[str, Any]] = {}  # a label names its session too
    for path in files:
        for line, rec in ledger.containing(path, needle):
            if rec.get("session") != session:
                continue
            if rec.get("event") == "stop":
                found.append((rec, line))
            elif rec.get("event") in ("label", "decision") and isinstance(rec.get("ref"), str) \
                    and rec.get("label") in LABELS + APPEAL_LABELS:  # an appeal's decision carries its label
                labels[rec["ref"][: ledger.REF_CHARS]] = rec
    stops = [_timeline_stop(rec, line, labels) for rec, line in found]
    repo, cfg = (found[-1][0].get("repo"), found[-1][0].get("config")) if found else (None, None)
    if not stops:
        raise DonegateError(f"no stop of session {session!r} in {', '.join(map(str, files))}",
                            "session ids are in the summary (donegate report) and in Claude Code's transcript names")
    cost = sum(s["review"]["cost_usd"] for s in stops if s["review"])
    agent = next((agent_of(rec) for rec, _ in reversed(found) if agent_of(rec)), None)
    return {"session": session, "repo": repo, "config": cfg, "stops": stops, "agent": agent,
            "total": {"stops": len(stops), "blocks": sum(s["blocked"] for s in stops),
                      "gate_seconds": round(sum(s["duration"] for s in stops if _is_num(s["duration"])), 1),
                      "review_cost_usd": round(cost, 4)}}


def _indent(text: str, cap: int = 400) -> str:
    text = text if len(text) <= cap else text[:cap] + " ..."
    return text.replace("\n", "\n      ")


def render_timeline(t: dict[str, Any]) -> str:
    out = [f"session {t['session']}  repo {t['repo']}  config {t['config']}", ""]
    for s in t["stops"]:
        acc = f"  {s['acceptance']['passed']}/{s['acceptance']['total']} tests pass" if s["acceptance"] else ""
        out.append(f"stop {s['stop']}  {s['time']}  {s['verdict']}{acc}  {_num(s['duration'], 's')}  ref {s['ref']}")
        if s.get("blocked_by"):
            out.append(f"  blocked by: {_indent(s['blocked_by'])}")
        out += [f"  failing {f.get('id')}: {_indent(str(f.get('message', '')))}" for f in s["failing"]]
        out += [f"  problem: {_indent(str(p))}" for p in s["problems"]]
        if s["review"]:
            r = s["review"]
            out.append(f"  review ({r['mode']}): {r['verdict']}, ${r['cost_usd']}, {_num(r['duration'], 's')}")
            out += [f"    {_indent(_finding_text(f))}" for f in r["findings"]]
            out += [f"    error: {e}" for e in r["errors"]]
        if isinstance(s["breaker"], dict):
            out += [f"  breaker: {k.replace('_', ' ')}: {v}" for k, v in s["breaker"].items()]
        if s["appeal"]:
            a = s["appeal"]
            out.append(f"  appeal {'accepted' if a.get('accepted') else 'refused'}: {_indent(str(a.get('reason', '')))}"
                       + ("" if a.get("accepted") else f" (refused: {a.get('refused')})"))
        if s["cached"]:
            out.append("  cached: the tests did not run again, nothing they read had changed")
        if s["leak"]:
            out.append(f"  leak: the transcript shows hidden test content ({s['leak']})")
        if s["label"]:
            out.append(f"  labelled {s['label']['label']}" + (f": {s['label']['note']}" if s["label"]["note"] else ""))
    tot = t["total"]
    out += ["", f"{_plural(tot['stops'], 'stop')}, {_plural(tot['blocks'], 'block')}, {tot['gate_seconds']}s in the gate, "
                f"${tot['review_cost_usd']} for reviewers (writer cost: see the summary)"]
    agent = t.get("agent")
    if agent:  # the agent's own session, from its transcript (the last stop's figures: its totals)
        cost = f"${agent['usd']}" if agent.get("usd") is not None else \
            f"cost unknown ({', '.join(agent.get('unknown') or [])} not in the price table of {agent.get('prices')})"
        out.append(f"the agent's session: {cost}, {_num(agent.get('seconds'), 's')} from its first to its last transcript entry")
    return "\n".join(out)
