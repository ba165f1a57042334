"""Red team of issue 45: unittest's `self.assert*` comparisons, through the real Stop hook (real runs, real repos).

An `assert` statement's `==` goes through the equality probe in both runs and, against a literal, through the
supervisor's comparison in the second run (`answers.py`; a value the test holds elsewhere: decoys first, `probe.py`).
`self.assertEqual(product(), 42)` went through neither: a value that latches to the first number it is compared
with, or one equal to everything, passed both runs with the bug in (each product below passed a stop on main, the
scan off: the runs are what is tested). Beside each, honest results of the kinds a project returns.
"""

from __future__ import annotations

import json

import pytest

from tests.support.unit_products import ATTACKS, HONEST, PRICE_BUG, honest_together, own, products_batch, run_probed, stop_product

UNIT_PRICES = ("import unittest\n\nimport calc\n\n\nclass PriceTests(unittest.TestCase):\n"
               "    def test_bulk(self):\n        self.assertEqual(calc.price(10), 900)\n\n"
               "    def test_two(self):\n        self.assertEqual(200, calc.price(2))\n\n"
               "    def test_many(self):\n        self.assertTrue(calc.price(20) == 1800)\n\n"
               "    def test_label(self):\n        self.assertEqual(calc.label(3), 'three units', 'the label')\n")
HELD = [f"test_unit_prices.py::PriceTests::{t}" for t in ("test_bulk", "test_label", "test_many", "test_two")]
# The expected value held elsewhere than in the call: a local, a class constant, a subTest's row; on either side (an
# assert's `expected == product()` drew no decoys either).
UNIT_ELSEWHERE = ("import unittest\n\nimport calc\n\n\nclass ElsewhereTests(unittest.TestCase):\n    BULK = 900\n\n"
                  "    def test_local(self):\n        expected = 900\n        self.assertEqual(calc.price(10), expected)\n\n"
                  "    def test_constant(self):\n        self.assertEqual(calc.price(10), self.BULK)\n\n"
                  "    def test_rows(self):\n        for units, cost in [(10, 900), (20, 1800)]:\n"
                  "            with self.subTest(units=units):\n                self.assertEqual(calc.price(units), cost)\n\n"
                  "    def test_label(self):\n        text = 'three units'\n        self.assertTrue(text == calc.label(3))\n\n"
                  "    def test_expected_first(self):\n        expected = 1800\n        assert expected == calc.price(20)\n")
ELSEWHERE = [f"test_unit_elsewhere.py::ElsewhereTests::{t}" for t in ("test_constant", "test_expected_first", "test_label",
                                                                      "test_local", "test_rows")]



def _stop(tmp_path_factory, kit_home, name: str, body: str, product: str, session: str):
    return stop_product(tmp_path_factory, kit_home, name, body, PRICE_BUG, product, session)


# The cases share stops (`unit_products.products_batch`), each finding its own tests caught: those equal to everything, by
# the first run's probe, in one (each fails its own tests there by an object of its own module); the latches, which pass
# the first run, in another (each finds its own tests among those the runs disagree on); the honest ones in one that must
# pass outright (else each is judged alone).
SUITES = {"literal": ("test_unit_prices.py", UNIT_PRICES, HELD), "held": ("test_unit_elsewhere.py", UNIT_ELSEWHERE, ELSEWHERE)}
FIRST = {f"{s}-{a}": (body, PRICE_BUG, ATTACKS[a]) for s, (_, body, _) in SUITES.items() for a in ATTACKS if a != "latch"}
SECOND = {f"{s}-latch": (body, PRICE_BUG, ATTACKS["latch"]) for s, (_, body, _) in SUITES.items()}
HONEST_TOGETHER = {f"{s}-{p}": (body, PRICE_BUG, HONEST[p], body.count("def test_")) for s, (_, body, _) in SUITES.items()
                   for p in HONEST}


def _caught(tmp_path_factory, case: str) -> None:
    if case in FIRST:  # equal to a fresh value: the probe, in the first run already
        out = products_batch(tmp_path_factory, "unit-asserts-first", FIRST)
        accept = out["line"]["gates"]["acceptance"]
        assert out["returncode"] == 2 and accept["tamper"]["rule"] == "probe", json.dumps(accept)
        mine = own(out, case, {f["id"]: f["message"] for f in accept["failing"]})
        assert mine and all(f"<{out['modules'][case]}." in m for m in mine.values()), (case, accept["failing"])
        return
    out = products_batch(tmp_path_factory, "unit-asserts-second", SECOND)
    accept = out["line"]["gates"]["acceptance"]
    assert out["returncode"] == 2 and accept["tamper"]["rule"] in ("disagree", "probe"), json.dumps(accept)
    mine = own(out, case, accept["second"]["disagree"])
    shown = {i.split("::", 1)[1]: why for i, why in mine.items()}
    if case == "literal-latch":  # every held assert's test (it was right one time in 16 a held assert: `bare_apart.apart`)
        assert "900" not in out["stderr"] and "three units" not in out["stderr"]
        assert set(shown) == {i.split("::", 1)[1] for i in HELD}, (case, accept["second"])
        assert all("held by the supervisor" in why for why in shown.values()), shown
    else:  # the decoys of the expected value, compared with first in the test's frame
        assert sorted(shown) == sorted(i.split("::", 1)[1] for i in ELSEWHERE), (case, accept["second"])
        assert all("compared equal to a value unlike the expected one" in v for v in shown.values()), shown


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_product_that_latches_or_equals_everything_through_assert_equal_on_a_literal_is_caught(tmp_path_factory, kit_home, attack):
    _caught(tmp_path_factory, f"literal-{attack}")


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_product_that_latches_or_equals_everything_through_assert_equal_on_a_held_value_is_caught(tmp_path_factory, kit_home, attack):
    _caught(tmp_path_factory, f"held-{attack}")


@pytest.mark.parametrize("product", list(HONEST))
@pytest.mark.parametrize("name, body", [("test_unit_prices.py", UNIT_PRICES), ("test_unit_elsewhere.py", UNIT_ELSEWHERE)])
def test_honest_results_pass_unittest_asserts_in_both_runs(tmp_path_factory, kit_home, product, name, body):
    if honest_together(tmp_path_factory, "unit-asserts-honest", HONEST_TOGETHER):
        return
    res, accept = _stop(tmp_path_factory, kit_home, name, body, HONEST[product], product)
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, accept)
    assert accept["second"]["checked"] == body.count("def test_") and not accept["second"]["unsupported"], accept["second"]


# The rewrite itself (`probe.unit_probes`), as the first run makes it (the probe after the call), run by unittest.
CASE = ('''import unittest\n\nfrom calc import Near, Sane\n\n\nclass T(unittest.TestCase):
    def test_sane(self):
        self.assertEqual(Sane(3), 3)
        self.assertTrue(3 == Sane(3))
        self.assertFalse(Sane(3) != 3, 'msg')

    def test_near(self):
        self.assertEqual(Near(3), 3)

    def test_near_not_equal(self):
        self.assertFalse(Near(3) != 3)

    def test_not_self(self):
        other = self
        other.assertEqual(Near(3), 3)


class Tolerant(unittest.TestCase):
    def assertEqual(self, first, second, msg=None):  # the project's own: its tolerance is its own
        if not first == second:
            raise self.failureException(msg)

    def test_own_assert_equal(self):
        self.assertEqual(Near(3), 4)
''')
CALC = ("class Sane:\n    def __init__(self, v):\n        self.v = v\n\n    def __eq__(self, other):\n        return self.v == other\n\n\n"
        "class Near(Sane):\n    def __eq__(self, other):\n        return isinstance(other, int) and abs(self.v - other) <= 1\n")


def test_unittest_comparisons_are_probed_after_the_call(tmp_path, monkeypatch):
    result, alarms = run_probed(tmp_path, monkeypatch, CASE, CALC)
    failed = sorted(t.id().rpartition(".")[2] for t, _ in result.failures)
    # equal within a tolerance: not equal by the int's rules; a call on another name than `self`, or a method of the
    # project's own (`Tolerant.assertEqual`), is left as it is
    assert failed == ["test_near", "test_near_not_equal"] and not result.errors and not alarms, (result.failures, alarms)
    assert all("Near object" in text and "!= 3" in text for _, text in result.failures)


def test_which_unittest_calls_the_kit_holds():
    """Top-level `self.assertEqual(X, LITERAL)` (a literal message after it) and `self.assertTrue(X == LITERAL)` of a
    test method, of any class; a base's or a mixin's test is its subclass's too. Not held: a message computed at run
    time, keywords for the sides, and any unittest call of a file whose classes define an assert method of their own
    (a tolerance of the project's: held, the supervisor's exact comparison would stand in for it)."""
    import ast

    from donegate.hidden import answers

    src = ("import unittest\n\n\nclass Checks:\n    def test_m(self):\n        self.assertEqual(f(1), 9)\n\n\n"
           "class Case(Checks, unittest.TestCase):\n    def test_n(self):\n        self.assertTrue(f(2) == 'b', 'why')\n"
           "        self.assertEqual(f(3), 4, msg=str(5))\n        self.assertEqual(first=f(4), second=5)\n"
           "        self.assertEqual(7, f(5))\n")
    held = {q: [(k, e) for k, e, _, _ in v] for q, v in answers.answer_holds(ast.parse(src)).items()}
    assert held == {"Checks::test_m": [(0, 9)], "Case::test_n": [(1, "b"), (2, 7)], "Case::test_m": [(0, 9)]}, held
    own = src + "\n\nclass Near(unittest.TestCase):\n    def assertEqual(self, a, b, msg=None):\n        pass\n"
    assert answers.answer_holds(ast.parse(own)) == {}
