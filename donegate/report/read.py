"""Reading the ledger: what one reader learned of its range is a `Partial` (its groups, each session's state packed
in one int, the chain's ends), filled by the report's one pass (`count.scan`: the fast path for the lines the gate
writes, `shape.rows`, else `json.loads`, `rows.slow_row`), then folded into counts once every range is read. Each
line's place in the hash chain is checked as it is first read (`Partial.link`). Where the pass's CPU goes:
`count`'s docstring and `docs/bench.md`.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import heapq
import itertools
import json
import operator
import re
from binascii import hexlify
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from donegate.core.util import json_object
from donegate.ledger import chain as ledger
from donegate.report import hardcoding
from donegate.report.own_counts import Own
# The gate's line shape: the fast path's regular expression (`fast_line`: the report's package reads it from here).
from donegate.report.shape import fast_line  # noqa: F401
# What a line means, and the slow path: `rows`. The names are read from here too (the report's other modules, tests).
from donegate.report.rows import (  # noqa: F401
    CLAUDE, _AGENT, _ASECS, _AUSD, _BCODE, _CODE, _FIELD, _NUM, _SECS_BITS, _USD_BITS, APPEAL_DECISION, APPEAL_LABELS, APPEALED,
    APPEALS_LISTED, ATTENTION, BLOCK, BLOCKING, BY, DECISIONS, ERROR, ERROR_ALLOWED, EXAMPLES, FAILING, GAVE_UP, HINT,
    INSIDE_LISTED, LABELS, MICRO, MIN_REF, PASS, PASSING, PERSON_EVENTS, REVIEW_ERROR, TICKS, UNSEALED, VERDICTS,
    _agent_bits, _agent_text, _count, _fast_agent, _is_num, _list, _str, agent_of, canonical_time, decision_entry,
    label_row, review_cost, slow_row, stop_row)


CHUNK = 1 << 20  # bytes read at a time
_PREV, _PREV_AT = b',"prev":"%s"}', slice(-75, None)  # a line's end as the kit writes it, and where it lies
_DIGEST = operator.methodcaller("digest")

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
    page: int = 0  # the HTML page's sessions: each range's first this many in the page's order (`Partial.fold`)


# A session's state is one int, not a tuple: a million-line ledger holds a few hundred thousand
# sessions, and a tuple would cost 40 more bytes each. Bits: verdict code 0-3, tests passing 4-27,
# tests sealed 28-51, the line's byte offset in its file 52-91 (it orders the latest; `fold` reads a decided
# session's last stop there again), the byte offset of the session's first stop in this range 92-131 (the page reads
# its listed sessions' stops between the two: `page_read`), from 132 on the index of its (group, repo,
# config) in `Partial.combo_list`. The agent's figures are apart (`Partial.agents`): a ledger written
# before them pays nothing for them.
_PASSED, _SEALED, _AT, _FIRST, _COMBO = 4, 28, 52, 92, 132
_OFFSET = (1 << 40) - 1
_KIND = ~(_OFFSET << _AT | _OFFSET << _FIRST)  # a session's state without its offsets: its group, verdict and tests
SEP = _SEP = b"\xff"  # joins session ids for the hand-over: UTF-8 never holds a 0xFF byte
_SESSIONS = re.compile(rb"[^\xff]+").finditer
_LEFT_BIT = 47  # `Partial.page`: an offset's flag, left for a person (offsets take 40 bits)


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
    path: str = ""  # the ledger read (`fold` reads a decided session's last stop there again)
    lines: int = 0
    groups: dict[bytes, Group] = field(default_factory=dict)
    combo_list: list[tuple[Group, tuple[bytes, bytes]]] = field(default_factory=list)  # index -> (group, (repo, config))
    last: dict[bytes, int] = field(default_factory=dict)  # session -> packed state of its last stop
    gave_up: set[bytes] = field(default_factory=set)
    writes: collections.Counter = field(default_factory=collections.Counter)  # (repo, config) -> writer $ in 1/MICRO
    # stop ref -> (label, the stop's time, repo, config, session, verdict), a later label replacing an earlier
    labels: dict[str, tuple] = field(default_factory=dict)
    # by client only: stop ref -> the client of a stop a label may count in (a block, a hint, an appeal) that is not
    # Claude Code's. A label line copies its stop's time, repo and config but not its client: `summary._count_labels`
    # finds it here by its ref, and a ref not here is a Claude Code stop's (`CLAUDE`). Every ref kept, a Claude Code
    # ledger's `--by client` peaked at 109 MB on make bench's (83 by config); now it costs what by config costs.
    clients: dict[str, bytes] = field(default_factory=dict)
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
    # a person's latest decision per stop ref (`labels.decisions`), and the held-back stops (`hardcoding.held`):
    # read in this same pass, not in passes of their own over the whole ledger
    decisions: dict[str, dict] = field(default_factory=dict)
    held: list[int] = field(default_factory=lambda: [0, 0, 0])  # stops with held-back tests, shown passed, blocked
    # filled by `fold`
    per_pair: collections.Counter = field(default_factory=collections.Counter)  # ((repo, config), key) -> sessions
    latest: list[tuple] = field(default_factory=list)  # (line, session, key, code, gave up) of the latest left
    left: int = 0
    present: set[bytes] = field(default_factory=set)  # labelled sessions this range holds
    agents: dict[bytes, bytes] = field(default_factory=dict)  # session -> its latest agent figures' raw text
    # filled by `fold` for the page (`Options.page`): (left for a person, byte offsets of the last and the first stop,
    # session) of this range's first sessions in the page's order (left first, then the latest), packed
    # (`page_entries`); and (first, last stop) in this range of the sessions a later range holds the last stop of
    page: bytes = b""
    spill: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    # What the page counts over every stop, read in this same pass (the page reads no other line again): the stops
    # by verdict code, the days with a stop, and where the lines a label or a decision may be in lie (byte offsets)
    tally: list[int] = field(default_factory=lambda: [0] * len(VERDICTS))
    days: set[bytes] = field(default_factory=set)
    marks: list[int] = field(default_factory=list)
    # The hash chain through this range (`link`): the first line's prev hash (b"": a torn line, nothing to check; None:
    # no line read), the last line's hash and whether that line was torn, and whether a link inside the range broke.
    own: Own = field(default_factory=Own)  # what the project's own suite did (`own_counts`), read in this same pass
    head: bytes | None = None
    tail: bytes = b""
    tail_torn: bool = False
    broken: bool = False

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

    def decide(self, line: bytes) -> None:
        """A line that may be a person's decision (`labels.decisions`): the latest per stop ref is kept."""
        rec = json_object(line)
        entry = decision_entry(rec) if rec is not None else None
        if entry is not None:
            self.decisions[entry[0]] = entry[1]

    def hold(self, line: bytes, since: bytes | None) -> None:
        """A line holding held-back results (`hardcoding.held`): counted when it is a stop's."""
        row = hardcoding.held(line, since)
        if row is not None:
            self.held = [a + b for a, b in zip(self.held, row, strict=True)]

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

    def link(self, lines: list[bytes]) -> list[bytes]:
        """Check the hash chain through `lines`, the next lines of this range, as `ledger.verify` walks it: each line's
        prev is the hash of the line before; a torn line (not JSON, no prev) is vouched for by the next line, which
        must hold its hash. The hashes are made and compared in C, a chunk at a time (a line's last 75 bytes are
        `,"prev":"<hash>"}` when the kit wrote it); any other chunk is walked line by line. Returns the lines' hashes
        (hex), one a line (a stop's ref is the start of its own: `ledger.stop_ref`)."""
        hexes = every = list(map(hexlify, map(_DIGEST, map(hashlib.sha256, lines))))
        tails = list(map(operator.getitem, lines, itertools.repeat(_PREV_AT)))
        if lines and self.head is None:  # the range's first line: its link is checked with the range before
            self._step(lines[0], hexes[0])
            hexes, tails, lines = hexes[1:], tails[1:], lines[1:]
        if not lines or (not self.tail_torn and tails[0] == _PREV % self.tail and tails[1:] == list(map(_PREV.__mod__, hexes[:-1]))):
            if hexes:
                self.tail = hexes[-1]
            return every
        for line, h in zip(lines, hexes, strict=True):
            self._step(line, h)
        return every

    def _step(self, line: bytes, h: bytes) -> None:
        """One line of the chain, the slow way (`ledger.verify`'s reading of it)."""
        prev, is_json = ledger.prev_of(line)
        if prev is None:
            self.broken |= is_json or self.tail_torn  # a JSON line without prev; two torn lines in a row
        elif self.head is not None and prev.encode() != self.tail:
            self.broken = True
        if self.head is None:
            self.head = b"" if prev is None else prev.encode()
        self.tail, self.tail_torn = h, prev is None

    def follows(self, tail: bytes, torn: bool) -> bool:
        """Whether this range's first line chains onto a line with hash `tail` (`torn`: that line was torn)."""
        return self.head is None or (not torn if self.head == b"" else self.head == tail)

    def handover(self, count: int, sessions: bool = True) -> tuple[bytes, list[bytes], set[bytes]]:
        """What the other ranges need: this range's sessions (earlier ranges drop them; `sessions` False: they are
        sent apart, `parallel._send_sessions`), its give-ups (later ranges flag them), the sessions its labels name."""
        ids = _SEP.join(self.last) if self.index > 0 and sessions else b""
        gave_up = list(self.gave_up) if self.index < count - 1 else []
        return ids, gave_up, {label[4] for label in self.labels.values()}

    def fold(self, later: Iterable[bytes], gave_before: set[bytes], labelled: set[bytes], decided: dict[bytes, bytes],
             page: int = 0) -> Partial:
        """Count every session whose last stop is in this range in the group of that stop. `decided`: session ->
        the time of the latest stop a person decided in it (`labels.decided_sessions`): such a session is not
        left for a person, unless its last stop came after that one and failed."""
        self.present = {sid for sid in labelled if sid in self.last}
        last = self.last
        for blob in later:
            for m in _SESSIONS(blob):
                state = last.pop(m.group(), None)  # a later range holds its last stop
                if page and state is not None:
                    self.spill[m.group()] = (state >> _FIRST & _OFFSET, state >> _AT & _OFFSET)
        gave_up = self.gave_up | gave_before
        decided = {sid: when for sid, when in decided.items() if sid in last}
        reopened = self._reopened(decided)
        # Sessions alike in their group, verdict and tests are counted together: a few thousand kinds for a few
        # hundred thousand sessions (a Python step per session cost half a second a million lines).
        kinds = collections.Counter(map(int.__and__, last.values(), itertools.repeat(_KIND)))
        for kind, n in kinds.items():
            code, passed, sealed = kind & 15, kind >> _PASSED & _FIELD, kind >> _SEALED & _FIELD
            g, pair = self.combo_list[kind >> _COMBO]
            g.sessions += n
            g.passed += passed * n
            g.sealed += sealed * n
            g.passing += n if code in PASSING else 0
            g.unsealed += n if code == UNSEALED else 0
            self.per_pair[pair, g.key] += n
        for sid in gave_up:
            if sid in last:
                self.combo_list[last[sid] >> _COMBO][0].gave_up += 1
        for sid, text in self.agents.items():
            if sid in last:
                self._agent(self.combo_list[last[sid] >> _COMBO][0], _fast_agent(text))
        heap: list[tuple[Any, ...]] = []
        failing = {kind & 15 for kind in kinds} & FAILING
        left = []  # the sessions left for a person (the page lists them first)
        for sid, state in last.items() if failing else ():
            if state & 15 in failing and self._leave(sid, state, sid in gave_up, heap, decided, reopened):
                left.append(sid)
        for sid in gave_up:
            if sid in last and last[sid] & 15 not in failing and self._leave(sid, last[sid], True, heap, decided, reopened):
                left.append(sid)
        self.left += len(left)
        if page:
            self._page(left, page)
        for sid in decided:
            state = last[sid]
            if not (state & 15 in failing or sid in gave_up) and sid not in reopened:
                self.combo_list[state >> _COMBO][0].decided += 1
        self.latest = sorted(heap)
        self.last, self.gave_up, self.agents = {}, set(), {}  # the rest is small enough to send back
        return self

    def _page(self, left: list[bytes], count: int) -> None:
        """The first `count` sessions of this range in the page's order: left for a person first, then the latest."""
        last, at, first = self.last, _AT, _FIRST
        page = [(True, last[sid] >> at & _OFFSET, sid) for sid in left]
        page = heapq.nlargest(count, page, key=operator.itemgetter(1))
        if len(page) < count:
            chosen = set(left)
            rest = ((False, state >> at & _OFFSET, sid) for sid, state in last.items() if sid not in chosen)
            page += heapq.nlargest(count - len(page), rest, key=operator.itemgetter(1))
        # One bytes object, not a tuple a session (a few MB, not tens, sent back and ranked): 6 bytes of offset (the
        # top bit: left for a person), 5 of its first stop's, the id, 0xFF (never in UTF-8, so never in an id).
        self.page = b"".join((offset | left << _LEFT_BIT).to_bytes(6, "big") + (last[sid] >> first & _OFFSET).to_bytes(5, "big")
                             + sid + _SEP for left, offset, sid in page)

    def _reopened(self, decided: dict[bytes, bytes]) -> set[bytes]:
        """The decided sessions whose last stop failed after the decided one: its time, read again at its offset
        (a few lines: only sessions a person decided)."""
        out = set()
        with contextlib.ExitStack() as stack:
            fh = None
            for sid, when in decided.items():
                state = self.last[sid]
                if state & 15 not in FAILING:
                    continue
                if fh is None:
                    fh = stack.enter_context(open(self.path, "rb"))
                fh.seek(state >> _AT & _OFFSET)
                kind, row = slow_row(fh.readline())
                if kind == "stop" and row[0] > when:
                    out.add(sid)
        return out

    @staticmethod
    def _agent(g: Group, agent: int) -> None:
        """A session's agent figures (`_agent_bits`) counted in its group."""
        usd, secs = agent >> _AUSD & _USD_BITS, agent >> _ASECS & _SECS_BITS
        if usd == 1:
            g.agent_unpriced += 1
        elif usd:
            g.agent_priced += 1
            g.agent_cost += usd - 2
        if secs:
            g.agent_timed += 1
            g.agent_seconds += (secs - 1) * (TICKS // 10)

    def _leave(self, sid: bytes, state: int, gave: bool, heap: list, decided: dict, reopened: set) -> int:
        """A session that gave up or ended failing: 1 when it is left for a person (kept in `heap` if among the
        latest), 0 when a person decided it (and it did not fail again after)."""
        g = self.combo_list[state >> _COMBO][0]
        if sid in decided and sid not in reopened:
            g.decided += 1
            return 0
        g.left += 1
        item = (state >> _AT & _OFFSET, sid, g.key, state & 15, gave)
        if len(heap) < ATTENTION:
            heapq.heappush(heap, item)
        else:
            heapq.heappushpop(heap, item)
        return 1


def page_entries(page: bytes) -> Iterator[tuple[bool, int, int, bytes]]:
    """`Partial.page`'s (left for a person, byte offset of the last stop, of the first stop in its range, session), in
    its order."""
    at = 0
    while at < len(page):
        head, end = int.from_bytes(page[at:at + 6], "big"), page.index(_SEP, at + 11)
        yield bool(head >> _LEFT_BIT), head & _OFFSET, int.from_bytes(page[at + 6:at + 11], "big"), page[at + 11:end]
        at = end + 1
