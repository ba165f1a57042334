"""The rule every client's e2e session holds its model requests to (tests/support/secrecy.py), on requests made
here (no client): each thing it must find it finds, in the shapes the clients send it, and a look-alike beside
each is not a leak. No session: a few milliseconds."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from types import SimpleNamespace

from tests.support import secrecy
from tests.support.fakeapi import Request
from tests.support.fakechat import FakeChat

QUOTED = 'cart.add("mug", 430, 6)'  # a hidden line with quotes: a JSON dump of the request escapes them
ASSERTION = "assert 4300 == 3870"  # what a block shows: the assertion, not the test


def _gated(tmp_path: Path) -> SimpleNamespace:
    home = tmp_path / "donegate-home"
    return SimpleNamespace(kit=tmp_path / "kit", home=home, store=home / "acceptance" / "shop-1")


def _chat(*messages: dict) -> SimpleNamespace:
    """What a scripted Chat Completions server keeps of `messages` sent as Copilot and Qwen Code send them."""
    return SimpleNamespace(requests=[{"method": "POST", "path": "/v1/chat/completions", "headers": {},
                                      "body": {"model": "m", "messages": list(messages)}}])


def test_a_hidden_line_is_found_whole_though_the_request_escapes_its_quotes(tmp_path):
    g = _gated(tmp_path)
    assert QUOTED in secrecy.HIDDEN_LINES
    with FakeChat() as api:  # a real server's keeping of a real request
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"You reported...\n{QUOTED}"}]})
        urllib.request.urlopen(urllib.request.Request(f"{api.base_url}/chat/completions", body.encode(), method="POST",
                                                      headers={"Content-Type": "application/json"}), timeout=30).read()
    assert QUOTED not in api.all_request_text()  # what the tests searched before: blind to it
    assert secrecy.leaks(api, g) == {"hidden lines": [QUOTED]}
    assert secrecy.leaks(_chat({"role": "user", "content": f"You reported the work as complete\n{ASSERTION}"}), g) == {}


def test_codex_html_escaped_block_is_read_unescaped(tmp_path):
    line = "assert a < b and c > d"
    api = SimpleNamespace(requests=[{"body": {"input": [{"text": "<hook_prompt>assert a &lt; b and c &gt; d"}]}}])
    assert secrecy.quoted(secrecy.request_text(api), [line]) == [line]
    assert secrecy.quoted(secrecy.request_text(api), ["assert a < b and c > e"]) == []


def test_a_path_named_anywhere_in_any_request_is_a_leak_and_a_longer_name_beside_it_is_not(tmp_path):
    g = _gated(tmp_path)
    claude = SimpleNamespace(requests=[Request(0, "POST", "/v1/messages", {"x-note": str(g.store)}, {"messages": []})])
    assert secrecy.leaks(claude, g) == {"names": {"the store": str(g.store), "the state root": str(g.home)}}
    beside = SimpleNamespace(requests=[Request(0, "POST", "/v1/messages", {}, {"system": f"{g.home}-other, {g.kit}2"})])
    assert secrecy.leaks(beside, g) == {}


def test_what_the_agent_typed_is_left_out_of_the_names_only(tmp_path):
    g = _gated(tmp_path)
    peek = f"cat {g.store}/test_x.py"
    typed = {"role": "assistant", "tool_calls": [{"function": {"name": "bash", "arguments": json.dumps({"command": peek})}}]}
    assert secrecy.leaks(_chat(typed), g, typed=[peek]) == {}
    # The same path given back by something else than the agent's command is named.
    back = _chat(typed, {"role": "tool", "content": f"refused: {g.store}/test_x.py"})
    assert secrecy.leaks(back, g, typed=[peek]) == {"names": {"the store": str(g.store), "the state root": str(g.home)}}
    # The kit quoting the agent's command whole, in a guard refusal (Codex appends the command) or a Stop reason.
    guard = f"Command blocked by PreToolUse hook: donegate guard: this Bash call was refused: {peek}; and a person decides."
    for kit in (guard, f"You reported the work as complete, but:\nyou ran {peek}"):
        assert secrecy.leaks(_chat(typed, {"role": "tool", "content": kit}), g, typed=[peek]) == \
               {"names": {"the store": str(g.store), "the state root": str(g.home)}}, kit
    refusal = "donegate guard: this Bash call was refused: it names a protected folder; and a person decides."
    assert secrecy.leaks(_chat(typed, {"role": "tool", "content": f"{refusal}. Command: {peek}"}), g, typed=[peek]) == {}
    said = _chat(typed, {"role": "tool", "content": QUOTED})
    assert secrecy.leaks(said, g, typed=[peek, QUOTED]) == {"hidden lines": [QUOTED]}  # a hidden line never


def test_codex_listing_of_the_denied_folders_is_left_out_only_for_codex(tmp_path):
    g = _gated(tmp_path)
    text = (f"<permission_profile><path>{g.home}</path></permission_profile>\n## Denied filesystem reads\n"
            f"The active permission profile denies reading these paths/globs.\n- path `{g.home}`\n- path `{g.kit}`\n")
    api = SimpleNamespace(requests=[{"body": {"instructions": text}}])
    assert secrecy.leaks(api, g, codex=True) == {}
    assert set(secrecy.leaks(api, g)["names"]) == {"the state root", "the kit copy"}
    api.requests.append({"body": {"output": f"ls {g.kit}"}})  # outside the listing: named, even for Codex
    assert secrecy.leaks(api, g, codex=True) == {"names": {"the kit copy": str(g.kit)}}
