"""The ledger stage: the stop's one JSON line, appended under a lock and hash-chained (`donegate.ledger.chain`);
a lock held too long parks the line for the next append."""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from pathlib import Path
    from typing import Any

from donegate import __version__, paths
from donegate.core import deadline
from donegate.gate.stop import log, log_exception, now
from donegate.core.outcome import BLOCK, Outcome

SAID_CHARS = 2000  # the agent's last message kept on the stop line at most


def record(outcome: Outcome, payload: dict[str, Any], session: str, session_from: str | None, counters: dict[str, Any],
            cfg: dict[str, Any], t0: float, env_seen: list[str] | None = None, weak: list[str] | None = None,
            client: str = "claude", agent: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "event": "stop",
        "time": now(),
        "repo": outcome.repo or payload.get("cwd"),
        "session": session,
        "stop": counters.get("stops"),
        "stop_hook_active": payload.get("stop_hook_active"),
        "verdict": outcome.verdict,
        "gates": outcome.gates,
        **({"cached": True} if (outcome.gates.get("cache") or {}).get("hit") else {}),
        **({"session_from": session_from} if session_from else {}),
        # The text the agent was shown (blocks only): already scrubbed and capped, unlike the raw
        # messages in `gates`. Before "blocks": the report's fast path reads the line's tail.
        **({"feedback": outcome.reason} if outcome.exit_code == BLOCK else {}),
        **({"env": env_seen} if env_seen is not None else {}),
        **({"env_weakened": weak} if weak else {}),
        # The agent's last message (what it claimed), capped: for the person's report, which scrubs it before showing it.
        **({"said": said[:SAID_CHARS]} if isinstance(said := payload.get("last_assistant_message"), str) and said else {}),
        # The agent's session so far, from its transcript (`donegate.sessions.usage`): tokens per model;
        # its cost and time are `agent_usd` and `agent_seconds` below. No `cost_usd` key in it: the report's
        # fast path finds the review's by rfind.
        **({"agent": {k: v for k, v in agent.items() if k not in ("usd", "seconds")}} if agent is not None else {}),
        # The CPU the stop has used so far (user + system seconds): the hook's own, and its children's that were waited
        # for (an unconfined run's, git's; a run inside bubblewrap's PID namespace is not seen). What `make bench`
        # compares with bare pytest: machine load moves wall time, hardly CPU time.
        "cpu": _cpu(),
        # On every line: a person's `confine: off` (the hidden run unconfined) is never lost from sight.
        "confine": cfg.get("confine", "auto"),
        # The agent's CLI (`report --by client`); between the gates and the tail, which the report's fast path reads.
        "client": client,
        # The agent's session's cost (None: a model the price table does not know) and time so far: just before
        # "blocks", where the report's fast path reads them with the line's tail (`report.shape._LINE_PATTERN`).
        **({"agent_usd": agent.get("usd"), "agent_seconds": agent.get("seconds")} if agent is not None else {}),
        "blocks": counters.get("blocks"),
        "duration": round(time.monotonic() - t0, 4),
        "kit_version": __version__,
        "config": cfg.get("config", "default"),
    }


def _cpu() -> dict[str, float]:
    import resource  # microseconds; os.times() counts in clock ticks (10 ms)

    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"hook": round(own.ru_utime + own.ru_stime, 4), "children": round(waited.ru_utime + waited.ru_stime, 4)}


def agent_usage(payload: dict[str, Any], session: str, root: Path) -> dict[str, Any] | None:
    """The session's own cost and time so far (None without a readable transcript; a failure is logged, never a block)."""
    try:
        from donegate.sessions import usage

        return usage.session_usage(payload.get("transcript_path"), session, root)
    except Exception:
        log_exception(root)
        return None


def write(record: dict[str, Any], outcome: Outcome, root: Path, wait: float) -> None:
    """Append the stop's line; a lock held past `wait` parks it for the next append (and says so in the log)."""
    from donegate.ledger import chain as ledger

    note = ""
    try:
        ledger.append(record, paths.ledger_path(root), wait=wait)
    except deadline.Busy:
        try:
            parked = ledger.park(record, paths.ledger_path(root))
            log(root, f"the ledger was locked for {wait:.1f} s: stop {record.get('stop')} of session "
                       f"{record.get('session')} ({record.get('verdict')}) parked in {parked}; the next append writes it")
            note = "donegate: the ledger was locked by another process; this stop's line waits beside it (see the kit's log)"
        except Exception:
            log_exception(root)
            note = "donegate: the ledger could not be written (see the kit's log)"
    except Exception:
        log_exception(root)
        note = "donegate: the ledger could not be written (see the kit's log)"
    if note:
        outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + note
