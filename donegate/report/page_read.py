"""The HTML page's sessions from the report's own reading (`report.resume`'s kept summary), not a second parse of
the whole ledger: the report's fold names the sessions the page lists first (`Options.page`: left for a person,
then the latest), and one light pass reads only their stop lines (and the labels) with `json.loads`; every other
line is looked at by one regular expression over a chunk (its day, session and verdict, for the page's counts).

It answers None (the page then reads every line the old way, `html.read_sessions`) when the report skipped a
line (a stop the page still shows, e.g. a verdict the report does not know) or when the pass does not find the
report's stops one for one: never a page that disagrees with the report. What the page may show of the ledger and the
stores passes through `local_scrubber`.

The finished page's data (its rows and details, all but the summary and the sealed requests) are kept with the
report's summary (`resume.keep_finished`, marked with the page's budgets, grouping and the scrubber's stores): a
page with nothing new since reads nothing but what was kept.
"""

from __future__ import annotations

import bisect
import collections
import functools
import heapq
import itertools
import json
import operator
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from donegate import paths, report
from donegate.core import scrub as feedback
from donegate.errors import DonegateError
from donegate.ledger import chain as ledger
from donegate.report.read import Partial, page_entries

CHUNK = 1 << 20  # 4 MB chunks cost 0.4 s more CPU a GB here (a fresh 4 MB buffer a chunk: page faults), and their memory
POSITION = 40  # a stop's place in the ledgers: file index << POSITION | byte offset (orders the sessions)
# One match per line: a stop line as the gate writes it gives its day, session and verdict; any other line nothing.
_PASS = re.compile(
    rb'(?:\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\d)T\d\d:\d\d:\d\d\.\d{3}\+00:00","repo":"[^"\\\n]*(?:\\.[^"\\\n]*)*",'
    rb'"session":"([^"\\\n]+)","stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),"verdict":"([^"\\\n]+)")?.*\n'
).findall
_DAY, _SID, _VERDICT = (operator.itemgetter(k) for k in range(3))
TEXT_CHARS = 4000  # one feedback text at most (the gate's own default cap)


def listed(merged: list[tuple[Path, int, Partial]], files: list[Path], count: int) -> list[bytes]:
    """The sessions the page lists first, in its order, from the folded ranges (`Partial.page`)."""
    where = {str(p): f for f, p in enumerate(files)}
    # Each range's entries are in the page's order already: merged lazily, only as many as the page lists are made.
    ranked = heapq.merge(*(((not left, -(where[str(path)] << POSITION | offset), sid) for left, offset, sid in page_entries(part.page))
                           for path, _, part in merged))
    out: dict[bytes, None] = {}
    for _, _, sid in ranked:  # a session in two ranges counts in the later one (`fold`): it comes first here
        out.setdefault(sid)
        if len(out) >= count:
            break
    return list(out)


def _chunks(path: Path) -> Iterator[tuple[int, bytes]]:
    """(file offset, whole lines) a chunk at a time; a torn last line is its own chunk, with a newline put to it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pos, size = 0, CHUNK
        while True:
            data = os.pread(fd, size, pos)
            if not data:
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) < size:
                    yield pos, data + b"\n"
                    return
                size *= 2
                continue
            yield pos, data[:cut]
            pos, size = pos + cut, CHUNK
    finally:
        os.close(fd)


def read_listed(files: list[Path], wanted: set[bytes], take: Callable[..., None]) -> tuple[collections.Counter, set[str], int]:
    """One pass over `files`: each stop line of a `wanted` session, and every line holding a label or a decision, goes
    to `take(where, line)` in ledger order, `where` = (file index, byte offset). Returns the stops by verdict and
    the days with a stop over every line, and how many stop lines the pass matched."""
    seen: collections.Counter = collections.Counter()
    days: collections.Counter = collections.Counter()
    for f, path in enumerate(files):
        for base, data in _chunks(path):
            rows = _PASS(data)
            lines = data.split(b"\n")
            lines.pop()
            if len(rows) != len(lines):
                raise ValueError("the pass lost a line")
            seen.update(map(_VERDICT, rows))
            days.update(map(_DAY, rows))
            pick = set(itertools.compress(range(len(rows)), map(wanted.__contains__, map(_SID, rows))))
            starts: list[int] = []
            for word in (b'"label"', b'"decision"'):  # rare lines: found by a C search, their line by bisection
                at = data.find(word)
                while at >= 0:
                    starts = starts or list(itertools.accumulate(map(operator.add, map(len, lines), itertools.repeat(1)), initial=0))
                    k = bisect.bisect_right(starts, at) - 1
                    pick.add(k)
                    at = data.find(word, starts[k + 1])
            if not pick:
                continue
            starts = starts or list(itertools.accumulate(map(operator.add, map(len, lines), itertools.repeat(1)), initial=0))
            for i in sorted(pick):
                take((f, base + starts[i]), lines[i])
    matched = sum(n for v, n in seen.items() if v)
    seen.pop(b"", None)
    days.pop(b"", None)
    return collections.Counter({v.decode(): n for v, n in seen.items()}), {d.decode() for d in days}, matched


def record(line: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) and rec.get("v") == ledger.SCHEMA_VERSION else None


def lines_at(files: list[Path], places: set[int]) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(place, line, record) of the stop at each place (file index << POSITION | byte offset), read there alone."""
    for f, path in enumerate(files):
        mine = sorted(place for place in places if place >> POSITION == f)
        if not mine:
            continue
        with open(path, "rb") as fh:
            for place in mine:
                fh.seek(place & (1 << POSITION) - 1)
                line = fh.readline().rstrip(b"\n")
                rec = record(line)
                if rec is not None and rec.get("event") == "stop":
                    yield place, line, rec


def _take(out: Any, want: set[str], where: tuple[int, int], line: bytes) -> None:
    """One line of `page_read`'s pass: a listed session's stop (its fields from the report's fast path when the line
    is the gate's, else json.loads), a label or a decision."""
    order = where[0] << POSITION | where[1]
    m = report.fast_line(line) if b'"cached":' not in line and b'"agent' not in line else None
    cost = None if m is None else _review_cost(line)
    if m is not None and cost is not None:
        sid = m.group(3).decode()
        if sid in want:
            start = line.index(b"}", line.index(b'"gates":{"integrity":{')) + 1  # the leak gate follows integrity
            leak = line.startswith(b',"leak":{', start) and not line.startswith(b',"leak":{}', start)
            out.add(sid, _text(m.group(4)), ledger.stop_ref(line), leak, False, order, _text(m.group(8)),
                    _text(m.group(2)), m.group(1), cost, float(m.group(7)), {}, order)
        return
    rec = record(line)
    if rec is None or (rec.get("event") == "stop" and rec.get("session") not in want):
        return
    out.take(order, line, rec, report.canonical_time(rec.get("time")) if rec.get("event") == "stop" else None, order)


_TEXTS: dict[bytes, str] = {}


def _text(raw: bytes) -> str:
    """A verdict, configuration or repository as one shared str (a few of them for hundreds of thousands of stops)."""
    text = _TEXTS.get(raw)
    if text is None:
        text = _TEXTS[raw] = raw.decode()
    return text


def _review_cost(line: bytes) -> float | None:
    """The review's total from the raw line (0.0: no review), None when json.loads must read it."""
    from donegate.report.read import _REVIEW, _fast_review_cost

    at = line.find(_REVIEW)
    return 0.0 if at < 0 else _fast_review_cost(line, at)


def sessions(files: list[Path], summary: dict[str, Any], merged: list, wanted: list[bytes], out: Any) -> tuple | None:
    """(sessions, labels, stops by verdict, days, configurations, repositories) of the page from the report's
    reading, gathered in `out` (`html._Sessions`): only the `wanted` sessions (`listed`) are read whole; None when
    that cannot be exact."""
    if summary["skipped"]["count"]:
        return None
    take = functools.partial(_take, out, {sid.decode() for sid in wanted})
    try:
        seen, days, matched = read_listed(files, set(wanted), take)
    except (OSError, ValueError):
        return None
    if matched != summary["total"]["stops"] or len(out.sessions) != len(wanted):
        return None
    pairs = {pair for _, _, part in merged for pair, _ in part.per_pair}
    configs = sorted({cfg.decode("utf-8", "replace") for _, cfg in pairs})
    repos = {repo.decode("utf-8", "replace") for repo, _ in pairs}
    if any(s.config not in configs or s.repo not in repos for s in out.sessions.values()):
        return None  # a line the report read was changed since (`--verify` names it): read every line again
    return out.sessions, out.labels, seen, sorted(days), configs, repos


# -------------------------------------------------------------------------------------------------
# What may be shown: a scrubber over every store this kit holds
# -------------------------------------------------------------------------------------------------


def local_scrubber(root: Path | None = None) -> feedback.Scrubber:
    """The gate's Scrubber over every sealed store under DONEGATE_HOME: their paths become <hidden>,
    their source lines are dropped. The ledger's `feedback` is scrubbed already; this catches the rest."""
    root = root or paths.home()
    acc = paths.acceptance_root(root)
    sources = []
    if acc.is_dir():
        for p in sorted(acc.glob("*/**/*.py")):
            try:
                sources.append(p.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                pass
    return feedback.Scrubber([acc, root, *paths.protected_roots(home=root)], sources)


def sealed_requests(repos: set[str], scrub: feedback.Scrubber, root: Path | None) -> dict[str, str]:
    """Each repository's sealed request (from its store's manifest, as sealed now), scrubbed, by its scrubbed name."""
    from donegate.seal import store

    out = {}
    for repo in repos:
        try:
            st = store.load(Path(repo), root) if repo else None
        except (DonegateError, OSError, ValueError):
            st = None
        request = st.manifest.get("request") if st is not None else None
        if isinstance(request, str) and request:
            out[scrub(repo)] = feedback.capped(scrub(request), TEXT_CHARS, "request")
    return out
