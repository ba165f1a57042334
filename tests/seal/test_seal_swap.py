"""The seal's switch is one atomic step, and a crash leaves no copy of the tests behind (issue 16, items 2, 3).

A seal is killed (SIGKILL, by the fault hook `DONEGATE_FAULT=seal:<step>`) at each step of building
and switching in a new store; the next stop must find the old store or the new one, whole, never
neither, and must sweep whatever the crash left beside it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.repos import EXAMPLE_TESTS, KIT, stop_lines, run_hook, stop_payload

NEW_TESTS = "from shop.pricing import line_total\n\ndef test_one():\n    assert line_total(100, 2) == 200\n"
BEFORE_SWITCH = ["seal:copied", "seal:built", "seal:record-written"]
AFTER_SWITCH = ["seal:switched", "seal:cleaned"]


def _seal(repo, *tests, env=None):
    return subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), *map(str, tests), "--replace"],
                          capture_output=True, text=True, timeout=120, cwd=KIT, env={**os.environ, **(env or {})})


def _copies(kit_home):
    """Every folder or file under acceptance/ (the store, and anything a seal left over)."""
    root = kit_home / "acceptance"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


@pytest.fixture
def new_tests(tmp_path):
    p = tmp_path / "new" / "test_new.py"
    p.parent.mkdir()
    p.write_text(NEW_TESTS)
    return p


@pytest.mark.parametrize("step", BEFORE_SWITCH + AFTER_SWITCH)
def test_a_seal_killed_at_any_step_leaves_the_old_store_or_the_new_one(sealed_shop, kit_home, new_tests, step):
    res = _seal(sealed_shop, new_tests, env={"DONEGATE_FAULT": step})
    assert res.returncode == -signal.SIGKILL, res.stderr
    res = run_hook(stop_payload(sealed_shop))
    (line,) = stop_lines(kit_home)
    assert line["gates"]["integrity"]["ok"] is True, line
    expected = 5 if step in BEFORE_SWITCH else 1
    assert line["gates"]["integrity"]["tests"] == expected
    assert res.returncode == (2 if expected == 5 else 0), res.stderr  # the old tests fail on the bug, the new one passes
    (store,) = _copies(kit_home)  # the stop swept what the crash left
    assert store.startswith("shop-")


def test_a_first_seal_killed_before_the_switch_reads_as_unsealed_and_is_swept(shop_repo, kit_home):
    res = _seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py", env={"DONEGATE_FAULT": "seal:built"})
    assert res.returncode == -signal.SIGKILL
    assert len(_copies(kit_home)) == 1  # the half-made store
    res = run_hook(stop_payload(shop_repo))
    assert res.returncode == 0 and stop_lines(kit_home)[0]["verdict"] == "unsealed"
    assert _copies(kit_home) == []


def test_the_next_seal_sweeps_what_crashed_seals_left(sealed_shop, kit_home, new_tests):
    for step in ("seal:copied", "seal:built", "seal:switched"):
        assert _seal(sealed_shop, new_tests, env={"DONEGATE_FAULT": step}).returncode == -signal.SIGKILL
    assert len(_copies(kit_home)) > 1
    assert _seal(sealed_shop, new_tests).returncode == 0
    assert len(_copies(kit_home)) == 1


def test_seals_killed_at_random_moments_leave_one_store(sealed_shop, kit_home, new_tests):
    """kill -9 from outside, at moments spread over a seal's run (not a fault hook)."""
    for delay in (0.2, 0.5, 0.8, 1.2):
        proc = subprocess.Popen([sys.executable, "-m", "donegate", "seal", str(sealed_shop), str(new_tests), "--replace"], cwd=KIT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        proc.wait(timeout=60)
    res = run_hook(stop_payload(sealed_shop))
    line = stop_lines(kit_home)[-1]
    assert line["gates"]["integrity"]["ok"] is True and line["gates"]["integrity"]["tests"] in (1, 5), (res.stderr, line)
    assert len(_copies(kit_home)) == 1


def test_a_seal_waits_for_another_seal_of_the_same_repository(sealed_shop, kit_home, new_tests):
    """Two seals at once: each builds its own folder under the seal lock; the last one wins, whole."""
    procs = [subprocess.Popen([sys.executable, "-m", "donegate", "seal", str(sealed_shop), str(t), "--replace"], cwd=KIT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for t in (new_tests, EXAMPLE_TESTS / "test_bulk_discount.py")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    run_hook(stop_payload(sealed_shop))
    line = stop_lines(kit_home)[-1]
    assert line["gates"]["integrity"]["ok"] is True
    assert len(_copies(kit_home)) == 1


def test_install_after_seal_switches_like_a_seal(sealed_shop, kit_home):
    res = subprocess.run([sys.executable, "-m", "donegate", "install", str(sealed_shop), "--sandbox", "off"],
                         capture_output=True, text=True, timeout=120, cwd=KIT, env={**os.environ, "DONEGATE_FAULT": "seal:record-written"})
    assert res.returncode == -signal.SIGKILL
    run_hook(stop_payload(sealed_shop))
    line = stop_lines(kit_home)[-1]
    assert line["gates"]["integrity"]["ok"] is True  # the old store, whole: only the new settings read as changed
    assert line["gates"]["scope"]["protected"] == [".claude/donegate-install.json", ".claude/settings.json"]
    assert len(_copies(kit_home)) == 1
