"""Blocks that hand out no answer key (issue 36, item 4): held-back tests and inputs drawn per stop.

Through the real hook: a repository sealed with shown, held-back (`seal --held`) and randomised (`dg_random`)
tests. A session that only hard-codes the values its blocks reveal (a lookup table of every `where ... =
total(...)` and expected value shown so far) never passes: the breaker hands it to a person. The honest
look-alike (the right implementation) passes at its first stop. No block shows a held-back test's id,
inputs, expected values or source, nor the stop's seed; the report measures the hard-coding rate.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from donegate.hidden.seeded import seeded_rng
from tests.support.repos import KIT, make_repo, run_hook, seal, sealed_copy, stop_lines, stop_payload, write_config

WRONG = "def total(items, pct=0):\n    return 0\n"
RIGHT = "def total(items, pct=0):\n    return sum(q * p for q, p in items) * (100 - pct) // 100\n"

SHOWN = '''\
def test_fixed_invoice():
    from invoice import total
    assert total([(2, 1000)], 10) == 1800


def test_random_invoice(dg_random):
    from invoice import total
    items = [(dg_random.randint(2, 9), dg_random.randint(1000, 99999))]
    pct = dg_random.randint(1, 40)
    want = items[0][0] * items[0][1] * (100 - pct) // 100
    assert total(items, pct) == want
'''

HELD = '''\
import pytest


def test_every_line_counts(dg_random):
    """Totals add every line of the invoice."""
    from invoice import total
    items = [(dg_random.randint(2, 9), dg_random.randint(100000, 999999)) for _ in range(3)]
    pct = dg_random.randint(1, 40)
    want = sum(q * p for q, p in items) * (100 - pct) // 100
    assert total(items, pct) == want


@pytest.mark.parametrize("qty,price", [(7, 424242), (9, 535353)])
def test_discount_on_bulk_orders(qty, price):
    from invoice import total
    assert total([(qty, price)], 25) == qty * price * 75 // 100
'''


def _sealed(tmp_path_factory, kit_home: Path) -> Path:
    """`invoice.py` (WRONG) with SHOWN sealed shown and HELD held back (`seal --held`): sealed once for the run, a copy
    for each test (`repos.sealed_copy`); the seal's own words checked where it is made."""
    def build(repo: Path, home: Path) -> None:
        make_repo(repo, {"invoice.py": WRONG})
        hidden = repo.parent / "hidden"
        hidden.mkdir()
        (hidden / "test_invoice.py").write_text(SHOWN)
        (hidden / "test_invoice_rules.py").write_text(HELD)
        res = seal(repo, hidden / "test_invoice.py", "--held", str(hidden / "test_invoice_rules.py"),
                   extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr
        assert "3 of 5 tests held back" in res.stdout
        assert "warning" not in res.stdout  # requirement names without values

    write_config(kit_home, "max_blocks: 4\nmax_same_failure: 0\n")
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "held-invoice", build, kit_home)


def _commit(repo: Path, text: str, n: int) -> None:
    (repo / "invoice.py").write_text(text)
    subprocess.run(["git", "-C", str(repo), "commit", "-qam", f"try {n}", "--allow-empty"], check=True, timeout=30)


def _table(feedback: str, table: dict[str, int]) -> None:
    """What a block reveals: each `assert GOT == WANT` with its `where GOT = total(ARGS)`."""
    lines = feedback.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*assert (\S+) == (\d+)\s*$", line)
        if not m:
            continue
        for nxt in lines[i + 1:i + 3]:
            w = re.match(r"\s*\+\s*where \S+ = (?:total|<function total at 0x[0-9a-f]+>)\((.*)\)\s*$", nxt)
            if w:
                table[w.group(1)] = int(m.group(2))


def _lookup(table: dict[str, int]) -> str:
    return ("TABLE = " + repr(table) + "\n\n\ndef total(items, pct=0):\n"
            "    return TABLE.get(f'{items!r}, {pct!r}', 0)\n")


def _held_secrets(seed: str) -> list[str]:
    """What a held-back test's block must never show: its ids, inputs and expected values at this stop."""
    rng = seeded_rng(seed, "test_invoice_rules.py::test_every_line_counts")
    items = [(rng.randint(2, 9), rng.randint(100000, 999999)) for _ in range(3)]
    pct = rng.randint(1, 40)
    want = sum(q * p for q, p in items) * (100 - pct) // 100
    return ["test_every_line_counts", "test_discount_on_bulk_orders", "424242", "535353", "test_invoice_rules",
            str(want), *(str(p) for _, p in items), str(7 * 424242 * 75 // 100)]


def test_a_session_that_only_hard_codes_revealed_values_never_passes(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    table: dict[str, int] = {}
    verdicts = []
    for n in range(1, 7):
        res = run_hook(stop_payload(repo, session="hardcoder"))
        line = stop_lines(kit_home)[-1]
        verdicts.append(line["verdict"])
        if line["verdict"] != "block":
            break
        feedback = res.stderr
        accept = line["gates"]["acceptance"]
        assert accept["seed"] and accept["seed"] not in feedback
        assert "held-back requirement: Totals add every line of the invoice. (1 test fails" in feedback
        assert "held-back requirement: discount on bulk orders (2 tests fail" in feedback
        for secret in _held_secrets(accept["seed"]):
            assert secret not in feedback, secret
        for src in HELD.splitlines():
            if len(src.strip()) > 12:
                assert src.strip() not in feedback
        assert "+  where " in feedback  # the shown random test still shows its assertion, with new values each stop
        _table(feedback, table)
        _commit(repo, _lookup(table), n)
    assert verdicts[-1] == "gave_up", verdicts  # the breaker hands it over; it never passed
    assert "pass" not in verdicts
    lines = stop_lines(kit_home)
    # Once the table covers the fixed shown test, the stops whose shown tests would pass are blocked by
    # the held-back ones: the measured hard-coding rate.
    assert any(r["gates"]["acceptance"]["held_back"]["failed"] == 3 for r in lines if "acceptance" in r["gates"])
    seeds = [r["gates"]["acceptance"]["seed"] for r in lines if "acceptance" in r["gates"]]
    assert len(set(seeds)) == len(seeds)  # a new secret at every stop


def test_the_right_implementation_passes_at_its_first_stop(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    _commit(repo, RIGHT, 1)
    res = run_hook(stop_payload(repo, session="honest"))
    line = stop_lines(kit_home)[-1]
    assert res.returncode == 0 and line["verdict"] == "pass", (res.stderr, line)
    assert line["gates"]["acceptance"]["held_back"] == {"sealed": 3, "failed": 0, "shown_failed": 0,
                                                        "shown_passed": True, "blocked": False}
    # The second harness serves dg_random with the same draws (tests/gate/test_second_seeded.py): all five are
    # double-checked.
    assert line["gates"]["acceptance"]["second"]["unsupported"] == {}
    assert "not double-checked" not in res.stdout, res.stdout


def test_shown_tests_still_show_their_assertion(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res = run_hook(stop_payload(repo, session="first"))
    assert res.returncode == 2
    assert "assert 0 == 1800" in res.stderr and re.search(r"where 0 = <function total at 0x[0-9a-f]+>\(\[\(2, 1000\)\], 10\)", res.stderr)
    assert "5 of 5 acceptance tests fail (3 of them held back)" in res.stderr


def test_the_report_counts_stops_a_held_back_test_blocked(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    # Shown tests pass (the fixed one by its value, the random one by the formula), the held-back ones do not.
    _commit(repo, "def total(items, pct=0):\n    q, p = items[0]\n    return q * p * (100 - pct) // 100\n", 1)
    res = run_hook(stop_payload(repo, session="partial"))
    assert res.returncode == 2, res.stderr
    assert "1 of 5 acceptance tests fail (1 of them held back)" in res.stderr  # three lines: only that one fails
    _commit(repo, RIGHT, 2)
    assert run_hook(stop_payload(repo, session="partial")).returncode == 0
    out = subprocess.run([sys.executable, "-m", "donegate", "report", "--json"], capture_output=True, text=True,
                         timeout=120, cwd=KIT)
    assert out.returncode == 0, out.stderr
    rate = json.loads(out.stdout)["hard_coding"]
    assert rate == {"stops_with_held_back": 2, "shown_passed": 2, "held_back_blocked": 1, "rate_pct": 50.0}
    text = subprocess.run([sys.executable, "-m", "donegate", "report"], capture_output=True, text=True, timeout=120,
                          cwd=KIT).stdout
    assert "hard-coding: 1 of 2 stops whose shown tests passed were blocked by a held-back test (50.0%)" in text


FIXED_ONLY = '''\
def test_fixed_invoice():
    from invoice import total
    assert total([(2, 1000)], 10) == 1800


def test_bulk_invoice():
    from invoice import total
    assert total([(7, 4242)], 25) == 22270
'''


def test_the_attack_on_tests_that_show_everything_passes_at_the_second_stop(tmp_path, kit_home):
    """The look-alike seal (every test shown, fixed values: `held_share: 0`, the kit's default before issue 36
    closed): the same lookup table passes at the second stop, with the product wrong on every other input.
    What the defence changes."""
    repo = make_repo(tmp_path / "repo", {"invoice.py": WRONG})
    (tmp_path / "test_invoice.py").write_text(FIXED_ONLY)
    write_config(kit_home, "max_blocks: 4\nmax_same_failure: 0\n")
    res = seal(repo, tmp_path / "test_invoice.py")
    assert res.returncode == 0 and "no test held back" in res.stdout, res.stderr
    table: dict[str, int] = {}
    first = run_hook(stop_payload(repo, session="hardcoder"))
    assert first.returncode == 2
    _table(first.stderr, table)
    _commit(repo, _lookup(table), 1)
    assert run_hook(stop_payload(repo, session="hardcoder")).returncode == 0
    assert stop_lines(kit_home)[-1]["verdict"] == "pass"


def test_requirement_names_never_carry_parameters():
    from donegate.seal import held

    assert held.humanise("test_discount_on_bulk_orders") == "discount on bulk orders"
    assert held.humanise("TestCart::test_total") == "cart: total"
    assert held.requirement("test_a.py::test_bulk[7-424242]", {}) == "bulk"
    assert held.requirement("test_a.py::test_bulk[7-424242]", {"test_bulk": "Bulk orders get 25% off."}) == \
        "Bulk orders get 25% off."
    ids = {"test_a.py::test_bulk[7-424242]": "bulk", "test_a.py::test_bulk[9-535353]": "bulk"}
    told = held.unnamed("2 of 5 sealed tests did not run: test_a.py::test_bulk[7-424242], test_a.py::test_bulk[9-535353]", ids)
    assert "424242" not in told and "test_bulk" not in told and told.count("a held-back test") == 2
    shown, counts = held.split({"test_a.py::test_bulk[7-424242]": "assert 1 == 2", "test_b.py::test_x": "m"}, ids)
    assert shown == {"test_b.py::test_x": "m"} and counts == {"bulk": 1}


def test_a_share_the_kit_picks_when_no_file_is_named(tmp_path):
    from donegate.seal import held

    (tmp_path / "test_a.py").write_text('def test_one():\n    """One rule."""\n\n\ndef test_two():\n    pass\n')
    ids = ["test_a.py::test_one", "test_a.py::test_two", "test_a.py::test_three[1]", "test_a.py::test_three[2]"]
    assert held.choose(ids, tmp_path, set(), 0.0) == {}  # held_share 0: none
    picked = held.choose(ids, tmp_path, set(), 0.5)
    assert len(picked) == 2 and set(picked) <= set(ids)
    assert len(held.choose(ids, tmp_path, set(), 0.01)) == 1  # a share above 0 holds back one at least
    assert held.choose(ids, tmp_path, {"test_a.py"}, 0.5) == {  # files named win over the share
        "test_a.py::test_one": "One rule.", "test_a.py::test_two": "two", "test_a.py::test_three[1]": "three",
        "test_a.py::test_three[2]": "three"}
    # `seal --add`: what was held back stays held back, with its name
    assert held.choose(ids, tmp_path, set(), 0.5, kept={"test_a.py::test_two": "kept name"}, pick_from=set()) == \
        {"test_a.py::test_two": "kept name"}


def test_a_held_back_name_holding_a_value_is_warned_about_at_the_seal(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"invoice.py": RIGHT})
    (tmp_path / "test_named.py").write_text('def test_bulk():\n    """Seven at 424242 cost 2227269."""\n'
                                            "    from invoice import total\n    assert total([(7, 424242)], 25) == 2227269\n")
    res = seal(repo, "--held", str(tmp_path / "test_named.py"))
    assert res.returncode == 0, res.stderr
    assert "1 of 1 tests held back" in res.stdout
    assert "warning: 1 held-back requirement name(s) hold digits" in res.stdout and "Seven at 424242" in res.stdout


# A person's own tests, sealed with no `--held` and the default config: one parametrised test whose cases
# all fail on the unchanged product, and one that already passes.
PERSON = '''\
import pytest


@pytest.mark.parametrize("items,pct,want", [
    ([(2, 1000)], 10, 1800),
    ([(7, 4242)], 25, 22270),
    ([(3, 333), (1, 50)], 0, 1049),
    ([(5, 200)], 50, 500),
])
def test_total(items, pct, want):
    from invoice import total
    assert total(items, pct) == want


def test_no_items_cost_nothing():
    from invoice import total
    assert total([], 30) == 0
'''


def _person_sealed(tmp_path_factory, kit_home: Path) -> Path:
    """The person's file sealed under the kit's default config (no held_share key): once for the run, a copy for each
    test (`repos.sealed_copy`)."""
    def build(repo: Path, home: Path) -> None:
        make_repo(repo, {"invoice.py": WRONG})
        (repo.parent / "test_invoice.py").write_text(PERSON)
        res = seal(repo, repo.parent / "test_invoice.py", extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr
        assert "1 of 5 tests held back" in res.stdout and "held_share: 0 in donegate.yaml turns it off" in res.stdout

    write_config(kit_home, "max_blocks: 4\nmax_same_failure: 0\n", kit_held_share=True)
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "held-person", build, kit_home)


def test_a_lookup_table_never_passes_a_persons_own_tests_under_the_default_config(tmp_path_factory, kit_home):
    """No `--held`, no writer: the kit's default `held_share` holds back one failing case of the parametrised
    test (its other cases stay shown). Before it (held_share 0, the old default) this session passed at its
    second stop: `test_the_attack_on_tests_that_show_everything_passes_at_the_second_stop`."""
    repo = _person_sealed(tmp_path_factory, kit_home)
    table: dict[str, int] = {}
    verdicts = []
    for n in range(1, 7):
        res = run_hook(stop_payload(repo, session="hardcoder"))
        verdicts.append(stop_lines(kit_home)[-1]["verdict"])
        if verdicts[-1] != "block":
            break
        assert "held-back requirement: total (1 test fails" in res.stderr
        _table(res.stderr, table)
        _commit(repo, _lookup(table), n)
    assert "pass" not in verdicts, verdicts
    assert verdicts == ["block"] * 4 + ["gave_up"], verdicts  # the breaker hands it to a person (max_blocks 4)
    assert len(table) == 3  # every shown case was hard-coded; the held-back one never showed its values
    # From the second stop on its shown tests pass and the held-back case blocks: the measured hard-coding rate.
    held_back = [r["gates"]["acceptance"]["held_back"] for r in stop_lines(kit_home) if "acceptance" in r["gates"]]
    assert [h["blocked"] for h in held_back] == [False, True, True, True, True], held_back


def test_the_honest_fix_of_a_persons_own_tests_passes_at_its_first_stop(tmp_path_factory, kit_home):
    repo = _person_sealed(tmp_path_factory, kit_home)
    _commit(repo, RIGHT, 1)
    run_hook(stop_payload(repo, session="honest"))
    assert stop_lines(kit_home)[-1]["verdict"] == "pass"
