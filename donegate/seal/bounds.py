"""The bounds an assert puts on a value, by their syntax (`ast`): a range of number bounds (`0.3 - 1e-9 < got < 0.3 +
1e-9`) read as the approx it stands for, and a one-sided bound (`got < 10`, `assertLess(got, 10)`) kept with its
number, so that one made wider (`got < 1e9`) is named (`donegate.seal.loosened`); one made tighter is not."""

from __future__ import annotations

import ast

from donegate.seal import dead


def between(t: ast.Compare) -> str | None:
    """`lo < got < hi` (`<=`, or `hi > got > lo`) of number bounds known without running it, as the approx kind it
    stands for (its half-width as `abs`, at its middle)."""
    if len(t.ops) != 2 or not (all(isinstance(o, (ast.Lt, ast.LtE)) for o in t.ops)
                               or all(isinstance(o, (ast.Gt, ast.GtE)) for o in t.ops)):
        return None
    lo, hi = dead.value(t.left), dead.value(t.comparators[1])
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (lo, hi)):
        return None
    lo, hi = sorted((float(lo), float(hi)))  # type: ignore[arg-type]
    return f"approx:abs={(hi - lo) / 2!r},at={abs(lo + hi) / 2!r}"


_SIDES = {ast.Lt: "lt", ast.LtE: "lt", ast.Gt: "gt", ast.GtE: "gt"}
_CALLED = {"assertLess": "lt", "assertLessEqual": "lt", "assertGreater": "gt", "assertGreaterEqual": "gt"}


def bound(n: ast.AST) -> str | None:
    """A one-sided bound an assert puts on a value (`got < 10`, `10 > got`, `assertLess(got, 10)`): `lt=10` (the
    value below it) or `gt=...`, when the bound is a number known without running the test."""
    if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 \
            and type(n.test.ops[0]) in _SIDES:
        side, left, right = _SIDES[type(n.test.ops[0])], n.test.left, n.test.comparators[0]
    elif isinstance(n, ast.Call) and getattr(n.func, "attr", "") in _CALLED and len(n.args) >= 2:
        side, left, right = _CALLED[n.func.attr], n.args[0], n.args[1]  # type: ignore[attr-defined]
    else:
        return None
    at, got = dead.value(right), dead.value(left)
    if got is None and isinstance(at, (int, float)) and not isinstance(at, bool):
        return f"{side}={float(at)!r}"
    if at is None and isinstance(got, (int, float)) and not isinstance(got, bool):  # (`10 > got`: the value below)
        return f"{'gt' if side == 'lt' else 'lt'}={float(got)!r}"
    return None


def widened(old: list[str], new: list[str]) -> str | None:
    """A one-sided bound made wider (`got < 10` to `got < 1e9`): a bound of a side the seal had removed, and one of
    that side added beyond each removed one. A bound made tighter, or one added beside, is none."""
    for side, beyond in (("lt", float.__gt__), ("gt", float.__lt__)):
        was = [float(b[3:]) for b in old if b.startswith(side) and b not in new]
        now = [float(b[3:]) for b in new if b.startswith(side) and b not in old]
        if was and any(all(beyond(n, w) for w in was) for n in now):
            return f"the bound {'below' if side == 'lt' else 'above'} {', '.join(map(repr, was))} at the seal is now {', '.join(map(repr, now))}"
    return None