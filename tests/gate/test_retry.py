"""`mode: retry`, the experiment's blind control (issue 25), run as Claude Code runs the hook: a
subprocess with JSON on stdin. It blocks the first `max_blocks` stops with one fixed message, runs no
test, and records each stop in the ledger like the gate's."""

from __future__ import annotations

import json

from donegate.gate import retry
from tests.support.repos import fix_bug, make_repo, run_hook, stop_lines, stop_payload


def set_config(kit_home, text: str) -> None:
    (kit_home / "donegate.yaml").write_text(text)


def test_retry_blocks_the_first_max_blocks_stops_blind_then_lets_go(sealed_shop, kit_home):
    set_config(kit_home, "mode: retry\nmax_blocks: 4\nconfig: retry\n")
    fix_bug(sealed_shop)  # the sealed tests would pass: retry does not look
    codes, texts = [], []
    for _ in range(5):
        res = run_hook(stop_payload(sealed_shop, message="All done."))
        codes.append(res.returncode)
        texts.append(res.stderr)
    # max_same_failure (3) does not end it: the message is always the same, only max_blocks does.
    assert codes == [2, 2, 2, 2, 0]
    assert all(t.strip() == retry.MESSAGE for t in texts[:4]) and texts[4] == ""
    lines = stop_lines(kit_home)
    assert [(r["verdict"], r["blocks"], r["config"]) for r in lines] == [("block", k, "retry") for k in (1, 2, 3, 4)] + [("gave_up", 0, "retry")]
    assert all(r["gates"] == {"retry": {"tests_run": 0}} for r in lines[:4])
    assert lines[4]["gates"]["breaker"] == {"retry_done": "4 blocks in this session (max_blocks)", "was": "block"}
    assert all(r["feedback"] == retry.MESSAGE for r in lines[:4])
    assert "nothing was verified" in json.loads(res.stdout)["systemMessage"]


def test_retry_runs_no_test_and_needs_no_seal(tmp_path, kit_home):
    set_config(kit_home, "mode: retry\n")
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})  # nothing sealed: the gate would allow it unchecked
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and res.stderr.strip() == retry.MESSAGE
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "block" and "acceptance" not in line["gates"]


def test_an_appeal_does_not_open_the_retry_control(sealed_shop, kit_home):
    set_config(kit_home, "mode: retry\n")
    res = run_hook(stop_payload(sealed_shop, message="APPEAL: the hidden test contradicts the request, it is plainly wrong here."))
    assert res.returncode == 2 and stop_lines(kit_home)[-1]["verdict"] == "block"


def test_the_gate_mode_is_unchanged(sealed_shop, kit_home):
    set_config(kit_home, "mode: gate\n")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and "retry" not in stop_lines(kit_home)[-1]["gates"]
    assert retry.MESSAGE not in res.stderr
