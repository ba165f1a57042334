"""The own suite's sealed files laid out once per seal under the state root, and used by every confined stop of that
seal while they are exactly what was laid out (`donegate.hidden.own_laid`, issue 44 item 5). Through the real hook,
real git repositories: beside each use of the kept folder, the regression that still blocks with the project's id,
`file:line` and the "as it was when the work began" message; beside each attack on the folder, the honest stop."""

from __future__ import annotations

import os
from pathlib import Path

from donegate import paths
from tests.support import require
from tests.support.repos import run_hook, seal, sealed_project, stop_lines, stop_payload, write_config

CALC = "def add(a, b):\n    return a + b\n"
OWN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HIDDEN = "def test_hidden():\n    assert True\n"
BROKEN = "def add(a, b):\n    return a - b\n"
# what a tamperer would lay there: the sealed test made to pass whatever `add` does, a conftest.py skipping every test
LOOSE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == add(2, 3)\n"
SKIP_ALL = "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n"


def _sealed(tmp_path_factory, kit_home: Path) -> tuple[Path, Path]:
    """The calc project sealed confined (a copy of one sealed once a run: `sealed_project`), and the folder its
    stops lay the sealed suite out in (under the test's own state root: none yet)."""
    require.bwrap()
    write_config(kit_home, "confine: on\n")
    repo = sealed_project(tmp_path_factory, kit_home, "own-laid", {"calc.py": CALC, "tests/test_calc.py": OWN}, HIDDEN, 1)
    return repo, kit_home / "state" / "own-suite" / paths.repo_key(repo)


def _laid(base: Path) -> Path:
    """The one laid-out suite of the seal (its folder named by own-suite.json's digest)."""
    found = [p for p in base.iterdir() if not p.name.startswith(".")]
    assert len(found) == 1, found
    return found[0]


def _blocks_as_the_projects_own(repo: Path, kit_home: Path, session: str) -> None:
    (repo / "calc.py").write_text(BROKEN)
    res = run_hook(stop_payload(repo, session=session))
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "the project's own test tests/test_calc.py::test_add (tests/test_calc.py:4)" in res.stderr, res.stderr
    assert "as it was when the work began" in res.stderr and "assert -1 == 5" in res.stderr, res.stderr
    (repo / "calc.py").write_text(CALC)


def test_the_sealed_suite_is_laid_out_once_per_seal_and_a_regression_still_blocks(tmp_path_factory, kit_home):
    """Was: laid out afresh in a temporary folder at every stop (200 test files: ~0.04 CPU-s of the hook's, and their
    removal after the answer); no folder under the state root."""
    repo, base = _sealed(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + "\n# a comment\n")
    assert run_hook(stop_payload(repo)).returncode == 0
    test = _laid(base) / "tests" / "test_calc.py"
    assert test.read_text() == OWN
    made = os.stat(test).st_ino
    _blocks_as_the_projects_own(repo, kit_home, "s2")
    assert os.stat(test).st_ino == made  # the same files: not laid out again
    assert stop_lines(kit_home)[-1]["gates"]["own"]["failing"][0]["where"] == "tests/test_calc.py:4"


def test_a_laid_out_suite_edited_or_added_to_is_laid_out_again(tmp_path_factory, tmp_path, kit_home):
    """What the runs read is what the seal holds: a kept file edited (its test made to pass whatever the code does)
    or replaced by a link to such a file, a conftest.py added beside the kept files (deselecting every test), the
    kit's configuration laid out with them given a deselection: none is what runs. Beside each, the same regression
    blocks, and an honest stop after them passes."""
    repo, base = _sealed(tmp_path_factory, kit_home)
    assert run_hook(stop_payload(repo)).returncode == 0
    test = _laid(base) / "tests" / "test_calc.py"
    os.chmod(test, 0o644)
    test.write_text(LOOSE)
    _blocks_as_the_projects_own(repo, kit_home, "s2")
    assert test.read_text() == OWN
    (_laid(base) / "tests" / "conftest.py").write_text(SKIP_ALL)
    _blocks_as_the_projects_own(repo, kit_home, "s3")
    assert not (_laid(base) / "tests" / "conftest.py").exists()
    ini = _laid(base) / "pytest.ini"  # the kit's empty configuration laid out beside them, given a deselection
    os.chmod(ini, 0o644)
    ini.write_text("[pytest]\naddopts = --deselect tests/test_calc.py::test_add\n")
    _blocks_as_the_projects_own(repo, kit_home, "s4")
    os.unlink(_laid(base) / "tests" / "test_calc.py")  # replaced by a link to a copy of the loosened test
    (tmp_path / "loose.py").write_text(LOOSE)
    os.symlink(tmp_path / "loose.py", _laid(base) / "tests" / "test_calc.py")
    _blocks_as_the_projects_own(repo, kit_home, "s5")
    assert run_hook(stop_payload(repo, session="s6")).returncode == 0


def test_a_new_seal_lays_out_its_own_suite_and_the_earlier_one_goes(tmp_path_factory, kit_home):
    """A seal of other own tests: its stops run them, not the earlier seal's (the folder is the seal's digest)."""
    repo, base = _sealed(tmp_path_factory, kit_home)
    assert run_hook(stop_payload(repo)).returncode == 0
    earlier = _laid(base)
    (repo / "tests" / "test_calc.py").write_text(OWN + "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n")
    res = seal(repo, repo.parent / "hidden" / "test_request.py")
    assert res.returncode == 0, res.stderr
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b if a else 1\n")
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "tests/test_calc.py::test_add_zero" in res.stderr, res.stderr
    assert _laid(base) != earlier and not earlier.exists()


# -- two stops of one seal at once (unit: `own_laid.laid` called as a stop calls it) ------------------------------

PACK = {"files": {"tests/test_calc.py": {"text": OWN}}, "paths": ["tests"], "config": None}


def test_a_stop_whose_layout_another_stop_switched_in_first_uses_that_one(tmp_path, monkeypatch):
    """Both found no layout and laid out their own; the other switched its in first and its run may be reading it.
    Was: this stop set the other's aside (and removed it under that run) to switch its own in. Beside it: a layout
    that is not intact is still replaced."""
    from donegate.hidden import own_laid
    from donegate.seal import own

    real = own.lay_out
    dest = own_laid.folder(tmp_path, "k") / "digest"

    def meanwhile(pack, new):  # the other stop finishes while this one lays out
        out = real(pack, new)
        other = Path(str(new) + "-other")
        real(pack, other)
        own_laid._record(other)
        os.replace(other, dest)
        theirs.append(os.stat(dest / "tests" / "test_calc.py").st_ino)
        return out

    theirs: list[int] = []

    monkeypatch.setattr(own, "lay_out", meanwhile)
    assert not dest.exists()
    got = own_laid.laid(PACK, tmp_path, "k", "digest")
    assert got is not None and got[0] == dest
    assert os.stat(dest / "tests" / "test_calc.py").st_ino == theirs[0]  # the other stop's, not set aside
    assert [p.name for p in dest.parent.iterdir()] == ["digest"]  # nothing set aside, its own unfinished one gone
    monkeypatch.setattr(own, "lay_out", real)
    assert own_laid.laid(PACK, tmp_path, "k", "digest")[0] == dest
    assert os.stat(dest / "tests" / "test_calc.py").st_ino == theirs[0]  # intact: used as it is
    os.chmod(dest / "tests" / "test_calc.py", 0o644)
    (dest / "tests" / "test_calc.py").write_text(LOOSE)
    assert own_laid.laid(PACK, tmp_path, "k", "digest")[0] == dest
    assert (dest / "tests" / "test_calc.py").read_text() == OWN


def test_an_unfinished_layout_a_killed_stop_left_goes_once_it_is_old(tmp_path):
    """A stop killed while laying out leaves its `.new-` folder: removed by a later layout once ten minutes old;
    beside it, one made just now (another stop laying out) stays."""
    import time

    from donegate.hidden import own_laid

    base = own_laid.folder(tmp_path, "k")
    old, recent = base / ".new-old", base / ".new-recent"
    old.mkdir(parents=True)
    recent.mkdir()
    os.utime(old, (time.time() - 1200, time.time() - 1200))
    assert own_laid.laid(PACK, tmp_path, "k", "digest") is not None
    assert not old.exists() and recent.exists()


def test_a_named_pipe_in_place_of_a_laid_out_file_is_laid_out_again_not_waited_on(tmp_path):
    """A file of the kept layout replaced by a named pipe: the check opened it to read and waited for a writer (the
    stop hung until its timeout). Opened without blocking, it is not the sealed bytes: laid out again. Beside it, the
    layout as laid out is intact."""
    from donegate.hidden import own_laid
    from donegate.seal import own

    pack = {"files": {"tests/test_calc.py": {"text": "def test_add():\n    assert 1 + 1 == 2\n"}}, "paths": ["tests"],
            "config": None}
    dest = tmp_path / "laid"
    dest.mkdir()
    own.lay_out(pack, dest)
    own_laid._record(dest)
    assert own_laid._intact(dest, pack)
    target = dest / "tests" / "test_calc.py"
    target.unlink()
    os.mkfifo(target)
    assert not own_laid._intact(dest, pack)
