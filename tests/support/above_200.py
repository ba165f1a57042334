"""One project of more than 200 own tests holding items that have no test function of their own, sealed once in the
whole test run (`repos.sealed_project`) for tests/gate/test_real_projects.py (a conftest's own items: wrapt 2.5.2) and
tests/gate/test_own_doctests.py (doctests, in a product module and in a test file's docstring: inflect 7.4.0). Above
200 tests each test's function is checked as it starts; either kind of item read as a replaced function left the whole
own suite not kept, which the seal's `KEPT of KEPT pass` shows: each file's test then stops on its own copy, breaking
what only its own kind of item sees. Both files' tests read one stop (`broken`) that breaks what each kind alone sees."""

from __future__ import annotations

from pathlib import Path

TWICE = ('def twice(n):\n    """The number doubled.\n\n    >>> twice(21)\n    42\n    >>> twice(0)\n    0\n    """\n'
         '    return add(n, n)\n')
CALC = "def add(a, b):\n    return a + b\n\n\n" + TWICE
# wrapt 2.5.2's tests/conftest.py collects its mypy pairs (`mypy_*.py` beside an `.out`) as its own `pytest.Item`s.
CASES = ("import pytest\n\nimport calc\n\n\nclass CaseItem(pytest.Item):\n    def __init__(self, *, spec, **kw):\n"
         "        super().__init__(**kw)\n        self.spec = spec\n\n    def runtest(self):\n        a, b, want = self.spec\n"
         "        got = calc.add(a, b)\n        if got != want:\n            raise AssertionError(f'add({a}, {b}) = {got}, not {want}')\n\n"
         "    def reportinfo(self):\n        return self.path, 0, self.name\n\n\nclass CaseFile(pytest.File):\n"
         "    def collect(self):\n        for line in self.path.read_text().splitlines():\n"
         "            a, b, want = map(int, line.split())\n"
         "            yield CaseItem.from_parent(self, name=f'add_{a}_{b}', spec=(a, b, want))\n\n\n"
         "def pytest_collect_file(file_path, parent):\n    if file_path.suffix == '.case':\n"
         "        return CaseFile.from_parent(parent, path=file_path)\n")
# 201 tests and a doctest in the test file's own docstring (inflect's test files hold some).
MANY = ('"""The sums.\n\n>>> 1 + 1\n2\n"""\nimport pytest\n\nimport calc\n\n\n@pytest.mark.parametrize("n", range(201))\n'
        'def test_add(n):\n    assert calc.add(n, 0) == n\n')
FILES = {"calc.py": CALC, "pytest.ini": "[pytest]\naddopts = --doctest-modules\n", "tests/conftest.py": CASES,
         "tests/add.case": "1 2 3\n2 2 4\n", "tests/test_many.py": MANY}
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
KEPT = 201 + 2 + 1 + 1  # the parametrised tests, the conftest's items, the test file's doctest, calc.twice's


def sealed(tmp_path_factory, kit_home: Path) -> Path:
    """A copy of the project, sealed with all `KEPT` of its own tests passing."""
    from tests.support.repos import sealed_project

    return sealed_project(tmp_path_factory, kit_home, "own-above-200", FILES, HIDDEN, KEPT)


# `add` broken where b is 2 (only the conftest's items ask that: `1 2 3`, `2 2 4`) and `twice` broken for 21 (only
# calc.twice's example asks that), `mul` added: the project's stop for both files' tests, once in the run.
BROKEN = CALC.replace("return a + b\n", "return a + b if b != 2 else 0\n").replace(
    "    return add(n, n)\n", "    return add(n, n) if n != 21 else 0\n") + "\n\ndef mul(a, b):\n    return a * b\n"
FAILING = ["calc.py::calc.twice", "tests/add.case::add_1_2", "tests/add.case::add_2_2"]


def failing(res: dict, kind: str) -> list[str]:
    """The stop's failing ids of one kind of item (`calc.py::` the doctests, `tests/add.case::` the conftest's items),
    sorted; every failing id is one of FAILING (neither break seen by another item). Each file's test reads its own
    kind's: a break of the other kind's case fails that test alone."""
    ids = sorted(f["id"] for f in res["own"]["failing"])
    assert set(ids) <= set(FAILING), res["own"]
    return [i for i in ids if i.startswith(kind)]


def broken(tmp_path_factory, kit_home: Path) -> dict:
    """The stop of `BROKEN` (`own_batch.shared_stop`): its returncode, stderr and `own` record. Each of its failures
    is one kind of item's alone (`FAILING`, and no other)."""
    from tests.support import own_batch

    def edit(repo: Path) -> None:
        (repo / "calc.py").write_text(BROKEN)

    return own_batch.shared_stop(tmp_path_factory, kit_home, "own-above-200-broken",
                                 lambda home: sealed(tmp_path_factory, home), edit)
