"""The equality probe on its own (`donegate.hidden.probe.make_probe`): a comparison with a value of a builtin type
is answered by that type's rules, whatever the other object says of itself. Each fake beside honest look-alikes."""

from __future__ import annotations

import dataclasses
import decimal
import enum
import fractions
import random
import types
from collections import namedtuple
from unittest import mock

import pytest

from donegate.hidden import probe as probe_mod

REPO = "/srv/repo"


def _probe():
    alarms: list[str] = []
    return probe_mod.make_probe(REPO, alarms.append), alarms


def _ask(left, right, op="=="):
    probe, alarms = _probe()
    result = left == right if op == "==" else left != right
    return probe(left, right, op, result), alarms


class _AlwaysCodeClaimsStdlib:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__


_AlwaysCodeClaimsStdlib.__eq__ = types.FunctionType(  # type: ignore[method-assign]
    _AlwaysCodeClaimsStdlib.__eq__.__code__.replace(co_filename=decimal.__file__), decimal.__dict__)


class _StaticBool:
    __module__ = "decimal"
    __eq__ = staticmethod(bool)  # type: ignore[assignment]
    __hash__ = object.__hash__


class _Tolerant:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return abs(self.v - other) <= 0.15 * abs(other)
    __hash__ = object.__hash__


class _Once:
    def __init__(self, v):
        self.v, self.seen = v, 0

    def __eq__(self, other):
        self.seen += 1
        return self.seen == 1 or self.v == other
    __hash__ = object.__hash__


class _TolerantFloat(float):
    def __eq__(self, other):
        return abs(float(self) - other) <= 0.15 * abs(other)
    __hash__ = float.__hash__


class _CaseBlind(str):
    def __eq__(self, other):
        return str(self).lower() == str(other).lower()
    __hash__ = str.__hash__


FAKES = {
    "always-true, code claims a stdlib file and runs in its namespace": (_AlwaysCodeClaimsStdlib(), 900, True),
    "staticmethod(bool), __module__ decimal": (_StaticBool(), 900, True),
    "within a tolerance": (_Tolerant(1000), 900, False),
    "on the first comparison only": (_Once(1000), 900, False),
    "a float subclass within a tolerance": (_TolerantFloat(1000), 900, False),
    "a str subclass blind to case": (_CaseBlind("ABC"), "abc", False),
    "inside a list": ([1, _StaticBool()], [1, 2], True),
    "a dict's value": ({"total": _Tolerant(1000)}, {"total": 900}, False),
    "the expected value on the left": (900, _Tolerant(1000), False),
    "an int subclass equal to everything": (type("P", (int,), {"__eq__": lambda s, o: True, "__hash__": int.__hash__})(1000),
                                            900, True),
}


@pytest.mark.parametrize("name", list(FAKES))
def test_a_value_equal_without_being_right_is_not_equal(name):
    got, want, everything = FAKES[name]
    assert got == want  # what the object says
    answer, alarms = _ask(got, want)
    assert answer is False
    assert bool(alarms) is everything  # equal to everything: tampering; a tolerance or once: a failing assert
    answer, _ = _ask(got, want, "!=") if not isinstance(got, _Once) else (True, [])
    assert answer is True


class Colour(enum.IntEnum):
    RED = 900


class Tone(str, enum.Enum):
    LOW = "low"


@dataclasses.dataclass(frozen=True)
class Line:
    units: int
    total: int


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return self.cents == (other.cents if isinstance(other, Money) else other)
    __hash__ = object.__hash__


Pair = namedtuple("Pair", "units total")

HONEST = {
    "Decimal": (decimal.Decimal("900.0"), 900),
    "Fraction": (fractions.Fraction(1800, 2), 900),
    "IntEnum": (Colour.RED, 900),
    "str Enum": (Tone.LOW, "low"),
    "namedtuple": (Pair(10, 900), (10, 900)),
    "dataclass": (Line(10, 900), Line(10, 900)),
    "a repository class with a proper __eq__": (Money(900), 900),
    "two repository objects": (Money(900), Money(900)),
    "a float equal to an int exactly": (900.0, 900),
    "bool and int": (True, 1),
    "None": (None, None),
    "nested containers": ({"a": [Pair(1, 2), (Colour.RED,)]}, {"a": [(1, 2), (900,)]}),
    "pytest.approx": (0.1 + 0.2, pytest.approx(0.3)),
    "bytes and complex subclasses": ((type("B", (bytes,), {})(b"ab"), type("C", (complex,), {})(1 + 2j)), (b"ab", 1 + 2j)),
    "mock.ANY in a dict": ({"id": 7, "total": 900}, {"id": mock.ANY, "total": 900}),
}


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_values_keep_their_answer(name):
    got, want = HONEST[name]
    assert got == want
    answer, alarms = _ask(got, want)
    assert answer is True and alarms == []
    assert _ask(got, want, "!=") == (False, [])


def test_a_failing_comparison_is_left_failing():
    assert _ask(1000, 900) == (False, [])
    assert _ask(_Tolerant(2000), 900) == (False, [])


def test_a_ne_that_never_differs_is_judged_by_the_operator_the_test_used():
    bent = type("NeverDiffers", (), {"__ne__": lambda s, o: False, "__hash__": object.__hash__})()
    answer, alarms = _ask(900, bent, "!=")  # `assert not (900 != price)`
    assert answer is True and len(alarms) == 1


class _Mine:  # an object of the repository's (its equality runs in this file's module)
    def __eq__(self, other):
        return NotImplemented
    __hash__ = object.__hash__


@pytest.mark.parametrize("expected", [(4, 16), [3, 9.5, "nine"], {"n": 4, "square": 16}, ((1, "a"), [2.5]), (None,), {"k": None}])
def test_decoys_of_a_container_are_of_its_type_one_element_changed(monkeypatch, expected):
    """The second harness's decoys (`make_probe`'s decoys) and the kit's for a held literal (`answers.answer_decoys`):
    of the expected container's type, unequal to it, of its length (None's decoys are of other kinds)."""
    from pathlib import Path

    from donegate.hidden import answers

    monkeypatch.setattr(probe_mod, "answer_decoys", answers.answer_decoys, raising=False)  # as the harness has it
    probe = probe_mod.make_probe(str(Path(__file__).parent), [].append)
    held = answers.answer_decoys(expected, random.Random(7))
    for drawn in (probe.decoys(_Mine(), expected), held):
        assert drawn and all(type(d) is type(expected) and d != expected for d in drawn), drawn
        assert all(len(d) == len(expected) for d in drawn), drawn
    assert len(held) == answers.ANSWER_DECOYS  # a latch passes one time in 16, as on a number (None too: red2)
    # an honest container (a namedtuple) is compared as a tuple: no decoys
    assert probe.decoys(Pair(4, 16), (4, 16)) == ()


# unittest's assertAlmostEqual and a substring's assertIn, probed after the call passed (`probe.unit_check`): the
# product's value taken as a builtin number or string by its class's real ancestry, not `isinstance`, which believes a
# `__class__` property (`same` did so already, 33f6316). An object of no number (no `float`) that is not equal to the
# expected value is judged by unittest's own rule, its difference, which must not be as small to a fresh value.
class _ClaimsStr:  # says it is a str: `isinstance` took it for no number, so its own float (0.5) was never asked
    __class__ = property(lambda self: str)  # type: ignore[assignment]

    def __float__(self):
        return 0.5

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __sub__(self, other):  # unittest's assertAlmostEqual takes `abs(first - second)`: the call passes
        return 0.0


class _NoNumber:  # no float, equal to nothing, no difference to anything: the call passes on its `__sub__`
    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __sub__(self, other):
        return 0.0


class _Proxy:  # a transparent proxy (wrapt's ObjectProxy): says it is of its value's class
    def __init__(self, value):
        self.value = value

    __class__ = property(lambda self: type(self.value))  # type: ignore[assignment]

    def __eq__(self, other):
        return self.value == other

    __hash__ = None  # type: ignore[assignment]

    def __float__(self):
        return float(self.value)

    def __sub__(self, other):
        return self.value - other


class _Duration:  # an honest quantity with no float: its difference is a number
    def __init__(self, seconds):
        self.seconds = seconds

    def __sub__(self, other):
        return self.seconds - other


@pytest.mark.parametrize(("value", "expected", "rule", "holds"), [
    pytest.param(_ClaimsStr(), 0.3, ("almost", None, None), False, id="claims-str-its-float-wrong"),
    pytest.param(_NoNumber(), 0.3, ("almost", None, None), False, id="no-number-no-difference-to-anything"),
    pytest.param(_NoNumber(), 205, ("almost", None, 10), False, id="no-number-no-difference-within-a-delta"),
    pytest.param(_Proxy(0.30000001), 0.3, ("almost", None, None), True, id="honest-proxy-of-a-float"),
    pytest.param(_Proxy(200), 205, ("almost", None, 10), True, id="honest-proxy-of-an-int-within-a-delta"),
    pytest.param(_Duration(0.30000001), 0.3, ("almost", None, None), True, id="honest-quantity-without-a-float"),
    pytest.param(_Duration(2.501), 2.5, ("almost", 2, None), True, id="honest-quantity-within-places"),
])
def test_almost_equal_takes_a_number_by_its_real_class(value, expected, rule, holds):
    import unittest

    unittest.TestCase().assertAlmostEqual(value, expected, places=rule[1], delta=rule[2])  # the call itself passes
    probe, alarms = _probe()
    assert probe(value, expected, rule, True) is holds, alarms
