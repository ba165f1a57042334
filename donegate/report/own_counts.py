"""What the project's own suite did (`gates.own`, written by the gate when the seal holds it: docs/own-suite.md), per
configuration: regressions blocked, tests the agents added, weakenings named, contract changes appealed.

Read on its own pass over the ledgers, as the hard-coding rate is (`donegate.report.hardcoding`): a C search of each
file for the key, and only the lines holding it are parsed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from donegate.ledger.chain import holding

KEY = b'"own":'


def own_counts(files: list[Path], since: bytes | None = None) -> dict[str, Any]:
    """{configuration: {sessions, stops, regressions_blocked, tests_added, weakenings_named, contract_changes_appealed}}.

    A regression blocked is a stop blocked by a sealed test that passed at the seal (and that the agent did not
    change); tests added are the most a session's stops ran of tests not in the sealed suite; weakenings are the
    distinct (test, rule) a session was told; a contract change appealed is an appealed stop whose own suite named
    one."""
    per: dict[str, dict[str, Any]] = {}
    added: dict[tuple[str, str], int] = {}
    weak: dict[str, set[tuple[str, str, str]]] = {}
    for path in files:
        for _, line in holding(path, (KEY,)):
            try:
                rec = json.loads(line)
                own = rec["gates"]["own"]
            except (ValueError, KeyError, TypeError):
                continue
            if rec.get("event") != "stop" or not isinstance(own, dict):
                continue
            if since is not None and str(rec.get("time", "")).encode() < since:
                continue
            config, session = str(rec.get("config") or "default"), str(rec.get("session") or "")
            c = per.setdefault(config, {"sessions": set(), "stops": 0, "regressions_blocked": 0, "tests_added": 0,
                                        "weakenings_named": 0, "contract_changes_appealed": 0})
            c["sessions"].add(session)
            c["stops"] += 1
            failing = [f for f in own.get("failing") or [] if isinstance(f, dict)]
            blocked = rec.get("verdict") in ("block", "appealed", "gave_up")
            if blocked and any(not f.get("contract") for f in failing):
                c["regressions_blocked"] += 1
            if rec.get("verdict") == "appealed" and (own.get("contract") or any(f.get("contract") for f in failing)):
                c["contract_changes_appealed"] += 1
            key = (config, session)
            added[key] = max(added.get(key, 0), int(own.get("added") or 0))
            weak.setdefault(config, set()).update(
                (session, str(w.get("test")), str(w.get("rule"))) for w in own.get("weakened") or [] if isinstance(w, dict))
    for (config, _), n in added.items():
        per[config]["tests_added"] += n
    for config, c in per.items():
        c["sessions"] = len(c["sessions"])
        c["weakenings_named"] = len(weak.get(config, ()))
    return dict(sorted(per.items()))


def lines(counts: dict[str, Any]) -> list[str]:
    """The report's lines on it, one per configuration; none when no stop ran the project's own suite."""
    return [f"the project's own tests ({config}: {c['stops']} stops, {c['sessions']} sessions): {c['regressions_blocked']} "
            f"regressions blocked, {c['tests_added']} tests added by the agents, {c['weakenings_named']} weakenings "
            f"named, {c['contract_changes_appealed']} contract changes appealed" for config, c in counts.items()]
