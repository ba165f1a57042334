"""Appeals, run as Claude Code runs the hook: a subprocess with JSON on stdin, real git repos.

The agent is an adversary: each way of using an appeal as a free pass is tried beside the honest appeal."""

from __future__ import annotations

import json

import pytest

from tests.support.repos import write_config, stop_lines, run_hook, stop_payload
from donegate.gate import appeal
from tests.support.repos import first_stop, pooled_single, seal_single, fix_bug

REASON = "the request says nothing about rounding, but a hidden test expects rounding down"
APPEAL = f"I looked at the failures again.\nAPPEAL: {REASON}"


def blocked_then(repo, message: str, session: str = "s1"):
    """One ordinary block (the agent is shown the failures), then a stop with `message`."""
    first = run_hook(stop_payload(repo, session=session))
    assert first.returncode == 2, first.stderr
    return run_hook(stop_payload(repo, session=session, message=message))


def then(blocked, message: str):
    """The stop with `message` after `blocked_shop`'s ordinary block (its session `s1`): `blocked_then` where the block
    is the pooled one (conftest.py `blocked_shop`)."""
    assert first_stop(blocked).returncode == 2, first_stop(blocked).stderr
    return run_hook(stop_payload(blocked, message=message))


# -- the form -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("message, reason", [
    (f"APPEAL: {REASON}", REASON),
    (f"Some words.\n\n**APPEAL:** {REASON}\n\n", REASON),
    (f"`APPEAL: {REASON}`", REASON),
    ("APPEAL:", ""),
    (f"APPEAL: {REASON}\nBut let me try once more.", None),  # not the last line: not an appeal
    (f"I will not write APPEAL: {REASON}", None),
    (f"appeal: {REASON}", None),
    (None, None),
    ("", None),
])
def test_only_a_last_line_in_the_documented_form_is_an_appeal(message, reason):
    assert appeal.parse(message) == reason


# -- the honest appeal --------------------------------------------------------------------------------


def test_every_appealable_block_tells_the_agent_how_to_appeal_in_one_line(blocked_shop):
    res = first_stop(blocked_shop)
    assert res.returncode == 2
    assert res.stderr.rstrip("\n").splitlines()[-1] == appeal.LINE
    assert json.loads(res.stdout)["reason"].endswith(appeal.LINE)


def test_the_way_out_survives_a_capped_feedback(tmp_path, kit_home):
    # The feedback is capped (40 failures of 500 characters each: at most 4,100 shown), and the way out is still its end.
    body = "import mod\n" + "".join(f"def test_{i}():\n    assert mod.VALUE == {i} + 1000, 'x' * 500\n" for i in range(40))
    repo = seal_single(tmp_path, body)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and len(res.stderr) <= 4100
    assert res.stderr.rstrip("\n").endswith(appeal.LINE)


def test_an_appeal_after_a_block_ends_the_stop_for_a_person(blocked_shop, kit_home):
    res = then(blocked_shop, APPEAL)
    assert res.returncode == 0, res.stderr
    msg = json.loads(res.stdout)["systemMessage"]
    assert "APPEALED" in msg and REASON in msg and "NOT verified" in msg and "needs a person" in msg
    assert "test_ten_units_get_the_bulk_discount" in msg
    first, second = stop_lines(kit_home)
    assert second["verdict"] == "appealed" and second["blocks"] == 0
    gate = second["gates"]["appeal"]
    assert gate["accepted"] is True and gate["reason"] == REASON and gate["appeals"] == 1
    assert gate["failing"] == [f["id"] for f in first["gates"]["acceptance"]["failing"]]
    assert len(gate["diff_sha256"]) == 64
    # the hash names the state of the code: another diff, another hash
    (blocked_shop / "shop" / "notes.py").write_text("# a note\n")
    blocked_then(blocked_shop, APPEAL, session="s2")
    assert stop_lines(kit_home)[-1]["gates"]["appeal"]["diff_sha256"] != gate["diff_sha256"]


def test_an_accepted_appeal_names_a_held_back_test_by_its_requirement_never_its_id(tmp_path, kit_home):
    """The user's message lists up to three failing tests: a held-back one by its requirement and a count (its id
    carries its inputs: `[7-424242]`), a shown one by its id."""
    from tests.support.repos import make_repo, seal

    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_shown.py").write_text("import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    (hidden / "test_rules.py").write_text(
        "import mod, pytest\n\n@pytest.mark.parametrize('qty,price', [(7, 424242), (9, 535353)])\n"
        "def test_bulk(qty, price):\n    'Bulk orders get the discount.'\n    assert mod.VALUE == qty\n")
    assert seal(repo, hidden / "test_shown.py", "--held", hidden / "test_rules.py").returncode == 0
    res = blocked_then(repo, APPEAL)
    assert res.returncode == 0, res.stderr
    msg = json.loads(res.stdout)["systemMessage"]
    assert "3 of 3 still fail (test_shown.py::test_value, held-back requirement 'Bulk orders get the discount.' " \
        "(2 failing))" in msg, msg
    for secret in ("test_rules", "test_bulk", "424242", "535353"):
        assert secret not in msg
    gate = stop_lines(kit_home)[-1]["gates"]["appeal"]  # the ledger keeps the ids (the agent is denied it)
    assert "test_rules.py::test_bulk[7-424242]" in gate["failing"]


def test_an_appeal_line_on_passing_tests_is_just_a_pass(sealed_shop, kit_home):
    fix_bug(sealed_shop)
    res = run_hook(stop_payload(sealed_shop, message=APPEAL))
    assert res.returncode == 0 and "5 acceptance tests pass" in json.loads(res.stdout)["systemMessage"]
    assert stop_lines(kit_home)[0]["verdict"] == "pass" and "appeal" not in stop_lines(kit_home)[0]["gates"]


def test_appeals_off_means_no_line_and_no_way_out(sealed_shop, kit_home):
    write_config(kit_home, "appeal: off\n")
    res = blocked_then(sealed_shop, APPEAL)
    assert res.returncode == 2 and appeal.LINE not in res.stderr and "appeal" not in res.stderr.lower()
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["block", "block"]


def test_yaml_on_reads_as_on(sealed_shop, kit_home):
    write_config(kit_home, "appeal: on\nmax_appeals: 1\n")
    assert blocked_then(sealed_shop, APPEAL).returncode == 0


# -- appeals that must be refused -----------------------------------------------------------------------


def refused(res, kit_home, why: str) -> dict:
    assert res.returncode == 2, res.stdout
    assert "your appeal was not accepted" in res.stderr and why in res.stderr, res.stderr
    line = stop_lines(kit_home)[-1]
    assert line["verdict"] == "block" and line["gates"]["appeal"]["accepted"] is False
    assert line["gates"]["appeal"]["reason"] == REASON
    return line


def test_an_appeal_at_the_first_stop_is_refused(sealed_shop, kit_home):
    # An agent that appends APPEAL to every message must not skip the gate: it has seen nothing yet.
    res = run_hook(stop_payload(sealed_shop, message=APPEAL))
    refused(res, kit_home, "not been shown yet")
    assert res.stderr.rstrip("\n").endswith(appeal.LINE)  # it may appeal once it has read them


def test_an_appeal_covering_a_failure_not_yet_shown_is_refused(tmp_path, kit_home):
    repo = seal_single(tmp_path, "import mod\ndef test_a():\n    assert mod.VALUE != 2\ndef test_b():\n    assert mod.VALUE != 1\n")
    assert run_hook(stop_payload(repo)).returncode == 2  # test_b fails and is shown
    (repo / "mod.py").write_text("VALUE = 2\n")  # now test_a fails instead: never shown
    refused(run_hook(stop_payload(repo, message=APPEAL)), kit_home, "not been shown yet")


def test_an_appeal_with_a_protected_file_changed_is_refused(blocked_shop, kit_home):
    assert first_stop(blocked_shop).returncode == 2
    (blocked_shop / ".claude").mkdir()
    (blocked_shop / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    line = refused(run_hook(stop_payload(blocked_shop, message=APPEAL)), kit_home, "restore them first")
    assert line["gates"]["scope"]["protected"] == [".claude/settings.local.json"]


def test_an_appeal_outside_the_allowed_scope_is_refused(blocked_shop, kit_home):
    assert first_stop(blocked_shop).returncode == 2  # nothing outside the scope yet: blocked by the failing tests
    write_config(kit_home, "allowed: ['shop/pricing.py']\n")
    (blocked_shop / "notes.txt").write_text("scratch")
    refused(run_hook(stop_payload(blocked_shop, message=APPEAL)), kit_home, "allowed scope")


def test_an_appeal_over_a_tampered_store_is_refused(blocked_shop, kit_home):
    assert first_stop(blocked_shop).returncode == 2
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    test_file.write_text("def test_ok():\n    pass\n")
    line = refused(run_hook(stop_payload(blocked_shop, message=APPEAL)), kit_home, "re-seal")
    assert line["gates"]["integrity"]["ok"] is False


def test_an_appeal_after_reading_the_hidden_tests_is_refused(blocked_shop, kit_home, tmp_path):
    (test_file,) = (kit_home / "acceptance").glob("*/test_bulk_discount.py")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "x", "content": test_file.read_text()}]}}) + "\n")
    assert first_stop(blocked_shop).returncode == 2  # the block read no transcript
    res = run_hook(stop_payload(blocked_shop, message=APPEAL, transcript_path=str(transcript)))
    refused(res, kit_home, "hidden test content")


def test_an_appeal_when_the_code_exits_the_run_early_is_refused(tmp_path_factory, kit_home):
    repo = pooled_single(tmp_path_factory, kit_home, "import mod\n\ndef test_value():\n    assert mod.VALUE == 2\n")
    assert run_hook(stop_payload(repo)).returncode == 2
    (repo / "mod.py").write_text("import os\nos._exit(0)\n")  # the ImpossibleBench "exit early" move
    refused(run_hook(stop_payload(repo, message=APPEAL)), kit_home, "did not run to the end")


def test_an_appeal_against_a_test_that_does_not_collect_is_accepted(tmp_path_factory, kit_home):
    # The writer's mistake of the published experiment: a test importing a name nobody asked for.
    repo = pooled_single(tmp_path_factory, kit_home, "from mod import VALUE\n\ndef test_value():\n    assert VALUE == 1\n")
    (repo / "mod.py").write_text("OTHER = 1\n")
    res = blocked_then(repo, APPEAL)
    assert res.returncode == 0 and stop_lines(kit_home)[-1]["verdict"] == "appealed"


def test_an_appeal_without_a_reason_is_refused(blocked_shop, kit_home):
    res = then(blocked_shop, "APPEAL: wrong")
    assert res.returncode == 2 and "say why" in res.stderr


def test_appeals_past_max_appeals_are_refused_and_judged_normally(sealed_shop, kit_home):
    write_config(kit_home, "max_appeals: 1\n")
    assert blocked_then(sealed_shop, APPEAL).returncode == 0
    res = blocked_then(sealed_shop, APPEAL)
    line = refused(res, kit_home, "1 appeal(s) in this session already (max_appeals 1)")
    assert "assert 4300 == 3870" in res.stderr  # judged as any stop: the failures are all there
    assert res.stderr.rstrip("\n").endswith(appeal.NO_APPEAL_LEFT) and appeal.LINE not in res.stderr
    assert line["blocks"] == 2  # and counted by the breaker
    # ... per session: another session has its own
    assert blocked_then(sealed_shop, APPEAL, session="s2").returncode == 0


def test_a_block_that_cannot_be_appealed_does_not_offer_it(sealed_shop, kit_home):
    fix_bug(sealed_shop)
    (sealed_shop / ".claude").mkdir()
    (sealed_shop / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and appeal.LINE not in res.stderr



def test_the_docs_quote_the_line_the_agent_gets():
    from tests.support.repos import KIT

    readme = " ".join((KIT / "docs" / "how-it-works.md").read_text().split())
    assert " ".join(appeal.LINE.split()) in readme
