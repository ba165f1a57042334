"""A leak written to the transcript after the stop read it is caught later (issue 16, item 6).

Claude Code may append the last tool result after the Stop hook has read the transcript: a stop
that passes would never see it. The next stop of the session reads it; `donegate report` reads each
passing session's transcript from where its last stop left off and records what it finds.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.repos import KIT, ledger_lines, stop_lines, run_hook, stop_payload
from tests.support.repos import fix_bug


def _entry(kind: str, content: str) -> str:
    if kind == "user":
        return json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "x", "content": content}]}}) + "\n"
    return json.dumps({"type": "assistant", "message": {"content": content}}) + "\n"


def _report() -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", "report"], capture_output=True, text=True, timeout=120, cwd=KIT)


def _passed_with_a_late_leak(sealed_shop, kit_home, tmp_path):
    (test_file,) = (kit_home / "acceptance").glob("shop-*/test_bulk_discount.py")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_entry("assistant", "let me look") + _entry("user", "ls output: shop tests"))
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(transcript)))
    assert res.returncode == 0 and "leak" not in stop_lines(kit_home)[0]["gates"]
    with open(transcript, "a") as fh:  # written after the hook read the transcript
        fh.write(_entry("user", test_file.read_text()))
    return transcript


def test_report_records_a_leak_written_after_a_passing_stop_once(sealed_shop, kit_home, tmp_path):
    transcript = _passed_with_a_late_leak(sealed_shop, kit_home, tmp_path)
    res = _report()
    assert res.returncode == 0, res.stderr
    assert "a leak found late in session s1" in res.stderr
    leak_lines = [r for r in ledger_lines(kit_home) if r["event"] == "leak"]
    assert len(leak_lines) == 1
    (line,) = leak_lines
    assert line["session"] == "s1" and line["found"] == "late" and line["leak"]["source_lines"] > 0
    assert line["transcript"] == str(transcript)
    assert "a leak found late" not in _report().stderr  # recorded once
    assert len([r for r in ledger_lines(kit_home) if r["event"] == "leak"]) == 1


def test_the_next_stop_of_the_session_sees_it_too(sealed_shop, kit_home, tmp_path):
    transcript = _passed_with_a_late_leak(sealed_shop, kit_home, tmp_path)
    res = run_hook(stop_payload(sealed_shop, transcript_path=str(transcript)))
    assert "transcript shows hidden acceptance-test content" in json.loads(res.stdout)["systemMessage"]
    assert ledger_lines(kit_home)[-1]["gates"]["leak"]["source_lines"] > 0


def test_an_honest_session_gets_no_late_leak(sealed_shop, kit_home, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_entry("user", "ls output: shop tests"))
    fix_bug(sealed_shop)
    assert run_hook(stop_payload(sealed_shop, transcript_path=str(transcript))).returncode == 0
    with open(transcript, "a") as fh:
        fh.write(_entry("user", "def test_mine():\n    assert cart_total() == 100  # the agent's own test"))
    res = _report()
    assert res.returncode == 0 and "leak" not in res.stderr
    assert not [r for r in ledger_lines(kit_home) if r["event"] == "leak"]


def test_a_note_whose_transcript_is_gone_is_dropped(sealed_shop, kit_home, tmp_path):
    transcript = _passed_with_a_late_leak(sealed_shop, kit_home, tmp_path)
    transcript.unlink()
    assert _report().returncode == 0
    assert not list((kit_home / "state" / "rescan").glob("*.json"))
