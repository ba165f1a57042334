"""What the project's own suite did (`gates.own`, written by the gate when the seal holds it: docs/own-suite.md), per
configuration: regressions blocked, tests the agents added, weakenings named, contract changes appealed.

Read in the report's one pass (`Own`, fed the lines holding the key, found by a C search of each chunk: only they are
parsed) and kept with what the report read (`donegate.report.resume`); `own_counts` reads it on a pass of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from donegate.ledger.chain import holding

KEY = b'"own":'


_COUNTS = ("stops", "contract_changes_appealed")


class Own:
    """The counts as lines are read: one per range of a ledger (`read.Partial.own`, fed in the report's one pass the
    lines holding KEY), merged in file order and kept with the range (`report.resume`): counts add up, sessions,
    regressions and weakenings are sets, tests added the most per session, so the merged counts are those of one
    reading."""

    def __init__(self, state: tuple | None = None) -> None:
        per, added, weak, regressed = state if state is not None else ({}, {}, {}, {})
        self.per: dict[str, dict[str, Any]] = {config: dict(c, sessions=set(c["sessions"])) for config, c in per.items()}
        self.added: dict[tuple[str, str], int] = {tuple(k): int(n) for k, n in added.items()}  # type: ignore[misc]
        self.weak: dict[str, set[tuple[str, str, str]]] = {config: set(w) for config, w in weak.items()}
        self.regressed: dict[str, set[tuple[str, str]]] = {config: set(r) for config, r in regressed.items()}

    def state(self) -> tuple:
        """Plain values (`marshal` writes them: a kept state is data, never code)."""
        return self.per, self.added, self.weak, self.regressed

    def add(self, line: bytes, since: bytes | None = None) -> None:
        try:
            rec = json.loads(line)
            own = rec["gates"]["own"]
        except (ValueError, KeyError, TypeError):
            return
        if rec.get("event") != "stop" or not isinstance(own, dict):
            return
        if since is not None and str(rec.get("time", "")).encode() < since:
            return
        config, session = str(rec.get("config") or "default"), str(rec.get("session") or "")
        c = self._config(config)
        c["sessions"].add(session)
        c["stops"] += 1
        failing = [f for f in own.get("failing") or [] if isinstance(f, dict)]
        blocked = rec.get("verdict") in ("block", "appealed", "gave_up")
        if blocked:  # a session blocked on the same test at every stop until it is fixed blocked one regression
            self.regressed.setdefault(config, set()).update(
                (session, test_of(str(f.get("id")))) for f in failing if not f.get("contract"))
        if rec.get("verdict") == "appealed" and (own.get("contract") or any(f.get("contract") for f in failing)):
            c["contract_changes_appealed"] += 1
        key = (config, session)
        self.added[key] = max(self.added.get(key, 0), int(own.get("added") or 0))
        self.weak.setdefault(config, set()).update(
            (session, str(w.get("test")), str(w.get("rule"))) for w in own.get("weakened") or [] if isinstance(w, dict))

    def _config(self, config: str) -> dict[str, Any]:
        return self.per.setdefault(config, {"sessions": set(), **dict.fromkeys(_COUNTS, 0)})

    def merge(self, other: Own) -> Own:
        for config, theirs in other.per.items():
            c = self._config(config)
            c["sessions"] |= theirs["sessions"]
            for name in _COUNTS:
                c[name] += theirs[name]
        for key, n in other.added.items():
            self.added[key] = max(self.added.get(key, 0), n)
        for config, w in other.weak.items():
            self.weak.setdefault(config, set()).update(w)
        for config, r in other.regressed.items():
            self.regressed.setdefault(config, set()).update(r)
        return self

    def counts(self) -> dict[str, Any]:
        """{configuration: {sessions, stops, regressions_blocked, tests_added, weakenings_named, contract_changes_appealed}}.

        A regression blocked is a distinct (session, test) of a sealed test that passed at the seal, that the agent
        did not change and that blocked a stop (the same test blocking a session's stops again and again is one, the
        cases of one parametrized test are one; two tests failing at one stop are two), as weakenings are the distinct (test, rule) a session was told; tests added
        are the most a session's stops ran of tests not in the sealed suite; a contract change appealed is an appealed
        stop whose own suite named one."""
        out = {config: {"sessions": len(c["sessions"]), "stops": c["stops"],
                        "regressions_blocked": len(self.regressed.get(config, ())),
                        "tests_added": 0, "weakenings_named": len(self.weak.get(config, ())),
                        "contract_changes_appealed": c["contract_changes_appealed"]} for config, c in self.per.items()}
        for (config, _), n in self.added.items():
            out[config]["tests_added"] += n
        return dict(sorted(out.items()))


def test_of(test_id: str) -> str:
    """The test a case belongs to: `m.py::test_size[args1-2.9M]` is `m.py::test_size` (one break of a parametrized
    test fails every case: counted per case, a real run's 3 broken tests read as 21 regressions)."""
    head, sep, name = test_id.rpartition("::")
    return head + sep + name.split("[", 1)[0]


def own_counts(files: list[Path], since: bytes | None = None) -> dict[str, Any]:
    """`Own.counts` of `files` read on a pass of its own (a C search for KEY, only the lines holding it parsed)."""
    own = Own()
    for path in files:
        for _, line in holding(path, (KEY,)):
            own.add(line, since)
    return own.counts()


def lines(counts: dict[str, Any]) -> list[str]:
    """The report's lines on it, one per configuration; none when no stop ran the project's own suite."""
    return [f"the project's own tests ({config}: {c['stops']} stops, {c['sessions']} sessions): {c['regressions_blocked']} "
            f"regressions blocked, {c['tests_added']} tests added by the agents, {c['weakenings_named']} weakenings "
            f"named, {c['contract_changes_appealed']} contract changes appealed" for config, c in counts.items()]
