"""Shared fixtures. Every test runs with a fresh HOME and DONEGATE_HOME: none may touch the real ones."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.support import repos
from tests.support.repos import OWN_SUITE, write_config, example_files, make_repo, own_suite, seal_example, sealed_copy


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch, request):
    """Forbid touching the real home or the kit's own ledger/store: each test gets its own."""
    real = os.environ.get("HOME")
    home = tmp_path_factory.mktemp("home")
    kit_home = tmp_path_factory.mktemp("donegate-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DONEGATE_HOME", str(kit_home))
    # CODEX_HOME too: Codex's user config is then the fresh HOME's ~/.codex, never the developer's.
    # And the other clients' folders and markers (docs/gemini.md, copilot.md, qwen.md): never the developer's.
    for var in ("DONEGATE_NESTED", "PYTEST_ADDOPTS", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "CODEX_HOME",
                "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CODEX_TOOL_CALL_ID", "GEMINI_CLI_HOME", "COPILOT_HOME",
                "QWEN_HOME", "GEMINI_CLI", "QWEN_CODE", "COPILOT_CLI", "QWEN_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    # The kit's processes keep their bytecode as on a machine that never set PYTHONDONTWRITEBYTECODE (CI's container):
    # with it set (a developer's shell may), every `python -m donegate` the suite starts compiled the kit's modules
    # from source (~0.06 CPU-s each, ~740 commands). Tests of the variable set it themselves (tests/gate/test_hook_env.py).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    # No unconfined default: on a machine without bubblewrap the hidden run is refused unless a person
    # says `confine: off`. Tests that do not care about the walls say it for them (a test that writes
    # its own config says it itself); tests of the walls skip (tests/support/require.py). And `held_share: 0`:
    # the default's random pick would make a block's shown assertions a draw (write_config says why).
    # The project's own suite off in what the test seals itself, unless the test is about it or end-to-end
    # (tests/support/repos.py `OWN_DEFAULT`).
    e2e = request.node.get_closest_marker("e2e") is not None or request.node.nodeid.startswith("tests/e2e/")
    repos.OWN_DEFAULT = None if e2e or own_suite(request) else "off"
    write_config(kit_home, "")
    yield
    repos.OWN_DEFAULT = None
    repos.release_slots()  # the sealed copies it took (`repos.sealed_copy`): another worker's test may take them
    # `monkeypatch.undo()` in a test puts the real HOME back: whatever ran after it (an install's hook stubs)
    # went into the person's ~/.claude/hooks. Use `monkeypatch.context()` for a change of one block.
    # A test may point HOME elsewhere on purpose (a session that moves it); never back at the person's own.
    assert real is None or os.environ.get("HOME") != real, \
        "the test put the real HOME back (monkeypatch.undo?): use monkeypatch.context()"
    # As root (CI), a path the kit or a test writes that resolves to /dev/null replaces the device: git then fails
    # everywhere ('bad config line 1 in file /dev/null', GIT_CONFIG_GLOBAL). Seen once on a shared machine (a link
    # '/dev/null -> python3', cause not found): the test that ran when it happened, or the next on its worker, says so.
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode), "/dev/null is no longer the null device (replaced during this test)"


@pytest.fixture
def kit_home() -> Path:
    return Path(os.environ["DONEGATE_HOME"])


@pytest.fixture
def shop_repo(tmp_path) -> Path:
    """The bundled example repository (with its bug), committed in a temporary folder."""
    return make_repo(tmp_path / "shop", example_files())


@pytest.fixture
def sealed_shop(kit_home, tmp_path_factory, request) -> Path:
    """The bundled example sealed for a repository holding it: a copy of one sealed once per run
    (tests/support/repos.py `sealed_copy`), at the path it was sealed at, in a folder of its own.

    Sealed with the example's own suite (examples/shop/tests) only for a test marked `own_suite` (repos.py `own_suite`)."""

    def build(repo: Path, home: Path) -> None:
        seal_example(make_repo(repo, example_files()), extra_env={"DONEGATE_HOME": str(home)})

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "shop", build, kit_home, own=own_suite(request))


@pytest.fixture
def blocked_shop(kit_home, tmp_path_factory, request) -> Path:
    """`sealed_shop` after its first stop (session `s1`, "Done."), blocked by the example's bug: a copy of one stopped once
    per run (`sealed_copy`), its ledger line and the stop's state in `kit_home`, the stop's answer in
    `repos.first_stop(repo)`. For a test whose first stop is that one, and reads only its answer and record: the copy
    is at the path the stop was made at, so the next stop of `s1` on the same tree is answered from its cache, as
    it would be after the test's own first stop."""

    def build(repo: Path, home: Path) -> None:
        seal_example(make_repo(repo, example_files()), extra_env={"DONEGATE_HOME": str(home)})
        repos.stop_once(repo, home)

    return sealed_copy(tmp_path_factory.getbasetemp() / "blocked", "shop", build, kit_home, own=own_suite(request))


@pytest.fixture(scope="session")
def py_template(tmp_path_factory) -> Path:
    """A venv with pip, setuptools and wheel, made once for the whole run (whichever xdist worker asks
    first: tests/support/pool.py) and copied into each project (tests/support/pyprojects.py: offline,
    nothing from an index)."""
    from tests.support.pool import SharedRuns, shared_root
    from tests.support.pyprojects import template_venv

    return SharedRuns(shared_root(tmp_path_factory, "pytemplate"), ["venv"], lambda key, base: template_venv(base),
                      threads=0)["venv"]


@pytest.fixture(scope="session")
def kit_wheel(tmp_path_factory) -> Path:
    """The kit's wheel built from the working tree, once for the whole run (tests/support/pool.py): each
    test installs it into a venv of its own (tests/support/installed.py `wheel_venv`)."""
    from tests.support.installed import build_wheel
    from tests.support.pool import SharedRuns, shared_root

    return SharedRuns(shared_root(tmp_path_factory, "kit-wheel"), ["wheel"], lambda key, base: build_wheel(base),
                      threads=0)["wheel"]


@pytest.fixture(scope="session")
def wheel_installed(tmp_path_factory, kit_wheel) -> tuple[Path, Path, Path]:
    """`kit_wheel` installed into a venv of its own once for the whole run (whichever xdist worker asks first:
    tests/support/pool.py), outside the checkout: (venv, its python, its site-packages), as
    tests/support/installed.py `wheel_venv` returns them. The tests that take it only run its commands (the kit's
    state goes to their own HOME and XDG folders); ~1.6 CPU-s a venv, three tests."""
    from tests.support.installed import wheel_venv
    from tests.support.pool import SharedRuns, shared_root

    return SharedRuns(shared_root(tmp_path_factory, "wheel-venv"), ["venv"], lambda key, base: wheel_venv(base, kit_wheel),
                      threads=0)["venv"]


# The longest tests first. Under pytest-xdist (`make test`: `-n 6`, the default `load` scheduling) each worker is
# first sent a contiguous chunk of a quarter of its share (xdist's scheduler/load.py: gw0 gets the first 85 tests, so
# these and the first end-to-end files run there, one after another; `make test` caps a chunk at 16 now, the Makefile's
# TEST_CHUNK), then the rest as they free up: a long test
# collected last (the tinydb experiment run, ~70 s on a quiet machine) became the run's tail, one worker busy
# while the others had finished. So the few longest (measured with --durations; a renamed one falls back to
# its place) lead, then the end-to-end tests, then the rest, each group in collection order. Order only:
# every test still runs, and none depends on another's having run.
LONGEST_FIRST = (
    "tests/e2e/test_experiment_e2e.py::test_a_tinydb_run_goes_through_setup_seal_and_grading",
    "tests/report/test_report_html.py::test_the_page_of_100000_stops_stays_under_5_mb",
    "tests/e2e/test_wheel_e2e.py::",
    "tests/e2e/test_install_e2e.py::test_each_shape_doctor_rejects_switches_the_gate_off",
    "tests/e2e/test_plugin_e2e.py::test_installed_plugin_blocks_then_passes",
    "tests/e2e/test_experiment_e2e.py::test_two_shards_merged_equal_one_unsharded_run",
    "tests/gate/test_python_env.py::test_a_src_layout_with_an_editable_install_seals_in_its_own_venv",
    "tests/e2e/test_bounds_e2e.py::test_an_agent_holding_the_ledger_lock_still_gets_the_real_verdict",
    "tests/e2e/test_experiment_e2e.py::test_the_budget_cap_stops_new_runs_and_a_higher_cap_finishes_them",
    "tests/e2e/test_experiment_e2e.py::test_a_run_killed_by_sigkill_is_done_again_and_none_is_counted_twice",
    "tests/person/test_person.py::test_a_decided_session_is_no_longer_left_for_a_person",
    "tests/test_packaging.py::test_wheel_install_gates_a_session",
    # Long (21-76 s on a loaded machine) and collected late: the quick start's run was the last test of a whole run,
    # one worker on it for its last 30 s while the other three were done (profile of the whole suite, 06 Dec).
    "tests/gate/test_real_libraries.py::test_pytest_its_own_suite_runs_under_its_own_pytest",
    "tests/gate/test_second_given.py::test_the_second_run_draws_what_the_first_drew",
    "tests/report/test_report_resume.py::test_appended_lines_give_what_a_cold_read_gives",
    "tests/test_quickstart.py::test_the_quick_start_works_as_written",
    "tests/models/test_writer.py::test_the_writers_held_back_file_is_sealed_held_back",
)


def pytest_configure(config):
    config.addinivalue_line("markers", f"{OWN_SUITE}: about the project's own suite or the seal's defaults: the pooled "
                            "repositories are sealed with it on (tests/support/repos.py `own_suite`)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(item.nodeid.split("::")[0]).name.startswith("test_own"):
            item.add_marker(OWN_SUITE)

    def rank(item) -> tuple[int, int]:
        for k, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return 0, k
        return (1 if item.get_closest_marker("e2e") else 2), 0

    items.sort(key=rank)  # stable: collection order within a group
