"""`donegate report --experiment NAME [LEDGER ...]`: the article's table from the ledgers' `run` lines.

Per configuration: requirements passed of total, the rate with its 95% Wilson interval, requirements
missed, cost, turns and time per run (means, each with a 95% bootstrap interval over the runs), runs
left for a person; which pairs of configurations the data tell apart (rates: Newcombe's interval of the
difference; cost, turns, time: the bootstrap interval of the ratio of means); what ran the runs (agent
model, Claude Code, kit, spec hash), said when they were mixed; the task x configuration matrix; blocks per
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

from donegate.ledger import chain as ledger
from donegate.experiment.spec import ORDER
from donegate.experiment.estimate import known_cost
from donegate.core.stats import newcombe, percentile_interval, resampled_means, wilson
from donegate.core.util import plural

MEASURES = (("cost", "cost"), ("turns", "turns"), ("seconds", "time"))  # (field stem, word) of the per-run means
WHAT_RAN = ("agent_model", "claude_version", "kit_version", "spec_hash")


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
    if cost is None or isinstance(cost, dict) and cost.get("total") is None and not cost.get("unknown"):
        return "missing cost" if cost is None else "missing cost.total"
    if not isinstance(cost, dict):
        return "cost is not an object"
    if cost.get("unknown") and cost.get("total") is None and not _is_num(cost.get("estimate")):
        return "cost.estimate is not a number"  # an unknown cost always carries the estimate --max-cost counted
    for part in ("total", "agent", "writer", "reviewer"):
        if cost.get(part) is not None and not _is_num(cost[part]):
            return f"cost.{part} is not a number"
    for key in WHAT_RAN + ("source", "codex_version"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            return f"{key} is not a name"
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
        for number, _, rec in ledger.matching(path, (b'"event":"run', b'"event":"label"', b'"event":"decision"')):
            event = rec.get("event")
            if event in ("label", "decision") and rec.get("ref") and rec.get("label"):  # an appeal's decision is its label
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
    seed = sum(map(ord, experiment))  # the bootstrap's: the same report every time
    versions, group_of = _versions(runs)
    rows = []
    samples: dict[tuple[str, str], list[float]] = {}  # (config, measure): bootstrap means, for the comparisons
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
        priced = [r for r in mine if known_cost(r) is not None]  # a run killed at its time limit: cost unknown
        cost = lambda part, priced=priced: (round(sum(float(r["cost"].get(part) or 0) for r in priced) / len(priced), 4)  # noqa: E731
                                            if priced else None)
        values = {"cost": [known_cost(r) or 0.0 for r in priced],
                  "turns": [float(r["turns"]) for r in mine if _is_num(r.get("turns"))],
                  "seconds": [float(r["duration"]) for r in mine if _is_num(r.get("duration"))]}
        spread: dict[str, Any] = {}
        for measure, _ in MEASURES:
            vals = values[measure]
            if len(vals) >= 2:
                samples[(name, measure)] = resampled_means(vals, seed + len(samples))
                spread[f"{measure}_ci95"] = [round(x, 4) for x in percentile_interval(samples[(name, measure)])]
            else:
                spread[f"{measure}_ci95"] = None
        rows.append({
            "config": name, "runs": n, "met": met, "of": of, "rate": round(100 * met / of, 1) if of else None,
            "ci95": [round(100 * lo, 1), round(100 * hi, 1)], "missed": of - met,
            "cost_per_run": cost("total"), "agent_per_run": cost("agent"), "writer_per_run": cost("writer"),
            "reviewer_per_run": cost("reviewer"), "cost_total": round(sum(values["cost"]), 4),
            "cost_unknown": n - len(priced), "cost_estimated": round(sum(float(r["cost"].get("estimate") or 0) for r in mine
                                                                        if known_cost(r) is None), 4),
            "seconds_per_run": round(sum(values["seconds"]) / len(values["seconds"]), 1) if values["seconds"] else None,
            "turns_per_run": round(sum(values["turns"]) / len(values["turns"]), 1) if values["turns"] else None,
            **spread, "groups": sorted({group_of[id(r)] for r in mine}),
            "runs_for_person": sum(1 for r in mine if _person(r)), "gave_up": sum(1 for r in mine if r.get("gave_up")),
            "stops": sum(int(r.get("stops") or 0) for r in mine), "appeals": sum(int(r.get("appeals") or 0) for r in mine),
            **blocks,
        })
    matrix: dict[str, dict[str, dict[str, int] | None]] = {t: {c: None for c in configs} for t in tasks}
    for r in runs.values():
        cell = matrix[r["task"]][r["config"]] or {"met": 0, "of": 0, "runs": 0}
        cell = {"met": cell["met"] + r["met"], "of": cell["of"] + r["of"], "runs": cell["runs"] + 1}
        matrix[r["task"]][r["config"]] = cell
    comparisons = [_compare(a, b, samples) for i, a in enumerate(rows) for b in rows[i + 1 :]]
    points = [{"config": r["config"], "task": r["task"], "cost": round(known_cost(r) or 0.0, 6), "met": r["met"], "of": r["of"]}
              for r in runs.values() if known_cost(r) is not None]
    sources: dict[str, int] = {}
    for r in runs.values():
        sources[str(r.get("source") or "unrecorded")] = sources.get(str(r.get("source") or "unrecorded"), 0) + 1
    return {
        "experiment": experiment, "ledgers": chains, "runs": len(runs), "duplicates": sorted(set(duplicates)),
        "failed_runs": sorted(failed), "skipped": {"count": skipped_count, "examples": skipped},
        "configurations": rows, "tasks": tasks, "matrix": matrix,
        "comparisons": comparisons, "points": points,
        "cost_total": round(sum(known_cost(r) or 0.0 for r in runs.values()), 4),
        "cost_unknown": sum(r["cost_unknown"] for r in rows), "versions": versions, "sources": sources,
    }


def _versions(runs: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The distinct (agent model, Claude Code, kit, spec hash) the runs recorded, lettered A, B, ... in
    the order first seen, with their runs per configuration; and each run's letter (by the record's id)."""
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    group_of: dict[int, str] = {}
    for r in runs.values():
        key = tuple(str(_ran(r, k) or "unrecorded") for k in WHAT_RAN)
        if key not in groups:
            groups[key] = {"group": _letter(len(groups)), **dict(zip(WHAT_RAN, key, strict=True)), "runs": 0, "configurations": {}}
        g = groups[key]
        g["runs"] += 1
        g["configurations"][r["config"]] = g["configurations"].get(r["config"], 0) + 1
        group_of[id(r)] = g["group"]
    return list(groups.values()), group_of


def _ran(rec: dict[str, Any], key: str) -> Any:
    """One of WHAT_RAN of a run line; a Codex run's CLI is its `codex_version` (docs/codex.md)."""
    if key == "claude_version" and rec.get("client") == "codex":
        return f"codex-cli {rec.get('codex_version') or 'unrecorded'}"
    return rec.get(key)


def _cli(version: str) -> str:
    return version if version.startswith("codex-cli ") else f"Claude Code {version}"


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"G{i + 1}"


def _compare(a: dict[str, Any], b: dict[str, Any], samples: dict[tuple[str, str], list[float]]) -> dict[str, Any]:
    """One pair of configurations: the rate difference a - b with Newcombe's 95% interval, and for cost,
    turns and time the ratio of means a / b with the 95% percentile interval of the paired bootstrap
    means (None: fewer than two runs a side, or a zero mean). `apart`: the interval excludes 0 (or 1)."""
    lo, hi = newcombe(a["met"], a["of"], b["met"], b["of"])
    diff = (a["met"] / a["of"] - b["met"] / b["of"]) if a["of"] and b["of"] else 0.0
    out: dict[str, Any] = {"a": a["config"], "b": b["config"], "same_versions": a["groups"] == b["groups"] and len(a["groups"]) == 1,
                           "rate": {"diff": round(100 * diff, 1), "ci95": [round(100 * lo, 1), round(100 * hi, 1)],
                                    "apart": lo > 0 or hi < 0}}
    for measure, _ in MEASURES:
        sa, sb = samples.get((a["config"], measure)), samples.get((b["config"], measure))
        ma, mb = a[f"{measure}_per_run"], b[f"{measure}_per_run"]
        if not sa or not sb or not ma or not mb or min(sb) <= 0:
            out[measure] = None
            continue
        lo_r, hi_r = percentile_interval([x / y for x, y in zip(sa, sb, strict=True)])
        out[measure] = {"ratio": round(ma / mb, 2), "ci95": [round(lo_r, 2), round(hi_r, 2)], "apart": lo_r > 1 or hi_r < 1}
    return out


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------

HEAD = ["configuration", "requirements passed", "rate (95% CI)", "missed", "cost per run (95% CI)", "turns (95% CI)",
        "time per run (95% CI)", "runs for a person", "runs"]
BLOCK_HEAD = ["configuration", "blocks", "justified", "unjustified", "likely unjustified", "unlabelled", "gave up", "appeals",
              "upheld", "rejected"]


def _rate(row: dict[str, Any]) -> str:
    if row["rate"] is None:
        return "-"
    return f"{row['rate']:.0f}% [{row['ci95'][0]:.0f}-{row['ci95'][1]:.0f}]"


def _spread(value: float | None, ci: list[float] | None, fmt: str) -> str:
    if value is None:
        return "?"
    return fmt.format(value) + (f" [{fmt.format(ci[0])}-{fmt.format(ci[1])}]" if ci else "")


def _cost_cell(r: dict[str, Any]) -> str:
    cell = _spread(r["cost_per_run"], r["cost_ci95"], "${:.4f}")
    return cell + (f" ({r['cost_unknown']} unknown)" if r["cost_unknown"] else "")


def _table_rows(s: dict[str, Any]) -> list[list[str]]:
    mixed = len(s["versions"]) > 1
    return [[r["config"] + (f" ({'+'.join(r['groups'])})" if mixed else ""), f"{r['met']} of {r['of']}", _rate(r), str(r["missed"]),
             _cost_cell(r), _spread(r["turns_per_run"], r["turns_ci95"], "{:.1f}"),
             _spread(r["seconds_per_run"], r["seconds_ci95"], "{:.1f}") + " s", str(r["runs_for_person"]), str(r["runs"])]
            for r in s["configurations"]]


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


def _pair(c: dict[str, Any], measure: str) -> str:
    """`tests above none by 20 points [3-35]`, `retry 2.4x tests [1.8-3.1]`."""
    if measure == "rate":
        d, (lo, hi) = c["rate"]["diff"], c["rate"]["ci95"]
        hi_name, lo_name = (c["a"], c["b"]) if d >= 0 else (c["b"], c["a"])
        lo, hi = (lo, hi) if d >= 0 else (-hi, -lo)
        return f"{hi_name} above {lo_name} by {abs(d):.0f} points [{lo:.0f} to {hi:.0f}]"
    m = c[measure]
    return f"{c['a']} {m['ratio']:.2f}x {c['b']} [{m['ci95'][0]:.2f}-{m['ci95'][1]:.2f}]"


def comparison_notes(s: dict[str, Any]) -> list[str]:
    """Which pairs of configurations the data tell apart, and which not, per measure (from `comparisons`):
    requirements met by Newcombe's 95% interval of the difference of rates; cost, turns and time by the 95%
    bootstrap interval of the ratio of means (2,000 resamples of the runs)."""
    out: list[str] = []
    pairs = s["comparisons"]
    if not pairs:
        return out
    same = [c for c in pairs if not c["rate"]["apart"]]
    apart = [c for c in pairs if c["rate"]["apart"]]
    if same and not apart and len(s["configurations"]) > 2:
        out.append("requirements met: no two configurations are told apart (Newcombe's 95% interval of each difference "
                   "includes 0; more repetitions narrow the intervals)")
    else:
        if apart:
            out.append("requirements met, told apart (Newcombe's 95% interval of the difference excludes 0): "
                       + "; ".join(_pair(c, "rate") for c in apart))
        if same:
            out.append("requirements met, not told apart (the interval includes 0): " + ", ".join(f"{c['a']} / {c['b']}" for c in same))
    for measure, word in MEASURES:
        have = [c for c in pairs if c[measure]]
        if not have:
            continue
        told = [c for c in have if c[measure]["apart"]]
        if told:
            out.append(f"{word} per run, told apart (95% bootstrap interval of the ratio of means excludes 1): "
                       + "; ".join(_pair(c, measure) for c in told))
        not_told = [c for c in have if not c[measure]["apart"]]
        if not_told:
            out.append(f"{word} per run, not told apart: " + ", ".join(f"{c['a']} / {c['b']}" for c in not_told))
    if len(pairs) > 1:
        out.append(f"each interval is for one pair, not corrected for the {len(pairs)} pairs compared; requirements "
                   "within a run are counted as independent")
    return out


def mixed_notes(s: dict[str, Any]) -> list[str]:
    """What ran the runs: one line when it was the same for all, else a warning and the groups."""
    groups = s["versions"]
    if not groups:
        return []
    what = lambda g: (f"agent model {g['agent_model']}, {_cli(g['claude_version'])}, "  # noqa: E731
                      f"donegate {g['kit_version']}, spec {g['spec_hash']}")
    if len(groups) == 1:
        return []
    lines = [f"WARNING: the runs were mixed: {len(groups)} combinations of agent model, Claude Code, kit and spec "
             "(differences between configurations may be the versions'; compare within a group)"]
    for g in groups:
        confs = ", ".join(f"{k} {v}" for k, v in g["configurations"].items())
        lines.append(f"group {g['group']}: {what(g)}: {plural(g['runs'], 'run')} ({confs})")
    return lines


def ran_with(s: dict[str, Any]) -> str:
    """The one combination that ran every run (empty when mixed: `mixed_notes` says it)."""
    if len(s["versions"]) != 1:
        return ""
    g = s["versions"][0]
    return (f"Ran with agent model {g['agent_model']}, {_cli(g['claude_version'])}, donegate {g['kit_version']}, "
            f"spec {g['spec_hash']}.")


def money(s: dict[str, Any]) -> str:
    """The experiment's dollars, labelled by where they come from: a scripted server's token counts or
    generated data are no money spent."""
    src = s["sources"]
    amount = f"${s['cost_total']:.4f}"
    if src.get("generated"):
        return f"{amount} of generated data (no session ran, no money spent)"
    if src and set(src) == {"scripted"}:
        return f"{amount} computed from a scripted server's tokens (no money spent)"
    if src.get("scripted"):
        return f"{amount} in all ({src['scripted']} of the runs scripted: their part is no money spent)"
    return f"{amount} in all"


def source_notes(s: dict[str, Any]) -> list[str]:
    out = []
    if s["sources"].get("generated"):
        out.append("these runs are GENERATED data (a fixture of run lines): no session ran; the numbers illustrate "
                   "the report and measure nothing")
    elif s["sources"].get("scripted"):
        out.append("scripted runs: the models are a scripted stand-in, so the outcomes follow the script and the "
                   "dollars are Claude Code's computation from token counts, not money spent")
    if s["cost_unknown"]:
        est = sum(r["cost_estimated"] for r in s["configurations"])
        out.append(f"{plural(s['cost_unknown'], 'run')} killed at its time limit: cost unknown (left out of the cost "
                   f"per run; --max-cost counted them at an estimated ${est:.4f})")
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
    return comparison_notes(s) + mixed_notes(s) + source_notes(s) + problem_notes(s)


def render(s: dict[str, Any], fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(s, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        keys = ["config", "runs", "met", "of", "rate", "ci95_low", "ci95_high", "missed", "cost_per_run", "agent_per_run",
                "writer_per_run", "reviewer_per_run", "seconds_per_run", "turns_per_run", "cost_unknown", "groups", "runs_for_person", "gave_up",
                "stops", "blocks", "justified", "unjustified", "likely_unjustified", "unlabelled", "appeals",
                "appeals_upheld", "appeals_rejected"]
        w.writerow(["experiment", *keys])
        for r in s["configurations"]:
            w.writerow([s["experiment"], *(r["ci95"][0] if k == "ci95_low" else r["ci95"][1] if k == "ci95_high"
                                           else "+".join(r[k]) if k == "groups" else r[k] for k in keys)])
        return buf.getvalue().rstrip("\n")
    if not s["runs"]:
        return "\n".join([f"No runs of experiment {s['experiment']} in {', '.join(c['ledger'] for c in s['ledgers']) or 'no ledger'}.",
                          *problem_notes(s)])
    md = fmt == "markdown"
    table = _markdown if md else _aligned
    total_met = sum(r["met"] for r in s["configurations"])
    total_of = sum(r["of"] for r in s["configurations"])
    lines = [f"{'## ' if md else ''}Experiment {s['experiment']}: {s['runs']} runs, {total_met} of {total_of} requirements met, "
             f"{money(s)}", *([ran_with(s)] if ran_with(s) else []), ""]
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
