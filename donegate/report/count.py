"""The report's first pass over one range of a ledger (`scan`): its lines' hash chain checked, each line read by the
fast path (`shape.rows`: one regular expression over a chunk of lines) or by json.loads (`rows.slow_row`), and
counted into a `read.Partial`.

A chunk whose stop lines are all the fast path's (the kit's ledgers: nearly every chunk) is counted a column at a
time in C (`_columns`: `map`, `zip`, `Counter`, `dict.update`), its rare lines (held-back tests, the project's own
suite, appeals, the other events) apart, each in file order; a chunk with a stop line json.loads read is counted
line by line in file order (`_in_order`), as every line is when the fast path is off (the tests compare the two).

Where a first read's CPU goes (`make bench`'s ledger, 1,000,001 lines, 971 MB; per 100,000 lines, one process, a
loaded machine): splitting into lines 0.07 CPU-s, the chain's sha256 0.15, `shape.neutral` 0.08, the regular
expression 0.6 (every token of every line read as JSON's grammar reads it, ~100 ns a token; an expression that only
steps over strings and tokens takes ~0.35), the line starts 0.03, the counting 0.22. A stop's held-back tests and
the project's own suite are the expression's groups where the kit writes them (`_flagged`): no chunk is searched for
them (two searches, ~1 ns a byte, 5% of a scan's CPU). See `docs/bench.md`.
"""

from __future__ import annotations

import collections
import gc
import itertools
import operator
import os
from typing import Any, Callable, Iterator

from donegate.ledger import chain as ledger
from donegate.report import hardcoding
from donegate.report.own_counts import KEY as OWN
from donegate.report.read import CHUNK, _AT, _BCODE, _FIRST, _OFFSET, _Combos, _pack_tests, _Tests, Options, Partial
from donegate.report.rows import _agent_text, APPEALED, BLOCKING, CLAUDE, GAVE_UP, HINT, MICRO, TICKS, slow_row
from donegate.report.shape import FIELDS, NO_ROW, rows as shape_rows

_DAY = slice(0, 10)  # a canonical time's day
_CLIENT = {b"": CLAUDE}  # a fast row's client: none is Claude Code's
_HELD, _OWN = FIELDS.index("held"), FIELDS.index("own")  # a fast row's held-back tests and own suite (`_flagged`)


def _chunks(path: str, start: int, end: int) -> Iterator[tuple[int, bytes, int]]:
    """(file offset, bytes, how many of them are whole lines) a chunk at a time over bytes `start` to `end`; the
    range's last bytes, when they are not a whole line (torn, or being written), are a line of their own."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pos, size = start, CHUNK
        while pos < end:
            data = os.pread(fd, min(size, end - pos), pos)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if pos + len(data) >= end:
                cut = len(data)
            elif cut == 0:  # a line longer than a chunk: read more at once
                size *= 2
                continue
            yield pos, data, cut
            pos, size = pos + cut, CHUNK
    finally:
        os.close(fd)


def _flagged(rows: list[tuple], field: int, others: list[int], lines: list[bytes], needle: bytes) -> list[int]:
    """The lines (indexes, in file order) that may hold a key read apart (`needle`): a fast row that read it where the
    kit writes it (its group `field`, `shape._ACCEPTANCE_READ`), and any line json.loads reads (`others`) holding it.
    A fast row holds it nowhere else: the expression refuses the key anywhere but there."""
    fast = list(itertools.compress(range(len(rows)), map(operator.itemgetter(field), rows)))
    slow = [k for k in others if needle in lines[k]]
    return sorted(fast + slow) if fast and slow else fast or slow


def scan(path: str, start: int, end: int, opts: Options, index: int = 0, digest: Any = None) -> Partial:
    """Read one range of a ledger into a Partial, and check its hash chain (`Partial.link`); `digest` (a hashlib
    object), when given, takes in every byte read (`resume`: the kept range's bytes, hashed). The cyclic garbage
    collector is off meanwhile: the pass makes no cycles, but its rows and lists (a thousand tuples a chunk) set it
    off several times a chunk (5% of the pass's CPU)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return _scan(path, start, end, opts, index, digest)
    finally:
        if was:
            gc.enable()


def _scan(path: str, start: int, end: int, opts: Options, index: int, digest: Any) -> Partial:
    part = Partial(index=index, by=opts.by, path=path)
    since, find = opts.since, bytes.find
    rows_of: Callable[[bytes, int, list[bytes]], list] = shape_rows if opts.fast else (lambda data, cut, lines: [NO_ROW] * len(lines))
    combos, tests_bits, number = _Combos(part), _Tests(), 0
    for base, data, cut in _chunks(path, start, end):
        if digest is not None:
            digest.update(memoryview(data)[:cut])
        lines = data.split(b"\n")
        if cut < len(data) or data.endswith(b"\n"):
            lines.pop()  # a line the next chunk holds whole, or nothing after the last newline
        hexes, first = part.link(lines), number + 1  # line `first + k` is lines[k], its hash hexes[k]
        rows = rows_of(data, cut, lines)
        ats = list(map(operator.add, itertools.accumulate(map(len, lines), initial=0), itertools.count()))  # starts
        others = list(itertools.compress(range(len(lines)), map(operator.not_, map(operator.itemgetter(0), rows))))
        for k in _flagged(rows, _HELD, others, lines, hardcoding.KEY):  # a stop that ran held-back tests (`hardcoding`)
            part.hold(lines[k], since)
        for k in _flagged(rows, _OWN, others, lines, OWN):  # a stop that ran the project's own suite
            part.own.add(lines[k], since)
        slow: dict[int, tuple] = {}  # the stop lines json.loads read: index -> row
        for k in others:
            line = lines[k]
            kind, row = slow_row(line)
            if kind == "stop":
                slow[k] = row
                continue
            part.note(kind, row, first + k, since)
            if find(line, b'"decision"') >= 0 or find(line, b'"label"') >= 0:
                part.decide(line)
                part.marks.append(base + ats[k])
        if slow:
            _in_order(part, combos, tests_bits, lines, rows, slow, hexes, ats, base, first, since)
        else:
            _columns(part, combos, tests_bits, lines, rows, hexes, ats, base, first, since)
        number += len(lines)
    part.lines = number
    return part


def _columns(part: Partial, combos: _Combos, tests_bits: _Tests, lines: list[bytes], rows: list[tuple], hexes: list[bytes],
             ats: list[int], base: int, first: int, since: bytes | None) -> None:
    """A chunk's stop lines, all of them the fast path's, counted a column at a time (as `_in_order` counts them)."""
    taken = list(map(operator.itemgetter(0), rows)) if since is None else list(map(operator.ge, map(operator.itemgetter(0), rows), itertools.repeat(since)))
    if not any(taken):
        return
    index = list(itertools.compress(range(len(rows)), taken))
    whens, repos, sids, verdicts, _, tests, _, _, costs, clients, agents, durs, cfgs = zip(*itertools.compress(rows, taken), strict=True)
    codes = list(map(_BCODE.__getitem__, verdicts))
    if part.by == "client":
        keys: Iterator = zip(map(_CLIENT.get, clients, clients), repos, cfgs, strict=True)
    elif part.by == "day":
        keys = zip(map(operator.getitem, whens, itertools.repeat(_DAY)), repos, cfgs, strict=True)
    else:
        keys = zip(repos, cfgs, strict=True)
    combo = list(map(combos.__getitem__, keys))
    groups = list(map(operator.itemgetter(0), combo))
    tally = part.tally
    for (g, code), n in collections.Counter(zip(groups, codes, strict=True)).items():
        g.stops += n
        tally[code] += n
        if code in BLOCKING:
            g.blocks += n
            if code == HINT:
                g.hints += n
    part.days.update(map(operator.getitem, whens, itertools.repeat(_DAY)))
    for g, ticks in zip(groups, map(round, map(operator.mul, map(float, durs), itertools.repeat(TICKS))), strict=True):
        g.seconds += ticks
    if any(costs):
        for g, cost in zip(itertools.compress(groups, costs), map(float, itertools.compress(costs, costs)), strict=True):
            if cost:
                g.review_cost += round(cost * MICRO)
    kinds = set(codes)
    if GAVE_UP in kinds:
        part.gave_up.update(itertools.compress(sids, map(operator.eq, codes, itertools.repeat(GAVE_UP))))
    if APPEALED in kinds:
        for k, g in itertools.compress(zip(index, groups, strict=True), map(operator.eq, codes, itertools.repeat(APPEALED))):
            part.appeal(lines[k], first + k, g)
    if part.by == "client" and any(clients):
        for k, client, code in zip(index, clients, codes, strict=True):
            if client and client != CLAUDE and (code in BLOCKING or code == APPEALED):  # a stop a label may count in
                part.clients[hexes[k][:ledger.REF_CHARS].decode()] = client
    # A session's state: its last stop's, with the offset of its first stop in this range (`read._FIRST`)
    at = list(map(base.__add__, map(ats.__getitem__, index)))
    state = map(operator.or_, map(operator.or_, map(operator.itemgetter(1), combo), map(operator.lshift, at, itertools.repeat(_AT))),
                map(operator.or_, map(tests_bits.__getitem__, tests), codes))
    last, firsts = part.last, _OFFSET << _FIRST
    starts = dict(zip(reversed(sids), reversed(at), strict=True))  # each session's first stop in this chunk
    for sid, at_ in starts.items():
        before = last.get(sid)
        starts[sid] = at_ << _FIRST if before is None else before & firsts
    last.update(zip(sids, map(operator.or_, state, map(starts.__getitem__, sids)), strict=True))
    if any(agents):  # the session's latest figures (a session whose last range has none keeps none)
        part.agents.update(itertools.compress(zip(sids, agents, strict=True), agents))


def _in_order(part: Partial, combos: _Combos, tests_bits: _Tests, lines: list[bytes], rows: list[tuple], slow: dict[int, tuple],
              hexes: list[bytes], ats: list[int], base: int, first: int, since: bytes | None) -> None:
    """A chunk's stop lines counted one at a time in file order: a fast row's fields, or json.loads's (`slow`)."""
    last, gave_up, agents, clients, tally = part.last, part.gave_up, part.agents, part.clients, part.tally
    by_day, by_client, last_of, firsts = part.by == "day", part.by == "client", last.get, _OFFSET << _FIRST
    for k, (when, repo, sid, code, _, tests, _, _, cost, client, agent, dur, cfg) in enumerate(rows):
        if when:
            code, tests, dur, cost, client = _BCODE[code], tests_bits[tests], float(dur), cost and float(cost), client or CLAUDE
        elif k in slow:
            when, repo, sid, code, sealed, passed, dur, cfg, cost, agent, client = slow[k]
            agent, tests = _agent_text(agent), _pack_tests(sealed, passed)
        else:
            continue
        if since is not None and when < since:
            continue
        if by_client:
            g, combo = combos[(client, repo, cfg)]
            if (code in BLOCKING or code == APPEALED) and client != CLAUDE:  # a stop a label may count in
                clients[hexes[k][:ledger.REF_CHARS].decode()] = client
        else:
            g, combo = combos[(when[:10], repo, cfg) if by_day else (repo, cfg)]
        g.stops += 1
        tally[code] += 1
        part.days.add(when[:10])
        g.seconds += round(dur * TICKS)
        if cost:
            g.review_cost += round(cost * MICRO)
        if code in BLOCKING:
            g.blocks += 1
            g.hints += code == HINT
        elif code == GAVE_UP:
            gave_up.add(sid)
        elif code == APPEALED:
            part.appeal(lines[k], first + k, g)
        at = base + ats[k]
        f = last_of(sid)  # the session's first stop in this range: where it was, or this one
        last[sid] = combo | at << _AT | tests | code | (at << _FIRST if f is None else f & firsts)
        if agent:
            agents[sid] = agent
