"""The summary: the one source of every number the text, Markdown and JSON show.
"""

from __future__ import annotations

import collections
import functools
import datetime as dt
import re
import time
from pathlib import Path
from typing import Any

from donegate.errors import DonegateError
from donegate.core.util import utc_now
from donegate.ledger import chain as ledger
from donegate.report import hardcoding, resume
from donegate.report.own_counts import Own
from donegate.report.parallel import read_all
from donegate.report.read import CLAUDE, APPEALED, APPEALS_LISTED, INSIDE_LISTED, APPEAL_LABELS, ATTENTION, BLOCKING, EXAMPLES, Group, MICRO, Options, Partial, TICKS, VERDICTS, _CODE, canonical_time


def parse_since(text: str) -> bytes:
    """--since: a date, an ISO time (UTC unless it says otherwise), or '7d' / '12h' ago."""
    m = re.fullmatch(r"\s*(\d+)\s*([dh])\s*", text)
    if m:
        delta = dt.timedelta(**{"days" if m.group(2) == "d" else "hours": int(m.group(1))})
        return utc_now(time.time() - delta.total_seconds()).encode()
    when = canonical_time(text.strip())
    if when is None:
        raise DonegateError(f"--since {text!r} is not a date or time",
                            "use a date (2026-12-01), an ISO time (2026-12-01T14:00) or a span (7d, 12h)")
    return when


def _numbers(g: Group) -> dict[str, Any]:
    n, seconds, review = g.sessions, g.seconds / TICKS, g.review_cost / MICRO
    cost = g.writer_cost + review
    return {
        "sessions": n, "stops": g.stops, "blocks": g.blocks, "hints": g.hints,
        "justified": g.justified, "unjustified": g.unjustified, "unlabelled": g.blocks - g.justified - g.unjustified,
        "gave_up": g.gave_up, "appeals": g.appeals, "appeals_upheld": g.upheld, "appeals_rejected": g.rejected,
        "ended_passing": g.passing, "ended_unsealed": g.unsealed, "left_for_person": g.left, "decided_by_person": g.decided,
        "requirements_passed": g.passed, "requirements_sealed": g.sealed,
        "requirement_rate_pct": round(100 * g.passed / g.sealed, 1) if g.sealed else None,
        "writer_cost_usd": round(g.writer_cost, 4), "review_cost_usd": round(review, 4),
        "cost_usd": round(cost, 4), "cost_per_session_usd": round(cost / n, 4) if n else None,
        "gate_seconds": round(seconds, 1), "seconds_per_session": round(seconds / n, 1) if n else None,
        # The agent's own session (`donegate.sessions.usage`): its model cost and its time, per session that has
        # them; a session on a model the price table does not know is counted as unpriced, never as $0.
        "agent_cost_usd": round(g.agent_cost / MICRO, 4), "agent_sessions_priced": g.agent_priced,
        "agent_sessions_unpriced": g.agent_unpriced,
        "agent_cost_per_session_usd": round(g.agent_cost / MICRO / g.agent_priced, 4) if g.agent_priced else None,
        "agent_seconds_per_session": round(g.agent_seconds / TICKS / g.agent_timed, 1) if g.agent_timed else None,
    }


def _merge(merged: list[tuple[Path, int, Partial]]) -> tuple[dict[bytes, Group], collections.Counter, list, int]:
    """(groups by key, sessions per ((repo, config), key), the latest sessions left for a person,
    how many are left) from the folded ranges."""
    groups: dict[bytes, Group] = {}
    per_pair: collections.Counter = collections.Counter()
    latest = []
    for _, _, part in merged:
        for key, g in part.groups.items():
            groups.setdefault(key, Group(key)).add(g)
        per_pair.update(part.per_pair)
        latest += [(part.index, *item) for item in part.latest]
    latest = sorted(latest)[-ATTENTION:][::-1]  # the latest last stops first
    return groups, per_pair, [item[2:] for item in latest], sum(p.left for _, _, p in merged)


def _attribute_writers(groups: dict[bytes, Group], per_pair: collections.Counter, writes: collections.Counter) -> float:
    """Share each (repo, config)'s writer cost among that pair's sessions evenly; return the cost of
    writers whose pair has no session in what was read."""
    sessions: collections.Counter = collections.Counter()
    for (pair, _), n in per_pair.items():
        sessions[pair] += n
    for (pair, key), n in sorted(per_pair.items()):  # sorted: the same sums in the same order every time
        if pair in writes:
            groups[key].writer_cost += writes[pair] * n / sessions[pair] / MICRO
    return sum(cost for pair, cost in writes.items() if not sessions[pair]) / MICRO


def _text(key: bytes) -> str:
    return key.decode("utf-8", "replace") or "(none)"


def summarize(files: list[Path], by: str = "config", since: bytes | None = None, jobs: int = 1,
              fast: bool = True, keep: bool = False) -> dict[str, Any]:
    """The summary of `files`. `keep`: read only what was added since the last report that kept its reading
    (`donegate.report.resume`); the summary is the same either way."""
    return summarize_and_decisions(files, by, since, jobs, fast, keep)[0]


def summarize_and_decisions(files: list[Path], by: str = "config", since: bytes | None = None, jobs: int = 1,
                            fast: bool = True, keep: bool = False) -> tuple[dict[str, Any], dict[str, dict]]:
    """(`summarize`, the latest decision per stop ref: `labels.decisions`), from one reading of `files`. `keep`: with
    nothing new in the ledgers since the last report, what it finished (`resume.finished`), and nothing read."""
    kept = resume.finished(files, "summary", resume.mark(files, _shape(files, by, fast))) if keep and since is None else None
    if isinstance(kept, list) and len(kept) == 2:
        return kept[0], kept[1]
    return read_and_summarize(files, by, since, jobs, fast, keep)[:2]


def _shape(files: list[Path], by: str, fast: bool) -> list[Any]:
    """What shapes a summary besides the ledgers' bytes (`resume.mark`)."""
    return ["summary", [str(p) for p in files], by, fast]


def read_and_summarize(files: list[Path], by: str = "config", since: bytes | None = None, jobs: int = 1,
                       fast: bool = True, keep: bool = False, page: int = 0) -> tuple[dict[str, Any], dict[str, dict], list]:
    """`summarize_and_decisions`, and the folded ranges it was made from (with the page's first `page` sessions of
    each: `Options.page`). `keep`: what was read is kept (`resume`), and the summary once finished."""
    at = resume.mark(files, _shape(files, by, fast)) if keep and since is None else None
    merged, made = read_all(files, Options(by=by, since=since, fast=fast, page=page), jobs, keep)
    groups, per_pair, latest, left = _merge(merged)
    labels, unmatched = _count_labels(merged, groups, by, since)
    writes: collections.Counter = collections.Counter()
    for _, _, part in merged:
        writes.update(part.writes)
    unattributed = _attribute_writers(groups, per_pair, writes)
    total = Group(b"all")
    for g in groups.values():
        total.add(g)
    skipped = [{"ledger": str(path), "line": offset + n, "why": why}
               for path, offset, part in merged for n, why in part.examples][:EXAMPLES]
    events: collections.Counter = collections.Counter()
    for _, _, part in merged:
        events.update(part.events)
    summary = {
        "ledgers": [str(p) for p in files],
        "by": by,
        "since": since.decode() if since else None,
        "lines": sum(p.lines for _, _, p in merged),
        "groups": [{by: _text(key), **_numbers(groups[key])} for key in sorted(groups)],
        "total": _numbers(total),
        "left_for_person": {"count": left, "latest": [
            {"session": _text(sid), by: _text(key), "last_verdict": VERDICTS[code], "gave_up": gave}
            for sid, key, code, gave in latest]},
        "labels": {"count": labels, "unmatched": unmatched},
        "appeals": _appeals(merged, by, total),
        "inside_session": _inside(merged),
        "kit_commands": dict(sorted(sum((part.person for _, _, part in merged), collections.Counter()).items())),
        "writer_cost_unattributed_usd": round(unattributed, 4),
        "skipped": {"count": sum(p.skipped for _, _, p in merged), "examples": skipped},
        "ignored_events": dict(sorted(events.items())),
        "hard_coding": hardcoding.rate(*(sum(p.held[k] for _, _, p in merged) for k in range(3))),
        "own_suite": functools.reduce(Own.merge, (part.own for _, _, part in merged), Own()).counts(),
        "chain": _chain(merged),
    }
    if at and resume.mark(files, _shape(files, by, fast)) == at:  # nothing moved while it was read
        resume.keep_finished(files, "summary", at, [summary, made])
    return summary, made, merged


def _chain(merged: list[tuple[Path, int, Partial]]) -> dict[str, Any]:
    """The hash chain of what was read, each range's ends joined in file order (every line was checked once, when
    it was first read: `Partial.link`); a break is named as `--verify` names it (`ledger.verify`, run only then)."""
    ends: dict[Path, tuple[bytes, bool, bool]] = {}
    for path, _, part in merged:
        tail, torn, broken = ends.get(path, (ledger.GENESIS.encode(), False, False))
        if part.head is not None:
            ends[path] = (part.tail, part.tail_torn, broken or part.broken or not part.follows(tail, torn))
    for path, (_, _, broken) in ends.items():
        v = ledger.verify(path) if broken else None
        if v is not None and not v["intact"]:
            return {"intact": False, "ledger": str(path), "line": v["line"], "why": v["why"]}
    return {"intact": True, "ledger": None, "line": None, "why": "the hash chain is intact"}


def _inside(merged: list[tuple[Path, int, Partial]]) -> dict[str, Any]:
    """The kit's person-only commands run or refused inside a Claude Code session: how many, the latest."""
    latest = sorted((part.index, *item) for _, _, part in merged for item in part.inside_latest)[-INSIDE_LISTED:][::-1]
    return {"count": sum(part.inside for _, _, part in merged), "latest": [
        {"time": when, "event": event, "command": command, "repo": repo, "session": sid or None}
        for _, _, when, event, command, repo, sid in latest]}


def _appeals(merged: list[tuple[Path, int, Partial]], by: str, total: Group) -> dict[str, Any]:
    """The appeals: how many, how a person labelled them, and the latest by name with reason and tests."""
    labels: dict[str, tuple] = {}
    for _, _, part in merged:
        labels.update(part.labels)
    latest = sorted((part.index, *item) for _, _, part in merged for item in part.appeals)[-APPEALS_LISTED:][::-1]
    return {"count": total.appeals, "upheld": total.upheld, "rejected": total.rejected, "latest": [
        {"ref": ref, "session": sid, by: _text(key), "time": when, "reason": reason, "failing": failing,
         "label": labels[ref][0] if ref in labels and labels[ref][0] in APPEAL_LABELS else None}
        for _, _, ref, sid, key, when, reason, failing in latest]}


def _count_labels(merged: list[tuple[Path, int, Partial]], groups: dict[bytes, Group], by: str,
                  since: bytes | None) -> tuple[int, list[str]]:
    """Count each stop's latest label in its stop's group: (labels counted, refs of labels whose
    session is not in what was read or whose stop did not block). A label line copies its stop's time, repo and
    config; by client its stop's client is found by its ref (`Partial.clients`: a ref not there is Claude Code's)."""
    labels: dict[str, tuple] = {}
    clients: dict[str, bytes] = {}
    for _, _, part in merged:
        labels.update(part.labels)
        clients.update(part.clients)
    counted, unmatched = 0, []
    for ref, (label, when, repo, cfg, sid, verdict) in labels.items():
        if since is not None and when < since:
            continue
        key = when[:10] if by == "day" else repo if by == "repo" else clients.get(ref, CLAUDE) if by == "client" else cfg
        g = None if key is None else groups.get(key)
        fits = _CODE.get(verdict) == APPEALED if label in APPEAL_LABELS else _CODE.get(verdict) in BLOCKING
        if g is None or not fits or not any(sid in p.present for _, _, p in merged):
            unmatched.append(ref)
            continue
        counted += 1
        setattr(g, label, getattr(g, label) + 1)
    return counted, sorted(unmatched)
