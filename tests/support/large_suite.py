"""A suite above `second.ALL_UP_TO` (210 old tests of `calc.twice` and one new requirement, `calc.half`), sealed once in
the whole test run, and the stops tests/gate/test_redteam_second.py and tests/gate/test_second_share.py read, run once
(`pool.SharedRuns`): a seal of 211 tests runs them all, a stop of them ~1 CPU-s, and the two files asked the same stops
(a special case of the new requirement right under pytest only; the fix, in a session of its own) of a seal per worker.

Sessions: `disagreed` (the special case, then one moved to a regression test), `fixed` (the fix, in a session whose
counters are the ones `disagreed`'s first stop left: the same special case at the same tree, its stop not run twice),
`fresh` (the fix in a session that never disagreed), `replaced` (a product that replaces every collected test's function,
with the gc search the project allows: `scan_allow: [gc-objects]`, written before that stop). Each stop's record:
`returncode`, `stdout`, `stderr` and the stop's ledger `line`."""

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
# (199 of 210) misses it one stop in nineteen.
ONE_OLD = ("import sys\n\n\ndef twice(x):\n    return 2 * x if x != 7 or 'pytest' in sys.modules else 0\n\n\n"
           "def half(x):\n    return x // 2\n")
# Old tests: above second.ALL_UP_TO, so a stop checks a drawn share of them (199 of 210: 11 left out at every draw).
# Every test costs at each of the pool's six runs; what the tests prove needs only a share smaller than the suite (the
# stops after a disagreement are told by the record's `every`, not by a draw that happened to miss test_7).
MANY = second.ALL_UP_TO + 10
SOURCE = "".join(OLD.format(i=i, d=2 * i) for i in range(MANY)) + NEW
# Wrong on the new requirement, and every collected test's function replaced at the first call (tests/gate/test_redteam.py).
REPLACES = ("import gc\n\n\ndef twice(x):\n    for it in [o for o in gc.get_objects() if type(o).__name__ == 'Function']:\n"
            "        it._obj = lambda **kw: None\n    return 2 * x\n\n\ndef half(x):\n    return 0\n")
STOPS = {"disagreed": [UNDER_PYTEST, ONE_OLD], "fixed": [RIGHT], "fresh": [RIGHT], "replaced": [REPLACES]}


def _counted_as(home: Path, session: str, other: str) -> None:
    """`other`'s counters made `session`'s (its stops, blocks and disagreements), through the kit's own counters."""
    from donegate import paths
    from donegate.sessions.counters import FileCounters

    counters = FileCounters(paths.state_dir(home))
    was = counters.peek(session)
    with counters.transact(other) as now:
        now.update({k: v for k, v in was.items() if k != "session"})


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
            if name == "replaced":
                (home / "donegate.yaml").write_text("scan_allow: [gc-objects]\n")
            for product in products:
                (repo / "calc.py").write_text(product)
                res = run_hook(stop_payload(repo, session=name), env=env)
                out.setdefault(name, []).append({"returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr,
                                                 "line": stop_lines(home)[-1]})
                if name == "disagreed" and len(out[name]) == 1:  # `fixed` starts where this stop left its session
                    _counted_as(home, "disagreed", "fixed")
        return out

    return SharedRuns(shared_root(tmp_path_factory, "large-suite"), ["stops"], run, threads=0)["stops"][session]
