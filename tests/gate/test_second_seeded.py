"""Tests drawing their inputs from `dg_random` are double-checked (issue 36, item 4, and issue 40): the second harness
serves the fixture with the same per-stop, per-test draws as the first run's plugin, from each test's own seed
(`seeded.seed_of`); the stop's secret never reaches the second run. Before, such a test was checked by the first
run only, so a product right only under pytest passed on it.
"""

from __future__ import annotations

from pathlib import Path

from donegate.hidden import second
from donegate.hidden.seeded import seed_of, seeded_rng
from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload

HIDDEN = '''\
def test_fixed_invoice():
    from invoice import total
    assert total([(2, 1000)], 10) == 1800


def test_random_invoice(dg_random):
    from invoice import total
    items = [(dg_random.randint(2, 9), dg_random.randint(1000, 99999)) for _ in range(3)]
    pct = dg_random.randint(1, 40)
    want = sum(q * p for q, p in items) * (100 - pct) // 100
    assert total(items, pct) == want
'''
WRONG = "def total(items, pct=0):\n    return 0\n"
RIGHT = "def total(items, pct=0):\n    return sum(q * p for q, p in items) * (100 - pct) // 100\n"
# Right on the fixed test everywhere; on more than one line (only the drawn test has those), right under pytest only.
UNDER_PYTEST = ("import sys\n\n\ndef total(items, pct=0):\n"
                "    if len(items) > 1 and 'pytest' not in sys.modules:\n        return 0\n"
                "    return sum(q * p for q, p in items) * (100 - pct) // 100\n")


def _stop(tmp_path: Path, kit_home: Path, product: str) -> tuple[int, dict]:
    repo = make_repo(tmp_path / "repo", {"invoice.py": WRONG})
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_invoice.py").write_text(HIDDEN)
    res = seal(repo, hidden / "test_invoice.py")
    assert res.returncode == 0, res.stderr
    (repo / "invoice.py").write_text(product)
    hook = run_hook(stop_payload(repo, session="seeded"))
    return hook.returncode, stop_lines(kit_home)[-1]


def test_a_test_drawing_from_dg_random_is_double_checked(tmp_path, kit_home):
    code, line = _stop(tmp_path, kit_home, RIGHT)
    assert code == 0 and line["verdict"] == "pass", line
    two = line["gates"]["acceptance"]["second"]
    assert two["checked"] == 2 and two["unsupported"] == {}, two


def test_a_product_right_on_drawn_inputs_only_under_pytest_is_a_disagreement(tmp_path, kit_home):
    # On the old code the drawn test was not double-checked and this stop passed.
    code, line = _stop(tmp_path, kit_home, UNDER_PYTEST)
    acc = line["gates"]["acceptance"]
    assert code == 2 and line["verdict"] != "pass", line
    assert acc["tamper"]["rule"] == "disagree" and "test_random_invoice" in acc["tamper"]["what"], acc
    assert acc["seed"] not in str(acc.get("second")) and acc["seed"] not in acc["tamper"]["what"]


def test_both_runs_draw_the_same_inputs_from_the_stops_seed_and_the_second_is_never_given_it(tmp_path, monkeypatch):
    seed, nodeid = "ab" * 16, "test_d.py::test_draw"
    want = seeded_rng(seed, nodeid).getrandbits(64)  # what the first run's plugin hands this test at that stop
    store, repo = tmp_path / "store", make_repo(tmp_path / "repo", {"keep.py": "def keep(x):\n    return x\n"})
    store.mkdir()
    (store / "test_d.py").write_text(f"from keep import keep\n\n\ndef test_draw(dg_random):\n"
                                     f"    assert keep(dg_random.getrandbits(64)) == {want}\n")
    sent: list[str] = []
    real = second.proc.run

    def spy(argv, **kw):
        sent.append(kw["input"])
        return real(argv, **kw)

    monkeypatch.setattr(second.proc, "run", spy)
    same = second.run(store, repo, [nodeid], timeout=120, kind="none", seed=seed)
    assert same.results[nodeid]["outcome"] == "passed", same.results
    assert seed not in sent[0] and str(seed_of(seed, nodeid)) in sent[0]
    other = second.run(store, repo, [nodeid], timeout=120, kind="none", seed="cd" * 16)
    assert other.results[nodeid]["outcome"] == "failed", other.results  # another stop, other draws
    unseeded = second.run(store, repo, [nodeid], timeout=120, kind="none")
    assert unseeded.results[nodeid]["outcome"] == "unsupported", unseeded.results  # nothing to draw from
