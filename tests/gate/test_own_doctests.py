"""Doctests in the product's own modules (docs/own-suite.md, "Doctests of the product's modules"): a project whose
pytest configuration has `addopts = --doctest-modules` and no `testpaths` (inflect 7.4.0, every project of jaraco's
layout) collects the examples of every module's docstrings. The seal kept only the test folders: a regression only
those examples saw passed, and an example deleted or changed to what the code returns was never named. Through the
real hook, one pooled seal: a top-level module and a package's module, each with a doctest, and a plain test file."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import above_200
from tests.support.repos import KIT, run_hook, sealed_project, stop_lines, stop_payload

TWICE = ('def twice(n):\n    """The number doubled.\n\n    >>> twice(21)\n    42\n    >>> twice(0)\n    0\n    """\n'
         '    return add(n, n)\n')
CALC = "def add(a, b):\n    return a + b\n\n\n" + TWICE
PLURAL = ("def plural(word):\n    \"\"\"The word's plural.\n\n    >>> plural('cat')\n    'cats'\n    \"\"\"\n"
          "    return word + 's'\n")
FILES = {"calc.py": CALC, "words/__init__.py": "", "words/plural.py": PLURAL,
         "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
         "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n",
         # a script that does not import in the runs' walls: its doctest is not kept, the rest is sealed
         "scripts/fetch.py": 'import not_installed_here\n\n\ndef one():\n    """>>> one()\n    1\n    """\n    return 1\n'}
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
MUL = '\n\ndef mul(a, b):\n    """The product.\n\n    >>> mul(2, 3)\n    6\n    """\n    return a * b\n'
BROKEN = "    return add(n, n) if n != 21 else 0\n"


def _project(tmp_path_factory, kit_home):
    # was: "the project's own tests: 1 of 1 pass" (the test folder only)
    return sealed_project(tmp_path_factory, kit_home, "own-doctested", FILES, HIDDEN, 3)


def _own(kit_home) -> dict:
    return stop_lines(kit_home)[-1]["gates"]["own"]


def test_the_seal_keeps_the_modules_doctests_as_they_are(tmp_path_factory, kit_home):
    repo = _project(tmp_path_factory, kit_home)
    shown = subprocess.run([sys.executable, "-m", "donegate", "status", str(repo)], capture_output=True, text=True,
                           cwd=KIT, timeout=120).stdout
    assert "with the doctests of 2 of the product's modules (calc.py, words/plural.py)" in shown, shown
    (pack,) = [json.loads(p.read_text()) for p in kit_home.rglob("own-suite.json")]
    assert sorted(pack["baseline"]["passing"]) == ["calc.py::calc.twice", "tests/test_calc.py::test_add",
                                                   "words/plural.py::words.plural.plural"], pack["baseline"]
    assert pack["doctests"]["words/plural.py"]["module"] == "words.plural", pack["doctests"]
    assert pack["doctests"]["calc.py"]["tests"]["calc.twice"]["text"] == TWICE.split('"""')[1]
    assert "scripts/fetch.py" not in pack["doctests"] and "calc.py" not in pack["files"], pack["doctests"]


def test_a_regression_only_a_modules_doctest_sees_blocks(tmp_path_factory, kit_home):
    """`twice(21)` broken: only the example in calc.py's docstring sees it. Was: passed."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC.replace("    return add(n, n)\n", BROKEN) + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calc.py::calc.twice" in res.stderr, res.stderr
    assert ">>> twice(21)\nExpected:\n    42\nGot:\n    0" in res.stderr, res.stderr
    own = _own(kit_home)
    assert [(f["id"], f["where"]) for f in own["failing"]] == [("calc.py::calc.twice", "calc.py:5")], own
    assert own["weakened"] == [], own


def test_the_doctest_runs_as_sealed_whatever_the_docstring_says_now(tmp_path_factory, kit_home):
    """The regression with the docstring's expected output changed to what the code returns: the sealed example
    still runs (it blocks) and the change is named. Was: passed (pytest ran the docstring as it is now)."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC.replace("    return add(n, n)\n", BROKEN).replace("    42\n", "    0\n") + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calc.py::calc.twice" in res.stderr, res.stderr
    assert "calc.py::calc.twice: its expected output 42 was changed to 0, what the code returns now " \
           "[expected-to-actual]" in res.stderr, res.stderr
    own = _own(kit_home)
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [("calc.py::calc.twice", "expected-to-actual")], own


def test_a_doctests_examples_deleted_or_skipped_are_named(tmp_path_factory, kit_home):
    """The examples of `plural` deleted, one of `twice` given `+SKIP`, the other `+ELLIPSIS` and `4...` (the code
    unchanged, so the sealed examples still pass): each named. Was: passed, nothing named."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "words" / "plural.py").write_text(PLURAL.replace("\n    >>> plural('cat')\n    'cats'\n", ""))
    (repo / "calc.py").write_text(CALC.replace(">>> twice(0)", ">>> twice(0)  # doctest: +SKIP").replace(
        ">>> twice(21)\n    42", ">>> twice(21)  # doctest: +ELLIPSIS\n    4...") + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    found = sorted((w["test"], w["rule"]) for w in _own(kit_home)["weakened"])
    assert found == [("calc.py::calc.twice", "assert-loosened"), ("calc.py::calc.twice", "skipped"),
                     ("words/plural.py::words.plural.plural", "deleted")], found
    assert "a test of the project was weakened: words/plural.py::words.plural.plural" in res.stderr, res.stderr


def test_honest_work_on_documented_modules_passes(tmp_path_factory, kit_home):
    """The look-alikes: a new function with a doctest of its own, a docstring reworded around unchanged examples, an
    example added, the module's code rewritten to the same behaviour."""
    repo = _project(tmp_path_factory, kit_home)
    calc = CALC.replace("The number doubled.", "Twice the number, as an int.").replace(
        "    >>> twice(0)\n    0\n", "    >>> twice(0)\n    0\n    >>> twice(-1)\n    -2\n").replace("add(n, n)", "2 * n")
    (repo / "calc.py").write_text(calc + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    own = _own(kit_home)
    assert own["failing"] == [] and own["weakened"] == [] and own["ran_now"] == ["calc.py"], own  # (its doctests, now)


def test_a_change_to_one_module_runs_that_modules_doctests_only(tmp_path_factory, kit_home):
    """Cost follows the change (`seal.reach`): the seal's map records what each doctest reached, as for any test."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "words" / "plural.py").write_text(PLURAL.replace("word + 's'", "word + 'es'"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "words/plural.py::words.plural.plural" in res.stderr, res.stderr
    own = _own(kit_home)
    assert own["ran_sealed"] == ["words/plural.py"] and len(own["failing"]) == 1, own


def test_a_suite_of_more_than_200_tests_with_doctests_is_kept(tmp_path_factory, kit_home):
    """inflect 7.4.0 (230 tests): the tripwires read each test's function as `_obj`, which a doctest item lacks, and a
    run of more than 200 tests holding one read as every test replaced: "not kept: they trip the run's tripwires at the
    seal (... the test function tests/test_an.py::test_an was replaced ...)". A doctest in a test file did that on main.
    The project (tests/support/above_200.py, pooled with test_real_projects.py's conftest items) is sealed with all its
    own tests kept, the doctests of calc.py and of tests/test_many.py among them; only calc.twice's example sees this."""
    res = above_200.broken(tmp_path_factory, kit_home)  # (test_real_projects.py's stop too: `add` broken where b is 2,
    # which only the conftest's items see)
    assert res["returncode"] == 2 and "calc.py::calc.twice" in res["stderr"] and "tamper" not in res["stderr"], \
        res["stderr"]
    assert above_200.failing(res, "calc.py::") == ["calc.py::calc.twice"], res["own"]


def test_a_doctest_the_agent_added_runs_as_its_own_test(tmp_path_factory, kit_home):
    """A new function with a doctest its code fails (`mul(2, 3)` said to give 5): the module's doctests as they are
    now run as the agent's own tests, as the project's pytest runs them. Was: passed (only the sealed ones ran)."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL.replace("    6\n", "    5\n"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "your own test calc.py::calc.mul (a test you added or changed) fails" in res.stderr, \
        res.stderr
    own = _own(kit_home)
    assert own["ran_now"] == ["calc.py"] and own["failing"] == [] and own["weakened"] == [], own
