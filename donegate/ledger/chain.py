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

from donegate.core.fsafe import sha256 as _sha256
import json
import os
import re
import time
from pathlib import Path

from donegate.core.deadline import Busy, flock
from donegate.core.util import atomic_write, json_object
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator

SCHEMA_VERSION = 1
GENESIS = "0" * 64
REF_CHARS = 10  # hex characters of a line's hash that name a stop (`donegate label`)


def line_hash(line: bytes) -> str:
    return _sha256(line.rstrip(b"\n")).hexdigest()


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
    final = pending_dir(path) / f"{time.time_ns():020d}-{os.getpid()}.json"
    atomic_write(final, json.dumps(record, default=str))
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


def events(files: list[Path], event: str) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """(raw line, record) of each line of `event` in `files`, in order; lines that do not parse are passed over."""
    mark = f'"{event}"'.encode()
    for path in files:
        for line, rec in containing(path, mark):
            if rec.get("event") == event:
                yield line, rec


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


def matching(path: Path, needles: tuple[bytes, ...]) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(line number, raw line, record) of each line holding one of `needles` that parses to an object."""
    for number, line in holding(path, needles):
        rec = json_object(line)
        if rec is not None:
            yield number, line, rec


def holding(path: Path, needles: tuple[bytes, ...], chunk: int = 1 << 23) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, raw line) of each line of `path` holding one of `needles`, in order: a C search over
    8 MB of whole lines at a time, a line cut out only where a needle is (a 1 GB ledger: a Python loop over
    its lines took 3.5 s a pass; mapped whole, its every page counted in the report's memory)."""
    try:
        fh = open(path, "rb")
    except OSError:
        return
    with fh:
        number, tail = 0, b""  # the lines before `data`; a line the last block cut
        while True:
            block = fh.read(chunk)
            data = tail + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            found: set[tuple[int, int]] = set()
            for needle in needles:
                at = data.find(needle, 0, cut)
                while at >= 0:
                    start = data.rfind(b"\n", 0, at) + 1
                    end = data.find(b"\n", at, cut)
                    end = cut if end < 0 else end
                    found.add((start, end))
                    at = data.find(needle, end, cut)
            seen = 0
            for start, end in sorted(found):
                number += data.count(b"\n", seen, start)
                seen = start
                yield number + 1, data[start:end]
            number += data.count(b"\n", seen, cut)
            tail = data[cut:]
            if not block:
                return


def containing(path: Path, needle: bytes) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """(raw line, record) of each line holding `needle` that parses to an object, in order: a cheap
    byte test first, so one session's lines come out of a large ledger without parsing the rest."""
    for _, line, rec in matching(path, (needle,)):
        yield line, rec


_PREV = re.compile(rb',"prev":"([0-9a-f]{64})"\}$').match


def prev_of(line: bytes) -> tuple[str | None, bool]:
    """(the line's prev hash or None, whether the line is JSON at all)."""
    pos = line.rfind(b',"prev":"')
    m = _PREV(line, pos) if pos >= 0 else None
    if m:  # `prev` is the last key the kit writes; its closing brace ends the line
        return m.group(1).decode(), True
    try:
        rec = json.loads(line)
    except ValueError:
        return None, False
    prev = rec.get("prev") if isinstance(rec, dict) else None
    return (prev if isinstance(prev, str) else None), True


def verify(path: Path) -> dict[str, Any]:
    """Walk the chain; name the first line changed, removed or inserted by hand. The one checker:
    `donegate report --verify`, the experiment table and the tests all call it.

    Line n holds the hash of line n-1. When it does not: line n was inserted if line n+1 points to
    line n-1; line n-1 was inserted if line n points to line n-2; otherwise line n-1 was changed or
    lines between n-1 and n were removed (the two look alike). A torn line (a write cut off) has no
    hash of its own to check, but the next line the kit wrote still points to it; a torn last line
    has nothing after it to tell a cut-off write from an edit.
    """
    hashes = [None, GENESIS]  # of lines n-2 and n-1
    torn: list[int] = []
    count, result = 0, None
    items = ((n, line_hash(line), *prev_of(line)) for n, line in read(path))
    current = next(items, None)
    while current is not None:
        following = next(items, None)
        n, h, prev, is_json = current
        count = n
        if prev is None:
            if not is_json and (following is None or following[2] == h):
                torn.append(n)  # the next line the kit wrote vouches for it (or it is the last, being written)
            else:
                what = "is not JSON" if not is_json else "has no prev hash"
                result = (n, f"line {n} {what}: it was changed or inserted by hand")
                break
        elif prev != hashes[1]:
            result = (n, _diagnose(n, prev, hashes, following))
            break
        hashes = [hashes[1], h]
        current = following
    if result:
        count = sum(1 for _ in read(path))
    return {"ledger": str(path), "lines": count, "intact": result is None, "line": result[0] if result else None,
            "why": result[1] if result else "the hash chain is intact", "torn": torn,
            "last_hash": hashes[1] if result is None and count else None}


def _diagnose(n: int, prev: str, hashes: list, following: tuple | None) -> str:
    # The next line vouches for line n-1 first: if it points there, line n is the intruder.
    if following is not None and following[2] == hashes[1]:
        return f"line {n} was inserted by hand " + (f"(line {n + 1} follows line {n - 1})" if n > 1 else "(line 2 starts the chain)")
    if n > 1 and prev == hashes[0]:
        return f"line {n - 1} was inserted by hand " + (f"(line {n} follows line {n - 2})" if n > 2 else "(line 2 starts the chain)")
    if n == 1:
        return "line 1 does not start the chain: lines were removed from the start, or line 1 was changed"
    return (f"line {n - 1} was changed, or lines were removed between lines {n - 1} and {n} "
            f"(line {n}'s prev hash does not match line {n - 1})")
