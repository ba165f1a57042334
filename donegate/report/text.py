"""Rendering: the summary as aligned text (or one block per group when too wide) or Markdown, and the
hash chain's verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from donegate.report.read import ATTENTION
from donegate.core.util import plural



def _num(value: Any, unit: str = "", prefix: str = "") -> str:
    return "-" if value is None else f"{prefix}{value}{unit}"


# (header, cell) per column; every cell prints numbers exactly as `--json` has them.
COLUMNS: list[tuple[str, Any]] = [
    ("sessions", lambda n: _num(n["sessions"])),
    ("stops", lambda n: _num(n["stops"])),
    ("blocks", lambda n: _num(n["blocks"])),
    ("justified", lambda n: _num(n["justified"])),
    ("unjustified", lambda n: _num(n["unjustified"])),
    ("unlabelled", lambda n: _num(n["unlabelled"])),
    ("gave up", lambda n: _num(n["gave_up"])),
    ("appeals", lambda n: _num(n["appeals"])),
    ("ended passing", lambda n: _num(n["ended_passing"])),
    ("requirements", lambda n: f"{n['requirements_passed']}/{n['requirements_sealed']}"),
    ("rate", lambda n: _num(n["requirement_rate_pct"], "%")),
    # The agent's own session (its model calls, first to last transcript entry), then the gate's share of it
    # (the kit's writer and reviewers; the hook's own time). "+N unpriced": sessions on a model the price
    # table does not know, left out of the mean, never counted as $0.
    ("agent $/session", lambda n: _num(n["agent_cost_per_session_usd"], prefix="$")
     + (f" +{n['agent_sessions_unpriced']} unpriced" if n["agent_sessions_unpriced"] else "")),
    ("agent time/session", lambda n: _num(n["agent_seconds_per_session"], "s")),
    ("gate $/session", lambda n: _num(n["cost_per_session_usd"], prefix="$")),
    ("gate time/session", lambda n: _num(n["seconds_per_session"], "s")),
    ("left for a person", lambda n: _num(n["left_for_person"])),
]


def _rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    by = summary["by"]
    rows = [(g[by], g) for g in summary["groups"]]
    if len(rows) > 1:
        rows.append(("all", summary["total"]))
    return rows


def _aligned(rows: list[list[str]]) -> list[str]:
    """Columns as wide as their widest cell: the first left-aligned, numbers right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False))).rstrip()
            for r in rows]


def render_table(summary: dict[str, Any], width: int) -> list[str]:
    """One row per group if that fits `width`; else one column per group; else one block per group."""
    headers = [h for h, _ in COLUMNS]
    rows = [(name, [cell(n) for _, cell in COLUMNS]) for name, n in _rows(summary)]
    wide = [[summary["by"], *headers], *([name, *cells] for name, cells in rows)]
    tall = [[summary["by"], *(name for name, _ in rows)], *([h, *(cells[i] for _, cells in rows)] for i, h in enumerate(headers))]
    for table in (wide, tall):
        lines = _aligned(table)
        if max(map(len, lines)) <= width:
            return lines
    out = []
    for name, cells in rows:
        out += [f"{summary['by']} {name}", *("  " + line for line in _aligned([[h, c] for h, c in zip(headers, cells, strict=False)]))]
    return out


def render_markdown(summary: dict[str, Any]) -> list[str]:
    header = [summary["by"], *(h for h, _ in COLUMNS)]
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(COLUMNS)]
    out += ["| " + " | ".join([name.replace("|", "\\|"), *(cell(n) for _, cell in COLUMNS)]) + " |"
            for name, n in _rows(summary)]
    return out


def _plural(n: int, word: str) -> str:
    return plural(n, word, grouped=True)


def notes(summary: dict[str, Any]) -> list[str]:
    """What the reader must know about what was not counted."""
    out = []
    chain = summary.get("chain") or {"intact": True}
    if not chain["intact"]:  # first: the numbers below count lines someone changed by hand
        where = f" of {Path(chain['ledger']).name}" if len(summary["ledgers"]) > 1 else ""
        out.append(f"the hash chain breaks at line {chain['line']:,}{where}: {chain['why']} "
                   "(`donegate report --verify` checks it; the counts include the lines as they are now)")
    skipped = summary["skipped"]
    if skipped["count"]:
        named = ", ".join(f"line {e['line']} {e['why']}" + (f" ({Path(e['ledger']).name})" if len(summary["ledgers"]) > 1 else "")
                          for e in skipped["examples"][:5])
        more = skipped["count"] - min(5, len(skipped["examples"]))
        out.append(f"{_plural(skipped['count'], 'line')} skipped: {named}" + (f" and {more:,} more" if more > 0 else ""))
    if summary["ignored_events"]:
        listed = ", ".join(f"{name} ({n:,})" for name, n in summary["ignored_events"].items())
        out.append(f"events the report does not read: {listed}")
    if summary["labels"]["unmatched"]:
        unmatched = summary["labels"]["unmatched"]
        out.append(f"{_plural(len(unmatched), 'label')} {'names' if len(unmatched) == 1 else 'name'} no blocking stop "
                   "in these ledgers: " + ", ".join(unmatched[:5]))
    from donegate.report.hardcoding import line

    if line(summary.get("hard_coding") or {}):
        out.append(line(summary["hard_coding"]))
    from donegate.report.own_counts import lines

    out += lines(summary.get("own_suite") or {})
    if summary["writer_cost_unattributed_usd"]:
        out.append(f"${summary['writer_cost_unattributed_usd']} of writer cost belongs to repositories/configurations "
                   "with no session in this report")
    return out


def _attention(summary: dict[str, Any], markdown: bool) -> list[str]:
    left = summary["left_for_person"]
    if not left["count"]:
        return []
    shown = len(left["latest"])
    head = (f"Left for a person: {_plural(left['count'], 'session')}"
            + (f", the {shown} latest shown" if left["count"] > shown else "")
            + " (donegate report --session ID shows one stop by stop):")
    by = summary["by"]
    lines = [f"- `{s['session']}` {by} {s[by]}: " if markdown else f"  {s['session']}  {by} {s[by]}: " for s in left["latest"]]
    why = [("gave up" + ("" if s["last_verdict"] == "gave_up" else f", last stop {s['last_verdict']}"))
           if s["gave_up"] else f"ended on {s['last_verdict']}" for s in left["latest"]]
    return ["", head, *(a + b for a, b in zip(lines, why, strict=False))]


def _appeal_lines(summary: dict[str, Any], markdown: bool) -> list[str]:
    a = summary["appeals"]
    if not a["count"]:
        return []
    shown = a["latest"][:ATTENTION]
    head = (f"Appeals: {a['count']:,} (never counted as passing; {a['upheld']} upheld, {a['rejected']} rejected, "
            f"{a['count'] - a['upheld'] - a['rejected']} unlabelled)"
            + (f", the {len(shown)} latest shown" if a["count"] > len(shown) else "")
            + ": donegate label REF upheld|rejected")
    out = ["", head]
    for x in shown:
        tests = ", ".join(x["failing"][:3]) + (f" and {len(x['failing']) - 3} more" if len(x["failing"]) > 3 else "")
        label = f" [{x['label']}]" if x["label"] else ""
        line = f"ref {x['ref']} session {x['session']}{label}: {x['reason'][:200]!r}; failing: {tests or '-'}"
        out.append(f"- {line}" if markdown else f"  {line}")
    return out


def inside_lines(summary: dict[str, Any], markdown: bool = False) -> list[str]:
    """The kit's own commands run from inside a Claude Code session: first in the report, they change
    what every number below means."""
    inside = summary.get("inside_session") or {"count": 0}
    if not inside["count"]:
        return []
    head = (f"WARNING: {_plural(inside['count'], 'command')} of the kit (seal, label, install, ...) "
            f"{'was' if inside['count'] == 1 else 'were'} run from inside a Claude Code session, where only the agent "
            "runs commands. A seal or label made there is the agent's, not a person's: check these sessions by hand.")
    out = [f"**{head}**" if markdown else head]
    for x in inside["latest"][:ATTENTION]:
        what = "refused" if x["event"] == "refused" else "DONE"
        line = f"{x['time']} {x['command']} ({what}) repo {x['repo'] or '-'} session {x['session'] or '-'}"
        out.append(f"- {line}" if markdown else f"  {line}")
    return out + [""]


def _decision_lines(summary: dict[str, Any], markdown: bool) -> list[str]:
    """A person's approve / reject of appeals and hand-overs (only when there are any: `cmd_report` adds them)."""
    made = summary.get("decisions") or []
    if not made:
        return []
    approved = sum(1 for d in made if d.get("decision") == "approve")
    out = ["", f"Decided by a person: {len(made)} ({approved} approved, {len(made) - approved} rejected), latest first:"]
    for d in reversed(made[-ATTENTION:]):
        done = {"approve": "approved", "reject": "rejected"}.get(str(d.get("decision")), str(d.get("decision")))
        line = (f"ref {d.get('ref')} session {d.get('session')} ({d.get('verdict')}): {done}"
                + (f": {str(d.get('note'))[:200]!r}" if d.get("note") else ""))
        out.append(f"- {line}" if markdown else f"  {line}")
    return out


def render(summary: dict[str, Any], markdown: bool = False, width: int = 1000) -> str:
    warning = inside_lines(summary, markdown)
    return "\n".join([*warning, _render(summary, markdown, width)])


def _render(summary: dict[str, Any], markdown: bool = False, width: int = 1000) -> str:
    names = ", ".join(summary["ledgers"])
    if not summary["lines"]:
        return f"{names}: the ledger is empty; no stop has been recorded yet."
    if not summary["groups"]:
        return "\n".join([f"{names}: {_plural(summary['lines'], 'line')}, but no stop"
                          + (f" since {summary['since']}" if summary["since"] else "") + ".", *notes(summary)])
    t = summary["total"]
    title = (f"{names}: {_plural(summary['lines'], 'line')}, {_plural(t['stops'], 'stop')} in "
             f"{_plural(t['sessions'], 'session')}, by {summary['by']}" + (f", since {summary['since']}" if summary["since"] else ""))
    body = render_markdown(summary) if markdown else render_table(summary, width)
    tail = notes(summary)
    if markdown:
        return "\n".join([f"**{title}**", "", *body, *_attention(summary, True), *_appeal_lines(summary, True),
                          *_decision_lines(summary, True), *([""] + [f"- {n}" for n in tail] if tail else [])])
    return "\n".join([title, "", *body, *_attention(summary, False), *_appeal_lines(summary, False),
                      *_decision_lines(summary, False), *([""] + tail if tail else [])])



def render_verify(v: dict[str, Any]) -> str:
    torn = f"; torn lines (a write cut off, the chain goes on): {', '.join(map(str, v['torn']))}" if v["torn"] else ""
    if v["intact"]:
        tip = (f"\n  last line's hash {v['last_hash']}: note it down, lines removed from the end leave no trace otherwise"
               if v["last_hash"] else "")
        return f"{v['ledger']}: {_plural(v['lines'], 'line')}, the hash chain is intact{torn}{tip}"
    return f"{v['ledger']}: the hash chain breaks at line {v['line']} of {v['lines']:,}: {v['why']}{torn}"
