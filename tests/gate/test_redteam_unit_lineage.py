"""Red team of issue 45: a unittest TestCase's tests inherited through its bases, through the real Stop hook (real runs,
real repos, the scan off: the runs are what is tested).

Which tests a class inherits from the file's own classes was written three times (the plan, the tests' reasons not
to double-check, the held asserts), and the copies disagreed: a reason on a grandparent's test was not passed down,
so a test that reads its own file was double-checked in a grandchild and failed there however right the product
(an honest product was blocked on main). Now one walk, `bare_plan.lineage`.
"""

from __future__ import annotations

import json

from tests.support.unit_products import stop_product

# the grandparent's test reads its own file (a held assert is out of the second run's copy: not double-checked)
GRANDPARENT = ("import unittest\n\nimport calc\n\n\nclass TestBase(unittest.TestCase):\n    def test_own_file(self):\n"
               "        with open(__file__) as f:\n            self.assertIn('assertEqual(calc.half(4), 2)', f.read())\n"
               "        self.assertEqual(calc.half(4), 2)\n\n\nclass TestMid(TestBase):\n    def test_mid(self):\n"
               "        self.assertEqual(calc.half(6), 3)\n\n\nclass TestLeaf(TestMid):\n    def test_leaf(self):\n"
               "        self.assertEqual(calc.half(8), 4)\n")
OWN_FILE = [f"test_lineage.py::{c}::test_own_file" for c in ("TestBase", "TestLeaf", "TestMid")]
BUG = "def half(n):\n    return n\n"
RIGHT = "def half(n):\n    return n // 2\n"
# unittest's IsolatedAsyncioTestCase: its async set-up and cleanup, an async test and a plain one
ASYNC = ("import asyncio\nimport unittest\n\nimport calc\n\n\nclass HalfAsyncTests(unittest.IsolatedAsyncioTestCase):\n"
         "    async def asyncSetUp(self):\n        self.n = await asyncio.sleep(0, result=8)\n"
         "        self.addAsyncCleanup(asyncio.sleep, 0)\n\n    async def test_half(self):\n"
         "        self.assertEqual(await calc.ahalf(self.n), 4)\n\n    def test_plain(self):\n"
         "        self.assertEqual(calc.half(6), 3)\n")
ASYNC_IDS = [f"test_async_case.py::HalfAsyncTests::{t}" for t in ("test_half", "test_plain")]
ASYNC_BUG = BUG + "\n\nasync def ahalf(n):\n    return n\n"
ASYNC_RIGHT = RIGHT + "\n\nasync def ahalf(n):\n    return n // 2\n"
ASYNC_UNDER_PYTEST = ("import sys\n\n\ndef half(n):\n    return n // 2 if 'pytest' in sys.modules else n\n\n\n"
                      "async def ahalf(n):\n    return half(n)\n")


def test_a_grandparents_reason_not_to_double_check_a_test_is_its_grandchilds(tmp_path_factory, kit_home):
    res, accept = stop_product(tmp_path_factory, kit_home, "test_lineage.py", GRANDPARENT, BUG, RIGHT, "honest")
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, json.dumps(accept))
    assert sorted(accept["second"]["unsupported"]) == OWN_FILE, accept["second"]
    assert accept["second"]["checked"] == 3, accept["second"]  # the other tests, the grandchild's own too


def test_a_product_right_only_under_pytest_for_an_isolated_asyncio_test_case_disagrees(tmp_path_factory, kit_home):
    res, accept = stop_product(tmp_path_factory, kit_home, "test_async_case.py", ASYNC, ASYNC_BUG, ASYNC_UNDER_PYTEST, "attack")
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert accept["tamper"]["rule"] == "disagree", json.dumps(accept)
    assert sorted(accept["second"]["disagree"]) == ASYNC_IDS, accept["second"]


def test_an_honest_product_passes_an_isolated_asyncio_test_case_in_both_runs(tmp_path_factory, kit_home):
    res, accept = stop_product(tmp_path_factory, kit_home, "test_async_case.py", ASYNC, ASYNC_BUG, ASYNC_RIGHT, "honest")
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, json.dumps(accept))
    assert accept["second"]["checked"] == 2 and not accept["second"]["unsupported"], accept["second"]


def test_one_walk_of_a_class_lineage():
    """The plan, the reasons and the held asserts read a class's tests from the same classes, in the same order."""
    import ast

    from donegate.hidden import answers, bare_itself, bare_plan

    tree = ast.parse(GRANDPARENT)
    classes = bare_plan.own_classes(tree)
    assert [c.name for c in bare_plan.lineage(classes["TestLeaf"], classes)[0]] == ["TestLeaf", "TestMid", "TestBase"]
    assert {(n.name, b.name, m.name) for n, b, m in bare_plan.inherited(classes)} == {
        ("TestMid", "TestBase", "test_own_file"), ("TestLeaf", "TestBase", "test_own_file"), ("TestLeaf", "TestMid", "test_mid")}
    assert sorted(bare_itself.names_itself(GRANDPARENT, "test_lineage.py")) == [t.partition("::")[2] for t in OWN_FILE]
    held = answers.answer_holds(tree)
    assert held["TestLeaf::test_own_file"] == held["TestBase::test_own_file"] and held["TestLeaf::test_mid"] == held["TestMid::test_mid"]
    assert sorted(bare_plan.plan(GRANDPARENT)[1]) == sorted(f"{c}::{t}" for c, t in [
        ("TestBase", "test_own_file"), ("TestMid", "test_own_file"), ("TestMid", "test_mid"), ("TestLeaf", "test_own_file"),
        ("TestLeaf", "test_mid"), ("TestLeaf", "test_leaf")])
