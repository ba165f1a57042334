"""The kit's default pick of held-back tests (`held_share`, default 0.25; docs/held-back.md): when a person names
no `--held` file and the writer wrote no `test_held_*.py`, each sealed file of two tests or more holds back
max(1, round(share * n)) of its tests, never all of them (a shown one failing at the seal when one does), cases
of a parametrised test whose other cases stay shown first. The draw is random: these tests check what holds for
every draw (many seeds), and the seal through the real command with the kit's default config.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from donegate import config
from donegate.seal import held
from tests.support.repos import make_repo, seal, write_config

SEEDS = range(200)


def _pick(files: dict[str, list[str]], failing: set[str] = frozenset(), share: float = 0.25) -> list[list[str]]:
    return [held.pick(files, share, failing, random.Random(seed)) for seed in SEEDS]


def _ids(name: str, n: int) -> list[str]:
    return [f"{name}::test_{i}" for i in range(n)]


def test_the_default_share_is_a_quarter_and_zero_turns_it_off():
    assert config.SCHEMA["held_share"].default == 0.25
    assert held.choose(_ids("test_a.py", 8), Path("/nonexistent"), set(), 0.0) == {}


@pytest.mark.parametrize("n,want", [(2, 1), (3, 1), (4, 1), (5, 1), (6, 2), (7, 2), (8, 2), (10, 3), (12, 3), (40, 10)])
def test_each_file_holds_back_its_share_and_never_all_of_it(n, want):
    files = {"test_a.py": _ids("test_a.py", n), "test_b.py": _ids("test_b.py", 2), "test_c.py": _ids("test_c.py", 1)}
    for picked in _pick(files):
        per_file = {name: [t for t in picked if t.startswith(name + "::")] for name in files}
        assert len(per_file["test_a.py"]) == want
        assert len(per_file["test_b.py"]) == 1  # two tests: one held back, one shown
        assert per_file["test_c.py"] == []  # a file of one test beside files of more: nothing held back from it


def test_a_high_share_still_leaves_a_shown_test_in_every_file():
    files = {"test_a.py": _ids("test_a.py", 3), "test_b.py": _ids("test_b.py", 2)}
    for picked in _pick(files, share=1.0):
        assert sorted(picked) == sorted(set(picked))
        assert len([t for t in picked if t.startswith("test_a.py")]) == 2
        assert len([t for t in picked if t.startswith("test_b.py")]) == 1


def test_a_suite_of_one_test_holds_nothing_back_and_files_of_one_test_are_one_group():
    assert _pick({"test_a.py": ["test_a.py::test_x"]}, share=1.0) == [[]] * len(SEEDS)
    files = {f"test_{c}.py": [f"test_{c}.py::test_x"] for c in "abcdefgh"}
    for picked in _pick(files):
        assert len(picked) == 2  # round(0.25 * 8), of the suite taken as one group; six files stay shown
    for picked in _pick({"test_a.py": ["test_a.py::test_x"], "test_b.py": ["test_b.py::test_y"]}, share=1.0):
        assert len(picked) == 1  # one held back, one shown


def test_a_failing_case_of_a_parametrised_test_is_held_back_before_a_test_of_its_own():
    ids = ["test_a.py::test_total[1]", "test_a.py::test_total[2]", "test_a.py::test_total[3]",
           "test_a.py::test_empty", "test_a.py::test_refund"]
    failing = {"test_a.py::test_total[1]", "test_a.py::test_total[2]", "test_a.py::test_total[3]", "test_a.py::test_refund"}
    seen = set()
    for picked in _pick({"test_a.py": ids}, failing):
        assert len(picked) == 1 and picked[0].startswith("test_a.py::test_total[")
        seen.add(picked[0])
    assert len(seen) == 3  # drawn at random among the cases


def test_a_shown_test_of_each_file_fails_at_the_seal_when_one_does():
    """The shown test is the assertion an honest fix reads: one failing at the seal (a new requirement) stays
    shown; then the failing tests are held back before those the unchanged product passes (a table that answers
    every other input as the old code did passes a held-back test the old code passes)."""
    ids = _ids("test_a.py", 8)
    failing = {"test_a.py::test_0", "test_a.py::test_1"}
    for picked in _pick({"test_a.py": ids}, failing):
        assert len(picked) == 2
        assert len(failing - set(picked)) == 1 and len(failing & set(picked)) == 1
    for picked in _pick({"test_a.py": ids}, {"test_a.py::test_5"}, share=1.0):
        assert "test_a.py::test_5" not in picked and len(picked) == 7


def test_a_parametrised_tests_cases_are_held_back_first_and_one_stays_shown():
    ids = [f"test_a.py::test_total[{i}]" for i in range(4)] + ["test_a.py::test_other"]
    failing = set(ids)
    for picked in _pick({"test_a.py": ids}, failing, share=0.5):  # 2.5 rounds half up: 3 of 5
        assert len(picked) == 3 and all("[" in t for t in picked)  # three cases, the fourth shown


def test_the_draw_differs_from_seal_to_seal():
    ids = _ids("test_a.py", 20)
    draws = {tuple(held.pick({"test_a.py": ids}, 0.25, set(), random.Random(s))) for s in SEEDS}
    assert len(draws) > 100


def test_seal_add_keeps_what_is_held_back_and_picks_for_the_new_file_only(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_one():\n    pass\n")
    old = _ids("test_a.py", 4)
    new = _ids("test_b.py", 4)
    kept = {"test_a.py::test_2": "kept name"}
    out = held.choose(old + new, tmp_path, set(), 0.25, kept, pick_from={"test_b.py"})
    assert out["test_a.py::test_2"] == "kept name"
    assert len([t for t in out if t.startswith("test_a.py")]) == 1
    assert len([t for t in out if t.startswith("test_b.py")]) == 1


# Through the real command, with the kit's default config (no held_share key).

FIVE = '''\
import pytest


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_double(n):
    from mod import double
    assert double(n) == 2 * n


def test_zero():
    from mod import double
    assert double(0) == 0
'''

TWO = "def test_a():\n    from mod import double\n    assert double(5) == 10\n\n\ndef test_b():\n    from mod import double\n    assert double(6) == 12\n"


def _repo(tmp_path: Path, kit_home: Path, config: str = "") -> Path:
    write_config(kit_home, config, kit_held_share=True)
    assert "held_share" not in (kit_home / "donegate.yaml").read_text() or config
    return make_repo(tmp_path / "repo", {"mod.py": "def double(n):\n    return 0\n"})


def _manifest(kit_home: Path) -> dict:
    (found,) = (kit_home / "acceptance").glob("*/manifest.json")
    return json.loads(found.read_text())


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "hidden" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_a_persons_seal_holds_back_one_failing_case_and_says_how_to_turn_it_off(tmp_path, kit_home):
    repo = _repo(tmp_path, kit_home)
    res = seal(repo, _file(tmp_path, "test_double.py", FIVE))
    assert res.returncode == 0, res.stderr
    assert "1 of 5 tests held back" in res.stdout and "the kit's pick, held_share 0.25" in res.stdout
    assert "never a whole file; held_share: 0 in donegate.yaml turns it off" in res.stdout
    m = _manifest(kit_home)
    ((test, name),) = m["held"].items()
    assert test.startswith("test_double.py::test_double[") and name == "double"
    assert m["held_by"] == "share" and m["held_share"] == 0.25


def test_a_one_test_suite_holds_nothing_back_and_the_seal_says_so(tmp_path, kit_home):
    repo = _repo(tmp_path, kit_home)
    res = seal(repo, _file(tmp_path, "test_one.py", "def test_a():\n    from mod import double\n    assert double(5) == 10\n"))
    assert res.returncode == 0, res.stderr
    assert "no test held back (the kit never holds back a suite's only test)" in res.stdout
    assert _manifest(kit_home)["held"] == {} and "held_by" not in _manifest(kit_home)


def test_held_share_zero_turns_the_pick_off(tmp_path, kit_home):
    repo = _repo(tmp_path, kit_home, "held_share: 0\n")
    res = seal(repo, _file(tmp_path, "test_double.py", FIVE))
    assert res.returncode == 0, res.stderr
    assert "no test held back (held_share is 0 in donegate.yaml)" in res.stdout
    assert _manifest(kit_home)["held"] == {}


def _add(repo: Path, *args: Path) -> str:
    import subprocess
    import sys

    from tests.support.repos import KIT

    res = subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), *map(str, args), "--add"],
                         capture_output=True, text=True, timeout=180, cwd=KIT)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_seal_add_keeps_the_held_back_tests_and_picks_for_the_added_file(tmp_path, kit_home):
    repo = _repo(tmp_path, kit_home)
    assert seal(repo, _file(tmp_path, "test_double.py", FIVE)).returncode == 0
    before = _manifest(kit_home)["held"]
    out = _add(repo, _file(tmp_path, "test_more.py", TWO))
    after = _manifest(kit_home)
    assert "2 of 7 tests held back" in out
    assert {k: v for k, v in after["held"].items() if k.startswith("test_double.py")} == before
    assert len([t for t in after["held"] if t.startswith("test_more.py")]) == 1
    assert after["held_by"] == "share"


def test_seal_add_to_a_persons_held_back_files_adds_none_of_the_kits(tmp_path, kit_home):
    repo = _repo(tmp_path, kit_home)
    res = seal(repo, _file(tmp_path, "test_shown.py", TWO), "--held", _file(tmp_path, "test_rules.py", FIVE))
    assert res.returncode == 0 and "5 of 7 tests held back" in res.stdout, res.stdout + res.stderr
    assert "the kit's pick" not in res.stdout
    out = _add(repo, _file(tmp_path, "test_more.py", TWO.replace("test_a", "test_c").replace("test_b", "test_d")))
    m = _manifest(kit_home)
    assert sorted(m["held"]) == sorted(t for t in m["tests"] if t.startswith("test_rules.py"))
    assert m["held_by"] == "files" and "5 of 9 tests held back" in out


def test_a_test_whose_name_holds_a_value_is_held_back_last(tmp_path):
    """A block shows a held-back test's requirement: the kit holds back a test named in words first (the example's
    boundary test, `exactly 10 units`, stays shown, and no seal of it warns of a name with digits)."""
    (tmp_path / "test_a.py").write_text('def test_ten():\n    """Exactly 10 units is 10 or more."""\n\n\n'
                                        "def test_across():\n    pass\n\n\ndef test_rounding():\n    pass\n")
    ids = ["test_a.py::test_ten", "test_a.py::test_across", "test_a.py::test_rounding"]
    for seed in SEEDS:
        out = held.choose(ids, tmp_path, set(), 0.25, failing=set(ids), rng=random.Random(seed))
        assert len(out) == 1 and "test_a.py::test_ten" not in out


def test_the_docs_table_names_the_default_share():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "held-back.md").read_text()
    assert f"| neither (the default, `held_share: {config.SCHEMA['held_share'].default:g}`) |" in doc
