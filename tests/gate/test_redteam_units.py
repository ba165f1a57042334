"""Red team of issue 45: hidden tests of the shapes the second run left to the first (`unsupported`), through the
real Stop hook (real runs, real repos, one pooled seal).

A test the second harness cannot run faithfully is not double-checked, so a product right only under pytest passed
every stop for exactly those tests. Each attack below is such a product, seen passing on the code before it, beside
an honest look-alike that passes with every test double-checked.

- pytest 9's `subtests` fixture: served by the second harness as pytest serves it (each `subtests.test(...)` block
  runs, an exception in it is that subtest's failure, the test goes on; any failed subtest fails the test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.repos import make_repo, run_hook, seal, sealed_copy, stop_lines, stop_payload, write_config

NEW_PYTEST = pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="the subtests fixture is pytest 9's")

ROWS = ("import calc\n\n\ndef test_mul_rows(subtests):\n    for a, b in [(2, 3), (0, 7), (3, 3)]:\n"
        "        with subtests.test(msg='row', a=a, b=b):\n            assert calc.mul(a, b) == a * b\n")
BUG = "def mul(a, b):\n    return a + b\n"
RIGHT = "def mul(a, b):\n    return a * b\n"
# Right only where pytest runs it: `mul` is what only the subtests test calls.
UNDER_PYTEST = "import sys\n\n\ndef mul(a, b):\n    return a * b if 'pytest' in sys.modules else a + b\n"


def _sealed(tmp_path_factory, kit_home) -> Path:
    """`calc.py` with the bug and the hidden tests sealed for it: once per worker, each test a copy (`sealed_copy`)."""
    def build(repo: Path, home: Path) -> None:
        make_repo(repo, {"calc.py": BUG})
        hidden = repo.parent / "hidden"
        hidden.mkdir()
        (hidden / "test_rows.py").write_text(ROWS)
        res = seal(repo, *sorted(hidden.iterdir()), extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr

    write_config(kit_home, "scan: off\n")  # the runs are what is tested
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "red2-units", build, kit_home, own=False)


def _stop(repo: Path, kit_home: Path, product: str, session: str):
    (repo / "calc.py").write_text(product)
    res = run_hook(stop_payload(repo, session=session))
    return res, stop_lines(kit_home)[-1]["gates"]["acceptance"]


@NEW_PYTEST
def test_a_product_right_only_under_pytest_for_a_subtests_test_disagrees(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, UNDER_PYTEST, "attack")
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert accept["tamper"]["rule"] == "disagree", accept
    assert list(accept["second"]["disagree"]) == ["test_rows.py::test_mul_rows"], accept["second"]


@NEW_PYTEST
def test_an_honest_product_passes_its_subtests_in_both_runs(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, RIGHT, "honest")
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, accept)
    assert accept["second"]["checked"] == 1 and not accept["second"]["unsupported"], accept["second"]


# The harness's `subtests`, run directly (`second.run`, unconfined): what pytest does with each block.
SUBTESTS = ("import pytest\n\n\ndef test_all_pass(subtests):\n    for i in range(3):\n        with subtests.test(msg='i', i=i):\n"
            "            assert i < 3\n\n\ndef test_one_fails(subtests):\n    for i in range(3):\n        with subtests.test(i=i):\n"
            "            assert i != 1\n\n\ndef test_goes_on_after_a_failed_one(subtests):\n    with subtests.test('first'):\n"
            "        assert False\n    raise KeyError('the test went on')\n\n\ndef test_a_skipped_one_fails_nothing(subtests):\n"
            "    with subtests.test('skipped'):\n        pytest.skip('not here')\n    with subtests.test('raises', kind=1):\n"
            "        with pytest.raises(ValueError):\n            int('x')\n")


@NEW_PYTEST
def test_the_second_harness_serves_subtests_as_pytest_does(tmp_path):
    import subprocess

    from donegate.hidden import second

    repo, store = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    store.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (store / "test_s.py").write_text(SUBTESTS)
    ids = [f"test_s.py::{t}" for t in ("test_all_pass", "test_one_fails", "test_goes_on_after_a_failed_one",
                                         "test_a_skipped_one_fails_nothing")]
    out = second.run(store, repo, ids, timeout=60, kind="none")
    assert {i.partition("::")[2]: (r["outcome"], r["why"]) for i, r in out.results.items()} == {
        "test_all_pass": ("passed", ""), "test_one_fails": ("failed", "AssertionError"),
        "test_goes_on_after_a_failed_one": ("failed", "KeyError"), "test_a_skipped_one_fails_nothing": ("passed", "")}, out.problem
