"""Files, ranges, processes: a large ledger is read by two processes, each a range of whole lines;
their partial counts merge in file order. Each range starts from what the last report kept of it
(`donegate.report.resume`), when asked to and when that still holds.
"""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing
import os
import traceback
from pathlib import Path
from typing import Any, Iterator
from donegate.report import read, resume, shape
from donegate.report.count import scan
from donegate.report.read import Options, Partial

PARALLEL_BYTES = 64 << 20  # ledgers smaller than this are read by one process
WORKER_TIMEOUT = 3600  # seconds one reader process may take
SESSIONS_PIECE = 16384  # session ids a piece (`_send_sessions`): ~0.6 MB of UUIDs


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


def read_all(files: list[Path], opts: Options, jobs: int, keep: bool = False) -> tuple[list[tuple[Path, int, Partial]], dict[str, dict]]:
    """((file, lines before the range in its file, folded Partial) for every range, in file order; the latest
    decision per stop ref). `keep`: start from what the last report kept of each file, and keep this one's
    (`donegate.report.resume`)."""
    plans: list[resume.Plan] = []
    manifests = []
    for path in files:
        mine, manifest = resume.plan(path, opts, ranges(path, jobs), keep, len(plans))
        plans += mine
        manifests.append((len(plans) - len(mine), len(plans), manifest))
    if len(plans) > 1 and jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        parts, made = _read_parallel(plans, opts, manifests)
    else:
        states = [_read(plan, opts) for plan in plans]
        _commit(manifests, [h for _, h in states])
        made = _decisions([part.decisions for part, _ in states])
        inputs = _fold_inputs([part.handover(len(states)) for part, _ in states], made, opts.page)
        parts = [part.fold(*args) for (part, _), args in zip(states, inputs, strict=True)]
    out, offset, previous = [], 0, None
    for plan, part in zip(plans, parts, strict=True):
        offset = offset if plan.path == previous else 0
        out.append((Path(plan.path), offset, part))
        offset, previous = offset + part.lines, plan.path
    return out, made


def _read(plan: resume.Plan, opts: Options) -> tuple[Partial, tuple[str, str, str] | None]:
    """One range: its kept shard (else its lines from where the shard began), the new lines up to the last whole
    line, kept as the next report's shard, then a torn last line (read, never kept). (state, the shard kept:
    its file and content hash, and the sha256 of the ledger's bytes it holds the reading of)."""
    part = resume.open_shard(*plan.shard, opts, plan.path, plan.index) if plan.shard else None
    shard: tuple[str, str, str] | None = None
    if part is not None and plan.start == plan.cut:  # nothing new in this range: its shard stays as it is
        if plan.shard and plan.digest:
            shard = (*plan.shard, plan.digest)
    else:
        read = hashlib.sha256() if part is None and plan.out else None  # from the range's start: hashed as it is read
        new = scan(plan.path, plan.start if part is not None else plan.first, plan.cut, opts, plan.index, read)
        part = new if part is None else resume.merge(part, new)
        digest = resume.save(part, plan.out) if plan.out else None
        ranged = read.hexdigest() if read is not None else plan.digest
        shard = (plan.out, digest, ranged) if plan.out and digest and ranged else None
    if plan.end > plan.cut:
        part = resume.merge(part, scan(plan.path, plan.cut, plan.end, opts, plan.index))
    return part, shard


def _commit(manifests: list[tuple[int, int, dict | None]], shards: list[tuple[str, str, str] | None]) -> None:
    for a, b, manifest in manifests:
        if manifest is not None:
            resume.commit(manifest, shards[a:b])


def _decisions(each: list[dict[str, dict]]) -> dict[str, dict]:
    """The latest decision per stop ref over the ranges, in file order."""
    made: dict[str, dict] = {}
    for decisions in each:
        made.update(decisions)
    return made


def _fold_inputs(handovers: list[tuple], made: dict[str, dict], page: int = 0) -> list[tuple[list[bytes], set[bytes], set[bytes], dict, int]]:
    """For each range: the sessions of every later range, the give-ups of every earlier range, every labelled
    session, the sessions a person decided, and how many sessions the page wants of it (`Options.page`)."""
    from donegate.report.labels import decided_sessions

    decided = decided_sessions([], made)
    labelled = set().union(*(h[2] for h in handovers))
    return [([h[0] for h in handovers[i + 1:]], set().union(*(h[1] for h in handovers[:i])), labelled, decided, page)
            for i in range(len(handovers))]


def _reader(conn: Any, plan: resume.Plan, opts: Options, count: int) -> None:
    """One reader process: read (and keep) its range, hand over, fold (the last range's sessions streamed in after its
    fold inputs: `_send_sessions`), send the folded Partial back."""
    try:
        part, shard = _read(plan, opts)
        conn.send(("ok", (part.handover(count), part.decisions, shard)))
        later, *rest = conn.recv()
        conn.send(("ok", part.fold(itertools.chain(later, _streamed(conn)), *rest)))
    except BaseException:  # noqa: BLE001 - the parent reports it; a reader must not die silently
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _send_sessions(conn: Any, last: dict[bytes, int]) -> None:
    """The parent's range's session ids to an earlier range's reader, a piece at a time (each piece starts with the
    separator: never empty), then an empty piece: never one blob of them all (7 MB on make bench's ledger)."""
    ids = iter(last)
    while piece := read.SEP.join(itertools.islice(ids, SESSIONS_PIECE)):
        conn.send_bytes(read.SEP + piece)
    conn.send_bytes(b"")


def _streamed(conn: Any) -> Iterator[bytes]:
    while piece := conn.recv_bytes():
        yield piece


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


def _read_parallel(plans: list[resume.Plan], opts: Options, manifests: list) -> tuple[list[Partial], dict[str, dict]]:
    """One forked reader per range but the last, which this process reads itself (they inherit the code and the
    options): no process of the tree waits idle holding a copy of the interpreter, and the last range, which no later
    range drops sessions from, hands its session ids to the earlier ranges a piece at a time (`_send_sessions`)."""
    ctx = multiprocessing.get_context("fork")
    if opts.fast and any(plan.start < plan.end or not plan.shard for plan in plans):
        shape.compiled()  # the fast path's expression, compiled once for every reader
    conns, procs = [], []
    try:
        for plan in plans[:-1]:
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_reader, args=(theirs, plan, opts, len(plans)), daemon=True)
            proc.start()
            theirs.close()
            conns.append(mine)
            procs.append(proc)
        part, shard = _read(plans[-1], opts)
        own = (part.handover(len(plans), sessions=False), part.decisions, shard)
        first = [_receive(c) for c in conns] + [own]
        _commit(manifests, [shard for _, _, shard in first])
        made = _decisions([decisions for _, decisions, _ in first])
        inputs = _fold_inputs([handover for handover, _, _ in first], made, opts.page)
        del first, own
        for conn, args in zip(conns, inputs[:-1], strict=True):  # the last range is folded here
            later, *rest = args
            conn.send((later[:-1], *rest))  # the last range's sessions follow, streamed
            _send_sessions(conn, part.last)
        last = part.fold(*inputs[-1])
        del inputs
        return [*(_receive(c) for c in conns), last], made
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=10)
