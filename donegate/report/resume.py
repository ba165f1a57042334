"""What the report has read of a ledger, kept between reports: the next report reads only the lines added since.

A ledger is append-only, so the counts of its first N bytes never change. After each report the readers' states
(one per range a process read: `read.Partial`, before the hand-over and the fold that finish a report) are kept
in the kit's state folder (`state/report/`, never beside the ledger): one shard file per range and a manifest.
The next report loads them, reads the bytes from the kept offset to the end into the last range, and folds as a
cold read would: its output is byte for byte that of reading the whole file again.

The manifest is keyed so that a ledger replaced, truncated or edited is read again from the start:
- the file's identity (device, inode) and a size at least the kept offset;
- the sha256 of the last line read (the chain's hash at the offset: the next line the kit appends holds it as
  `prev`) and of the first line, both read again from the file;
- the sha256 of each kept range's bytes (`digest`), hashed again whenever the file's change time (ctime, which no
  one but the system sets: `os.utime` moves it too) is not the kept one: a byte changed anywhere before the kept
  offset, the first and last lines kept, an append or not, sends the report back to the start, where the chain is
  checked line by line and the edit named. The ranges are hashed side by side (`_verify`: threads; sha256 and the
  reads let go of the interpreter's lock), about 0.5 CPU-s a GB with SHA extensions.
With nothing appended and the change time the kept one, nothing is hashed or read. What that cannot see: a write
through a shared mapping (`mmap`) to a page already dirty moves neither time on Linux (the times move when a clean
page is first written), so an edit made that way after a report, nothing appended, is not seen until the next append
(the ranges are hashed again then) or `--verify`. Hashing every report closes it for ~0.8 CPU-s on make bench's 971 MB
ledger (two threads; `wc -l` 0.21), about 2-3x `wc -l` of wall on two idle cores against the 3x goal: not done.

What a report finished (its summary; the page's rows and details) is kept too, under a mark of the ledgers as
`load` checks them (each file's device, inode, size, change and modification times, first and last line) and of
what else shaped it (`mark`): with nothing new since, a report reads that file and nothing else (`finished`).

Each shard file holds the sha256 of its content; the manifest names each shard with it. A shard that is missing,
unreadable, cut off or not what the manifest says is ignored: its range is read from the ledger instead. Every
file is written whole (a temporary name, then a rename); the manifest last. Only `since`-less reports keep
anything (a `--since 7d` differs every time).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import itertools
import json
import marshal
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from donegate import paths
from donegate.core.util import atomic_write
from donegate.ledger import chain as ledger
from donegate.report.own_counts import Own
from donegate.report.read import EXAMPLES, Group, Options, Partial, _COMBO, _FIRST, _OFFSET

VERSION = 11  # 11: each kept range's bytes hashed (`digest`), the change time in place of the modification time; 10: the sessions' states written a piece at a time after the rest (`save`); 9: the cases of a parametrized test one regression (`own_counts.test_of`); 8: the clients of the stops a label may count in, by ref (`Partial.clients`: labels by client); 7: a stop's client read as json.loads reads it (`--by client` kept readings were not); 6: the page's counts over every stop (`Partial.tally`, `days`, `marks`) and each session's first stop; 5: the own suite's regressions blocked as distinct (session, test) (`Own.regressed`); 4: what a report finished, kept (`keep_finished`); 3: the hash chain's ends (`Partial.link`), the agent's figures without their comma, the own suite's counts
_LOW = (1 << _COMBO) - 1
_FIRSTS = _OFFSET << _FIRST  # a packed session state's first stop
SESSIONS_PIECE = 16384  # sessions' states a piece of a shard (`save`)
_HEX = re.compile(r"[0-9a-f]{64}").fullmatch
_NAME = re.compile(r"[0-9a-f]{24}\.[0-9]+-[0-9]+\.[0-9]+\.bin").fullmatch  # a shard's file name (`plan`)  # a packed session state without its combination's index


@dataclass
class Plan:
    """How one range of a ledger is read: a kept shard to start from (its file, content hash), the bytes to read
    into it and keep (`start`..`cut`), the bytes to read after it is kept (`cut`..`end`: a torn last line, which
    the next report reads again), and the shard file to write (None: keep nothing)."""

    path: str
    index: int
    start: int
    cut: int
    end: int
    shard: tuple[str, str] | None = None
    first: int = 0  # where the kept shard's own range begins (read from there when the shard cannot be used)
    out: str | None = None
    digest: str | None = None  # the sha256 of bytes `first`..`cut` when known before reading (a kept range hashed again)


def state_folder() -> Path:
    return paths.state_dir() / "report"


def key(path: Path, opts: Options) -> str:
    """The name of a ledger's kept summary: its resolved path and the options that shape the counts."""
    text = f"{path.resolve()}\n{opts.by}\n{opts.fast}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


# -------------------------------------------------------------------------------------------------
# The manifest: is what was kept still a prefix of this file?
# -------------------------------------------------------------------------------------------------


def _line_before(fd: int, offset: int) -> bytes | None:
    """The line that ends (with its newline) at byte `offset`; None unless byte offset-1 is a newline."""
    if offset <= 0 or os.pread(fd, 1, offset - 1) != b"\n":
        return None
    pos, tail = offset - 1, b""
    while pos > 0:
        step = min(8192, pos)
        pos -= step
        tail = os.pread(fd, step, pos) + tail
        nl = tail.rfind(b"\n")
        if nl >= 0:
            return tail[nl + 1:]
    return tail


def _first_line(fd: int) -> bytes:
    data, pos = b"", 0
    while b"\n" not in data:
        chunk = os.pread(fd, 8192, pos)
        if not chunk:
            break
        data, pos = data + chunk, pos + len(chunk)
    return data.split(b"\n", 1)[0]


def _marks(path: Path, offset: int) -> tuple[os.stat_result, str | None, str] | None:
    """(the file's stat, the hash of the line ending at `offset`, the hash of line 1), or None when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        last = _line_before(fd, offset) if 0 < offset <= st.st_size else None
        return st, (ledger.line_hash(last) if last is not None else None), ledger.line_hash(_first_line(fd))
    except OSError:
        return None
    finally:
        os.close(fd)


def load(path: Path, opts: Options) -> dict[str, Any] | None:
    """The kept manifest of `path` when it still describes a prefix of the file; None means: read from the start."""
    if opts.since is not None:
        return None
    try:
        kept = json.loads((state_folder() / f"{key(path, opts)}.json").read_text(encoding="utf-8"))
        offset, shards = kept["offset"], kept["shards"]
        good = (kept["version"] == VERSION and kept["ledger"] == str(path.resolve()) and kept["by"] == opts.by
                and kept["fast"] == opts.fast and isinstance(offset, int) and offset > 0 and isinstance(shards, list)
                and _spans(shards, offset) and all(type(kept[k]) is int for k in ("dev", "ino"))
                and type(kept["ctime_ns"]) in (int, type(None)) and all(type(kept[k]) is str for k in ("last_hash", "first_hash")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    marks = _marks(path, offset) if good else None
    if marks is None:
        return None
    st, last, first = marks
    same = (st.st_dev, st.st_ino) == (kept["dev"], kept["ino"]) and st.st_size >= offset
    if not same or last != kept["last_hash"] or first != kept["first_hash"]:
        return None
    kept["unchanged"] = st.st_size == offset and st.st_ctime_ns == kept["ctime_ns"]  # nothing written since
    return kept


STEP = 1 << 20  # bytes hashed at a time (`_hash_span`)
SETTLED_NS = 2 * 10**9  # a change time this old at least tells every later write (`settled`)


def settled(st: os.stat_result) -> bool:
    """Whether a later write to the file would move its change time: a file system stamps it from a clock that ticks
    every few milliseconds, so a write in the same tick as the last one would leave it as it was."""
    return time.time_ns() - st.st_ctime_ns >= SETTLED_NS


def _hash_span(fd: int, start: int, end: int, digest: Any) -> None:
    """Bytes `start`..`end` of `fd` into `digest`; OSError when the file holds fewer."""
    pos = start
    while pos < end:
        data = os.pread(fd, min(STEP, end - pos), pos)
        if not data:
            raise OSError("the ledger is shorter than its kept ranges")
        digest.update(data)
        pos += len(data)


def _verify(path: Path, shards: list[list[Any]], cut: int) -> list[str] | None:
    """Each kept range's bytes hashed again, each in a thread of its own, equal to its kept digest, the last range's
    carried on to `cut` (the new lines it takes in): the ranges' digests for the next manifest. None: a byte before the
    kept offset is not the one read then (or the file cannot be read): read from the start."""
    got: list[str | None] = [None] * len(shards)

    def one(k: int, fd: int) -> None:
        _, _, start, end, kept = shards[k]
        digest = hashlib.sha256()
        with contextlib.suppress(OSError):
            _hash_span(fd, start, end, digest)
            if digest.hexdigest() == kept:
                if k == len(shards) - 1:
                    _hash_span(fd, end, max(end, cut), digest)
                got[k] = digest.hexdigest()

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        threads = [threading.Thread(target=one, args=(k, fd)) for k in range(len(shards))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.close(fd)
    return None if None in got else [str(d) for d in got]


def _spans(shards: Any, offset: int) -> bool:
    """The manifest's shards: [file, content hash, start, end, the sha256 of the ledger's bytes start..end] each, one
    after the other from byte 0 to `offset`."""
    if not (isinstance(shards, list) and shards):
        return False
    at = 0
    for s in shards:
        if not (isinstance(s, list) and len(s) == 5 and isinstance(s[0], str) and _NAME(s[0]) and isinstance(s[1], str)
                and type(s[2]) is int and type(s[3]) is int and s[2] == at and s[3] >= at and isinstance(s[4], str)
                and _HEX(s[4])):
            return False
        at = s[3]
    return at == offset


def plan(path: Path, opts: Options, ranges: list[tuple[int, int]], keep: bool, index: int) -> tuple[list[Plan], dict[str, Any] | None]:
    """The ranges to read for `path` (numbered from `index`), from its kept summary when it still holds, and the
    manifest to write once every shard is kept (None: keep nothing)."""
    kept = load(path, opts) if keep else None
    try:
        st = path.stat()
    except OSError:
        return [Plan(str(path), index + k, a, b, b) for k, (a, b) in enumerate(ranges)], None
    size = st.st_size
    shards: list[tuple[str, str] | None]
    cut = _cut(path, size)
    # Read from the start when the new part is larger than the kept one, or when the kept ranges are not the ones
    # `jobs` readers take (a summary kept by `--jobs 1` would leave one process all the sessions: its memory), or when
    # a kept range's bytes are not the ones read then (`_verify`).
    digests: list[str] | list[None] | None = None
    if kept is not None and size - kept["offset"] <= kept["offset"] and len(kept["shards"]) == len(ranges):
        digests = [s[4] for s in kept["shards"]] if kept["unchanged"] else _verify(path, kept["shards"], cut)
    if kept is not None and digests is not None:
        spans = [(s[2], s[3]) for s in kept["shards"]]
        spans[-1] = (spans[-1][0], size)
        shards = [(str(s[0]), str(s[1])) for s in kept["shards"]]
        starts = [kept["offset"] if k == len(spans) - 1 else b for k, (_, b) in enumerate(spans)]
    else:
        spans, starts = ranges, [a for a, _ in ranges]
        shards, digests = [None] * len(ranges), [None] * len(ranges)
    plans = []
    generation = f"{time.time_ns()}-{os.getpid()}"
    name = key(path, opts)
    keeping = keep and opts.since is None
    for k, ((a, b), shard, start, digest) in enumerate(zip(spans, shards, starts, digests, strict=True)):
        c = max(start, min(b, cut)) if k == len(spans) - 1 else b
        out = f"{name}.{generation}.{k}.bin" if keeping else None
        plans.append(Plan(str(path), index + k, start, c, b, shard, a, out, digest))
    offset = plans[-1].cut
    marks = _marks(path, offset) if keeping and offset > 0 else None
    if marks is None or marks[1] is None:
        for p in plans:
            p.out = None
        return plans, None
    manifest = {"version": VERSION, "ledger": str(path.resolve()), "by": opts.by, "fast": opts.fast,
                "dev": st.st_dev, "ino": st.st_ino, "ctime_ns": st.st_ctime_ns if settled(st) else None, "offset": offset,
                "last_hash": marks[1], "first_hash": marks[2],
                "shards": [[p.out, None, p.first, p.cut, None] for p in plans]}
    return plans, manifest


def _cut(path: Path, size: int) -> int:
    """The end of the last whole line (a torn last line, or one being written, is read but never kept)."""
    with open(path, "rb") as fh:
        pos = size
        while pos > 0:
            step = min(65536, pos)
            fh.seek(pos - step)
            nl = fh.read(step).rfind(b"\n")
            if nl >= 0:
                return pos - step + nl + 1
            pos -= step
    return 0


def commit(manifest: dict[str, Any], shards: list[tuple[str, str, str] | None]) -> None:
    """Write the manifest once every range is kept (each shard's file and content hash, the hash of the ledger's bytes
    it was read from), then drop the shards it no longer names."""
    if any(s is None for s in shards):
        return
    for entry, (name, digest, read) in zip(manifest["shards"], shards, strict=True):  # type: ignore[misc]
        entry[0], entry[1], entry[4] = name, digest, read
    folder = state_folder()
    name = key(Path(manifest["ledger"]), Options(by=manifest["by"], fast=manifest["fast"]))
    with contextlib.suppress(OSError):
        atomic_write(folder / f"{name}.json", json.dumps(manifest), durable=False)
        keep = {s[0] for s in manifest["shards"]}
        for old in folder.glob(f"{name}.*.bin"):
            if old.name not in keep:
                old.unlink(missing_ok=True)


# -------------------------------------------------------------------------------------------------
# Shards: a reader's state on disk
# -------------------------------------------------------------------------------------------------


def save(part: Partial, name: str) -> str | None:
    """Write `part` as shard `name`; its content hash (the manifest holds it), or None when it could not be written.
    The sessions' states, most of it, are written a piece at a time after the rest (`_pieces`): the shard is never
    whole in memory (13 MB for each of make bench's two ranges)."""
    digest = hashlib.sha256()
    try:
        atomic_write(state_folder() / name, _hashed(_pieces(part), digest), 0o600, durable=False)
    except OSError:
        return None
    return digest.hexdigest()


def _pieces(part: Partial) -> Iterator[bytes]:
    """A shard's content: the state without its sessions, then the sessions `SESSIONS_PIECE` at a time, each a
    marshalled dict, then an empty dict."""
    yield marshal.dumps(_builtins(part))
    items = iter(part.last.items())
    while piece := dict(itertools.islice(items, SESSIONS_PIECE)):
        yield marshal.dumps(piece)
    yield marshal.dumps({})


def _hashed(pieces: Iterator[bytes], digest: Any) -> Iterator[bytes]:
    for piece in pieces:
        digest.update(piece)
        yield piece


def open_shard(name: str, digest: str, opts: Options, path: str, index: int) -> Partial | None:
    """The shard `name` if its content is what the manifest says (`digest`); None otherwise, never a guess."""
    try:
        payload = (state_folder() / name).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(payload).hexdigest() != digest:
        return None
    try:
        stream = io.BytesIO(payload)
        part = _partial(marshal.load(stream), opts, path, index)
        while piece := marshal.load(stream):  # the sessions, a piece at a time, then an empty piece
            part.last.update(piece)
        if stream.read(1):
            raise ValueError("bytes after the last piece")
        return part
    except (ValueError, TypeError, KeyError, IndexError, EOFError, AttributeError):
        return None


def _builtins(part: Partial) -> dict[str, Any]:
    """A reader's state as plain values `marshal` writes (no pickle: a state file is data, never code)."""
    return {"by": part.by, "lines": part.lines,
            "groups": [[g.key, *(getattr(g, n) for n in Group.__slots__[1:])] for g in part.groups.values()],
            "combos": [(g.key, repo, cfg) for g, (repo, cfg) in part.combo_list], "last": {},  # `_pieces`
            "gave_up": part.gave_up, "writes": dict(part.writes), "labels": part.labels, "clients": part.clients,
            "skipped": part.skipped,
            "examples": part.examples, "events": dict(part.events), "appeals": list(part.appeals),
            "inside_latest": list(part.inside_latest), "inside": part.inside, "person": dict(part.person),
            "decisions": part.decisions, "held": part.held, "agents": part.agents,
            "chain": [part.head, part.tail, part.tail_torn, part.broken], "own": part.own.state(),
            "page": [part.tally, part.days, part.marks]}


def _partial(d: dict[str, Any], opts: Options, path: str, index: int) -> Partial:
    if d["by"] != opts.by:
        raise ValueError("another grouping")
    part = Partial(index=index, by=opts.by, path=path, lines=int(d["lines"]), last=dict(d["last"]),
                   gave_up=set(d["gave_up"]), writes=collections.Counter(d["writes"]), labels=dict(d["labels"]),
                   clients=dict(d["clients"]), skipped=int(d["skipped"]), examples=list(d["examples"]), events=collections.Counter(d["events"]),
                   inside=int(d["inside"]), person=collections.Counter(d["person"]), decisions=dict(d["decisions"]),
                   held=[int(x) for x in d["held"]], agents=dict(d["agents"]))
    part.head, part.tail, part.tail_torn, part.broken = d["chain"]
    tally, days, marks = d["page"]
    part.tally, part.days, part.marks = [int(n) for n in tally], set(days), [int(n) for n in marks]
    if len(part.tally) != len(Partial().tally) or not all(isinstance(day, bytes) for day in part.days):
        raise ValueError("not the page's counts")
    part.own = Own(d["own"])
    if not (part.head is None or isinstance(part.head, bytes)) or not isinstance(part.tail, bytes):
        raise ValueError("not a chain's ends")
    part.appeals.extend(tuple(a) for a in d["appeals"])
    part.inside_latest.extend(tuple(a) for a in d["inside_latest"])
    for key_, *values in d["groups"]:
        g = part.groups[key_] = Group(key_)
        for n, v in zip(Group.__slots__[1:], values, strict=True):
            setattr(g, n, v)
    part.combo_list = [(part.groups[gkey], (repo, cfg)) for gkey, repo, cfg in d["combos"]]
    return part


def merge(part: Partial, new: Partial) -> Partial:
    """`part` followed by `new` (the next bytes of the same file), as one reader would have read them both."""
    off = part.lines
    index = {(g.key, pair): k for k, (g, pair) in enumerate(part.combo_list)}
    for key_, g in new.groups.items():  # in order of first appearance, as one pass would have them
        part.groups.setdefault(key_, Group(key_)).add(g)
    remap = []
    for g, pair in new.combo_list:
        k = index.get((g.key, pair))
        if k is None:
            k = index[g.key, pair] = len(part.combo_list)
            part.combo_list.append((part.groups[g.key], pair))
        remap.append(k << _COMBO)
    last = part.last
    for sid, state in new.last.items():  # byte offsets are the file's: only the combination is renumbered
        old = last.get(sid)  # and a session seen before keeps its first stop
        last[sid] = (state & _LOW if old is None else state & _LOW & ~_FIRSTS | old & _FIRSTS) | remap[state >> _COMBO]
    part.gave_up |= new.gave_up
    part.writes.update(new.writes)
    part.labels.update(new.labels)
    part.clients.update(new.clients)
    part.skipped += new.skipped
    part.examples = (part.examples + [(n + off, why) for n, why in new.examples])[:EXAMPLES]
    part.events.update(new.events)
    part.appeals.extend((n + off, *rest) for n, *rest in new.appeals)
    part.inside_latest.extend((n + off, *rest) for n, *rest in new.inside_latest)
    part.inside += new.inside
    part.person.update(new.person)
    part.decisions.update(new.decisions)
    part.held = [a + b for a, b in zip(part.held, new.held, strict=True)]
    part.agents.update(new.agents)
    part.tally = [a + b for a, b in zip(part.tally, new.tally, strict=True)]
    part.days |= new.days
    part.marks += new.marks
    part.own.merge(new.own)
    if new.head is not None:  # the new lines' chain goes on from the last line kept
        linked = part.head is None or new.follows(part.tail, part.tail_torn)
        part.broken = part.broken or new.broken or not linked
        if part.head is None:
            part.head = new.head
        part.tail, part.tail_torn = new.tail, new.tail_torn
    part.lines += new.lines
    return part


# -------------------------------------------------------------------------------------------------
# What a report finished: kept whole, taken again while nothing in the ledgers moved
# -------------------------------------------------------------------------------------------------


def mark(files: list[Path], shape: list[Any]) -> str | None:
    """The ledgers as `load` checks a kept summary (each file's device, inode, size, modification and change times,
    the hashes of its first and last lines) and `shape` (what else shaped the result: options, budgets, the scrubber's
    key), as one digest. None when a ledger cannot be read, or was written too lately to tell a later write by its
    change time (`settled`): nothing is kept or taken then."""
    ends = []
    for path in files:
        try:
            size = path.stat().st_size
        except OSError:
            return None
        got = _marks(path, size)
        if got is None or not settled(got[0]):
            return None
        st, last, first = got
        ends.append([str(path.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, last, first])
    return hashlib.sha256(json.dumps([VERSION, ends, shape]).encode()).hexdigest()


def _finished_file(files: list[Path], kind: str) -> Path:
    name = hashlib.sha256("\n".join(str(p.resolve()) for p in files).encode()).hexdigest()[:24]
    return state_folder() / f"{name}.{kind}"


def finished(files: list[Path], kind: str, at: str | None) -> Any:
    """What was kept of kind `kind` under mark `at` (`keep_finished`); None when there is none, another, or it is
    unreadable."""
    if at is None:
        return None
    try:
        kept, value = marshal.loads(_finished_file(files, kind).read_bytes())
    except (OSError, ValueError, TypeError, EOFError):
        return None
    return value if kept == at else None


def keep_finished(files: list[Path], kind: str, at: str, value: Any) -> None:
    """Keep `value` (plain values: `marshal`) under mark `at`, replacing what was kept of its kind for these ledgers."""
    with contextlib.suppress(OSError, ValueError):
        atomic_write(_finished_file(files, kind), marshal.dumps([at, value]), 0o600, durable=False)
