"""One session, one counter: stops without a session id never share a counter with another session."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.repos import HOOK, KIT, stop_lines, run_hook, stop_payload
from donegate.sessions import ids as sessions

UUID = "0b9c2d6e-1f3a-4c5d-8e7f-9a0b1c2d3e4f"


def no_id(repo, transcript: str = "", **extra) -> dict:
    return stop_payload(repo, session="", transcript_path=transcript, **extra)


def test_sessions_without_an_id_but_with_transcripts_are_counted_apart(sealed_shop, kit_home, tmp_path):
    # The reported bleed: every empty session_id was session "unknown", one counter for all.
    a, b = tmp_path / f"{UUID}.jsonl", tmp_path / "other" / "b9c2d6e0-1f3a-4c5d-8e7f-9a0b1c2d3e4f.jsonl"
    codes = [run_hook(no_id(sealed_shop, str(a))).returncode for _ in range(3)]
    codes.append(run_hook(no_id(sealed_shop, str(b))).returncode)
    assert codes == [2, 2, 2, 2]  # b is not handed over on a's no-progress streak
    lines = stop_lines(kit_home)
    assert [r["session"] for r in lines] == [UUID] * 3 + [b.stem]
    assert {r["session_from"] for r in lines} == {"transcript_path"}
    # ... and a's own counter still bounds it
    assert run_hook(no_id(sealed_shop, str(a))).returncode == 0
    assert stop_lines(kit_home)[-1]["verdict"] == "gave_up"


def test_a_transcript_not_named_like_a_session_is_known_by_its_whole_path(tmp_path):
    one, two = str(tmp_path / "a" / "transcript.jsonl"), str(tmp_path / "b" / "transcript.jsonl")
    assert sessions.resolve({"transcript_path": one}) == (one, "transcript_path")
    assert sessions.resolve({"transcript_path": one})[0] != sessions.resolve({"transcript_path": two})[0]
    assert sessions.resolve({"session_id": "s1", "transcript_path": one}) == ("s1", "")
    assert sessions.resolve({"session_id": 7}) == ("7", "")


def test_a_real_session_id_adds_no_field(blocked_shop, kit_home):  # its first stop, made by `blocked_shop`
    assert "session_from" not in stop_lines(kit_home)[0]


def via_wrapper(payload: dict) -> subprocess.CompletedProcess:
    """The hook run by another long-lived process (a second Claude Code, say): a python parent."""
    code = ("import subprocess, sys; r = subprocess.run([sys.executable, sys.argv[1]], input=sys.argv[2], text=True,"
            " capture_output=True); sys.stderr.write(r.stderr); sys.exit(r.returncode)")
    return subprocess.run([sys.executable, "-c", code, str(HOOK), json.dumps(payload)], capture_output=True, text=True,
                          timeout=300, cwd=KIT)


def test_with_neither_the_counter_is_the_parent_processs_bounded_and_its_own(sealed_shop, kit_home):
    # Stops through a shell (as Claude Code runs hooks): the shell differs every stop, its parent does not.
    via_sh = ["sh", "-c", f"{sys.executable} {HOOK}"]
    codes = [subprocess.run(via_sh, input=json.dumps(no_id(sealed_shop)), capture_output=True, text=True,
                            timeout=300).returncode for _ in range(3)]
    other = via_wrapper(no_id(sealed_shop))  # another process: its own counter, not this streak's end
    codes += [other.returncode, run_hook(no_id(sealed_shop)).returncode]
    assert codes == [2, 2, 2, 2, 0], [r["session"] for r in stop_lines(kit_home)]
    lines = stop_lines(kit_home)
    assert {r["session_from"] for r in lines} == {"parent_process"}
    mine = {lines[i]["session"] for i in (0, 1, 2, 4)}
    assert len(mine) == 1 and lines[3]["session"] not in mine and mine.pop().startswith("no-session@pid")
    assert lines[4]["verdict"] == "gave_up"  # bounded by the breaker like any session


def test_with_no_process_to_name_the_repository_bounds_it(monkeypatch, tmp_path):
    monkeypatch.setattr(sessions, "_ancestor", lambda: None)
    one, why = sessions.resolve({"cwd": str(tmp_path / "a")})
    assert why == "repository" and one.startswith("no-session@a-")
    assert sessions.resolve({"cwd": str(tmp_path / "b")})[0] != one


def test_the_broken_kit_launcher_counts_empty_ids_apart(sealed_shop, tmp_path):
    kit = tmp_path / "kit"
    (kit / "hooks").mkdir(parents=True)
    (kit / "hooks" / "stop_gate.py").write_text((KIT / "hooks" / "stop_gate.py").read_text())
    (kit / "donegate").mkdir()
    (kit / "donegate" / "__init__.py").write_text("raise RuntimeError('broken')\n")

    def stop(transcript: str) -> int:
        return subprocess.run([sys.executable, "-I", str(kit / "hooks" / "stop_gate.py")],
                              input=json.dumps(no_id(sealed_shop, transcript)), capture_output=True, text=True,
                              timeout=60).returncode

    codes = [stop("/t/a.jsonl") for _ in range(6)] + [stop("/t/b.jsonl"), stop("/t/a.jsonl")]
    assert codes == [2] * 6 + [2, 0]  # b blocks on its own count; a lets go after its six


def test_without_proc_ps_names_the_same_process(monkeypatch):
    import builtins
    import os

    real = sessions._proc(os.getpid())
    opened = builtins.open

    def no_proc(path, *a, **kw):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return opened(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", no_proc)
    comm, ppid, start = sessions._proc(os.getpid())
    assert (comm[:15], ppid) == (real[0][:15], real[1]) and start  # the kernel cuts comm at 15 characters
