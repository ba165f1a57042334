"""The HTML page's sessions from the report's own reading (`report.resume`'s kept summary), not a second parse of
the whole ledger: the report's fold names the sessions the page lists first (`Options.page`: left for a person,
then the latest) and where each one's first and last stops lie; only the lines between those are read again (a
listed session's stops, taken by the report's fast path or `json.loads`), and the lines a label or a decision may be
in (`Partial.marks`). The page's counts over every stop (by verdict, the days) are the report's own (`Partial.tally`,
`days`), read in its one pass and kept with its summary.

It answers None (the page then reads every line the old way, `html.read_sessions`) when the report skipped a
line (a stop the page still shows, e.g. a verdict the report does not know) or when a listed session is not found
where the report saw it: never a page that disagrees with the report. What the page may show of the ledger and the
stores passes through `local_scrubber`.

The finished page's data (its rows and details, all but the summary and the sealed requests) are kept with the
report's summary (`resume.keep_finished`, marked with the page's budgets, grouping and the scrubber's stores): a
page with nothing new since reads nothing but what was kept.
"""

from __future__ import annotations

import array
import collections
import functools
import heapq
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from donegate import paths, report
from donegate.core import scrub as feedback
from donegate.errors import DonegateError
from donegate.ledger import chain as ledger
from donegate.report import shape
from donegate.report.read import VERDICTS, Partial, page_entries
from donegate.report.shape import NO_ROW

CHUNK = 1 << 20  # bytes read at a time at most (a session's stops can lie far apart)
POSITION = 40  # a stop's place in the ledgers: file index << POSITION | byte offset (orders the sessions)
# The head of a stop line as the gate writes it, its session: a line of a session not listed is passed over (unless it
# names a session twice: json.loads, which keeps the last, reads it then).
_HEAD = re.compile(
    rb'\{"v":1,"event":"stop","time":"[^"\\\n]*","repo":"[^"\\\n]*(?:\\.[^"\\\n]*)*","session":"([^"\\\n]+)"').match
TEXT_CHARS = 4000  # one feedback text at most (the gate's own default cap)


def listed(merged: list[tuple[Path, int, Partial]], files: list[Path],
           count: int) -> tuple[list[bytes], array.array[int], dict[bytes, list[tuple[int, int, int]]]]:
    """The sessions the page lists first, in its order, from the folded ranges (`Partial.page`), and where their stops
    lie: the places of the first and the last in the range holding the last (two per session, in the same order: 16
    bytes a session, not a tuple), and (file index, first, last stop's byte offset) in each earlier range that holds
    some of them (`Partial.spill`)."""
    where = {str(p): f for f, p in enumerate(files)}
    # Each range's entries are in the page's order already: merged lazily, only as many as the page lists are made.
    ranked = heapq.merge(*(((not left, -(where[str(path)] << POSITION | offset), where[str(path)] << POSITION | first, sid)
                            for left, offset, first, sid in page_entries(part.page)) for path, _, part in merged))
    out: dict[bytes, None] = {}
    spans = array.array("Q")
    for _, place, first, sid in ranked:  # a session in two ranges counts in the later one (`fold`): it comes first here
        if sid not in out:
            out[sid] = None
            spans.extend((first, -place))
        if len(out) >= count:
            break
    spill: dict[bytes, list[tuple[int, int, int]]] = {}
    for path, _, part in merged:
        for sid, (first, last) in part.spill.items():
            if sid in out:
                spill.setdefault(sid, []).append((where[str(path)], first, last))
    return list(out), spans, spill


def _blocks_between(fd: int, start: int, last: int) -> Iterator[tuple[int, list[bytes], list[tuple[bytes, ...]]]]:
    """(byte offset of the first, lines, their fast-path rows: `shape.rows`) a block at a time, from the line at
    `start` to the line at `last`, both included."""
    pos, size = start, min(CHUNK, last - start + 8192)
    while pos <= last:
        data = os.pread(fd, size, pos)
        if not data:
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) < size:  # a torn last line
                cut = len(data)
            else:  # a line longer than what was read: read more at once
                size *= 2
                continue
        data = data[:cut]
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        rows = shape.rows(data, cut, lines)
        at, keep = pos, 0
        for line in lines:  # the lines up to the one at `last`
            if at > last:
                break
            at, keep = at + len(line) + 1, keep + 1
        yield pos, lines[:keep], rows
        pos = at
        size = min(CHUNK, max(last - pos, 0) + 8192)


def read_listed(files: list[Path], merged: list[tuple[Path, int, Partial]], wanted: list[bytes], spans: array.array[int],
                spill: dict[bytes, list[tuple[int, int, int]]], take: Callable[..., None]) -> None:
    """The stop lines of the `wanted` sessions, read between each one's first and last stop (`listed`), then every
    line a label or a decision may be in (`Partial.marks`): each goes to `take(where, line, stops_only[, row])` in ledger
    order, `where` = (file index, byte offset). No other line of the ledgers is read."""
    between: list[list[tuple[int, int]]] = [[] for _ in files]
    for k, sid in enumerate(wanted):
        first, last = spans[2 * k], spans[2 * k + 1]
        between[first >> POSITION].append((first & (1 << POSITION) - 1, last & (1 << POSITION) - 1))
        for f, a, b in spill.get(sid, ()):
            between[f].append((a, b))
    chosen = set(wanted)
    for f, path in enumerate(files):
        spans_in = sorted(between[f])
        if not spans_in:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            start, end = spans_in[0]
            for a, b in [*spans_in[1:], (1 << 62, 0)]:
                if a <= end:  # overlapping: read once
                    end = max(end, b)
                    continue
                for at, lines, rows in _blocks_between(fd, start, end):
                    for line, row in zip(lines, rows, strict=False):
                        if row[0]:  # the fast path's: its session is the one json.loads reads
                            if row[2] in chosen:
                                take((f, at), line, True, row)
                        else:
                            m = _HEAD(line)
                            if m is None or m.group(1) in chosen or line.count(b'"session"') != 1:
                                take((f, at), line, True, row)
                        at += len(line) + 1
                start, end = a, b
        finally:
            os.close(fd)
    where = {str(p): f for f, p in enumerate(files)}
    for path, _, part in merged:
        if part.marks:
            f = where[str(path)]
            for place, line in _lines_at(path, part.marks):
                take((f, place), line, False)


def _lines_at(path: Path, offsets: list[int]) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as fh:
        for at in offsets:
            fh.seek(at)
            yield at, fh.readline().rstrip(b"\n")


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


def _take(out: Any, want: set[str], where: tuple[int, int], line: bytes, stops_only: bool,
          row: tuple[bytes, ...] | None = None) -> None:
    """One line of `page_read`'s pass: a listed session's stop (its fields from the report's fast path when the line
    is the gate's: `row`, the block's reading of it, or None when the line was read alone: tried here), a label or a
    decision (unless `stops_only`)."""
    order = where[0] << POSITION | where[1]
    if row is None:
        m = report.fast_line(line)
        row = m.groups(b"") if m is not None else NO_ROW
    if row[0] and b'"cached":' not in line and b'"agent' not in line:  # (the page shows them: json.loads reads them)
        when, repo, sid, verdict, leak, _, _, _, cost, _, _, duration, config = row
        if sid.decode() in want:
            out.add(sid.decode(), _text(verdict), ledger.stop_ref(line), leak not in (b"", b"{}"), False, order,
                    _text(config), _text(repo), when, float(cost or 0.0), float(duration), {}, order)
        return
    rec = record(line)
    if rec is None or (rec.get("event") == "stop" and rec.get("session") not in want) or (stops_only and rec.get("event") != "stop"):
        return
    out.take(order, line, rec, report.canonical_time(rec.get("time")) if rec.get("event") == "stop" else None, order)


_TEXTS: dict[bytes, str] = {}


def _text(raw: bytes) -> str:
    """A verdict, configuration or repository as one shared str (a few of them for hundreds of thousands of stops)."""
    text = _TEXTS.get(raw)
    if text is None:
        text = _TEXTS[raw] = raw.decode()
    return text


def sessions(files: list[Path], summary: dict[str, Any], merged: list, wanted: list[bytes], spans: array.array[int],
             spill: dict[bytes, list[tuple[int, int, int]]], out: Any) -> tuple | None:
    """(sessions, labels, stops by verdict, days, configurations, repositories) of the page from the report's
    reading, gathered in `out` (`html._Sessions`): only the `wanted` sessions' stops (the first of `listed`'s, with
    its `spans` and `spill`) and the labels are read again; the stops by verdict and the days are the report's own
    counts. None when that cannot be exact."""
    if summary["skipped"]["count"]:
        return None
    take = functools.partial(_take, out, {sid.decode() for sid in wanted})
    try:
        read_listed(files, merged, wanted, spans, spill, take)
    except (OSError, ValueError):
        return None
    if len(out.sessions) != len(wanted):
        return None
    seen: collections.Counter = collections.Counter()
    days: set[bytes] = set()
    for _, _, part in merged:
        for code, n in enumerate(part.tally):
            seen[VERDICTS[code]] += n
        days |= part.days
    seen = +seen  # the verdicts with a stop
    pairs = {pair for _, _, part in merged for pair, _ in part.per_pair}
    configs = sorted({cfg.decode("utf-8", "replace") for _, cfg in pairs})
    repos = {repo.decode("utf-8", "replace") for repo, _ in pairs}
    if any(s.config not in configs or s.repo not in repos for s in out.sessions.values()):
        return None  # a line the report read was changed since (`--verify` names it): read every line again
    return out.sessions, out.labels, seen, sorted(d.decode() for d in days), configs, repos


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
