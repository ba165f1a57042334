"""`donegate report --experiment NAME --html FILE`: the experiment harness's table as one page, from the
numbers of `report --experiment NAME` (`experiment.table.summarize`; no reader of its own): the article's
table, the task x configuration heat map, cost against requirements met, and the table's notes. The
page's frame and helpers are `donegate.report.html`'s.
"""

from __future__ import annotations

import math
from typing import Any

from donegate.core import scrub as feedback
from donegate.report.html import E, _money, _page, _pct, _secs, local_scrubber, pct, rate_bar


def _heat(rate: float | None) -> str:
    """Red (0%) through amber to green (100%)."""
    if rate is None:
        return "#eef1f4"
    hue = 120 * rate
    return f"hsl({hue:.0f}, 62%, {88 - 30 * abs(rate - 0.5):.0f}%)"


def nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least `raw`: tick steps a person reads at a glance."""
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _scatter(s: dict[str, Any]) -> str:
    """Cost per run against requirements met: a large dot (with its 95% interval) per configuration, a
    small one per run (summarize's `points`)."""
    rows = [r for r in s["configurations"] if r["rate"] is not None and r["cost_per_run"] is not None]
    points = [p for p in s["points"] if p["of"]]
    if not rows:
        return '<p class="muted">No run has a score.</p>'
    w, h, left, bottom, top, right = 640, 320, 56, 40, 16, 150
    top_cost = max([r["cost_per_run"] for r in rows] + [p["cost"] for p in points]) or 1.0
    step = nice_step(top_cost / 4)
    ticks = math.ceil(top_cost * 1.05 / step)
    xmax = step * ticks
    px = lambda x: left + (w - left - right) * x / xmax  # noqa: E731
    py = lambda y: top + (h - top - bottom) * (1 - y)  # noqa: E731
    palette = ["#3b7dd8", "#d64545", "#2f9e5b", "#7b3fa0", "#e8830c", "#0f9aa8", "#a35d2a", "#c2478a"]
    colour = {r["config"]: palette[i % len(palette)] for i, r in enumerate(s["configurations"])}
    out = [f'<svg class="scatter" id="scatter" viewBox="0 0 {w} {h}" role="img" aria-label="cost per run against requirements met">']
    for k in range(0, 101, 25):
        y = py(k / 100)
        out.append(f'<line class="grid" x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{k}%</text>')
    for k in range(ticks + 1):
        x = step * k
        out.append(f'<text class="axis" x="{px(x):.1f}" y="{h - bottom + 16}" text-anchor="middle">{E(_money(x))}</text>')
    out.append(f'<text class="axis" x="{(left + w - right) / 2:.0f}" y="{h - 6}" text-anchor="middle">cost per run</text>')
    for p in points:
        out.append(f'<circle class="run" cx="{px(p["cost"]):.1f}" cy="{py(p["met"] / p["of"]):.1f}" r="3" fill="{colour[p["config"]]}"/>')
    for i, r in enumerate(rows):
        x, col = px(r["cost_per_run"]), colour[r["config"]]
        rate, (low, high) = r["rate"] / 100, (c / 100 for c in r["ci95"])
        out.append(f'<g class="cfgpt" data-config="{E(r["config"])}"><title>{E(r["config"])}: {_pct(rate)} of requirements '
                   f'({_pct(low)}-{_pct(high)}), {E(_money(r["cost_per_run"]))} per run</title>'
                   f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{py(low):.1f}" y2="{py(high):.1f}" stroke="{col}" stroke-width="2"/>'
                   f'<circle cx="{x:.1f}" cy="{py(rate):.1f}" r="6" fill="{col}" stroke="#fff" stroke-width="1.5"/></g>')
        out.append(f'<circle cx="{w - right + 16}" cy="{top + 10 + 18 * i}" r="5" fill="{col}"/>'
                   f'<text class="axis" x="{w - right + 26}" y="{top + 14 + 18 * i}">{E(r["config"])}</text>')
    out.append("</svg>")
    return "".join(out)


def render(s: dict[str, Any], scrub: feedback.Scrubber | None = None) -> str:
    """The experiment's page from `experiment.table.summarize` (the numbers of `report --experiment`)."""
    from donegate.experiment import table

    scrub = scrub or local_scrubber()
    S = lambda v: E(scrub(str(v)))  # noqa: E731
    configs = [r["config"] for r in s["configurations"]]
    head = ("<tr><th>configuration</th><th>runs</th><th>requirements met</th><th>rate <small>(95% interval)</small></th>"
            "<th>cost / run <small>(95% interval)</small></th><th>turns / run</th><th>time / run</th><th>blocks</th>"
            "<th>left for a person</th></tr>")
    mixed = len(s["versions"]) > 1

    def groups(r: dict[str, Any]) -> str:
        return "<small> (" + E("+".join(r["groups"])) + ")</small>"

    def unknown(r: dict[str, Any]) -> str:
        return f"<small> ({r['cost_unknown']} unknown)</small>"

    def spread(value: Any, ci: Any, show: Any) -> str:
        return "-" if value is None else E(show(value)) + (f'<small> [{E(show(ci[0]))}-{E(show(ci[1]))}]</small>' if ci else "")
    best = max((r["rate"] for r in s["configurations"] if r["rate"] is not None), default=None)
    rows = "".join(
        f'<tr data-config="{S(r["config"])}"><th scope="row">{S(r["config"])}{groups(r) if mixed else ""}</th>'
        f'<td class="n">{r["runs"]}</td>'
        f'<td class="n">{r["met"]} of {r["of"]}</td><td>{rate_bar(r["met"], r["of"], "#2f9e5b" if r["rate"] == best else "#8fb8a0")}</td>'
        f'<td class="n">{spread(r["cost_per_run"], r["cost_ci95"], _money)}'
        f'{unknown(r) if r["cost_unknown"] else ""}</td>'
        f'<td class="n">{spread(r["turns_per_run"], r["turns_ci95"], "{:.1f}".format)}</td>'
        f'<td class="n">{spread(r["seconds_per_run"], r["seconds_ci95"], _secs)}</td>'
        f'<td class="n">{r["blocks"]}</td><td class="n{" warn" if r["runs_for_person"] else ""}">{r["runs_for_person"]}</td></tr>'
        for r in s["configurations"])
    compared = table.comparison_notes(s)
    caveat = ('<div class="note" id="apart">' + "".join(f"<p>{S(n[0].upper() + n[1:])}.</p>" for n in compared) + "</div>"
              if compared else "")
    problems = "".join(f'<p class="note warn">{S(n)}</p>' for n in table.mixed_notes(s) + table.problem_notes(s))
    # Generated or scripted data is said at the top, before any number is read as a measurement.
    source = "".join(f'<p class="note warn" id="source">{S(n[0].upper() + n[1:])}.</p>' for n in table.source_notes(s))
    ran = f'<p class="hint" id="ran">{S(table.ran_with(s))}</p>' if table.ran_with(s) else ""
    heat_head = "<tr><th>task \\ configuration</th>" + "".join(f"<th>{S(c)}</th>" for c in configs) + "</tr>"
    heat_rows = []
    for t in s["tasks"]:
        cells = []
        for c in configs:
            cell = s["matrix"][t][c] or {"met": 0, "of": 0, "runs": 0}
            met, of, n = cell["met"], cell["of"], cell["runs"]
            rate = met / of if of else None
            cells.append(f'<td class="cell" style="background:{_heat(rate)}" data-task="{S(t)}" data-config="{S(c)}" '
                         f'title="{S(t)} x {S(c)}: {met} of {of} requirements in {n} run(s)"><b>{pct(met, of) if of else "-"}</b>'
                         f'<small>{met}/{of}</small></td>')
        heat_rows.append(f'<tr><th scope="row">{S(t)}</th>{"".join(cells)}</tr>')
    body = (f'<header><h1>experiment {S(s["experiment"])}</h1><p class="sub">{s["runs"]} runs · '
            f'{len(configs)} configurations · {len(s["tasks"])} tasks · {S(table.money(s))}</p>{source}{ran}</header>'
            f'<section><h2>Requirements met per configuration</h2><table class="summary" id="experiment">'
            f'<thead>{head}</thead><tbody>{rows}</tbody></table>{caveat}{problems}'
            f'<p class="hint">Requirements: the grading tests passing after each run, summed over runs. '
            f'Bars: the rate; whiskers: its 95% Wilson interval. Cost, turns and time: means per run, in brackets the '
            f'95% bootstrap interval over the runs.</p></section>'
            f'<section><h2>Task x configuration</h2><table class="heat" id="heat"><thead>{heat_head}</thead>'
            f'<tbody>{"".join(heat_rows)}</tbody></table></section>'
            f'<section><h2>Cost against requirements met</h2>{_scatter(s)}'
            f'<p class="hint">Large dots: each configuration\'s cost per run and rate (bar: 95% interval); small dots: single runs.</p></section>'
            f'<footer>Written by <code>donegate report --experiment NAME --html</code>. Self-contained: no request leaves this page.</footer>')
    return _page(f"donegate experiment {s['experiment']}", body)
