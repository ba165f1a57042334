"""Reading the ledger: verdict codes, and the fast path for the lines the gate writes (a few anchored
regular expressions instead of `json.loads`, five times slower); any line they do not recognise goes
through `json.loads` and is either used or counted as skipped, never a crash.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import heapq
import io
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, TypeGuard

from donegate.ledger import chain as ledger


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
BY = ("config", "repo", "day", "client")
LABELS = ("justified", "unjustified")  # of a block
APPEAL_LABELS = ("upheld", "rejected")  # of an appeal: the test was wrong, or the agent was
APPEALS_LISTED = 50  # appeals kept by name (the latest; the text shows the first few)
# The person's commands' own lines (`donegate.person.ownership`): read, not "ignored"; those run inside a session are listed.
PERSON_EVENTS = frozenset({"seal", "install", "uninstall", "refused", "unseal", "approve", "reject"})
INSIDE_LISTED = 50  # the kit's commands run from inside a Claude Code session, kept by name (the latest)

CHUNK = 256 << 10  # bytes read at a time
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
# The stop's client (`report --by client`): after the gates, before the agent's figures and the tail.
_CLIENT = re.compile(rb',"client":"(\w{1,40})"(?:,"agent_usd":[^,]*,"agent_seconds":[^,]*)?,"blocks":').search
# The agent's own cost and time (`gate.record`, `sessions.usage`), when the line has them: just before the
# tail, found in the few bytes before it (a regular expression with an optional part before `,"blocks":`
# loses the literal prefix the search starts from, and costs 3 times the whole read).
_AGENT_AT = b',"agent_usd":'
_AGENT = re.compile(rb',"agent_usd":(' + _NUM + rb'|null),"agent_seconds":(' + _NUM + rb'|null)').fullmatch
_AGENT_WINDOW = 80
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
                 "appeals", "upheld", "rejected", "decided",
                 "agent_cost", "agent_priced", "agent_unpriced", "agent_seconds", "agent_timed")

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
    decided: int  # sessions a person decided (approve, reject, an appeal's label): never left for a person
    agent_cost: int  # the agent's model cost, summed over sessions whose cost is known (1/MICRO $)
    agent_priced: int  # sessions with a known agent cost
    agent_unpriced: int  # sessions whose agent used a model the price table does not know
    agent_seconds: int  # the agent's session time, summed over sessions that have it (1/TICKS s)
    agent_timed: int

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
    # session -> the time of the latest stop a person decided in it (`labels.decided_sessions`): such a
    # session is not left for a person, unless a stop after that one failed again
    decided: dict[bytes, bytes] = field(default_factory=dict)


# A session's state is one int, not a tuple: a million-line ledger holds a few hundred thousand
# sessions, and a tuple would cost 40 more bytes each. Bits: verdict code 0-3, tests passing 4-27,
# tests sealed 28-51, line number (in the range) 52-91, from 92 on the index of its (group, repo,
# config) in `Partial.combo_list`. The agent's figures are apart (`Partial.agents`): a ledger written
# before them pays nothing for them.
_PASSED, _SEALED, _LINE, _COMBO = 4, 28, 52, 92
_AUSD, _ASECS = 0, 41  # in `Partial.agents`: the agent's cost (`_agent_bits`), its time
_FIELD, _LINES, _USD_BITS, _SECS_BITS = (1 << 24) - 1, (1 << 40) - 1, (1 << 41) - 1, (1 << 32) - 1
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
    # the kit's person-only commands run (or refused) inside a Claude Code session: (line in this range, time,
    # event, command, repo, session); `inside` counts them all
    inside_latest: collections.deque = field(default_factory=lambda: collections.deque(maxlen=INSIDE_LISTED))
    inside: int = 0
    person: collections.Counter = field(default_factory=collections.Counter)  # the person's commands by name
    # filled by `fold`
    per_pair: collections.Counter = field(default_factory=collections.Counter)  # ((repo, config), key) -> sessions
    latest: list[tuple] = field(default_factory=list)  # (line, session, key, code, gave up) of the latest left
    left: int = 0
    present: set[bytes] = field(default_factory=set)  # labelled sessions this range holds
    agents: dict[bytes, bytes] = field(default_factory=dict)  # session -> its latest agent figures' raw text
    # decided sessions whose last stop (in this range) came after the decided one and failed: waiting again
    reopened: set[bytes] = field(default_factory=set)
    decided: dict[bytes, bytes] = field(default_factory=dict)  # `Options.decided`

    def combo(self, day: bytes, repo: bytes, cfg: bytes) -> tuple[Group, int]:
        """The group and packed-state base of a new combination (`day` is b"" unless by day)."""
        key = day if self.by in ("day", "client") else repo if self.by == "repo" else cfg
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
        elif kind == "person":
            self.person[value] += 1
        elif kind == "inside":
            self.inside += 1
            self.inside_latest.append((number, *value))
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
        self.last, self.gave_up, self.agents = {}, set(), {}  # the rest is small enough to send back
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
        agent = _fast_agent(self.agents[sid]) if sid in self.agents else 0
        usd, secs = agent >> _AUSD & _USD_BITS, agent >> _ASECS & _SECS_BITS
        if usd == 1:
            g.agent_unpriced += 1
        elif usd:
            g.agent_priced += 1
            g.agent_cost += usd - 2
        if secs:
            g.agent_timed += 1
            g.agent_seconds += (secs - 1) * (TICKS // 10)
        if sid in self.decided and sid not in self.reopened:
            g.decided += 1
            return 0
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
                    rec["config"].encode(), review_cost(gates.get("review")),
                    _agent_bits(rec.get("agent_usd"), rec.get("agent_seconds"), "agent_usd" in rec))


def agent_of(rec: dict[str, Any]) -> dict[str, Any]:
    """A stop line's figures of the agent's session: `agent` with its `usd` and `seconds` ({} when none)."""
    if "agent_usd" not in rec:
        return {}
    agent = rec["agent"] if isinstance(rec.get("agent"), dict) else {}
    return {**agent, "usd": rec.get("agent_usd"), "seconds": rec.get("agent_seconds")}


def _agent_bits(usd: Any, seconds: Any, present: bool) -> int:
    """The agent's cost and time of one stop line, packed for a session's state: cost 0 when the line has
    none, 1 when it is unknown (a model not priced), else 2 + micro-dollars; time 0 when none, else 1 +
    tenths of a second."""
    bits = 0
    if present:
        bits |= (min(round(usd * MICRO), _USD_BITS - 2) + 2 if _is_num(usd) and usd >= 0 else 1) << _AUSD
    if _is_num(seconds) and seconds >= 0:
        bits |= (min(round(seconds * 10), _SECS_BITS - 1) + 1) << _ASECS
    return bits


def _agent_text(bits: int) -> bytes:
    """A slow-path line's agent figures as the fast path keeps them: the raw text (b"" when none)."""
    if not bits:
        return b""
    usd, secs = bits >> _AUSD & _USD_BITS, bits >> _ASECS & _SECS_BITS
    return (b',"agent_usd":' + (b"null" if usd < 2 else repr((usd - 2) / MICRO).encode())
            + b',"agent_seconds":' + (b"null" if not secs else repr((secs - 1) / 10).encode()))


def _fast_agent(text: bytes) -> int:
    """`_agent_bits` from the raw `,"agent_usd":X,"agent_seconds":Y` of a stop line (0: none)."""
    m = _AGENT(text)
    if m is None:
        return 0
    usd, secs = m.groups()
    return _agent_bits(None if usd == b"null" else float(usd), None if secs == b"null" else float(secs), True)


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
    by = rec["by"] if isinstance(rec.get("by"), dict) else {}
    if rec.get("inside_session") is True and event != "write" and not by.get("confirmed"):
        # One of the person's commands run from inside a Claude Code session (`donegate.person.ownership`) and not
        # confirmed on the person's terminal: never a person's label or approval; listed first.
        return "inside", (_str(rec.get("time")), _str(event), _str(rec.get("command") or event),
                          _str(rec.get("repo") or by.get("gated_repo")), _str(by.get("session") or rec.get("session")))
    if event in ("write", "write_failed"):  # a failed write cost money too
        repo, cfg, cost = rec.get("repo"), rec.get("config"), rec.get("cost_usd")
        if not (isinstance(repo, str) and isinstance(cfg, str) and _is_num(cost)):
            return "skip", f"{event} without repo, config or cost_usd"
        return "write", (repo.encode(), cfg.encode(), float(cost), canonical_time(rec.get("time")))
    if event == "label":
        return label_row(rec)
    if event == "decision":  # a person's approve / reject: read on its own (`labels.decisions`); an appeal's is its label too
        return label_row(rec) if rec.get("label") in APPEAL_LABELS else ("decision", None)
    if event in PERSON_EVENTS:
        return "person", event
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
    part = Partial(index=index, by=opts.by, decided=opts.decided)
    decided, reopened, failing = opts.decided, part.reopened, FAILING
    last, gave_up, combos, agents = part.last, part.gave_up, _Combos(part), part.agents
    by_day, since = opts.by == "day", opts.since
    # By client: the stop's `"client":"..."` (between its gates and its tail, read by neither path's row);
    # a line from before the kit recorded it is Claude Code's.
    client = _CLIENT if opts.by == "client" else None
    stop_match: Callable[[bytes], Any] = _STOP if opts.fast else (lambda line: None)
    t: Any  # the tail Match of a line the fast path takes
    tail, review_cost_at, find, tests_bits = _TAIL, _fast_review_cost, bytes.find, _Tests()
    # locals, not globals, in the loop: a global lookup per use adds up over a million lines
    codes, blocking, hint, gave, window, review, line_at = _BCODE, BLOCKING, HINT, GAVE_UP, _TAIL_WINDOW, _REVIEW, _LINE
    appealed, agent_at, agent_window, rfind = APPEALED, _AGENT_AT, _AGENT_WINDOW, bytes.rfind
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
                end = t.start()
                apos = rfind(line, agent_at, end - agent_window, end)
                agent = b"" if apos < 0 else line[apos:end]  # parsed once per session, in `fold`
            else:
                kind, row = slow_row(line)
                if kind != "stop":
                    part.note(kind, row, number, since)
                    continue
                when, repo, sid, code, sealed, passed, dur, cfg, cost, agent = row
                agent = _agent_text(agent)
                tests = _pack_tests(sealed, passed)
            if since is not None and when < since:
                continue
            if client is not None:
                c = client(line)
                g, base = combos[(c.group(1) if c else b"claude", repo, cfg)]
            else:
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
            if agent:  # the session's latest figures (a session whose last range has none keeps none)
                agents[sid] = agent
            if decided and sid in decided:  # rare: a session a person decided; only its last stop matters
                if when > decided[sid] and code in failing:
                    reopened.add(sid)
                else:
                    reopened.discard(sid)
    part.lines = number
    return part


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
