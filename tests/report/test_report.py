"""`donegate report` and `donegate label`: ledgers built through the real hook and by hand, numbers
checked against values worked out in the test, the fast reader against json.loads, the table against
--json, the hash chain against hand edits, and broken lines against crashes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


import pytest

from tests.support.repos import write_config, EXAMPLE, KIT, first_stop, stop_lines, run_hook, stop_payload
from donegate import cli, report
from donegate.ledger import chain as ledger

sys.path.insert(0, str(KIT / "bench"))
import report_bench  # noqa: E402

T0 = "2026-12-01T10:00:00.000+00:00"


# -- helpers -------------------------------------------------------------------


def stop(session: str, verdict: str = "block", *, config: str = "default", repo: str = "/r/one", time: str = T0,
         passed: int = 3, total: int = 5, duration: float = 1.5, review: dict | None = None, n: int = 1,
         **extra_gates) -> dict:
    """A stop record in the gate's key order (ledger.append adds `v` and `prev`)."""
    failing = [{"id": f"test_a.py::test_{k}", "message": f"assert {k} == {k + 1}"} for k in range(total - passed)]
    gates = {"integrity": {"ok": True, "tests": total},
             "scope": {"ok": True, "protected": [], "outside": [], "problems": [], "duration": 0.01},
             "acceptance": {"ok": passed == total, "total": total, "passed": passed, "failed": total - passed,
                            "failing": failing, "problem": "", "duration": 1.0}}
    if review is not None:
        gates["review"] = review
    gates.update(extra_gates)
    return {"event": "stop", "time": time, "repo": repo, "session": session, "stop": n, "stop_hook_active": n > 1,
            "verdict": verdict, "gates": gates, "blocks": 0, "duration": duration, "kit_version": "0.1.0", "config": config}


def review(cost: float, verdict: str = "approve") -> dict:
    """The reviewer's result shape (donegate.models.reviewer.review), with a total after its entries."""
    entries = [{"role": r, "approve": True, "findings": [], "turns": 3, "cost_usd": cost / 2, "duration": 5.0,
                "error": "", "subtype": "success", "model": "m"} for r in "AB"]
    return {"mode": "pair", "verdict": verdict, "findings": [], "reviewers": entries, "errors": [], "cost_usd": cost,
            "duration": 10.0, "diff_chars": 100, "diff_cut": False, "state": "ab" * 16}


def write(path: Path, *records: dict) -> Path:
    for rec in records:
        ledger.append(rec, path)
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def report_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "report", "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def group(summary: dict, name: str) -> dict:
    by = summary["by"]
    return next(g for g in summary["groups"] if g[by] == name)


# -- the real hook -------------------------------------------------------------


def fix(repo: Path, fixed: bool) -> None:
    src = (EXAMPLE / "shop" / "pricing.py").read_text()
    (repo / "shop" / "pricing.py").write_text(src.replace("units > BULK_THRESHOLD", "units >= BULK_THRESHOLD") if fixed else src)


def test_report_of_real_hook_runs(blocked_shop, kit_home, capsys):
    """s1 (default): blocked on the bug, passes once fixed. s2 (strict, max_blocks 1): blocked, then
    handed to a person. The expected numbers follow from that story, not from the ledger. s1's first stop is
    `blocked_shop`'s."""
    assert first_stop(blocked_shop).returncode == 2
    fix(blocked_shop, True)
    assert run_hook(stop_payload(blocked_shop, "s1")).returncode == 0
    fix(blocked_shop, False)
    write_config(kit_home, "config: strict\nmax_blocks: 1\n")
    assert run_hook(stop_payload(blocked_shop, "s2")).returncode == 2
    assert run_hook(stop_payload(blocked_shop, "s2")).returncode == 0  # gave up

    lines = [line for line in (kit_home / "ledger.jsonl").read_bytes().splitlines() if b'"event":"stop"' in line]
    assert len(lines) == 4 and all(report.fast_line(line) for line in lines), \
        "the gate's stop lines must take the report's fast path"
    summary = report_json(capsys)
    d, s = group(summary, "default"), group(summary, "strict")
    assert (d["sessions"], d["stops"], d["blocks"], d["gave_up"], d["ended_passing"], d["left_for_person"]) == (1, 2, 1, 0, 1, 0)
    assert (d["requirements_passed"], d["requirements_sealed"], d["requirement_rate_pct"]) == (5, 5, 100.0)
    assert (s["sessions"], s["stops"], s["blocks"], s["gave_up"], s["ended_passing"], s["left_for_person"]) == (1, 2, 1, 1, 0, 1)
    assert (s["requirements_passed"], s["requirements_sealed"], s["requirement_rate_pct"]) == (2, 5, 40.0)
    durations = {r["session"]: 0.0 for r in stop_lines(kit_home)}
    for r in stop_lines(kit_home):
        durations[r["session"]] += r["duration"]
    assert d["gate_seconds"] == round(durations["s1"], 1) and s["seconds_per_session"] == round(durations["s2"], 1)
    assert summary["left_for_person"]["latest"] == [{"session": "s2", "config": "strict", "last_verdict": "gave_up", "gave_up": True}]

    timeline = report_json(capsys, "--session", "s2")
    assert [st["verdict"] for st in timeline["stops"]] == ["block", "gave_up"]
    assert len(timeline["stops"][0]["failing"]) == 3 and "assert" in timeline["stops"][0]["failing"][0]["message"]
    ref = timeline["stops"][0]["ref"]
    code, out, _ = run(capsys, "label", ref, "unjustified", "--note", "the writer's mistake")
    assert code == 0 and ref in out
    s = group(report_json(capsys), "strict")
    assert (s["justified"], s["unjustified"], s["unlabelled"]) == (0, 1, 0)
    code, out, _ = run(capsys, "report", "--session", "s2")
    assert code == 0 and f"ref {ref}" in out and "labelled unjustified: the writer's mistake" in out and "failing test_" in out
    code, out, _ = run(capsys, "report", "--verify")
    # one more than the stops and the label: the seal's own line (who sealed it: donegate.person.ownership)
    assert code == 0 and "6 lines, the hash chain is intact" in out


def test_appeals_and_cached_stops_of_real_hook_runs(blocked_shop, kit_home, capsys):
    """s1: blocked (`blocked_shop`'s stop), blocked again on the same tree (cached), then appeals. The appeal is never a
    pass."""
    assert first_stop(blocked_shop).returncode == 2
    assert run_hook(stop_payload(blocked_shop, "s1")).returncode == 2
    reason = "the request never asked for rounding down to whole cents"
    assert run_hook(stop_payload(blocked_shop, "s1", message=f"APPEAL: {reason}")).returncode == 0

    lines = [line for line in (kit_home / "ledger.jsonl").read_bytes().splitlines() if b'"event":"stop"' in line]
    assert len(lines) == 3 and all(report.fast_line(line) for line in lines), \
        "appealed and cached stop lines must take the report's fast path"
    assert [r.get("cached", False) for r in stop_lines(kit_home)] == [False, True, True]
    path = kit_home / "ledger.jsonl"
    summary = report_json(capsys)
    assert summary == json.loads(json.dumps(report.summarize([path], fast=False)))
    d = group(summary, "default")
    assert (d["stops"], d["blocks"], d["appeals"], d["ended_passing"], d["left_for_person"]) == (3, 2, 1, 0, 1)
    (a,) = summary["appeals"]["latest"]
    assert a["reason"] == reason and a["session"] == "s1" and a["label"] is None
    assert a["failing"] == [f["id"] for f in stop_lines(kit_home)[0]["gates"]["acceptance"]["failing"]]
    assert summary["left_for_person"]["latest"][0]["last_verdict"] == "appealed"
    code, out, _ = run(capsys, "report")
    assert "Appeals: 1 (never counted as passing" in out and reason in out and a["ref"] in out

    block_ref = report_json(capsys, "--session", "s1")["stops"][0]["ref"]
    code, _, err = run(capsys, "label", a["ref"], "justified")
    assert code == 1 and "is an appeal" in err
    code, _, err = run(capsys, "label", block_ref, "upheld")
    assert code == 1 and "not an appeal" in err
    assert run(capsys, "label", a["ref"], "rejected")[0] == 0
    assert run(capsys, "label", a["ref"], "upheld", "--note", "the writer's mistake")[0] == 0  # the latest wins
    summary = report_json(capsys)
    d = group(summary, "default")
    assert (d["appeals_upheld"], d["appeals_rejected"], d["unlabelled"]) == (1, 0, 2)
    assert summary["appeals"]["latest"][0]["label"] == "upheld" and summary["labels"] == {"count": 1, "unmatched": []}
    code, out, _ = run(capsys, "report", "--session", "s1")
    assert f"appeal accepted: {reason}" in out and "labelled upheld: the writer's mistake" in out and "cached:" in out


# -- numbers on hand-built ledgers ---------------------------------------------


def test_counts_cost_and_time_match_hand_worked_values(kit_home, capsys):
    path = kit_home / "ledger.jsonl"
    write(path,
          {"event": "write", "time": T0, "repo": "/r/one", "config": "A", "cost_usd": 0.40, "duration": 30.0},
          stop("a1", "block", config="A", passed=2, duration=2.0),
          stop("a1", "pass", config="A", passed=5, duration=3.0, review=review(0.06), n=2),
          stop("a2", "block", config="A", passed=1, duration=1.0),
          stop("a2", "block", config="A", passed=1, duration=1.0, n=2),
          stop("a2", "gave_up", config="A", passed=4, duration=1.0, n=3, breaker={"gave_up": "x", "was": "block"}),
          stop("b1", "hint", config="B", repo="/r/two", passed=5, duration=10.0, review=review(0.04, "block")),
          stop("b1", "review_error", config="B", repo="/r/two", passed=5, duration=4.0, review=review(0.0, "error"), n=2),
          stop("b2", "error", config="B", repo="/r/two", duration=0.5),
          {"event": "write_failed", "time": T0, "repo": "/r/two", "config": "B", "cost_usd": 0.10, "error": "x"},
          {"event": "write", "time": T0, "repo": "/r/nowhere", "config": "C", "cost_usd": 0.25})
    summary = report_json(capsys)
    a, b = group(summary, "A"), group(summary, "B")
    # A: 2 sessions, a1 ends passing (5/5), a2 gave up at 4/5: requirements 9/10.
    assert (a["sessions"], a["stops"], a["blocks"], a["gave_up"], a["ended_passing"], a["left_for_person"]) == (2, 5, 3, 1, 1, 1)
    assert (a["requirements_passed"], a["requirements_sealed"], a["requirement_rate_pct"]) == (9, 10, 90.0)
    assert (a["writer_cost_usd"], a["review_cost_usd"], a["cost_per_session_usd"]) == (0.4, 0.06, 0.23)
    assert (a["gate_seconds"], a["seconds_per_session"]) == (8.0, 4.0)
    # B: the hint and the error block; b1 ends review_error (tests pass), b2 ends on an error.
    assert (b["sessions"], b["stops"], b["blocks"], b["hints"], b["ended_passing"], b["left_for_person"]) == (2, 3, 2, 1, 1, 1)
    assert (b["requirements_passed"], b["requirements_sealed"]) == (8, 10)
    assert (b["writer_cost_usd"], b["review_cost_usd"], b["cost_per_session_usd"]) == (0.1, 0.04, 0.07)
    assert summary["writer_cost_unattributed_usd"] == 0.25
    assert summary["total"]["sessions"] == 4 and summary["total"]["cost_usd"] == 0.6
    code, out, _ = run(capsys, "report")
    assert "$0.25 of writer cost" in out


def test_writer_cost_is_shared_among_the_sessions_of_its_repo_and_config(kit_home, capsys):
    path = write(kit_home / "ledger.jsonl",
                 {"event": "write", "time": T0, "repo": "/r/one", "config": "A", "cost_usd": 0.30},
                 stop("s1", "pass", config="A", passed=5, time="2026-12-01T10:00:00.000+00:00"),
                 stop("s2", "pass", config="A", passed=5, time="2026-12-02T10:00:00.000+00:00"),
                 stop("s3", "pass", config="A", passed=5, time="2026-12-02T11:00:00.000+00:00"))
    by_day = report_json(capsys, "--by", "day", str(path))
    assert group(by_day, "2026-12-01")["writer_cost_usd"] == 0.1 and group(by_day, "2026-12-02")["writer_cost_usd"] == 0.2


def test_by_repo_day_and_since(kit_home, capsys):
    write(kit_home / "ledger.jsonl",
          stop("s1", "block", repo="/r/one", time="2026-11-30T23:59:00.000+00:00"),
          stop("s1", "pass", repo="/r/one", passed=5, time="2026-12-01T00:01:00.000+00:00", n=2),
          stop("s2", "block", repo="/r/two", time="2026-12-02T09:00:00.000+01:00"))  # 08:00 UTC
    by_repo = report_json(capsys, "--by", "repo")
    assert [g["repo"] for g in by_repo["groups"]] == ["/r/one", "/r/two"]
    assert group(by_repo, "/r/one")["stops"] == 2 and group(by_repo, "/r/two")["sessions"] == 1
    by_day = report_json(capsys, "--by", "day")
    # stops count on their own day, a session on the day of its last stop
    assert {g["day"]: (g["stops"], g["sessions"]) for g in by_day["groups"]} == \
        {"2026-11-30": (1, 0), "2026-12-01": (1, 1), "2026-12-02": (1, 1)}
    since = report_json(capsys, "--since", "2026-12-01")
    assert since["total"]["stops"] == 2 and since["since"] == "2026-12-01T00:00:00.000+00:00"
    assert report_json(capsys, "--since", "2026-12-02T08:30")["total"]["stops"] == 0
    code, _, err = run(capsys, "report", "--since", "last tuesday")
    assert code == 1 and "is not a date" in err and "fix:" in err


# -- reading: fast path, slow path, processes, broken lines ---------------------


ODD_LINES = [
    stop("s-é", "block", repo="/r/ünï"),  # escapes: json.loads reads it
    stop('s"q', "pass", passed=5, repo='C:\\repo'),
    stop("s3", "block", leak={"paths": 1, "source_lines": 2, "sample": "def f(): return {1: 2}"}),
    stop("s3", "error", n=2, counter_error=True),
    stop("s4", "error"),
    stop("s5", "pass", passed=5, review={"mode": "critic", "cost_usd": 0.5, "reviewers": []}),
    stop("s5", "pass", passed=5, review={"mode": "pair", "reviewers": [{"cost_usd": 0.25}, {"cost_usd": 0.5}]}, n=2),
    stop("s6", "pass", passed=5, review={"mode": "pair", "skipped": "given", "state": "x"}),
    stop("s7", "unsealed", passed=0, total=0),
    {**stop("s8", "block"), "config": "c" * 600},  # longer than the tail window
    stop("s9", "appealed", appeal={"accepted": True, "reason": "the test is wrong", "failing": ["t::a"],
                                   "diff_sha256": "0" * 64, "appeals": 1}),
    {**stop("s9", "block", n=2), "cached": True, "session_from": "transcript_path"},
]


def test_fast_reader_agrees_with_json_loads(kit_home):
    path = kit_home / "ledger.jsonl"
    report_bench.generate(path, 3000, seed=3)
    write(path, *ODD_LINES)
    fast = report.summarize([path], fast=True)
    assert fast == report.summarize([path], fast=False)
    assert fast["skipped"]["count"] == 0 and fast["total"]["stops"] > 1000
    since = report.parse_since("2026-12-01T12:00")
    for by in ("repo", "day"):
        assert report.summarize([path], by=by, since=since) == report.summarize([path], by=by, since=since, fast=False)


def test_several_processes_agree_with_one(kit_home, tmp_path, monkeypatch):
    path = write(kit_home / "ledger.jsonl", stop("early", "gave_up", n=1))  # gives up in the first range...
    report_bench.generate(tmp_path / "bulk.jsonl", 3000, seed=4)
    with open(path, "ab") as fh:
        fh.write((tmp_path / "bulk.jsonl").read_bytes())
    write(path, *ODD_LINES, stop("early", "pass", passed=5, n=2))  # ...and passes in the last
    report_bench.generate(kit_home / "second.jsonl", 500, seed=5)
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    files = [path, kit_home / "second.jsonl"]
    one = report.summarize(files, jobs=1)
    assert one == report.summarize(files, jobs=2) == report.summarize(files, jobs=3)
    early = report.summarize([path], jobs=3)  # the give-up and the pass of "early" lie in different ranges
    assert early == report.summarize([path], jobs=1) and early["left_for_person"]["count"] > 0
    assert report.summarize(files, by="day", jobs=1) == report.summarize(files, by="day", jobs=2)
    assert len(report.ranges(path, 3)) == 3


def test_broken_lines_are_counted_and_named_never_a_crash(kit_home, capsys):
    path = kit_home / "ledger.jsonl"
    write(path, stop("s1", "block"))
    with open(path, "ab") as fh:
        fh.write(b'{"v":1,"event":"stop","time":"2026-12-01T10:00:00.000+00:00","repo":"/r/one","ses\n')  # line 2: torn
        fh.write(b"\n")  # line 3
        fh.write(b'{"v":2,"event":"stop"}\n')  # line 4
        fh.write(b'[1, 2]\n')  # line 5
        fh.write(json.dumps({"v": 1, "event": "stop", "time": T0, "verdict": "block"}).encode() + b"\n")  # line 6
        fh.write(json.dumps({**stop("s9"), "v": 1, "verdict": "maybe"}).encode() + b"\n")  # line 7
        fh.write(json.dumps({**stop("s9"), "v": 1, "time": "yesterday"}).encode() + b"\n")  # line 8
        fh.write(json.dumps({"v": 1, "event": "vacuum", "repo": "/r"}).encode() + b"\n")  # line 9: ignored
        fh.write(b'\xff\xfe not utf-8\n')  # line 10
    write(path, stop("s1", "pass", passed=5, n=2))  # line 11
    summary = report_json(capsys)
    assert summary["total"]["stops"] == 2 and summary["total"]["ended_passing"] == 1
    assert summary["skipped"]["count"] == 8 and summary["ignored_events"] == {"vacuum": 1}
    assert [(e["line"], e["why"].split(" (")[0]) for e in summary["skipped"]["examples"]] == [
        (2, "not JSON"), (3, "empty"), (4, "unknown schema version 2"), (5, "not a JSON object"),
        (6, "stop without 'session'"), (7, "stop with an unknown verdict 'maybe'"), (8, "stop with a bad time 'yesterday'"),
        (10, "not JSON")]
    code, out, _ = run(capsys, "report")
    assert code == 0 and "8 lines skipped: line 2 not JSON (torn: cut off), line 3 empty, line 4 unknown schema version 2" in out
    assert "and 3 more" in out and "events the report does not read: vacuum (1)" in out


def test_empty_and_missing_ledgers_are_said_plainly(kit_home, capsys, tmp_path):
    code, out, _ = run(capsys, "report")
    assert code == 0 and "No ledger yet" in out and str(kit_home / "ledger.jsonl") in out
    (kit_home / "ledger.jsonl").write_text("")
    code, out, _ = run(capsys, "report")
    assert code == 0 and "the ledger is empty" in out
    assert report_json(capsys)["groups"] == []
    code, _, err = run(capsys, "report", str(tmp_path / "nope.jsonl"))
    assert code == 1 and "no ledger at" in err and "fix:" in err
    write(kit_home / "ledger.jsonl", {"event": "write", "repo": "/r", "config": "A", "cost_usd": 0.1})
    code, out, _ = run(capsys, "report")
    assert code == 0 and "but no stop" in out


# -- rendering -------------------------------------------------------------------


def numbers_in(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", cell)]


def test_table_says_what_json_says_number_for_number(kit_home, capsys, monkeypatch):
    path = kit_home / "ledger.jsonl"
    report_bench.generate(path, 800, seed=7)
    summary = report_json(capsys)
    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = run(capsys, "report")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("config "))
    rows = {line.split()[0]: line for line in lines[start + 1: start + 1 + len(summary["groups"]) + 1]}
    keys = ["sessions", "stops", "blocks", "justified", "unjustified", "unlabelled", "gave_up", "appeals", "ended_passing",
            "requirements_passed", "requirements_sealed", "requirement_rate_pct", "cost_per_session_usd",
            "seconds_per_session", "left_for_person"]
    for name, nums in [*((g["config"], g) for g in summary["groups"]), ("all", summary["total"])]:
        assert numbers_in(rows[name][len(name):]) == [nums[k] for k in keys], name
    widths = {len(line) for line in lines[start: start + len(rows) + 1]}
    assert max(widths) <= 400 and len(lines[start]) == max(widths)  # aligned: the header is the widest line


def test_narrow_terminals_get_columns_per_group_or_blocks(kit_home, capsys):
    report_bench.generate(kit_home / "ledger.jsonl", 300, seed=8)
    summary = report.summarize([kit_home / "ledger.jsonl"])
    tall = report.render_table(summary, 100)
    assert max(map(len, tall)) <= 100 and tall[0].split()[0] == "config" and tall[1].startswith("sessions")
    blocks = report.render_table(summary, 30)
    assert blocks[0].startswith("config ") and any(line.strip().startswith("left for a person") for line in blocks)
    md = report.render(summary, markdown=True).splitlines()
    header = next(line for line in md if line.startswith("| config |"))
    assert header.count("|") == len(report.COLUMNS) + 2
    assert sum(line.startswith("| ") and not line.startswith("| config") for line in md) == len(summary["groups"]) + 1


# -- labels ----------------------------------------------------------------------


def stop_line_refs(path: Path) -> list[str]:
    return [ledger.stop_ref(line) for line in path.read_bytes().splitlines()]


def test_labels_count_latest_wins_and_refuse_what_did_not_block(kit_home, capsys):
    path = write(kit_home / "ledger.jsonl", stop("s1", "block"), stop("s1", "block", n=2), stop("s1", "pass", passed=5, n=3))
    first, second, passed = stop_line_refs(path)
    assert run(capsys, "label", first, "justified")[0] == 0
    assert run(capsys, "label", second[:6], "justified")[0] == 0  # a shorter prefix is enough
    assert run(capsys, "label", second, "unjustified", "--note", "changed my mind")[0] == 0
    g = group(report_json(capsys), "default")
    assert (g["blocks"], g["justified"], g["unjustified"], g["unlabelled"]) == (2, 1, 1, 0)
    assert report_json(capsys)["labels"] == {"count": 2, "unmatched": []}
    code, _, err = run(capsys, "label", passed, "justified")
    assert code == 1 and "was not a block" in err
    code, _, err = run(capsys, "label", "0123456789", "justified")
    assert code == 1 and "no stop 0123456789" in err
    code, _, err = run(capsys, "label", "xyz", "justified")
    assert code == 1 and "is not a stop reference" in err


def test_a_label_whose_session_is_not_read_is_named(kit_home, capsys, tmp_path):
    path = write(kit_home / "ledger.jsonl", stop("s1", "block"))
    run(capsys, "label", stop_line_refs(path)[0], "justified")
    other = write(tmp_path / "other.jsonl", *[json.loads(line) for line in path.read_text().splitlines()[1:]])
    summary = report_json(capsys, str(other))
    assert summary["labels"]["unmatched"] == [stop_line_refs(path)[0]]
    code, out, _ = run(capsys, "report", str(other))
    assert "1 label names no blocking stop" in out


# -- the hash chain --------------------------------------------------------------


def chain(kit_home: Path, n: int = 5) -> tuple[Path, list[bytes]]:
    path = write(kit_home / "ledger.jsonl", *[stop(f"s{k}", "pass", passed=5) for k in range(n)])
    return path, path.read_bytes().splitlines(keepends=True)


def verify(capsys, path: Path) -> tuple[int, str]:
    code, out, _ = run(capsys, "report", "--verify", str(path))
    return code, out


def test_verify_intact_chain_prints_the_last_hash(kit_home, capsys):
    path, lines = chain(kit_home)
    code, out = verify(capsys, path)
    assert code == 0 and "5 lines, the hash chain is intact" in out and ledger.line_hash(lines[-1]) in out


def test_verify_names_a_changed_line(kit_home, capsys):
    path, lines = chain(kit_home)
    lines[2] = lines[2].replace(b'"verdict":"pass"', b'"verdict":"block"')
    path.write_bytes(b"".join(lines))
    code, out = verify(capsys, path)
    assert code == 1 and "breaks at line 4 of 5: line 3 was changed, or lines were removed between lines 3 and 4" in out


def test_verify_names_a_removed_line(kit_home, capsys):
    path, lines = chain(kit_home)
    path.write_bytes(b"".join(lines[:2] + lines[3:]))
    code, out = verify(capsys, path)
    assert code == 1 and "breaks at line 3 of 4: line 2 was changed, or lines were removed between lines 2 and 3" in out
    path.write_bytes(b"".join(lines[1:]))
    code, out = verify(capsys, path)
    assert code == 1 and "line 1 does not start the chain: lines were removed from the start" in out


def test_verify_names_an_inserted_line(kit_home, capsys):
    path, lines = chain(kit_home)
    forged = json.loads(lines[2])  # a copy of line 3 that points where line 3 points
    path.write_bytes(b"".join(lines[:3] + [json.dumps(forged).encode() + b"\n"] + lines[3:]))
    code, out = verify(capsys, path)
    assert code == 1 and "line 4 was inserted by hand (line 5 follows line 3)" in out
    naive = json.dumps({**forged, "prev": "f" * 64}).encode() + b"\n"
    path.write_bytes(b"".join(lines[:3] + [naive] + lines[3:]))
    code, out = verify(capsys, path)
    assert code == 1 and "line 4 was inserted by hand (line 5 follows line 3)" in out
    path.write_bytes(b"".join([b"hello\n"] + lines))
    code, out = verify(capsys, path)
    assert code == 1 and "line 1 is not JSON" in out


def test_verify_goes_on_through_a_torn_line(kit_home, capsys):
    path, lines = chain(kit_home, 3)
    with open(path, "ab") as fh:
        fh.write(lines[0][:40])  # a write cut off: no newline
    write(path, stop("s9", "pass", passed=5))  # the kit starts a new line and chains to the torn one
    code, out = verify(capsys, path)
    assert code == 0 and "5 lines, the hash chain is intact; torn lines (a write cut off, the chain goes on): 4" in out
    assert report.summarize([path])["skipped"]["count"] == 1


def _damage(kind: str, path: Path, lines: list[bytes]) -> None:
    if kind == "changed":
        lines[2] = lines[2].replace(b'"verdict":"pass"', b'"verdict":"block"')
    elif kind == "removed":
        del lines[2]
    elif kind == "reordered":
        lines[1], lines[2] = lines[2], lines[1]
    path.write_bytes(b"".join(lines))
    if kind in ("torn-middle", "torn-last"):
        with open(path, "ab") as fh:
            fh.write(lines[0][:40])  # a write cut off: no newline
        if kind == "torn-middle":
            write(path, stop("s9", "pass", passed=5))  # the kit's next line chains to the torn one


@pytest.mark.parametrize("kind, intact", [("honest", True), ("changed", False), ("removed", False), ("reordered", False),
                                          ("torn-middle", True), ("torn-last", True)])
def test_one_chain_verifier_for_the_person_the_experiment_table_and_the_tests(kit_home, capsys, kind, intact):
    # Two checkers had drifted: the tests and the experiment table called one that counted a torn line
    # (a write cut off, the chain going on) as a break, while `report --verify` said intact.
    path, lines = chain(kit_home)
    _damage(kind, path, lines)
    code, out = verify(capsys, path)
    assert (code == 0) is intact and ("the hash chain is intact" in out) is intact, out
    assert ledger.verify(path)["intact"] is intact
    from donegate.experiment import table

    (chain_seen,) = table.summarize([path], "none")["ledgers"]
    assert chain_seen["intact"] is intact


def test_session_timeline_survives_odd_stops(kit_home, capsys):
    odd = stop("s1", "error", scope={"problems": 5}, counter_error=True)
    odd["gates"]["acceptance"]["failing"] = ["not a dict", {"id": "t::x", "message": "line one\nline two"}]
    write(kit_home / "ledger.jsonl", odd, stop("s1", "block", review={"mode": "pair", "findings": "oops", "cost_usd": None}, n=2))
    timeline = report_json(capsys, "--session", "s1")
    assert [s["blocked"] for s in timeline["stops"]] == [False, True] and timeline["total"]["blocks"] == 1
    code, out, _ = run(capsys, "report", "--session", "s1")
    assert code == 0 and "failing t::x: line one\n      line two" in out
    code, _, err = run(capsys, "report", "--session", "nobody")
    assert code == 1 and "no stop of session 'nobody'" in err


def _with_client(rec: dict, client: str) -> dict:
    """`rec` with the gate's `client` key where the gate writes it (just before `blocks`)."""
    out = {}
    for k, v in rec.items():
        if k == "blocks":
            out["client"] = client
        out[k] = v
    return out


def test_by_client_groups_codex_and_claude_code_sessions_a_line_without_client_is_claude_codes(kit_home, capsys):
    write(kit_home / "ledger.jsonl",
          _with_client(stop("c1", "block"), "codex"),
          _with_client(stop("c1", "pass", passed=5, n=2), "codex"),
          _with_client(stop("k1", "block"), "claude"),
          stop("old", "pass", passed=5))  # before the kit recorded the client
    for fast in ((), ("--jobs", "2")):
        by = report_json(capsys, "--by", "client", *fast)
        assert {g["client"]: (g["sessions"], g["stops"], g["ended_passing"]) for g in by["groups"]} == \
            {"codex": (1, 2, 1), "claude": (2, 2, 1)}
    code, out, _ = run(capsys, "report", "--by", "client")
    assert code == 0 and "codex" in out


def test_by_client_shows_gemini_copilot_and_qwen_sessions_beside_the_others(kit_home, capsys):
    """One ledger and one report whichever of the five CLIs the agent ran in (`donegate.clients.payloads`)."""
    clients = ("claude", "codex", "gemini", "copilot", "qwen")
    write(kit_home / "ledger.jsonl", *[_with_client(stop(c + "-s", v, n=i + 1), c)
                                       for c in clients for i, v in enumerate(("block", "pass"))])
    for fast in ((), ("--jobs", "2")):
        by = report_json(capsys, "--by", "client", *fast)
        assert {g["client"]: (g["sessions"], g["stops"]) for g in by["groups"]} == {c: (1, 2) for c in clients}


def _labels_read_by_hand(path: Path, by: str) -> dict[str, tuple[int, int]]:
    """(justified, unjustified) per group as a person counts them reading the lines with json.loads: each stop's
    latest label, in the group of the stop its ref names (`ledger.stop_ref`)."""
    recs = [(ledger.stop_ref(line), json.loads(line)) for line in path.read_bytes().splitlines()]
    stops = {ref: rec for ref, rec in recs if rec["event"] == "stop"}
    latest = {rec["ref"]: rec["label"] for _, rec in recs if rec["event"] == "label"}
    out: dict[str, list[int]] = {}
    for ref, label in latest.items():
        key = stops[ref].get("client", "claude") if by == "client" else stops[ref]["config"]
        out.setdefault(key, [0, 0])[label == "unjustified"] += 1
    return {k: (a, b) for k, (a, b) in out.items()}


def test_labels_by_client_land_in_their_stops_client_not_a_config_of_that_name(kit_home, capsys):
    """A label line carries its stop's config, not its client: by client it is counted by its ref's stop. The config
    named "codex" is the trap (a label of a claude stop in it once landed in the codex group), "default" the miss."""
    path = write(kit_home / "ledger.jsonl",
                 _with_client(stop("c1", "block"), "codex"), _with_client(stop("c1", "block", n=2), "codex"),
                 _with_client(stop("k1", "block", config="codex"), "claude"),
                 _with_client(stop("k2", "block", config="codex"), "claude"),
                 stop("old", "block", config="default"))  # before the kit recorded the client: claude's
    refs = stop_line_refs(path)
    for ref, label in zip(refs, ("justified", "unjustified", "justified", "unjustified", "justified"), strict=True):
        assert run(capsys, "label", ref, label)[0] == 0
    assert run(capsys, "label", refs[1], "justified")[0] == 0  # the latest wins
    for by in ("client", "config"):
        want = _labels_read_by_hand(path, by)
        assert want == ({"codex": (2, 0), "claude": (2, 1)} if by == "client" else {"default": (3, 0), "codex": (1, 1)})
        for fast, jobs, keep in ((True, 1, False), (False, 1, False), (True, 2, False), (True, 1, True), (True, 1, True)):
            s = report.summary.summarize([path], by, jobs=jobs, fast=fast, keep=keep)
            assert {g[by]: (g["justified"], g["unjustified"]) for g in s["groups"] if g["justified"] + g["unjustified"]} == want
            assert s["labels"] == {"count": 5, "unmatched": []}
    # what a reader keeps for it: the refs of the stops that are not Claude Code's only (a ref not kept is Claude Code's);
    # every ref kept, `--by client` peaked at 109 MB on make bench's Claude Code ledger against 83 by config
    for fast in (True, False):
        parts, _ = report.parallel.read_all([path], report.read.Options(by="client", fast=fast), jobs=1)
        assert {c for _, _, part in parts for c in part.clients.values()} == {b"codex"}
        assert sorted(r for _, _, part in parts for r in part.clients) == sorted(refs[:2])
    # the kept reading resumed: a stop and its label appended after a kept report are counted as a cold read counts
    write(path, _with_client(stop("c2", "block"), "codex"))
    assert run(capsys, "label", stop_line_refs(path)[-1], "unjustified")[0] == 0
    kept = report.summary.summarize([path], "client", keep=True)
    assert kept == report.summary.summarize([path], "client")
    assert {g["client"]: g["unjustified"] for g in kept["groups"]} == {"codex": 1, "claude": 1}
