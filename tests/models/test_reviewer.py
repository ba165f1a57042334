"""Reviewers without a model: merging, stamping, verdicts, and the gate's use of them.

Hand-made `ModelRun`s stand in for `claude -p`; the e2e file drives the real binary.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from tests.support.repos import write_config, stop_lines, stop_payload
from donegate import config, gate
from donegate.models import reviewer
from donegate.claude.headless import ModelRun
from tests.support.repos import fix_bug


def answer(structured=None, *, ok=True, subtype="success", error="", turns=2, cost=0.01, duration=1.0) -> ModelRun:
    return ModelRun(ok=ok, subtype=subtype, structured=structured, text="", turns=turns, cost_usd=cost,
                    duration=duration, error=error, model="claude-fake", raw=None)


def finding(file="shop/pricing.py", line=15, summary="threshold check is off by one", severity="blocking", evidence="`>` should be `>=`"):
    return {"severity": severity, "file": file, "line": line, "summary": summary, "evidence": evidence}


def approve():
    return answer({"approve": True, "findings": []})


def blocks(*findings):
    return answer({"approve": False, "findings": list(findings) or [finding()]})


def stamps(*pairs):
    return answer({"stamps": [{"index": i, "status": s, "reason": f"checked {i}"} for i, s in pairs]})


NO_OUTPUT = answer(None, ok=False, subtype="bad_output", error="the model answered in text instead of the required structured output")
MAX_TURNS = answer(None, ok=False, subtype="error_max_turns", error="the model used all 15 turns without giving its answer")


class Script:
    """A stand-in for model.run: answers by the role in the prompt; records every call."""

    def __init__(self, **answers):
        self.answers = answers  # role -> ModelRun or callable(prompt, kwargs)
        self.calls: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def __call__(self, prompt, **kwargs):
        role = next(r for r in ("critic", "reviewer A", "reviewer B") if f"Role: {r}" in prompt)
        with self.lock:
            self.calls.append((role, {**kwargs, "prompt": prompt}))
        got = self.answers[role.replace("reviewer ", "")]
        return got(prompt, kwargs) if callable(got) else got


def cfg(**over):
    c = config.defaults()
    c.update(over)
    return c


def run_review(script, mode="pair", diff="diff --git a/x b/x\n+new line\n", **cfg_over):
    return reviewer.review(Path("/nonexistent"), "orders of 10 or more get 10% off", "abc", cfg(review_mode=mode, **cfg_over),
                           diff=diff, run_model=script)


# -- merging ---------------------------------------------------------------------------------------


def test_the_same_finding_from_both_is_counted_once_and_keeps_the_graver_severity():
    a = [finding(line=15, severity="minor")]
    b = [finding(file="./shop/pricing.py", line=16, summary="10 units get no discount", severity="blocking")]
    (m,) = reviewer.merge([("A", a), ("B", b)])
    assert m["reviewers"] == ["A", "B"] and m["severity"] == "blocking"
    assert m["summary"] == "threshold check is off by one" and m["also"] == ["10 units get no discount"]
    assert m["file"] == "shop/pricing.py"


@pytest.mark.parametrize("other, same", [
    (finding(line=18), True),                              # 3 lines apart: the `if` and the statement under it
    (finding(line=19), False),                             # further apart: another place
    (finding(file="shop/cart.py"), False),                 # another file
    (finding(file="b/shop/pricing.py"), True),             # a diff-style path is the same file
    (finding(line=0, summary="the threshold check is off by one unit"), True),   # no line: the words decide
    (finding(line=0, summary="rounding is wrong for odd cents"), False),
])
def test_what_counts_as_the_same_finding(other, same):
    assert reviewer.same_finding(finding(), other) is same


def test_one_reviewer_never_merges_with_itself_and_each_match_is_used_once():
    a = [finding(line=10, summary="first"), finding(line=12, summary="second")]
    b = [finding(line=12, summary="second, again"), finding(line=11, summary="first, again")]
    merged = reviewer.merge([("A", a), ("B", b)])
    assert [(m["line"], m["reviewers"]) for m in merged] == [(10, ["A", "B"]), (12, ["A", "B"])]
    assert merged[0]["also"] == ["first, again"] and merged[1]["also"] == ["second, again"]
    assert len(reviewer.merge([("A", a)])) == 2


# -- verdicts of a pair ----------------------------------------------------------------------------


def test_pair_approves_when_both_approve_and_runs_both_in_parallel():
    both = threading.Barrier(2, timeout=20)  # run one after the other, the first breaks it: an error

    def slow(prompt, kwargs):
        both.wait()
        return approve()

    script = Script(A=slow, B=slow)
    result = run_review(script)
    assert result["verdict"] == "approve" and result["findings"] == [] and result["errors"] == []
    assert [r["role"] for r in result["reviewers"]] == ["A", "B"]
    assert result["cost_usd"] == pytest.approx(0.02)
    (_, kw), _ = script.calls
    assert kw["tools"] == ["Read", "Grep", "Glob"] and kw["max_turns"] == 15 and kw["schema"]["required"] == ["approve", "findings"]
    assert "orders of 10 or more get 10% off" in kw["prompt"] and "+new line" in kw["prompt"]
    assert "<!--" not in kw["prompt"] and "{{" not in kw["prompt"]


def test_one_blocking_reviewer_blocks():
    result = run_review(Script(A=approve(), B=blocks()))
    assert result["verdict"] == "block"
    assert [f["reviewers"] for f in result["findings"]] == [["B"]]
    assert [r["approve"] for r in result["reviewers"]] == [True, False]


def test_minor_findings_alone_approve():
    result = run_review(Script(A=blocks(finding(severity="minor")), B=approve()))
    assert result["verdict"] == "approve" and len(result["findings"]) == 1


def test_a_self_contradicting_reviewer_is_judged_by_its_findings():
    result = run_review(Script(A=answer({"approve": True, "findings": [finding()]}), B=approve()))
    assert result["verdict"] == "block"


@pytest.mark.parametrize("broken", [NO_OUTPUT, MAX_TURNS, answer({"verdict": "fine"}), answer(["not", "an", "object"])])
def test_a_failed_reviewer_makes_an_error_never_an_approval(broken):
    result = run_review(Script(A=approve(), B=broken))
    assert result["verdict"] == "error"
    assert result["reviewers"][1]["error"] and result["errors"][0].startswith("reviewer B: ")


def test_a_failed_reviewer_does_not_cancel_the_other_ones_blocking_finding():
    result = run_review(Script(A=blocks(), B=MAX_TURNS))
    assert result["verdict"] == "block" and result["errors"]


def test_a_raising_model_run_is_a_failed_reviewer():
    def boom(prompt, kwargs):
        raise RuntimeError("no binary")

    result = run_review(Script(A=boom, B=approve()))
    assert result["verdict"] == "error" and "RuntimeError: no binary" in result["errors"][0]


def test_the_review_is_bounded_even_if_a_run_never_returns(monkeypatch):
    monkeypatch.setattr(reviewer, "JOIN_GRACE", 0.2)
    gate_open = threading.Event()

    def hang(prompt, kwargs):
        gate_open.wait(30)
        return approve()

    t0 = time.monotonic()
    result = run_review(Script(A=hang, B=approve()), review_timeout=0.5)
    gate_open.set()
    assert time.monotonic() - t0 < 20  # not held by the hung reviewer (30 s)
    assert result["verdict"] == "error" and "no answer within" in result["errors"][0]


def test_odd_finding_fields_are_normalised():
    raw = {"severity": "CRITICAL", "file": None, "line": "12", "summary": " s ", "evidence": ""}
    result = run_review(Script(A=answer({"approve": False, "findings": [raw, "junk"]}), B=approve()))
    (f,) = result["findings"]
    assert (f["severity"], f["file"], f["line"], f["summary"]) == ("blocking", "", 0, "s")


# -- critic ---------------------------------------------------------------------------------------


def test_critic_confirming_a_blocking_finding_blocks():
    script = Script(A=blocks(finding(), finding(line=40, summary="naming", severity="minor")),
                    critic=stamps((1, "confirmed"), (2, "rejected")))
    result = run_review(script, mode="critic")
    assert result["verdict"] == "block"
    assert [(f["status"], f["reason"]) for f in result["findings"]] == [("confirmed", "checked 1"), ("rejected", "checked 2")]
    assert [f["line"] for f in reviewer.standing(result)] == [15]
    critic = result["reviewers"][1]
    assert critic["role"] == "critic" and critic["approve"] is False
    assert critic["stamps"] == [{"index": 1, "status": "confirmed", "reason": "checked 1"},
                                {"index": 2, "status": "rejected", "reason": "checked 2"}]
    (_, a), (_, c) = script.calls
    assert "1. [blocking] shop/pricing.py:15: threshold check is off by one" in c["prompt"]
    assert "2. [minor] shop/pricing.py:40: naming" in c["prompt"]
    assert c["schema"]["required"] == ["stamps"]


def test_critic_rejecting_the_blocking_finding_approves():
    result = run_review(Script(A=blocks(), critic=stamps((1, "rejected"))), mode="critic")
    assert result["verdict"] == "approve" and reviewer.standing(result) == []
    assert result["reviewers"][1]["approve"] is True


def test_critic_is_not_asked_when_the_reviewer_found_nothing():
    script = Script(A=approve(), critic=stamps())
    result = run_review(script, mode="critic")
    assert result["verdict"] == "approve" and [c[0] for c in script.calls] == ["reviewer A"]


def test_a_blocking_finding_the_critic_skipped_is_an_error_not_a_pass():
    result = run_review(Script(A=blocks(finding(), finding(line=60)), critic=stamps((2, "rejected"), (7, "confirmed"), (2, "confirmed"))),
                        mode="critic")
    assert result["verdict"] == "error" and result["findings"][0]["status"] == "unstamped"
    assert len(result["reviewers"][1]["ignored"]) == 2  # index 7 out of range, index 2 twice


@pytest.mark.parametrize("who", ["A", "critic"])
def test_critic_mode_with_a_failed_run_is_an_error(who):
    answers = {"A": blocks(), "critic": stamps((1, "confirmed"))}
    answers[who] = MAX_TURNS
    result = run_review(Script(**answers), mode="critic")
    assert result["verdict"] == "error"


def test_critic_gets_what_is_left_of_the_timeout():
    def slow_a(prompt, kwargs):
        time.sleep(0.3)
        return blocks()

    script = Script(A=slow_a, critic=stamps((1, "confirmed")))
    t0 = time.monotonic()
    run_review(script, mode="critic", review_timeout=10)
    spent = time.monotonic() - t0
    (_, a), (_, c) = script.calls
    # What is left: less the 0.3 s A took, no less than what the whole review left (a loaded machine
    # may take any time between the two).
    assert a["timeout"] == pytest.approx(6.0) and 10 - spent <= c["timeout"] <= 9.7


# -- the files users edit --------------------------------------------------------------------------


def test_a_deleted_placeholder_is_appended_instead():
    text = reviewer.fill("<!-- note -->Review this.\n{{role}}", {"role": "reviewer A", "diff": "+x"})
    assert text.startswith("Review this.\nreviewer A") and text.rstrip().endswith("## diff\n\n+x")


def test_broken_reviewer_files_name_the_file(tmp_path):
    for name in ("prompt.md", "critic.md", "schema.json", "critic_schema.json"):
        (tmp_path / name).write_text((reviewer.ASSETS / name).read_text())
    (tmp_path / "schema.json").write_text("{nope")
    with pytest.raises(reviewer.DonegateError, match="schema.json is not valid JSON"):
        reviewer.load_assets(tmp_path)


def test_the_shipped_assets_load_and_match_the_issue():
    a = reviewer.load_assets()
    item = a.schema["properties"]["findings"]["items"]
    assert set(item["required"]) == {"severity", "file", "line", "summary", "evidence"}
    assert item["properties"]["severity"]["enum"] == ["blocking", "minor"]
    stamp = a.critic_schema["properties"]["stamps"]["items"]["properties"]
    assert stamp["status"]["enum"] == ["confirmed", "rejected"]


def test_a_long_diff_is_cut_and_says_so():
    shown, cut = reviewer.cap_diff("x" * 200, limit=100)
    assert cut and len(shown) < 300 and "read the changed files" in shown


# -- in the Stop hook (in process, model faked) ----------------------------------------------------


@pytest.fixture
def fake_model(monkeypatch):
    """Point the gate's reviews at a Script; returns a setter."""
    holder = {}

    def use(script):
        holder["script"] = script
        return script

    real = reviewer.review
    monkeypatch.setattr(reviewer, "review", lambda *a, **k: real(*a, **{**k, "run_model": holder["script"]}))
    return use


def hook(repo, kit_home, session="s1", message="Done."):
    code, out, err = gate.run_hook(json.dumps(stop_payload(repo, session=session, message=message)), root=kit_home)
    return code, json.loads(out) if out else {}, err


def test_hint_is_given_once_per_state_then_the_stop_is_allowed(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: hint\n")
    script = fake_model(Script(A=blocks(), B=blocks(finding(line=16, summary="boundary"))))
    fix_bug(sealed_shop)
    code, out, err = hook(sealed_shop, kit_home)
    assert code == 2
    assert "a model's judgment, not a failed test" in err and "shop/pricing.py:15" in err and "also worded: boundary" in err
    assert out["decision"] == "block"
    code, out, err = hook(sealed_shop, kit_home)
    assert code == 0 and len(script.calls) == 2  # not reviewed again
    (sealed_shop / "shop" / "pricing.py").write_text((sealed_shop / "shop" / "pricing.py").read_text() + "\n# tidy\n")
    assert hook(sealed_shop, kit_home)[0] == 2  # a new state gets its own hint
    lines = stop_lines(kit_home)
    assert [(r["verdict"], r["blocks"]) for r in lines] == [("hint", 1), ("pass", 0), ("hint", 1)]
    assert lines[0]["gates"]["review"]["verdict"] == "block" and len(lines[0]["gates"]["review"]["reviewers"]) == 2
    assert "skipped" in lines[1]["gates"]["review"]


def test_hints_reset_the_no_progress_streak_but_count_toward_max_blocks(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: hint\nmax_blocks: 2\n")
    fake_model(Script(A=blocks(), B=approve()))
    fix_bug(sealed_shop)
    codes = []
    for i in range(3):  # the agent changes a little each time: a new state, a new hint
        (sealed_shop / "notes.txt").write_text(str(i))
        codes.append(hook(sealed_shop, kit_home)[0])
    assert codes == [2, 2, 0]
    last = stop_lines(kit_home)[-1]
    assert last["verdict"] == "pass" and "max_blocks" in last["gates"]["breaker"]["hint_dropped"]


def test_block_mode_blocks_like_a_failing_test_and_the_breaker_counts_it(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: block\n")
    fake_model(Script(A=blocks(), B=approve()))
    fix_bug(sealed_shop)
    codes = [hook(sealed_shop, kit_home, message="All done.")[0] for _ in range(4)]
    assert codes == [2, 2, 2, 0]  # the same file flagged three stops running: max_same_failure
    lines = stop_lines(kit_home)
    assert [r["verdict"] for r in lines] == ["block", "block", "block", "gave_up"]
    _, _, err = hook(sealed_shop, kit_home, message="All done.")
    assert err.startswith("You reported the work as complete, but the reviewers found blocking problems")


def test_block_mode_lets_minor_findings_through(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: block\n")
    fake_model(Script(A=blocks(finding(severity="minor")), B=approve()))
    fix_bug(sealed_shop)
    code, out, _ = hook(sealed_shop, kit_home)
    assert code == 0 and "reviewers approve (1 minor finding(s) in the ledger)" in out["systemMessage"]


@pytest.mark.parametrize("mode", ["hint", "block"])
def test_a_failed_review_allows_the_stop_and_says_so(sealed_shop, kit_home, fake_model, mode):
    write_config(kit_home, f"review: {mode}\n")
    fake_model(Script(A=NO_OUTPUT, B=MAX_TURNS))
    fix_bug(sealed_shop)
    code, out, _ = hook(sealed_shop, kit_home)
    assert code == 0 and "the review failed" in out["systemMessage"] and "WITHOUT a review" in out["systemMessage"]
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "review_error" and line["gates"]["review"]["verdict"] == "error"


def test_broken_reviewer_files_are_a_review_error_not_a_block(sealed_shop, kit_home, monkeypatch, tmp_path):
    monkeypatch.setattr(reviewer.installation, "kit_dir", lambda folder, kit=None: tmp_path)
    write_config(kit_home, "review: block\n")
    fix_bug(sealed_shop)
    code, out, _ = hook(sealed_shop, kit_home)
    assert code == 0 and "cannot read the reviewer file" in out["systemMessage"]
    assert stop_lines(kit_home)[0]["verdict"] == "review_error"


def test_reviews_run_only_after_the_tests_pass(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: block\n")
    script = fake_model(Script(A=approve(), B=approve()))
    code, _, err = hook(sealed_shop, kit_home)
    assert code == 2 and "acceptance tests fail" in err and script.calls == []
    fix_bug(sealed_shop)
    code, out, _ = hook(sealed_shop, kit_home)
    assert code == 0 and "the reviewers approve" in out["systemMessage"] and len(script.calls) == 2


def test_reviewer_feedback_is_scrubbed_of_hidden_tests(sealed_shop, kit_home, fake_model):
    write_config(kit_home, "review: hint\n")
    (store_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    quoted = "assert cart_of(10).total() == 3870"
    fake_model(Script(A=blocks(finding(evidence=f"{store_file} says:\n{quoted}\nso the boundary matters")), B=approve()))
    fix_bug(sealed_shop)
    code, _, err = hook(sealed_shop, kit_home)
    assert code == 2 and "so the boundary matters" in err
    assert quoted not in err and str(kit_home) not in err and "<hidden>" in err
