"""Red team of issue 45: unittest shapes the second run left to the first, through the real Stop hook (real runs, one
pooled seal).

A test the second harness does not serve is not double-checked, so a product right only under pytest passed every stop
for exactly those tests (each attack below passed a stop on main): a TestCase's test defined on a base class of the
file's own (a mixin of tests, a base TestCase whose subclass sets other inputs), and every test of a file with `setUpModule` /
`tearDownModule` (or pytest's `setup_module`). The honest look-alike passes with every test double-checked.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.repos import pooled_hidden, run_hook, stop_lines, stop_payload, write_config

INHERITED = ("import unittest\n\nimport calc\n\n\nclass HalfChecks:\n    def test_half_even(self):\n"
             "        self.assertEqual(calc.half(8), 4)\n\n\nclass HalfTests(HalfChecks, unittest.TestCase):\n    pass\n\n\n"
             "class HalfOfFour(unittest.TestCase):\n    n, half = 4, 2\n\n    def test_half(self):\n"
             "        self.assertEqual(calc.half(self.n), self.half)\n\n\nclass HalfOfTen(HalfOfFour):\n    n, half = 10, 5\n")
MODULE_SETUP = ("import unittest\n\nimport calc\n\nSTATE = {}\n\n\ndef setUpModule():\n    STATE['ten'] = calc.half(10)\n\n\n"
                "def tearDownModule():\n    STATE.clear()\n\n\ndef test_module_state():\n    assert STATE['ten'] == 5\n\n\n"
                "class HalfState(unittest.TestCase):\n    def test_state(self):\n        self.assertEqual(STATE.get('ten'), 5)\n")
XUNIT = ("import calc\n\nSEEN = []\n\n\ndef setup_module(module):\n    module.SEEN.append(calc.half(6))\n\n\n"
         "def teardown_module():\n    SEEN.clear()\n\n\ndef test_seen():\n    assert SEEN == [3]\n")
SHAPES = {"test_inherited.py": INHERITED, "test_module_setup.py": MODULE_SETUP, "test_xunit_module.py": XUNIT}
SERVED = ["test_inherited.py::HalfOfTen::test_half", "test_inherited.py::HalfTests::test_half_even",
          "test_module_setup.py::HalfState::test_state", "test_module_setup.py::test_module_state",
          "test_xunit_module.py::test_seen"]
BUG = "def half(n):\n    return n\n"
RIGHT = "def half(n):\n    return n // 2\n"
# right only under pytest, on the inputs only those tests use (HalfOfFour's own test, served on main, is right in both)
UNDER_PYTEST = "import sys\n\n\ndef half(n):\n    return n // 2 if n == 4 or 'pytest' in sys.modules else n\n"


def _sealed(tmp_path_factory, kit_home) -> Path:
    write_config(kit_home, "scan: off\n")  # the runs are what is tested
    return pooled_hidden(tmp_path_factory, kit_home, "red-unit-shapes", {"calc.py": BUG}, SHAPES)


def _stop(repo: Path, kit_home: Path, product: str, session: str):
    (repo / "calc.py").write_text(product)
    res = run_hook(stop_payload(repo, session=session))
    return res, stop_lines(kit_home)[-1]["gates"]["acceptance"]


def test_a_product_right_only_under_pytest_for_inherited_and_module_set_up_tests_disagrees(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, UNDER_PYTEST, "attack")
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert accept["tamper"]["rule"] == "disagree", accept
    assert sorted(accept["second"]["disagree"]) == SERVED, accept["second"]


def test_an_honest_product_passes_inherited_and_module_set_up_tests_in_both_runs(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, RIGHT, "honest")
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, accept)
    assert accept["second"]["checked"] == 6 and not accept["second"]["unsupported"], accept["second"]
