"""The measured hard-coding rate: how often a held-back test blocked a stop whose shown tests all passed
(`gates.acceptance.held_back`, written by the gate when the seal holds tests back: `donegate.seal.held`).

A stop whose shown tests pass but a held-back test fails is what a session that fits the product to the values
its blocks showed looks like (or one that missed a requirement nobody showed it). Read on its own pass over the
ledgers: only the lines holding the key are parsed (in the report's one pass, `read.scan`). Totals only (not by group).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from donegate.ledger.chain import holding

KEY = b'"held_back":'


def held(line: bytes, since: bytes | None = None) -> tuple[int, int, int] | None:
    """(1, shown passed, blocked by a held-back test) of a line holding KEY that is a stop's with held-back results
    (from `since` on); None for any other line. The report reads every line once and calls this on those holding KEY."""
    try:
        rec = json.loads(line)
        result = rec["gates"]["acceptance"]["held_back"]
    except (ValueError, KeyError, TypeError):
        return None
    if rec.get("event") != "stop" or not isinstance(result, dict):
        return None
    if since is not None and str(rec.get("time", "")).encode() < since:
        return None
    return 1, int(result.get("shown_passed") is True), int(result.get("blocked") is True)


def rate(stops: int, shown: int, blocked: int) -> dict[str, Any]:
    """{stops_with_held_back, shown_passed, held_back_blocked, rate_pct}: rate = blocked / shown_passed."""
    return {"stops_with_held_back": stops, "shown_passed": shown, "held_back_blocked": blocked,
            "rate_pct": round(100 * blocked / shown, 1) if shown else None}


def hard_coding(files: list[Path], since: bytes | None = None) -> dict[str, Any]:
    """`rate` over `files`, on a pass of its own (the report counts it in its one pass: `read.Partial.held`)."""
    counts = [0, 0, 0]
    for path in files:
        for _, line in holding(path, (KEY,)):
            row = held(line, since)
            if row is not None:
                counts = [a + b for a, b in zip(counts, row, strict=True)]
    return rate(*counts)


def line(rate: dict[str, Any]) -> str:
    """The report's one line on it; empty when no stop ran held-back tests."""
    if not rate.get("stops_with_held_back"):
        return ""
    if not rate["shown_passed"]:
        return (f"hard-coding: no stop's shown tests all passed ({rate['stops_with_held_back']} stops ran held-back "
                "tests)")
    return (f"hard-coding: {rate['held_back_blocked']} of {rate['shown_passed']} stops whose shown tests passed were "
            f"blocked by a held-back test ({rate['rate_pct']}%)")
