"""`donegate write` end to end: the real Claude Code binary plays host to the scripted writer.

Each test runs `donegate write` in-process (cli.main) with the environment pointed at a FakeAPI;
model.run starts the pinned `claude -p` exactly as it would for a user. A run takes ~1 s of CLI
start-up per attempt plus the kit's pytest runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from donegate import cli
from donegate.seal import store
from tests.support.repos import write_config, EXAMPLE_TESTS, ledger_lines
from tests.support.fakeapi import FakeAPI, callable_tools, error, first_user_text, text, tool, turn
from tests.support.session import _clean_env, find_claude

pytestmark = pytest.mark.e2e

REQUEST = "orders of 10 or more units get 10% off"

# The bundled example's hidden tests, as if the writer had written them.
GOOD = (EXAMPLE_TESTS / "test_bulk_discount.py").read_text()
FAILING_BEFORE = ["test_bulk.py::" + n for n in (
    "test_discount_rounds_down_to_whole_cents", "test_ten_units_get_the_bulk_discount", "test_units_across_lines_count_together")]
PASSING_BEFORE = ["test_bulk.py::test_nine_units_pay_full_price", "test_bulk.py::test_zero_quantity_is_refused"]


def answer(files: dict[str, str], **more) -> dict:
    return turn(tool("StructuredOutput", {"files": [{"path": k, "content": v} for k, v in files.items()], **more}))


@pytest.fixture
def claude_api(monkeypatch, kit_home):
    """A FakeAPI that `claude` (and so the writer) talks to, and nothing else; donegate.yaml keeps runs short."""
    claude = find_claude()  # skips when the binary is not installed
    write_config(kit_home, "writer:\n  attempts: 2\n  max_turns: 6\n  timeout: 60\n")  # 6: the schema retries (5) fit
    with FakeAPI() as server:
        env = _clean_env({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key", "DONEGATE_CLAUDE": str(claude)},
                         home=Path(os.environ["HOME"]))
        for name in set(os.environ) - set(env):
            monkeypatch.delenv(name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        yield server


def write(repo: Path, capsys) -> tuple[int, str, str]:
    code = cli.main(["write", str(repo), "--request", REQUEST])
    out, err = capsys.readouterr()
    return code, out, err


def attempt_prompts(api: FakeAPI) -> list[str]:
    """The prompt of each writer run, as the server received it (first request of each session)."""
    seen, out = set(), []
    for req in api.main_requests():
        if req.session_id not in seen:
            seen.add(req.session_id)
            out.append(first_user_text(req.body))
    return out


def assert_nothing_sealed(repo: Path, kit_home: Path) -> None:
    assert store.load(repo, kit_home) is None
    assert not (kit_home / "acceptance").exists() or not any((kit_home / "acceptance").iterdir())
    events = [r["event"] for r in ledger_lines(kit_home)]
    assert "write" not in events and events[-1] == "write_failed", events


def test_good_answer_is_sealed_with_manifest_and_baseline(claude_api, shop_repo, kit_home, capsys):
    claude_api.add(turn(tool("Grep", {"pattern": "BULK_THRESHOLD"})), answer({"test_bulk.py": GOOD}, notes="n"))
    (shop_repo / "shop" / "coupons.py").write_text("# the agent is already at work\n")  # not what the writer sees

    code, out, err = write(shop_repo, capsys)

    assert code == 0, err
    assert not claude_api.overrun, claude_api.overrun_message
    st = store.load(shop_repo, kit_home)
    m = st.manifest
    assert m["request"] == REQUEST
    assert sorted(m["tests"]) == sorted(FAILING_BEFORE + PASSING_BEFORE)
    # The baseline was taken by seal against the repository; the writer read HEAD. It splits new requirements from
    # existing behaviour: the example's bug is `units > BULK_THRESHOLD`, so exactly 10 units fails before the change.
    assert m["baseline"] == {"failing": FAILING_BEFORE, "passing": PASSING_BEFORE, "skipped": []}
    assert "3 new (failing now), 2 existing behaviour (passing now)" in out
    w = m["writer"]
    assert w["attempts"] == 1 and w["turns"] == 2 and w["cost_usd"] > 0 and w["duration"] > 0
    assert w["model"] and w["notes"] == "n" and w["suspicious"] == []
    (line,) = [r for r in ledger_lines(kit_home) if r["event"] == "write"]
    assert line["tests"] == 5 and line["attempts"] == 1 and line["repo"] == str(shop_repo)
    assert line["new"] + line["existing"] == 5 and line["cost_usd"] == w["cost_usd"]
    assert "wrote and sealed 5 tests" in out
    assert "differ from HEAD" in err  # the working-tree change is pointed out
    # The prompt holds the request and the rules; the run had only read-only tools.
    (prompt,) = attempt_prompts(claude_api)
    assert REQUEST in prompt
    for rule in ("one test per behaviour", "missing fields", "wrong types", "boundaries", "persistence",
                 "caches", "existing behaviour that must stay unchanged", "Inferred:", "docstring"):
        assert rule in prompt, rule
    assert "shop/pricing.py" in prompt and "coupons" not in prompt  # the file listing, at HEAD
    tools = sorted(callable_tools(claude_api.main_requests()[0].body))  # 2.1.332 adds a deferred placeholder
    assert tools == ["Glob", "Grep", "Read", "StructuredOutput"]
    # The Grep ran in the clean copy at HEAD, not in the changed working tree.
    (grep,) = claude_api.tool_results(claude_api.main_requests()[1])
    assert "pricing.py" in grep["content"] and str(shop_repo) not in grep["content"]


def test_all_passing_answer_is_flagged_suspicious_and_the_model_log_records_every_run_with_its_cost(
        claude_api, shop_repo, kit_home, capsys):
    """The second attempt's answer passes before the change: flagged. The first attempt answered in text: the model
    log holds both runs with their costs (the log had a write of its own: two `claude -p` runs and a seal)."""
    claude_api.add(text("no"), text("still no"),
                   answer({"test_nine.py": "from shop.cart import Cart\n\ndef test_empty():\n    assert Cart().total() == 0\n"}))
    code, out, err = write(shop_repo, capsys)
    assert code == 0, err
    assert "warning: no test fails before the change (1 test, all passing)" in err
    w = store.load(shop_repo, kit_home).manifest["writer"]
    assert w["suspicious"]
    lines = [json.loads(x) for x in (kit_home / "logs" / "model.jsonl").read_text().splitlines()]
    assert [(x["purpose"], x["subtype"], x["ok"]) for x in lines] == [("writer", "bad_output", False), ("writer", "success", True)]
    assert all(x["cost_usd"] > 0 and x["turns"] >= 1 for x in lines)
    assert w["attempts"] == 2 and w["cost_usd"] == round(lines[0]["cost_usd"] + lines[1]["cost_usd"], 6)


# Each way an answer can be unusable, with what the next attempt's prompt (and the failure) must say about it.
BAD = [
    ("text-only", [text("Here are your tests."), text("They are above.")], "answered in text"),
    ("syntax-error", [answer({"test_x.py": "def test_x(:\n    pass\n"})], "test_x.py line 1: "),
    ("does-not-collect", [answer({"test_x.py": "from shop.coupons import apply\n\ndef test_x():\n    pass\n"})],
     "test_x.py does not collect: ModuleNotFoundError: No module named 'shop.coupons'"),
    ("no-tests", [answer({"test_x.py": "def helper():\n    pass\n"})], "test_x.py: pytest collected no test"),
    ("max-turns", [turn(tool("Glob", {"pattern": "*.py"}))] * 6, "you used all 6 turns"),
    ("schema-invalid", [answer({"tests/test_x.py": GOOD})] * 5, "did not match the output schema"),
]


def test_each_bad_answer_is_retried_with_its_error_then_the_writer_fails_cleanly(claude_api, shop_repo, kit_home, capsys):
    """One `donegate write` whose attempts are each unusable in another way, one after the other: each attempt's
    prompt names the problem of the one before (the retry is the same whatever the problem was), the last one's is
    the failure's. One write of 7 attempts where there were six writes of 2 (12 `claude -p` runs)."""
    write_config(kit_home, f"writer:\n  attempts: {len(BAD) + 1}\n  max_turns: 6\n  timeout: 60\n")
    last = BAD[1]  # the seventh attempt: a problem of its own for the failure to name
    for _, bad, _ in BAD + [last]:
        claude_api.add(*bad)
    code, out, err = write(shop_repo, capsys)

    assert code == 1
    assert not claude_api.overrun, claude_api.overrun_message
    first, *later = attempt_prompts(claude_api)
    assert "rejected" not in first and len(later) == len(BAD)
    for k, ((name, _, shown), prompt) in enumerate(zip(BAD, later, strict=True), start=1):
        assert f"Your previous answer was rejected (attempt {k} of {len(BAD) + 1})" in prompt and shown in prompt, \
            (name, prompt[-3000:])
        assert REQUEST in prompt
    assert f"no usable tests in {len(BAD) + 1} attempt(s); nothing was sealed" in err and last[2] in err, err
    *_, failure, fix = err.strip().splitlines()
    assert failure.startswith("donegate: the writer gave no usable tests") and fix.startswith("  fix: "), err
    assert_nothing_sealed(shop_repo, kit_home)


def test_schema_rejection_is_shown_to_the_model_inside_the_run(claude_api, shop_repo, kit_home, capsys):
    # Claude Code checks the schema itself and tells the model at once; a fixed answer is accepted.
    claude_api.add(answer({"../test_x.py": GOOD}), answer({"test_bulk.py": GOOD}))
    code, out, err = write(shop_repo, capsys)
    assert code == 0, err
    (rejection,) = claude_api.tool_results(claude_api.main_requests()[1])
    assert rejection["is_error"] and "Output does not match required schema" in rejection["content"]
    assert store.load(shop_repo, kit_home).manifest["writer"]["attempts"] == 1


def test_api_error_fails_at_once_with_one_line(claude_api, shop_repo, kit_home, capsys):
    # The API says the same to each resend of the one run (2.1.332 resends a 400 a few times, reshaped).
    claude_api.add(*[error(400, "invalid_request_error", "model not available")] * 10)
    code, out, err = write(shop_repo, capsys)
    assert code == 1
    # Not retried: another attempt cannot fix the API. One claude run (2.1.332 itself resends a 400 a few
    # times at once, reshaped; 2.1.197 sent it once).
    assert len({r.session_id for r in claude_api.main_requests()}) == 1
    last = err.strip().splitlines()[-1]
    assert "the model API refused the request (API Error: 400 model not available)" in last, err
    assert last.startswith("donegate: the writer failed") and "fix:" not in err
    assert_nothing_sealed(shop_repo, kit_home)


def test_not_logged_in_is_one_clear_line(claude_api, shop_repo, kit_home, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, out, err = write(shop_repo, capsys)
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert "Claude Code is not logged in; run `claude` once and log in, or set ANTHROPIC_API_KEY" in last, err


def test_missing_claude_is_one_clear_line(claude_api, shop_repo, kit_home, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DONEGATE_CLAUDE", str(tmp_path / "nowhere" / "claude"))
    code, out, err = write(shop_repo, capsys)
    assert code == 1 and "is not an executable Claude Code binary" in err and "fix:" in err
    assert not claude_api.requests
