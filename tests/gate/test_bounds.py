"""A hook that always answers in time and reads nothing that can hang it (issue 16, items 1 and 7).

Each attack first, with an honest look-alike beside it: a file that never ends where a repository
test was sealed, a lock an agent holds on the ledger or the counters, a stage that hangs, and config
that costs without bound. Run as Claude Code runs the hook: a subprocess with JSON on stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repos import write_config, git, stop_lines, run_hook, stop_payload
from donegate.ledger import chain as ledger
from donegate.claude import settings as vocab
from tests.support.repos import fix_bug

FAST = "timeout: 20\nhook_margin: 5\n"  # hook timeout 26 s: the stop's deadline 23 s


def _handed_over(res) -> str:
    """A config error: the stop allowed, the person told, the session left for a person."""
    assert res.returncode == 0, (res.returncode, res.stdout, res.stderr)
    return json.loads(res.stdout)["systemMessage"]


def _block(res) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert json.loads(res.stdout)["decision"] == "block"
    return res.stderr


# -- files that never end --------------------------------------------------------------------------


@pytest.mark.parametrize("make, kind", [
    (lambda p, tmp: os.mkfifo(p), "a FIFO"),
    (lambda p, tmp: (os.mkfifo(tmp / "pipe"), os.symlink(tmp / "pipe", p)), "a symlink"),
    (lambda p, tmp: os.symlink("/dev/zero", p), "a symlink"),
    (lambda p, tmp: os.symlink("/proc/self/fd/0", p), "a symlink"),
])
@pytest.mark.own_suite
def test_a_repository_test_replaced_by_something_that_never_ends_blocks_as_a_change(sealed_shop, kit_home, tmp_path, make, kind):
    fix_bug(sealed_shop)
    target = sealed_shop / "tests" / "test_cart.py"
    target.unlink()
    make(target, tmp_path)
    res = run_hook(stop_payload(sealed_shop), timeout=60)
    err = _block(res)
    assert f"tests/test_cart.py (now {kind})" in err
    (line,) = stop_lines(kit_home)
    assert line["gates"]["scope"]["kinds"] == {"tests/test_cart.py": kind}


def test_a_protected_settings_file_made_a_fifo_blocks(sealed_shop, kit_home):
    fix_bug(sealed_shop)
    (sealed_shop / ".claude").mkdir()
    os.mkfifo(sealed_shop / ".claude" / "settings.local.json")
    err = _block(run_hook(stop_payload(sealed_shop), timeout=60))
    assert ".claude/settings.local.json" in err


@pytest.mark.own_suite  # the link among the project's own tests: its own suite runs through it, then meets /dev/zero
def test_a_symlink_sealed_as_a_symlink_is_no_change(shop_repo, kit_home):
    """Honest: a repository that holds a symlink among its tests; it is compared as a link, not followed."""
    from tests.support.repos import seal
    from tests.support.repos import EXAMPLE_TESTS

    os.symlink("test_cart.py", shop_repo / "tests" / "test_cart_link.py")
    git(shop_repo, "add", "-A")
    git(shop_repo, "commit", "-q", "-m", "link")
    assert seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py").returncode == 0
    fix_bug(shop_repo)
    res = run_hook(stop_payload(shop_repo), timeout=60)
    assert res.returncode == 0, res.stderr
    (shop_repo / "tests" / "test_cart_link.py").unlink()
    os.symlink("/dev/zero", shop_repo / "tests" / "test_cart_link.py")
    assert "tests/test_cart_link.py" in _block(run_hook(stop_payload(shop_repo), timeout=60))


def test_a_store_file_made_a_fifo_blocks_as_tampering(sealed_shop, kit_home):
    (test_file,) = (kit_home / "acceptance").glob("shop-*/test_bulk_discount.py")
    test_file.unlink()
    os.mkfifo(test_file)
    err = _block(run_hook(stop_payload(sealed_shop), timeout=60))
    assert "acceptance tests were modified" in err


def test_a_transcript_that_is_a_fifo_is_not_read(sealed_shop, kit_home, tmp_path):
    os.mkfifo(tmp_path / "transcript.jsonl")
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(tmp_path / "transcript.jsonl")), timeout=60)
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["transcript"] == "the transcript was not read: a FIFO, not a regular file"


# A link the agent planted where the transcript is: to a FIFO nobody writes, to a device that never ends a read
# (/dev/kmsg waits for the next kernel message; /dev/zero never ends; /dev/null where neither is there).
_DEVICE = next((d for d in ("/dev/kmsg", "/dev/zero", "/dev/null") if os.path.exists(d)), "/dev/null")


@pytest.mark.parametrize("target", ["fifo", "device"])
def test_a_transcript_linked_to_a_fifo_or_a_device_never_makes_the_stop_wait(sealed_shop, kit_home, tmp_path, target):
    if target == "fifo":
        os.mkfifo(tmp_path / "pipe")
    link = tmp_path / "transcript.jsonl"
    link.symlink_to(tmp_path / "pipe" if target == "fifo" else _DEVICE)
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(link)), timeout=60)
    assert res.returncode == 0, res.stderr  # answered: not waiting for a writer, a kernel message or an end
    line = stop_lines(kit_home)[-1]
    assert line["verdict"] == "pass" and line["gates"]["transcript"] == \
        "the transcript was not read: a symlink, not a regular file", line["gates"]


def test_a_regular_transcript_is_read_and_says_nothing(sealed_shop, kit_home, tmp_path):
    """The look-alike: a real transcript is scanned, and the line has no `transcript` reason."""
    (tmp_path / "transcript.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "hello"}}) + "\n")
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(tmp_path / "transcript.jsonl")), timeout=60)
    assert res.returncode == 0, res.stderr
    assert "transcript" not in stop_lines(kit_home)[-1]["gates"]


# -- locks an agent holds --------------------------------------------------------------------------


HOLD = """\
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


class Held:
    """A process holding an exclusive flock on `path`, as `flock FILE sleep 600 &` would."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def test_a_locked_ledger_still_gets_an_answer_and_the_line_is_written_later(sealed_shop, kit_home):
    write_config(kit_home, FAST)
    run_hook(stop_payload(sealed_shop, session="warm"))  # a first line, so the chain has something to join
    held = Held(kit_home / "ledger.jsonl")
    try:
        err = _block(run_hook(stop_payload(sealed_shop), timeout=120))
        assert "assert 4300 == 3870" in err  # the real verdict, not a timeout
        parked = list(ledger.pending_dir(kit_home / "ledger.jsonl").glob("*.json"))
        assert len(parked) == 1
        log = (kit_home / "logs" / "donegate.log").read_text()
        assert "the ledger was locked" in log and parked[0].name in log
    finally:
        held.release()
    fix_bug(sealed_shop)
    assert run_hook(stop_payload(sealed_shop)).returncode == 0
    lines = stop_lines(kit_home)
    assert [(r["session"], r["verdict"], r.get("parked")) for r in lines] == [
        ("warm", "block", None), ("s1", "block", True), ("s1", "pass", None)]
    assert [r["stop"] for r in lines[1:]] == [1, 2]
    assert ledger.verify(kit_home / "ledger.jsonl")["intact"]
    assert not list(ledger.pending_dir(kit_home / "ledger.jsonl").glob("*"))


def test_a_locked_block_counter_does_not_let_the_stop_through(sealed_shop, kit_home):
    from donegate.sessions.counters import FileCounters

    write_config(kit_home, FAST)
    held = Held(Path(str(FileCounters(kit_home / "state")._path("s1")) + ".lock"))
    try:
        res = run_hook(stop_payload(sealed_shop), timeout=120)
        assert "assert 4300 == 3870" in _block(res)
    finally:
        held.release()
    (line,) = stop_lines(kit_home)
    assert line["gates"]["counter_error"] == "locked" and line["verdict"] == "block"


def test_a_counter_file_made_a_fifo_is_read_as_corrupt_and_the_block_stands(sealed_shop, kit_home):
    from donegate.sessions.counters import FileCounters

    write_config(kit_home, FAST)
    path = FileCounters(kit_home / "state")._path("s1")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    res = run_hook(stop_payload(sealed_shop), timeout=120)
    assert "assert 4300 == 3870" in _block(res)
    (line,) = stop_lines(kit_home)
    assert line["blocks"] == 1 and "counter_error" not in line["gates"]
    assert path.is_file()  # replaced by a counter again



def plant_fault(kit_home: Path, fault: str) -> None:
    """The gate's fault hook (`state/fault`): makes the named stage of the next stop hang."""
    (kit_home / "state").mkdir(parents=True, exist_ok=True)
    (kit_home / "state" / "fault").write_text(fault)

# -- one deadline for the whole stop ---------------------------------------------------------------


def test_a_stage_that_hangs_is_answered_block_before_the_hook_timeout(sealed_shop, kit_home):
    # Hook timeout 12 s, deadline 9 s: the stages before the hung one must finish inside it for the block to name it
    # (with a 4 s deadline, at load 22, the stop was still in the transcript scan when it struck). Wall, not CPU.
    write_config(kit_home, "timeout: 6\nhook_margin: 5\n")
    fix_bug(sealed_shop)
    plant_fault(kit_home, "hang:the scope check")
    res = run_hook(stop_payload(sealed_shop), timeout=60)
    err = _block(res)
    assert "did not finish within its deadline" in err and "the scope check" in err
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "error" and line["gates"]["deadline"]["stage"] == "the scope check"
    assert line["blocks"] == 1  # counted by the breaker like any error
    assert "deadline" in (kit_home / "logs" / "donegate.log").read_text()


def test_the_watchdog_parks_its_line_when_the_ledger_is_locked(sealed_shop, kit_home):
    write_config(kit_home, "timeout: 1\nhook_margin: 5\n")
    held = Held(kit_home / "ledger.jsonl")
    try:
        plant_fault(kit_home, "hang:the ledger")
        res = run_hook(stop_payload(sealed_shop), timeout=60)
        assert "did not finish within its deadline" in _block(res)
    finally:
        held.release()
    parked = [json.loads(p.read_text()) for p in ledger.pending_dir(kit_home / "ledger.jsonl").glob("*.json")]
    assert [r["gates"]["deadline"]["stage"] for r in parked] == ["the ledger"]


def test_the_hidden_run_gets_only_the_time_the_deadline_leaves(sealed_shop, kit_home, monkeypatch):
    from donegate.core import deadline
    from donegate import gate

    dl = deadline.Deadline(2.5)
    monkeypatch.setitem(gate._STOP, "deadline", dl)
    assert gate.time_left(120) <= 1.5
    assert gate.time_left(0.5) == 0.5


def test_kill_all_ends_every_run_still_going():
    """What the watchdog does before it ends the process: no run outlives the stop."""
    import threading

    from donegate.core import proc

    results = []
    t = threading.Thread(target=lambda: results.append(proc.run(["sleep", "300"], timeout=300)))
    t.start()
    for _ in range(200):
        if proc._LIVE:
            break
        threading.Event().wait(0.05)
    assert proc._LIVE
    proc.kill_all()
    t.join(timeout=60)
    assert not t.is_alive() and results[0].returncode == -9 and not proc._LIVE


def test_a_run_can_be_cancelled_from_another_thread_and_a_finished_one_is_left_alone():
    """What a block does to the second run started beside the first: `cancel` ends it (and its group)."""
    import threading

    from donegate.core import proc

    pids, results = [], []
    t = threading.Thread(target=lambda: results.append(proc.run(["sh", "-c", "sleep 300 & sleep 300"], timeout=300,
                                                                    started=pids.append)))
    t.start()
    for _ in range(200):
        if pids:
            break
        threading.Event().wait(0.05)
    proc.cancel(pids[0])
    t.join(timeout=60)
    assert not t.is_alive() and results[0].returncode == -9 and pids[0] not in proc._LIVE
    done = proc.run(["true"], timeout=30, started=pids.append)
    proc.cancel(pids[-1])  # reaped already: nothing is sent (the pid may belong to someone else by now)
    assert done.returncode == 0


def test_the_stages_beside_the_runs_wait_for_a_started_process_or_a_run_that_never_starts():
    """The scan and scope wait until both runs' processes run (`Running.begun`): a run that raises before its
    process starts (its copy could not be made) must not hold them up until the wait's bound."""
    from donegate.core import proc
    from donegate.gate import acceptance

    def broken(started):
        raise OSError("the copy could not be made")

    failed = acceptance._Thread("broken", broken)
    assert failed.begun.wait(30), "a run that never started kept the stages beside it waiting"
    with pytest.raises(OSError):
        failed.join()
    running = acceptance._Thread("sleeper", lambda started: proc.run(["sleep", "300"], timeout=300, started=started))
    assert running.begun.wait(30) and running.thread.is_alive()
    running.cancel()
    assert running.join().returncode == -9


def test_the_deadline_is_inside_the_hook_timeout_install_writes():
    from donegate import config, gate
    from donegate.core import deadline

    for cfg in (config.defaults(), config.minimal(), {**config.defaults(), "review": "hint"}):
        assert gate._budget(cfg) <= vocab.hook_timeout(cfg) - deadline.RESERVE
        assert gate._budget(cfg) > cfg["timeout"]


# -- config that costs without bound ---------------------------------------------------------------


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)) + "timeout: *i\n"


@pytest.mark.parametrize("text, says", [
    (BOMB, "YAML aliases (*name) are not allowed"),
    ("timeout: 5\n" + "# padding\n" * 40000, "larger than 256 KiB"),
    ("protected:\n" + "".join(f"  - 'dir{i}/**'\n" for i in range(1500)), "1500 entries, more than the 1000"),
    ("timeout: '" + "9" * 5000 + "'\n", "(5000 characters)"),
    ("timeout: " + "9" * 5000 + "\n", "a number of more than 4300 digits"),
    ("[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_config_that_costs_without_bound_is_a_config_error(sealed_shop, kit_home, text, says):
    (kit_home / "donegate.yaml").write_text(text)  # as it is: refused before the walls matter
    res = run_hook(stop_payload(sealed_shop), timeout=60)
    err = _handed_over(res)
    assert says in err and "internal error" not in err
    assert len(err) < 600
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "gave_up"


def test_a_binary_config_is_a_config_error(sealed_shop, kit_home):
    (kit_home / "donegate.yaml").write_bytes(os.urandom(4096))
    err = _handed_over(run_hook(stop_payload(sealed_shop), timeout=60))
    assert "donegate.yaml" in err and "internal error" not in err
    assert ("binary" in err) or ("UTF-8" in err)


def test_a_fifo_config_is_a_config_error(sealed_shop, kit_home):
    (kit_home / "donegate.yaml").unlink(missing_ok=True)  # `confine: off` where there are no walls
    os.mkfifo(kit_home / "donegate.yaml")
    err = _handed_over(run_hook(stop_payload(sealed_shop), timeout=60))
    assert "is a FIFO, not a regular file" in err


def test_honest_config_with_an_anchor_and_many_globs_still_loads(tmp_path):
    from donegate import config

    p = tmp_path / "donegate.yaml"
    p.write_text("protected: &p\n" + "".join(f"  - 'dir{i}/**'\n" for i in range(1000)) + "timeout: 30\n")
    cfg = config.load(p)
    assert len(cfg["protected"]) == 1000 and cfg["timeout"] == 30


def test_globs_are_compiled_once_and_agree_with_fnmatch():
    import fnmatch

    from donegate.seal import store

    globs = [".claude/**", "tests/*", "*.py", "a?c/[xy]*"]
    for name in (".claude/settings.json", "tests/x/y.py", "mod.py", "abc/x1", "abc/z1", "README"):
        assert store.matches(name, globs) == any(fnmatch.fnmatchcase(name, g) for g in globs), name
    assert store.matcher(globs) is store.matcher(list(globs))
    assert not store.matches("anything", [])
    many = [f"dir{i}/*.py" for i in range(300)] + [f"*{i}.txt" for i in range(300)] + ["exact/name.md"]
    for name in ("dir7/a.py", "dir7", "dir77/b/c.py", "x/17.txt", "exact/name.md", "exact/name.mdx", "dir3x.py"):
        assert store.matches(name, many) == any(fnmatch.fnmatchcase(name, g) for g in many), name


def test_a_large_glob_list_is_matched_in_bounded_time(shop_repo, kit_home):
    """1000 globs (the cap) against every file, in the hook: well inside the hook margin."""
    write_config(kit_home, "protected:\n" + "".join(f"  - 'dir{i}/*x*y*z*'\n" for i in range(1000)))
    from tests.support.repos import seal
    from tests.support.repos import EXAMPLE_TESTS

    assert seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py").returncode == 0
    res = run_hook(stop_payload(shop_repo), timeout=60)
    assert res.returncode == 2 and "assert 4300 == 3870" in res.stderr
    assert len(stop_lines(kit_home)) == 1
