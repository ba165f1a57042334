"""What a test checks, by its syntax (issue 44, item 4; `donegate.seal.loosened`): each weakening named, each beside an
honest look-alike (an edit that keeps or strengthens what the test checks) that is no finding."""

from __future__ import annotations

import pytest

from donegate.seal import loosened

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
    "xfail": BASE.replace("def test_add():", "@pytest.mark.xfail\ndef test_add():"),
    "assert-removed": BASE.replace("    assert add(0, 0) == 0\n", ""),
    "assert-loosened": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3)"),
    "in-instead-of-eq": BASE.replace("assert add(2, 3) == 5", "assert add(2, 3) in (5, -1)"),
    "fewer-cases": BASE.replace(", (3, 3, 6)]", "]"),
    "wider-approx": BASE.replace("pytest.approx(0.3333)", "pytest.approx(0.3333, abs=1)"),
    "raises-broadened": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(Exception)"),
}
HONEST = {
    "unchanged": BASE,
    "assert-added": BASE.replace("    assert add(0, 0) == 0\n", "    assert add(0, 0) == 0\n    assert add(-1, 1) == 0\n"),
    "case-added": BASE.replace(", (3, 3, 6)]", ", (3, 3, 6), (0, 5, 5)]"),
    "test-added": BASE + "\n\ndef test_mul():\n    assert add(2, 2) == 4\n",
    "rewritten-same-strength": BASE.replace("assert add(2, 3) == 5", "assert add(3, 2) == 5"),
    "narrower-raises": BASE.replace("pytest.raises(ZeroDivisionError)", "pytest.raises(ZeroDivisionError, match='division')"),
    "helper-renamed": BASE.replace("from calc import add, div", "from calc import add, div\nfrom calc import add as plus"),
}


@pytest.mark.parametrize("name", ATTACKS)
def test_each_weakening_is_named(name):
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": ATTACKS[name]}, PASSING)
    rule = {"skip-call": "skipped", "xfail": "skipped", "in-instead-of-eq": "assert-loosened",
            "wider-approx": "assert-loosened"}.get(name, name)
    assert rule in {f["rule"] for f in found}, (name, found)
    assert all(f["test"].startswith("test_t.py::") for f in found)


@pytest.mark.parametrize("name", HONEST)
def test_an_honest_edit_is_no_finding(name):
    assert loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": HONEST[name]}, PASSING) == []


def test_a_test_that_failed_at_the_seal_is_not_counted():
    assert loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": ATTACKS["deleted"]}, PASSING - {"test_t.py::test_add"}) == []


def test_a_deleted_file_names_each_sealed_passing_test():
    found = loosened.findings(loosened.shapes({"test_t.py": {"text": BASE}}), {"test_t.py": None}, PASSING)
    assert {f["test"] for f in found} == {"test_t.py::test_add", "test_t.py::test_cases", "test_t.py::test_div", "test_t.py::test_near"}


INI = "[pytest]\ntestpaths = tests\naddopts = -q\nmarkers =\n    slow: slow tests\n"


@pytest.mark.parametrize("now", [INI.replace("-q", "-q -k 'not add'"), INI.replace("-q", "-q --deselect tests/t.py::test_add"),
                                 INI.replace("testpaths = tests", "testpaths = tests/other"),
                                 INI + "python_functions = check_*\n"])
def test_tests_excluded_by_configuration_are_named(now):
    assert [f["rule"] for f in loosened.config_findings({"pytest.ini": INI}, {"pytest.ini": now})] == ["config-excluded"]


@pytest.mark.parametrize("now", [INI, INI.replace("-q", "-q -v"), INI + "    fast: fast tests\n", INI.replace("testpaths = tests\n", "")])
def test_an_honest_configuration_edit_is_no_finding(now):
    assert loosened.config_findings({"pytest.ini": INI}, {"pytest.ini": now}) == []


def test_a_pyproject_gaining_a_deselect_is_named():
    before = "[project]\nname = 'x'\n"
    now = before + "\n[tool.pytest.ini_options]\naddopts = '-m \"not slow\"'\n"
    assert [f["rule"] for f in loosened.config_findings({"pyproject.toml": before}, {"pyproject.toml": now})] == ["config-excluded"]
    assert loosened.config_findings({"pyproject.toml": before}, {"pyproject.toml": before + "\n[project.urls]\nx = 'y'\n"}) == []


CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef calc():\n    return 1\n"


@pytest.mark.parametrize("now", [
    CONFTEST + "\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n",
    CONFTEST + "\ncollect_ignore = ['tests/test_calc.py']\n",
    CONFTEST + "\n\ndef pytest_runtest_setup(item):\n    pytest.skip('no')\n",
])
def test_a_collection_hook_added_to_a_conftest_is_named(now):
    assert [f["rule"] for f in loosened.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now})] == ["collection-hook"]


def test_an_honest_conftest_edit_is_no_finding():
    now = CONFTEST + "\n\n@pytest.fixture\ndef other():\n    return 2\n"
    assert loosened.conftest_findings({"conftest.py": CONFTEST}, {"conftest.py": now}) == []


COVERAGERC = "[run]\nbranch = true\n\n[report]\nfail_under = 90\nshow_missing = true\n"


@pytest.mark.parametrize("now", [COVERAGERC.replace("90", "50"), COVERAGERC.replace("fail_under = 90\n", "")])
def test_a_coverage_threshold_lowered_is_named(now):
    assert [f["rule"] for f in loosened.coverage_findings({".coveragerc": COVERAGERC}, {".coveragerc": now})] == ["coverage-lowered"]


@pytest.mark.parametrize("now", [COVERAGERC.replace("90", "95"), COVERAGERC.replace("branch = true", "branch = false")])
def test_a_coverage_threshold_kept_or_raised_is_no_finding(now):
    assert loosened.coverage_findings({".coveragerc": COVERAGERC}, {".coveragerc": now}) == []


def test_a_pyproject_coverage_threshold_lowered_is_named():
    before = "[tool.coverage.report]\nfail_under = 80\n"
    assert loosened.coverage_findings({"pyproject.toml": before}, {"pyproject.toml": before.replace("80", "10")})


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
])
def test_a_ci_test_step_removed_or_made_to_ignore_failures_is_named(now, rule):
    found = loosened.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now})
    assert [f["rule"] for f in found] == [rule]


@pytest.mark.parametrize("now", [FLOW.replace("ruff check .", "ruff check . && mypy"),
                                 FLOW.replace("python -m pytest -q", "python -m pytest -q -n 2"),
                                 FLOW + "      - name: more tests\n        run: python -m pytest tests/slow\n"])
def test_an_honest_ci_edit_is_no_finding(now):
    assert loosened.ci_findings({".github/workflows/ci.yml": FLOW}, {".github/workflows/ci.yml": now}) == []
