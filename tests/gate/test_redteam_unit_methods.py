"""Red team of issue 45: unittest's other assert methods and their aliases, through the real Stop hook (real runs,
real repos, the scan off: the runs are what is tested).

`self.failUnlessEqual(product(), 900)`, `self.failUnless(...)`, `self.assert_(...)` were probed but not held (the answers'
list of unittest's names had drifted from the probe's): the literal stayed in the second run's code, where a product
that reads its caller's constants found it (a latch was caught by the probe's decoys; now by the supervisor). Each attack passed a stop on main with the bug in; beside each, honest results of the kinds a project returns.
"""

from __future__ import annotations

import json
import unittest

import pytest

from tests.support.unit_products import (ATTACKS, HELD_ATTACKS, HELD_BUG, HELD_HONEST, HONEST, MORE_ATTACKS, MORE_BUG, MORE_HONEST,
                                         PRICE_BUG, honest_together, own, products_batch, run_probed, stop_product)

ALIASES = ("import unittest\n\nimport calc\n\n\nclass AliasTests(unittest.TestCase):\n"
           "    def test_fail_unless_equal(self):\n        self.failUnlessEqual(calc.price(10), 900)\n\n"
           "    def test_assert_equals(self):\n        self.failUnlessEqual(200, calc.price(2))\n\n"
           "    def test_fail_unless(self):\n        self.failUnless(calc.price(20) == 1800)\n\n"
           "    def test_assert_(self):\n        self.assert_(calc.label(3) == 'three units', 'the label')\n")
ALIAS_IDS = [f"test_unit_aliases.py::AliasTests::{t}" for t in ("test_assert_", "test_assert_equals", "test_fail_unless",
                                                                 "test_fail_unless_equal")]
OLD_ALIASES = pytest.mark.skipif(not all(hasattr(unittest.TestCase, n) for n in ("failUnlessEqual", "assertEquals", "failUnless", "assert_")),
                                 reason="unittest's old aliases (gone in Python 3.12)")
ALIAS_ATTACKS = {
    # the expected value read from the calling test's own code: its number nearest the bug's, its string naming units
    "reads-the-callers-constants": (
        "import sys\n\n\ndef _consts(kind):\n    return [c for c in sys._getframe(2).f_code.co_consts if type(c) is kind]\n\n\n"
        "def price(units):\n    return min(_consts(int) or [units * 100], key=lambda c: abs(c - units * 100) if c > 9 else 1e9)\n\n\n"
        "def label(units):\n    return ([c for c in _consts(str) if c.endswith(' units')] + [''])[0]\n"),
    "latch": ATTACKS["latch"],
}
ALIAS_HONEST = {k: HONEST[k] for k in ("ints-and-str", "decimal", "money-class")}


@OLD_ALIASES
@pytest.mark.parametrize("attack", list(ALIAS_ATTACKS))
def test_a_product_without_the_answer_through_unittests_old_aliases_disagrees(tmp_path_factory, kit_home, attack):
    _held_together(tmp_path_factory, f"alias-{attack}", "900", "three units")


@OLD_ALIASES
@pytest.mark.parametrize("product", list(ALIAS_HONEST))
def test_honest_results_pass_unittests_old_aliases_in_both_runs(tmp_path_factory, kit_home, product):
    _honest(tmp_path_factory, kit_home, f"alias-{product}")


def test_the_kit_holds_unittests_old_aliases_as_it_probes_them():
    """One list of unittest's names (`probe_unit.UNIT_EQ`, `probe_unit.UNIT_TRUE`) for the probe and the supervisor's hold."""
    import ast

    from donegate.hidden import answers, probe_unit

    source = ALIASES.replace("self.failUnlessEqual(200", "self.assertEquals(200")
    held = {q: [e for _, e, _, _ in v] for q, v in answers.answer_holds(ast.parse(source)).items()}
    assert held == {"AliasTests::test_fail_unless_equal": [900], "AliasTests::test_assert_equals": [200],
                    "AliasTests::test_fail_unless": [1800], "AliasTests::test_assert_": ["three units"]}, held
    probed = {n.name: probe_unit._unit_compare(n.body[0]) is not None for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.FunctionDef)}
    assert all(probed.values()), probed


# unittest's other comparisons: the expected value a literal (held) and computed in the test (probed, decoys first)
MORE = ("import unittest\n\nimport calc\n\n\nclass MoreTests(unittest.TestCase):\n"
        "    def test_in(self):\n        self.assertIn(calc.price(10), (900, 950))\n\n"
        "    def test_has(self):\n        self.assertIn('three', calc.words(3))\n\n"
        "    def test_almost(self):\n        self.assertAlmostEqual(calc.rate(3), 0.3)\n\n"
        "    def test_delta(self):\n        self.assertAlmostEqual(calc.price(2), 205, delta=10, msg='two')\n\n"
        "    def test_count(self):\n        self.assertCountEqual(calc.parts(3), ['a', 'b', 'c'])\n\n"
        "    def test_rows(self):\n        for units in (10, 20):\n            with self.subTest(units=units):\n"
        "                self.assertIn(calc.price(units), [units * 90, units * 95])\n"
        "                self.assertAlmostEqual(calc.rate(units), units / 10, places=3)\n"
        "                self.assertCountEqual(calc.parts(units // 10), list('abc'[:units // 10]))\n")


# held by the supervisor: the literal container and number are in no code the second run holds
HELD = ("import unittest\n\nimport calc\n\n\nclass HeldTests(unittest.TestCase):\n"
        "    def test_in(self):\n        self.assertIn(calc.price(10), (900, 950))\n\n"
        "    def test_almost(self):\n        self.assertAlmostEqual(calc.rate(3), 0.3, places=3, msg='rate')\n\n"
        "    def test_count(self):\n        self.assertCountEqual(calc.parts(3), ['a', 'b', 'c'])\n")


# (file name, its text, the bug sealed with it, its tests, the products that attack it, the honest ones)
OTHERS = {"probed": ("test_unit_more.py", MORE, MORE_BUG, 6, MORE_ATTACKS, MORE_HONEST),
          "held": ("test_unit_held.py", HELD, HELD_BUG, 3, HELD_ATTACKS, HELD_HONEST)}


# The cases share stops (`unit_products.products_batch`), each finding its own tests caught: those the first run's probe
# catches (a fake equal to what it is compared with fails its own tests there) in one, those the second run holds in
# another (the first run passes them: each finds its own tests among those the runs disagree on, at most 20 in the record),
# each honest one in one that must pass outright. A product right only under pytest stops alone (its six tests disagree).
PROBED_TOGETHER = {f"probed-{a}": (MORE, MORE_BUG, MORE_ATTACKS[a]) for a in MORE_ATTACKS if a != "right-only-under-pytest"}
HELD_TOGETHER = {**{f"held-{a}": (HELD, HELD_BUG, HELD_ATTACKS[a]) for a in HELD_ATTACKS},
                 **({f"alias-{a}": (ALIASES, PRICE_BUG, ALIAS_ATTACKS[a]) for a in ALIAS_ATTACKS}
                    if all(hasattr(unittest.TestCase, n) for n in ("failUnlessEqual", "assertEquals", "failUnless", "assert_")) else {})}
HONEST_TOGETHER = {**{f"probed-{h}": (MORE, MORE_BUG, MORE_HONEST[h], 6) for h in MORE_HONEST},
                   **{f"held-{h}": (HELD, HELD_BUG, HELD_HONEST[h], 3) for h in HELD_HONEST},
                   **({f"alias-{h}": (ALIASES, PRICE_BUG, ALIAS_HONEST[h], 4) for h in ALIAS_HONEST}
                      if all(hasattr(unittest.TestCase, n) for n in ("failUnlessEqual", "assertEquals", "failUnless", "assert_")) else {})}


def _held_together(tmp_path_factory, case: str, *never: str) -> None:
    """`case` of HELD_TOGETHER: its own tests among those the runs disagree on, each held by the supervisor, and none of
    the held values (`never`) in the block."""
    out = products_batch(tmp_path_factory, "unit-held", HELD_TOGETHER)
    accept = out["line"]["gates"]["acceptance"]
    assert out["returncode"] == 2 and accept["tamper"]["rule"] == "disagree", json.dumps(accept)
    assert len(accept["second"]["disagree"]) < 20, "the record names the first 20 only: fewer cases a stop"
    mine = own(out, case, accept["second"]["disagree"])
    assert mine and all("held by the supervisor" in why for why in mine.values()), (case, accept["second"])
    if case.startswith("alias-"):
        assert {i.split("::", 1)[1] for i in mine} <= {i.split("::", 1)[1] for i in ALIAS_IDS}, mine
    assert not any(value in out["stderr"] for value in never), out["stderr"]


def _honest(tmp_path_factory, kit_home, case: str) -> None:
    body, bug, product, checked = HONEST_TOGETHER[case]
    if honest_together(tmp_path_factory, "unit-methods-honest", HONEST_TOGETHER):
        return
    name = {"probed": "test_unit_more.py", "held": "test_unit_held.py", "alias": "test_unit_aliases.py"}[case.split("-")[0]]
    res, accept = stop_product(tmp_path_factory, kit_home, name, body, bug, product, case)
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, json.dumps(accept))
    assert accept["second"]["checked"] == checked and not accept["second"]["unsupported"], accept["second"]


@pytest.mark.parametrize("case, attack", [(c, a) for c, v in OTHERS.items() for a in v[4]])
def test_a_product_without_the_answer_through_unittests_other_comparisons_is_caught(tmp_path_factory, kit_home, case, attack):
    name, body, bug, _, attacks, _ = OTHERS[case]
    if f"{case}-{attack}" in HELD_TOGETHER:
        return _held_together(tmp_path_factory, f"{case}-{attack}", "900, 950", "0.3")
    if f"{case}-{attack}" in PROBED_TOGETHER:
        out = products_batch(tmp_path_factory, "unit-probed", PROBED_TOGETHER)
        accept = out["line"]["gates"]["acceptance"]
        assert out["returncode"] == 2 and accept["tamper"]["rule"] == "probe", json.dumps(accept)
        # its own tests failed in the first run, each by an object of its own module (equal to its expected value but
        # for the probe)
        mine = own(out, f"{case}-{attack}", {f["id"]: f["message"] for f in accept["failing"]})
        assert mine and all(f"<{out['modules'][f'{case}-{attack}']}." in m for m in mine.values()), (attack, accept["failing"])
        return
    res, accept = stop_product(tmp_path_factory, kit_home, name, body, bug, attacks[attack], attack)
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    if case == "held":  # the supervisor's rules: the value is in no code the second run holds, nor in the block
        assert "900, 950" not in res.stderr and "0.3" not in res.stderr
        assert accept["tamper"]["rule"] == "disagree" and "held by the supervisor" in accept["tamper"]["what"], json.dumps(accept)
    else:  # the probe: a fresh value equal, or a decoy compared first
        assert accept["tamper"]["rule"] in ("probe", "disagree"), json.dumps(accept)


@pytest.mark.parametrize("case, product", [(c, h) for c, v in OTHERS.items() for h in v[5]])
def test_honest_results_pass_unittests_other_comparisons_in_both_runs(tmp_path_factory, kit_home, case, product):
    _honest(tmp_path_factory, kit_home, f"{case}-{product}")


def test_which_memberships_and_tolerances_the_kit_holds():
    """`self.assertIn(X, LITERAL CONTAINER)`, `self.assertAlmostEqual(X, LITERAL)` (either side, places or delta
    literal numbers or absent, a literal message) and `self.assertCountEqual(X, LITERAL LIST OR TUPLE)` (either side):
    held with their rule; a tolerance or message computed at run time, a literal member of the product's container, a
    container of more than 16 elements, a count against a set, a computed or empty list: not held."""
    import ast

    from donegate.hidden import answers

    src = ("import unittest\n\n\nclass Case(unittest.TestCase):\n    def test_n(self):\n"
           "        self.assertIn(f(1), [1, 2])\n        self.assertAlmostEqual(0.5, f(2), delta=0.1)\n"
           "        self.assertAlmostEqual(f(3), 2.5, 2, 'why')\n        self.assertAlmostEqual(f(4), 1.0, places=p)\n"
           "        self.assertIn('a', f(5))\n        self.assertIn(f(6), list(range(20)))\n"
           "        self.assertIn(f(7), tuple(range(17)))\n        self.assertAlmostEqual(f(8), 1.5, msg=str(3))\n"
           "        self.assertCountEqual(f(9), ['x', 'y'], 'why')\n        self.assertCountEqual(('a',), f(10))\n"
           "        self.assertCountEqual(f(11), {'a'})\n        self.assertCountEqual(f(12), list(range(3)))\n"
           "        self.assertCountEqual(f(13), [])\n")
    held = [answers.answer_rule(e) for _, e, _, _ in answers.answer_holds(ast.parse(src))["Case::test_n"]]
    assert held == [("member", [1, 2]), (("almost", None, 0.1), 0.5), (("almost", 2, None), 2.5),
                    ("count", ["x", "y"]), ("count", ("a",))], held



# The rewrite itself (`probe_unit.unit_probes`, the first run's: the probe after the call), run by unittest.
OTHER_CASE = ('''import unittest\n\nfrom calc import Any, Latch, Money, Upper, Yes\n\n\nclass T(unittest.TestCase):
    def test_honest(self):
        self.assertIn(Money(900), (900, 950))
        self.assertIn('A', Upper(['a', 'b']))
        self.assertNotIn(Money(3), [1, 2])
        self.assertAlmostEqual(Money(200), 205, delta=10)
        self.assertAlmostEqual(0.1 + 0.2, 0.3)
        self.assertCountEqual(iter([Money(2), Money(1)]), [1, 2])
        self.assertCountEqual({'b': 1, 'a': 2}, 'ab')

    def test_any_in(self):
        self.assertIn(Any(), (900, 950))

    def test_yes(self):
        self.assertIn('three', Yes())

    def test_any_almost(self):
        self.assertAlmostEqual(Any(), 0.3, places=2)

    def test_any_count(self):
        self.assertCountEqual([Any(), Any()], ['a', 'b'])

    def test_latch(self):  # a latch passes the first run's probe (the second compares it with decoys first)
        self.assertIn(Latch(), [1, 2])


class Tolerant(unittest.TestCase):
    def assertIn(self, member, container, msg=None):  # the project's own: its rules are its own
        pass

    def test_own_assert_in(self):
        self.assertIn(Any(), (1, 2))
''')
OTHER_CALC = ("class Money:\n    def __init__(self, c):\n        self.c = c\n\n    def __eq__(self, other):\n"
              "        return self.c == (other.c if isinstance(other, Money) else other)\n\n    __hash__ = None\n\n"
              "    def __float__(self):\n        return float(self.c)\n\n    def __sub__(self, other):\n        return self.c - other\n\n\n"
              "class Upper:\n    def __init__(self, w):\n        self.w = [x.upper() for x in w]\n\n"
              "    def __contains__(self, x):\n        return x.upper() in self.w\n\n\n"
              "class Any:\n    def __eq__(self, other):\n        return True\n\n    __hash__ = None\n\n\n"
              "class Yes:\n    def __contains__(self, x):\n        return True\n\n\n"
              "class Latch:\n    v = None\n\n    def __eq__(self, other):\n        if self.v is None:\n            self.v = other\n"
              "        return self.v == other\n")


def test_unittests_other_comparisons_are_probed_after_the_call(tmp_path, monkeypatch):
    result, alarms = run_probed(tmp_path, monkeypatch, OTHER_CASE, OTHER_CALC)
    failed = sorted(t.id().rpartition(".")[2] for t, _ in result.failures)
    assert failed == ["test_any_almost", "test_any_count", "test_any_in", "test_yes"] and not result.errors, (result.failures, result.errors)
    assert sorted(a.split(" compared")[0] for a in alarms) == [f"an object of the class {c}" for c in ("Any", "Any", "Any", "Yes")], alarms


class _Quantity:  # no float, no `==` to a number: assertAlmostEqual passes it by its `__sub__`
    def __init__(self, value):
        self.value = value

    def __sub__(self, other):
        return self.value - other


class _Flat:  # no difference to anything: assertAlmostEqual passes it whatever the expected value
    def __sub__(self, other):
        return 0.0


@pytest.mark.parametrize("held, value, right", [
    ((None, None), _Quantity(0.1 + 0.2), True), ((3, None), _Quantity(0.3004), True), ((None, 0.5), _Quantity(0.7), True),
    ((None, None), _Quantity(0.31), False), ((None, None), _Flat(), False), ((3, None), _Flat(), False)])
def test_a_held_tolerance_judges_an_object_of_no_float_by_its_difference(held, value, right):
    """The second run's held assertAlmostEqual on an object of no float: each candidate within the tolerance by the
    object's `-` (it was compared by `==` alone: an honest quantity matched no candidate, blocked); an object whose
    difference is 0 to anything is within it of every candidate: not the expected value alone."""
    import random

    from donegate.hidden import answer_draw, answers

    expected = (answers.ANSWER_RULE, ("almost", *held), 0.3)
    blob, places = answer_draw.answer_ticket([(0, expected)], random.Random(5))
    got, _ = answers.answer_split(answers.answer_later([(0, value)], blob))
    verdict = answers.answer_judge(got, [(0, expected)], places)
    assert (verdict == "") is right, verdict


class _Any:  # equal to anything
    def __eq__(self, other):
        return True

    __hash__ = None


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("held, value, right", [((None, 0.5), _Flat(), False), ((None, 0.5), _Any(), False),
                                                ((0, None), _Any(), False), ((None, 0.5), 0.7, True),
                                                ((None, 0.5), _Quantity(0.1), True), ((0, None), _Quantity(0.6), True)])
def test_a_held_tolerance_wider_than_its_decoys_still_has_decoys(seed, held, value, right):
    """A tolerance (delta 0.5, places=0) wider than the decoys' spacing filtered every decoy out: an object equal to
    anything, or of no difference to anything, was the expected value alone (passed on main for most seeds)."""
    import random

    from donegate.hidden import answer_draw, answers

    expected = (answers.ANSWER_RULE, ("almost", *held), 0.3)
    blob, places = answer_draw.answer_ticket([(0, expected)], random.Random(seed))
    got, _ = answers.answer_split(answers.answer_later([(0, value)], blob) if not isinstance(value, float) else
                                  answers.answer_record(0, 118, json.dumps(answers.answer_encode(value)).encode()))
    verdict = answers.answer_judge(got, [(0, expected)], places)
    assert (verdict == "") is right, verdict
    assert len(json.loads(blob)["0"]) == answers.ANSWER_DECOYS + 1
