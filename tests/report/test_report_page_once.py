"""`--html` reads the ledger once: the page's counts over every stop (by verdict, the days) are the report's own, kept
with its summary (`read.Partial.tally`, `days`), and only the lines of the sessions it lists (between each one's first
and last stop) and the lines a label or a decision may be in are read again (`page_read`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.support.repos import KIT
from donegate import report
from donegate.ledger import chain as ledger
from donegate.report import html as report_html, page_read, resume

sys.path.insert(0, str(KIT / "bench"))
import report_bench  # noqa: E402


def _edit_in_place(path: Path, at: int, old: bytes, new: bytes) -> None:
    """Bytes changed in place (same length), the time stamp put back, and the kept reading made to take the file as
    unchanged (its change time the file's now: `resume.load` would hash the kept bytes again and see the edit): only a
    reading of the line sees it."""
    data = path.read_bytes()
    assert data[at:at + len(old)] == old and len(old) == len(new)
    st = path.stat()
    path.write_bytes(data[:at] + new + data[at + len(old):])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    for manifest in (path.parent / "state" / "report").glob("*.json"):
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "ctime_ns": path.stat().st_ctime_ns}))


def _unlisted_stop(path: Path, listed: set[str], needle: bytes) -> int:
    """Where `needle` is in the first stop line (after line 1) of a session the page does not list."""
    data = path.read_bytes()
    at = data.index(b"\n") + 1
    while True:
        end = data.index(b"\n", at)
        rec = json.loads(data[at:end])
        k = data.find(needle, at, end)
        if rec.get("event") == "stop" and rec["session"] not in listed and k >= 0:
            return k
        at = end + 1


def test_the_page_s_counts_by_verdict_and_days_are_the_report_s_kept_ones(kit_home):
    """A stop of a session the page does not list, changed in place after the report kept its reading (its verdict,
    then its day), is not read again: the page's stops by verdict and its days are what was kept. With nothing kept,
    both changes are read (the look-alike). On the old code the page read every line again for these counts."""
    path = kit_home / "ledger.jsonl"
    report_bench.generate(path, 1500)
    first = report_html.page_data([path], row_budget=2_000, keep=True)
    listed = {row[0] for row in first["rows"]}
    _edit_in_place(path, _unlisted_stop(path, listed, b'"verdict":"pass"') + 11, b"pass", b"hint")
    at = _unlisted_stop(path, listed, b'"time":"20')
    _edit_in_place(path, at + 8, path.read_bytes()[at + 8:at + 18], b"2001-01-01")
    for kept in (kit_home / "state" / "report").glob("*.page"):
        kept.unlink()  # the finished page is gone: the page is made again from the kept reading
    again = report_html.page_data([path], row_budget=2_000, keep=True)
    assert again["stops_by_verdict"] == first["stops_by_verdict"] and again["days"] == first["days"]
    cold = report_html.page_data([path], row_budget=2_000)
    assert cold["stops_by_verdict"]["hint"] == first["stops_by_verdict"].get("hint", 0) + 1
    assert "2001-01-01" in cold["days"] and "2001-01-01" not in first["days"]


def _interleaved(path: Path, sessions: int, rounds: int, day: int) -> None:
    """Stops of `sessions` sessions taking turns: every session has stops all through the file."""
    for r in range(rounds):
        for s in range(sessions):
            rec = {"event": "stop", "time": f"2026-12-0{day}T1{r % 10}:{s:02d}:00.000+00:00", "repo": "/r/i",
                   "session": f"s{s}", "stop": r + 1, "stop_hook_active": r > 0,
                   "verdict": "block" if (r + s) % 3 else "pass",
                   "gates": {"integrity": {"ok": True, "tests": 4}, "acceptance": {"ok": True, "total": 4, "passed": 3}},
                   "blocks": 0, "duration": 1.5, "kit_version": "0.1.0", "config": "tests"}
            ledger.append(rec, path)


def _line_by_line(monkeypatch, path: Path) -> dict:
    with monkeypatch.context() as m:
        m.setattr(page_read, "sessions", lambda *a: None)  # every line through json.loads, as before the kept reading
        return report_html.page_data([path], jobs=2)


def test_sessions_whose_stops_lie_in_both_ranges_and_in_what_was_appended_are_read_whole(kit_home, monkeypatch):
    """Sessions taking turns have stops in both readers' ranges (`Partial.spill` names their stops in the earlier one)
    and, after an append, stops both in what was kept and in the new lines (`resume.merge` keeps their first stop): the
    page lists each with every stop, as reading every line gives it."""
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    path = kit_home / "ledger.jsonl"
    _interleaved(path, 7, 12, 3)
    page = report_html.page_data([path], jobs=2, keep=True)
    assert page == _line_by_line(monkeypatch, path)
    assert sorted(len(r[5]) for r in page["rows"]) == [12] * 7
    _interleaved(path, 7, 3, 4)
    page = report_html.page_data([path], jobs=2, keep=True)
    assert resume.load(path, report.read.Options()) is not None  # read from what was kept
    assert page == _line_by_line(monkeypatch, path)
    assert sorted(len(r[5]) for r in page["rows"]) == [15] * 7


def test_a_summary_kept_by_an_older_version_is_read_again_from_the_start(kit_home, capsys, monkeypatch):
    """A manifest of another VERSION (its shards lack what this one keeps) is not resumed: the whole ledger is read
    again. The look-alike: the same VERSION resumes, reading only the line added."""
    from donegate import cli
    from donegate.report import parallel

    path = kit_home / "ledger.jsonl"
    report_bench.generate(path, 400)
    scanned: list[int] = []
    real = parallel.scan
    monkeypatch.setattr(parallel, "scan", lambda path, start, *rest: scanned.append(start) or real(path, start, *rest))
    for version, start in ((resume.VERSION, None), (resume.VERSION - 1, 0)):
        assert cli.main(["report", "--json", str(path)]) == 0
        capsys.readouterr()
        size = path.stat().st_size
        ledger.append({"event": "note", "time": "2026-12-09T10:00:00.000+00:00"}, path)  # something new: not finished
        manifest = next((kit_home / "state" / "report").glob("*.json"))
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": version}))
        scanned.clear()
        assert cli.main(["report", "--json", str(path)]) == 0
        assert scanned == [size if start is None else start]
        path.unlink()
        for kept in (kit_home / "state" / "report").glob("*"):
            kept.unlink()
        report_bench.generate(path, 400)
