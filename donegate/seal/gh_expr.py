"""A GitHub Actions `if:` read as GitHub reads it, far enough to know one that never holds on the events that test a
change (`ci_runs.CHANGE_EVENTS`): literals, `github.event_name`, `github.repository` where the seal read it, the status
functions, `!`, comparisons, `&&`, `||`, and `contains`/`startsWith`/`endsWith`, `fromJSON` and `format` of known values. Anything else is not known, and a condition not known may
hold (no finding)."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

UNKNOWN = object()
# The repository's `owner/name` on GitHub where the seal read it (`known`): `github.repository == 'other/repo'` then
# never holds; None (no GitHub remote) leaves such a condition not known.
REPOSITORY: str | None = None


def known(repository: str | None) -> None:
    """Read `github.repository` as `repository` (`owner/name`, `ci_runs.repository`'s), None for not known."""
    global REPOSITORY
    REPOSITORY = repository if isinstance(repository, str) and repository.count("/") == 1 else None
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+)|('(?:[^']|'')*')|(&&|\|\||==|!=|<=|>=|[<>!(),])"
                    r"|([A-Za-z_][A-Za-z0-9_.*-]*))")
STATUS = {"success": True, "always": True, "failure": False, "cancelled": False}  # (a run where every step passed)


def never(condition: Any, events: set[str]) -> bool:
    """Whether a job's or step's `if:` is false on every one of `events` (the workflow's change events; a workflow
    run on none of them is `events`' finding, not this one's)."""
    if condition is None or isinstance(condition, bool) and condition:
        return False
    if condition is False or isinstance(condition, (int, float)) and not isinstance(condition, bool):
        return not condition
    text = str(condition).strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    text = m.group(1) if m else text
    results = [_value(text, event) for event in sorted(events) or ["push"]]
    return all(r is not UNKNOWN and not _truth(r) for r in results)


def holds(condition: str, events: set[str]) -> bool:
    """Whether an expression (`continue-on-error: ${{ 1 == 1 }}`) holds on one of `events`."""
    text = condition.strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    return any(r is not UNKNOWN and _truth(r) for r in (_value(m.group(1) if m else text, e) for e in sorted(events)))


class _Tokens:
    """The tokens left to read: `t[1:]` a view, not a copy (a chain of 10,000 `&&` read in linear time, not quadratic)."""

    __slots__ = ("items", "at")

    def __init__(self, items: tuple[Any, ...], at: int = 0) -> None:
        self.items, self.at = items, at

    def __len__(self) -> int:
        return max(len(self.items) - self.at, 0)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _Tokens(self.items, self.at + (key.start or 0))
        if key < 0 or self.at + key >= len(self.items):
            raise IndexError(key)
        return self.items[self.at + key]


def _value(text: str, event: str) -> Any:
    try:
        tokens, pos = [], 0
        while pos < len(text.rstrip()):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                return UNKNOWN
            tokens.append(m.groups())
            pos = m.end()
        value, rest = _or(_Tokens(tuple(tokens)), event)
        return value if not rest else UNKNOWN
    except (IndexError, RecursionError):
        return UNKNOWN


def _or(t: Any, ev: str) -> tuple[Any, Any]:
    left, t = _and(t, ev)
    while t and t[0][2] == "||":
        right, t = _and(t[1:], ev)
        left = left if left is not UNKNOWN and _truth(left) else right if left is not UNKNOWN or (
            right is not UNKNOWN and _truth(right)) else UNKNOWN
    return left, t


def _and(t: Any, ev: str) -> tuple[Any, Any]:
    left, t = _compare(t, ev)
    while t and t[0][2] == "&&":
        right, t = _compare(t[1:], ev)
        left = left if left is not UNKNOWN and not _truth(left) else right if left is not UNKNOWN or (
            right is not UNKNOWN and not _truth(right)) else UNKNOWN
    return left, t


def _compare(t: Any, ev: str) -> tuple[Any, Any]:
    left, t = _unary(t, ev)
    while t and t[0][2] in ("==", "!=", "<", ">", "<=", ">="):
        op = t[0][2]
        right, t = _unary(t[1:], ev)
        if left is UNKNOWN or right is UNKNOWN:
            left = UNKNOWN
        else:
            both = isinstance(left, str) and isinstance(right, str)  # (GitHub compares strings ignoring case)
            a, b = (left.casefold(), right.casefold()) if both else (_number(left), _number(right))
            left = {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
    return left, t


def _unary(t: Any, ev: str) -> tuple[Any, Any]:
    number, string, op, name = t[0]
    if op == "!":
        value, t = _unary(t[1:], ev)
        return (UNKNOWN if value is UNKNOWN else not _truth(value)), t
    if op == "(":
        value, t = _or(t[1:], ev)
        return value, t[1:] if t and t[0][2] == ")" else [("", "", "?", "")]
    if number:
        return float(int(number, 16) if number.startswith("0x") else number), t[1:]
    if string:
        return string[1:-1].replace("''", "'"), t[1:]
    if name and t[1:] and t[1][2] == "(":  # a function call
        args, t = [], t[2:]
        while t and t[0][2] != ")":
            value, t = _or(t, ev)
            args.append(value)
            t = t[1:] if t and t[0][2] == "," else t
        t = t[1:]
        if name in STATUS and not args:
            return STATUS[name], t
        if name.casefold() == "fromjson" and len(args) == 1 and isinstance(args[0], str):  # (`fromJSON('false')`)
            return _json(args[0]), t
        if name.casefold() == "format" and args and all(isinstance(a, (str, float, bool)) or a is None for a in args):
            return _format(*args), t
        if name in ("contains", "startsWith", "endsWith") and len(args) == 2 and UNKNOWN not in args \
                and all(isinstance(a, str) for a in args):
            a, b = args[0].casefold(), args[1].casefold()
            return {"contains": b in a, "startsWith": a.startswith(b), "endsWith": a.endswith(b)}[name], t
        return UNKNOWN, t
    literal = {"true": True, "false": False, "null": None, "github.event_name": ev}
    if REPOSITORY:  # (the repository's own name, read at the seal from its GitHub remote: `known`)
        literal.update({"github.repository": REPOSITORY, "github.repository_owner": REPOSITORY.split("/")[0]})
    return (literal[name] if name in literal else UNKNOWN), t[1:]


def _json(text: str) -> Any:
    """`fromJSON` of a literal: its scalar (a number as a float, as GitHub's), UNKNOWN for an object, a list or no JSON."""
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return UNKNOWN
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value \
        if value is None or isinstance(value, (str, bool, float)) else UNKNOWN


def _format(pattern: Any, *args: Any) -> Any:
    """`format('{0}', x)` of known values as GitHub gives it (`{{`/`}}` a brace), UNKNOWN for a pattern not a string or
    an index past its arguments."""
    if not isinstance(pattern, str):
        return UNKNOWN
    shown = [("true" if a else "false") if isinstance(a, bool) else "" if a is None else f"{a:g}" if isinstance(a, float)
             else a for a in args]
    try:
        return re.sub(r"\{\{|\}\}|\{(\d+)\}", lambda m: m.group(0)[0] if m.group(1) is None else shown[int(m.group(1))],
                      pattern)
    except IndexError:
        return UNKNOWN


def _truth(value: Any) -> bool:
    return bool(value) and value == value  # (NaN is false)


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return float("nan")
    return float(value)
