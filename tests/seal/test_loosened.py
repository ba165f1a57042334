"""What a test checks, by its syntax (issue 44, item 4; `donegate.seal.loosened`): each weakening named, each beside an
honest look-alike (an edit that keeps or strengthens what the test checks) that is no finding."""

from __future__ import annotations

import pytest

from donegate.gate import own_expected as expected
from donegate.seal import conftest_hooks, coverage_files, excluded, loosened, normalizing, scripts

BASE = '''import pytest
from calc import add, div


def test_add():
    assert add(2, 3) == 5
    assert add(0, 0) == 0


@pytest.mark.parametrize("a, b, want", [(1, 1, 2), (2, 2, 4), (3, 3, 6)])
def test_cases(a, b, want):
    assert add(a, b) == want


def test_div():
    with pytest.raises(ZeroDivisionError):
        div(1, 0)


def test_near():
    assert div(1, 3) == pytest.approx(0.3333)
'''
PASSING = {"test_t.py::test_add", "test_t.py::test_cases[1-1-2]", "test_t.py::test_div", "test_t.py::test_near"}

ATTACKS = {
    "deleted": BASE.replace("def test_add():", "def helper_add():"),
    "skipped": BASE.replace("def test_add():", "@pytest.mark.skip(reason='later')\ndef test_add():"),
    "skip-call": BASE.replace("def test_add():\n", "def test_add():\n    pytest.skip('later')\n"),
    "importorskip": BASE.replace("def test_add():\n", "def test_add():\n    pytest.importorskip('nothere')\n"),
    "xfail": BASE.replace("def test_add():", "@pytest.mark.xfail\ndef test_add():"),
    "module-pytestmark": BASE.replace("from calc import add, div\n", "from calc import add, div\n\npytestmark = pytest.mark.skip\n"),
    "assert-removed": BASE.replace("    assert add(0, 0) == 0\n", ""),
    "assert-loosened": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3)"),
    "tautology": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == add(2, 3)"),
    "constant-compare": BASE.replace("assert add(2, 3) == 5", "assert 5 == 5"),
    "tautology-by-name": BASE.replace("    assert add(2, 3) == 5\n", "    want = add(2, 3)\n    assert add(2, 3) == want\n"),
    "raises-removed": BASE.replace("    with pytest.raises(ZeroDivisionError):\n        div(1, 0)\n",
                                   "    try:\n        div(1, 0)\n    except Exception:\n        pass\n"),
    "in-instead-of-eq": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) in (5, -1)"),
    "fewer-cases": BASE.replace(", (3, 3, 6)]", "]"),
    "wider-approx": BASE.replace("pytest.approx(0.3333)", "pytest.approx(0.3333, abs=1)"),
    "raises-broadened": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(Exception)"),
    "raises-to-a-base": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(ArithmeticError)"),
    "raises-gained-a-class": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises((ZeroDivisionError, TypeError))"),
}
HONEST = {
    "unchanged": BASE,
    "assert-added": BASE.replace("    assert add(0, 0) == 0\n", "    assert add(0, 0) == 0\n    assert add(-1, 1) == 0\n"),
    "case-added": BASE.replace(", (3, 3, 6)]", ", (3, 3, 6), (0, 5, 5)]"),
    "test-added": BASE + "\n\ndef test_mul():\n    assert add(2, 2) == 4\n",
    "rewritten-same-strength": BASE.replace("assert add(2, 3) == 5", "assert add(3, 2) == 5"),
    "narrower-raises": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(ZeroDivisionError, match='division')"),
    "helper-renamed": BASE.replace("from calc import add, div", "from calc import add, div\nfrom calc import add as plus"),
    "not-equal-check-added": BASE.replace("    assert add(0, 0) == 0\n", "    assert add(0, 0) == 0\n    assert add(2, 3) != -1\n"),
    "truthiness-check-added": BASE.replace("    assert add(0, 0) == 0\n", "    assert add(0, 0) == 0\n    assert add(1, 1)\n"),
    "narrower-approx": BASE.replace("pytest.approx(0.3333)", "pytest.approx(0.3333, rel=1e-9)"),
    "expected-by-name": BASE.replace("    assert add(2, 3) == 5\n", "    want = 5\n    assert add(2, 3) == want\n"),
    "commutes": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == add(3, 2)"),
    "chained": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == add(3, 2) == 5"),
    "mark-added": BASE.replace("def test_add():", "@pytest.mark.slow\ndef test_add():"),
    "raises-another-class": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(ValueError)"),
}
SEALED_TEST = BASE.split("def test_add():")[1].split("\n\n\n")[0]


@pytest.mark.parametrize("name", ATTACKS)
def test_each_weakening_is_named(name):
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": ATTACKS[name]}, PASSING)
    rule = {"skip-call": "skipped", "importorskip": "skipped", "tautology": "assert-loosened", "tautology-by-name": "assert-loosened", "constant-compare": "assert-loosened",
            "raises-removed": "assert-removed", "xfail": "skipped", "module-pytestmark": "skipped", "in-instead-of-eq": "assert-loosened",
            "wider-approx": "assert-loosened", "raises-to-a-base": "raises-broadened",
            "raises-gained-a-class": "raises-broadened"}.get(name, name)
    assert rule in {f["rule"] for f in found}, (name, found)
    assert all(f["test"].startswith("test_t.py::") for f in found)


TOLERANT = BASE.replace("pytest.approx(0.3333)", "pytest.approx(0.3333, rel=1e-3)")


@pytest.mark.parametrize("now, named", [("rel=0.1", True), ("abs=1", True), ("rel=1e-3, abs=1e-3", True),
                                        ("rel=1e-5", False), ("rel=1e-4, abs=1e-13", False),
                                        ("rel=1e-3, abs=1e-9", False)])
def test_an_approx_tolerance_made_wider_is_named_and_narrower_is_not(now, named):
    """Was: any change of a given tolerance was named, a narrower one too. The tolerance is taken at the expected
    value (RULES 6): `abs=1e-9` beside `rel=1e-3` takes nothing more at 0.3333 (pytest takes the larger)."""
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": TOLERANT}}),
                              {"test_t.py": TOLERANT.replace("rel=1e-3)", now + ")")}, PASSING)
    assert [f["rule"] for f in found] == (["assert-loosened"] if named else []), (now, found)


@pytest.mark.parametrize("name", HONEST)
def test_an_honest_edit_is_no_finding(name):
    assert loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": HONEST[name]}, PASSING) == []


def test_a_test_that_failed_at_the_seal_is_not_counted():
    assert loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": ATTACKS["deleted"]}, PASSING - {"test_t.py::test_add"}) == []


UNIT = """import unittest
from calc import add, div


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
        self.assertEqual(add(0, 0), 0)

    def test_div(self):
        with self.assertRaises(ZeroDivisionError):
            div(1, 0)

    def test_near(self):
        self.assertAlmostEqual(div(1, 3), 0.3333, places=4)
"""
UNIT_PASSING = {"test_u.py::TestCalc::test_add", "test_u.py::TestCalc::test_div", "test_u.py::TestCalc::test_near"}


@pytest.mark.parametrize("now, rule", [
    (UNIT.replace("        self.assertEqual(add(0, 0), 0)\n", ""), "assert-removed"),
    (UNIT.replace("self.assertEqual(add(2, 3), 5)", "self.assertTrue(add(2, 3))"), "assert-loosened"),
    (UNIT.replace("places=4", "places=1"), "assert-loosened"),
    (UNIT.replace(", places=4)", ")").replace("0.3333", "0.33333333"), None),  # 7 places: narrower
    (UNIT.replace("self.assertRaises(ZeroDivisionError)", "self.assertRaises(Exception)"), "raises-broadened"),
    (UNIT.replace("    def test_add(self):\n", "    @unittest.skipIf(True, 'later')\n    def test_add(self):\n"), "skipped"),
    (UNIT.replace("    def test_add(self):\n", "    def test_add(self):\n        self.skipTest('later')\n"), "skipped"),
    (UNIT.replace("    def test_add(self):\n", "    @expectedFailure\n    def test_add(self):\n").replace(
        "import unittest\n", "import unittest\nfrom unittest import expectedFailure\n"), "skipped"),
    (UNIT.replace("        self.assertEqual(add(0, 0), 0)\n", "        self.assertEqual(add(0, 0), 0)\n"
                  "        self.assertNotEqual(add(2, 3), -1)\n"), None),
])
def test_unittest_assertion_methods_are_read_as_asserts(now, rule):
    """Was: no finding for any of them (a unittest suite's checks are calls, not `assert` statements)."""
    found = loosened.findings(loosened.shapes({"test_u.py": {"text": UNIT}}), {"test_u.py": now}, UNIT_PASSING)
    assert [f["rule"] for f in found] == ([rule] if rule else []), found


def test_a_unittest_class_of_any_name_is_read():
    """Was: no shape for `class CalcChecks(unittest.TestCase)` (pytest collects it; only `Test*` classes were read),
    so its test deleted was unnamed."""
    sealed = UNIT.replace("class TestCalc(", "class CalcChecks(")
    now = sealed.replace("def test_add(self):", "def helper_add(self):")
    found = loosened.findings(loosened.shapes({"test_u.py": {"text": sealed}}), {"test_u.py": now},
                              {t.replace("TestCalc", "CalcChecks") for t in UNIT_PASSING})
    assert [(f["test"], f["rule"]) for f in found] == [("test_u.py::CalcChecks::test_add", "deleted")], found


def test_a_skip_given_to_a_class_by_its_pytestmark_is_named():
    """Was: no finding (a class's marks were read from its decorators only, and a mark outside the test's own
    source, the class's or the module's, went unseen)."""
    sealed = BASE + "\n\nclass TestMore:\n    def test_one(self):\n        assert add(1, 1) == 2\n"
    now = sealed.replace("class TestMore:\n", "class TestMore:\n    pytestmark = pytest.mark.skip\n\n")
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": sealed}}), {"test_t.py": now},
                              PASSING | {"test_t.py::TestMore::test_one"})
    assert [(f["test"], f["rule"]) for f in found] == [("test_t.py::TestMore::test_one", "skipped")], found


@pytest.mark.parametrize("now, named", [("[(1, 1, 2)]", True), ("[(1, 1, 2), (2, 2, 4), (5, 5, 10)]", False),
                                        ("[(1, 1, 2), (2, 2, 4), (3, 3, 6), (0, 0, 0)]", False)])
def test_fewer_cases_in_a_module_list_the_test_names_are_named(now, named):
    """Was: no finding (only a literal list in the decorator was counted)."""
    sealed = BASE.replace("\n\n\n@pytest.mark.parametrize", "\nCASES = [(1, 1, 2), (2, 2, 4), (3, 3, 6)]\n\n\n"
                          "@pytest.mark.parametrize").replace("[(1, 1, 2), (2, 2, 4), (3, 3, 6)])", "CASES)")
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": sealed}}),
                              {"test_t.py": sealed.replace("[(1, 1, 2), (2, 2, 4), (3, 3, 6)]", now)}, PASSING)
    assert [f["rule"] for f in found] == (["fewer-cases"] if named else []), found


def test_a_test_moved_as_it_was_to_another_test_file_is_not_deleted():
    """Was: named `deleted`, though it runs in the file it moved to."""
    moved = BASE.replace("def test_add():" + SEALED_TEST, "")
    elsewhere = {"test_more.py": "from calc import add\n\n\ndef test_add():" + SEALED_TEST + "\n"}
    shapes = loosened.shapes({"test_t.py": {"text": BASE}})
    assert loosened.findings(shapes, {"test_t.py": moved}, PASSING, elsewhere) == []
    changed = {"test_more.py": elsewhere["test_more.py"].replace("== 5", "== 6")}  # moved, and changed: deleted
    assert [f["rule"] for f in loosened.findings(shapes, {"test_t.py": moved}, PASSING, changed)] == ["deleted"]


def test_a_deleted_file_names_each_sealed_passing_test():
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": None}, PASSING)
    assert {f["test"] for f in found} == {"test_t.py::test_add", "test_t.py::test_cases", "test_t.py::test_div", "test_t.py::test_near"}


INI = "[pytest]\ntestpaths = tests\naddopts = -q\nmarkers =\n    slow: slow tests\n"


@pytest.mark.parametrize("now", [INI.replace("-q", "-q -k 'not add'"), INI.replace("-q", "-q --deselect tests/t.py::test_add"),
                                 INI.replace("testpaths = tests", "testpaths = tests/other"),
                                 INI + "python_functions = check_*\n", INI.replace("-q", "-q -knot_add"),
                                 INI.replace("-q", "-qx"), INI.replace("-q", "-q -mnot_slow")])
def test_tests_excluded_by_configuration_are_named(now):
    assert [f["rule"] for f in excluded.config_findings({"pytest.ini": INI}, {"pytest.ini": now})] == ["config-excluded"]


@pytest.mark.parametrize("now", [INI, INI.replace("-q", "-q -v"), INI.replace("-q", "-q -rxXs"), INI + "    fast: fast tests\n", INI.replace("testpaths = tests\n", "")])
def test_an_honest_configuration_edit_is_no_finding(now):
    assert excluded.config_findings({"pytest.ini": INI}, {"pytest.ini": now}) == []


def test_a_pyproject_gaining_a_deselect_is_named():
    before = "[project]\nname = 'x'\n"
    now = before + "\n[tool.pytest.ini_options]\naddopts = '-m \"not slow\"'\n"
    assert [f["rule"] for f in excluded.config_findings({"pyproject.toml": before}, {"pyproject.toml": now})] == ["config-excluded"]
    assert excluded.config_findings({"pyproject.toml": before}, {"pyproject.toml": before + "\n[project.urls]\nx = 'y'\n"}) == []


CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef calc():\n    return 1\n"


@pytest.mark.parametrize("now", [
    CONFTEST + "\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n",
    CONFTEST + "\ncollect_ignore = ['tests/test_calc.py']\n",
    CONFTEST + "\n\ndef pytest_runtest_setup(item):\n    pytest.skip('no')\n",
    CONFTEST + "\n\ndef pytest_configure(config):\n    config.option.deselect = ['tests/test_calc.py::test_add']\n",
    CONFTEST + "\n\ndef pytest_configure(config):\n    config.option.markexpr += ' and not slow'\n",
    CONFTEST + "\n\ndef pytest_configure(config):\n    config.pluginmanager.register(object())\n",
])
def test_a_collection_hook_added_to_a_conftest_is_named(now):
    assert [f["rule"] for f in conftest_hooks.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now})] == ["collection-hook"]
    # (own44d) the same where a hook gated on a mark and collect_ignore are read: none of these is so gated or ignores
    # only other files
    assert [f["rule"] for f in conftest_hooks.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now}, lambda m: [],
                                                                ("tests/test_calc.py",))] == ["collection-hook"]


RUNSLOW_FORMS = {  # (own44d) each acting only on tests marked slow (seal.gated), or leaving out files no sealed test is in
    "keywords": "\n\ndef pytest_collection_modifyitems(config, items):\n    if config.getoption('--runslow'):\n        return\n"
                "    skip_slow = pytest.mark.skip(reason='need --runslow')\n    for item in items:\n"
                "        if 'slow' in item.keywords:\n            item.add_marker(skip_slow)\n",
    "closest-marker": "\n\ndef pytest_collection_modifyitems(config, items):\n    if not config.getoption('--runslow'):\n"
                      "        for item in items:\n            if item.get_closest_marker('slow') is not None:\n"
                      "                item.add_marker(pytest.mark.skip(reason='slow'))\n",
    "setup": "\n\ndef pytest_runtest_setup(item):\n    if any(item.iter_markers(name='slow')) and not item.config.getoption('--runslow'):\n"
             "        pytest.skip('need --runslow')\n",
    "collect-ignore": "\ncollect_ignore = ['setup.py', 'docs']\ncollect_ignore_glob = ['*_py2.py']\n",
}
RUNSLOW_NAMED = {  # (own44d) a gated hook carried by a sealed test, or an effect not gated, or a sealed file ignored
    "carried": (RUNSLOW_FORMS["keywords"], lambda m: ["tests/test_calc.py::test_add"]),
    "or-gate": (RUNSLOW_FORMS["setup"].replace(" and not", " or not"), lambda m: []),
    "ungated-loop": (RUNSLOW_FORMS["keywords"].replace("if 'slow' in item.keywords:\n            ", ""), lambda m: []),
    "items-removed": (RUNSLOW_FORMS["keywords"].replace("item.add_marker(skip_slow)", "items.remove(item)"), lambda m: []),
    "ignored-folder": ("\ncollect_ignore = ['tests']\n", lambda m: []),
    "ignored-by-glob": ("\ncollect_ignore_glob = ['*calc*']\n", lambda m: []),
    "ignored-computed": ("\ncollect_ignore = ['tests/' + 'test_calc.py']\n", lambda m: []),
}


@pytest.mark.parametrize("name", RUNSLOW_FORMS)
def test_a_hook_acting_only_on_tests_no_sealed_test_carries_is_no_finding(name):
    now = CONFTEST + RUNSLOW_FORMS[name]
    assert conftest_hooks.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now}, lambda m: [],
                                            ("tests/test_calc.py",)) == []


@pytest.mark.parametrize("name", RUNSLOW_NAMED)
def test_a_hook_on_a_sealed_tests_mark_or_one_not_gated_is_named(name):
    added, carried = RUNSLOW_NAMED[name]
    got = conftest_hooks.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": CONFTEST + added}, carried,
                                           ("tests/test_calc.py",))
    assert [f["rule"] for f in got] == ["collection-hook"], got


@pytest.mark.parametrize("added", ["\n\n@pytest.fixture\ndef other():\n    return 2\n",
                                   "\n\ndef pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: slow')\n"
                                   "    if config.getoption('verbose'):\n        print('verbose')\n"])
def test_an_honest_conftest_edit_is_no_finding(added):
    now = CONFTEST + added
    assert conftest_hooks.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now}) == []


COVERAGERC = "[run]\nbranch = true\n\n[report]\nfail_under = 90\nshow_missing = true\n"
# (review A: the threshold read by a parser, not a regular expression stopping at the first `[` of a section)
LISTED = '[project]\nname = "calc"\n\n[tool.coverage.report]\nexclude_also = ["if TYPE_CHECKING:"]\nfail_under = 90\n'
PLAIN = '[project]\nname = "calc"\n\n[tool.coverage.report]\nfail_under = 90\nshow_missing = true\n'
PREFIXED = "[coverage:report]\nfail_under = 90\n"  # (coverage.py reads .coveragerc's [coverage:report] before [report])
BOTH = "[coverage:report]\nshow_missing = true\n\n[report]\nfail_under = 90\n"  # (and then none of [report])


@pytest.mark.parametrize("name, sealed, now", [
    (".coveragerc", COVERAGERC, COVERAGERC.replace("90", "50")), (".coveragerc", COVERAGERC, COVERAGERC.replace("fail_under = 90\n", "")),
    ("pyproject.toml", LISTED, LISTED.replace("= 90", "= 10")), (".coveragerc", PREFIXED, PREFIXED.replace("90", "10")),
    (".coveragerc", COVERAGERC.replace("[report]", "[report]\nexclude_lines = [a]b"), COVERAGERC.replace("90", "9")),
    ("setup.cfg", "[coverage:report]\nexclude_lines =\n    [a]b\nfail_under = 90\n", "[coverage:report]\nfail_under = 10\n"),
    (".coveragerc.toml", "[report]\nfail_under = 90\n", "[report]\nfail_under = 10\n")],
    ids=["lowered", "removed", "pyproject-after-a-list", "coveragerc-prefixed", "coveragerc-after-a-bracket", "setup-cfg",
         "coveragerc-toml"])
def test_a_coverage_threshold_lowered_is_named(name, sealed, now):
    assert "coverage-lowered" in [f["rule"] for f in coverage_files.findings({name: sealed}, {name: now})]


@pytest.mark.parametrize("name, sealed, now", [
    (".coveragerc", COVERAGERC, COVERAGERC.replace("90", "95")), (".coveragerc", COVERAGERC, COVERAGERC.replace("branch = true", "branch = false")),
    ("pyproject.toml", PLAIN, PLAIN.replace("fail_under = 90", 'exclude_also = ["if TYPE_CHECKING:"]\nfail_under = 90')),
    (".coveragerc", BOTH, BOTH.replace("90", "10")), (".coveragerc.toml", "[report]\nfail_under = 90\n",
                                                      "[tool.coverage.report]\nfail_under = 90\n")],
    ids=["raised", "other-key", "pyproject-list-added", "report-not-read", "coveragerc-toml-spelled-otherwise"])
def test_a_coverage_threshold_kept_or_raised_is_no_finding(name, sealed, now):
    assert coverage_files.findings({name: sealed}, {name: now}) == []


@pytest.mark.parametrize("now, named", [("--cov-fail-under=50", True), ("", True), ("--cov-fail-under 95", False),
                                        ("--cov-fail-under=90 -v", False)])
def test_pytest_covs_threshold_in_addopts_lowered_is_named(now, named):
    """Was: no finding (only `fail_under` of coverage's own configuration was read)."""
    before = "[pytest]\naddopts = --cov=calc --cov-fail-under=90\n"
    found = excluded.config_findings({"pytest.ini": before}, {"pytest.ini": f"[pytest]\naddopts = --cov=calc {now}\n"})
    assert [f["rule"] for f in found] == (["coverage-lowered"] if named else []), found


def test_a_pyproject_coverage_threshold_lowered_is_named():
    before = "[tool.coverage.report]\nfail_under = 80\n"
    assert coverage_files.findings({"pyproject.toml": before}, {"pyproject.toml": before.replace("80", "10")})


FLOW = """name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: lint
        run: ruff check .
      - name: tests
        run: python -m pytest -q
"""


@pytest.mark.parametrize("now, rule", [
    (FLOW.replace("      - name: tests\n        run: python -m pytest -q\n", ""), "ci-test-removed"),
    (FLOW.replace("python -m pytest -q", "python -m pytest -q || true"), "ci-ignores-failures"),
    (FLOW.replace("      - name: tests\n", "      - name: tests\n        continue-on-error: true\n"), "ci-ignores-failures"),
    (FLOW.replace("python -m pytest -q", "python -m pytest -q || echo 'tests failed'"), "ci-ignores-failures"),
    (FLOW.replace("      - name: tests\n", "      - name: tests\n        continue-on-error: ${{ true }}\n"), "ci-ignores-failures"),
])
def test_a_ci_test_step_removed_or_made_to_ignore_failures_is_named(now, rule):
    found = excluded.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now})
    assert [f["rule"] for f in found] == [rule]


@pytest.mark.parametrize("now", [FLOW.replace("ruff check .", "ruff check . && mypy"),
                                 FLOW.replace("python -m pytest -q", "python -m pytest -q -n 2"),
                                 FLOW.replace("python -m pytest -q", "python -m pytest -q || (cat log.txt && exit 1)"),
                                 FLOW.replace("python -m pytest -q", "python -m pytest -q || false"),
                                 FLOW + "      - name: more tests\n        run: python -m pytest tests/slow\n"])
def test_an_honest_ci_edit_is_no_finding(now):
    assert excluded.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now}) == []


# -- an expected value changed to what the code returns now (`to_actual`: by the sealed test's failure, parsed) ---

FIRST = BASE.replace("assert add(2, 3) == 5", "assert 5 == add(2, 3)")
NAMED = BASE.replace("    assert add(2, 3) == 5\n", "    want = 5\n    assert add(2, 3) == want\n")
TEXT = BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == 'abc'")
CONST = BASE.replace("\n\n\ndef test_add():", "\nWANT = 5\nCASES = [(1, 1, 2), (2, 2, 4), (3, 3, 6)]\n\n\ndef test_add():").replace(
    "add(2, 3) == 5", "add(2, 3) == WANT").replace('"a, b, want", [(1, 1, 2), (2, 2, 4), (3, 3, 6)]', '"a, b, want", CASES')
TO_ACTUAL = {  # (the sealed test, its failure at the stop, the agent's test now): named
    "literal": (BASE, "assert -1 == 5\n +  where -1 = add(2, 3)", BASE.replace("add(2, 3) == 5", "add(2, 3) == -1")),
    "arithmetic": (BASE, "assert -1 == 5", BASE.replace("add(2, 3) == 5", "add(2, 3) == 2 - 3")),
    "expected-first": (FIRST, "assert 5 == -1\n +  where -1 = add(2, 3)", FIRST.replace("5 == add", "-1 == add")),
    "a-name": (NAMED, "assert -1 == 5", NAMED.replace("want = 5", "want = -1")),
    "sides-swapped": (BASE, "assert -1 == 5", BASE.replace("add(2, 3) == 5", "-1 == add(2, 3)")),
    "a-case": (BASE, "AssertionError: assert 7 == 6", BASE.replace("(3, 3, 6)]", "(3, 3, 7)]")),
    "a-module-constant": (CONST, "assert -1 == 5", CONST.replace("WANT = 5", "WANT = -1")),
    "a-module-case": (CONST, "assert 7 == 6", CONST.replace("(3, 3, 6)]", "(3, 3, 7)]")),
    "a-string": (TEXT, "assert 'ab' == 'abc'\n  - abc\n  + ab", TEXT.replace("'abc'", "'ab'")),
    # reprs pytest shortened in its summary line (a string over ~30 characters, a list over 6 items)
    "a-long-string": (TEXT, "AssertionError: assert 'aaaaaaaaaaaa...aaaaaaaaaaaaa' == 'abc'\n  \n  - abc",
                      TEXT.replace("'abc'", repr("a" * 300))),
    "a-long-list": (TEXT, "assert [0, 1, 2, 3, 4, 5, ...] == 'abc'\n  Use -v to get more diff",
                    TEXT.replace("'abc'", repr(list(range(20))))),
}
NOT_TO_ACTUAL = {  # look-alikes: no finding
    "another-value": ("assert -1 == 5", BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == 7")),
    "equal-expression": ("assert -1 == 5", BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) == 2 + 3")),
    "stricter-check-added": ("assert -1 == 5", BASE.replace("    assert add(0, 0) == 0\n",
                                                              "    assert add(0, 0) == 0\n    assert add(2, 3) != -1\n")),
    "an-object": ("assert <calc.Sum object at 0x7f> == 5", BASE.replace("== 5", "== 6")),
    "a-long-string-otherwise": ("assert 'aaaaaaaaaaaa...aaaaaaaaaaaaa' == 5",
                                BASE.replace("add(2, 3) == 5", f"add(2, 3) == {'a' * 299 + 'b'!r}")),
}
UNITTEST_T = BASE.replace("assert add(2, 3) == 5", "unittest.TestCase().assertEqual(add(2, 3), 5)")
TO_ACTUAL["unittest"] = (UNITTEST_T, "AssertionError: -1 != 5", UNITTEST_T.replace("add(2, 3), 5)", "add(2, 3), -1)"))
TO_ACTUAL["unittest-lists"] = (UNITTEST_T.replace(", 5)", ", [5])"), "AssertionError: Lists differ: [-1] != [5]\n\nFirst "
                               "differing element 0:\n-1\n5", UNITTEST_T.replace(", 5)", ", [-1])"))
TO_ACTUAL["with-a-message"] = (BASE, "AssertionError: add is wrong\nassert -1 == 5\n +  where -1 = add(2, 3)",
                               BASE.replace("add(2, 3) == 5", "add(2, 3) == -1"))
TESTS = {"sides-swapped": "test_t.py::test_add", "with-a-message": "test_t.py::test_add", "unittest": "test_t.py::test_add", "unittest-lists": "test_t.py::test_add", "literal": "test_t.py::test_add", "arithmetic": "test_t.py::test_add", "expected-first": "test_t.py::test_add", "a-name": "test_t.py::test_add",
         "a-case": "test_t.py::test_cases[3-3-6]", "a-string": "test_t.py::test_add", "a-long-string": "test_t.py::test_add",
         "a-long-list": "test_t.py::test_add", "a-module-constant": "test_t.py::test_add",
         "a-module-case": "test_t.py::test_cases[3-3-6]"}


@pytest.mark.parametrize("name", TO_ACTUAL)
def test_an_expected_value_changed_to_what_the_code_returns_is_named(name):
    sealed, message, now = TO_ACTUAL[name]
    found = expected.to_actual(sealed, now, TESTS[name], message)
    assert found is not None and found["rule"] == "expected-to-actual" and found["test"] == TESTS[name], (name, found)
    assert "what the code returns now" in found["what"]


@pytest.mark.parametrize("name", NOT_TO_ACTUAL)
def test_an_expected_value_changed_otherwise_is_not_named(name):
    message, now = NOT_TO_ACTUAL[name]
    assert expected.to_actual(BASE, now, "test_t.py::test_add", message) is None


# -- an assert moved into a helper the test calls (same file, or a conftest it imports from) ----------------------

HELPED = BASE.replace("    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n", "    check_add()\n") + (
    "\n\ndef check_add():\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n")
IN_CONFTEST = BASE.replace("    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n", "    check_add()\n").replace(
    "from calc import add, div\n", "from calc import add, div\nfrom conftest import check_add\n")
CONFTEST_HELPER = "from calc import add\n\n\ndef check_add():\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n"
MOVED = {  # (the test file now, the conftest now): an honest refactor, no finding
    "helper-in-the-file": (HELPED, None),
    "helper-in-a-conftest": (IN_CONFTEST, CONFTEST_HELPER),
    "helper-calling-a-helper": (HELPED.replace("def check_add():\n    assert add(2, 3) == 5\n",
                                               "def check_add():\n    check_five()\n") + "\n\ndef check_five():\n    assert add(2, 3) == 5\n", None),
    "a-unittest-method": (UNIT.replace("        self.assertEqual(add(2, 3), 5)\n        self.assertEqual(add(0, 0), 0)\n",
                                       "        self.check_add()\n\n    def check_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
                                       "        self.assertEqual(add(0, 0), 0)\n"), None),
}
MOVED_AWAY = {  # the assert still gone: named
    "helper-not-asserting": (HELPED.replace("    assert add(0, 0) == 0\n", "    add(0, 0)\n"), None),
    "helper-never-called": (HELPED.replace("    check_add()\n", "    pass\n"), None),
    "conftest-helper-not-asserting": (IN_CONFTEST, CONFTEST_HELPER.replace("    assert add(0, 0) == 0\n", "")),
    "conftest-name-not-imported": (IN_CONFTEST.replace("from conftest import check_add\n", ""), CONFTEST_HELPER),
    "recursion": (HELPED.replace("    assert add(0, 0) == 0\n", "    check_add()\n"), None),
}


def _moved(name, now, conftest, sealed=None):
    base = UNIT if name == "a-unittest-method" else BASE
    passing = {"test_t.py::TestCalc::test_add"} if name == "a-unittest-method" else PASSING
    files = {"test_t.py": {"text": sealed or base}, "conftest.py": {"text": "import pytest\n"}}
    return loosened.findings(loosened.shapes(files), {"test_t.py": now}, passing,
                             conftests={"conftest.py": conftest or "import pytest\n"})


@pytest.mark.parametrize("name", MOVED)
def test_an_assert_moved_into_a_helper_the_test_calls_is_no_finding(name):
    """Was: assert-removed (the test's own body held fewer asserts)."""
    assert _moved(name, *MOVED[name]) == []


@pytest.mark.parametrize("name", MOVED_AWAY)
def test_an_assert_moved_into_a_helper_that_does_not_check_it_is_named(name):
    assert "assert-removed" in {f["rule"] for f in _moved(name, *MOVED_AWAY[name])}


def test_a_helper_loosened_after_the_seal_is_named_though_the_test_is_unchanged():
    """The seal read the helper's asserts too: a helper the test called at the seal, weakened later, is named."""
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": HELPED}}),
                              {"test_t.py": HELPED.replace("assert add(2, 3) == 5", "assert add(2, 3)")}, PASSING)
    assert [f["rule"] for f in found] == ["assert-loosened"]
    assert loosened.findings(loosened.shapes({"test_t.py": {"text": HELPED}}), {"test_t.py": HELPED + "\n"}, PASSING) == []


@pytest.mark.parametrize("command, gained", [
    ("python -m pytest -q -k 'not add'", "-k"), ("python -m pytest -q --deselect tests/test_calc.py::test_add", "--deselect"),
    ("python -m pytest -q --ignore=tests/test_calc.py", "--ignore"), ("python -m pytest -q -m 'not slow'", "-m"),
    ("pip install -e . && pytest -qknot_add", "-k"), ("python -m pytest -q \\\n          --collect-only", "--collect-only"),
])
def test_a_ci_test_step_given_an_option_that_excludes_tests_is_named(command, gained):
    """Was: no finding (only addopts was read for these)."""
    now = FLOW.replace("python -m pytest -q", command)
    found = excluded.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now})
    assert [(f["rule"], f["what"].split(" gained ")[-1]) for f in found] == [("config-excluded", gained)], found


MARKED = FLOW.replace("python -m pytest -q", "python -m pytest -q -m 'not slow'")


@pytest.mark.parametrize("before, now", [
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest -q -v -n 2 -p no:cacheprovider -rxXs")),
    (MARKED, MARKED.replace("-q -m", "-v -m")),  # an option the step had at the seal
    (MARKED, MARKED.replace("- name: tests", "- name: unit tests")),  # the step renamed
    (FLOW, FLOW.replace("ruff check .", "ruff check . --ignore E501")),  # not a test command's option
])
def test_a_ci_test_step_given_other_options_is_no_finding(before, now):
    assert excluded.ci_findings({".github/workflows/ci.yml": before}, {".github/workflows/ci.yml": now}) == []


SEALED_IDS = ["tests/unit/test_calc.py::test_add", "tests/unit/test_calc.py::test_sub", "tests/test_io.py::test_read"]
NARROW = FLOW.replace("python -m pytest -q", "python -m pytest -q tests/unit")


def test_the_stop_reads_the_coverage_files_the_rules_read():
    from donegate.gate import own_suite

    assert own_suite.COVERAGE_FILES == coverage_files.COVERAGE_FILES


@pytest.mark.parametrize("before, now, ids", [
    (FLOW, NARROW, SEALED_IDS),
    (FLOW, NARROW, None),  # no sealed ids: the paths themselves
    (FLOW, FLOW.replace("python -m pytest -q", "pytest -q -n 2 tests/unit/test_calc.py::test_add"), SEALED_IDS),
    (FLOW.replace("-m pytest -q", "-m pytest -q tests"), FLOW.replace("-m pytest -q", "-m pytest -q ./tests/unit/"), None),
    (FLOW.replace("-m pytest -q", "-m pytest tests/unit tests/test_io.py"), NARROW, None),
    (FLOW, FLOW.replace("python -m pytest -q", "cd tests && python -m pytest -q unit"), SEALED_IDS),
    (FLOW, FLOW.replace("      - name: tests\n", "      - name: tests\n        working-directory: tests\n").replace(
        "pytest -q", "pytest -q unit"), SEALED_IDS),
], ids=["all-to-unit", "all-to-unit-no-ids", "to-one-test", "tests-to-unit", "two-to-one", "cd", "working-directory"])
def test_a_ci_test_step_narrowed_by_path_is_named(before, now, ids):
    """Was: no finding (only the step's options were read: `pytest tests/unit` where `pytest` ran took tests out)."""
    found = excluded.ci_findings({".github/workflows/ci.yml": before}, {".github/workflows/ci.yml": now}, ids)
    assert [f["rule"] for f in found] == ["config-excluded"], found
    assert "no longer run" in found[0]["what"], found


@pytest.mark.parametrize("before, now", [
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest -q tests")),  # every sealed test is under tests/
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest -q -n 2 --cov calc -p no:randomly --tb short -W error")),
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest -rxXs -vk 'add or not add' .")),  # (-k is its own rule)
    (NARROW, FLOW),  # widened
    (NARROW, NARROW.replace("tests/unit", "./tests/unit/")),
    (FLOW, FLOW + "      - name: unit\n        run: pytest tests/unit\n"),  # a narrower step beside the whole one
    (FLOW, FLOW.replace("python -m pytest -q", "tox -e py312")),  # the runner changed: not a pytest command
    (FLOW.replace("-m pytest -q", "-m pytest ${{ matrix.path }}"), FLOW.replace("-m pytest -q", "-m pytest -v ${{ matrix.path }}")),
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest -q $PYTEST_ARGS")),  # not known: no finding
    (FLOW.replace("python -m pytest -q", "pytest $ARGS"), NARROW),
    (FLOW, FLOW.replace("python -m pytest -q", "python -m pytest tests/test_*.py tests/unit")),  # as the shell expands it
    (FLOW, FLOW.replace("python -m pytest -q", "cd src && python -m pytest ../tests")),
    (FLOW, FLOW.replace("      - name: tests\n", "      - name: tests\n        working-directory: tests\n")),
], ids=["all-to-tests", "value-options", "clusters", "widened", "spelled-otherwise", "step-added", "tox", "matrix",
        "variable", "variable-at-the-seal", "glob", "cd", "working-directory"])
def test_a_ci_test_step_that_still_runs_every_sealed_test_is_no_finding(before, now):
    found = excluded.ci_findings({".github/workflows/ci.yml": before}, {".github/workflows/ci.yml": now}, SEALED_IDS)
    assert [f for f in found if f["what"] != "the test step test/tests gained -k"] == [], found


MODULE = "def test_add():\n    assert 2 + 3 == 5\n"


@pytest.mark.parametrize("now", [
    MODULE + "\n\ndef pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', [])\n",
    "class TestAdd:\n    def pytest_generate_tests(self, metafunc):\n        pass\n\n" + MODULE,
    MODULE + "\npytest_plugins = ['skipper']\n",
], ids=["module", "class", "plugins"])
def test_a_test_module_gaining_a_hook_pytest_reads_from_it_is_named(now):
    """Was: no finding (only a conftest.py's hooks were read; pytest reads a test module's `pytest_generate_tests`, a
    test class's, and its `pytest_plugins` too)."""
    found = loosened.module_findings({"tests/test_calc.py": MODULE}, {"tests/test_calc.py": now})
    assert [f["rule"] for f in found] == ["collection-hook"], found


@pytest.mark.parametrize("before, now", [
    (MODULE + "\n\ndef pytest_generate_tests(metafunc):\n    pass\n",
     MODULE + "\n\ndef pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', [1, 2])\n"),  # had it at the seal
    (MODULE, MODULE + "\n\ndef generate_tests(metafunc):\n    pass\n"),  # another name
    (MODULE, MODULE + "\n\n@pytest.fixture\ndef calc():\n    return 1\n"),  # a fixture
    (MODULE, MODULE + "\n\ndef helper():\n    pytest_generate_tests = 1\n    return pytest_generate_tests\n"),  # a local
], ids=["kept", "other-name", "fixture", "local"])
def test_a_test_module_edit_without_such_a_hook_is_no_finding(before, now):
    assert loosened.module_findings({"tests/test_calc.py": before}, {"tests/test_calc.py": now}) == []


@pytest.mark.parametrize("before, now", [
    (CONFTEST, CONFTEST + "\npytest_plugins = ['skipper']\n"),
    (CONFTEST + "\npytest_plugins = ['pytester']\n", CONFTEST + "\npytest_plugins = ['pytester', 'skipper']\n"),
    (CONFTEST, CONFTEST + "\npytest_plugins = 'skipper'\n"),
    (CONFTEST, CONFTEST + "\n\ndef pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', [])\n"),
], ids=["plugins-added", "a-plugin-added", "a-plugin-by-string", "generate-tests"])
def test_a_plugin_or_a_generate_hook_added_to_a_conftest_is_named(before, now):
    """Was: no finding (`pytest_plugins` brings in a plugin that can deselect or skip; `pytest_generate_tests` can
    give a test no cases, which pytest skips)."""
    assert [f["rule"] for f in conftest_hooks.conftest_findings({"conftest.py": before}, {"conftest.py": now})] == ["collection-hook"]


@pytest.mark.parametrize("before, now", [
    (CONFTEST + "\npytest_plugins = ['pytester']\n", CONFTEST + "\npytest_plugins = ['pytester']\n\n\n@pytest.fixture\ndef two():\n    return 2\n"),
    (CONFTEST + "\npytest_plugins = ['pytester', 'other']\n", CONFTEST + "\npytest_plugins = ('other', 'pytester')\n"),
], ids=["a-fixture-added", "reordered"])
def test_a_conftests_plugins_kept_is_no_finding(before, now):
    assert conftest_hooks.conftest_findings({"conftest.py": before}, {"conftest.py": now}) == []


# -- an expected value held elsewhere: a fixture it asks for (its module's, its class's, a conftest.py's), a helper it
# calls, a dict constant; and a new value the request's (hidden) tests ask of the same function ---------------------

FIXTURE = BASE.replace("def test_add():\n    assert add(2, 3) == 5\n",
                       "@pytest.fixture\ndef want():\n    return 5\n\n\ndef test_add(want):\n    assert add(2, 3) == want\n")
HELPER_VALUE = BASE.replace("def test_add():\n    assert add(2, 3) == 5\n",
                            "def expected():\n    return 5\n\n\ndef test_add():\n    assert add(2, 3) == expected()\n")
TABLE = BASE.replace("def test_add():\n    assert add(2, 3) == 5\n",
                     "WANT = {'add': 5, 'zero': 0}\n\n\ndef test_add():\n    assert add(2, 3) == WANT['add']\n")
BY_CONFTEST = BASE.replace("def test_add():\n    assert add(2, 3) == 5\n", "def test_add(want):\n    assert add(2, 3) == want\n")
CONFTEST = "import pytest\n\n\n@pytest.fixture(name='want')\ndef _want():\n    return 5\n"
HELD = {  # (sealed, the test file now, its conftest.py as sealed, now): named
    "a-fixture": (FIXTURE, FIXTURE.replace("return 5", "return -1"), "", ""),
    "a-fixture-param": (FIXTURE.replace("@pytest.fixture\n", "@pytest.fixture(params=[5])\n").replace("return 5", "return request.param").replace("def want():", "def want(request):"),
                        FIXTURE.replace("@pytest.fixture\n", "@pytest.fixture(params=[-1])\n").replace("return 5", "return request.param").replace("def want():", "def want(request):"), "", ""),
    "a-helper": (HELPER_VALUE, HELPER_VALUE.replace("return 5", "return -1"), "", ""),
    "a-dict-constant": (TABLE, TABLE.replace("'add': 5", "'add': -1"), "", ""),
    "a-conftest-fixture": (BY_CONFTEST, BY_CONFTEST, CONFTEST, CONFTEST.replace("return 5", "return -1")),
}


@pytest.mark.parametrize("name", HELD)
def test_an_expected_value_held_elsewhere_changed_to_what_the_code_returns_is_named(name):
    """Was: only a literal of the test's own function or a constant of its file was compared."""
    sealed, now, c_sealed, c_now = HELD[name]
    found = expected.to_actual(sealed, now, "test_t.py::test_add", "assert -1 == 5",
                               ([c_sealed] if c_sealed else [], [c_now] if c_now else []))
    assert found is not None and "its expected value 5 was changed to -1" in found["what"], (name, found)


HELD_NOT = {  # look-alikes: no finding
    "a-fixture-otherwise": (FIXTURE, FIXTURE.replace("return 5", "return 7"), "", ""),
    "a-fixture-equal": (FIXTURE, FIXTURE.replace("return 5", "return 2 + 3"), "", ""),
    "another-fixture-changed": (FIXTURE + "\n\n@pytest.fixture\ndef other():\n    return 5\n",
                                FIXTURE + "\n\n@pytest.fixture\ndef other():\n    return -1\n", "", ""),
    "another-key": (TABLE, TABLE.replace("'zero': 0", "'zero': -1"), "", ""),
    "a-conftest-fixture-otherwise": (BY_CONFTEST, BY_CONFTEST, CONFTEST, CONFTEST.replace("return 5", "return 7")),
}


@pytest.mark.parametrize("name", HELD_NOT)
def test_an_expected_value_held_elsewhere_changed_otherwise_is_not_named(name):
    sealed, now, c_sealed, c_now = HELD_NOT[name]
    assert expected.to_actual(sealed, now, "test_t.py::test_add", "assert -1 == 5",
                              ([c_sealed] if c_sealed else [], [c_now] if c_now else [])) is None


def test_a_new_value_the_request_asks_of_the_same_function_is_a_contract_change_not_a_weakening():
    """The request's hidden tests compare `add(...)` with the new value: the test's expected value changed to it is
    the contract the request changed (the stop still blocks as "the old contract changed", with the appeal). Beside
    it: the same value asked of another function (`mul(2, 3) == 6`: a regression of `add` made to return 6) is named."""
    now = BASE.replace("add(2, 3) == 5", "add(2, 3) == 6")
    asked = lambda: ["import calc\n\n\ndef test_add_more():\n    assert calc.add(2, 3) == 6\n"]  # noqa: E731
    assert expected.to_actual(BASE, now, "test_t.py::test_add", "assert 6 == 5", asked=asked) is None
    other = lambda: ["import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"]  # noqa: E731
    found = expected.to_actual(BASE, now, "test_t.py::test_add", "assert 6 == 5", asked=other)
    assert found is not None and found["rule"] == "expected-to-actual", found
    found = expected.to_actual(FIXTURE, FIXTURE.replace("return 5", "return 6"), "test_t.py::test_add", "assert 6 == 5",
                               asked=other)
    assert found is not None, found


# -- both sides of a sealed equality passed through the same new call (`normalizing.normalized`) ---------------------

NORM = '''import pytest
from humanize import naturalsize

CASES = [((300,), "300 Bytes"), ((3000,), "3.0 kB")]


@pytest.mark.parametrize("a, expected", CASES)
def test_naturalsize(a, expected):
    assert naturalsize(*a) == expected


def test_sorted():
    assert sorted(parts()) == sorted(["a", "b"])
'''
NORMALIZED = {  # named
    "replace": NORM.replace("assert naturalsize(*a) == expected",
                            "assert naturalsize(*a).replace(' ', '') == expected.replace(' ', '')"),
    "two-calls": NORM.replace("assert naturalsize(*a) == expected",
                              "assert naturalsize(*a).strip().lower() == expected.strip().lower()"),
    "a-function": NORM.replace("assert naturalsize(*a) == expected", "assert str(naturalsize(*a)) == str(expected)"),
    "one-more-on-sorted": NORM.replace("assert sorted(parts()) == sorted([\"a\", \"b\"])",
                                       "assert set(sorted(parts())) == set(sorted([\"a\", \"b\"]))"),
}
NOT_NORMALIZED = {  # look-alikes: no finding
    "kept-beside": NORM.replace("    assert naturalsize(*a) == expected\n", "    assert naturalsize(*a) == expected\n"
                                "    assert naturalsize(*a).replace(' ', '') == expected.replace(' ', '')\n"),
    "sealed-call-kept": NORM.replace("def test_sorted():\n", "def test_sorted():\n    assert parts()\n"),
    "other-operands": NORM.replace("assert naturalsize(*a) == expected", "assert naturalsize(*a) == naturalsize(a[0])"),
    "one-side": NORM.replace("assert naturalsize(*a) == expected", "assert naturalsize(*a).strip() == expected"),
    "other-arguments": NORM.replace("assert naturalsize(*a) == expected",
                                    "assert naturalsize(*a).replace(' ', '') == expected.replace('B', '')"),
}
NORM_PASSING = {"test_t.py::test_naturalsize[a0-300 Bytes]", "test_t.py::test_sorted"}


@pytest.mark.parametrize("name", NORMALIZED)
def test_both_sides_of_an_equality_passed_through_a_new_call_is_named(name):
    """Was: no finding (an equality still, the same count of asserts): a real project's agent normalised both sides
    of humanize's `test_naturalsize` assert."""
    found = normalizing.normalized({"test_t.py": NORM}, {"test_t.py": NORMALIZED[name]}, NORM_PASSING)
    assert [f["rule"] for f in found] == ["assert-loosened"] and "now pass through" in found[0]["what"], (name, found)


@pytest.mark.parametrize("name", NOT_NORMALIZED)
def test_an_equality_kept_or_rewritten_otherwise_is_not_named_normalised(name):
    assert normalizing.normalized({"test_t.py": NORM}, {"test_t.py": NOT_NORMALIZED[name]}, NORM_PASSING) == []


def test_a_raises_losing_its_match_is_broadened_and_a_stricter_match_is_not():
    from donegate.seal import loosened as lo

    was = "import pytest\n\n\ndef test_a():\n    with pytest.raises(ValueError, match='neg'):\n        f()\n"
    sealed = {"tests/test_a.py": lo.tests_of(was)}
    def judged(now):
        return [f["rule"] for f in lo.findings(sealed, {"tests/test_a.py": now}, {"tests/test_a.py::test_a"})]
    assert judged(was.replace(", match='neg'", "")) == ["raises-broadened"]
    assert judged(was.replace("match='neg'", "match='^neg: -1$'")) == []


def test_xfail_strict_lost_is_config_excluded_and_kept_in_another_spelling_is_not():
    from donegate.seal import excluded

    ini = "[pytest]\naddopts = -ra\nxfail_strict = true\n"
    def rules(now):
        return [f["rule"] for f in excluded.config_findings({"pytest.ini": ini}, {"pytest.ini": now})]
    assert rules("[pytest]\naddopts = -ra\n") == ["config-excluded"]
    assert rules(ini.replace("true", "0")) == ["config-excluded"]
    assert rules(ini.replace("true", "True").replace("-ra", "-rA")) == []
    toml = "[tool.pytest.ini_options]\nxfail_strict = true\n"
    assert [f["rule"] for f in excluded.config_findings({"pyproject.toml": toml}, {"pyproject.toml": "[tool.pytest.ini_options]\n"})] \
        == ["config-excluded"]


def test_w_ignore_of_every_warning_undoing_error_is_config_excluded_and_w_error_is_not():
    from donegate.seal import excluded

    ini = "[pytest]\naddopts = -ra\nfilterwarnings =\n    error\n"
    def rules(now, before=ini):
        return [f["rule"] for f in excluded.config_findings({"pytest.ini": before}, {"pytest.ini": now})]
    for added in ("-W ignore", "-Wignore", "-W 'ignore::'", "--pythonwarnings ignore", "--pythonwarnings=ignore"):
        assert rules(ini.replace("-ra", "-ra " + added)) == ["config-excluded"], added
    for added in ("-W error", "-W ignore::DeprecationWarning", "-p no:cacheprovider"):
        assert rules(ini.replace("-ra", "-ra " + added)) == [], added
    assert rules("[pytest]\naddopts = -ra -W ignore\n", before="[pytest]\naddopts = -ra\n") == []  # no error to undo
    assert rules(ini.replace("-ra", "-ra -W ignore"), before=ini.replace("-ra", "-ra -W ignore")) == []  # as sealed


@pytest.mark.parametrize("now", [
    "defaults: x\n" + FLOW, "defaults: {run: x}\n" + FLOW, FLOW.replace("    runs-on: ubuntu-latest\n", "    defaults: 3\n"),
    "name: ci\non: [push]\njobs: [1, 2]\n", "name: ci\non: [push]\njobs:\n  test:\n    steps: 5\n",
    "[" * 5000, "name: ci\non: 7\njobs: {}\n"])
def test_a_malformed_workflow_is_read_without_raising(now):
    """Review A: these raised in `_test_steps` (AttributeError, TypeError, RecursionError past yaml), so a stop blocked
    with "internal error ... a person must look" and a strike toward the breaker; a workflow that no longer runs the
    sealed test step is that step removed, named."""
    found = excluded.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now})
    assert all(f["rule"] == "ci-test-removed" for f in found), found


GUARDED_NOW = "import sys\nfrom calc import add\n\n\ndef test_add():\n    if sys.version_info < (3, 12):\n        assert add(2, 3) == 5\n"


@pytest.mark.parametrize("project, counted", [("3.11.7", 1), ("3.13.0", 0), ("3.11.7.final.0", 1), ("", 1)])
def test_a_version_guard_is_read_as_the_projects_interpreter_runs_it(project, counted):
    # (the kit's own interpreter, 3.11 here, is not what decides: a project on 3.13 never runs the assert; a version
    # not known leaves the guard not known, the assert counted)
    from donegate.seal import dead

    try:
        dead.interpreter(project)
        assert len(loosened.tests_of(GUARDED_NOW)["test_add"]["asserts"]) == counted
    finally:
        dead.interpreter(None)


SEALED_TESTS = {"tests/test_calc.py": {"text": "import json\n\nimport yaml\nfrom calc import add\n\n\ndef test_add():\n"
                                                "    assert add(2, 3) == 5\n"}}
PROJECT_FILES = ["calc.py", "tests/conftest.py", "tests/test_calc.py"]
PER_TEST = SEALED_TESTS["tests/test_calc.py"]["text"] + "\n\ndef test_no_json(monkeypatch):\n    {}\n    assert add(1, 1) == 2\n"


@pytest.mark.parametrize("now, named", [
    ("import sys, types\n\nsys.modules['calc'] = types.SimpleNamespace(add=lambda a, b: 5)\n", True),
    ("import sys\nfrom unittest import mock\n\nmock.patch.dict(sys.modules, {'calc': mock.Mock()}).start()\n", True),
    ("import sys\n\nimport pytest\n\n\n@pytest.fixture(autouse=True)\ndef _fake(monkeypatch):\n"
     "    monkeypatch.setitem(sys.modules, 'calc', None)\n", True),
    ("import sys\n\nsys.modules.update(calc=object())\n", True),
    # (a module no sealed test imports: an optional dependency stood in for; a module popped to be imported afresh)
    ("import sys\nfrom unittest import mock\n\nsys.modules['numpy'] = mock.MagicMock()\n", False),
    ("import sys\n\nsys.modules.pop('calc', None)\nsys.modules.update()\n", False),
    # own44fix: a module not the project's own (the standard library's, a dependency's) stood in for, or a swap undone
    # after the one test that makes it: each named on main
    ("import sys\n\nsys.modules['json'] = None\n", False),
    ("import sys\nfrom unittest import mock\n\nsys.modules['yaml'] = mock.MagicMock()\n", False),
    ("test:" + PER_TEST.replace("{}", "monkeypatch.setitem(sys.modules, 'json', None)"), False),
    ("test:" + PER_TEST.replace("{}", "monkeypatch.setitem(sys.modules, 'calc', None)"), False),
    ("test:" + PER_TEST.replace("{}", "with mock.patch.dict(sys.modules, {'calc': None}):\n        pass"), False),
    ("test:" + PER_TEST.replace("\ndef test_no", "\n@mock.patch.dict(sys.modules, {'calc': None})\ndef test_no")
     .replace("{}", "pass"), False),
    # (a swap left in place by a test, made at module level or in a fixture of the test module: named still)
    ("test:" + PER_TEST.replace("{}", "sys.modules['calc'] = None"), True),
    ("test:" + PER_TEST.replace("{}", "mock.patch.dict(sys.modules, {'calc': None}).start()"), True),
    ("test:" + PER_TEST.replace("{}", "pass") + "\nsys.modules['calc'] = None\n", True),
    ("test:" + PER_TEST.replace("{}", "pass").replace("def test_no", "@pytest.fixture(autouse=True)\ndef test_no"), False),
    ("test:" + PER_TEST.replace("{}", "monkeypatch.setitem(sys.modules, 'calc', None)").replace(
        "\ndef test_no", "\n@pytest.fixture(autouse=True)\ndef no"), True)])
def test_a_conftest_putting_a_stand_in_for_the_product_in_sys_modules_is_named(now, named):
    """own44: each passed a stop unnamed on main (the tests import the stand-in, not the product)."""
    from donegate.seal import faked

    file = "tests/test_calc.py" if now.startswith("test:") else "tests/conftest.py"
    found = faked.findings(SEALED_TESTS, {file: now.removeprefix("test:")}, PROJECT_FILES)
    assert [f["rule"] for f in found] == (["fixture-faked"] if named else []), found


# -- a test file read once a stop (`loosened.tests_of` kept by its text, its conftests and the project's interpreter) --

def _counted(monkeypatch) -> list:
    reads: list = []
    real = loosened._tests_of
    monkeypatch.setattr(loosened, "_tests_of", lambda *a: reads.append(a) or real(*a))
    monkeypatch.setattr(loosened, "_READ", {})
    return reads


def test_a_changed_test_file_is_read_once_a_stop_and_each_reader_gets_the_same_shapes(monkeypatch):
    """The own-suite stage read each changed sealed test file two or three times (`own_changed.changed_test_ids`, then
    `findings`, then again for a test that moved), ~0.15 CPU-s each for a 38 KB file: read once now, every reader
    handed an equal copy of its own (one changing it changes nothing for the next), `dead.FLAGS` set as a read sets it."""
    from donegate.gate import own_changed
    from donegate.seal import dead

    reads = _counted(monkeypatch)
    now = ATTACKS["assert-loosened"].replace("def test_near", "TOL = 1e-9\n\n\ndef test_near")
    sealed = loosened.shapes({"test_t.py": {"text": BASE}})
    fresh = loosened._tests_of(now, [])
    flags = dead.FLAGS
    reads.clear()
    assert own_changed.changed_test_ids(sealed, {"test_t.py": now}) == {"test_t.py::test_add"}
    dead.FLAGS = {}
    assert [f["rule"] for f in loosened.findings(sealed, {"test_t.py": now}, PASSING)] == ["assert-loosened"]
    import ast

    assert len(reads) == 1 and "TOL" in flags
    assert {k: ast.dump(v) for k, v in dead.FLAGS.items()} == {k: ast.dump(v) for k, v in flags.items()}
    got = loosened.tests_of(now, [])
    assert got == fresh and got is not loosened.tests_of(now, [])
    got["test_add"]["asserts"].clear()
    got.pop("test_div")
    assert loosened.tests_of(now, []) == fresh and len(reads) == 1


def test_a_file_that_does_not_parse_is_read_once_and_leaves_the_flags_as_they_were(monkeypatch):
    from donegate.seal import dead

    reads = _counted(monkeypatch)
    dead.FLAGS = {"X": None}
    assert loosened.tests_of("def test_(:\n") is None and dead.FLAGS == {"X": None}
    dead.FLAGS = {"Y": None}  # (the next file's guards: a read that does not parse sets none)
    assert loosened.tests_of("def test_(:\n") is None
    assert len(reads) == 1 and dead.FLAGS == {"Y": None}
    dead.FLAGS = {}


@pytest.mark.parametrize("first", ["honest", "weakened"])
def test_the_same_test_file_under_another_conftest_or_interpreter_is_read_again(monkeypatch, first):
    """What a test checks through a conftest helper, or under a version guard, is the conftest's and the interpreter's:
    the same text read with the honest helper first still names the helper that stopped asserting (and the other way),
    and a guard read for 3.11 then 3.13 counts the assert only for 3.11. Each fails if the kept reading is keyed by the
    test file's text alone."""
    from donegate.seal import dead

    reads = _counted(monkeypatch)
    honest, weakened = MOVED["helper-in-a-conftest"], MOVED_AWAY["conftest-helper-not-asserting"]
    order = [honest, weakened] if first == "honest" else [weakened, honest]
    named = [bool(_moved("x", *pair)) for pair in order]
    assert named == ([False, True] if first == "honest" else [True, False])
    try:
        counted = []
        for version in (["3.11.7", "3.13.0"] if first == "honest" else ["3.13.0", "3.11.7"]):
            dead.interpreter(version)
            counted.append(len(loosened.tests_of(GUARDED_NOW)["test_add"]["asserts"]))
        assert counted == ([1, 0] if first == "honest" else [0, 1])
    finally:
        dead.interpreter(None)
    assert len(reads) >= 4


def test_a_helper_many_tests_call_is_read_once_and_reads_as_it_did(monkeypatch):
    """`dead.inert` kept per node while one file is read (a helper is a part of every test that calls it): the same
    shapes as read without it, for every file of this module's tables (skips, guards, raises, helpers, unittest)."""
    from donegate.seal import dead

    monkeypatch.setattr(loosened, "_READ", {})
    texts = [*ATTACKS.values(), *HONEST.values(), *(t for t, _ in (*MOVED.values(), *MOVED_AWAY.values())), GUARDED_NOW,
             SHARED, SHARED.replace("        self.assertEqual(got, want)\n", "        pass\n")]
    for text in texts:
        assert dead.INERT is None and loosened._PARTS is None
        assert loosened.tests_of(text, [CONFTEST_HELPER]) == loosened._tests_of(text, [CONFTEST_HELPER]), text
    shapes = loosened.tests_of(SHARED)  # (a helper each test reaches, read once, counted for each: main's reading)
    assert {t: s["asserts"] for t, s in shapes.items()} == {
        "test_one": ["eq", "eq"], "test_two": ["eq"], "TestCalc::test_three": ["approx:places=7", "eq", "eq"],
        "TestCalc::test_four": ["approx:places=7", "eq"]}


SHARED = '''import unittest
from calc import add


def check(a, b):
    assert add(a, b) == a + b
    if False:
        assert add(a, b) == 0


def test_one():
    check(1, 2)
    assert add(0, 0) == 0


def test_two():
    check(2, 2)


class TestCalc(unittest.TestCase):
    assertAlmostEqual = lambda *a, **k: None

    def same(self, got, want):
        self.assertEqual(got, want)
        self.assertAlmostEqual(got, want)

    def test_three(self):
        self.same(add(1, 1), 2)
        check(1, 1)

    def test_four(self):
        self.same(add(2, 2), 4)
'''
LINKAGE = """
import json, os, platform, sys, tempfile
from donegate.seal import dead
spawned, watching = [], []
sys.addaudithook(lambda event, args: spawned.append(event) if watching and event in (
    "subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system") else None)
out = []
for path in (os.environ["PATH"], tempfile.mkdtemp()):  # (the second: a sandbox with no `file` program)
    os.environ["PATH"] = path
    dead._LINKAGE.clear()
    watching.append(1)
    got = dead._linkage()
    watching.clear()
    out.append([got, platform.architecture(sys.executable)[1]])
print(json.dumps({"out": out, "spawned": spawned}))
"""


def test_the_interpreters_linkage_is_read_from_its_header_as_platform_would_say_it_without_a_process():
    """`platform.architecture() != ('64bit', 'ELF')` is read against this machine's linkage (`seal.dead._linkage`):
    what the standard library says with the `file` program on PATH and without it, read from the interpreter's ELF
    header, starting no process (on main it ran `file` through platform's own subprocess call, outside the kit's
    wrapper)."""
    import json
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", LINKAGE], capture_output=True, text=True, timeout=60)
    got = json.loads(res.stdout)
    assert got["spawned"] == [] and all(mine == theirs for mine, theirs in got["out"]), got
    assert got["out"][1] == ["", ""], got  # (no `file`: platform's own '' on Linux)


COV_INI = "[pytest]\naddopts = --cov=calc --cov-fail-under=90\n"
COV_FLOW = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest -x\n"
COV_OVERRIDES = {  # {case: ({file: its text now}, {file: its sealed text}, named)} (own44d: each unnamed on main)
    "ci-step-zero": ({".github/workflows/ci.yml": COV_FLOW.replace("pytest -x", "pytest -x --cov-fail-under=0")}, {}, True),
    "ci-env-zero": ({".github/workflows/ci.yml": COV_FLOW + "        env:\n          PYTEST_ADDOPTS: --cov-fail-under=0\n"}, {}, True),
    "makefile-zero": ({"Makefile": "test:\n\tpytest -x --cov-fail-under=10\n"}, {"Makefile": "test:\n\tpytest -x\n"}, True),
    "nox-zero": ({"noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run('pytest', '--cov-fail-under=0')\n"},
                 {}, True),
    # look-alikes: raised, as low as it was at the seal, no threshold given
    "ci-step-raised": ({".github/workflows/ci.yml": COV_FLOW.replace("pytest -x", "pytest -x --cov-fail-under=95")}, {}, False),
    "makefile-as-sealed": ({"Makefile": "test:\n\tpytest -v --cov-fail-under=0\n"},
                           {"Makefile": "test:\n\tpytest --cov-fail-under=0\n"}, False),
    "ci-step-verbose": ({".github/workflows/ci.yml": COV_FLOW.replace("pytest -x", "pytest -x -v")}, {}, False),
}


@pytest.mark.parametrize("name", COV_OVERRIDES)
def test_a_test_command_lowering_the_threshold_of_addopts_is_named(name):
    now, was, named = COV_OVERRIDES[name]
    sealed = {".github/workflows/ci.yml": COV_FLOW, **was}
    got = scripts.cov_overridden("pytest.ini", COV_INI, now, sealed.get)
    assert [f["rule"] for f in got] == (["coverage-lowered"] if named else []), got


SLOW_SEALED = "import pytest\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SLOW_MARKED = {  # (own44d) {case: (the test file now, named)}: a --runslow conftest there at the seal, unchanged
    "sealed-test-marked": (SLOW_SEALED.replace("def test_add", "@pytest.mark.slow\ndef test_add"), True),
    "class-pytestmark": (SLOW_SEALED.replace("def test_add():\n    assert", "class TestAdd:\n    pytestmark = pytest.mark.slow\n\n"
                                             "    def test_add(self):\n        assert"), False),  # (a test renamed: deleted, not this rule)
    "module-pytestmark": (SLOW_SEALED + "\n\npytestmark = [pytest.mark.slow]\n", True),
    "slow-test-added-beside": (SLOW_SEALED + "\n\n@pytest.mark.slow\ndef test_big():\n    assert add(10**6, 1) == 10**6 + 1\n",
                               False),
    "another-mark": (SLOW_SEALED.replace("def test_add", "@pytest.mark.fast\ndef test_add"), False),
}


@pytest.mark.parametrize("name", SLOW_MARKED)
def test_a_sealed_test_newly_marked_as_a_conftests_hook_skips_is_named(name):
    """A `--runslow` conftest there at the seal and unchanged: a sealed test given the mark it skips is `skipped`
    (a mark added was no finding on main); a slow test added beside it, or another mark, is none."""
    from donegate.seal import gated

    now, named = SLOW_MARKED[name]
    conftest = CONFTEST + RUNSLOW_FORMS["keywords"]
    got = gated.newly_marked({"tests/test_calc.py": SLOW_SEALED}, {"tests/test_calc.py": now},
                             {"tests/test_calc.py::test_add"}, {"tests/conftest.py": conftest}.get)
    assert [f["rule"] for f in got] == (["skipped"] if named else []), got
