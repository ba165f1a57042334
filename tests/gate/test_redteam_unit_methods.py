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

from tests.support.repos import pooled_files, run_hook, stop_lines, stop_payload, write_config
from tests.support.unit_products import ATTACKS, HONEST, PRICE_BUG

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


def _stop(tmp_path_factory, kit_home, name: str, body: str, bug: str, product: str, session: str):
    write_config(kit_home, "scan: off\n")  # the runs are what is tested
    repo = pooled_files(tmp_path_factory, kit_home, {"calc.py": bug}, name, body)
    (repo / "calc.py").write_text(product)
    res = run_hook(stop_payload(repo, session=session))
    return res, stop_lines(kit_home)[-1]["gates"]["acceptance"]


@OLD_ALIASES
@pytest.mark.parametrize("attack", list(ALIAS_ATTACKS))
def test_a_product_without_the_answer_through_unittests_old_aliases_disagrees(tmp_path_factory, kit_home, attack):
    res, accept = _stop(tmp_path_factory, kit_home, "test_unit_aliases.py", ALIASES, PRICE_BUG, ALIAS_ATTACKS[attack], attack)
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert "900" not in res.stderr and "three units" not in res.stderr
    assert accept["tamper"]["rule"] == "disagree" and "held by the supervisor" in accept["tamper"]["what"], json.dumps(accept)
    assert accept["second"]["disagree"] and set(accept["second"]["disagree"]) <= set(ALIAS_IDS), accept["second"]


@OLD_ALIASES
@pytest.mark.parametrize("product", list(ALIAS_HONEST))
def test_honest_results_pass_unittests_old_aliases_in_both_runs(tmp_path_factory, kit_home, product):
    res, accept = _stop(tmp_path_factory, kit_home, "test_unit_aliases.py", ALIASES, PRICE_BUG, ALIAS_HONEST[product], product)
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, accept)
    assert accept["second"]["checked"] == 4 and not accept["second"]["unsupported"], accept["second"]


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
