"""Files that never end and locks an agent holds, in the real Claude Code (issue 16, item 7).

Both once opened the gate: the hook hung on them until Claude Code's hook timeout, which lets the
stop through. Now the hook answers, inside its timeout, with the real verdict.
"""

from __future__ import annotations

import fcntl
import os
import time

import pytest

from donegate.ledger import chain as ledger
from tests.support import require
from tests.support.fakeapi import tool, turn
from tests.support.gated import BUG

pytestmark = pytest.mark.e2e

CLAIM = "All done: orders of 10 or more units now get the bulk discount."
FAST = {"timeout": 20, "hook_margin": 5}  # hook timeout 26 s: a hang would show as hook_cancelled


def _sandbox(on: bool) -> bool:
    if on:
        require.bwrap()
    return on


def ran_cleanly(s) -> None:
    assert s.res.returncode == 0, s.describe()
    assert s.res.result and s.res.result.get("subtype") == "success", s.describe()
    assert not s.api.overrun and not s.api.errors and s.api.remaining() == 0, s.describe()
    assert not s.attachments("hook_cancelled"), s.describe()


@pytest.mark.own_suite
def test_a_repository_test_swapped_for_a_symlink_to_a_fifo_blocks_at_once(gated, api):
    # Without Claude Code's sandbox only (it once ran with it too): the sandbox is around the agent's Bash, which
    # makes the FIFO in the repository either way, never around the hook, whose answer is the subject here. The
    # hook's answer to each kind of file that never ends is in tests/gate/test_bounds.py.
    g = gated(sandbox=False, config=FAST)
    fix = tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})
    api.add(
        turn(tool("Read", {"file_path": str(g.pricing)})),
        turn(fix),
        turn(tool("Bash", {"command": "mkfifo pipe && rm tests/test_cart.py && ln -s ../pipe tests/test_cart.py && ls -l tests"})),
        CLAIM,
        turn(tool("Bash", {"command": "rm tests/test_cart.py pipe && git checkout -- tests/test_cart.py"})),
        "Restored the repository test.",
    )
    s = g.run(api)

    ran_cleanly(s)
    *_, swap, restore = s.tool_results()
    assert not swap["is_error"] and "test_cart.py ->" in str(swap["content"]), swap
    assert s.verdicts == ["block", "pass"], s.describe()
    (feedback,) = s.feedback()
    assert "tests/test_cart.py (now a symlink)" in feedback
    assert s.stops[0]["gates"]["scope"]["kinds"] == {"tests/test_cart.py": "a symlink"}


# The agent's script: the ledger's path is in its text (the guard reads commands and paths, not what
# a file holds), so only the sandbox can refuse it. It forks a holder that keeps the lock.
HOLD = """\
import fcntl, os, sys, time
ledger, pidfile = {ledger!r}, "holder.pid"
if os.fork():
    time.sleep(2)
    print("holder.pid exists:", os.path.exists(pidfile))
    sys.exit(0)
os.setsid()
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
fd = os.open(ledger, os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
open(pidfile, "w").write(str(os.getpid()))
time.sleep(600)
"""


def _lock_free(path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_an_agent_holding_the_ledger_lock_still_gets_the_real_verdict(gated, api, sandbox):
    # scan: off: the agent's hold.py names the ledger's path, which the change scan rightly blocks on its
    # own; this test is about the lock, so the scan must not be what answers.
    g = gated(sandbox=_sandbox(sandbox), config={**FAST, "scan": "off"})
    path = g.home / "ledger.jsonl"
    path.touch()
    pidfile = g.repo / "holder.pid"
    api.add(
        turn(tool("Write", {"file_path": str(g.repo / "hold.py"), "content": HOLD.format(ledger=str(path))})),
        turn(tool("Bash", {"command": "python3 hold.py"})),
        CLAIM,
        turn(tool("Read", {"file_path": str(g.pricing)})),
        turn(tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})),
        "Fixed.",
    )
    try:
        s = g.run(api)
        ran_cleanly(s)
        (feedback,) = s.feedback()
        assert "assert 4300 == 3870" in feedback  # the real verdict, not a timeout
        parked = sorted(ledger.pending_dir(path).glob("*.json"))
        if sandbox:
            # Bash cannot reach the ledger in the sandbox: the lock was never taken.
            assert not pidfile.exists() and parked == []
            assert s.verdicts == ["block", "pass"]
        else:
            assert pidfile.exists() and not _lock_free(path)
            assert s.verdicts == [] and len(parked) == 2
            log = (g.home / "logs" / "donegate.log").read_text()
            assert all(p.name in log for p in parked)
            assert any("ledger was locked" in m for m in s.system_messages()), s.system_messages()
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), 9)
    for _ in range(100):
        if _lock_free(path):
            break
        time.sleep(0.1)
    # The next line written takes the parked ones first: nothing lost, the chain whole.
    from tests.support.repos import run_hook, stop_payload

    run_hook(stop_payload(g.repo, session="after"), env={"DONEGATE_HOME": str(g.home)})
    records = ledger.records(path)
    assert [r["verdict"] for r in records if r.get("event") == "stop"] == ["block", "pass", "pass"]
    assert ledger.verify(path)["intact"]
    assert not list(ledger.pending_dir(path).glob("*.json"))


def test_a_stop_that_hangs_is_answered_block_before_claude_codes_hook_timeout(gated, api):
    """Whatever hangs (here a stage made to hang by the fault hook), Claude Code gets the watchdog's block
    inside its hook timeout: never `hook_cancelled`, which would let the stop through."""
    # hook timeout 7 s, deadline 4 s; the seal's own run gets 60 s (1 s failed it on a loaded machine)
    g = gated(sandbox=False, config={"timeout": 1, "hook_margin": 5, "max_blocks": 1}, seal_timeout=60)
    (stop,) = g.settings["hooks"]["Stop"]
    assert stop["hooks"][0]["timeout"] == 7
    api.add(CLAIM, "Still done.")
    (g.home / "state").mkdir(parents=True, exist_ok=True)
    (g.home / "state" / "fault").write_text("hang:the scope check")  # the fault hook: a stage that never ends
    s = g.run(api)

    ran_cleanly(s)
    (feedback,) = s.feedback()
    assert "did not finish within its deadline" in feedback and "the scope check" in feedback
    assert [(r["verdict"], (r["gates"].get("deadline") or {}).get("stage")) for r in s.stops] == [
        ("error", "the scope check"), ("gave_up", "the scope check")]
    assert [a["hookEvent"] for a in s.attachments("hook_blocking_error")] == ["Stop"]
