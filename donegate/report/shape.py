"""The shape of a stop line as the gate writes it (`gate.record`), as regular expressions: the report's fast path
(`read.scan`) takes a line that matches whole, and sends any other line to `json.loads`."""

from __future__ import annotations

import re
from typing import Any

from donegate.report.rows import _NUM, CLAUDE

# -------------------------------------------------------------------------------------------------
# Reading: the fast path for the lines the gate writes, json.loads for everything else
# -------------------------------------------------------------------------------------------------

# A JSON string body without escapes or non-ASCII: its raw bytes equal the decoded value's UTF-8, so
# the fast path and json.loads agree on it byte for byte. Anything else takes the slow path.
_STR = rb'[^"\\\x00-\x1f\x7f-\xff]'
# JSON text at most `depth` levels of objects and lists deep, to the first closing bracket it did not open: strings
# whole (a bracket inside one is text), nesting tracked. Each step is possessive (JSON's grammar is decided by the
# first character), so nothing is tried twice.
_JSTR = rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_RUN = rb'[^"{}\[\]\n]*+'


def _nested(depth: int, keys: bytes = b"") -> bytes:
    """`keys`: names no string at the outermost level may be (nor hold a `\\u` escape, which could spell one): the
    keys the fast path reads in the object this text ends, so that one written again is json.loads's (it keeps the
    last of a repeated key)."""
    inner = rb'(?:' + _RUN + _JSTR + rb')*+' + _RUN
    for level in range(depth):
        key = rb'(?!"(?:' + keys + rb')"|"(?:[^"\\\n]|\\[^u\n])*+\\u)' if keys and level == depth - 1 else b""
        inner = rb'(?:' + _RUN + rb'(?:' + key + _JSTR + rb'|[\[{]' + inner + rb'[\]}]))*+' + _RUN
    return inner


# The rest of the acceptance gate (its failing tests: 2 deep), then of the gates (the review nests 6 deep: its
# reviewers' findings' reviewers); a line nested deeper is json.loads's. Each level more costs a little on every line.
# Neither may write again a key the fast path reads before it (the acceptance counts; the acceptance and leak gates):
# json.loads would read the last. A review written twice is `read._fast_review_cost`'s to refuse.
_ACCEPTANCE_REST, _GATES_REST = _nested(3, rb'total|passed'), _nested(7, rb'acceptance|leak')
# The top-level keys the gate writes between the gates and its client (`gate.record`), in any order, any number of
# times: none is one the fast path reads, so a repeat changes nothing json.loads would read.
_AFTER_GATES = (rb'(?:,"(?:cached|session_from|feedback|env|env_weakened|said|agent|cpu|confine)":(?:' + _JSTR
                + rb'|[^"{}\[\],\n]++|[\[{]' + _nested(4) + rb'[\]}]))*+')
# The stop's client (`report --by client`), once, where the kit writes it: last before the agent's figures and the
# tail. A line with a client anywhere else at the top level (or written twice: json.loads keeps the last) is
# json.loads's, so the client of a line the fast path takes is the one `client_at_tail` reads, or none.
_CLIENT_AT = rb'(?:,"client":"\w{1,40}")?'
_TAIL = (rb',(?:("agent_usd":(?:' + _NUM + rb'|null),"agent_seconds":(?:' + _NUM + rb'|null)),)?'
         rb'"blocks":(?:\d+|null),"duration":(' + _NUM + rb'),"kit_version":"[^"\\\n]*","config":"(' + _STR + rb'*)",'
         rb'"prev":"[0-9a-f]{64}"\}')
# A whole stop line as the gate writes it, found in a chunk of lines, one match a line: its time, repo, session,
# verdict, acceptance counts, the agent's figures (when there), duration and configuration. `\{[^{}]*\}` spans a gate
# object without nesting exactly: a brace inside one of its strings makes the match fail (then json.loads reads it),
# never succeed wrongly, because the `,"scope":{` that must follow cannot occur inside a string (a quote inside a JSON
# string is always escaped). The same holds for every `,"key":` anchor below. The tail's strings hold no backslash (one
# before a quote would escape it) and `prev` is 64 hex digits: 64 characters of anything could end the hash early and
# write a key after it (a `config` json.loads would read).
# Every top-level key is where the kit writes it: the head's once and in their order, the gates object read to its
# end (`_GATES_REST`, from the acceptance counts on), then only `_AFTER_GATES`'s keys, the agent's figures and the
# tail. A line with any other top-level key (one of the head's written again: json.loads keeps the last of a
# repeated key) is json.loads's. Reading the gates to their end doubles the regex's CPU (0.92 against 0.45 s per
# 200 MB of `make bench`'s ledger, skipping them by `.*`): it is what tells a key inside the gates from one after them.
_LINE_RE = re.compile(
    rb'\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00)","repo":"(' + _STR + rb'*)",'
    rb'"session":"(' + _STR + rb'+)","stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),'
    rb'"verdict":"(pass|review_error|block|hint|gave_up|appealed)","gates":\{"integrity":\{[^{}\n]*\}(?:,"leak":\{[^{}\n]*\})?,'
    rb'"scope":\{[^{}\n]*\},"acceptance":\{"ok":(?:true|false|null),"total":(\d{1,7},"passed":\d{1,7})'
    + _ACCEPTANCE_REST + rb'\}' + _GATES_REST + rb'\}' + _AFTER_GATES + _CLIENT_AT + _TAIL + rb'\n'
)
_LINE = _LINE_RE.finditer
# One row a line, in a chunk of whole lines: a stop line as the gate writes it gives `_LINE`'s groups, any other line
# empty ones (its newline ends the second branch; every branch of `_LINE` stops at its own). Rows come from C as
# tuples: no match object, no lookup by offset a line.
ROWS = re.compile(rb'(?:' + _LINE_RE.pattern + rb'|[^\n]*+\n)').findall
NO_ROW = (b"",) * _LINE_RE.groups
# The client of a line the fast path takes (`_CLIENT_AT`): a `,"client":"x"` ending where the kit writes it, just
# before the line's agent figures (the row's) and its last `,"blocks":` (the tail after it holds no quote but its own).
# What ends there is the last top-level value before them (`_LINE` read it); a `"client"` key before it, unescaped and
# at the top level, is the one json.loads reads. Else the line has none: Claude Code's.
_CLIENT_KEY, _BLOCKS, _CLIENT_END = b',"client":"', b',"blocks":', re.compile(rb',"client":"(\w{1,40})"').fullmatch


def client_at_tail(line: bytes, agent: bytes) -> bytes:
    """The client of a line the fast path takes (`line` without its newline; `agent`: its row's agent figures)."""
    end = line.rfind(_BLOCKS) - (len(agent) + 1 if agent else 0)
    m = _CLIENT_END(line, max(line.rfind(_CLIENT_KEY, 0, end), 0), end)
    return m.group(1) if m else CLAUDE


def fast_line(line: bytes) -> Any:
    """The fast path's match of one line (without its newline), None when json.loads reads it: the tests use it."""
    return next(_LINE(line + b"\n"), None)


# The review's own total comes after its reviewers' entries, followed by keys no entry has. No gate
# before the review nests objects, and none after it has a cost: `find` and `rfind` over the whole
# line are exact.
_REVIEW_TOTAL = re.compile(rb',"cost_usd":(' + _NUM + rb'),"duration":' + _NUM + rb'(?:,"diff_chars":|,"state":|\})').match
_REVIEW = b',"review":{'
_COST = b'"cost_usd":'
