"""The stop in progress: its deadline, the stage it is in (what the watchdog names when time runs out),
the time left for a stage, and the kit's log. Every stage imports this; it imports no stage."""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import paths
from donegate.core.util import utc_now

AFTER_RUN = 1.0  # seconds of the deadline kept after the hidden run (and the reviewers) for counters and ledger

# The stop in progress: its deadline and the stage it is in (what the watchdog names when time runs out).
STOP: dict[str, Any] = {"deadline": None, "stage": "start"}


def stage(name: str) -> None:
    STOP["stage"] = name
    if STOP.get("fault") == "hang:" + name:  # the deadline's tests: a stage that never ends
        time.sleep(10**6)


def fault(root: Path) -> str | None:
    """The deadline tests' fault hook: `state/fault` under the state root, which the agent cannot write
    (deny rules, sandbox). Never an environment variable: a settings file's `env` reaches the hook."""
    try:
        return (paths.state_dir(root) / "fault").read_text(encoding="utf-8").strip()
    except OSError:
        return None


def time_left(cap: float) -> float:
    """`cap` seconds, or less when the stop's deadline comes sooner (AFTER_RUN seconds kept for the end)."""
    dl = STOP["deadline"]
    return cap if dl is None else max(0.0, min(cap, dl.remaining() - AFTER_RUN))


now = utc_now  # the stop line's time


def log_exception(root: Path) -> str:
    log = paths.log_path(root)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            import traceback  # only on the error path

            fh.write(f"--- {now()}\n{traceback.format_exc()}\n")
    except OSError:
        pass
    return str(log)


def log(root: Path, line: str) -> None:
    try:
        path = paths.log_path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"--- {now()} {line}\n")
    except OSError:
        pass
