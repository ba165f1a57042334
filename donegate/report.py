"""`donegate report` and `donegate label`: reading the ledger back for a person.

The summary answers, per configuration label (or per repository or day): sessions and stops seen,
blocks and whether a person agreed with them (labels), loops that gave up, sessions that ended
passing, the requirement pass rate at each session's last stop, what the gates cost in money and
time, and how many sessions are left for a person. `--session ID` prints one session stop by stop;
`--verify` walks the hash chain. `docs/ledger.md` defines every field and every count.

Reading is built for large ledgers (a million lines in a few seconds): a line the kit wrote is read
with a few anchored regular expressions instead of `json.loads`, which is five times slower; any line
they do not recognise goes through `json.loads` and is either used or counted as skipped, never a
crash. Memory grows with the number of sessions, never with the number of lines. Large files are
read by two processes, each a range of whole lines; their partial counts merge in file order.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import heapq
import io
import json
import multiprocessing
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeGuard

from donegate import ledger
from donegate.errors import DonegateError

# Verdict codes. A blocking stop is one the hook answered with exit 2; `error` blocks unless the
# block counter was broken (gates.counter_error), in which case the stop was let through. An
# `appealed` stop was let through on the agent's appeal: never a pass, always left for a person.
VERDICTS = ("pass", "review_error", "block", "hint", "gave_up", "unsealed", "error", "error", "appealed")
PASS, REVIEW_ERROR, BLOCK, HINT, GAVE_UP, UNSEALED, ERROR, ERROR_ALLOWED, APPEALED = range(9)
_CODE = {name: code for code, name in enumerate(VERDICTS) if code != ERROR_ALLOWED}
_BCODE = {name.encode(): code for name, code in _CODE.items()}
BLOCKING = frozenset((BLOCK, HINT, ERROR))
PASSING = frozenset((PASS, REVIEW_ERROR))  # the acceptance tests passed at that stop
FAILING = frozenset((BLOCK, HINT, GAVE_UP, ERROR, ERROR_ALLOWED, APPEALED))
BY = ("config", "repo", "day")
LABELS = ("justified", "unjustified")  # of a block
APPEAL_LABELS = ("upheld", "rejected")  # of an appeal: the test was wrong, or the agent was
APPEALS_LISTED = 50  # appeals kept by name (the latest; the text shows the first few)

CHUNK = 256 << 10  # bytes read at a time
PARALLEL_BYTES = 64 << 20  # ledgers smaller than this are read by one process
WORKER_TIMEOUT = 3600  # seconds one reader process may take
EXAMPLES = 20  # skipped lines kept by name (the text shows the first few)
ATTENTION = 10  # sessions left for a person listed by the text report
MIN_REF = 6  # hex characters `label` accepts as a stop reference

# -------------------------------------------------------------------------------------------------
# Reading: the fast path for the lines the gate writes, json.loads for everything else
# -------------------------------------------------------------------------------------------------

# A JSON string body without escapes or non-ASCII: its raw bytes equal the decoded value's UTF-8, so
# the fast path and json.loads agree on it byte for byte. Anything else takes the slow path.
_STR = rb'[^"\\\x00-\x1f\x7f-\xff]'
_NUM = rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# From the start of a stop line to its acceptance counts. `\{[^{}]*\}` spans a gate object without
# nesting exactly: a brace inside one of its strings makes the match fail (then json.loads reads it),
# never succeed wrongly, because the `,"scope":{` that must follow cannot occur inside a string (a
# quote inside a JSON string is always escaped). The same holds for every `,"key":` anchor below.
_STOP = re.compile(
    rb'\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00)","repo":"(' + _STR + rb'*)",'
    rb'"session":"(' + _STR + rb'+)","stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),'
    rb'"verdict":"(pass|review_error|block|hint|gave_up|appealed)","gates":\{"integrity":\{[^{}]*\}(?:,"leak":\{[^{}]*\})?,'
    rb'"scope":\{[^{}]*\},"acceptance":\{"ok":(?:true|false|null),"total":(\d{1,7},"passed":\d{1,7}),'
).match
# The end of a stop line, searched for in its last TAIL_WINDOW bytes (a longer config name or kit
# version sends the line to json.loads).
_TAIL = re.compile(
    rb',"blocks":(?:\d+|null),"duration":(' + _NUM + rb'),"kit_version":"[^"\\]*","config":"(' + _STR
    + rb'*)","prev":"[^"\\]*"\}$'
).search
_TAIL_WINDOW = 512
# The review's own total comes after its reviewers' entries, followed by keys no entry has. No gate
# before the review nests objects, and none after it has a cost: `find` and `rfind` over the whole
# line are exact.
_REVIEW_TOTAL = re.compile(rb',"cost_usd":(' + _NUM + rb'),"duration":' + _NUM + rb'(?:,"diff_chars":|,"state":|\})').match
_REVIEW = b',"review":{'
_COST = b'"cost_usd":'


# Time and money add up as integers (the gate rounds durations to 4 decimals, costs to 6): float
# sums would differ in the last digit with the order of addition, i.e. with the number of readers.
TICKS, MICRO = 10_000, 1_000_000


class Group:
    """Counts for one configuration (repo, day). Stop counts add up as lines are read; session counts
    are folded in once every line is read (a session counts in the group of its last stop).
    `seconds` is in 1/TICKS s, `review_cost` in 1/MICRO $."""

    __slots__ = ("key", "stops", "blocks", "hints", "justified", "unjustified", "seconds", "review_cost",
                 "sessions", "passing", "unsealed", "gave_up", "left", "passed", "sealed", "writer_cost",
                 "appeals", "upheld", "rejected")

    # declared for readers and mypy; __init__ zeroes every counter
    key: bytes
    stops: int
    blocks: int
    hints: int
    justified: int
    unjustified: int
    seconds: int
    review_cost: int
    sessions: int
    passing: int
    unsealed: int
    gave_up: int
    left: int
    passed: int
    sealed: int
    writer_cost: float
    appeals: int
    upheld: int
    rejected: int

    def __init__(self, key: bytes) -> None:
        self.key = key
        for name in self.__slots__[1:]:
            setattr(self, name, 0)

    def add(self, other: Group) -> None:
        for name in self.__slots__[1:]:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Options:
    by: str = "config"
    since: bytes | None = None  # canonical UTC time; stops before it are not counted
    fast: bool = True  # False sends every line through json.loads (tests compare the two)


# A session's state is one int, not a tuple: a million-line ledger holds a few hundred thousand
# sessions, and a tuple would cost 40 more bytes each. Bits: verdict code 0-3, tests passing 4-27,
# tests sealed 28-51, line number (in the range) 52-91, from 92 on the index of its (group, repo,
# config) in `Partial.combo_list`.
_PASSED, _SEALED, _LINE, _COMBO = 4, 28, 52, 92
_FIELD, _LINES = (1 << 24) - 1, (1 << 40) - 1
_SEP = b"\xff"  # joins session ids for the hand-over: UTF-8 never holds a 0xFF byte
_SESSIONS = re.compile(rb"[^\xff]+").finditer


class _Tests(dict):
    """b'39,"passed":37' -> its packed bits: a few distinct values, so a cache beats two int() calls."""

    def __missing__(self, key: bytes) -> int:
        sealed, _, passed = key.partition(b',"passed":')
        bits = self[key] = _pack_tests(int(sealed), int(passed))
        return bits


def _pack_tests(sealed: int, passed: int) -> int:
    return sealed << _SEALED | passed << _PASSED


class _Combos(dict):
    """(day,) repo, config -> (Group, packed base); a new combination asks its Partial."""

    def __init__(self, part: Partial) -> None:
        super().__init__()
        self.part = part

    def __missing__(self, key: tuple) -> tuple[Group, int]:
        combo = self[key] = self.part.combo(*key if len(key) == 3 else (b"", *key))
        return combo


@dataclass
class Partial:
    """What one reader learned from one range of lines (range `index` in file order).

    Reading ends with a hand-over between the ranges (`handover`, then `fold`): a session whose
    stops lie in several ranges is counted by the last of them, which must know whether it gave up
    earlier. Only session ids cross between processes, never the sessions' states.
    """

    index: int = 0
    by: str = "config"
    lines: int = 0
    groups: dict[bytes, Group] = field(default_factory=dict)
    combo_list: list[tuple[Group, tuple[bytes, bytes]]] = field(default_factory=list)  # index -> (group, (repo, config))
    last: dict[bytes, int] = field(default_factory=dict)  # session -> packed state of its last stop
    gave_up: set[bytes] = field(default_factory=set)
    writes: collections.Counter = field(default_factory=collections.Counter)  # (repo, config) -> writer $ in 1/MICRO
    # stop ref -> (label, the stop's time, repo, config, session, verdict), a later label replacing an earlier
    labels: dict[str, tuple] = field(default_factory=dict)
    skipped: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)  # (line in this range, why)
    events: collections.Counter = field(default_factory=collections.Counter)  # events the report ignores
    # the latest appeals: (line in this range, ref, session, group key, time, reason, failing test ids)
    appeals: collections.deque = field(default_factory=lambda: collections.deque(maxlen=APPEALS_LISTED))
    # filled by `fold`
    per_pair: collections.Counter = field(default_factory=collections.Counter)  # ((repo, config), key) -> sessions
    latest: list[tuple] = field(default_factory=list)  # (line, session, key, code, gave up) of the latest left
    left: int = 0
    present: set[bytes] = field(default_factory=set)  # labelled sessions this range holds

    def combo(self, day: bytes, repo: bytes, cfg: bytes) -> tuple[Group, int]:
        """The group and packed-state base of a new combination (`day` is b"" unless by day)."""
        key = day if self.by == "day" else repo if self.by == "repo" else cfg
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = Group(key)
        self.combo_list.append((g, (repo, cfg)))
        return g, (len(self.combo_list) - 1) << _COMBO

    def note(self, kind: str, value: Any, number: int, since: bytes | None) -> None:
        """A line that is not a stop: a writer's cost, a label, another event, or junk."""
        if kind == "write":
            repo, cfg, cost, when = value
            if since is None or when is None or when >= since:
                self.writes[repo, cfg] += round(cost * MICRO)
        elif kind == "label":
            self.labels[value[0]] = value[1:]
        elif kind == "event":
            self.events[value] += 1
        elif kind == "skip":
            self.skipped += 1
            if len(self.examples) < EXAMPLES:
                self.examples.append((number, value))

    def appeal(self, line: bytes, number: int, g: Group) -> None:
        """An appealed stop (rare: json.loads is fine): counted, and kept by name with its reason."""
        g.appeals += 1
        try:
            rec = json.loads(line)
            gate = rec["gates"].get("appeal") or {}
        except (ValueError, KeyError, AttributeError, TypeError):
            rec, gate = {}, {}
        gate = gate if isinstance(gate, dict) else {}
        failing = [str(f) for f in gate.get("failing") or []] if isinstance(gate.get("failing"), list) else []
        self.appeals.append((number, ledger.stop_ref(line), str(rec.get("session", "")), g.key,
                             str(rec.get("time", "")), str(gate.get("reason", "")), failing))

    def handover(self, count: int) -> tuple[bytes, list[bytes], set[bytes]]:
        """What the other ranges need: this range's sessions (earlier ranges drop them), its give-ups
        (later ranges flag them), the sessions its labels name."""
        sessions = _SEP.join(self.last) if self.index > 0 else b""
        gave_up = list(self.gave_up) if self.index < count - 1 else []
        return sessions, gave_up, {label[4] for label in self.labels.values()}

    def fold(self, later: list[bytes], gave_before: set[bytes], labelled: set[bytes]) -> Partial:
        """Count every session whose last stop is in this range in the group of that stop."""
        self.present = {sid for sid in labelled if sid in self.last}
        last = self.last
        for blob in later:
            for m in _SESSIONS(blob):
                last.pop(m.group(), None)  # a later range holds its last stop
        gave_up = self.gave_up | gave_before
        heap: list[tuple[Any, ...]] = []
        for sid, state in last.items():
            self.left += self._fold_session(sid, state, sid in gave_up, heap)
        self.latest = sorted(heap)
        self.last, self.gave_up = {}, set()  # the rest is small enough to send back
        return self

    def _fold_session(self, sid: bytes, state: int, gave: bool, heap: list) -> int:
        """Count one session; 1 when it is left for a person (kept in `heap` if among the latest)."""
        code, passed, sealed = state & 15, state >> _PASSED & _FIELD, state >> _SEALED & _FIELD
        g, pair = self.combo_list[state >> _COMBO]
        g.sessions += 1
        g.passed += passed
        g.sealed += sealed
        g.passing += code in PASSING
        g.unsealed += code == UNSEALED
        g.gave_up += gave
        self.per_pair[pair, g.key] += 1
        if not (gave or code in FAILING):
            return 0
        g.left += 1
        item = (state >> _LINE & _LINES, sid, g.key, code, gave)
        if len(heap) < ATTENTION:
            heapq.heappush(heap, item)
        else:
            heapq.heappushpop(heap, item)
        return 1


def _is_num(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def canonical_time(value: Any) -> bytes | None:
    """An ISO time as the gate writes it (UTC, milliseconds); naive times are taken as UTC."""
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").encode()


def review_cost(review: Any) -> float:
    """The reviewers' cost at one stop: the review's total, else the sum of its reviewers' costs."""
    if not isinstance(review, dict):
        return 0.0
    if _is_num(review.get("cost_usd")):
        return float(review["cost_usd"])
    entries = _list(review.get("reviewers"))
    return float(sum(e["cost_usd"] for e in entries if isinstance(e, dict) and _is_num(e.get("cost_usd"))))


_STOP_FIELDS = (("time", str), ("session", str), ("verdict", str), ("gates", dict), ("config", str), ("duration", float))


def stop_row(rec: dict[str, Any]) -> tuple[str, Any]:
    """('stop', row) for a stop record, or ('skip', why) when a field the report needs is missing."""
    for name, kind in _STOP_FIELDS:
        if name not in rec:
            return "skip", f"stop without '{name}'"
        value = rec[name]
        good = _is_num(value) if kind is float else isinstance(value, kind)
        if not good or (name == "session" and not value):
            return "skip", f"stop with a bad '{name}' ({json.dumps(value)[:40]})"
    gates, code = rec["gates"], _CODE.get(rec["verdict"])
    if code is None:
        return "skip", f"stop with an unknown verdict {rec['verdict'][:40]!r}"
    if code == ERROR and gates.get("counter_error"):
        code = ERROR_ALLOWED
    when = canonical_time(rec["time"])
    if when is None:
        return "skip", f"stop with a bad time {rec['time'][:40]!r}"
    accept = gates.get("acceptance")
    if isinstance(accept, dict):
        sealed, passed = _count(accept.get("total")), _count(accept.get("passed"))
    else:
        integrity = gates.get("integrity")
        sealed, passed = (_count(integrity.get("tests")) if isinstance(integrity, dict) else 0), 0
    if max(sealed, passed) > _FIELD:
        return "skip", f"stop with an implausible test count ({max(sealed, passed)})"
    repo = _str(rec.get("repo"))
    return "stop", (when, repo.encode(), rec["session"].encode(), code, sealed, passed, float(rec["duration"]),
                    rec["config"].encode(), review_cost(gates.get("review")))


def slow_row(line: bytes) -> tuple[str, Any]:
    """Any line the fast path did not take: ('stop', row), ('write', cost), ('label', None),
    ('event', name) or ('skip', why)."""
    if not line.strip():
        return "skip", "empty"
    try:
        rec = json.loads(line)
    except ValueError:
        return "skip", "not JSON" + ("" if line.rstrip().endswith(b"}") else " (torn: cut off)")
    if not isinstance(rec, dict):
        return "skip", "not a JSON object"
    version = rec.get("v")
    if not (type(version) is int and version == ledger.SCHEMA_VERSION):
        return "skip", f"unknown schema version {json.dumps(version)[:20]}" if "v" in rec else "no schema version"
    event = rec.get("event")
    if event == "stop":
        return stop_row(rec)
    if event in ("write", "write_failed"):  # a failed write cost money too
        repo, cfg, cost = rec.get("repo"), rec.get("config"), rec.get("cost_usd")
        if not (isinstance(repo, str) and isinstance(cfg, str) and _is_num(cost)):
            return "skip", f"{event} without repo, config or cost_usd"
        return "write", (repo.encode(), cfg.encode(), float(cost), canonical_time(rec.get("time")))
    if event == "label":
        return label_row(rec)
    return "event", str(event)[:40]


def label_row(rec: dict[str, Any]) -> tuple[str, Any]:
    """A label carries a copy of its stop's time, repo, config and session (`label_stop` takes them
    from the stop), so it is counted in the same single pass, without finding the stop's line."""
    ref, label, when = rec.get("ref"), rec.get("label"), canonical_time(rec.get("stop_time"))
    fields: list[Any] = [rec.get(k) for k in ("repo", "config", "session", "verdict")]
    if not (isinstance(ref, str) and label in LABELS + APPEAL_LABELS and when and all(isinstance(f, str) for f in fields)):
        return "skip", "label without ref, label, stop_time, repo, config, session or verdict"
    repo, cfg, session, verdict = fields
    return "label", (ref[: ledger.REF_CHARS], label, when, repo.encode(), cfg.encode(), session.encode(), verdict)


def _fast_review_cost(line: bytes, start: int) -> float | None:
    """The review gate's total from the raw line (the review object starts after `start`); None
    when the line does not have the reviewer's usual shape, which sends it to json.loads."""
    pos = line.rfind(_COST, start)
    if pos < 0:
        return 0.0  # no cost anywhere in it: a skipped review (a hint already given)
    m = _REVIEW_TOTAL(line, pos - 1)
    return float(m.group(1)) if m else None


class _Range(io.RawIOBase):
    """Bytes `start` to `end` of a file, under a BufferedReader: iterating its lines stays in C,
    which is several times cheaper per line here than splitting chunks in Python."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        super().__init__()
        self.fd, self.pos, self.end = fd, start, end

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        want = min(len(buf), self.end - self.pos)
        if want <= 0:
            return 0
        data = os.pread(self.fd, want, self.pos)
        buf[: len(data)] = data
        self.pos += len(data)
        return len(data)


@contextlib.contextmanager
def open_range(path: str, start: int, end: int) -> Iterator[io.BufferedReader[_Range]]:
    """The lines of bytes `start` to `end` (each with its newline, the last maybe without)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        with io.BufferedReader(_Range(fd, start, end), buffer_size=CHUNK) as fh:
            yield fh
    finally:
        os.close(fd)


def scan(path: str, start: int, end: int, opts: Options, index: int = 0) -> Partial:
    """Read one range of a ledger into a Partial.

    This loop is the report's hot path, written for speed: the fast path is inline (a function call
    per line costs a tenth of the budget), and a session's state is one packed int (see `_PASSED`).
    """
    part = Partial(index=index, by=opts.by)
    last, gave_up, combos = part.last, part.gave_up, _Combos(part)
    by_day, since = opts.by == "day", opts.since
    stop_match: Callable[[bytes], Any] = _STOP if opts.fast else (lambda line: None)
    t: Any  # the tail Match of a line the fast path takes
    tail, review_cost_at, find, tests_bits = _TAIL, _fast_review_cost, bytes.find, _Tests()
    # locals, not globals, in the loop: a global lookup per use adds up over a million lines
    codes, blocking, hint, gave, window, review, line_at = _BCODE, BLOCKING, HINT, GAVE_UP, _TAIL_WINDOW, _REVIEW, _LINE
    appealed = APPEALED
    ticks, micro = TICKS, MICRO
    number = 0
    with open_range(path, start, end) as lines:
        for line in lines:
            number += 1
            cost = None
            m = stop_match(line)
            if m is not None and (t := tail(line, len(line) - window)) is not None:
                rpos = find(line, review)
                cost = 0.0 if rpos < 0 else review_cost_at(line, rpos)
            if cost is not None:
                when, repo, sid, code, tests = m.groups()
                code, tests = codes[code], tests_bits[tests]
                dur, cfg = t.groups()
                dur = float(dur)
            else:
                kind, row = slow_row(line)
                if kind != "stop":
                    part.note(kind, row, number, since)
                    continue
                when, repo, sid, code, sealed, passed, dur, cfg, cost = row
                tests = _pack_tests(sealed, passed)
            if since is not None and when < since:
                continue
            g, base = combos[(when[:10], repo, cfg) if by_day else (repo, cfg)]
            g.stops += 1
            g.seconds += round(dur * ticks)
            if cost:
                g.review_cost += round(cost * micro)
            if code in blocking:
                g.blocks += 1
                g.hints += code == hint
            elif code == gave:
                gave_up.add(sid)
            elif code == appealed:
                part.appeal(line, number, g)
            last[sid] = base | number << line_at | tests | code
    part.lines = number
    return part


# -------------------------------------------------------------------------------------------------
# Files, ranges, processes
# -------------------------------------------------------------------------------------------------


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


# -------------------------------------------------------------------------------------------------
# The summary (the one source of every number the text, Markdown and JSON show)
# -------------------------------------------------------------------------------------------------


def parse_since(text: str) -> bytes:
    """--since: a date, an ISO time (UTC unless it says otherwise), or '7d' / '12h' ago."""
    m = re.fullmatch(r"\s*(\d+)\s*([dh])\s*", text)
    if m:
        delta = dt.timedelta(**{"days" if m.group(2) == "d" else "hours": int(m.group(1))})
        return (dt.datetime.now(dt.timezone.utc) - delta).isoformat(timespec="milliseconds").encode()
    when = canonical_time(text.strip())
    if when is None:
        raise DonegateError(f"--since {text!r} is not a date or time",
                            "use a date (2026-12-01), an ISO time (2026-12-01T14:00) or a span (7d, 12h)")
    return when


def _numbers(g: Group) -> dict[str, Any]:
    n, seconds, review = g.sessions, g.seconds / TICKS, g.review_cost / MICRO
    cost = g.writer_cost + review
    return {
        "sessions": n, "stops": g.stops, "blocks": g.blocks, "hints": g.hints,
        "justified": g.justified, "unjustified": g.unjustified, "unlabelled": g.blocks - g.justified - g.unjustified,
        "gave_up": g.gave_up, "appeals": g.appeals, "appeals_upheld": g.upheld, "appeals_rejected": g.rejected,
        "ended_passing": g.passing, "ended_unsealed": g.unsealed, "left_for_person": g.left,
        "requirements_passed": g.passed, "requirements_sealed": g.sealed,
        "requirement_rate_pct": round(100 * g.passed / g.sealed, 1) if g.sealed else None,
        "writer_cost_usd": round(g.writer_cost, 4), "review_cost_usd": round(review, 4),
        "cost_usd": round(cost, 4), "cost_per_session_usd": round(cost / n, 4) if n else None,
        "gate_seconds": round(seconds, 1), "seconds_per_session": round(seconds / n, 1) if n else None,
    }


def _merge(merged: list[tuple[Path, int, Partial]]) -> tuple[dict[bytes, Group], collections.Counter, list, int]:
    """(groups by key, sessions per ((repo, config), key), the latest sessions left for a person,
    how many are left) from the folded ranges."""
    groups: dict[bytes, Group] = {}
    per_pair: collections.Counter = collections.Counter()
    latest = []
    for _, _, part in merged:
        for key, g in part.groups.items():
            groups.setdefault(key, Group(key)).add(g)
        per_pair.update(part.per_pair)
        latest += [(part.index, *item) for item in part.latest]
    latest = sorted(latest)[-ATTENTION:][::-1]  # the latest last stops first
    return groups, per_pair, [item[2:] for item in latest], sum(p.left for _, _, p in merged)


def _attribute_writers(groups: dict[bytes, Group], per_pair: collections.Counter, writes: collections.Counter) -> float:
    """Share each (repo, config)'s writer cost among that pair's sessions evenly; return the cost of
    writers whose pair has no session in what was read."""
    sessions: collections.Counter = collections.Counter()
    for (pair, _), n in per_pair.items():
        sessions[pair] += n
    for (pair, key), n in sorted(per_pair.items()):  # sorted: the same sums in the same order every time
        if pair in writes:
            groups[key].writer_cost += writes[pair] * n / sessions[pair] / MICRO
    return sum(cost for pair, cost in writes.items() if not sessions[pair]) / MICRO


def _text(key: bytes) -> str:
    return key.decode("utf-8", "replace") or "(none)"


def summarize(files: list[Path], by: str = "config", since: bytes | None = None, jobs: int = 1,
              fast: bool = True) -> dict[str, Any]:
    merged = read_all(files, Options(by=by, since=since, fast=fast), jobs)
    groups, per_pair, latest, left = _merge(merged)
    labels, unmatched = _count_labels(merged, groups, by, since)
    writes: collections.Counter = collections.Counter()
    for _, _, part in merged:
        writes.update(part.writes)
    unattributed = _attribute_writers(groups, per_pair, writes)
    total = Group(b"all")
    for g in groups.values():
        total.add(g)
    skipped = [{"ledger": str(path), "line": offset + n, "why": why}
               for path, offset, part in merged for n, why in part.examples][:EXAMPLES]
    events: collections.Counter = collections.Counter()
    for _, _, part in merged:
        events.update(part.events)
    return {
        "ledgers": [str(p) for p in files],
        "by": by,
        "since": since.decode() if since else None,
        "lines": sum(p.lines for _, _, p in merged),
        "groups": [{by: _text(key), **_numbers(groups[key])} for key in sorted(groups)],
        "total": _numbers(total),
        "left_for_person": {"count": left, "latest": [
            {"session": _text(sid), by: _text(key), "last_verdict": VERDICTS[code], "gave_up": gave}
            for sid, key, code, gave in latest]},
        "labels": {"count": labels, "unmatched": unmatched},
        "appeals": _appeals(merged, by, total),
        "writer_cost_unattributed_usd": round(unattributed, 4),
        "skipped": {"count": sum(p.skipped for _, _, p in merged), "examples": skipped},
        "ignored_events": dict(sorted(events.items())),
    }


def _appeals(merged: list[tuple[Path, int, Partial]], by: str, total: Group) -> dict[str, Any]:
    """The appeals: how many, how a person labelled them, and the latest by name with reason and tests."""
    labels: dict[str, tuple] = {}
    for _, _, part in merged:
        labels.update(part.labels)
    latest = sorted((part.index, *item) for _, _, part in merged for item in part.appeals)[-APPEALS_LISTED:][::-1]
    return {"count": total.appeals, "upheld": total.upheld, "rejected": total.rejected, "latest": [
        {"ref": ref, "session": sid, by: _text(key), "time": when, "reason": reason, "failing": failing,
         "label": labels[ref][0] if ref in labels and labels[ref][0] in APPEAL_LABELS else None}
        for _, _, ref, sid, key, when, reason, failing in latest]}


def _count_labels(merged: list[tuple[Path, int, Partial]], groups: dict[bytes, Group], by: str,
                  since: bytes | None) -> tuple[int, list[str]]:
    """Count each stop's latest label in its stop's group: (labels counted, refs of labels whose
    session is not in what was read or whose stop did not block)."""
    labels: dict[str, tuple] = {}
    for _, _, part in merged:
        labels.update(part.labels)
    counted, unmatched = 0, []
    for ref, (label, when, repo, cfg, sid, verdict) in labels.items():
        if since is not None and when < since:
            continue
        g = groups.get(when[:10] if by == "day" else repo if by == "repo" else cfg)
        fits = _CODE.get(verdict) == APPEALED if label in APPEAL_LABELS else _CODE.get(verdict) in BLOCKING
        if g is None or not fits or not any(sid in p.present for _, _, p in merged):
            unmatched.append(ref)
            continue
        counted += 1
        setattr(g, label, getattr(g, label) + 1)
    return counted, sorted(unmatched)


# -------------------------------------------------------------------------------------------------
# Rendering the summary: aligned text (or one block per group when too wide), Markdown
# -------------------------------------------------------------------------------------------------


def _num(value: Any, unit: str = "", prefix: str = "") -> str:
    return "-" if value is None else f"{prefix}{value}{unit}"


# (header, cell) per column; every cell prints numbers exactly as `--json` has them.
COLUMNS: list[tuple[str, Any]] = [
    ("sessions", lambda n: _num(n["sessions"])),
    ("stops", lambda n: _num(n["stops"])),
    ("blocks", lambda n: _num(n["blocks"])),
    ("justified", lambda n: _num(n["justified"])),
    ("unjustified", lambda n: _num(n["unjustified"])),
    ("unlabelled", lambda n: _num(n["unlabelled"])),
    ("gave up", lambda n: _num(n["gave_up"])),
    ("appeals", lambda n: _num(n["appeals"])),
    ("ended passing", lambda n: _num(n["ended_passing"])),
    ("requirements", lambda n: f"{n['requirements_passed']}/{n['requirements_sealed']}"),
    ("rate", lambda n: _num(n["requirement_rate_pct"], "%")),
    ("cost/session", lambda n: _num(n["cost_per_session_usd"], prefix="$")),
    ("time/session", lambda n: _num(n["seconds_per_session"], "s")),
    ("left for a person", lambda n: _num(n["left_for_person"])),
]


def _rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    by = summary["by"]
    rows = [(g[by], g) for g in summary["groups"]]
    if len(rows) > 1:
        rows.append(("all", summary["total"]))
    return rows


def _aligned(rows: list[list[str]]) -> list[str]:
    """Columns as wide as their widest cell: the first left-aligned, numbers right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False))).rstrip()
            for r in rows]


def render_table(summary: dict[str, Any], width: int) -> list[str]:
    """One row per group if that fits `width`; else one column per group; else one block per group."""
    headers = [h for h, _ in COLUMNS]
    rows = [(name, [cell(n) for _, cell in COLUMNS]) for name, n in _rows(summary)]
    wide = [[summary["by"], *headers], *([name, *cells] for name, cells in rows)]
    tall = [[summary["by"], *(name for name, _ in rows)], *([h, *(cells[i] for _, cells in rows)] for i, h in enumerate(headers))]
    for table in (wide, tall):
        lines = _aligned(table)
        if max(map(len, lines)) <= width:
            return lines
    out = []
    for name, cells in rows:
        out += [f"{summary['by']} {name}", *("  " + line for line in _aligned([[h, c] for h, c in zip(headers, cells, strict=False)]))]
    return out


def render_markdown(summary: dict[str, Any]) -> list[str]:
    header = [summary["by"], *(h for h, _ in COLUMNS)]
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(COLUMNS)]
    out += ["| " + " | ".join([name.replace("|", "\\|"), *(cell(n) for _, cell in COLUMNS)]) + " |"
            for name, n in _rows(summary)]
    return out


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def notes(summary: dict[str, Any]) -> list[str]:
    """What the reader must know about what was not counted."""
    out = []
    skipped = summary["skipped"]
    if skipped["count"]:
        named = ", ".join(f"line {e['line']} {e['why']}" + (f" ({Path(e['ledger']).name})" if len(summary["ledgers"]) > 1 else "")
                          for e in skipped["examples"][:5])
        more = skipped["count"] - min(5, len(skipped["examples"]))
        out.append(f"{_plural(skipped['count'], 'line')} skipped: {named}" + (f" and {more:,} more" if more > 0 else ""))
    if summary["ignored_events"]:
        listed = ", ".join(f"{name} ({n:,})" for name, n in summary["ignored_events"].items())
        out.append(f"events the report does not read: {listed}")
    if summary["labels"]["unmatched"]:
        unmatched = summary["labels"]["unmatched"]
        out.append(f"{_plural(len(unmatched), 'label')} {'names' if len(unmatched) == 1 else 'name'} no blocking stop "
                   "in these ledgers: " + ", ".join(unmatched[:5]))
    if summary["writer_cost_unattributed_usd"]:
        out.append(f"${summary['writer_cost_unattributed_usd']} of writer cost belongs to repositories/configurations "
                   "with no session in this report")
    return out


def _attention(summary: dict[str, Any], markdown: bool) -> list[str]:
    left = summary["left_for_person"]
    if not left["count"]:
        return []
    shown = len(left["latest"])
    head = (f"Left for a person: {_plural(left['count'], 'session')}"
            + (f", the {shown} latest shown" if left["count"] > shown else "")
            + " (donegate report --session ID shows one stop by stop):")
    by = summary["by"]
    lines = [f"- `{s['session']}` {by} {s[by]}: " if markdown else f"  {s['session']}  {by} {s[by]}: " for s in left["latest"]]
    why = [("gave up" + ("" if s["last_verdict"] == "gave_up" else f", last stop {s['last_verdict']}"))
           if s["gave_up"] else f"ended on {s['last_verdict']}" for s in left["latest"]]
    return ["", head, *(a + b for a, b in zip(lines, why, strict=False))]


def _appeal_lines(summary: dict[str, Any], markdown: bool) -> list[str]:
    a = summary["appeals"]
    if not a["count"]:
        return []
    shown = a["latest"][:ATTENTION]
    head = (f"Appeals: {a['count']:,} (never counted as passing; {a['upheld']} upheld, {a['rejected']} rejected, "
            f"{a['count'] - a['upheld'] - a['rejected']} unlabelled)"
            + (f", the {len(shown)} latest shown" if a["count"] > len(shown) else "")
            + ": donegate label REF upheld|rejected")
    out = ["", head]
    for x in shown:
        tests = ", ".join(x["failing"][:3]) + (f" and {len(x['failing']) - 3} more" if len(x["failing"]) > 3 else "")
        label = f" [{x['label']}]" if x["label"] else ""
        line = f"ref {x['ref']} session {x['session']}{label}: {x['reason'][:200]!r}; failing: {tests or '-'}"
        out.append(f"- {line}" if markdown else f"  {line}")
    return out


def render(summary: dict[str, Any], markdown: bool = False, width: int = 1000) -> str:
    names = ", ".join(summary["ledgers"])
    if not summary["lines"]:
        return f"{names}: the ledger is empty; no stop has been recorded yet."
    if not summary["groups"]:
        return "\n".join([f"{names}: {_plural(summary['lines'], 'line')}, but no stop"
                          + (f" since {summary['since']}" if summary["since"] else "") + ".", *notes(summary)])
    t = summary["total"]
    title = (f"{names}: {_plural(summary['lines'], 'line')}, {_plural(t['stops'], 'stop')} in "
             f"{_plural(t['sessions'], 'session')}, by {summary['by']}" + (f", since {summary['since']}" if summary["since"] else ""))
    body = render_markdown(summary) if markdown else render_table(summary, width)
    tail = notes(summary)
    if markdown:
        return "\n".join([f"**{title}**", "", *body, *_attention(summary, True), *_appeal_lines(summary, True),
                          *([""] + [f"- {n}" for n in tail] if tail else [])])
    return "\n".join([title, "", *body, *_attention(summary, False), *_appeal_lines(summary, False), *([""] + tail if tail else [])])


# -------------------------------------------------------------------------------------------------
# One session, stop by stop
# -------------------------------------------------------------------------------------------------


def _finding_text(f: Any) -> str:
    if not isinstance(f, dict):
        return str(f)
    where = f"{f.get('file')}:{f.get('line')}" if f.get("file") and f.get("line") else (f.get("file") or "")
    status = f" {f['status']}" if f.get("status") else ""
    return f"[{f.get('severity', '?')}{status}] {where + ': ' if where else ''}{f.get('summary') or f.get('text') or ''}".rstrip()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _timeline_stop(rec: dict[str, Any], line: bytes, labels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One stop for `--session`, tolerant of any shape a hand-edited line may have."""
    gates = _dict(rec.get("gates"))
    accept, review, integrity = gates.get("acceptance"), gates.get("review"), _dict(gates.get("integrity"))
    accept, review = (accept if isinstance(accept, dict) else None), (review if isinstance(review, dict) else None)
    problems = [*_list(_dict(gates.get("scope")).get("problems")), integrity.get("problem"),
                accept and accept.get("problem"), gates.get("error")]
    label = labels.get(ledger.stop_ref(line))
    code = _CODE.get(rec.get("verdict", ""))
    return {
        "ref": ledger.stop_ref(line), "stop": rec.get("stop"), "time": rec.get("time"), "verdict": rec.get("verdict"),
        "blocked": code in BLOCKING and not (code == ERROR and gates.get("counter_error")),
        "duration": rec.get("duration"),
        "acceptance": {k: accept.get(k) for k in ("passed", "total", "duration")} if accept else None,
        "failing": [f for f in _list(accept.get("failing")) if isinstance(f, dict)] if accept else [],
        "problems": [str(p) for p in problems if p],
        "review": None if review is None else {
            "mode": review.get("mode"), "verdict": review.get("verdict") or ("skipped" if review.get("skipped") else None),
            "findings": _list(review.get("findings")), "errors": _list(review.get("errors")),
            "cost_usd": review_cost(review), "duration": review.get("duration")},
        "breaker": gates.get("breaker"),
        "appeal": gates.get("appeal") if isinstance(gates.get("appeal"), dict) else None,
        "cached": rec.get("cached") is True,
        "leak": gates.get("leak"),
        "label": {"label": label["label"], "note": label.get("note", "")} if label else None,
    }


# the HTML page reads stops, findings and verdicts the same way
timeline_stop, finding_text, verdict_code = _timeline_stop, _finding_text, _CODE.get


def session_timeline(files: list[Path], session: str) -> dict[str, Any]:
    """Every stop of one session, in ledger order."""
    needle = json.dumps(session)[1:-1].encode()  # as the kit writes it (escaped, ASCII)
    found: list[tuple[dict[str, Any], bytes]] = []
    labels: dict[str, dict[str, Any]] = {}  # a label names its session too
    for path in files:
        for _, line in ledger.read(path):
            if needle not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("session") != session:
                continue
            if rec.get("event") == "stop":
                found.append((rec, line))
            elif rec.get("event") == "label" and isinstance(rec.get("ref"), str) and rec.get("label") in LABELS + APPEAL_LABELS:
                labels[rec["ref"][: ledger.REF_CHARS]] = rec
    stops = [_timeline_stop(rec, line, labels) for rec, line in found]
    repo, cfg = (found[-1][0].get("repo"), found[-1][0].get("config")) if found else (None, None)
    if not stops:
        raise DonegateError(f"no stop of session {session!r} in {', '.join(map(str, files))}",
                            "session ids are in the summary (donegate report) and in Claude Code's transcript names")
    cost = sum(s["review"]["cost_usd"] for s in stops if s["review"])
    return {"session": session, "repo": repo, "config": cfg, "stops": stops,
            "total": {"stops": len(stops), "blocks": sum(s["blocked"] for s in stops),
                      "gate_seconds": round(sum(s["duration"] for s in stops if _is_num(s["duration"])), 1),
                      "review_cost_usd": round(cost, 4)}}


def _indent(text: str, cap: int = 400) -> str:
    text = text if len(text) <= cap else text[:cap] + " ..."
    return text.replace("\n", "\n      ")


def render_timeline(t: dict[str, Any]) -> str:
    out = [f"session {t['session']}  repo {t['repo']}  config {t['config']}", ""]
    for s in t["stops"]:
        acc = f"  {s['acceptance']['passed']}/{s['acceptance']['total']} tests pass" if s["acceptance"] else ""
        out.append(f"stop {s['stop']}  {s['time']}  {s['verdict']}{acc}  {_num(s['duration'], 's')}  ref {s['ref']}")
        out += [f"  failing {f.get('id')}: {_indent(str(f.get('message', '')))}" for f in s["failing"]]
        out += [f"  problem: {_indent(str(p))}" for p in s["problems"]]
        if s["review"]:
            r = s["review"]
            out.append(f"  review ({r['mode']}): {r['verdict']}, ${r['cost_usd']}, {_num(r['duration'], 's')}")
            out += [f"    {_indent(_finding_text(f))}" for f in r["findings"]]
            out += [f"    error: {e}" for e in r["errors"]]
        if isinstance(s["breaker"], dict):
            out += [f"  breaker: {k.replace('_', ' ')}: {v}" for k, v in s["breaker"].items()]
        if s["appeal"]:
            a = s["appeal"]
            out.append(f"  appeal {'accepted' if a.get('accepted') else 'refused'}: {_indent(str(a.get('reason', '')))}"
                       + ("" if a.get("accepted") else f" (refused: {a.get('refused')})"))
        if s["cached"]:
            out.append("  cached: the tests did not run again, nothing they read had changed")
        if s["leak"]:
            out.append(f"  leak: the transcript shows hidden test content ({s['leak']})")
        if s["label"]:
            out.append(f"  labelled {s['label']['label']}" + (f": {s['label']['note']}" if s["label"]["note"] else ""))
    tot = t["total"]
    out += ["", f"{_plural(tot['stops'], 'stop')}, {_plural(tot['blocks'], 'block')}, {tot['gate_seconds']}s in the gate, "
                f"${tot['review_cost_usd']} for reviewers (writer cost: see the summary)"]
    return "\n".join(out)


# -------------------------------------------------------------------------------------------------
# The hash chain
# -------------------------------------------------------------------------------------------------

def render_verify(v: dict[str, Any]) -> str:
    torn = f"; torn lines (a write cut off, the chain goes on): {', '.join(map(str, v['torn']))}" if v["torn"] else ""
    if v["intact"]:
        tip = (f"\n  last line's hash {v['last_hash']}: note it down, lines removed from the end leave no trace otherwise"
               if v["last_hash"] else "")
        return f"{v['ledger']}: {_plural(v['lines'], 'line')}, the hash chain is intact{torn}{tip}"
    return f"{v['ledger']}: the hash chain breaks at line {v['line']} of {v['lines']:,}: {v['why']}{torn}"


# -------------------------------------------------------------------------------------------------
# Labels
# -------------------------------------------------------------------------------------------------


def find_stop(path: Path, ref: str) -> tuple[str, dict[str, Any]]:
    """The stop whose line hash starts with `ref`: (its 10-character ref, its record)."""
    found: dict[str, bytes] = {}
    for _, line in ledger.read(path):
        h = ledger.line_hash(line)
        if h.startswith(ref) and b'"stop"' in line:
            found[h] = line
    stops = {}
    for h, line in found.items():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("event") == "stop":
            stops[h] = rec
    if not stops:
        raise DonegateError(f"no stop {ref} in {path}", "copy the ref from `donegate report --session ID`")
    if len(stops) > 1:
        raise DonegateError(f"{ref} names {len(stops)} stops", "give more characters of the ref")
    h, rec = stops.popitem()
    return h[: ledger.REF_CHARS], rec


def label_stop(path: Path, ref: str, label: str, note: str = "") -> dict[str, Any]:
    ref = ref.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{%d,64}" % MIN_REF, ref):
        raise DonegateError(f"{ref!r} is not a stop reference",
                            f"a ref is {ledger.REF_CHARS} hex characters, as `donegate report --session ID` shows")
    if label not in LABELS + APPEAL_LABELS:
        raise DonegateError(f"unknown label {label!r}", "use justified or unjustified (a block), upheld or rejected (an appeal)")
    if not path.is_file():
        raise DonegateError(f"no ledger at {path}", "pass the ledger that holds the stop with --ledger")
    short, rec = find_stop(path, ref)
    kind, row = stop_row(rec)
    if kind == "stop" and row[3] == APPEALED:
        if label not in APPEAL_LABELS:
            raise DonegateError(f"stop {short} is an appeal: label it upheld (the test was wrong) or rejected",
                                f"donegate label {short} upheld|rejected")
    elif label in APPEAL_LABELS:
        raise DonegateError(f"stop {short} is not an appeal (verdict {rec.get('verdict')}); only appeals are upheld or rejected",
                            "label blocks justified or unjustified")
    elif kind != "stop" or row[3] not in BLOCKING:
        raise DonegateError(f"stop {short} was not a block (verdict {rec.get('verdict')}); only blocks are labelled",
                            "label the stops `donegate report --session ID` shows as block or hint")
    # The stop's session, time, repo and config travel with the label: the report counts it without
    # finding the stop again (see `label_row`).
    return ledger.append({"event": "label", "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
                          "ref": short, "label": label, "note": note, "session": rec["session"], "stop": rec.get("stop"),
                          "stop_time": rec["time"], "repo": rec.get("repo") or "", "config": rec["config"],
                          "verdict": rec["verdict"]}, path)
