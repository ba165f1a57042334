"""Files, ranges, processes: a large ledger is read by two processes, each a range of whole lines;
their partial counts merge in file order.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from pathlib import Path
from typing import Any
from donegate.report.read import Options, Partial, scan

PARALLEL_BYTES = 64 << 20  # ledgers smaller than this are read by one process
WORKER_TIMEOUT = 3600  # seconds one reader process may take


def ranges(path: Path, jobs: int) -> list[tuple[int, int]]:
    """`jobs` byte ranges of whole lines covering the file (fewer for a small file)."""
    size = path.stat().st_size
    cuts = [0]
    if jobs > 1 and size >= PARALLEL_BYTES:
        with open(path, "rb") as fh:
            for k in range(1, jobs):
                fh.seek(size * k // jobs)
                fh.readline()  # to the start of the next line
                if cuts[-1] < fh.tell() < size:
                    cuts.append(fh.tell())
    cuts.append(size)
    return list(zip(cuts, cuts[1:], strict=False))  # consecutive pairs


def default_jobs() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(2, cpus))


def read_all(files: list[Path], opts: Options, jobs: int) -> list[tuple[Path, int, Partial]]:
    """(file, lines before the range in its file, folded Partial) for every range, in file order."""
    tasks = [(path, a, b) for path in files for a, b in ranges(path, jobs)]
    if len(tasks) > 1 and jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        parts = _read_parallel(tasks, opts)
    else:
        parts = [scan(str(p), a, b, opts, i) for i, (p, a, b) in enumerate(tasks)]
        inputs = _fold_inputs([part.handover(len(parts)) for part in parts])
        parts = [part.fold(*args) for part, args in zip(parts, inputs, strict=True)]
    out, offset, previous = [], 0, None
    for (path, _, _), part in zip(tasks, parts, strict=True):
        offset = offset if path == previous else 0
        out.append((path, offset, part))
        offset, previous = offset + part.lines, path
    return out


def _fold_inputs(handovers: list[tuple]) -> list[tuple[list[bytes], set[bytes], set[bytes]]]:
    """For each range: the sessions of every later range, the give-ups of every earlier range, and
    every labelled session."""
    labelled = set().union(*(h[2] for h in handovers))
    return [([h[0] for h in handovers[i + 1:]], set().union(*(h[1] for h in handovers[:i])), labelled)
            for i in range(len(handovers))]


def _reader(conn: Any, path: str, start: int, end: int, opts: Options, index: int, count: int) -> None:
    """One reader process: scan, hand over, fold, send the folded Partial back."""
    try:
        part = scan(path, start, end, opts, index)
        conn.send(("ok", part.handover(count)))
        conn.send(("ok", part.fold(*conn.recv())))
    except BaseException:  # noqa: BLE001 - the parent reports it; a reader must not die silently
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _receive(conn: Any) -> Any:
    if not conn.poll(WORKER_TIMEOUT):
        raise RuntimeError(f"a report reader gave no answer within {WORKER_TIMEOUT} s")
    try:
        status, value = conn.recv()
    except EOFError:
        raise RuntimeError("a report reader died (out of memory?)") from None
    if status != "ok":
        raise RuntimeError(f"a report reader failed:\n{value}")
    return value


def _read_parallel(tasks: list[tuple[Path, int, int]], opts: Options) -> list[Partial]:
    """One forked reader per range (they inherit the code and the options)."""
    ctx = multiprocessing.get_context("fork")
    conns, procs = [], []
    try:
        for i, (path, a, b) in enumerate(tasks):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_reader, args=(theirs, str(path), a, b, opts, i, len(tasks)), daemon=True)
            proc.start()
            theirs.close()
            conns.append(mine)
            procs.append(proc)
        inputs = _fold_inputs([_receive(c) for c in conns])
        for conn, args in zip(conns, inputs, strict=True):
            conn.send(args)
        del inputs
        return [_receive(c) for c in conns]
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=10)
