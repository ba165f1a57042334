"""A person's side of the loop: `status` (what is sealed, what waits for them), `approve` / `reject` of an
appeal or a hand-over (in the ledger, the report and the page; a rejection told to the next stop)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.ledger import chain as ledger
from tests.support.repos import (KIT, example_files, fix_bug, ledger_lines, make_repo, own_suite, run_hook, seal_example,
                                 sealed_copy, stop_payload)

REASON = "the request says nothing about rounding, but a hidden test expects rounding down"


def donegate(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT, timeout=120)


def appealed(repo, session: str) -> str:
    """A block, then an accepted appeal, in `session`; the appeal's stop ref."""
    assert run_hook(stop_payload(repo, session=session)).returncode == 2
    res = run_hook(stop_payload(repo, session=session, message=f"Done.\nAPPEAL: {REASON}"))
    assert res.returncode == 0 and "APPEALED" in res.stdout, res.stdout + res.stderr
    return ledger.stop_ref(last_line().encode())


@pytest.fixture
def asked(kit_home, tmp_path_factory, request) -> tuple:
    """The sealed example after session `asks`' block and accepted appeal (`appealed`), made once per run (`sealed_copy`:
    the ledger and the state copied into `kit_home`): (the repository, the appeal's stop ref)."""

    def build(repo: Path, home: Path) -> None:
        seal_example(make_repo(repo, example_files()), extra_env={"DONEGATE_HOME": str(home)})
        env = {"DONEGATE_HOME": str(home)}
        assert run_hook(stop_payload(repo, session="asks"), env=env).returncode == 2
        res = run_hook(stop_payload(repo, session="asks", message=f"Done.\nAPPEAL: {REASON}"), env=env, after=True)
        assert res.returncode == 0 and "APPEALED" in res.stdout, res.stdout + res.stderr

    repo = sealed_copy(tmp_path_factory.getbasetemp() / "asked", "shop", build, kit_home, own=own_suite(request))
    return repo, ledger.stop_ref(last_line().encode())


def _lines() -> list[str]:
    return (Path(os.environ["DONEGATE_HOME"]) / "ledger.jsonl").read_text().splitlines()


def last_line() -> str:
    return _lines()[-1]


def test_status_shows_the_seal_and_who_waits(asked, kit_home):
    sealed_shop, ref = asked
    assert run_hook(stop_payload(sealed_shop, session="busy")).returncode == 2

    res = donegate("status")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "a checkout install" in out and f"state root {kit_home}" in out
    assert f"{sealed_shop}: 5 sealed tests in test_bulk_discount.py" in out
    assert "request: 'orders of 10 or more units get 10% off'" in out and "hook: not installed" in out
    assert "1 session(s) waiting for a person" in out and f"ref {ref}  session asks" in out and REASON in out
    assert "1 session(s) in progress" in out and "session busy" in out and "1 block(s) in a row" in out

    s = json.loads(donegate("status", str(sealed_shop), "--json").stdout)
    assert [r["repo"] for r in s["sealed"]] == [str(sealed_shop)] and s["sealed"][0]["base"]
    assert [w["ref"] for w in s["waiting"]] == [ref]


def test_approve_takes_a_session_off_the_waiting_list(asked, kit_home, tmp_path):
    sealed_shop, ref = asked
    res = donegate("approve", ref, "--note", "the rounding test was mine, and wrong")
    assert res.returncode == 0 and f"approved an appeal: stop {ref}" in res.stdout, res.stderr
    line = ledger_lines(kit_home)[-1]
    assert line["event"] == "decision" and line["decision"] == "approve" and line["session"] == "asks"
    assert json.loads(donegate("status", "--json").stdout)["waiting"] == []

    report = donegate("report")
    assert "Decided by a person: 1 (1 approved, 0 rejected)" in report.stdout and ref in report.stdout
    assert "events the report does not read" not in report.stdout
    assert donegate("report", "--html", str(tmp_path / "r.html")).returncode == 0
    assert "approved: the rounding test was mine, and wrong" in (tmp_path / "r.html").read_text()

    # Only what waits for a person can be decided: a block is labelled, not approved (the block before the appeal).
    blocked = ledger.stop_ref(_lines()[-3].encode())  # the block, the appeal, the decision
    assert json.loads(_lines()[-3])["verdict"] == "block"
    res = donegate("approve", blocked)
    assert res.returncode == 1 and "only an appeal or a hand-over" in res.stderr


def test_a_rejection_is_told_to_the_next_stop_in_that_repository_once(asked, kit_home):
    sealed_shop, ref = asked
    assert donegate("reject", ref).returncode == 2  # a rejection says why: --note is required
    res = donegate("reject", ref, "--note", "round half up, as the finance team asked")
    assert res.returncode == 0 and "the next stop in that repository is told" in res.stdout, res.stderr
    assert res.stdout.startswith(f"rejected an appeal: stop {ref}"), res.stdout  # not "rejectd"

    fix_bug(sealed_shop)  # the tests pass now: the stop would be allowed
    res = run_hook(stop_payload(sealed_shop, session="next"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "a person rejected the work of an earlier session" in res.stderr and "round half up" in res.stderr
    assert str(kit_home) not in res.stderr
    line = ledger_lines(kit_home)[-1]
    assert line["verdict"] == "block" and line["gates"]["rejected"] == [ref]
    res = run_hook(stop_payload(sealed_shop, session="next"))  # told once
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Decided by a person: 1 (0 approved, 1 rejected)" in donegate("report").stdout


def _left(tmp_path: Path) -> tuple[int, dict]:
    """(sessions left for a person in the report, the HTML page's row flag per session)."""
    summary = json.loads(donegate("report", "--json").stdout)
    page = tmp_path / "p.html"
    assert donegate("report", "--html", str(page)).returncode == 0
    from donegate.report import html

    data = html.page_data([Path(os.environ["DONEGATE_HOME"]) / "ledger.jsonl"])
    return summary["total"]["left_for_person"], {row[0]: row[6] for row in data["rows"]}


def test_a_decided_session_is_no_longer_left_for_a_person(sealed_shop, kit_home, tmp_path):
    # Before: approve, reject and `label ... rejected` left the session counted and marked as waiting.
    a = appealed(sealed_shop, "approved-one")
    r = appealed(sealed_shop, "labelled-one")
    j = appealed(sealed_shop, "rejected-one")
    appealed(sealed_shop, "still-waiting")
    left, flags = _left(tmp_path)
    assert left == 4 and all(flags[s] for s in ("approved-one", "labelled-one", "rejected-one", "still-waiting"))

    assert donegate("approve", a, "--note", "fine").returncode == 0
    assert donegate("reject", j, "--note", "no rounding down").returncode == 0
    by_reject = ledger_lines(kit_home)[-1]
    res = donegate("label", r, "rejected", "--note", "no rounding down")
    assert res.returncode == 0, res.stderr
    by_label = ledger_lines(kit_home)[-1]
    # reject and the label rejected record the same thing
    same = ("event", "decision", "label", "note", "verdict")
    assert {k: by_reject.get(k) for k in same} == {k: by_label.get(k) for k in same} == {
        "event": "decision", "decision": "reject", "label": "rejected", "note": "no rounding down", "verdict": "appealed"}
    left, flags = _left(tmp_path)
    assert left == 1 and flags == {"approved-one": 0, "labelled-one": 0, "rejected-one": 0, "still-waiting": 1}
    summary = json.loads(donegate("report", "--json").stdout)
    assert summary["total"]["decided_by_person"] == 3 and summary["total"]["appeals_rejected"] == 2
    assert [w["session"] for w in json.loads(donegate("status", "--json").stdout)["waiting"]] == ["still-waiting"]
    assert "Decided by a person: 3 (1 approved, 2 rejected)" in donegate("report").stdout
    # both rejections are told to the next stop in that repository
    res = run_hook(stop_payload(sealed_shop, session="next"))
    assert res.returncode == 2 and r in res.stderr and j in res.stderr, res.stderr
    res = donegate("approve", j)
    assert "approved an appeal" in res.stdout and "rejectd" not in res.stdout


def test_a_session_that_passed_can_be_rejected_and_the_next_stop_is_told(sealed_shop, kit_home):
    fix_bug(sealed_shop)
    assert run_hook(stop_payload(sealed_shop, session="passed")).returncode == 0
    ref = ledger.stop_ref(last_line().encode())
    res = donegate("approve", ref)
    assert res.returncode == 1 and "nothing to approve" in res.stderr
    res = donegate("reject", ref, "--note", "the discount must not apply to gift cards")
    assert res.returncode == 0 and f"rejected a passed session: stop {ref}" in res.stdout, res.stderr
    assert "the next stop in that repository is told" in res.stdout
    res = run_hook(stop_payload(sealed_shop, session="after"))
    assert res.returncode == 2 and "gift cards" in res.stderr, res.stdout + res.stderr
    summary = json.loads(donegate("report", "--json").stdout)
    assert summary["total"]["decided_by_person"] == 1 and summary["decisions"][0]["verdict"] == "pass"
