"""The Stop hook, run as Claude Code runs it: a subprocess with JSON on stdin, real git repos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.repos import (write_config, EXAMPLE_TESTS, KIT, fix_bug, git, stop_lines, make_repo, run_hook, seal, seal_single,
                                  pooled_single, stop_payload, first_stop)



def hidden_source() -> list[str]:
    return [line.strip() for p in EXAMPLE_TESTS.glob("*.py") for line in p.read_text().splitlines() if len(line.strip()) > 12]


def assert_no_secrets(text: str, kit_home: Path) -> None:
    for line in hidden_source():
        assert line not in text, f"hidden test source leaked: {line!r}"
    assert str(kit_home) not in text
    assert "acceptance" not in text.replace("acceptance test", "")


def test_blocks_with_the_assertion_then_passes_after_the_fix(sealed_shop, kit_home):
    res = run_hook(stop_payload(sealed_shop, message="All done, the discount is fixed."))
    assert res.returncode == 2
    assert "assert 4300 == 3870" in res.stderr
    assert "test_ten_units_get_the_bulk_discount" in res.stderr
    assert res.stderr.startswith("You reported the work as complete, but verification disagrees")
    out = json.loads(res.stdout)
    assert out["decision"] == "block" and out["reason"] == res.stderr.rstrip("\n")
    assert_no_secrets(res.stderr + res.stdout, kit_home)

    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 0, res.stderr
    assert "5 acceptance tests pass" in json.loads(res.stdout)["systemMessage"]
    lines = stop_lines(kit_home)
    assert [(r["verdict"], r["stop"], r["blocks"]) for r in lines] == [("block", 1, 1), ("pass", 2, 0)]
    assert lines[0]["gates"]["acceptance"]["failed"] == 3 and lines[1]["gates"]["acceptance"]["passed"] == 5
    assert lines[0]["repo"] == str(sealed_shop.resolve())


def test_no_claim_no_claim_sentence(sealed_shop):
    res = run_hook(stop_payload(sealed_shop, message="I have a question about the spec."))
    assert res.returncode == 2
    assert "You reported the work as complete" not in res.stderr


def test_unsealed_repository_is_allowed_and_recorded(tmp_path, kit_home):
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0
    assert "no acceptance tests are sealed" in json.loads(res.stdout)["systemMessage"]
    assert stop_lines(kit_home)[0]["verdict"] == "unsealed"


def test_tampered_store_blocks(sealed_shop, kit_home):
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    test_file.write_text(test_file.read_text() + "\ndef test_extra():\n    pass\n")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2
    assert "acceptance tests were modified" in res.stderr
    assert stop_lines(kit_home)[0]["gates"]["integrity"]["ok"] is False


def test_deleted_store_blocks_instead_of_reading_as_unsealed(sealed_shop, kit_home):
    import shutil

    (store,) = (kit_home / "acceptance").glob("shop-*")
    shutil.rmtree(store)
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and "missing although it was sealed" in res.stderr


def test_rewritten_manifest_blocks(sealed_shop, kit_home):
    (manifest,) = (kit_home / "acceptance").glob("*/manifest.json")
    data = json.loads(manifest.read_text())
    data["count"] = 1
    manifest.write_text(json.dumps(data))
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and "manifest changed" in res.stderr


@pytest.mark.own_suite
def test_protected_files_block_by_name(sealed_shop, kit_home):
    fix_bug(sealed_shop)
    (sealed_shop / ".claude").mkdir()
    (sealed_shop / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    (sealed_shop / "tests" / "test_cart.py").write_text("def test_nothing():\n    pass\n")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2
    assert ".claude/settings.local.json" in res.stderr and "tests/test_cart.py" in res.stderr
    # the repository's tests are the own suite's now (docs/own-suite.md): their deletion is a weakening, named
    line = stop_lines(kit_home)[0]
    assert line["gates"]["scope"]["protected"] == [".claude/settings.local.json"]
    assert {w["rule"] for w in line["gates"]["own"]["weakened"]} == {"deleted"}


def test_untracked_settings_present_at_seal_are_not_a_change(shop_repo, kit_home):
    (shop_repo / ".claude").mkdir()
    (shop_repo / ".claude" / "settings.json").write_text("{}")
    assert seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py").returncode == 0
    fix_bug(shop_repo)
    assert run_hook(stop_payload(shop_repo)).returncode == 0


def test_allowed_list_blocks_files_outside_it(sealed_shop, kit_home):
    write_config(kit_home, "allowed: ['shop/pricing.py']\n")
    fix_bug(sealed_shop)
    (sealed_shop / "notes.txt").write_text("scratch")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and "outside the allowed scope" in res.stderr and "notes.txt" in res.stderr
    (sealed_shop / "notes.txt").unlink()
    assert run_hook(stop_payload(sealed_shop)).returncode == 0




def test_hanging_test_blocks_within_timeout_and_leaves_no_process(tmp_path, kit_home):
    marker = f"donegate-hang-{os.getpid()}"
    repo = seal_single(tmp_path, f"import mod, subprocess, time\n\ndef test_hang():\n    if mod.VALUE == 2:\n"
                                  f"        subprocess.Popen(['sleep', '300', '{marker}'])\n        time.sleep(300)\n")
    write_config(kit_home, "timeout: 3\n")
    (repo / "mod.py").write_text("VALUE = 2\n")
    t0 = time.monotonic()
    res = run_hook(stop_payload(repo))
    assert time.monotonic() - t0 < 60
    assert res.returncode == 2 and "did not finish within 3 s" in res.stderr
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=10).stdout
    assert marker not in ps


def test_collection_error_blocks(tmp_path_factory, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, "from mod import VALUE\n\ndef test_value():\n    assert VALUE == 1\n")
    (repo / "mod.py").write_text("OTHER = 1\n")
    res = run_hook(stop_payload(repo))
    # The file no longer imports: its sealed test fails with the import error, as a developer's run shows it.
    assert res.returncode == 2 and "test_value" in res.stderr and "ImportError" in res.stderr
    # The second run is of no use to a stop that blocks: stopped, and the ledger says so.
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["second"]["stopped"] == "not needed: the first run blocked"


def test_early_exit_in_code_under_test_blocks(tmp_path_factory, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 1\n")
    (repo / "mod.py").write_text("import os\nos._exit(0)\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "ended before reporting" in res.stderr


LEAVES = """import gc, os

HELD = []


class Leaves:
    def __init__(self, name):
        self.name, self.me = name, self  # a cycle: only a collection frees it

    def __del__(self):
        open(os.path.join(MARKS, self.name + "-" + str(os.getpid())), "w").close()


def test_collects_its_own():
    Leaves("during")
    gc.collect()


def test_leaves_garbage_at_the_end():
    HELD.append(Leaves("end"))
    gc.collect()  # it survives into the oldest generation, which only a whole collection reads
    HELD.clear()
"""


def test_garbage_left_at_the_end_is_not_collected_once_the_results_are_in(tmp_path_factory, kit_home, tmp_path):
    """pytest collects its whole heap twice once the session is over (`unraisableexception`: ~10 ms of a 40-test run,
    with the results on the channel already, on the path the stop waits for): the first run leaves that out, as it
    leaves out the interpreter's teardown (`hidden.bootstrap`). A finalizer of garbage the tests left in a cycle runs
    then in a developer's run, not in the hidden run; one the tests collect themselves runs in both runs, and the stop
    passes. Unconfined, so the finalizers can leave their marks outside the run."""
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = pooled_single(tmp_path_factory, kit_home, f"MARKS = {str(marks)!r}\n" + LEAVES)
    write_config(kit_home, "confine: off\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name.partition("-")[0] for p in marks.iterdir()) == ["during", "during"]  # the first run, a fork


def test_fake_report_printed_by_code_under_test_is_not_a_pass(tmp_path_factory, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    (repo / "mod.py").write_text(
        "import json, os\nVALUE = 1\nreport = 'report.json'\n"
        "if report:\n    open(report, 'w').write(json.dumps({'complete': True, 'nonce': 'x', 'collected': [], 'results': {}, 'errors': []}))\n"
        "    os._exit(0)\n"
    )
    res = run_hook(stop_payload(repo))
    # The results come on the channel only (the run's argv names no report file: `python -m pytest`): the "report"
    # lands in the run's throwaway copy of the repository, and the early exit is an incomplete run.
    assert res.returncode == 2 and "ended before reporting" in res.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "mod.py"]


@pytest.mark.parametrize("planted", [
    {"pytest.py": "import sys\nsys.exit(0)\n"},
    {"conftest.py": "import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n    pass\n"
                    "def pytest_collection_modifyitems(items):\n    items.clear()\n"},
    {"sitecustomize.py": "import os\nos._exit(0)\n"},
    {"pytest.ini": "[pytest]\naddopts = -p no:python\n"},
    {"usercustomize.py": "import os\nos._exit(0)\n"},
])
def test_planted_files_in_the_repository_cannot_subvert_the_run(tmp_path_factory, kit_home, planted):
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    for name, text in planted.items():
        (repo / name).write_text(text)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    assert "assert 1 == 2" in res.stderr


def test_pytest_addopts_in_the_environment_is_ignored(tmp_path_factory, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    res = run_hook(stop_payload(repo), env={"PYTEST_ADDOPTS": "--deselect test_mod.py::test_value", "PYTHONPATH": "/nonexistent"})
    assert res.returncode == 2 and "assert 1 == 2" in res.stderr


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"cwd": 5}', "\x00\xff"])
def test_malformed_stdin_blocks_with_a_reason(stdin, kit_home):
    res = run_hook(stdin)
    assert res.returncode == 2
    assert res.stderr.startswith("donegate: ")
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    assert json.loads(res.stdout)["decision"] == "block"
    assert stop_lines(kit_home)[0]["verdict"] == "error"


def test_cwd_outside_git_blocks(tmp_path, kit_home):
    res = run_hook(stop_payload(tmp_path))
    assert res.returncode == 2 and "not inside a git repository" in res.stderr


@pytest.mark.parametrize("text, key", [
    ("timeout: fast\n", "timeout"),
    ("writer:\n  attempts: '3'\n", "writer.attempts"),
    ("nonsense: 1\n", "nonsense"),
    ("timeout: [\n", "line"),
])
def test_broken_config_hands_over_at_once_naming_the_key(sealed_shop, kit_home, text, key):
    # The agent cannot reach donegate.yaml: blocking it looped the session until the breaker.
    (kit_home / "donegate.yaml").write_text(text)
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 0 and res.stderr == "", res.stdout + res.stderr
    told = json.loads(res.stdout)["systemMessage"]
    assert key in told and "a person must fix the kit's configuration" in told and "Traceback" not in told
    assert str(kit_home) not in told
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "gave_up" and line["gates"]["handover"] == "config" and key in line["gates"]["error"]


def test_breaker_gives_up_after_max_blocks(tmp_path, kit_home):
    # Each stop fails a different set, so only max_blocks can end the loop.
    repo = seal_single(tmp_path, "".join(f"import mod\ndef test_{i}():\n    assert mod.VALUE != {i}\n" for i in range(10)))
    write_config(kit_home, "max_blocks: 2\n")
    verdicts = []
    for i in range(4):
        (repo / "mod.py").write_text(f"VALUE = {i}\n")
        verdicts.append(run_hook(stop_payload(repo)).returncode)
    assert verdicts == [2, 2, 0, 2]  # the third stop is handed over; the next turn counts again
    lines = stop_lines(kit_home)
    assert [r["verdict"] for r in lines] == ["block", "block", "gave_up", "block"]
    assert "max_blocks" in lines[2]["gates"]["breaker"]["gave_up"]


def test_no_progress_rule_hands_over_early(blocked_shop, kit_home):
    codes = [first_stop(blocked_shop).returncode] + [run_hook(stop_payload(blocked_shop)).returncode for _ in range(2)]
    # Sessions are counted apart: another session's stop here is its first (blocked, not handed over), and this
    # session's streak goes on after it.
    assert run_hook(stop_payload(blocked_shop, session="b")).returncode == 2
    codes.append(run_hook(stop_payload(blocked_shop)).returncode)
    assert codes == [2, 2, 2, 0]
    line = stop_lines(kit_home)[-1]
    assert line["verdict"] == "gave_up" and "max_same_failure" in line["gates"]["breaker"]["gave_up"]


def test_errors_are_counted_by_the_breaker(tmp_path, kit_home):
    codes = [run_hook(stop_payload(tmp_path)).returncode for _ in range(5)]
    assert codes == [2, 2, 2, 0, 2]


# Sessions counted apart: in test_no_progress_rule_hands_over_early (another session's stop inside the streak).


def test_no_environment_variable_opens_the_gate(sealed_shop, kit_home):
    # DONEGATE_NESTED=1 used to make the hook allow at once; settings `env` puts it in the hook's
    # environment, so the agent could set it. Now it is one more name the ledger records.
    res = run_hook(stop_payload(sealed_shop), env={"DONEGATE_NESTED": "1"})
    assert res.returncode == 2
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "block" and "DONEGATE_NESTED" in line["env"] and "DONEGATE_NESTED" in line["env_weakened"]


def test_the_kits_own_runs_are_recognised_by_their_recorded_session_id(sealed_shop, kit_home):
    from donegate.sessions import kitruns

    sid = kitruns.register(kit_home, timeout=60)
    res = run_hook(stop_payload(sealed_shop, session=sid))
    assert res.returncode == 0 and res.stdout == "" and not stop_lines(kit_home)
    from donegate.sessions.counters import FileCounters

    with FileCounters(kit_home / "state").transact("kit:runs") as counters:
        assert counters["stops"] == 1  # counted, not recorded
    # Another session, one that looks alike, and the same one after the run ended: gated.
    for other in (sid.replace(sid[-4:], "0000") if not sid.endswith("0000") else sid[:-4] + "1111", sid.upper()):
        assert run_hook(stop_payload(sealed_shop, session=other)).returncode == 2
    kitruns.unregister(kit_home, sid)
    assert run_hook(stop_payload(sealed_shop, session=sid)).returncode == 2


def test_a_kit_session_past_its_deadline_is_gated(sealed_shop, kit_home):
    from donegate.sessions import kitruns

    sid = kitruns.register(kit_home, timeout=60)
    kitruns._path(kit_home, sid).write_text("1\n")  # a deadline long past (a run that was killed)
    assert run_hook(stop_payload(sealed_shop, session=sid)).returncode == 2
    assert not kitruns._path(kit_home, sid).exists()


def test_broken_package_still_blocks_then_lets_go(sealed_shop, tmp_path):
    # A copy of the launcher next to a package that fails to import: it must block, bounded.
    kit = tmp_path / "kit"
    (kit / "hooks").mkdir(parents=True)
    (kit / "hooks" / "stop_gate.py").write_text((KIT / "hooks" / "stop_gate.py").read_text())
    (kit / "donegate").mkdir()
    (kit / "donegate" / "__init__.py").write_text("raise RuntimeError('broken')\n")
    codes = []
    for _ in range(8):
        res = subprocess.run([sys.executable, "-I", str(kit / "hooks" / "stop_gate.py")], input=json.dumps(stop_payload(sealed_shop)),
                             capture_output=True, text=True, timeout=60)
        codes.append(res.returncode)
    assert codes[:6] == [2] * 6 and codes[6] == 0
    assert "donegate: the kit failed to start" in res.stderr or codes[7] == 2


def test_concurrent_stops_of_one_repository_each_pass_and_write_their_line(tmp_path_factory, kit_home):
    # What stops of several sessions at once share besides the ledger (the seal's store, the cache, the repository):
    # each passes and writes its line. The ledger's lock itself is held by tests/test_units.py
    # test_ledger_concurrent_processes_lose_nothing (with the flock taken out it failed 3 runs of 3; this test, then
    # 16 stops at once, passed: their lines rarely meet), so 4 stops here, not 16. One module and one hidden test.
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    (repo / "mod.py").write_text("VALUE = 2\n")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: run_hook(stop_payload(repo, session=f"s{i}")), range(4)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    lines = [line for line in (kit_home / "ledger.jsonl").read_text().splitlines() if '"event":"stop"' in line]
    records = [json.loads(line) for line in lines]
    assert sorted(r["session"] for r in records) == [f"s{i}" for i in range(4)]
    assert all(r["verdict"] == "pass" for r in records), records
    from donegate.ledger import chain as ledger

    assert ledger.verify(kit_home / "ledger.jsonl")["intact"]


def test_store_inside_the_repository_is_refused(shop_repo):
    res = seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py", extra_env={"DONEGATE_HOME": str(shop_repo / ".dg")})
    assert res.returncode == 1 and "inside the guarded repository" in res.stderr


def test_seal_refuses_a_test_file_that_does_not_collect(shop_repo, tmp_path, kit_home):
    bad = tmp_path / "test_bad.py"
    bad.write_text("def test_x(:\n    pass\n")
    res = seal(shop_repo, bad)
    # A syntax error is one line with file:line (tests/test_seal_cli.py); one that collects badly otherwise:
    assert res.returncode == 1 and f"{bad}:1: invalid syntax" in res.stderr and "Traceback" not in res.stderr
    bad.write_text("no_such_name_anywhere\n\ndef test_x():\n    pass\n")
    res = seal(shop_repo, bad)
    assert res.returncode == 1 and "do not collect" in res.stderr and "no_such_name_anywhere" in res.stderr
    assert "\n  fix: " in res.stderr
    assert not (kit_home / "acceptance").exists() or not any((kit_home / "acceptance").glob("shop-*"))
    bad.write_text("import no_such_module_anywhere\nno_such_name_anywhere\n\ndef test_x():\n    pass\n")
    res = seal(shop_repo, bad)  # a new module the work will add is a new requirement (tests/seal/test_seal_unwritten.py)
    assert res.returncode == 0, res.stderr


def test_failed_seal_leaves_the_previous_store(sealed_shop, tmp_path, kit_home):
    (store,) = (kit_home / "acceptance").glob("shop-*")
    before = {p.name: p.read_bytes() for p in store.iterdir()}
    bad = tmp_path / "test_bad.py"
    bad.write_text("import nonexistent_module\n")
    assert seal(sealed_shop, bad).returncode == 1
    assert {p.name: p.read_bytes() for p in store.iterdir()} == before
    assert [p.name for p in (kit_home / "acceptance").iterdir()] == [store.name]


@pytest.mark.own_suite
def test_seal_manifest_records_baseline(sealed_shop, kit_home):
    (manifest,) = (kit_home / "acceptance").glob("*/manifest.json")
    m = json.loads(manifest.read_text())
    assert m["count"] == 5 and len(m["tests"]) == 5
    assert m["base"] == git(sealed_shop, "rev-parse", "HEAD").strip()
    assert m["request"] == "orders of 10 or more units get 10% off"
    assert sorted(m["baseline"]["failing"]) == sorted([
        "test_bulk_discount.py::test_ten_units_get_the_bulk_discount",
        "test_bulk_discount.py::test_units_across_lines_count_together",
        "test_bulk_discount.py::test_discount_rounds_down_to_whole_cents",
    ])
    assert len(m["baseline"]["passing"]) == 2
    assert set(m["files"]) == {"test_bulk_discount.py", "pytest.ini", "tree.json", "own-suite.json"}
    assert m["own_suite"]["paths"] == ["tests"] and m["own_suite"]["tests"] == m["own_suite"]["passing"] > 0


def test_leak_in_transcript_is_recorded_and_reported(sealed_shop, kit_home, tmp_path):
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    transcript = tmp_path / "t.jsonl"
    shown = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "x", "content": test_file.read_text()}]}}
    transcript.write_text(json.dumps({"type": "assistant", "message": {"content": "cat it"}}) + "\n" + json.dumps(shown) + "\n")
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(transcript)))
    assert res.returncode == 0
    assert "transcript shows hidden acceptance-test content" in json.loads(res.stdout)["systemMessage"]
    assert stop_lines(kit_home)[0]["gates"]["leak"]["source_lines"] > 0


def test_a_leak_at_the_stop_that_gives_up_is_told_to_the_person_too(sealed_shop, kit_home, tmp_path):
    # The breaker's hand-over message replaced the leak's: the person taking over heard only "gave up".
    write_config(kit_home, "max_blocks: 1\n")
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "x", "content": test_file.read_text()}]}}) + "\n")
    payload = stop_payload(sealed_shop, transcript_path=str(transcript))
    assert run_hook(payload).returncode == 2
    res = run_hook(payload)
    message = json.loads(res.stdout)["systemMessage"]
    assert res.returncode == 0 and "gave up" in message and "hidden acceptance-test content" in message
    assert [ln["verdict"] for ln in stop_lines(kit_home)] == ["block", "gave_up"]
    assert stop_lines(kit_home)[1]["gates"]["leak"]


# The feedback's cap (40 failures of 500 characters each, at most 4,100 shown): the stop of
# tests/gate/test_appeal.py's test_the_way_out_survives_a_capped_feedback, which asserts it and the appeal line kept.


# An install after the seal is no protected change, and the installed settings changed afterwards still block:
# tests/gate/test_scope.py's test_the_files_install_writes_are_not_the_agents_change (seal-then-install).


def test_kit_errors_do_not_tell_the_agent_where_the_kit_lives(sealed_shop, kit_home):
    write_config(kit_home, "timeout: fast\n")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 0 and "config key timeout" in res.stdout  # handed to the person, in the system message
    assert str(kit_home) not in res.stderr + res.stdout and str(KIT) not in res.stderr + res.stdout
    (kit_home / "donegate.yaml").unlink()
    res = run_hook(stop_payload(sealed_shop, cwd=["not", "a", "path"]))  # a clear error now, no longer an internal one
    assert res.returncode == 2 and "cwd that is not a folder path" in res.stderr
    assert str(kit_home) not in res.stderr + res.stdout


def test_an_edit_of_the_same_size_within_the_second_is_never_run_as_the_old_code(tmp_path_factory, kit_home):
    # Python trusts cached bytecode whose source has the same size and mtime (whole seconds).
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 1\n")
    for value in (2, 1, 3):
        (repo / "mod.py").write_text(f"VALUE = {value}\n")
        os.utime(repo / "mod.py", (1_700_000_000, 1_700_000_000))  # the same mtime every time
        assert run_hook(stop_payload(repo, session=f"s{value}")).returncode == (0 if value == 1 else 2)


def test_ledger_records_the_feedback_the_agent_was_shown_and_nothing_hidden(tmp_path, kit_home):
    # A hidden test whose failure message carries a line of its own source and its store path: the
    # raw message lands in gates.acceptance.failing, so a reader that showed it would leak. `feedback`
    # is the text the agent got (scrubbed, capped), the one thing a report may show of a block.
    secret = "secret_expected_total_for_ten_units = 3870"
    repo = seal_single(tmp_path, "import mod, pathlib\n\ndef test_value():\n"
                                  f"    {secret}\n"
                                  "    here = pathlib.Path(__file__).parent\n"
                                  f"    assert mod.VALUE == 2, '\\n{secret}\\n' + str(here)\n")
    res = run_hook(stop_payload(repo, message="Done."))
    assert res.returncode == 2
    (line,) = stop_lines(kit_home)
    raw = json.dumps(line["gates"])
    assert secret in raw and "/acceptance/" in raw  # the attack: the gate's own record holds both
    assert line["feedback"] == res.stderr.rstrip("\n") == json.loads(res.stdout)["reason"]
    assert secret not in line["feedback"] and str(kit_home) not in line["feedback"]
    # (the message's path line is not shown at all: a test's message keeps its assertion and where lines)
    assert "test_mod.py::test_value" in line["feedback"] and "assert 1 == 2" in line["feedback"]

    (repo / "mod.py").write_text("VALUE = 2\n")
    assert run_hook(stop_payload(repo)).returncode == 0
    assert "feedback" not in stop_lines(kit_home)[-1]  # a stop let through showed the agent nothing


def test_a_store_of_several_files_runs_every_file_whatever_its_name(tmp_path, kit_home):
    """The pytest run names a store of plain files as its folder (`runner.collected_as`, every `.py` a test file):
    a sealed file not named test_*.py still runs, under the same ids, in the same order, as named one by one."""
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_a.py").write_text("import mod\n\ndef test_a():\n    assert mod.VALUE == 2\n")
    (hidden / "checks.py").write_text("import mod\n\ndef test_b():\n    assert mod.VALUE == 2\n")
    res = seal(repo, hidden / "test_a.py", hidden / "checks.py")
    assert res.returncode == 0, res.stderr
    assert "2 new requirements failing" in res.stdout + res.stderr
    (repo / "mod.py").write_text("VALUE = 2\n")
    res = run_hook(stop_payload(repo), timeout=120)
    assert res.returncode == 0, res.stderr
    accept = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert (accept["total"], accept["passed"], accept["second"]["checked"]) == (2, 2, 2), accept
