"""The shape of a stop line as the gate writes it (`gate.record`), as a regular expression: the report's fast path
(`read.scan`) takes a line that matches whole, and sends any other line to `json.loads`.

The expression reads the whole line as JSON's grammar reads it (every string, number, literal, object and list,
nested up to a depth), so a line it takes is one json.loads takes, and the fields it captures are the ones
json.loads reads. It is fast because a string's body is `[^"]*+`, one tight loop in the regex engine, not a
character class: `neutral` makes that exact for a chunk of lines first (an escaped backslash or quote becomes two
\\x01 bytes, which no field the report reads and no token outside a string may hold), and names the lines it
cannot make so (a raw control character, a byte outside ASCII, an escape JSON does not know): json.loads reads them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import sys
from typing import Any, Iterator

from donegate.report.rows import _NUM, CLAUDE  # noqa: F401 - read from here too (bench/report_floor.py)

# -------------------------------------------------------------------------------------------------
# The grammar, with strings whose escapes `neutral` made plain
# -------------------------------------------------------------------------------------------------

_S = rb'"[^"]*+"'  # a string
_KEY = rb'"[^"\\]*+"'  # a key where one the report reads may not be written again: no escape (\u could spell one)
# A number, as json.loads reads one. An optional part is `(?:X|)`, not `(?:X)?`: the regex engine steps through a
# branch faster than through a repeat (the whole expression ~10% faster on make bench's ledger).
_N = rb'(?:-|)(?:0|[1-9]\d*+)(?:\.\d++|)(?:[eE][-+]?\d++|)'
_INT = rb'(?:0|[1-9]\d*+)'
_SCALAR = _S + rb'|' + _N + rb'|true|false|null'
# A read field's text: no escape, no control character, ASCII (its bytes are json.loads's value's UTF-8)
_STR = rb'[^"\\\x00-\x1f\x7f-\xff]'


def _value(depth: int) -> bytes:
    """Any JSON value nested at most `depth` objects and lists deep (deeper: json.loads reads the line). A member or
    an item is followed by a comma and another, or by its closing bracket: each step is decided by its first
    character, so nothing is tried twice."""
    v = rb'(?:' + _SCALAR + rb'|\{\}|\[\])'
    for _ in range(depth):
        v = (rb'(?:' + _SCALAR + rb'|\{(?:' + _S + rb':' + v + rb'(?:,(?=")|(?=\})))*+\}'
             rb'|\[(?:' + v + rb'(?:,(?=[^\]])|(?=\])))*+\])')
    return v


def _object(depth: int) -> bytes:
    return rb'\{(?:' + _S + rb':' + _value(depth) + rb'(?:,(?=")|(?=\})))*+\}'


def _members(depth: int, excluded: bytes) -> bytes:
    """`,"key":value`, any number of times, no key one of `excluded` (json.loads keeps the last of a repeated key)."""
    return rb'(?:,(?!"(?:' + excluded + rb')")' + _KEY + rb':' + _value(depth) + rb')*+'


# A valid time as the gate writes it (UTC, milliseconds): a day that does not exist (30 February, month 13) is
# json.loads's to refuse; 29 February too (a leap year is not worth a regular expression).
_TIME = (rb'(?!0000)\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)'
         rb'T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}\+00:00')
# The review gate: its own total read (the last, as json.loads keeps it), and it must have one (else its reviewers'
# costs are summed: json.loads reads the line); no key written with an escape (one could spell cost_usd).
_REVIEW = (rb'\{(?:(?:"cost_usd":(?P<review>' + _N + rb')|(?!"cost_usd")' + _KEY + rb':' + _value(5) + rb')'
           rb'(?:,(?=")|(?=\})))*+\}(?(review)|(?!))')
_GATES_READ = rb'acceptance|leak|review|own'  # gates the fast path reads, never written twice
# The acceptance gate's keys the fast path reads: its counts, and the held-back tests (`held`: `hardcoding.held` reads
# the line). A held-back key or an own suite's gate (`own`: `own_counts`) is read only where the kit writes it (right
# after the other acceptance keys' first run, right after the acceptance gate), once: a line holding either anywhere
# else, or twice, is json.loads's, and is looked at for them there (`count._scan`).
_ACCEPTANCE_READ = rb'total|passed|held_back'
# The top-level keys the gate writes between the gates and its client (`gate.record`), in any order, any number of
# times: none is one the report reads.
_AFTER_GATES = rb'(?:,"(?:cached|session_from|feedback|env|env_weakened|said|agent|cpu|confine)":' + _value(4) + rb')*+'
# A whole stop line as the gate writes it: its time, repo, session, verdict, the leak gate (the page shows it),
# acceptance counts, the review's total, the client, the agent's figures (when there), duration and configuration.
# Every top-level key is where the kit writes it, once (the head's in their order, then `_AFTER_GATES`'s, the client,
# the agent's figures and the tail); the acceptance counts once in their gate, the acceptance and review gates once in
# the gates.
_LINE_PATTERN = (
    rb'\{"v":1,"event":"stop","time":"(?P<time>' + _TIME + rb')","repo":"(?P<repo>' + _STR + rb'*)",'
    rb'"session":"(?P<session>' + _STR + rb'+)","stop":(?:' + _INT + rb'|null),"stop_hook_active":(?:true|false|null),'
    rb'"verdict":"(?P<verdict>pass|review_error|block|hint|gave_up|appealed)",'
    rb'"gates":\{"integrity":' + _object(3) + rb'(?:,"leak":(?P<leak>' + _object(3) + rb')|),"scope":' + _object(3) + rb','
    rb'"acceptance":\{"ok":(?:true|false|null),"total":(?P<tests>(?:0|[1-9]\d{0,6}),"passed":(?:0|[1-9]\d{0,6}))'
    + _members(4, _ACCEPTANCE_READ) + rb'(?:,"held_back":(?P<held>' + _value(3) + rb')' + _members(3, _ACCEPTANCE_READ)
    + rb'|)\}(?:,"own":(?P<own>' + _value(4) + rb')|)'
    + _members(6, _GATES_READ) + rb'(?:,"review":' + _REVIEW + _members(6, _GATES_READ) + rb'|)\}'
    + _AFTER_GATES + rb'(?:,"client":"(?P<client>\w{1,40})"|),'
    rb'(?:(?P<agent>"agent_usd":(?:' + _N + rb'|null),"agent_seconds":(?:' + _N + rb'|null)),|)'
    rb'"blocks":(?:' + _INT + rb'|null),"duration":(?P<duration>' + _N + rb'),"kit_version":' + _S + rb','
    rb'"config":"(?P<config>' + _STR + rb'*)","prev":"[0-9a-f]{64}"\}\n'
)
# One row a line, in a chunk of whole lines made neutral: a stop line as the gate writes it gives the line's groups,
# any other line empty ones (its newline ends the second branch). Rows come from C as tuples. Compiled when first
# used (0.2 CPU-s: a report with nothing new to read never compiles it), before the readers fork (`parallel`).
_PATTERN = rb'(?:' + _LINE_PATTERN + rb'|[^\n]*+\n)'
# A row's fields, in order (the groups' names)
FIELDS = ("time", "repo", "session", "verdict", "leak", "tests", "held", "own", "review", "client", "agent", "duration", "config")
NO_ROW = (b"",) * len(FIELDS)


@functools.cache
def compiled() -> re.Pattern[bytes]:
    pattern = re.compile(_PATTERN)
    if tuple(pattern.groupindex) != FIELDS:
        raise RuntimeError(f"the stop line's groups are {tuple(pattern.groupindex)}, not {FIELDS}")
    return pattern


def ROWS(data: bytes, start: int = 0, end: int = sys.maxsize) -> list[tuple[bytes, ...]]:  # noqa: N802 - read as before
    return compiled().findall(data, start, end)


def _LINE(data: bytes, start: int = 0, end: int = sys.maxsize) -> Iterator[re.Match[bytes]]:  # noqa: N802
    """The stop lines of a chunk made neutral, as match objects (`bench/report_floor.py`)."""
    return (m for m in compiled().finditer(data, start, end) if m["time"] is not None)


# -------------------------------------------------------------------------------------------------
# Making a chunk's strings plain for `[^"]*+`, and naming the lines that cannot be
# -------------------------------------------------------------------------------------------------

_TEXT = bytes(range(0x20, 0x100))  # what is not a control character
_CONTROL = re.compile(rb'[\x00-\x09\x0b-\x1f]').finditer
_NOT_ASCII = re.compile(rb'[\x80-\xff]').finditer
# JSON's escapes as json.loads pairs them, from the left: an escaped backslash or quote (made plain), or one JSON does
# not know (group 1: \u without four hex digits, a backslash before anything but / b f n r t u)
_ESCAPES = re.compile(rb'\\(?:[\\"]|([^/bfnrtu]|u(?![0-9a-fA-F]{4})))').finditer
_PLAIN = b"\x01\x01"


def neutral(data: bytes, newlines: int = -1) -> tuple[bytes, list[int]]:
    """(`data` with every escaped backslash and escaped quote made two \\x01 bytes, the offsets of the bytes that send
    their line to json.loads; `newlines`: how many data holds, when known). A string's body is then `[^"]*+` exactly: every quote left is a string's edge.

    Exact because the \\x01 bytes stand only where JSON's own reading puts an escape (a backslash and the next byte,
    from the left), no raw control character is left in the text to be taken for one (a line with any is
    json.loads's), and the grammar takes \\x01 only inside a string it does not read."""
    odd: list[int] = []
    if not data.isascii():  # the kit writes ASCII (escaping the rest): a raw byte past it may not be UTF-8
        odd += [m.start() for m in _NOT_ASCII(data)]
    if len(data.translate(None, _TEXT)) != (data.count(b"\n") if newlines < 0 else newlines):  # strict JSON holds no raw control character
        odd += [m.start() for m in _CONTROL(data)]
    if b"\\" in data:  # (a C search: most chunks of a real ledger hold an escape, few an escaped quote)
        plain = None
        for m in _ESCAPES(data):
            if m.lastindex:
                odd.append(m.start())
            else:
                if plain is None:
                    plain = bytearray(data)
                plain[m.start():m.end()] = _PLAIN
        if plain is not None:
            return bytes(plain), odd
    return data, odd


def rows(data: bytes, cut: int, lines: list[bytes]) -> list[tuple[bytes, ...]]:
    """One row a line of `lines` (data split at its newlines up to `cut`, a torn last line after the last newline
    included): the fast path's fields for a stop line as the gate writes it, empty ones for any other line (json.loads
    reads it)."""
    whole = len(lines) - (cut == len(data) and not data.endswith(b"\n"))  # the lines with their newline
    plain, odd = neutral(data, whole)
    try:
        found = ROWS(plain, 0, cut)
    except SystemError:  # CPython 3.11's re has tripped over a group in a possessive repeat: never seen here, but
        found = []  # then each line alone, one that trips it json.loads's
    if len(found) != whole:  # a match ran over a newline (a string left open): read line by line
        found = [_row(line + b"\n") for line in lines[:whole]]
    found += [NO_ROW] * (len(lines) - whole)  # a torn last line
    if odd:
        ends = list(itertools.accumulate(len(line) + 1 for line in lines))
        for at in odd:
            if at < cut:
                found[bisect.bisect_right(ends, at)] = NO_ROW
    return found


def _row(line: bytes) -> tuple[bytes, ...]:
    m = fast_line(line[:-1])
    return m.groups(b"") if m else NO_ROW


def fast_line(line: bytes) -> Any:
    """The fast path's match of one line (without its newline), None when json.loads reads it: the tests and the
    page (`page_read`) use it; its groups by name (`FIELDS`)."""
    plain, odd = neutral(line + b"\n")
    try:
        m = None if odd else compiled().fullmatch(plain)
    except SystemError:  # (see `rows`)
        return None
    return m if m is not None and m["time"] is not None else None
