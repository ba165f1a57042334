"""The experiment's bookkeeping: what runs the ledger already records (so a run resumes), what each run cost
the gate, the per-key lock that keeps two processes off one run, and the progress line a person watches.
The runs themselves are `harness.py`."""

from __future__ import annotations
import fcntl
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, TextIO
from donegate import paths
from donegate.ledger import chain as ledger

BLOCKING = ("block", "hint")  # the verdicts that sent the agent back


def recorded(path: Path, experiment: str) -> dict[str, dict[str, Any]]:
    """{key: run record} of the experiment's `run` lines in the ledger (the first of a key)."""
    out: dict[str, dict[str, Any]] = {}
    for rec in events(path, "run"):
        if rec.get("experiment") == experiment:
            out.setdefault(str(rec.get("key")), rec)
    return out


def events(path: Path, event: str, needle: bytes = b"") -> list[dict[str, Any]]:
    """The ledger's records of one event (lines holding `needle` too), in order; none without a ledger."""
    mark = f'"event":{json.dumps(event)}'.encode()
    return [rec for line, rec in ledger.containing(path, mark) if needle in line and rec.get("event") == event]


def failed_cost(path: Path, experiment: str) -> float:
    """Money spent on runs that failed (they are retried, their spend counts toward --max-cost)."""
    return sum(float((r.get("cost") or {}).get("total") or 0) for r in events(path, "run_failed") if r.get("experiment") == experiment)


class KeyLock:
    """An exclusive, non-blocking file lock on one run key of one ledger; released by close or death."""

    def __init__(self, ledger_path: Path, key: str) -> None:
        digest = hashlib.sha256(f"{ledger_path.resolve()}\0{key}".encode()).hexdigest()[:24]
        folder = paths.state_dir() / "experiment-locks"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{digest}.lock"
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def parse_result(stdout: str) -> dict[str, Any] | None:
    for text in [stdout.strip(), *reversed(stdout.strip().splitlines())]:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "result":
            return obj
    return None


def session_lines(path: Path, session: str, repo: Path) -> list[tuple[bytes, dict[str, Any]]]:
    """The raw line and record of each ledger line of the run (stops and guard refusals), in order: those
    of `session`, or, when the session gave no id (it was killed at its time limit), of the run's own
    repository (a fresh temporary folder, so no other run's)."""
    where = str(repo.resolve())
    needle = json.dumps(session if session else where).encode()
    return [(line, rec) for line, rec in ledger.containing(path, needle)
            if (rec.get("session") == session if session else rec.get("repo") == where)]


def _is_block(rec: dict[str, Any]) -> bool:
    v = rec.get("verdict")
    return v in BLOCKING or (v == "error" and not (rec.get("gates") or {}).get("counter_error"))


def gate_account(lines: list[tuple[bytes, dict[str, Any]]]) -> dict[str, Any]:
    from donegate.report import review_cost

    stops = [(line, r) for line, r in lines if r.get("event") == "stop"]
    blocked_by = []
    for line, r in stops:
        if not _is_block(r):
            continue
        gates = r.get("gates") or {}
        acc = gates.get("acceptance") or {}
        review = gates.get("review") or {}
        blocked_by.append({
            "ref": ledger.stop_ref(line), "stop": r.get("stop"), "verdict": r.get("verdict"),
            "tests": [f.get("id") for f in acc.get("failing") or [] if isinstance(f, dict)],
            "review": r.get("verdict") == "hint" or review.get("verdict") == "block" and bool(acc.get("ok")),
        })
    return {
        "stops": len(stops),
        "blocks": len(blocked_by),
        # the retry control's release after max_blocks is its design, not the gate handing over
        "gave_up": any(r.get("verdict") == "gave_up" and "retry_done" not in ((r.get("gates") or {}).get("breaker") or {})
                       for _, r in stops),
        "appeals": sum(1 for _, r in stops if r.get("verdict") == "appealed"),
        "appeal_refs": [ledger.stop_ref(line) for line, r in stops if r.get("verdict") == "appealed"],
        "reviewer": round(sum(review_cost((r.get("gates") or {}).get("review")) for _, r in stops), 6),
        "last": stops[-1][1].get("verdict") if stops else None,
        "refusals": sum(1 for _, r in lines if r.get("event") == "guard"),
        "blocked_by": blocked_by,
    }


def writer_cost(home: Path) -> float:
    for manifest in (home / "acceptance").glob("*/manifest.json"):
        try:
            return float((json.loads(manifest.read_text()).get("writer") or {}).get("cost_usd") or 0.0)
        except (OSError, ValueError):
            return 0.0
    return 0.0


def writer_failed_cost(ledger_path: Path, repo: Path) -> float:
    return sum(float(r.get("cost_usd") or 0) for r in events(ledger_path, "write_failed", json.dumps(str(repo.resolve())).encode()))


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    """`runs 7/30 done, 1 failed, $0.42 spent, ETA 3m10s` (scripted: `$0.42 computed (scripted: no money
    spent)`): rewritten in place on a terminal, a line per
    change otherwise."""

    def __init__(self, stream: TextIO, total: int, done: int, spent: float, jobs: int, scripted: bool = False) -> None:
        self.stream = stream
        self.total = total
        self.done = done  # including runs recorded before this process started
        self.new = 0
        self.failed = 0
        self.spent = spent
        self.jobs = jobs
        self.scripted = scripted  # the dollars are a computation from a scripted server's tokens, not money
        self.start = time.monotonic()
        self.tty = stream.isatty()
        self.lock = threading.Lock()

    def line(self) -> str:
        left = self.total - self.done
        eta = "?"
        if self.new:
            eta = duration_text((time.monotonic() - self.start) / self.new * left) if left else "0s"
        money = f"${self.spent:.4f} computed (scripted: no money spent)" if self.scripted else f"${self.spent:.4f} spent"
        return f"runs {self.done}/{self.total} done, {self.failed} failed, {money}, ETA {eta}"

    def show(self, note: str = "") -> None:
        with self.lock:
            text = self.line() + (f"  ({note})" if note else "")
            if self.tty:
                self.stream.write("\r\033[K" + text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def end(self) -> None:
        if self.tty:
            with self.lock:
                self.stream.write("\n")
                self.stream.flush()
