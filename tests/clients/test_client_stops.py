"""The real Stop hook (hooks/stop_gate.py, a subprocess, a sealed repository) answering the payloads Gemini CLI
0.61.0, Copilot CLI 1.0.102 and Qwen Code 0.15.10 send (recorded from the real binaries: docs/<client>.md):
the block in the form each obeys, the ledger's `client`, the kit's counter ending a loop whatever
`stop_hook_active` says, and the claim and the appeal read from Copilot's transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from donegate.clients.payloads import client_of, copilot_last_message, normalize
from tests.support.repos import KIT, fix_bug, ledger_lines, run_hook, stop_lines, write_config

ASSERTION = "assert 4300 == 3870"


def copilot_transcript(tmp_path, *messages: str) -> str:
    """An `events.jsonl` as Copilot CLI 1.0.102 writes it (the events the kit reads, and some it skips)."""
    path = tmp_path / "session-state" / "c0ffee" / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"type": "session.start", "data": {"sessionId": "c0ffee"}},
            {"type": "user.message", "data": {"content": "Do it."}}]
    for m in messages:
        rows += [{"type": "assistant.message", "data": {"content": m, "toolRequests": []}},
                 {"type": "assistant.message", "data": {"content": "", "toolRequests": [{"name": "bash"}]}},
                 {"type": "assistant.turn_end", "data": {"turnId": "0"}}]
    rows.append(_hook_row(1))  # the stop's own hook (`payload`'s timestamp), written with its batch
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _hook_row(stamp: int) -> dict:
    """The `hook.start` event Copilot writes as it starts a stop's hook: its input is the payload, timestamp and all."""
    return {"type": "hook.start", "data": {"hookInvocationId": f"h{stamp}", "hookType": "agentStop",
                                           "input": {"sessionId": "c0ffee", "timestamp": stamp, "stopReason": "end_turn"}}}


def payload(client: str, repo, session: str, message: str = "All done, it works.", active: bool = False,
            transcript: str = "") -> dict:
    if client == "copilot":  # its own agentStop hook: no last message
        return {"sessionId": session, "timestamp": 1, "cwd": str(repo), "transcriptPath": transcript,
                "stopReason": "end_turn", "stop_hook_active": active}
    if client == "copilot-claude":  # a Claude Code install picked up by Copilot
        return {"hook_event_name": "Stop", "session_id": session, "timestamp": "t", "cwd": str(repo),
                "transcript_path": transcript, "stop_reason": "end_turn", "stop_hook_active": active}
    if client == "gemini":
        return {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": "AfterAgent",
                "timestamp": "t", "prompt": "Do it.", "prompt_response": message, "stop_hook_active": active}
    return {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": "Stop",  # qwen
            "timestamp": "t", "stop_hook_active": True, "last_assistant_message": message}


def test_the_client_comes_from_the_payloads_shape_else_the_environment():
    assert client_of(payload("copilot", "/r", "s")) == "copilot"
    assert client_of(payload("copilot-claude", "/r", "s")) == "copilot"
    assert client_of(payload("gemini", "/r", "s")) == "gemini"
    qwen = payload("qwen", "/r", "s")
    assert client_of(qwen, env={}) == "claude"  # Claude Code's own shape
    assert client_of(qwen, env={"QWEN_PROJECT_DIR": "/r"}) == "qwen"
    assert client_of(qwen, "qwen", env={}) == "qwen" and client_of(qwen, "nonsense", env={}) == "claude"
    assert client_of({"session_id": "s"}, env={"COPILOT_CLI": "1"}) == "copilot"


def test_copilots_payload_gets_claude_codes_keys_and_its_last_message_from_the_transcript(tmp_path):
    t = copilot_transcript(tmp_path, "First try.", "All done: fixed it.")
    p = normalize(payload("copilot", "/r", "c0ffee", transcript=t))
    assert (p["session_id"], p["transcript_path"], p["last_assistant_message"]) == ("c0ffee", t, "All done: fixed it.")
    assert p["sessionId"] == "c0ffee"  # nothing of the client's own is taken away
    assert normalize(payload("gemini", "/r", "s", "a\nb"))["last_assistant_message"] == "a\nb"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert copilot_last_message(str(fifo)) is None  # refused at once, never waited on
    assert copilot_last_message(str(tmp_path / "gone")) is None


def test_copilots_message_is_waited_for_only_in_an_events_file_that_is_there(tmp_path, monkeypatch):
    """Copilot appends its events on its own schedule, so the claim is read again for a while when none is there
    yet; a transcript path naming no file (or a FIFO) is answered at once (it waited a whole second). The sleeps
    are counted, not timed: the fake sleep writes the message on its first call, as Copilot would."""
    import time

    t = copilot_transcript(tmp_path)  # the session's events, no message yet
    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        with open(t, "a") as fh:
            fh.write(json.dumps({"type": "assistant.message", "data": {"content": "Done late."}}) + "\n")

    monkeypatch.setattr(time, "sleep", nap)
    assert normalize(payload("copilot", "/r", "c0ffee", transcript=t))["last_assistant_message"] == "Done late."
    assert len(naps) == 1  # the look-alike: a file that is there is read again once it grew
    naps.clear()
    clock = [0.0]

    def counted(seconds: float) -> None:
        naps.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(time, "sleep", counted)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "last_assistant_message" not in normalize(payload("copilot", "/r", "c0ffee", transcript=str(fifo)))
    assert naps == []  # a FIFO is never waited on
    gone = str(tmp_path / "gone" / "events.jsonl")
    assert "last_assistant_message" not in normalize(payload("copilot", "/r", "c0ffee", transcript=gone))
    # Copilot makes its events.jsonl with its first batch, as it starts the first stop's hook: waited for, a second
    assert 0.9 <= sum(naps) <= 1.1


@pytest.mark.parametrize("form", ["copilot", "copilot-claude"])
def test_copilots_claim_is_the_one_before_this_stops_hook_not_the_last_stops(form, tmp_path, monkeypatch):
    """Copilot 1.0.102 writes its events in a batch as it starts a hook: the stop's hook can read the file before
    its turn is in it, and find there the claim of the stop before (every real-client run here). The claim taken is
    the last message before this stop's own `hook.start`, whose input's timestamp is the payload's (milliseconds from
    its own hook, an ISO time from a Claude Code install), waited for while the batch is on its way."""
    import time

    t = copilot_transcript(tmp_path, "First claim: all done.")  # the stop before, its hook's event (timestamp 1)
    stamp = 1796509984591
    late = [{"type": "user.message", "data": {"content": "donegate: not done"}},
            {"type": "assistant.message", "data": {"content": "Second claim: fixed.", "toolRequests": []}},
            {"type": "assistant.turn_end", "data": {"turnId": "1"}}, _hook_row(stamp)]
    naps: list[float] = []

    def nap(seconds: float) -> None:
        if not naps:
            with open(t, "a") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in late))
        naps.append(seconds)

    monkeypatch.setattr(time, "sleep", nap)
    p = payload(form, "/r", "c0ffee", active=True, transcript=t)
    p["timestamp"] = stamp if form == "copilot" else "2026-12-05T22:33:04.591Z"
    out = normalize(p)
    assert out["last_assistant_message"] == "Second claim: fixed."  # the old code: "First claim: all done."
    text = open(t, "rb").read()
    assert text[:out["said_at"]].endswith(b'"Second claim: fixed.", "toolRequests": []}}\n')
    assert len(naps) == 1


@pytest.mark.parametrize("client", ["gemini", "copilot", "copilot-claude", "qwen"])
def test_a_block_is_exit_2_with_the_reason_on_stderr_and_as_a_json_decision_and_the_fix_passes(
        client, sealed_shop, kit_home, tmp_path):
    """Copilot obeys only the JSON decision on stdout (exit 2 with stderr alone is a warning); Gemini reads the
    JSON's reason on exit 2; Qwen Code reads stderr on exit 2: the one answer serves all three."""
    t = copilot_transcript(tmp_path, "All done, it works.") if client.startswith("copilot") else ""
    res = run_hook(payload(client, sealed_shop, "sess-" + client, transcript=t),
                   env={"QWEN_PROJECT_DIR": str(sealed_shop)} if client == "qwen" else None)
    assert res.returncode == 2, res.stderr
    body = json.loads(res.stdout)
    assert body["decision"] == "block" and ASSERTION in body["reason"] and ASSERTION in res.stderr
    assert body["reason"].startswith("You reported the work as complete")  # the claim, read where the client has it
    fix_bug(sealed_shop)
    res = run_hook(payload(client, sealed_shop, "sess-" + client, active=True, transcript=t),
                   env={"QWEN_PROJECT_DIR": str(sealed_shop)} if client == "qwen" else None)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = stop_lines(kit_home)
    assert [r["verdict"] for r in lines] == ["block", "pass"]
    assert {r["client"] for r in lines} == {client.split("-")[0]}
    assert {r["session"] for r in lines} == {"sess-" + client}


@pytest.mark.parametrize("client", ["gemini", "qwen", "copilot"])
def test_the_kits_counter_hands_over_whatever_stop_hook_active_says(client, sealed_shop, kit_home, tmp_path):
    """Gemini has no cap (a hook that always blocks ran 853 times in 90 s) and says `stop_hook_active: false`
    again after any tool call; Qwen Code says true on every stop: the kit counts blocks per session itself."""
    write_config(kit_home, "max_blocks: 2\n")
    env = {"QWEN_PROJECT_DIR": str(sealed_shop)} if client == "qwen" else None
    codes = []
    for i in range(3):  # each stop a new claim (Copilot: a new message in its transcript)
        t = copilot_transcript(tmp_path, *["All done."] * (i + 1)) if client == "copilot" else ""
        codes.append(run_hook(payload(client, sealed_shop, "loop", active=False, transcript=t), env=env).returncode)
    assert codes == [2, 2, 0]
    lines = stop_lines(kit_home)
    assert [r["verdict"] for r in lines] == ["block", "block", "gave_up"] and {r["client"] for r in lines} == {client}


def test_an_appeal_is_read_from_copilots_transcript(sealed_shop, kit_home, tmp_path):
    t = copilot_transcript(tmp_path, "All done.")
    assert run_hook(payload("copilot", sealed_shop, "appeal", transcript=t)).returncode == 2
    copilot_transcript(tmp_path, "All done.", "I kept it.\nAPPEAL: the request says 10 or more units; this test wants more")
    res = run_hook(payload("copilot", sealed_shop, "appeal", active=True, transcript=t))
    assert res.returncode == 0, res.stdout + res.stderr
    assert [(r["verdict"], r["client"]) for r in stop_lines(kit_home)] == [("block", "copilot"), ("appealed", "copilot")]


@pytest.mark.parametrize("client", ["gemini", "copilot", "qwen", "claude"])
def test_the_guard_refuses_in_the_form_each_client_reads(client, kit_home, tmp_path):
    """Gemini CLI 0.61.0 runs the tool on Claude Code's `hookSpecificOutput` deny (exit 2 notwithstanding) and reads
    `{"decision": "deny"}`; Copilot CLI 1.0.102 sends `toolName`/`toolArgs` and reads a top-level
    `permissionDecision` (exit 2 alone denies, without the reason); Qwen Code reads Claude Code's form."""
    secret = kit_home / "acceptance" / "x" / "test_secret.py"
    command = f"cat {secret}"
    p = {"gemini": {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "BeforeTool",
                    "tool_name": "run_shell_command", "tool_input": {"command": command}},
         "copilot": {"sessionId": "s", "timestamp": 1, "cwd": str(tmp_path), "toolName": "bash",
                     "toolArgs": {"command": command, "description": "look"}},
         "qwen": {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
                  "tool_name": "run_shell_command", "tool_input": {"command": command}}}.get(client) or \
        {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": command}}
    env = {"QWEN_PROJECT_DIR": str(tmp_path)} if client == "qwen" else {}
    res = subprocess.run([sys.executable, str(KIT / "hooks" / "guard.py"), "--home", str(kit_home)],
                         input=json.dumps(p), capture_output=True, text=True, timeout=60,
                         env={**os.environ, **env})
    assert res.returncode == 2 and "refused" in res.stderr
    body = json.loads(res.stdout)
    if client == "gemini":
        assert body["decision"] == "deny" and "refused" in body["reason"]
    elif client == "copilot":
        assert body["permissionDecision"] == "deny" and "refused" in body["permissionDecisionReason"]
    else:
        assert body["hookSpecificOutput"]["permissionDecision"] == "deny"
    (line,) = [r for r in ledger_lines(kit_home) if r["event"] == "guard"]
    assert line["client"] == client and line["session"] == "s"


@pytest.mark.parametrize("client", ["gemini", "copilot", "qwen"])
def test_a_hidden_test_shown_in_the_clients_transcript_is_a_leak_on_the_ledger(client, sealed_shop, kit_home, tmp_path):
    """Each client's transcript as it writes what the model was shown (a tool's result): Gemini CLI's `content`,
    Copilot CLI's `tool.execution_complete` event, Qwen Code's Claude-like `message`."""
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    source = test_file.read_text()
    shown = {"gemini": {"type": "user", "content": [{"functionResponse": {"response": {"output": source}}}]},
             "copilot": {"type": "tool.execution_complete", "data": {"success": True, "result": {"content": source}}},
             "qwen": {"type": "user", "message": {"role": "user", "parts": [{"functionResponse": {
                 "response": {"output": source}}}]}}}[client]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "assistant.message", "data": {"content": "All done."}}) + "\n"
                          + json.dumps(shown) + "\n")
    fix_bug(sealed_shop)
    p = payload(client, sealed_shop, "leaky", transcript=str(transcript))
    p["transcript_path" if client != "copilot" else "transcriptPath"] = str(transcript)
    res = run_hook(p, env={"QWEN_PROJECT_DIR": str(sealed_shop)} if client == "qwen" else None)
    assert res.returncode == 0, res.stderr
    (line,) = stop_lines(kit_home)
    assert line["gates"]["leak"]["source_lines"] > 0 and line["client"] == client


def test_copilots_two_hooks_of_one_stop_share_one_verdict(sealed_shop, kit_home, tmp_path):
    """With both installs (`--client copilot` and a repository's Claude Code install), Copilot CLI 1.0.102 runs the two
    hooks of a stop one after the other and writes its hook events into the transcript between them: without an
    exact key the stop was judged twice (two ledger lines, two blocks counted: seen with the real binary)."""
    t = copilot_transcript(tmp_path, "All done, it works.")
    first = run_hook(payload("copilot", sealed_shop, "both", transcript=t))
    with open(t, "a") as fh:
        fh.write(json.dumps({"type": "hook.start", "data": {"hookType": "agentStop"}}) + "\n")
    second = run_hook(payload("copilot-claude", sealed_shop, "both", transcript=t))
    assert first.returncode == second.returncode == 2 and first.stdout == second.stdout
    (line,) = stop_lines(kit_home)
    assert line["blocks"] == 1
    copilot_transcript(tmp_path, "All done, it works.", "Still done.")  # the session's next stop: judged again
    assert run_hook(payload("copilot", sealed_shop, "both", active=True, transcript=t)).returncode == 2
    assert [r["blocks"] for r in stop_lines(kit_home)] == [1, 2]
