"""`donegate report --experiment NAME [LEDGER ...]`: the article's table from the ledgers' `run` lines.

Per configuration: requirements passed of total, the rate with its 95% Wilson interval, requirements
missed, cost and time per run, runs left for a person; the task x configuration matrix; blocks per
configuration, justified / unjustified by a person's `donegate label`, else `likely unjustified` when
the run ended with every grading test passing while an acceptance test that blocked it still failed.
Several ledgers are read at once (shards of one experiment), each hash chain verified on its own; a
run key found twice counts once.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from donegate import ledger
from donegate.experiment.spec import ORDER
from donegate.stats import overlap, wilson
from donegate.util import plural


def _order(names: set[str], first_seen: dict[str, int]) -> list[str]:
    known = [n for n in ORDER if n in names]
    return known + sorted((n for n in names if n not in ORDER), key=lambda n: first_seen[n])


def _person(rec: dict[str, Any]) -> bool:
    """A run the kit itself hands to a person: the gate gave up, an appeal was made, or the session
    ended on a block or an error."""
    return (bool(rec.get("gave_up")) or bool(rec.get("appeals")) or rec.get("last_verdict") in ("block", "hint", "error", "appealed")
            or rec.get("subtype") not in (None, "success"))


EXAMPLES = 20  # skipped run lines kept by place (the text names the first few)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _strings(value: Any) -> bool:
    """A list of test ids or stop refs (None among them: a failing entry the gate wrote without an id)."""
    return isinstance(value, list) and all(v is None or isinstance(v, str) for v in value)


def damaged(rec: dict[str, Any]) -> str | None:
    """Why a `run` line cannot be counted (None: it can). The harness writes every field below; a line
    lacking one, or holding the wrong type, was edited by hand or damaged."""
    for key in ("task", "config"):
        if not isinstance(rec.get(key), str) or not rec[key]:
            return f"missing {key}" if rec.get(key) is None else f"{key} is not a name"
    for key in ("met", "of"):
        if key not in rec:
            return f"missing {key}"
        if not _is_count(rec[key]):
            return f"{key} is not a whole number"
    if rec["met"] > rec["of"]:
        return "met is above of"
    cost = rec.get("cost")
    if cost is None or isinstance(cost, dict) and cost.get("total") is None:
        return "missing cost" if cost is None else "missing cost.total"
    if not isinstance(cost, dict):
        return "cost is not an object"
    for part in ("total", "agent", "writer", "reviewer"):
        if cost.get(part) is not None and not _is_num(cost[part]):
            return f"cost.{part} is not a number"
    for key in ("duration", "turns", "stops", "appeals"):
        if rec.get(key) is not None and not _is_num(rec[key]):
            return f"{key} is not a number"
    for key in ("acceptance_failing", "appeal_refs"):
        if rec.get(key) is not None and not _strings(rec[key]):
            return f"{key} is not a list of names"
    blocked = rec.get("blocked_by")
    if blocked is not None and not (isinstance(blocked, list) and all(
            isinstance(b, dict) and (b.get("tests") is None or _strings(b["tests"])) for b in blocked)):
        return "blocked_by is not a list of blocks"
    if rec.get("key") is not None and not isinstance(rec["key"], str):
        return "key is not a name"
    return None


def summarize(files: list[Path], experiment: str) -> dict[str, Any]:
    """Everything `report --experiment` shows, in every format and in the HTML page (donegate.report.html
    renders this, it reads no ledger of its own): the per-configuration table, the task x
    configuration matrix, the comparisons, one point per run, and what was not counted."""
    runs: dict[str, dict[str, Any]] = {}
    duplicates: list[str] = []
    failed: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    chains = []
    skipped: list[dict[str, Any]] = []
    skipped_count = 0
    for path in files:
        v = ledger.verify(path)
        chains.append({"ledger": str(path), "lines": v["lines"], "intact": v["intact"], "first_bad_line": v["line"], "why": v["why"]})
        for number, line in ledger.read(path):
            if b'"event":"run' not in line and b'"event":"label"' not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            event = rec.get("event")
            if event == "label" and rec.get("ref"):
                labels[str(rec["ref"])] = str(rec.get("label"))  # a later label replaces an earlier one
            elif event in ("run", "run_failed") and rec.get("experiment") == experiment:
                if event == "run_failed":
                    failed.setdefault(str(rec.get("key")), rec)
                    continue
                problem = damaged(rec)
                if problem:
                    skipped_count += 1
                    if len(skipped) < EXAMPLES:
                        skipped.append({"ledger": str(path), "line": number, "why": problem})
                    continue
                # the harness always writes `key`; without one, the name it would have written
                key = rec["key"] if isinstance(rec.get("key"), str) else f"{experiment}/{rec['task']}/{rec['config']}/{rec.get('rep')}"
                if key in runs:
                    duplicates.append(key)
                else:
                    runs[key] = rec
    for key in runs:
        failed.pop(key, None)  # failed once, done later: the run line counts

    first_seen: dict[str, int] = {}
    for i, rec in enumerate(runs.values()):
        first_seen.setdefault(rec["config"], i)
    configs = _order({r["config"] for r in runs.values()}, first_seen)
    tasks = sorted({r["task"] for r in runs.values()})
    total = lambda r: float(r["cost"]["total"])  # noqa: E731
    rows = []
    for name in configs:
        mine = [r for r in runs.values() if r["config"] == name]
        met, of = sum(r["met"] for r in mine), sum(r["of"] for r in mine)
        lo, hi = wilson(met, of)
        blocks = {"blocks": 0, "justified": 0, "unjustified": 0, "likely_unjustified": 0, "unlabelled": 0,
                  "appeals_upheld": 0, "appeals_rejected": 0}
        for r in mine:
            for ref in r.get("appeal_refs") or []:
                if labels.get(str(ref)) in ("upheld", "rejected"):
                    blocks[f"appeals_{labels[str(ref)]}"] += 1
            all_met = r["met"] == r["of"]
            still = set(r.get("acceptance_failing") or [])
            for b in r.get("blocked_by") or []:
                blocks["blocks"] += 1
                label = labels.get(str(b.get("ref")))
                if label in ("justified", "unjustified"):
                    blocks[label] += 1
                elif all_met and still & set(b.get("tests") or []):
                    blocks["likely_unjustified"] += 1
                else:
                    blocks["unlabelled"] += 1
        n = len(mine)
        cost = lambda part, mine=mine, n=n: round(sum(float(r["cost"].get(part) or 0) for r in mine) / n, 4)  # noqa: E731
        rows.append({
            "config": name, "runs": n, "met": met, "of": of, "rate": round(100 * met / of, 1) if of else None,
            "ci95": [round(100 * lo, 1), round(100 * hi, 1)], "missed": of - met,
            "cost_per_run": cost("total"), "agent_per_run": cost("agent"), "writer_per_run": cost("writer"),
            "reviewer_per_run": cost("reviewer"), "cost_total": round(sum(map(total, mine)), 4),
            "seconds_per_run": round(sum(float(r.get("duration") or 0) for r in mine) / n, 1),
            "turns_per_run": round(sum(float(r.get("turns") or 0) for r in mine) / n, 1),
            "runs_for_person": sum(1 for r in mine if _person(r)), "gave_up": sum(1 for r in mine if r.get("gave_up")),
            "stops": sum(int(r.get("stops") or 0) for r in mine), "appeals": sum(int(r.get("appeals") or 0) for r in mine),
            **blocks,
        })
    matrix: dict[str, dict[str, dict[str, int] | None]] = {t: {c: None for c in configs} for t in tasks}
    for r in runs.values():
        cell = matrix[r["task"]][r["config"]] or {"met": 0, "of": 0, "runs": 0}
        cell = {"met": cell["met"] + r["met"], "of": cell["of"] + r["of"], "runs": cell["runs"] + 1}
        matrix[r["task"]][r["config"]] = cell
    comparisons = []
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            comparisons.append({"a": a["config"], "b": b["config"], "overlap": overlap(tuple(a["ci95"]), tuple(b["ci95"]))})
    points = [{"config": r["config"], "task": r["task"], "cost": round(total(r), 6), "met": r["met"], "of": r["of"]}
              for r in runs.values()]
    return {
        "experiment": experiment, "ledgers": chains, "runs": len(runs), "duplicates": sorted(set(duplicates)),
        "failed_runs": sorted(failed), "skipped": {"count": skipped_count, "examples": skipped},
        "configurations": rows, "tasks": tasks, "matrix": matrix,
        "comparisons": comparisons, "points": points, "cost_total": round(sum(map(total, runs.values())), 4),
    }


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------

HEAD = ["configuration", "requirements passed", "rate (95% CI)", "missed", "cost per run", "time per run",
        "runs for a person", "runs"]
BLOCK_HEAD = ["configuration", "blocks", "justified", "unjustified", "likely unjustified", "unlabelled", "gave up", "appeals",
              "upheld", "rejected"]


def _rate(row: dict[str, Any]) -> str:
    if row["rate"] is None:
        return "-"
    return f"{row['rate']:.0f}% [{row['ci95'][0]:.0f}-{row['ci95'][1]:.0f}]"


def _table_rows(s: dict[str, Any]) -> list[list[str]]:
    return [[r["config"], f"{r['met']} of {r['of']}", _rate(r), str(r["missed"]), f"${r['cost_per_run']:.4f}",
             f"{r['seconds_per_run']:.1f} s", str(r["runs_for_person"]), str(r["runs"])] for r in s["configurations"]]


def _matrix_rows(s: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    configs = [r["config"] for r in s["configurations"]]
    rows = []
    for t in s["tasks"]:
        cells = s["matrix"][t]
        rows.append([t] + [f"{c['met']}/{c['of']}" if c else "-" for c in (cells[k] for k in configs)])
    return ["task"] + configs, rows


def _block_rows(s: dict[str, Any]) -> list[list[str]]:
    return [[r["config"], str(r["blocks"]), str(r["justified"]), str(r["unjustified"]), str(r["likely_unjustified"]),
             str(r["unlabelled"]), str(r["gave_up"]), str(r["appeals"]), str(r["appeals_upheld"]), str(r["appeals_rejected"])]
            for r in s["configurations"]]


def _aligned(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=False)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False)))  # noqa: E731
    return [fmt(head), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)]


def _markdown(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|", *("| " + " | ".join(r) + " |" for r in rows)]


def comparison_notes(s: dict[str, Any]) -> list[str]:
    """Which configurations the 95% intervals tell apart, and which not (from `comparisons`)."""
    out = []
    rates = {r["config"]: r for r in s["configurations"]}
    same = [c for c in s["comparisons"] if c["overlap"]]
    apart = [c for c in s["comparisons"] if not c["overlap"]]
    if same and not apart and len(rates) > 2:
        out.append("every two configurations differ by less than their 95% intervals allow: the data do not tell "
                   "any of them apart (more repetitions narrow the intervals)")
    elif same:
        out.append("differ by less than the 95% intervals allow (the data do not tell them apart): "
                   + ", ".join(f"{c['a']} / {c['b']}" for c in same))
    if apart:
        def ordered(c: dict[str, Any]) -> tuple[str, str]:
            a, b = rates[c["a"]], rates[c["b"]]
            return (a["config"], b["config"]) if (a["rate"] or 0) > (b["rate"] or 0) else (b["config"], a["config"])
        out.append("told apart, the intervals do not overlap: " + ", ".join(f"{hi} above {lo}" for hi, lo in map(ordered, apart)))
    return out


def problem_notes(s: dict[str, Any]) -> list[str]:
    """What the reader must know about what was not counted: broken chains, duplicates, failed runs,
    damaged run lines."""
    out = []
    for chain in s["ledgers"]:
        if not chain["intact"]:
            out.append(f"WARNING: {chain['ledger']}: hash chain broken at line {chain['first_bad_line']} ({chain['why']})")
    if s["duplicates"]:
        out.append(f"{len(s['duplicates'])} run(s) recorded more than once, counted once: {', '.join(s['duplicates'][:5])}")
    if s["failed_runs"]:
        out.append(f"{len(s['failed_runs'])} run(s) failed and have no result yet (run the experiment again): "
                   + ", ".join(s["failed_runs"][:5]))
    skipped = s["skipped"]
    if skipped["count"]:
        several = len(s["ledgers"]) > 1
        whys = {e["why"] for e in skipped["examples"]}
        named = ", ".join(f"line {e['line']}" + (f" ({Path(e['ledger']).name})" if several else "")
                          + ("" if len(whys) == 1 else f" {e['why']}") for e in skipped["examples"][:5])
        more = skipped["count"] - min(5, len(skipped["examples"]))
        n = skipped["count"]
        out.append(f"{plural(n, 'run line')} skipped" + (f": {next(iter(whys))}" if len(whys) == 1 else "")
                   + f" ({named}{f' and {more} more' if more > 0 else ''}; the harness writes full lines: "
                   "these were edited by hand or damaged, and are not counted)")
    return out


def notes(s: dict[str, Any]) -> list[str]:
    return comparison_notes(s) + problem_notes(s)


def render(s: dict[str, Any], fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(s, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        keys = ["config", "runs", "met", "of", "rate", "ci95_low", "ci95_high", "missed", "cost_per_run", "agent_per_run",
                "writer_per_run", "reviewer_per_run", "seconds_per_run", "turns_per_run", "runs_for_person", "gave_up",
                "stops", "blocks", "justified", "unjustified", "likely_unjustified", "unlabelled", "appeals",
                "appeals_upheld", "appeals_rejected"]
        w.writerow(["experiment", *keys])
        for r in s["configurations"]:
            w.writerow([s["experiment"], *(r["ci95"][0] if k == "ci95_low" else r["ci95"][1] if k == "ci95_high" else r[k] for k in keys)])
        return buf.getvalue().rstrip("\n")
    if not s["runs"]:
        return "\n".join([f"No runs of experiment {s['experiment']} in {', '.join(c['ledger'] for c in s['ledgers']) or 'no ledger'}.",
                          *problem_notes(s)])
    md = fmt == "markdown"
    table = _markdown if md else _aligned
    total_met = sum(r["met"] for r in s["configurations"])
    total_of = sum(r["of"] for r in s["configurations"])
    lines = [f"{'## ' if md else ''}Experiment {s['experiment']}: {s['runs']} runs, {total_met} of {total_of} requirements met, "
             f"${s['cost_total']:.4f} in all", ""]
    lines += table(HEAD, _table_rows(s))
    lines += ["", f"{'### ' if md else ''}Requirements met per task and configuration (summed over repetitions)", ""]
    head, rows = _matrix_rows(s)
    lines += table(head, rows)
    lines += ["", f"{'### ' if md else ''}Blocks and appeals (labels by `donegate label`; likely unjustified: the run met "
              "every requirement while the acceptance test that blocked still failed)", ""]
    lines += table(BLOCK_HEAD, _block_rows(s))
    said = notes(s)
    if said:
        lines += [""] + [("- " if md else "") + n for n in said]
    return "\n".join(lines)
