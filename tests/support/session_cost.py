"""The agent's session's cost and time as the real Claude Code writes its transcript (issue 38 item 7).

The scripted Messages API returns usage on every reply; Claude Code writes it into the transcript (one
entry per content block of a reply, the reply's id and usage repeated). The ledger's `agent` figures at
the last stop must be what the transcript's replies cost, each counted once at its model's price, and
the session's time its first to its last entry; the report shows them per configuration.

`check(s, g)` asserts it of a gated session whose replies include one with a text and a tool call (two transcript
entries): tests/e2e/test_gate_e2e.py's blocked-then-fixed session (it had a session of its own, ~2.4 CPU-s).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from donegate.report.read import agent_of
from donegate.sessions import usage

from .gated import kit_cmd


def expected(entries: list[dict]) -> tuple[dict[str, dict[str, int]], float, int]:
    """(tokens per model, each reply counted once by its id; the first to last entry in seconds; the most
    entries one reply was written as)."""
    replies: dict[str, dict] = {}
    times = []
    for e in entries:
        if isinstance(e.get("timestamp"), str):
            times.append(dt.datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")))
        m = e.get("message")
        if e.get("type") == "assistant" and isinstance(m, dict) and isinstance(m.get("usage"), dict) and m.get("id"):
            replies[m["id"]] = m
    tokens: dict[str, dict[str, int]] = {}
    for m in replies.values():
        u, t = m["usage"], tokens.setdefault(m["model"], dict.fromkeys(usage.KINDS, 0))
        for kind, key in (("input", "input_tokens"), ("output", "output_tokens"),
                          ("cache_write", "cache_creation_input_tokens"), ("cache_read", "cache_read_input_tokens")):
            t[kind] += u.get(key) or 0
    repeated = max(sum(1 for e in entries if (e.get("message") or {}).get("id") == mid) for mid in replies)
    return tokens, (max(times) - min(times)).total_seconds(), repeated


def check(s: Any, g: Any) -> None:
    """The ledger's agent figures of session `s` (a `Session` of GatedRepo `g`, its only one) against its transcript,
    and the report's."""
    entries = s.res.read_transcript()
    tokens, seconds, repeated = expected(entries)
    assert repeated >= 2, "a reply with a text and a tool call is written as two entries: the shape this check is about"
    first, last = agent_of(s.stops[0]), agent_of(s.stops[-1])
    assert {m: {k: v for k, v in t.items() if k != "usd"} for m, t in last["models"].items()} == tokens
    assert 0 < first["seconds"] < last["seconds"] <= seconds + 1e-3
    # A model the price table does not know is unknown, not $0 (the pinned Claude Code's default is in it).
    (model,) = tokens
    if usage.price_of(model) is None:
        assert last["usd"] is None and last["unknown"] == [model] and last["models"][model]["usd"] is None
    else:
        assert last["usd"] == pytest.approx(usage.cost(tokens[model], model), abs=2e-6) and last["usd"] > first["usd"] > 0
        # ... and it is what Claude Code itself says the session cost (its own price list, `total_cost_usd`)
        assert last["usd"] == pytest.approx(s.res.result["total_cost_usd"], abs=2e-6), (last, s.res.result)
    summary = json.loads(kit_cmd(g.kit, g.home, "report", "--json").stdout)
    (group,) = summary["groups"]
    # The report keeps a stop's time in tenths as `round(seconds * 10)` (report/rows.py): round(0.15, 1) is 0.1, that 0.2.
    assert group["agent_seconds_per_session"] == round(round(last["seconds"] * 10) / 10, 1)
    assert (group["agent_sessions_priced"], group["agent_sessions_unpriced"]) == ((0, 1) if last["usd"] is None else (1, 0))
