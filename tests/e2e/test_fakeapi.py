"""The scripted Messages API on its own (no Claude Code): what it cannot answer, it refuses with a 400
that names the request, so a client release that asks for something new fails with a clear cause."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.support.fakeapi import FakeAPI, feedback_reason, is_stop_feedback, system_text, text, tool, turn


def _call(api: FakeAPI, path: str, body: dict | None = None, method: str = "POST") -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(api.base_url + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Read", "input_schema": {}},
         {"name": "WebFetch", "input_schema": {}, "defer_loading": True}]


def test_a_scripted_call_to_a_tool_not_offered_is_refused_naming_both() -> None:
    with FakeAPI([turn(tool("Grep", {"pattern": "x"}))]) as api:
        status, body = _call(api, "/v1/messages?beta=true", {"messages": [], "tools": TOOLS})
    assert status == 400
    msg = body["error"]["message"]
    assert msg.startswith("fakeapi: cannot answer request #0 (POST /v1/messages?beta=true")
    assert "tools=['Bash', 'Read']" in msg and "deferred=['WebFetch']" in msg and "['Grep']" in msg
    assert api.unanswered == [msg] and api.errors == [msg]


def test_a_deferred_tool_is_not_callable_directly() -> None:
    with FakeAPI([turn(tool("WebFetch", {"url": "x"}))]) as api:
        status, body = _call(api, "/v1/messages", {"messages": [], "tools": TOOLS})
    assert status == 400 and "['WebFetch']" in body["error"]["message"]


def test_an_offered_tool_is_answered_and_strict_tools_can_be_switched_off() -> None:
    with FakeAPI([turn(tool("Bash", {"command": "ls"}))]) as api:
        status, body = _call(api, "/v1/messages", {"messages": [], "tools": TOOLS})
    assert status == 200 and body["content"][0]["name"] == "Bash" and not api.unanswered
    with FakeAPI([turn(tool("Grep", {}))], strict_tools=False) as api:
        status, _ = _call(api, "/v1/messages", {"messages": [], "tools": TOOLS})
    assert status == 200


@pytest.mark.parametrize("method,path", [("POST", "/v1/complete"), ("GET", "/api/hello"), ("PUT", "/v1/messages")])
def test_an_unknown_endpoint_is_a_400_naming_method_and_path(method: str, path: str) -> None:
    with FakeAPI() as api:
        status, body = _call(api, path, {} if method != "GET" else None, method=method)
    assert status == 400
    assert f"cannot answer request #0 ({method} {path}" in body["error"]["message"]
    assert len(api.unanswered) == 1


def test_a_scripted_step_that_raises_is_named() -> None:
    def broken(_body):
        raise FileNotFoundError(2, "No such file or directory")

    with FakeAPI([broken]) as api:
        status, body = _call(api, "/v1/messages", {"messages": [], "tools": TOOLS})
    assert status == 400
    assert "tools=['Bash', 'Read']" in body["error"]["message"] and "FileNotFoundError" in body["error"]["message"]


def test_the_head_probe_is_still_a_quiet_404() -> None:
    with FakeAPI() as api:
        req = urllib.request.Request(api.base_url + "/", method="HEAD")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 404 and not api.unanswered


def test_system_text_reads_system_messages_too() -> None:
    # 2.1.332 sends the environment block as a "role": "system" message, not in the system prompt.
    body = {"system": [{"type": "text", "text": "identity"}],
            "messages": [{"role": "user", "content": "task"},
                         {"role": "system", "content": [{"type": "text", "text": " - Primary working directory: /r"}]}]}
    assert "identity" in system_text(body) and "Primary working directory: /r" in system_text(body)


@pytest.mark.parametrize("shown", [
    "Stop hook feedback:\nthe reason",  # 2.1.197, JSON decision
    "Stop hook feedback:\n[/x/python -I /x/stop.py]: the reason",  # 2.1.197, stderr
    "<system-reminder>\nThe text below is the output of a hook.\nStop hook feedback:\n[/bin/hook]: the reason\n\n</system-reminder>",
    '<system-reminder>\nThe text below...\nStop hook blocking error from command: "/bin/a \\"b\\"": the reason\n</system-reminder>',
])
def test_feedback_reason_unwraps_every_wording(shown: str) -> None:
    assert is_stop_feedback(shown)
    assert feedback_reason(shown) == "the reason"


def test_a_side_request_still_gets_text() -> None:
    with FakeAPI([text("main")]) as api:
        status, body = _call(api, "/v1/messages", {"messages": [{"role": "user", "content": "title?"}]})
    assert status == 200 and body["content"][0]["text"] == "OK" and api.remaining() == 1
