"""Reviewers with the real Claude Code binary against the scripted Messages API.

Each reviewer is a real `claude -p` (model.run); FakeAPI routes each run to its own script by the
role line in its prompt ("Role: reviewer A", "Role: reviewer B", "Role: critic"). Through the hook,
the reviewers' `claude` finds the fake server in the hook's environment, as it would find the real
API key in a developer's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repos import write_config, EXAMPLE_TESTS, KIT, run_hook, stop_lines, stop_payload
from tests.support.repos import fix_bug
from tests.support.fakeapi import FakeAPI, callable_tools, first_user_text, text, tool, turn
from tests.support.reviewers import A, B, BUG, CRITIC, NIT, stamped, verdict
from tests.support.session import _clean_env, find_claude, run_session

pytestmark = pytest.mark.e2e

READ_FOREVER = [turn(tool("Read", {"file_path": "shop/pricing.py"}))] * 4  # never answers: max turns
TEXT_ONLY = [text("Looks good to me."), text("Still looks good.")]  # answers in text: no structured_output


@pytest.fixture
def fake_env(monkeypatch):
    """`make(api)`: an environment (also installed in os.environ) whose `claude` talks to `api` only."""

    def make(api: FakeAPI) -> dict:
        env = _clean_env({"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key",
                          "DONEGATE_CLAUDE": str(find_claude())}, home=Path(os.environ["HOME"]))
        for name in list(os.environ):
            if name not in env:
                monkeypatch.delenv(name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return env

    return make


def review_cli(repo: Path, env: dict, *args: str) -> tuple[int, dict]:
    res = subprocess.run([sys.executable, "-m", "donegate", "review", str(repo), "--json", *args],
                         capture_output=True, text=True, timeout=180, cwd=KIT, env=env)
    assert res.returncode in (0, 1, 2), res.stderr
    return res.returncode, json.loads(res.stdout)


def test_pair_the_same_finding_from_both_is_merged(sealed_shop, fake_env):
    other = {**BUG, "line": 14, "summary": "10 units get no discount", "severity": "minor"}
    hold = 3.0  # seconds each answer is held: run one after the other, B could not ask before A had its answer
    with FakeAPI(scripts={A: verdict(False, BUG, NIT), B: verdict(False, other)}, delay=hold) as api:
        code, result = review_cli(sealed_shop, fake_env(api))
    assert code == 1
    merged = {f["file"]: f for f in result["findings"]}
    assert len(result["findings"]) == 2
    assert merged["shop/pricing.py"]["reviewers"] == ["A", "B"] and merged["shop/pricing.py"]["severity"] == "blocking"
    assert merged["shop/pricing.py"]["also"] == ["10 units get no discount"]
    # In parallel: each reviewer's first request came before the other had its first answer (an order of
    # events, not a speed: the answers are held `hold` seconds; one after the other, the gap is at least that).
    a_first, b_first = api.main_requests(A)[0].time, api.main_requests(B)[0].time
    assert b_first < a_first + hold and a_first < b_first + hold


def test_critic_confirming_blocks_and_rejecting_approves(sealed_shop, fake_env):
    scripts = {A: verdict(False, BUG, NIT), CRITIC: stamped((1, "confirmed"), (2, "rejected"))}
    with FakeAPI(scripts=scripts) as api:
        env = fake_env(api)
        code, result = review_cli(sealed_shop, env, "--mode", "critic")
        shown = first_user_text(api.main_requests(CRITIC)[0].body)
    assert code == 1 and result["verdict"] == "block"
    assert [f["status"] for f in result["findings"]] == ["confirmed", "rejected"]
    assert "1. [blocking] shop/pricing.py:15: the threshold check excludes exactly 10 units" in shown
    assert "2. [minor] shop/cart.py:20" in shown
    assert [r["role"] for r in result["reviewers"]] == ["A", "critic"] and result["reviewers"][1]["turns"] >= 1

    with FakeAPI(scripts={A: verdict(False, BUG), CRITIC: stamped((1, "rejected"))}) as api:
        code, result = review_cli(sealed_shop, fake_env(api), "--mode", "critic")
    assert code == 0 and result["verdict"] == "approve"
    assert result["findings"][0]["status"] == "rejected" and result["findings"][0]["reason"] == "read line 1"


def test_pair_one_reviewer_blocking_blocks_in_readable_output(sealed_shop, fake_env):
    """One reviewer's blocking finding blocks the pair, read as a person reads it (the --json form of a block is in
    the tests around: one review for both, where there were two)."""
    with FakeAPI(scripts={A: verdict(True), B: [turn(tool("Read", {"file_path": "shop/pricing.py"})), *verdict(False, BUG)]}) as api:
        res = subprocess.run([sys.executable, "-m", "donegate", "review", str(sealed_shop)], capture_output=True,
                             text=True, timeout=180, cwd=KIT, env=fake_env(api))
    assert res.returncode == 1, res.stderr
    assert res.stdout.startswith("donegate review (pair) of ") and ": BLOCK" in res.stdout.splitlines()[0]
    assert "[blocking] shop/pricing.py:15: the threshold check excludes exactly 10 units (reviewer B)" in res.stdout
    assert "reviewer A: approve, 0 findings" in res.stdout
    # The Read really ran, in the repository, read-only tools only.
    (read,) = api.tool_results(api.main_requests(B)[1])
    assert "BULK_THRESHOLD" in read["content"] and not read["is_error"]


# -- through the Stop hook ------------------------------------------------------------------------


def configure(kit_home: Path, text: str) -> None:
    write_config(kit_home, text)


# Mode and failure are independent (any reviewer error allows, in either mode): each mode meets one failure,
# each failure one mode, rather than all four pairs (4 -> 2 hook runs, 8 -> 4 `claude -p` reviewers).
@pytest.mark.parametrize("mode, broken", [("hint", "max_turns"), ("block", "text_only")])
def test_a_failing_reviewer_allows_the_stop_and_tells_the_user(sealed_shop, kit_home, fake_env, mode, broken):
    configure(kit_home, f"review: {mode}\nreviewer:\n  max_turns: 2\n")
    fix_bug(sealed_shop)
    script = READ_FOREVER if broken == "max_turns" else TEXT_ONLY
    with FakeAPI(scripts={A: verdict(True), B: script}) as api:
        res = run_hook(stop_payload(sealed_shop), env=fake_env(api))
    assert res.returncode == 0, res.stderr
    message = json.loads(res.stdout)["systemMessage"]
    assert "the review failed" in message and "WITHOUT a review" in message
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "review_error"
    review = line["gates"]["review"]
    assert review["verdict"] == "error" and review["reviewers"][0]["approve"] is True
    b = review["reviewers"][1]
    expected = {"max_turns": "error_max_turns", "text_only": "bad_output"}[broken]
    assert b["subtype"] == expected and b["error"], b


def test_block_mode_blocks_on_a_blocking_finding(sealed_shop, kit_home, fake_env):
    configure(kit_home, "review: block\n")
    fix_bug(sealed_shop)
    with FakeAPI(scripts={A: verdict(False, BUG), B: verdict(True)}) as api:
        res = run_hook(stop_payload(sealed_shop, message="Done, fixed."), env=fake_env(api))
    assert res.returncode == 2
    assert res.stderr.startswith("You reported the work as complete, but the reviewers found blocking problems")
    assert "a model's judgment, not a failed test" in res.stderr and "shop/pricing.py:15" in res.stderr
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "block" and line["gates"]["acceptance"]["failed"] == 0
    review = line["gates"]["review"]
    assert [r["role"] for r in review["reviewers"]] == ["A", "B"] and review["cost_usd"] > 0
    assert all(k in review["reviewers"][0] for k in ("approve", "findings", "turns", "cost_usd", "duration", "error"))


def test_hint_reaches_the_agent_in_a_real_session(shop_repo, kit_home):
    """The whole path: Claude Code runs the hook, the hook runs two nested `claude -p` reviewers, the
    hint comes back as Stop-hook feedback, and the agent's next stop (no change) ends the session without a review
    of the hinted state (once a test of its own at the hook: one more stop, two more reviewers)."""
    configure(kit_home, "review: hint\n")
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"{sys.executable} {KIT / 'hooks' / 'stop_gate.py'}",
                                               "timeout": 300}]}]}}
    (shop_repo / ".claude").mkdir()
    (shop_repo / ".claude" / "settings.json").write_text(json.dumps(settings))  # before the seal: protected from then on
    sealed = subprocess.run([sys.executable, "-m", "donegate", "seal", str(shop_repo), str(EXAMPLE_TESTS / "test_bulk_discount.py"),
                             "--request", "orders of 10 or more units get 10% off"], capture_output=True, text=True, timeout=120, cwd=KIT)
    assert sealed.returncode == 0, sealed.stderr
    fix_bug(shop_repo)
    agent = [text("Done: 10 units now get the discount."), text("The reviewer's point is already handled; done.")]
    with FakeAPI(agent, scripts={A: verdict(False, BUG), B: verdict(True, NIT)}) as api:
        res = run_session(shop_repo, api, "orders of 10 or more units should get 10% off",
                          extra_env={"DONEGATE_HOME": str(kit_home), "DONEGATE_CLAUDE": str(find_claude())}, timeout=240)
        feedback = api.stop_hook_feedback()
    assert res.returncode == 0, res.describe()
    assert res.result["result"] == "The reviewer's point is already handled; done."
    assert len(feedback) == 1 and "a model's judgment, not a failed test" in feedback[0] and "shop/pricing.py:15" in feedback[0]
    assert "raised 2 point(s)" in feedback[0] and "shop/cart.py:20" in feedback[0]  # A's finding and B's nit
    assert not api.overrun and api.remaining() == 0
    # The hinted state is not reviewed again: each reviewer asked as often as its one review's script answers.
    assert [len(api.main_requests(role)) for role in (A, B)] == [len(verdict(False, BUG)), len(verdict(True, NIT))]
    lines = stop_lines(kit_home)
    assert [r["verdict"] for r in lines] == ["hint", "pass"]
    assert lines[0]["gates"]["review"]["reviewers"][0]["findings"][0]["line"] == 15


def test_pair_approves_and_a_reviewer_cannot_read_the_hidden_tests(sealed_shop, fake_env, kit_home):
    """Read-only tools can still read any absolute path: the kit's deny rules and guard go in by --settings.
    Both attempts in one review: reviewer A Reads the hidden file, reviewer B Greps the kit's home; both approve
    after (the approving pair once had a review of its own)."""
    (hidden,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    read = tool("Read", {"file_path": str(hidden)})
    grep = tool("Grep", {"pattern": "def test_", "path": str(kit_home)})
    fix_bug(sealed_shop)
    with FakeAPI(scripts={A: [turn(read), *verdict(True)], B: [turn(grep), *verdict(True)]}) as api:
        code, out = review_cli(sealed_shop, fake_env(api))
        shown = "\n".join(api.all_text_shown())
    assert code == 0 and out["verdict"] == "approve" and out["findings"] == []
    assert not api.overrun and api.remaining(A) == api.remaining(B) == 0
    for r in out["reviewers"]:
        assert r["approve"] is True and r["error"] == "" and r["turns"] >= 1 and r["cost_usd"] > 0 and r["duration"] > 0
    prompt = first_user_text(api.main_requests(A)[0].body)
    assert "orders of 10 or more units get 10% off" in prompt and "+    if units >= BULK_THRESHOLD:" in prompt
    assert sorted(callable_tools(api.main_requests(A)[0].body)) == ["Glob", "Grep", "Read", "StructuredOutput"]
    assert "def test_ten_units_get_the_bulk_discount" not in shown and "3870" not in shown
    for role in (A, B):
        result = api.tool_results(api.main_requests(role)[1])[0]
        assert result["is_error"], (role, result)
