"""Subtests (unittest's `self.subTest`, pytest 9's `subtests` fixture), through the real hook, confined.

Found on a real project (more-itertools 10.5.0, 2,332 subtests under pytest 9.2): every subtest is a `call` report of
its test, and the result channel took the second as "duplicate or conflicting results", so the project's own suite
was refused at the seal ("they trip the run's tripwires") and a hidden test with subtests would block every stop as
tampering. And a unittest test (`TestCase`) read as "replaced" in every run (pytest binds its function anew at each
setup), so no unittest-style suite of a project's could be sealed either. A subtest's report now travels as one (`sub`, its label), only ever adding a failure to its test: a subtest
that fails fails its test, with its label and its assertion, as pytest's own exit status counts it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.repos import KIT, make_repo, run_hook, sealed_copy, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n"
OWN = ("import unittest\n\nfrom calc import add\n\n\nclass AddTests(unittest.TestCase):\n"
       "    def test_add(self):\n        for a, b, total in [(1, 2, 3), (2, 3, 5), (-4, 4, 0)]:\n"
       "            with self.subTest(a=a, b=b):\n                self.assertEqual(add(a, b), total)\n")
HIDDEN = ("import unittest\n\nimport calc\n\n\nclass MulTests(unittest.TestCase):\n    def test_by_one(self):\n"
          "        self.assertEqual(calc.mul(5, 1), 5)\n\n\ndef test_mul(subtests):\n    for a, b in [(2, 3), (0, 7), (3, 3)]:\n"
          "        with subtests.test(msg='row', a=a, b=b):\n            assert calc.mul(a, b) == a * b\n")
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
NEW_PYTEST = pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="the subtests fixture is pytest 9's")


def _sealed(tmp_path_factory, kit_home):
    def build(repo, home):
        make_repo(repo, {"calc.py": CALC, "tests/test_calc.py": OWN})
        hidden = repo.parent / "hidden" / "test_mul.py"
        hidden.parent.mkdir()
        hidden.write_text(HIDDEN)
        res = subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(hidden), "--request", "add mul"],
                             capture_output=True, text=True, cwd=KIT, timeout=180, env={**os.environ, "DONEGATE_HOME": str(home)})
        assert res.returncode == 0 and "the project's own tests: 1 of 1 pass" in res.stdout and "2 new requirements failing" in res.stdout, res.stdout + res.stderr

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "subtests", build, kit_home)


@NEW_PYTEST
@pytest.mark.own_suite
def test_subtests_pass_and_a_failing_subtest_blocks_with_its_label(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # was: "duplicate or conflicting results for ...test_mul (call)"

    # wrong for one row only: only a subtest sees it
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b if a else 1\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "1 of 2 acceptance tests fail" in res.stderr and "test_mul" in res.stderr and "[row] (a=0, b=7)" in res.stderr, res.stderr
    assert "assert 1 == (0 * 7)" in res.stderr and "tamper" not in res.stderr, res.stderr
    line = stop_lines(kit_home)[-1]
    assert line["verdict"] == "block" and not line["gates"]["acceptance"].get("tamper"), line["gates"]["acceptance"]


@pytest.mark.own_suite
def test_a_regression_only_a_unittest_subtest_of_the_projects_sees_blocks(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b if a >= 0 else b - a\n" + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    assert "tests/test_calc.py::AddTests::test_add" in res.stderr and "(a=-4, b=4)" in res.stderr, res.stderr
    assert "8 != 0" in res.stderr, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert [f["id"] for f in own["failing"]] == ["tests/test_calc.py::AddTests::test_add"], own
