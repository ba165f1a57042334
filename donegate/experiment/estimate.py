"""What runs will cost and take, before they are done: for `experiment run --dry-run`, for a run killed
at its time limit (its agent's cost is unknown: Claude Code reports it only at the end), and for
`--max-cost`, which counts such a run by its estimate, never as free.

Per configuration, the first of:
1. this experiment's earlier runs in the ledger (the mean of those whose cost is known);
2. runs of a configuration of the same name in other experiments of the ledger;
3. the published figures (PRIOR) for the predefined configurations.
Each estimate says which it is. Scripted runs (`--scripted`) estimate scripted runs only: their
dollars are a computation from a scripted server's token counts, not a price.
"""

from __future__ import annotations

from typing import Any

# The article's tinydb runs (shared/reference/the-kit.md): cost per run, and seconds (gated runs took
# 54-86 s, ungated 33 s: the middle of the range for each gated one). `retry` from the peer evaluation
# the issue cites: about 2.4 times the specific gate's cost and twice its turns.
PRIOR: dict[str, tuple[float, float]] = {
    "none": (0.085, 33.0), "tests": (0.20, 70.0), "reviewers": (0.15, 70.0), "tests+reviewers": (0.28, 86.0),
    "tests+critic": (0.28, 86.0), "retry": (0.48, 140.0),
}
PRIOR_SOURCE = {name: "the article's tinydb runs" for name in PRIOR} | {"retry": "the peer evaluation: 2.4x the gate's cost"}


def known_cost(rec: dict[str, Any]) -> float | None:
    """A run line's total cost, None when it is unknown (killed at its time limit)."""
    total = (rec.get("cost") or {}).get("total")
    return float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else None


def counted_cost(rec: dict[str, Any]) -> float:
    """What a run counts toward `--max-cost`: its cost, or its estimate when the cost is unknown."""
    known = known_cost(rec)
    return known if known is not None else float((rec.get("cost") or {}).get("estimate") or 0.0)


class Estimate:
    def __init__(self, cost: float | None, seconds: float | None, source: str, runs: int = 0) -> None:
        self.cost = cost
        self.seconds = seconds
        self.source = source  # where the figures come from, said beside them
        self.runs = runs  # earlier runs they are the mean of (0: a prior)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def per_configuration(records: list[dict[str, Any]], experiment: str, configs: list[str],
                      scripted: bool = False) -> dict[str, Estimate]:
    """{configuration: Estimate} from the ledger's `run` lines (`records`), else the priors."""
    def usable(r: dict[str, Any]) -> bool:
        return (r.get("source") == "scripted") == scripted and known_cost(r) is not None

    out: dict[str, Estimate] = {}
    for name in configs:
        for mine, where in ((lambda r: r.get("experiment") == experiment, f"{experiment}'s earlier runs"),
                            (lambda r: r.get("experiment") != experiment, "runs of other experiments in the ledger")):
            runs = [r for r in records if r.get("config") == name and mine(r) and usable(r)]
            if runs:
                cost = _mean([known_cost(r) or 0.0 for r in runs])
                seconds = _mean([float(r["duration"]) for r in runs if isinstance(r.get("duration"), (int, float))])
                out[name] = Estimate(cost, seconds, where + (" (scripted)" if scripted else ""), len(runs))
                break
        else:
            if name in PRIOR and not scripted:
                out[name] = Estimate(*PRIOR[name], PRIOR_SOURCE[name])
            else:
                out[name] = Estimate(None, None, "no earlier run" + ("" if scripted else " and no published figure"))
    return out


def agent_cost(records: list[dict[str, Any]], experiment: str, config: str, scripted: bool) -> float:
    """The mean agent cost of the configuration's earlier runs `records` (the ledger's run lines, or its
    prior): a killed run's estimate."""
    runs = [r for r in records if r.get("experiment") == experiment and r.get("config") == config
            and (r.get("source") == "scripted") == scripted and known_cost(r) is not None
            and isinstance((r.get("cost") or {}).get("agent"), (int, float))]
    if runs:
        return sum(float(r["cost"]["agent"]) for r in runs) / len(runs)
    est = per_configuration(records, experiment, [config], scripted)[config]
    if est.cost is not None:
        return est.cost
    # A custom configuration with no earlier run: any run of the experiment, else the dearest prior
    # (an estimate that errs toward stopping early, never toward spending past the cap).
    known = [float(r["cost"]["agent"]) for r in records if r.get("experiment") == experiment
             and isinstance((r.get("cost") or {}).get("agent"), (int, float))]
    return sum(known) / len(known) if known else max(c for c, _ in PRIOR.values())
