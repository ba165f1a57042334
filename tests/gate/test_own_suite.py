"""The project's own tests, sealed (issue 44; docs/own-suite.md): through the real hook, real git repositories.

The two headline failures first: an honest agent that adds a test to the project's own test file was told to
undo it ("protected files were changed"), and an agent that broke what the project's own tests covered passed.
Beside each attack, the honest look-alike that passes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from donegate.seal import store
from tests.support.repos import KIT, make_repo, run_hook, sealed_copy, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n"
OWN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
# The same test with its assert moved unchanged into a conftest.py helper it imports (`seal.calls`).
HELPER = "from calc import add\n\n\ndef check_add():\n    assert add(2, 3) == 5\n"
OWN_BY_HELPER = OWN.replace("from calc import add\n", "from conftest import check_add\n").replace(
    "    assert add(2, 3) == 5\n", "    check_add()\n")
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
ADD_BROKEN = "def add(a, b):\n    return a - b\n"


def donegate(*argv: str, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT,
                          timeout=timeout, env=env)


def _calc(repo: Path, files: dict[str, str] | None, *extra: str, env: dict[str, str] | None = None):
    """The calc project at `repo` with its own suite, and the hidden test for `mul` beside it, sealed."""
    make_repo(repo, {"calc.py": CALC, "tests/test_calc.py": OWN, **(files or {})})
    hidden = repo.parent / "hidden" / "test_mul.py"
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN)
    res = donegate("seal", str(repo), str(hidden), "--request", "add mul", *extra, env=env)
    assert res.returncode == 0, res.stderr
    return res


def sealed_calc(tmp_path, files: dict[str, str] | None = None, *extra: str):
    repo = tmp_path / "calc"
    return repo, _calc(repo, files, *extra)


def pooled_calc(tmp_path_factory, kit_home: Path, files: dict[str, str] | None = None) -> Path:
    """`sealed_calc`'s repository for a test that reads nothing of the seal's output: sealed once per worker and
    donegate.yaml (tests/support/repos.py `sealed_copy`), each test a copy at the path the seal recorded (a seal
    here is three runs, ~0.9 CPU-s; a copy, milliseconds)."""
    def build(repo: Path, home: Path) -> None:
        res = _calc(repo, files, env={**os.environ, "DONEGATE_HOME": str(home)})
        (repo.parent / "seal.out").write_text(res.stdout)  # (beside the repository: `sealed_out`)

    name = "calc-" + hashlib.sha256(json.dumps(files or {}, sort_keys=True).encode()).hexdigest()[:10]
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", name, build, kit_home)


def sealed_out(repo: Path) -> str:
    """What the seal of `pooled_calc`'s repository printed."""
    return (repo.parent / "seal.out").read_text()


def blocked(res) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    return res.stderr


# -- the seal -----------------------------------------------------------------------------------------


def test_the_seal_keeps_the_projects_own_suite_and_its_baseline(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    assert "the project's own tests: 1 of 1 pass" in sealed_out(repo), sealed_out(repo)
    st = store.load(repo)
    assert st.manifest["own_suite"]["tests"] == 1 and st.manifest["own_suite"]["passing"] == 1
    own = json.loads((st.path / "own-suite.json").read_text())
    assert own["tests"] == ["tests/test_calc.py::test_add"]
    assert own["baseline"]["passing"] == ["tests/test_calc.py::test_add"]
    from donegate.seal import loosened

    assert own["shape_rules"] == loosened.RULES  # (a stop takes its shapes as kept: `own_changed.sealed_shapes`)
    assert own["files"]["tests/test_calc.py"]["text"] == OWN
    for command in (["status"], ["doctor", "-v"]):
        shown = donegate(*command, str(repo)).stdout
        assert "the project's own tests: 1 of 1 pass at the seal and are kept (tests; 1 files)" in shown, (command, shown)


def test_own_tests_off_seals_no_own_suite(tmp_path, kit_home):
    repo, res = sealed_calc(tmp_path, None, "--own-tests", "off")
    st = store.load(repo)
    assert "own_suite" in st.manifest and st.manifest["own_suite"].get("off")
    assert not (st.path / "own-suite.json").exists()


def test_a_suite_that_does_not_collect_is_named_in_one_line_and_nothing_is_sealed(tmp_path, kit_home):
    repo = make_repo(tmp_path / "calc", {"calc.py": CALC, "tests/test_calc.py": "import nothere_at_all\n\ndef test_x():\n    pass\n"})
    hidden = tmp_path / "test_mul.py"
    hidden.write_text(HIDDEN)
    res = donegate("seal", str(repo), str(hidden))
    assert res.returncode == 1, res.stdout
    assert "the project's own tests do not collect" in res.stderr and "--own-tests" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert store.load(repo) is None


def test_a_seal_refused_for_its_own_suite_leaves_the_previous_seal_as_it_was(tmp_path_factory, kit_home):
    """The seal never half-writes: sealed once, the project's suite then broken, a second seal is refused in one
    line, and the first store, its record and the acceptance folder are as they were (no new folder beside them)."""
    repo = pooled_calc(tmp_path_factory, kit_home)
    before = store.load(repo)
    record = (kit_home / "state" / "seals" / f"{before.path.name.split('@')[0]}.json").read_text()
    folders = sorted(p.name for p in before.path.parent.iterdir())
    (repo / "tests" / "test_calc.py").write_text("import nothere_at_all\n\n\ndef test_x():\n    pass\n")
    res = donegate("seal", str(repo), str(repo.parent / "hidden" / "test_mul.py"), "--replace")
    assert res.returncode == 1 and "the project's own tests do not collect" in res.stderr, res.stdout + res.stderr
    assert len(res.stderr.strip().splitlines()) == 2, res.stderr  # the error and its fix
    after = store.load(repo)
    assert after.path == before.path and after.manifest == before.manifest
    assert (kit_home / "state" / "seals" / f"{before.path.name.split('@')[0]}.json").read_text() == record
    assert sorted(p.name for p in before.path.parent.iterdir()) == folders



# tinydb's Query: `where("x") == 1` builds a query, an object the kit's equality probe calls equal to everything.
QUERY = ("class Where:\n    def __init__(self, key):\n        self.key = key\n\n"
         "    def __eq__(self, other):\n        return ('eq', self.key, other)\n\n    __hash__ = object.__hash__\n")
QUERY_TEST = "from calc import Where\n\n\ndef test_where():\n    assert Where('a') == 1\n"


def test_an_own_suite_that_trips_the_tripwires_by_design_is_not_kept_and_the_seal_goes_on(tmp_path, kit_home):
    """Was: the seal refused (tinydb's own suite in the experiment: "the project's own tests trip the run's
    tripwires at the seal: the equality probe"); the hidden tests could not be sealed at all."""
    repo, res = sealed_calc(tmp_path, {"calc.py": CALC + "\n\n" + QUERY, "tests/test_calc.py": QUERY_TEST})
    assert "the project's own tests: not sealed (not kept: they trip the run's tripwires" in res.stdout, res.stdout
    assert "--own-tests PATH" in res.stdout
    st = store.load(repo)
    assert st.manifest["own_suite"].get("off") and not (st.path / "own-suite.json").exists()
    (repo / "calc.py").write_text(CALC + "\n\n" + QUERY + MUL)
    assert run_hook(stop_payload(repo)).returncode == 0  # the hidden tests still judge the work

# -- the headline cases -------------------------------------------------------------------------------


MORE_FIXED = "from calc import mul\n\ndef test_mul_zero():\n    assert mul(0, 3) == 0\n"
ADDED = OWN + "\n\ndef test_mul():\n    from calc import mul\n    assert mul(2, 4) == 8\n"  # a test added to the project's file


def _tests_added(tmp_path_factory, kit_home) -> dict:
    """Two look-alikes in one stop for the run (`own_batch.shared_stop`): a test added to the project's test file, and
    the agent's own new test file passing (`test_the_agents_own_new_test_must_pass`'s fix); it passes only if both
    do."""
    from tests.support import own_batch

    def edit(repo: Path) -> None:
        (repo / "calc.py").write_text(CALC + MUL)
        (repo / "tests" / "test_calc.py").write_text(ADDED)
        (repo / "tests" / "test_more.py").write_text(MORE_FIXED)

    return own_batch.shared_stop(tmp_path_factory, kit_home, "calc-tests-added",
                                 lambda home: pooled_calc(tmp_path_factory, home), edit)


def test_an_honest_agent_adding_a_test_to_the_projects_test_file_passes(tmp_path_factory, kit_home):
    """Was: "protected files were changed (restore them): tests/test_calc.py"."""
    res = _tests_added(tmp_path_factory, kit_home)
    if res["returncode"] == 0:  # one stop that passes passes each look-alike in it
        assert sorted(res["own"]["ran_now"]) == ["tests/test_calc.py", "tests/test_more.py"], res["own"]
        return
    repo = pooled_calc(tmp_path_factory, kit_home)  # which one blocks: this case alone
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_calc.py").write_text(ADDED)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def test_an_agent_that_breaks_what_the_projects_tests_covered_is_blocked(tmp_path_factory, kit_home):
    """Was: the stop passed (the hidden tests were all it ran)."""
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add" in err and "tests/test_calc.py:4" in err, err
    assert "as it was when the work began" in err and "assert -1 == 5" in err, err
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert own["failing"][0]["id"] == "tests/test_calc.py::test_add"


def test_a_project_that_asks_pytest_for_colour_gets_plain_text_in_the_block_and_the_ledger(tmp_path_factory, kit_home):
    """A real project (humanize 4.9.0: `addopts = "--color=yes"`) got its own test's assertion diff with the
    terminal's colour codes in the block and the ledger (`\\x1b[91m- 2.9M`): noise to the agent, and raw escape
    sequences on a person's terminal when the report prints them. The text is kept; the codes are not."""
    colour = {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--color=yes"\n',
              "tests/test_calc.py": OWN.replace("assert add(2, 3) == 5", "assert f'{add(2, 3)} units' == '5 units'")}
    repo = pooled_calc(tmp_path_factory, kit_home, colour)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add" in err and "- 5 units" in err and "+ -1 units" in err, err
    line = stop_lines(kit_home)[-1]
    assert "\x1b" not in err and "\x1b" not in json.dumps(line, ensure_ascii=False), err


def test_the_visible_copy_edited_to_match_the_regression_changes_nothing(tmp_path_factory, kit_home):
    """The expected value changed to what the code returns now: blocked as the old contract changed, and (was: not
    named nor counted) named as a weakening, found by the sealed test's failure parsed."""
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("== 5", "== -1"))
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add" in err and "the old contract changed" in err, err
    assert "a test of the project was weakened: tests/test_calc.py::test_add: its expected value 5 was changed to -1, " \
           "what the code returns now [expected-to-actual]" in err, err
    assert "APPEAL:" in err  # the appeal is offered for a contract the request changed
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert [w["rule"] for w in own["weakened"]] == ["expected-to-actual"], own


def test_an_expected_value_changed_otherwise_is_not_named(tmp_path_factory, kit_home):
    """Its look-alikes, each a stop: a new value the product does not return (a plain contract change, the agent's
    own test failing as well), a check added beside the sealed one with the value the product returns (was named
    assert-loosened). (An equal expression, `5` to `2 + 3`, and a constant the test reads: tests/seal/test_loosened.)"""
    repo = pooled_calc(tmp_path_factory, kit_home)
    test = repo / "tests" / "test_calc.py"
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    for now in (OWN.replace("== 5", "== 7"), OWN + "    assert add(2, 3) != -1\n"):
        test.write_text(now)
        err = blocked(run_hook(stop_payload(repo)))
        assert "the old contract changed" in err and "weakened" not in err, err
        assert stop_lines(kit_home)[-1]["gates"]["own"]["weakened"] == []


def test_the_visible_copy_deleted_or_skipped_changes_nothing(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    (repo / "tests" / "test_calc.py").unlink()
    (repo / "conftest.py").write_text("import pytest\n\ndef pytest_collection_modifyitems(items):\n"
                                      "    for i in items:\n        i.add_marker(pytest.mark.skip)\n")
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -k nothing\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add" in err
    weakened = stop_lines(kit_home)[-1]["gates"]["own"]["weakened"]
    assert sorted(w["rule"] for w in weakened) == ["collection-hook", "config-excluded", "deleted"], weakened


def test_an_assert_moved_into_a_conftest_helper_passes_and_one_dropped_there_is_named(tmp_path_factory, kit_home):
    """An honest refactor, each a stop: the test's assert moved unchanged into a helper in tests/conftest.py the test
    imports and calls (was blocked: "1 assert(s) at the seal, 0 now [assert-removed]"); its look-alike, the helper
    asserting nothing, stays named."""
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN_BY_HELPER)
    (repo / "tests" / "conftest.py").write_text(HELPER)
    _passes_then_the_helpers_assert_dropped_is_named(repo)


def test_a_sealed_conftest_helper_that_no_longer_asserts_is_named(tmp_path_factory, kit_home):
    """The test's assert in a conftest.py helper at the seal, the helper's assert dropped and the test file untouched
    (was: no finding, only changed test files were read); the helper's assert rewritten as strong, no finding."""
    repo = pooled_calc(tmp_path_factory, kit_home, {"tests/conftest.py": HELPER, "tests/test_calc.py": OWN_BY_HELPER})
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "conftest.py").write_text(HELPER.replace("assert add(2, 3) == 5", "assert add(3, 2) == 5"))
    _passes_then_the_helpers_assert_dropped_is_named(repo)


def _passes_then_the_helpers_assert_dropped_is_named(repo: Path) -> None:
    """The stop as the repository is passes; the conftest helper's assert then dropped (`HELPER`'s) is named."""
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "tests" / "conftest.py").write_text(HELPER.replace("assert add(2, 3) == 5", "add(2, 3)"))
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add: 1 assert(s) at the seal, 0 now [assert-removed]" in err, err


def test_a_project_test_moved_as_it_was_to_another_file_passes(tmp_path_factory, kit_home):
    """Was: "a test of the project was weakened: tests/test_calc.py::test_add: its file was deleted [deleted]",
    though the test runs in the file it moved to."""
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_calc.py").unlink()
    (repo / "tests" / "test_arith.py").write_text(OWN)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["own"]["ran_now"] == ["tests/test_arith.py"]


def test_the_agents_own_new_test_must_pass(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_more.py").write_text("from calc import mul\n\ndef test_mul_zero():\n    assert mul(0, 3) == 3\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_more.py::test_mul_zero" in err and "your own" in err, err
    # fixed, it passes (its stop is the one of a test added to the project's file too: `_tests_added`)
    res = _tests_added(tmp_path_factory, kit_home)
    if res["returncode"] == 0:
        assert "tests/test_more.py" in res["own"]["ran_now"], res["own"]
        return
    (repo / "tests" / "test_more.py").write_text(MORE_FIXED)  # which one blocks: this case alone, after its block
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def test_a_test_failing_at_the_seal_never_blocks(tmp_path, kit_home):
    repo, res = sealed_calc(tmp_path, {"tests/test_old.py": "def test_broken():\n    assert 1 == 2\n"})
    assert "1 failing at the seal, 0 skipped never block" in res.stdout, res.stdout
    assert "warning:" not in res.stdout  # one of two: not most of the suite
    (repo / "calc.py").write_text(CALC + MUL)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def test_supersedes_says_a_test_the_request_changes(tmp_path, kit_home):
    repo, res = sealed_calc(tmp_path, None, "--supersedes", "tests/test_calc.py::test_add")
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("== 5", "== -1"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


# -- weakening, named (docs/own-suite.md; the rules one by one: tests/seal/test_loosened.py) ---------------------


def test_a_skip_added_to_a_passing_project_test_is_named_and_appealable(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    # (and a hook pytest reads from a test module: was no finding, only a conftest.py's hooks were read)
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("def test_add", "import pytest\n\n\n@pytest.mark.skip\ndef test_add")
                                                 + "\n\ndef pytest_generate_tests(metafunc):\n    pass\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert "a test of the project was weakened: tests/test_calc.py::test_add: skip added [skipped]" in err, err
    assert "tests/test_calc.py: pytest_generate_tests added to the test module [collection-hook]" in err, err
    assert "APPEAL:" in err
    assert [w["rule"] for w in stop_lines(kit_home)[-1]["gates"]["own"]["weakened"]] == ["skipped", "collection-hook"]


def test_tests_excluded_by_a_new_configuration_are_named(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "pytest.ini").write_text("[pytest]\naddopts = --deselect tests/test_calc.py::test_add\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert "pytest.ini: addopts gained --deselect [config-excluded]" in err, err


def test_an_honest_agent_strengthening_a_test_and_adding_config_passes(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN + "    assert add(-1, 1) == 0\n")
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -v\nmarkers =\n    slow: slow tests\n")
    (repo / "tests" / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def test_a_cached_stop_still_names_the_regression(tmp_path_factory, tmp_path, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for session in ("s1", "s2"):  # (the folder below was left when a thread ended after a fork: a race, so twice)
        first = blocked(run_hook(stop_payload(repo, session=session), env={"TMPDIR": str(tmp)}, after=True))
        second = blocked(run_hook(stop_payload(repo, session=session), env={"TMPDIR": str(tmp)}, after=True))
        assert stop_lines(kit_home)[-1]["gates"]["cache"]["hit"] is True
        assert "tests/test_calc.py::test_add" in second and second == first
    # The cached stops' own-suite run, begun before the look and ended unrun, leaves no folder (its thread let go of
    # it after the after-answer child had been forked: a `donegate-run-*` left at most cached stops)
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith("donegate-")) == []


# -- cost follows the change (donegate.seal.reach) ----------------------------------------------------------------

TWO = {
    "calc.py": "from consts import OFFSET\n\n\ndef add(a, b):\n    return a + b + OFFSET\n",
    "consts.py": "OFFSET = 0\n",
    "text.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_calc.py": OWN,
    "tests/test_text.py": "from text import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
    "data.txt": "x\n",
}


def _ran(kit_home):
    return stop_lines(kit_home)[-1]["gates"]["own"]["ran_sealed"]


def test_a_stop_runs_the_sealed_test_files_its_change_can_reach(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home, TWO)
    (repo / "calc.py").write_text(TWO["calc.py"] + MUL)
    assert run_hook(stop_payload(repo)).returncode == 0
    assert _ran(kit_home) == ["tests/test_calc.py"]
    (repo / "text.py").write_text("def shout(s):\n    return s\n")  # a regression the other file reaches
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_text.py::test_shout" in err and _ran(kit_home) == ["tests/test_calc.py", "tests/test_text.py"]


def test_a_constant_read_through_an_import_is_reached(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home, TWO)
    (repo / "calc.py").write_text(TWO["calc.py"] + MUL)
    (repo / "consts.py").write_text("OFFSET = 1\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert "tests/test_calc.py::test_add" in err and _ran(kit_home) == ["tests/test_calc.py"]


def test_a_change_the_map_cannot_place_runs_the_whole_suite(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home, TWO)
    (repo / "calc.py").write_text(TWO["calc.py"] + MUL)
    (repo / "data.txt").write_text("y\n")  # data no test opened at the seal: it changes no test's path
    assert run_hook(stop_payload(repo)).returncode == 0
    assert _ran(kit_home) == ["tests/test_calc.py"]
    (repo / "data.txt").write_text("x\n")
    (repo / "json.py").write_text("X = 1\n")  # a new top-level module could shadow an import
    assert run_hook(stop_payload(repo)).returncode == 0
    assert _ran(kit_home) == "all"


def test_own_run_all_runs_the_whole_suite_every_stop(tmp_path_factory, kit_home):
    from tests.support.repos import write_config

    repo = pooled_calc(tmp_path_factory, kit_home, TWO)  # (the seal of the tests above: own_run is read at a stop)
    write_config(kit_home, "own_run: all\n")
    (repo / "calc.py").write_text(TWO["calc.py"] + MUL)
    assert run_hook(stop_payload(repo)).returncode == 0
    assert _ran(kit_home) == "all"


# -- the report --------------------------------------------------------------------------------------------------


def test_the_report_counts_what_the_own_suite_did(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    blocked(run_hook(stop_payload(repo, session="regress")))  # a regression blocked
    blocked(run_hook(stop_payload(repo, session="regress")))  # stopped again unfixed: the same one regression
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests" / "test_more.py").write_text("from calc import mul\n\ndef test_m():\n    assert mul(2, 2) == 4\n\n"
                                                 "def test_n():\n    assert mul(0, 2) == 0\n")
    assert run_hook(stop_payload(repo, session="grow")).returncode == 0  # two tests added
    (repo / "tests" / "test_more.py").unlink()
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("== 5", "== -1"))  # the contract changed
    blocked(run_hook(stop_payload(repo, session="contract")))
    appeal = "The request changes add.\n\nAPPEAL: the request says add now subtracts, the old test contradicts it"
    assert run_hook(stop_payload(repo, session="contract", message=appeal)).returncode == 0
    res = donegate("report", "--json")
    counts = json.loads(res.stdout)["own_suite"]["default"]
    assert counts["regressions_blocked"] == 1 and counts["tests_added"] == 2 and counts["contract_changes_appealed"] == 1
    assert counts["weakenings_named"] == 1  # the expected value changed to what add returns now, told twice: once
    assert "1 regressions blocked, 2 tests added by the agents" in donegate("report").stdout


@contextlib.contextmanager
def answers(first: str, then: str):
    """A FIFO that hands `first` to the first reader and `then` to every later one: a flaky service outside the
    repository (yields its path and the words handed out). Not a counter file the test writes: a confined run
    (bubblewrap) sees a /tmp of its own, empty at each run, and a read-only system, so state a test keeps across
    runs is gone and the test never flakes there. The FIFO lies outside /tmp (and outside the home, which the walls
    hide too); reading it is allowed."""
    folder = Path(tempfile.mkdtemp(prefix="donegate-flaky-", dir="/var/tmp"))
    pipe = folder / "answer"
    os.mkfifo(pipe)
    done, served = threading.Event(), []

    def serve() -> None:
        word = first
        while not done.is_set():
            fd = os.open(pipe, os.O_WRONLY)  # blocks until a run opens it to read
            try:
                os.write(fd, word.encode() + b"\n")
                served.append(word)
                gone = select.poll()
                gone.register(fd, select.POLLERR)
                while not done.is_set() and not gone.poll(100):  # one word a reader: wait until it has closed
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
            word = then

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield pipe, served
    finally:
        done.set()
        fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets a writer waiting to open go
        thread.join(5)
        os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_flaky_test_is_known_at_the_seal_and_never_blocks(tmp_path, kit_home):
    """It passes at the seal's first run and fails at every later one (a service outside the repository), under
    bubblewrap as unconfined."""
    with answers("pass", "fail") as (pipe, served):
        flaky = f"def test_flaky():\n    with open({str(pipe)!r}) as f:\n        assert f.readline() == 'pass\\n'\n"
        repo, res = sealed_calc(tmp_path, {"tests/test_flaky.py": flaky})
        assert "1 flaky (passed once of two runs)" in res.stdout and served == ["pass", "fail"], (res.stdout, served)
        assert json.loads((store.load(repo).path / "own-suite.json").read_text())["baseline"]["flaky"] == ["tests/test_flaky.py::test_flaky"]
        from tests.support.repos import write_config

        write_config(kit_home, "own_run: all\n")
        (repo / "calc.py").write_text(CALC + MUL)  # its next run fails: as sealed passing, it would block
        res = run_hook(stop_payload(repo))
        assert res.returncode == 0 and served[2:] and set(served[2:]) == {"fail"}, (res.stderr, served)  # it ran, and failed
        own = stop_lines(kit_home)[-1]["gates"]["own"]
        assert "tests/test_flaky.py::test_flaky" not in json.dumps(own.get("failing") or []), own


def test_a_subfolder_project_keeps_and_runs_its_own_suite(tmp_path, kit_home):
    repo = make_repo(tmp_path / "mono", {"pkg/calc.py": CALC, "pkg/tests/test_calc.py": OWN, "other/x.py": "X = 1\n"})
    hidden = tmp_path / "hidden" / "test_mul.py"
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN)
    res = donegate("seal", str(repo / "pkg"), str(hidden))
    assert res.returncode == 0 and "the project's own tests: 1 of 1 pass" in res.stdout, res.stdout + res.stderr
    (repo / "pkg" / "calc.py").write_text(ADD_BROKEN + MUL)
    err = blocked(run_hook(stop_payload(repo / "pkg")))
    assert "tests/test_calc.py::test_add" in err and "tests/test_calc.py:4" in err, err
    (repo / "pkg" / "calc.py").write_text(CALC + MUL)
    (repo / "pkg" / "tests" / "test_calc.py").write_text(OWN + "    assert add(1, 1) == 2\n")
    res = run_hook(stop_payload(repo / "pkg"))
    assert res.returncode == 0, res.stderr


def test_a_sealed_test_file_that_no_longer_imports_is_a_regression_named_by_test(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text("def plus(a, b):\n    return a + b\n" + MUL)  # add renamed away
    err = blocked(run_hook(stop_payload(repo)))
    assert "the project's own test tests/test_calc.py::test_add (tests/test_calc.py:4)" in err, err
    assert "no longer collects" in err and "ImportError" in err and "hidden tests" not in err, err
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert not own["problem"] and own["failing"][0]["id"] == "tests/test_calc.py::test_add"


def test_seal_add_keeps_the_suite_as_it_was_when_the_work_began(tmp_path_factory, tmp_path, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)  # (the first seal's output is not read: the store is)
    first = (store.load(repo).path / "own-suite.json").read_text()
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("== 5", "== 6"))  # the visible copy edited meanwhile
    more = tmp_path / "hidden" / "test_more.py"
    more.parent.mkdir()
    more.write_text("import calc\n\n\ndef test_add_zero():\n    assert calc.add(0, 0) == 0\n")
    res = donegate("seal", str(repo), str(more), "--add")
    assert res.returncode == 0, res.stderr
    assert (store.load(repo).path / "own-suite.json").read_text() == first


def test_a_suite_that_mostly_fails_at_the_seal_is_named_with_the_fix(tmp_path, kit_home):
    """A suite most of whose tests fail at the seal for a cause of its own (no service): they never block, and the
    seal says so in one line with the fix."""
    broken = "def test_one():\n    assert 1 == 2\n\n\ndef test_two():\n    assert 'a' == 'b'\n"
    repo, res = sealed_calc(tmp_path, {"tests/test_broken.py": broken})
    assert "warning: 2 of 3 of the project's own tests fail or skip at the seal" in res.stdout, res.stdout
    assert "--own-tests PATH" in res.stdout and "need a service" not in res.stdout


def test_tests_that_need_a_service_are_named_at_the_seal_in_one_line_with_the_fix(tmp_path, kit_home):
    """Was: one test of three connecting to a database failed at the seal, counted with the tests failing on their
    own ("1 failing at the seal ... never block"), its cause and the fix unsaid. The runs have no network: it is
    named, with the fix, at the seal, in status and in doctor."""
    service = "import socket\n\n\ndef test_db():\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
    repo, res = sealed_calc(tmp_path, {"tests/test_service.py": service, "tests/test_more.py": OWN.replace("def test_add", "def test_add_more")})
    said = [line for line in res.stdout.splitlines() if "need a service" in line]
    assert len(said) == 1 and "warning: 1 of the project's own tests need a service or the network" in said[0], res.stdout
    assert "tests/test_service.py::test_db (ConnectionRefusedError" in said[0] and "(fix: " in said[0], said
    assert "fail or skip at the seal" not in res.stdout  # one line, the cause named: not the generic warning too
    assert "tests/test_service.py::test_db" in donegate("status", str(repo)).stdout
    assert "need a service" in donegate("doctor", str(repo)).stdout


def test_a_ci_test_step_made_to_ignore_failures_is_named_and_an_honest_ci_edit_passes(tmp_path_factory, kit_home):
    flow = "jobs:\n  test:\n    steps:\n      - name: tests\n        run: python -m pytest -q\n"
    repo = pooled_calc(tmp_path_factory, kit_home, {".github/workflows/ci.yml": flow, ".coveragerc": "[report]\nfail_under = 90\n"})
    (repo / "calc.py").write_text(CALC + MUL)
    # honest: options, and a path that still runs every sealed test
    (repo / ".github" / "workflows" / "ci.yml").write_text(flow.replace("-q\n", "-q -n 2 tests\n"))
    assert run_hook(stop_payload(repo)).returncode == 0
    (repo / ".github" / "workflows" / "ci.yml").write_text(flow.replace("-q\n", "-q tests/unit || echo 'tests failed'\n"))
    (repo / ".coveragerc").write_text("[report]\nfail_under = 10\n")
    (repo / "conftest.py").write_text("def pytest_configure(config):\n    config.option.deselect = ['tests/test_calc.py']\n")
    err = blocked(run_hook(stop_payload(repo)))
    assert ".github/workflows/ci.yml: test/tests now ignores its failures [ci-ignores-failures]" in err, err
    assert ".coveragerc: fail_under 90 became 10 [coverage-lowered]" in err, err
    assert "conftest.py: pytest_configure setting the run's options or plugins added [collection-hook]" in err, err
    # Was no finding: a CI step narrowed by path
    assert ("ci.yml: its pytest steps ran all the tests at the seal, now only tests/unit: "
            "tests/test_calc.py::test_add no longer run [config-excluded]") in err, err
    weakened = stop_lines(kit_home)[-1]["gates"]["own"]["weakened"]
    assert sorted(w["rule"] for w in weakened) == ["ci-ignores-failures", "collection-hook", "config-excluded",
                                                   "coverage-lowered"], weakened


def test_seal_add_supersedes_a_test_once_the_work_has_begun(tmp_path_factory, kit_home):
    repo = pooled_calc(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(ADD_BROKEN + MUL)
    (repo / "tests" / "test_calc.py").write_text(OWN.replace("== 5", "== -1"))
    assert "the old contract changed" in blocked(run_hook(stop_payload(repo)))
    res = donegate("seal", str(repo), "--add", "--supersedes", "tests/test_calc.py::test_add")
    assert res.returncode == 0, res.stderr
    assert "superseded by the request: tests/test_calc.py::test_add" in res.stdout, res.stdout
    # (a new session: a seal mid-session not from a terminal hands that session to a person, tests/person/)
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 0, res.stderr  # the agent's changed test still runs, as it is now, and passes
    res = donegate("seal", str(repo), "--add", "--supersedes", "tests/test_calc.py::test_nope")
    assert res.returncode == 1 and "no such test" in res.stderr


# -- a store sealed by an earlier kit: its shapes read again from its sealed text -------------------------------

# A test whose check (and skip) is in a helper of its file: before stop 53 the seal kept its shape without them.
HELPED_OWN = ("import pytest\nfrom calc import add\n\n\ndef check(got):\n    if got is None:\n        pytest.skip('none')\n"
              "    assert got == 5\n\n\ndef test_add():\n    check(add(2, 3))\n")


def _old_shapes(text: str) -> dict:
    """The shapes a seal before stop 53 kept: each test function's own syntax, no helper followed."""
    import ast

    from donegate.seal import loosened

    return {n.name: loosened.shape_of(n) for n in ast.parse(text).body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}


def _judged(current: dict, passed: bool = True, elsewhere: dict | None = None, rules: int | None = None) -> dict:
    from donegate.gate import own_suite
    from donegate.hidden.runner import TestRun

    tid = "tests/test_calc.py::test_add"
    pack = {"tests": [tid], "baseline": {"passing": [tid], "failing": [], "skipped": [], "flaky": []},
            "files": {"tests/test_calc.py": {"text": HELPED_OWN}}, "shape": {"tests/test_calc.py": _old_shapes(HELPED_OWN)},
            "where": {"tests/test_calc.py::test_add": 11}, **({"shape_rules": rules} if rules is not None else {})}
    outcome = {"outcome": "passed"} if passed else {"outcome": "failed", "message": "assert -1 == 5"}
    return own_suite.judge(pack, TestRun(True, results={tid: outcome}), None, [], current, 0.1, None, elsewhere or {}, {})


@pytest.mark.parametrize("current, elsewhere", [
    ({"tests/test_calc.py": HELPED_OWN + "\n\ndef test_more():\n    assert add(1, 1) == 2\n"}, {}),  # a test added
    ({"tests/test_calc.py": "def test_other():\n    assert 1\n"}, {"tests/test_moved.py": HELPED_OWN}),  # moved as it was
], ids=["test-added", "moved"])
def test_a_store_sealed_before_helpers_were_read_names_no_false_weakening(current, elsewhere):
    """Was (a store sealed before stop 53, its shapes without the helpers a test calls): the helper's old skip named
    `skipped` when a test was added beside it, the test moved unchanged named `deleted`. The sealed shapes are read
    again from the sealed text by this kit, as the current files are."""
    assert _judged(current, elsewhere=elsewhere)["weakened"] == []
    # (the store's version says which rules made its shapes: shapes it says are this kit's are taken as kept)
    from donegate.seal import loosened

    assert _judged(current, elsewhere=elsewhere, rules=loosened.RULES - 1)["weakened"] == []
    assert _judged(current, elsewhere=elsewhere, rules=loosened.RULES)["weakened"] != []


def test_a_store_sealed_before_helpers_were_read_names_a_regression_not_a_contract_change():
    """Was: the test's file changed elsewhere (a test added), the sealed test failing was "the old contract changed"
    (its source read now with the helper differed from the old shape's). Look-alike beside it: the helper loosened is
    still named, and the test then a changed contract."""
    added = HELPED_OWN + "\n\ndef test_more():\n    assert add(1, 1) == 2\n"
    gate = _judged({"tests/test_calc.py": added}, passed=False)
    assert [f["contract"] for f in gate["failing"]] == [False], gate
    loosened = _judged({"tests/test_calc.py": added.replace("assert got == 5", "assert got")}, passed=False)
    assert [w["rule"] for w in loosened["weakened"]] == ["assert-loosened"], loosened
    assert [f["contract"] for f in loosened["failing"]] == [True], loosened
