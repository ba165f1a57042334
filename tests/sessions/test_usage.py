"""The agent's session's own cost and time, in the ledger (issue 38 item 7): read from Claude Code's
transcript at every stop, a reply counted once by its id, each model at its price in the dated table,
a model the table does not know reported as unknown (never $0); the report and the page show them per
configuration beside the gate's share. The transcript is read only from where the last stop left off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from donegate import report
from donegate.sessions import usage
from tests.support.repos import KIT, run_hook, stop_lines, stop_payload

SONNET = "claude-sonnet-4-5-20250929"


def entry(kind: str, when: str, **message) -> dict:
    """One transcript line in Claude Code's shape (the fields the kit reads, and some it does not)."""
    rec = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/x", "sessionId": "s",
           "version": "2.1.332", "type": kind, "uuid": f"u-{when}", "timestamp": when}
    if kind == "assistant":
        rec["message"] = {"type": "message", "role": "assistant", "stop_reason": None, **message}
        rec["requestId"] = "req_1"
    else:
        rec["message"] = {"role": "user", "content": message.get("content", "do it")}
    return rec


def reply(mid: str, when: str, model: str = SONNET, i: int = 3, o: int = 100, cw: int = 2000, cr: int = 10000,
          block: str = "text") -> dict:
    return entry("assistant", when, id=mid, model=model, content=[{"type": block, "text": "x"}],
                 usage={"input_tokens": i, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr,
                        "output_tokens": o, "service_tier": "standard"})


def write(path: Path, *entries: dict) -> None:
    with path.open("a") as fh:
        for e in entries:
            fh.write(json.dumps(e) + "\n")


def test_the_price_table_is_dated_and_names_its_source():
    table = usage.prices()
    assert table["date"] and table["source"].startswith("https://")
    assert usage.price_of(SONNET) == table["models"]["claude-sonnet-4-5"]  # the longest prefix
    assert usage.price_of("claude-fake") is None


def test_a_stop_records_the_sessions_cost_and_time_then_reads_only_what_is_new(sealed_shop, kit_home, tmp_path):
    transcript = tmp_path / "session.jsonl"
    write(transcript, entry("user", "2026-12-05T10:00:00.000Z"),
          # one reply written as two entries (a text block, then a tool call): counted once
          reply("msg_1", "2026-12-05T10:00:05.000Z"), reply("msg_1", "2026-12-05T10:00:05.500Z", block="tool_use"),
          entry("user", "2026-12-05T10:00:06.000Z", content="tool result"),
          reply("msg_2", "2026-12-05T10:01:40.000Z", model="claude-haiku-4-5-20251001", i=50, o=10, cw=0, cr=0))
    assert run_hook(stop_payload(sealed_shop, session="s", transcript_path=str(transcript))).returncode == 2
    agent = report.agent_of(stop_lines(kit_home)[-1])
    sonnet = (3 * 3.0 + 100 * 15.0 + 2000 * 3.75 + 10000 * 0.3) / 1e6
    haiku = (50 * 1.0 + 10 * 5.0) / 1e6
    assert agent["usd"] == round(sonnet + haiku, 6) and agent["seconds"] == 100.0
    assert agent["models"][SONNET] == {"input": 3, "output": 100, "cache_write": 2000, "cache_read": 10000,
                                       "usd": round(sonnet, 6)}
    assert agent["prices"] == usage.prices()["date"]
    (state,) = (kit_home / "state" / "usage").glob("*.json")
    assert json.loads(state.read_text())["offset"] == transcript.stat().st_size

    # The next stop reads only what was added: a line the first stop would have counted twice is not
    # read again, and a torn last line waits for the stop after.
    write(transcript, reply("msg_3", "2026-12-05T10:03:20.000Z"))
    with transcript.open("a") as fh:
        fh.write('{"type": "assistant", "timestamp": "2026-12-05T10:09')
    assert run_hook(stop_payload(sealed_shop, session="s", transcript_path=str(transcript))).returncode == 2
    agent = report.agent_of(stop_lines(kit_home)[-1])
    assert agent["usd"] == round(2 * sonnet + haiku, 6) and agent["seconds"] == 200.0
    assert json.loads(state.read_text())["offset"] == transcript.stat().st_size - len('{"type": "assistant", "timestamp": "2026-12-05T10:09')


def test_a_model_the_table_does_not_know_is_unknown_never_zero(sealed_shop, kit_home, tmp_path):
    transcript = tmp_path / "t.jsonl"
    write(transcript, reply("m1", "2026-12-05T10:00:00.000Z"), reply("m2", "2026-12-05T10:00:30.000Z", model="claude-fake"))
    assert run_hook(stop_payload(sealed_shop, session="u", transcript_path=str(transcript))).returncode == 2
    agent = report.agent_of(stop_lines(kit_home)[-1])
    assert agent["usd"] is None and agent["unknown"] == ["claude-fake"] and agent["models"]["claude-fake"]["usd"] is None
    assert agent["seconds"] == 30.0
    summary = report_json()
    (g,) = summary["groups"]
    assert g["agent_sessions_unpriced"] == 1 and g["agent_cost_per_session_usd"] is None
    timeline = subprocess.run([sys.executable, "-m", "donegate", "report", "--session", "u"], capture_output=True, text=True,
                              cwd=KIT).stdout
    assert "the agent's session: cost unknown (claude-fake not in the price table of" in timeline and "30.0s" in timeline
    assert "+1 unpriced" in subprocess.run([sys.executable, "-m", "donegate", "report"], capture_output=True, text=True,
                                           cwd=KIT).stdout


def test_the_transcript_is_read_only_as_a_regular_file(sealed_shop, kit_home, tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "link.jsonl"
    real = tmp_path / "real.jsonl"
    write(real, reply("m1", "2026-12-05T10:00:00.000Z"))
    link.symlink_to(real)
    for path in (fifo, link):
        res = run_hook(stop_payload(sealed_shop, session=f"odd-{path.stem}", transcript_path=str(path)), timeout=60)
        assert res.returncode == 2, res.stderr
        assert "agent" not in stop_lines(kit_home)[-1] and "agent_usd" not in stop_lines(kit_home)[-1]


def report_json() -> dict:
    res = subprocess.run([sys.executable, "-m", "donegate", "report", "--json"], capture_output=True, text=True, cwd=KIT)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_report_and_the_page_show_the_agents_cost_and_time_per_configuration(sealed_shop, kit_home, tmp_path):
    for sid, model_out in (("a", 100), ("b", 300)):
        transcript = tmp_path / f"{sid}.jsonl"
        write(transcript, reply(f"{sid}1", "2026-12-05T10:00:00.000Z", o=model_out, cw=0, cr=0),
              reply(f"{sid}2", "2026-12-05T10:00:50.000Z", o=model_out, cw=0, cr=0))
        assert run_hook(stop_payload(sealed_shop, session=sid, transcript_path=str(transcript))).returncode == 2
    lines = stop_lines(kit_home)
    summary = report_json()
    (g,) = summary["groups"]
    mean = round((lines[0]["agent_usd"] + lines[1]["agent_usd"]) / 2, 4)
    assert g["agent_cost_per_session_usd"] == mean and g["agent_seconds_per_session"] == 50.0
    assert g["agent_sessions_priced"] == 2 and g["cost_per_session_usd"] == 0  # the gate's share: no writer, no reviewer
    from donegate.report import read as reader

    assert summary == json.loads(json.dumps(report.summarize([kit_home / "ledger.jsonl"], fast=False))), \
        "the fast path and json.loads agree"
    stops = [raw for raw in (kit_home / "ledger.jsonl").read_bytes().splitlines() if b'"event":"stop"' in raw]
    assert all((m := reader.fast_line(raw)) and reader._fast_agent(m["agent"]) for raw in stops), \
        "stop lines with the agent's figures take the report's fast path"
    out = subprocess.run([sys.executable, "-m", "donegate", "report"], capture_output=True, text=True, cwd=KIT).stdout
    assert "agent $/session" in out and f"${mean}" in out and "gate time/session" in out
    page = tmp_path / "r.html"
    assert subprocess.run([sys.executable, "-m", "donegate", "report", "--html", str(page)], cwd=KIT).returncode == 0
    text = page.read_text()
    assert "agent cost / session" in text and "50.0s" in text
