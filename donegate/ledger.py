"""`ledger.jsonl`: one JSON line per event, appended whole under a lock, chained by hashes.

Each line the kit appends carries `prev`, the sha256 of the line before it (of `GENESIS` for the
first), so `donegate report --verify` can name the first line changed, removed or inserted by hand.
Appends take an exclusive `flock` on the ledger itself, read the last line, and write the new line
with one `write` call on an O_APPEND descriptor: concurrent stops lose nothing and tear nothing.

A writer that cannot wait (the stop's deadline is near and someone, an agent's `flock` say, holds the
lock) passes `wait`: when the lock is not had in time, `LedgerBusy` is raised and the caller parks the
record with `park` (one file per record under `ledger.pending/`); the next append that gets the lock
writes parked records first, in the order they were parked, each marked `"parked"`, then its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from donegate.deadline import Busy, flock
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator

SCHEMA_VERSION = 1
GENESIS = "0" * 64
REF_CHARS = 10  # hex characters of a line's hash that name a stop (`donegate label`)


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def stop_ref(line: bytes) -> str:
    """The short, stable name of a stop: the start of its raw line's hash (the report shows it)."""
    return line_hash(line)[:REF_CHARS]


def _last_line(fd: int) -> bytes | None:
    """The last complete-or-torn line of the file, reading backwards in chunks (constant memory)."""
    end = os.lseek(fd, 0, os.SEEK_END)
    if end == 0:
        return None
    pos, tail = end, b""
    while pos > 0:
        step = min(8192, pos)
        pos -= step
        chunk = os.pread(fd, step, pos)
        tail = chunk + tail
        body = tail[:-1] if tail.endswith(b"\n") else tail
        nl = body.rfind(b"\n")
        if nl >= 0:
            return body[nl + 1 :]
    return tail[:-1] if tail.endswith(b"\n") else tail


LedgerBusy = Busy  # the ledger's lock was not had within the time the writer could wait


def pending_dir(path: Path) -> Path:
    return path.with_name(path.stem + ".pending")


def park(record: dict[str, Any], path: Path) -> Path:
    """Keep `record` for the next append that gets the lock (written atomically, one file each)."""
    folder = pending_dir(path)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}"
    tmp = folder / f".tmp-{name}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, default=str)
    final = folder / f"{name}.json"
    os.replace(tmp, final)
    return final


def json_files(folder: Path) -> list[tuple[Path, Any]]:
    """(path, parsed) of each `*.json` file in `folder`, by name; unreadable ones are left out."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        p = folder / name
        try:
            out.append((p, json.loads(p.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return out


def _parked(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(p, rec) for p, rec in json_files(pending_dir(path)) if isinstance(rec, dict)]


def _write_line(fd: int, path: Path, record: dict[str, Any]) -> dict[str, Any]:
    rfd = os.open(path, os.O_RDONLY)
    try:
        last = _last_line(rfd)
        size = os.fstat(rfd).st_size
        torn = size > 0 and os.pread(rfd, 1, size - 1) != b"\n"
    finally:
        os.close(rfd)
    record = {"v": SCHEMA_VERSION, **{k: v for k, v in record.items() if k not in ("v", "prev")},
              "prev": line_hash(last) if last is not None else GENESIS}
    data = json.dumps(record, separators=(",", ":"), sort_keys=False, default=str).encode() + b"\n"
    if torn:
        # Someone left half a line; start ours on a fresh line so it stays whole.
        data = b"\n" + data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return record


def append(record: dict[str, Any], path: Path, wait: float | None = None) -> dict[str, Any]:
    """Append `record` (plus `v` and `prev`) as one line; returns what was written.

    `wait`: seconds to wait for the lock at most (None: as long as it takes), else `LedgerBusy`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    try:
        flock(fd, wait)
        for parked, rec in _parked(path):
            _write_line(fd, path, {**rec, "parked": True})
            parked.unlink(missing_ok=True)
        return _write_line(fd, path, record)
    finally:
        os.close(fd)  # closing releases the lock


def read(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, raw line without newline), streaming."""
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            yield number, line.rstrip(b"\n")


def records(path: Path) -> list[dict[str, Any]]:
    """Every parseable line (for tests and small ledgers; the report streams with `read`)."""
    out: list[dict[str, Any]] = []
    if not path.exists():
        return out
    for _, line in read(path):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def verify(path: Path) -> tuple[int, int | None, str]:
    """Check the chain: (lines checked, first bad line number or None, why)."""
    prev = GENESIS
    count = 0
    for number, line in read(path):
        count = number
        try:
            rec = json.loads(line)
        except ValueError:
            return count, number, "not JSON"
        if not isinstance(rec, dict) or rec.get("prev") != prev:
            return count, number, "its prev hash does not match the line before it (changed, removed or inserted)"
        prev = line_hash(line)
    return count, None, "chain intact"
