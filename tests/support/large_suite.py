"""A suite above `second.ALL_UP_TO` (250 old tests of `calc.twice` and one new requirement, `calc.half`), sealed once in
the whole test run, and the stops tests/gate/test_redteam_second.py and tests/gate/test_second_share.py read, run once
(`pool.SharedRuns`): a seal of 251 tests runs them all, a stop of them ~1 CPU-s, and the two files asked the same stops
(a special case of the new requirement right under pytest only; the fix, in a session of its own) of a seal per worker.

Sessions: `disagreed` (the special case, then one moved to a regression test), `fixed` (the special case, then the
fix), `fresh` (the fix in a session that never disagreed). Each stop's record: `returncode`, `stdout`, `stderr` and the
stop's ledger `line`."""

from __future__ import annotations

from pathlib import Path

from donegate.hidden import second

OLD = "def test_{i}():\n    from calc import twice\n    assert twice({i}) == {d}\n"
NEW = "def test_new():\n    from calc import half\n    assert half(10) == 5\n"
BASE = "def twice(x):\n    return 2 * x\n"
RIGHT = BASE + "\n\ndef half(x):\n    return x // 2\n"
# Right on the new requirement under pytest only: the runs disagree on it at any stop, however large the suite.
UNDER_PYTEST = RIGHT.replace("return x // 2", "return x // 2 if 'pytest' in sys.modules else 0").replace(
    "def twice", "import sys\n\n\ndef twice", 1)
# Right on every test but one regression test, and on that one only under pytest: a share of the old tests
# (199 of 250) misses it one stop in five.
ONE_OLD = ("import sys\n\n\ndef twice(x):\n    return 2 * x if x != 7 or 'pytest' in sys.modules else 0\n\n\n"
           "def half(x):\n    return x // 2\n")
# Old tests: above second.ALL_UP_TO, so a stop checks a drawn share of them (250, not 600: test_7 is left out of a
# share one stop in five).
MANY = second.ALL_UP_TO + 50
SOURCE = "".join(OLD.format(i=i, d=2 * i) for i in range(MANY)) + NEW
STOPS = {"disagreed": [UNDER_PYTEST, ONE_OLD], "fixed": [UNDER_PYTEST, RIGHT], "fresh": [RIGHT]}


def stops(tmp_path_factory, session: str) -> list[dict]:
    """The records of `session`'s stops (`STOPS`), in order."""
    from tests.support.pool import SharedRuns, shared_root

    def run(key, base: Path) -> dict:
        from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload

        home = base / "home"
        home.mkdir()
        env = {"DONEGATE_HOME": str(home)}
        repo = make_repo(base / "repo", {"calc.py": BASE})
        hidden = base / "hidden" / "test_calc.py"
        hidden.parent.mkdir()
        hidden.write_text(SOURCE)
        res = seal(repo, hidden, extra_env=env)
        assert res.returncode == 0, res.stderr
        out: dict[str, list[dict]] = {}
        for name, products in STOPS.items():
            for product in products:
                (repo / "calc.py").write_text(product)
                res = run_hook(stop_payload(repo, session=name), env=env)
                out.setdefault(name, []).append({"returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr,
                                                 "line": stop_lines(home)[-1]})
        return out

    return SharedRuns(shared_root(tmp_path_factory, "large-suite"), ["stops"], run, threads=0)["stops"][session]
