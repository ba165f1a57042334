"""A `testpaths` that names the product's own package (docs/own-suite.md, "The seal"): the seal laid its modules out
with the tests, and the sealed copies were what the tests imported, so every regression passed. Through the real
hook: tests inside the package (`testpaths = calc`, `calc/tests/`), and the package named for its doctests
(`testpaths = calc tests` with `--doctest-modules`). Each was seen passing on aa02c16 with the regression in."""

from __future__ import annotations

from tests.support import own_batch
from tests.support.repos import run_hook, sealed_project, stop_lines, stop_payload

CALC = 'def twice(n):\n    """The number doubled.\n\n    >>> twice(21)\n    42\n    """\n    return n + n\n'
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
KEPT = "import calc\n\n\ndef test_twice():\n    assert calc.twice(3) == 6\n"  # (passing at the seal)
CORE = "from pathlib import Path\n\n\ndef half(n):\n    return n // int((Path(__file__).parent / 'by.txt').read_text())\n"
INSIDE = {"calc/__init__.py": CALC, "calc/core.py": CORE, "calc/by.txt": "2\n", "calc/tests/__init__.py": "",
          "calc/tests/helpers.py": "def four():\n    return 4\n", "pytest.ini": "[pytest]\ntestpaths = calc\n",
          "calc/tests/test_calc.py": ("from calc import twice\nfrom calc.core import half\n\nfrom .helpers import four\n\n\n"
                                      "def test_twice():\n    assert twice(2) == four()\n\n\ndef test_half():\n"
                                      "    assert half(9) == 4\n")}
NAMED = {"calc/__init__.py": CALC, "pytest.ini": "[pytest]\ntestpaths = calc tests\naddopts = --doctest-modules\n",
         "tests/test_calc.py": "import calc\n\n\ndef test_twice():\n    assert calc.twice(2) == 4\n"}


def _own(kit_home) -> dict:
    return stop_lines(kit_home)[-1]["gates"]["own"]


def test_tests_inside_the_products_package_test_the_agents_code(tmp_path_factory, kit_home):
    repo = sealed_project(tmp_path_factory, kit_home, "own-inside", INSIDE, KEPT, 2)
    (repo / "calc" / "by.txt").write_text("3\n")  # the product's data alone (was: passed, read as the suite's file)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calc/tests/test_calc.py::test_half" in res.stderr, res.stderr
    (repo / "calc" / "by.txt").write_text("2\n")
    (repo / "calc" / "__init__.py").write_text(CALC.replace("n + n", "2 * n"))  # the look-alike: the same behaviour
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "calc" / "core.py").write_text("def half(n):\n    return 0\n")  # was: passed (the sealed copy ran)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calc/tests/test_calc.py::test_half" in res.stderr, res.stderr
    assert [f["id"] for f in _own(kit_home)["failing"]] == ["calc/tests/test_calc.py::test_half"], _own(kit_home)


def test_a_package_named_for_its_doctests_is_the_agents_code(tmp_path_factory, kit_home):
    repo = sealed_project(tmp_path_factory, kit_home, "own-named-doctests", NAMED, HIDDEN, 2)
    (repo / "calc" / "__init__.py").write_text(CALC.replace("return n + n", "return 2 * n") + MUL)  # the look-alike
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "calc" / "__init__.py").write_text(CALC.replace("return n + n", "return 0") + MUL)  # was: passed
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    assert sorted(f["id"] for f in _own(kit_home)["failing"]) == ["calc/__init__.py::calc.twice",
                                                                   "tests/test_calc.py::test_twice"], _own(kit_home)


# toolz 1.1.0: `testpaths = toolz`, its tests in `toolz/tests/` and `toolz/sandbox/tests/`. Laid out without the product's
# `__init__.py` files, both test packages were pytest's top-level `tests`: the second's modules were looked for in
# the first (`No module named 'tests.test_compatibility'`), and the seal refused the suite its own pytest passes.
NESTED = {"calc/__init__.py": "", "calc/sub/__init__.py": "", "calc/sub/core.py": "def half(n):\n    return n // 2\n",
          "calc/core.py": "def twice(n):\n    return n + n\n", "pytest.ini": "[pytest]\ntestpaths = calc\n",
          "calc/sub/tests/__init__.py": "", "calc/tests/__init__.py": "",
          "calc/sub/tests/test_half.py": "from calc.sub.core import half\n\n\ndef test_half():\n    assert half(9) == 4\n",
          "calc/tests/test_twice.py": "from calc.core import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"}


# Two of the product's topmost packages each holding a `tests` package (`testpaths = tests calc util`, `calc/tests/`
# and `util/tests/`): both were pytest's top-level `tests` in the laid-out suite, and the seal refused the suite its
# pytest passes (`No module named 'tests.test_third'`; the known-open workaround was `--own-tests`). A top-level test
# collected first imports the product (the laid-out root conftest.py puts the shims first), and a sealed test imports
# the product relatively (`from ..core import third`).
CLASH = {"calc/__init__.py": "", "calc/core.py": "def twice(n):\n    return n + n\n", "calc/tests/__init__.py": "",
         "calc/tests/test_twice.py": "from calc.core import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n",
         "util/__init__.py": "", "util/core.py": "def third(n):\n    return n // 3\n", "util/tests/__init__.py": "",
         "util/tests/test_third.py": "from ..core import third\n\n\ndef test_third():\n    assert third(9) == 3\n",
         "tests/test_first.py": "import util.core\n\n\ndef test_first():\n    assert util.core.third(3) == 1\n",
         "pytest.ini": "[pytest]\ntestpaths = tests calc util\n"}


# Both shapes in one project (`testpaths = tests calc util`: calc/tests and calc/sub/tests, calc/tests and
# util/tests), sealed once, each case's look-alike in one pooled stop and its regression in another
# (`own_batch.shared_stop`): each case changes a module of its own and reads its own test's finding.
BOTH = {**NESTED, **CLASH}
HALF, THIRD = "calc/sub/tests/test_half.py::test_half", "util/tests/test_third.py::test_third"


def _both(tmp_path_factory, kit_home, name: str) -> dict:
    def edit(repo):
        (repo / "calc" / "__init__.py").write_text(MUL)
        test = repo / "util" / "tests" / "test_third.py"
        if name == "look-alikes":  # the same behaviour; a test added beside the others
            (repo / "calc" / "sub" / "core.py").write_text("def half(n):\n    return n >> 1\n")
            test.write_text(test.read_text() + "\n\ndef test_third_of_six():\n    assert third(6) == 2\n")
        else:
            (repo / "calc" / "sub" / "core.py").write_text("def half(n):\n    return 0\n")
            (repo / "util" / "core.py").write_text("def third(n):\n    return n // 3 if n < 9 else 0\n")

    # was: refused at the seal, either shape
    return own_batch.shared_stop(tmp_path_factory, kit_home, f"own-packages-{name}",
                                 lambda home: sealed_project(tmp_path_factory, home, "own-packages", BOTH, HIDDEN, 4), edit)


def _check(tmp_path_factory, kit_home, test: str) -> None:
    res = _both(tmp_path_factory, kit_home, "look-alikes")
    assert res["returncode"] == 0, res["stderr"]
    res = _both(tmp_path_factory, kit_home, "regressions")
    assert res["returncode"] == 2 and test in res["stderr"], res["stderr"]
    failing = [f["id"] for f in res["own"]["failing"]]
    assert test in failing and set(failing) <= {HALF, THIRD}, res["own"]  # (the other case's test, and no other)


def test_test_packages_of_the_same_name_in_two_packages_of_the_product_are_both_kept(tmp_path_factory, kit_home):
    _check(tmp_path_factory, kit_home, HALF)


def test_test_packages_of_one_name_in_two_topmost_packages_of_the_product_are_both_kept(tmp_path_factory, kit_home):
    _check(tmp_path_factory, kit_home, THIRD)


# simplejson 4.3.0: no pytest configuration, its tests in `simplejson/tests/` (unittest's TestCase), which its
# `python -m pytest` collects from the project's folder. The seal looked for test folders at the top only: "the
# project's own tests: not sealed", so a test added beside the others blocked ("protected files were changed") and a
# regression they saw passed.
UNCONFIGURED = {"calc/__init__.py": "def twice(n):\n    return n + n\n", "calc/tests/__init__.py": "",
                "calc/tests/test_calc.py": ("import unittest\n\nimport calc\n\n\nclass TestCalc(unittest.TestCase):\n"
                                            "    def test_twice(self):\n        self.assertEqual(calc.twice(2), 4)\n")}


def test_test_folders_inside_the_products_package_without_a_configuration_are_sealed(tmp_path_factory, kit_home):
    repo = sealed_project(tmp_path_factory, kit_home, "own-unconfigured", UNCONFIGURED, HIDDEN, 1)  # was: none kept
    (repo / "calc" / "__init__.py").write_text(UNCONFIGURED["calc/__init__.py"] + MUL)
    test = repo / "calc" / "tests" / "test_calc.py"
    test.write_text(test.read_text() + "\n    def test_mul(self):\n        self.assertEqual(calc.mul(2, 5), 10)\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # the look-alike: a test added beside the others (was: protected files)
    (repo / "calc" / "__init__.py").write_text("def twice(n):\n    return n * 3\n" + MUL)
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2, res.stderr
    assert [f["id"] for f in _own(kit_home)["failing"]] == ["calc/tests/test_calc.py::TestCalc::test_twice"], _own(kit_home)
