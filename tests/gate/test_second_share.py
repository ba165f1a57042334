"""What the second run checks at a stop (issue 40): every sealed test up to `second.ALL_UP_TO`; above, every new
requirement (a test that did not pass at the seal) at every stop, and a share of the rest drawn afresh per stop."""

from __future__ import annotations

from donegate.hidden import second
from tests.support import large_suite
from tests.support.repos import pooled_files, run_hook, stop_lines, stop_payload


def _ids(n: int) -> list[str]:
    return [f"test_a.py::test_{i}" for i in range(n)]


def test_every_test_is_checked_up_to_the_limit():
    tests = _ids(second.ALL_UP_TO)
    assert second.drawn(tests, {"baseline": {"passing": tests}}) == tests


def test_above_it_every_new_requirement_always_and_a_share_of_the_rest_drawn_per_stop():
    tests = _ids(1000)
    new = set(tests[::50])  # 20 tests that failed at the seal
    manifest = {"baseline": {"passing": [t for t in tests if t not in new], "failing": sorted(new)}}
    draws = [second.drawn(tests, manifest) for _ in range(20)]
    for d in draws:
        assert new <= set(d)
        assert d == [t for t in tests if t in set(d)]  # the sealed order
        assert len(d) == len(new) + (1000 - len(new)) // second.SHARE
    assert len({tuple(d) for d in draws}) == 20  # drawn afresh each time
    assert set().union(*draws) > set(draws[0])
    # A test the seal did not run (added later, or no baseline recorded) counts as a new requirement.
    assert second.drawn(tests, {}) == tests


def test_a_small_suite_above_the_limit_checks_at_least_the_limit():
    tests = _ids(second.ALL_UP_TO + 40)
    d = second.drawn(tests, {"baseline": {"passing": tests}})
    assert len(d) == second.ALL_UP_TO


BASE = "def twice(x):\n    return 2 * x\n"
RIGHT = BASE + "\n\ndef half(x):\n    return x // 2\n"
# Right on the new requirement under pytest only: checked at every stop however large the suite.
UNDER_PYTEST = BASE + "\n\nimport sys\n\n\ndef half(x):\n    return x // 2 if 'pytest' in sys.modules else 0\n"


def _stop(tmp_path_factory, kit_home, product: str, name: str, source: str) -> tuple[int, dict]:
    """One stop with `product` as calc.py against the sealed `name` (`source`). The seal reads nothing of the product:
    sealed once per run for the tests of one suite (`pooled_files`), as a seal of a large suite runs it all."""
    repo = pooled_files(tmp_path_factory, kit_home, {"calc.py": BASE}, name, source)
    (repo / "calc.py").write_text(product)
    hook = run_hook(stop_payload(repo, session="share"))
    return hook.returncode, stop_lines(kit_home)[-1]["gates"]["acceptance"]


def test_a_large_suite_checks_a_drawn_share_and_says_so(tmp_path_factory):
    (stop,) = large_suite.stops(tmp_path_factory, "fresh")  # the fix, in a session that never disagreed
    acc = stop["line"]["gates"]["acceptance"]
    assert stop["returncode"] == 0 and acc["ok"], acc
    assert acc["second"]["drawn"] == {"checked": second.ALL_UP_TO, "of": large_suite.MANY + 1}, acc["second"]


def test_a_new_requirement_right_only_under_pytest_is_caught_in_a_large_suite(tmp_path_factory):
    stop = large_suite.stops(tmp_path_factory, "disagreed")[0]  # its first stop, in a drawn share
    acc = stop["line"]["gates"]["acceptance"]
    assert stop["returncode"] == 2 and acc["tamper"]["rule"] == "disagree" and "test_new" in acc["tamper"]["what"], acc


# An honest suite whose last test needs every earlier one to have run (each leaves a line in a file): a drawn share
# leaves most of them out, and the last test then fails in the second run only. The kit checks such a disagreement
# again with every sealed test before it in pytest's order: it passes then, so the stop passes.
STEP = ("import os\nimport pytest\nLOG = os.path.join(os.environ.get('TMPDIR') or '/tmp', 'steps.log')\n\n\n"
        "@pytest.mark.parametrize('i', range({n}))\ndef test_step(i):\n    from calc import twice\n"
        "    with open(LOG, 'a') as f:\n        f.write(f'{{i}}\\n')\n    assert twice(i) == 2 * i\n\n\n"
        "def test_every_step_then_half():\n    from calc import half\n"
        "    assert len(set(open(LOG).read().split())) == {n}\n    assert half(10) == 5\n")


STEPS = second.ALL_UP_TO + 10


def _ordered(tmp_path_factory, kit_home, product: str) -> tuple[int, dict]:
    # a share leaves out 11 of the 210 steps at every draw (199 drawn): the last test fails in the second run at every stop
    return _stop(tmp_path_factory, kit_home, product, "test_steps.py", STEP.format(n=STEPS))


def test_a_test_that_needs_the_earlier_ones_is_not_a_disagreement(tmp_path_factory, kit_home):
    code, acc = _ordered(tmp_path_factory, kit_home, RIGHT)
    assert code == 0 and acc["ok"], acc
    assert acc["second"]["confirmed"] == {"tests": STEPS + 1, "cleared": ["test_steps.py::test_every_step_then_half"]}, acc


def test_the_same_suite_right_only_under_pytest_still_disagrees(tmp_path_factory, kit_home):
    code, acc = _ordered(tmp_path_factory, kit_home, UNDER_PYTEST)
    assert code == 2 and acc["tamper"]["rule"] == "disagree" and "test_every_step_then_half" in acc["tamper"]["what"], acc
