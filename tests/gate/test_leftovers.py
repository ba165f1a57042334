"""Stale run folders swept after a stop's answer (`donegate.hidden.leftovers`): a hook killed mid-stop (the client's
timeout, a person's Ctrl-C, a killed test run) never removes its `donegate-run-*` folder, so the next stop's
after-answer child removes the ones in the same temporary folder that are the kit's own, real folders and
untouched for a day. A live run's, a stranger's, a link's target and any other name stay.

One real stop of a pooled seal, in a temporary folder of the test's own (TMPDIR), read once the hook and its
after-answer child are both gone (`run_hook(after=True)`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from donegate.claude import settings as vocab
from tests.support.repos import HOOK, KIT, pooled_single, run_hook, run_to_the_end, stop_payload, write_config

BODY = "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n"  # test_gate's pooled seal: no seal of its own
OLD = time.time() - 3 * 86400  # far past the sweep's bound (a day)


def _folder(path: Path, when: float | None = OLD) -> Path:
    """A run folder as a killed stop leaves one: files and a folder inside, modes as a run makes them."""
    (path / "repo" / "pkg").mkdir(parents=True)
    (path / "repo" / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (path / "repo" / "pkg").chmod(0o500)  # a folder the run made read-only: still removed
    if when is not None:
        os.utime(path, (when, when))
    return path


def test_a_stop_sweeps_its_own_stale_run_folders_and_nothing_else(tmp_path_factory, tmp_path, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, BODY)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    stale = [_folder(tmp / "donegate-run-killed"), _folder(tmp / "donegate-own-killed")]
    outside = _folder(tmp_path / "outside")
    link = tmp / "donegate-run-link"
    link.symlink_to(outside)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    stay = [_folder(tmp / "donegate-run-live", when=None),  # a run going on now (its folder was just made)
            _folder(tmp / "donegate-write-old"), _folder(tmp / "pytest-of-root-old"),  # not the runs' names
            link]
    plain = tmp / "donegate-run-file"  # a file, not a folder
    plain.write_text("x")
    os.utime(plain, (OLD, OLD))
    stay.append(plain)
    if os.geteuid() == 0:  # a stranger's folder can only be made by root (CI runs as root, as this machine)
        other = _folder(tmp / "donegate-run-stranger")
        for top, dirs, files in os.walk(other):
            for name in (top, *(os.path.join(top, n) for n in dirs + files)):
                os.chown(name, 65534, 65534)
        os.utime(other, (OLD, OLD))
        stay.append(other)
    res = run_hook(stop_payload(repo), env={"TMPDIR": str(tmp)}, after=True)
    assert res.returncode in (0, 2), res.stderr
    assert "assert" in res.stderr  # the stop ran its hidden test (1 != 2): a stop with runs, not a cached one
    assert [p.name for p in stale if os.path.lexists(p)] == []
    assert [p.name for p in stay if not os.path.lexists(p)] == []
    assert link.is_symlink() and (outside / "repo" / "pkg" / "mod.py").read_text() == "VALUE = 1\n"
    assert sorted(p.name for p in tmp.iterdir()) == sorted(p.name for p in stay)  # the stop's own run folder gone too


def test_a_run_folder_still_in_use_at_the_answer_goes_once_the_hook_has_exited(tmp_path):
    """A run ended unrun at a cached stop is given a moment to let go of its folder (`acceptance.Running.abandon`);
    one that let go only after the after-answer child was forked left its folder (31 in one CI's make test). The child
    now removes the folders still in use at the answer, once the hook, and with it the run's thread, is gone."""
    folder = tmp_path / "donegate-run-letting-go"
    (folder / "python" / "bin").mkdir(parents=True)
    (folder / "nsswitch.conf").write_text("hosts: files\n")
    script = (f"import os, sys\nsys.path.insert(0, {str(KIT)!r})\nfrom donegate.hidden import copy\n"
              f"copy.LIVE.add({str(folder)!r})\n"  # a run's thread that has not let go of its folder yet
              "copy.after_answer()\nos._exit(2)\n")  # as hooks/stop_gate.py ends
    res = run_to_the_end([sys.executable, "-c", script])
    assert res.returncode == 2, res.stderr
    assert not folder.exists()


def _runs_left(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith(("donegate-run-", "donegate-own-")))


@pytest.mark.own_suite
def test_a_stop_the_watchdog_answers_leaves_no_run_folder(sealed_shop, kit_home, tmp_path):
    """The stop's deadline passed: the watchdog answers block and ends the hook (`os._exit`), with the runs, the own
    suite's folder and the run the launcher started early still holding theirs. It left them all (16 in
    test_bounds and test_bounds_e2e: a hidden run's, the second run's, the own suite's run and folder, a stop).
    Now the watchdog's answer is followed by the after-answer child, as any answer is, and the own suite's folder is
    named in `copy.LIVE` while its runs may use it. Stops: one that keeps the early run's recipe, one that hangs
    before the runs (the early run never taken), one that hangs beside them (the scope check)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # As install writes a checkout's Stop hook (its --repo: the launcher starts the first run early)
    argv = vocab.launch_words(HOOK, python=os.path.abspath(sys.executable), home=kit_home, repo=sealed_shop)
    env = {**{k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"}, "TMPDIR": str(tmp)}

    def stop() -> subprocess.CompletedProcess:
        return run_to_the_end(argv, input=json.dumps(stop_payload(sealed_shop)), env=env)

    write_config(kit_home, "timeout: 20\nhook_margin: 5\n")
    res = stop()
    assert res.returncode == 2 and "assert 4300 == 3870" in res.stderr, res.stderr  # a stop with runs
    assert _runs_left(tmp) == []
    assert list((kit_home / "state" / "early").glob("*.recipe"))  # the next stop's first run starts early
    write_config(kit_home, "timeout: 1\nhook_margin: 5\nmax_blocks: 9\n")  # deadline 4 s
    for stage in ("the store check", "the scope check"):
        (kit_home / "state" / "fault").write_text("hang:" + stage)
        res = stop()
        assert res.returncode == 2 and "did not finish within its deadline" in res.stderr, res.stderr
        assert stage in res.stderr
        assert _runs_left(tmp) == [], stage
