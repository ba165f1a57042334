"""The report keeps what it has read of a ledger (`donegate.report.resume`) and reads only what is new: the same
output as a cold read of the whole file, a ledger replaced, cut or edited read again from the start, a kept
summary that is not what it says ignored."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.repos import KIT
from donegate import cli, report
from donegate.ledger import chain as ledger
from donegate.report import resume

sys.path.insert(0, str(KIT / "bench"))
import report_bench  # noqa: E402

SETTLE_S = resume.SETTLED_NS / 1e9  # the kit's own, read before the fixture below sets it to 0 in this process

T = "2026-12-0{d}T1{h}:00:00.000+00:00"


@pytest.fixture(autouse=True)
def _settled(monkeypatch):
    """The ledgers here are read a moment after they are written: their change times are taken as settled
    (`resume.settled`), except where a test asks for the real wait."""
    monkeypatch.setattr(resume, "SETTLED_NS", 0)


def _stop(session: str, verdict: str, day: int = 3, hour: int = 0, **more) -> dict:
    gates = {"integrity": {"ok": True, "tests": 4},
             "scope": {"ok": True, "protected": [], "outside": [], "problems": [], "duration": 0.01},
             "acceptance": {"ok": verdict == "pass", "total": 4, "passed": 4 if verdict == "pass" else 2, "failed": 0,
                            "failing": [], "problem": "", "duration": 1.0, **more.pop("acceptance", {})}}
    return {"event": "stop", "time": T.format(d=day, h=hour), "repo": "/r/kept", "session": session, "stop": 1,
            "stop_hook_active": False, "verdict": verdict, "gates": gates, "blocks": 0, "duration": 2.5,
            "kit_version": "0.1.0", "config": more.pop("config", "tests"), **more}


def _bulk(path: Path, lines: int = 2000, seed: int = 7) -> Path:
    report_bench.generate(path, lines, seed=seed)
    return path


def _kept(home: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((home / "state" / "report").glob("*.json"))]


def _cli(capsys, *argv: str) -> str:
    assert cli.main(["report", *argv]) == 0
    return capsys.readouterr().out


def _cold(capsys, home: Path, *argv: str) -> str:
    """The report as a cold read gives it: nothing kept before it."""
    shutil.rmtree(home / "state" / "report", ignore_errors=True)
    return _cli(capsys, *argv)


def _same_as_cold(path: Path, jobs: int = 1) -> None:
    """Every grouping, read with what was kept, equals a cold read of the whole file."""
    for by in report.BY:
        kept = report.summarize([path], by=by, jobs=jobs, keep=True)
        assert kept == report.summarize([path], by=by, jobs=jobs), by


def _scans(monkeypatch) -> list[tuple[int, int]]:
    """The byte ranges of the ledger the report's readers read from now on (one range: a ledger under 64 MB)."""
    from donegate.report import parallel

    scanned: list[tuple[int, int]] = []
    real = parallel.scan

    def recorded(path, start, end, *rest):
        scanned.append((start, end))
        return real(path, start, end, *rest)

    monkeypatch.setattr(parallel, "scan", recorded)
    return scanned


def test_a_second_report_reads_only_the_bytes_added_since_the_first(kit_home, capsys, tmp_path, monkeypatch):
    path = _bulk(kit_home / "ledger.jsonl")
    pristine = tmp_path / "pristine.jsonl"
    shutil.copyfile(path, pristine)
    first = _cli(capsys, "--json")
    (kept,) = _kept(kit_home)
    assert kept["offset"] == path.stat().st_size and kept["last_hash"] == ledger.line_hash(path.read_bytes().splitlines()[-1])
    # Nothing added: nothing is read, the kept numbers stand.
    scanned, size = _scans(monkeypatch), path.stat().st_size
    assert _cli(capsys, "--json") == first and scanned == []
    # One line added: only it is read. The result is a cold read of the ledger as it was, plus that line.
    line = _stop("appended", "gave_up")
    ledger.append(line, path)
    ledger.append(line, pristine)
    numbers = {k: v for k, v in json.loads(_cli(capsys, "--json")).items() if k != "ledgers"}
    assert scanned == [(size, path.stat().st_size)]
    assert numbers == {k: v for k, v in json.loads(_cli(capsys, "--json", str(pristine))).items() if k != "ledgers"}
    assert _kept(kit_home)[0]["offset"] == path.stat().st_size


def test_a_report_without_a_kept_summary_reads_the_whole_ledger(kit_home, capsys):
    """The honest look-alike: nothing kept, nothing reused; the changed bytes are counted."""
    path = _bulk(kit_home / "ledger.jsonl")
    data = bytearray(path.read_bytes())
    middle = data.index(b"\n", len(data) // 2) + 1
    data[middle:middle + 8] = b"########"
    path.write_bytes(bytes(data))
    assert json.loads(_cli(capsys, "--json"))["skipped"]["count"] == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_appended_lines_give_what_a_cold_read_gives(kit_home, capsys, monkeypatch, jobs):
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)  # two ranges, two shards, two processes
    path = _bulk(kit_home / "ledger.jsonl", 1500)
    ledger.append(_stop("seam", "gave_up", hour=1), path)
    ledger.append(_stop("decided", "block", hour=1), path)
    _same_as_cold(path, jobs)
    assert len(_kept(kit_home)[-1]["shards"]) == jobs
    decided = next(line for _, line in ledger.read(path) if b'"decided"' in line)
    rounds = [
        # a session that gave up before the seam and passes after it; a label of a stop read before
        [_stop("seam", "pass", hour=2), {"event": "label", "time": T.format(d=4, h=0), "ref": ledger.stop_ref(decided),
                                         "label": "justified", "note": "", "session": "decided", "stop": 1,
                                         "stop_time": T.format(d=3, h=1), "repo": "/r/kept", "config": "tests",
                                         "verdict": "block"}],
        # a person's decision on a stop read before, then the session fails again after it
        [{"event": "decision", "time": T.format(d=4, h=1), "ref": ledger.stop_ref(decided), "decision": "reject",
          "note": "no", "session": "decided", "stop": 1, "stop_time": T.format(d=3, h=1), "repo": "/r/kept",
          "config": "tests", "verdict": "block"}],
        [_stop("decided", "block", day=5), _stop("held", "block", day=5, acceptance={
            "held_back": {"sealed": 2, "failed": 1, "shown_failed": 0, "shown_passed": True, "blocked": True}})],
        [_stop("other", "hint", day=6, config="new-config"), {"event": "vacuum", "time": T.format(d=6, h=1)}],
    ]
    for records in rounds:
        for rec in records:
            ledger.append(rec, path)
        _same_as_cold(path, jobs)
    with open(path, "ab") as fh:  # a torn last line: read (and counted), never kept
        fh.write(b'{"v":1,"event":"stop","time":"2026-12-07')
    _same_as_cold(path, jobs)
    assert _kept(kit_home)[-1]["offset"] < path.stat().st_size
    ledger.append(_stop("after-torn", "pass", day=7), path)  # the next line the kit writes starts a new line
    _same_as_cold(path, jobs)
    text = _cli(capsys, "--jobs", str(jobs))
    assert text == _cold(capsys, kit_home, "--jobs", str(jobs))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # the last line removed


def _replace(path: Path) -> None:
    other = _bulk(path.with_name("other.jsonl"), 2100, seed=9)
    os.replace(other, path)


def _edit_in_place(path: Path) -> None:
    """A verdict changed by hand in the middle, the line's length unchanged (pass -> hint), nothing added."""
    data = path.read_bytes()
    at = data.index(b'"verdict":"pass"', len(data) // 2)
    path.write_bytes(data[:at] + b'"verdict":"hint"' + data[at + 16:])


def _edit_and_append(path: Path) -> None:
    data = path.read_bytes()
    at = data.index(b'"verdict":"block"', len(data) // 2)
    path.write_bytes(data[:at] + b'"verdict":"pass"' + data[at + 17:])
    ledger.append(_stop("late", "pass", day=8), path)


@pytest.mark.parametrize("change, broken", [(_truncate, False), (_replace, False), (_edit_in_place, True),
                                            (_edit_and_append, True)])
def test_a_ledger_cut_replaced_or_edited_is_read_from_the_start(kit_home, capsys, change, broken):
    path = _bulk(kit_home / "ledger.jsonl")
    _cli(capsys, "--json")
    change(path)
    kept = _cli(capsys, "--json")
    assert _kept(kit_home)[0]["offset"] == path.stat().st_size
    assert kept == _cold(capsys, kit_home, "--json")
    code = cli.main(["report", "--verify"])
    out = capsys.readouterr().out
    assert (code, "the hash chain breaks at line" in out) == ((1, True) if broken else (0, False)), out


def _shard(home: Path) -> Path:
    (kept,) = _kept(home)
    return home / "state" / "report" / kept["shards"][0][0]


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x55
    path.write_bytes(bytes(data))


def _other_content(path: Path) -> None:
    """The shard's content changed, its name and the manifest's hash of it kept: numbers that are not the ledger's."""
    import marshal

    state = marshal.loads(path.read_bytes())
    state["groups"][0][1] += 1000  # stops
    path.write_bytes(marshal.dumps(state))


CORRUPTIONS = {
    "a flipped byte in the shard": lambda home: _flip(_shard(home)),
    "a shard whose content is not its hash's": lambda home: _other_content(_shard(home)),
    "a shard cut short": lambda home: _shard(home).write_bytes(_shard(home).read_bytes()[:1000]),
    "no shard": lambda home: _shard(home).unlink(),
    "a manifest that is not JSON": lambda home: next((home / "state" / "report").glob("*.json")).write_text("{oops"),
    "a manifest whose offset lies": lambda home: _rewrite(home, offset=1),
    "a shard named outside the folder": lambda home: _rewrite(home, shards=[["../../ledger.jsonl", "0" * 64, 0, 1]]),
    "a manifest without the file it names": lambda home: _rewrite(home, dev=None, ino=None, ctime_ns=None, drop=True),
}


def _trust(home: Path, path: Path) -> None:
    """The kept reading made to take the ledger as unchanged since (its change time the file's now), what the report
    finished dropped: the next report reads nothing but the sessions its page lists (a change elsewhere unseen)."""
    _rewrite(home, ctime_ns=path.stat().st_ctime_ns)
    for kept in (home / "state" / "report").glob("*"):
        if kept.suffix in (".summary", ".page"):
            kept.unlink()


def _rewrite(home: Path, drop: bool = False, **changes) -> None:
    """The manifest with `changes`; `drop`: their keys taken out instead."""
    path = next((home / "state" / "report").glob("*.json"))
    kept = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in kept.items() if not (drop and k in changes)}))


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=list(CORRUPTIONS))
def test_a_kept_summary_that_is_not_what_it_says_is_ignored(kit_home, capsys, corrupt):
    path = _bulk(kit_home / "ledger.jsonl")
    first = _cli(capsys, "--json")
    corrupt(kit_home)
    ledger.append(_stop("x", "block", day=9), path)
    kept = _cli(capsys, "--json")
    assert kept != first and _cli(capsys, "--json") == kept  # kept again, whole, and read back
    assert kept == _cold(capsys, kit_home, "--json")


def test_the_page_reads_what_the_report_kept(kit_home, tmp_path):
    from donegate.report import html as report_html

    path = _bulk(kit_home / "ledger.jsonl", 1200)
    report_html.page_data([path], keep=True)
    ledger.append(_stop("page", "gave_up", day=9), path)
    kept = report_html.render_page(report_html.page_data([path], keep=True))
    assert _kept(kit_home) and kept == report_html.render_page(report_html.page_data([path]))


def test_the_report_writes_only_under_the_kits_state_folder(tmp_path):
    """Never into the real home, never beside the ledger (a folder the agent may write)."""
    home, kit, repo = tmp_path / "home", tmp_path / "kit", tmp_path / "repo"
    for folder in (home, kit, repo):
        folder.mkdir()
    path = _bulk(repo / "ledger.jsonl", 300)
    # The reports run in processes of their own (the fixture's SETTLED_NS is this one's): the ledger's change time is
    # left to settle, so that the summary is kept too (`resume.settled`).
    time.sleep(SETTLE_S + 0.1)
    env = {**os.environ, "HOME": str(home), "DONEGATE_HOME": str(kit), "XDG_DATA_HOME": str(home / ".local" / "share")}
    before = {p for p in tmp_path.rglob("*")}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "donegate", "report", "--json", str(path)], cwd=KIT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    made = {p.relative_to(tmp_path).as_posix() for p in set(tmp_path.rglob("*")) - before}
    assert made and all(p.startswith("kit/state") for p in made), made
    assert {p.suffix for p in (kit / "state" / "report").iterdir()} == {".json", ".bin", ".summary"}


@pytest.mark.parametrize("shift", [-11, -5, 0, 1])
@pytest.mark.parametrize("needle", [b'"held_back":', b',"review":{'])
def test_a_gate_cut_by_a_chunk_boundary_is_read(kit_home, shift, needle):
    """The report finds held-back results and reviews a chunk at a time (`read.CHUNK`): a key cut in two by a
    chunk's end is found all the same (the counts equal those of json.loads on every line)."""
    from donegate.report.read import CHUNK

    path = kit_home / "ledger.jsonl"
    review = {"mode": "pair", "verdict": "approve", "findings": [], "reviewers": [], "errors": [], "cost_usd": 0.25,
              "duration": 3.0, "diff_chars": 10, "diff_cut": False, "state": "ab"}
    held = _stop("held", "block", acceptance={"held_back": {"sealed": 1, "failed": 1, "shown_failed": 0,
                                                            "shown_passed": True, "blocked": True}})
    held["gates"]["review"] = review
    line = json.dumps({"v": 1, **held, "prev": "0" * 64}, separators=(",", ":")).encode()
    pad = CHUNK + shift - line.index(needle) - len(b'{"v":1,"event":"pad","x":""}\n')
    path.write_bytes(b'{"v":1,"event":"pad","x":"' + b"x" * pad + b'"}\n' + line + b"\n")
    assert path.read_bytes().index(needle) == CHUNK + shift
    summary = report.summarize([path])
    assert summary == report.summarize([path], fast=False)
    assert summary["hard_coding"]["held_back_blocked"] == 1 and summary["total"]["review_cost_usd"] == 0.25


def test_a_summary_kept_by_one_process_is_read_again_by_two(kit_home, monkeypatch):
    """Ranges kept by `--jobs 1` are not the ones two readers take: read again from the start, kept as two."""
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    path = _bulk(kit_home / "ledger.jsonl", 800)
    report.summarize([path], jobs=1, keep=True)
    assert len(_kept(kit_home)[0]["shards"]) == 1
    ledger.append(_stop("two", "pass", day=9), path)  # something new: the ranges are read (nothing new reads none)
    assert report.summarize([path], jobs=2, keep=True) == report.summarize([path], jobs=2)
    assert len(_kept(kit_home)[0]["shards"]) == 2


def test_the_new_part_s_hash_chain_is_checked_from_the_kept_hash(kit_home, capsys):
    """A report reads only what is new, and checks that part's chain from the hash it kept: a line appended by hand
    (its prev not the last line's hash) is named as `--verify` names it, with or without a kept summary."""
    path = _bulk(kit_home / "ledger.jsonl", 1500)
    assert report.summarize([path], keep=True)["chain"] == {"intact": True, "ledger": None, "line": None,
                                                             "why": "the hash chain is intact"}
    lines = path.read_bytes().count(b"\n")
    forged = json.dumps({"v": 1, **_stop("forged", "pass"), "prev": "0" * 64}, separators=(",", ":"))
    with open(path, "ab") as fh:
        fh.write(forged.encode() + b"\n")
    v = ledger.verify(path)
    assert not v["intact"] and v["line"] == lines + 1
    kept = report.summarize([path], keep=True)
    assert kept["chain"] == {"intact": False, "ledger": str(path), "line": v["line"], "why": v["why"]}
    assert kept == report.summarize([path])  # a cold read says the same
    out = _cli(capsys)
    assert f"the hash chain breaks at line {v['line']:,}: {v['why']}" in out and "--verify" in out
    # The look-alike: lines the kit appends, a torn line among them (the next line vouches for it): intact.
    path.write_bytes(path.read_bytes()[: -len(forged) - 1])
    with open(path, "ab") as fh:
        fh.write(b'{"v":1,"event":"stop","time":"2026-12-0\n')
    ledger.append(_stop("after", "pass"), path)
    assert ledger.verify(path)["intact"]
    assert report.summarize([path], keep=True)["chain"]["intact"] and "hash chain" not in _cli(capsys)


@pytest.mark.parametrize("where", ["last of the first range", "first of the second range", "none"])
def test_a_break_where_two_readers_meet_is_found(kit_home, monkeypatch, where):
    """Two processes check their ranges' chains; the ends are joined in file order: a line changed on either side of
    the cut is named as `--verify` names it, and a ledger left alone is intact."""
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    path = _bulk(kit_home / "ledger.jsonl", 600)
    (_, cut), _ = report.ranges(path, 2)
    data = bytearray(path.read_bytes())
    at = {"last of the first range": data.rindex(b"\n", 0, cut - 1) + 1, "first of the second range": cut}.get(where)
    if at is not None:
        data[at + 40: at + 41] = b"7" if data[at + 40: at + 41] != b"7" else b"8"  # a digit of its time
        path.write_bytes(bytes(data))
    v = ledger.verify(path)
    assert v["intact"] == (at is None)
    for jobs in (2, 1):
        assert report.summarize([path], jobs=jobs)["chain"] == {
            "intact": v["intact"], "ledger": None if v["intact"] else str(path), "line": v["line"], "why": v["why"]}


def test_the_own_suite_s_counts_are_kept_with_the_rest(kit_home, monkeypatch):
    """What the project's own suite did (`gates.own`) is read in the report's one pass and kept: a report that reads
    only what is new, one process or two, counts what a pass of its own over the whole ledger counts."""
    from donegate.report.own_counts import own_counts

    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    path = _bulk(kit_home / "ledger.jsonl", 600)

    def own(sid: str, verdict: str, added: int, contract: bool = False) -> dict:
        rec = _stop(sid, verdict)
        rec["gates"]["own"] = {"failing": [{"id": "t::a", "contract": contract}] if verdict != "pass" else [],
                               "added": added, "weakened": [{"test": "t::b", "rule": "assert-removed"}]}
        return rec

    for rec in (own("o1", "block", 2), own("o2", "appealed", 1, contract=True)):
        ledger.append(rec, path)
    for jobs in (1, 2):  # kept last by two readers: the next report reads on from there
        first = report.summarize([path], jobs=jobs, keep=True)
        assert first["own_suite"] == own_counts([path]) and first["own_suite"]["tests"]["stops"] == 2
    for rec in (own("o1", "pass", 5), own("o3", "block", 0)):
        ledger.append(rec, path)
    kept = report.summarize([path], jobs=2, keep=True)
    assert kept == report.summarize([path], jobs=2) and kept["own_suite"] == own_counts([path])
    assert kept["own_suite"]["tests"] == {"sessions": 3, "stops": 4, "regressions_blocked": 2, "tests_added": 6,
                                          "weakenings_named": 3, "contract_changes_appealed": 1}



def test_a_regression_blocked_again_and_again_is_one_regression(kit_home, monkeypatch):
    """`regressions_blocked` counts distinct (session, test id), as weakenings are counted: a session blocked on the
    same sealed test at three stops (the agent stopped again without fixing it) blocked one regression, read whole
    or kept and read on. Two tests failing at one stop are two; the same test in another session is another; a
    contract change (the agent changed that test) and a stop that passed are none."""
    from donegate.report.own_counts import own_counts

    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    path = _bulk(kit_home / "ledger.jsonl", 600)

    def own(sid: str, verdict: str, *failing: str, contract: bool = False) -> dict:
        rec = _stop(sid, verdict)
        rec["gates"]["own"] = {"failing": [{"id": t, "contract": contract} for t in failing], "added": 0, "weakened": []}
        return rec

    for rec in (own("s1", "block", "t::a"), own("s1", "block", "t::a"), own("s2", "block", "t::a")):
        ledger.append(rec, path)
    assert report.summarize([path], jobs=2, keep=True)["own_suite"]["tests"]["regressions_blocked"] == 2
    for rec in (own("s1", "gave_up", "t::a", "t::b"), own("s3", "block", "t::c", contract=True), own("s1", "pass")):
        ledger.append(rec, path)
    kept = report.summarize([path], jobs=2, keep=True)
    assert kept["own_suite"] == own_counts([path]) == report.summarize([path], jobs=1)["own_suite"]
    assert kept["own_suite"]["tests"]["regressions_blocked"] == 3 and kept["own_suite"]["tests"]["stops"] == 6


def test_the_cases_of_one_parametrized_test_are_one_regression(kit_home):
    """A real run (humanize 4.9.0) said "21 regressions blocked" over 23 stops: each session broke one
    parametrized test, counted once per case. The cases of one test (`t::a[1]`, `t::a[2]`) are one regression;
    a look-alike: two tests of one module (`t::a`, `t::ab`), or one test's cases in two sessions, are two."""
    from donegate.report.own_counts import own_counts

    path = kit_home / "ledger.jsonl"

    def own(sid: str, *failing: str) -> dict:
        rec = _stop(sid, "block")
        rec["gates"]["own"] = {"failing": [{"id": t, "contract": False} for t in failing], "added": 0, "weakened": []}
        return rec

    ledger.append(own("s1", *(f"tests/t.py::test_size[args{i}-2.9[M]]" for i in range(6))), path)
    ledger.append(own("s1", "tests/t.py::test_size[args0-2.9[M]]"), path)
    assert own_counts([path])["tests"]["regressions_blocked"] == 1
    ledger.append(own("s2", "tests/t.py::test_size[args1-x]", "tests/t.py::T::test_size_of"), path)
    assert own_counts([path])["tests"]["regressions_blocked"] == 3
    assert report.summarize([path], jobs=1)["own_suite"]["tests"]["regressions_blocked"] == 3


def _line_by_line(monkeypatch):
    """The page as it was made before it read the report's kept summary: every line through json.loads."""
    from donegate.report import page_read

    monkeypatch.setattr(page_read, "sessions", lambda *a: None)


@pytest.mark.parametrize("jobs, row_budget, detail_stops", [(1, 3_200_000, None), (2, 3_200_000, None), (2, 9_000, None),
                                                            (1, 400, None), (2, 3_200_000, 40), (1, 9_000, 9)])
def test_the_page_from_the_kept_summary_is_the_page_read_line_by_line(kit_home, monkeypatch, jobs, row_budget, detail_stops):
    """The page's sessions come from the report's reading (the sessions it lists, read whole; the rest counted):
    its data equal those of reading every line with json.loads, whatever the page can list (a small budget lists
    the first sessions only: left for a person, then the latest), one range or two, kept or not, labels and a
    person's decision included. With few stops' details (`detail_stops`), the sessions past them are let go as their
    rows are made (the page's memory): the details are still those of the first sessions, both ways."""
    from donegate.report import html as report_html

    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    if detail_stops:
        monkeypatch.setattr(report_html, "DETAIL_STOPS", detail_stops)
        monkeypatch.setattr(report_html, "DETAIL_BATCH", 4)
    path = _bulk(kit_home / "ledger.jsonl", 1800)
    decided = next(line for _, line in ledger.read(path) if b'"verdict":"block"' in line)
    rec = json.loads(decided)
    ledger.append({"event": "decision", "time": T.format(d=9, h=1), "ref": ledger.stop_ref(decided), "decision": "reject",
                   "note": "no", "session": rec["session"], "stop": rec["stop"], "stop_time": rec["time"],
                   "repo": rec["repo"], "config": rec["config"], "verdict": "block"}, path)
    ledger.append(_stop("cached", "pass", day=9, cached=True), path)
    kept = report_html.page_data([path], jobs=jobs, row_budget=row_budget, keep=True)
    again = report_html.page_data([path], jobs=jobs, row_budget=row_budget, keep=True)
    assert kept["rows"] and (len(kept["rows"]) < kept["sessions"]) == (row_budget < 100_000)
    with monkeypatch.context() as m:
        _line_by_line(m)
        old = report_html.page_data([path], jobs=jobs, row_budget=row_budget)
    assert kept == again == old
    if detail_stops:  # details for the first sessions only, up to about `detail_stops` stops
        assert 0 < kept["detail_sessions"] < len(kept["rows"])
        assert [r[9] for r in kept["rows"][: kept["detail_sessions"]]] == list(range(kept["detail_sessions"]))


def _summary_table(page: Path) -> str:
    import re

    return re.search(r'<table class="summary" id="summary">.*?</table>', page.read_text(), re.S).group(0)


def test_a_second_page_reads_only_the_bytes_added_since_the_first(kit_home, tmp_path, monkeypatch):
    """`--html` starts from what the report kept: with a line added, only it is read; the page is a cold one's."""
    path = _bulk(kit_home / "ledger.jsonl", 1500)
    out = tmp_path / "page.html"
    assert cli.main(["report", str(path), "--html", str(out)]) == 0
    first, size = _summary_table(out), path.stat().st_size
    ledger.append(_stop("appended", "gave_up", day=9), path)
    scanned = _scans(monkeypatch)
    assert cli.main(["report", str(path), "--html", str(out)]) == 0
    assert scanned == [(size, path.stat().st_size)]
    kept = _summary_table(out)
    shutil.rmtree(kit_home / "state" / "report")
    assert cli.main(["report", str(path), "--html", str(out)]) == 0
    assert _summary_table(out) == kept != first  # the look-alike: nothing kept, the whole file read


def test_the_page_counts_what_the_report_kept_and_reads_only_the_sessions_it_lists(kit_home):
    """The page's counts (its configurations here) come from the report's kept reading, and only the sessions it lists
    are read whole again: a session it does not list, changed in place (its configuration renamed, same length, the
    time stamp put back), is not read. With nothing kept, the change is read (the honest look-alike)."""
    from donegate.report import html as report_html

    path = _bulk(kit_home / "ledger.jsonl", 1500)
    first = report_html.page_data([path], row_budget=2_000, keep=True)
    listed = {row[0] for row in first["rows"]}
    data = path.read_bytes()
    at = next(k for k in range(data.index(b"\n") + 1, len(data)) if data.startswith(b'"config":"tests"', k)
              and json.loads(data[data.rindex(b"\n", 0, k) + 1: data.index(b"\n", k)]).get("session", "") not in listed | {""})
    path.write_bytes(data[:at] + b'"config":"testz"' + data[at + 16:])
    _trust(kit_home, path)
    assert report_html.page_data([path], row_budget=2_000, keep=True)["configs"] == first["configs"]
    assert "testz" in report_html.page_data([path], row_budget=2_000)["configs"]


def _tear(path: Path) -> None:
    """The last line cut off halfway (a write the disk did not finish): no newline at the end."""
    data = path.read_bytes()
    start = data.rindex(b"\n", 0, len(data) - 1) + 1
    path.write_bytes(data[: start + (len(data) - start) // 2])


def _tear_and_append(path: Path) -> None:
    _tear(path)
    ledger.append(_stop("after-torn", "block", day=9), path)  # the kit's next line vouches for the torn one


def _finished(home: Path) -> set[str]:
    return {p.suffix for p in (home / "state" / "report").iterdir()} & {".summary", ".page"}


def _page(path: Path, keep: bool) -> dict:
    from donegate.report import html as report_html

    return report_html.page_data([path], row_budget=6_000, keep=keep)


def _shards_gone(home: Path) -> None:
    for shard in (home / "state" / "report").glob("*.bin"):
        shard.unlink()


def _edit_unseen(path: Path) -> None:
    """Bytes of a stop line changed in place, same length, the time stamp put back: only a reading of the line sees it
    (a verdict the report does not know: counted as skipped, and the page's verdicts change). The file's change time
    (ctime) moves all the same: no one but the system sets it."""
    data = path.read_bytes()
    at = data.index(b'"verdict":"block"', len(data) - 4000)
    st = path.stat()
    path.write_bytes(data[:at] + b'"verdict":"bloc!"' + data[at + 17:])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _edit_unseen_and_append(path: Path) -> None:
    """A stop line in the middle changed in place, every byte offset and the first and last lines kept, then a line
    appended as the kit appends: only a reading of the whole prefix sees it (the chain breaks there)."""
    data = path.read_bytes()
    at = data.index(b'"verdict":"block"', len(data) // 2)
    path.write_bytes(data[:at] + b'"verdict":"hint!"' + data[at + 17:])
    ledger.append(_stop("late", "pass", day=8), path)


def _touch_and_append(path: Path) -> None:
    """The look-alike: the file's times moved and a line appended, no byte before changed: only the new line is read."""
    os.utime(path)
    ledger.append(_stop("late", "pass", day=8), path)


def test_a_report_with_nothing_new_reads_nothing_but_what_it_finished(kit_home, capsys, monkeypatch):
    """With nothing new since the last report, the report and the page are what they finished then: the kept shards
    are not read (they are gone here) and neither is the ledger (no reader may start)."""
    from donegate.report import summary

    path = _bulk(kit_home / "ledger.jsonl", 400)
    first, page = _cli(capsys, "--json"), _page(path, True)
    assert _finished(kit_home) == {".summary", ".page"}
    _shards_gone(kit_home)
    with monkeypatch.context() as m:
        m.setattr(summary, "read_all", lambda *a, **k: pytest.fail("the ledger was read"))
        assert _cli(capsys, "--json") == first and _page(path, True) == page


def test_a_report_whose_finished_summary_is_gone_reads_the_ledger(kit_home, capsys):
    """The look-alike: the finished summary and page removed, shards gone too: the ledger is read, the change seen."""
    path = _bulk(kit_home / "ledger.jsonl", 400)
    first, page = _cli(capsys, "--json"), _page(path, True)
    for kept in (kit_home / "state" / "report").glob("*"):
        if kept.suffix in (".summary", ".page", ".bin"):
            kept.unlink()
    _edit_unseen(path)
    assert _cli(capsys, "--json") != first and _page(path, True) != page


CHANGES = {"cut": (_truncate, False), "replaced": (_replace, False), "edited in place": (_edit_in_place, True),
           "edited, then appended to": (_edit_and_append, True), "a torn last line": (_tear, False),
           "a torn line, then one appended": (_tear_and_append, False), "edited in place, its time put back":
           (_edit_unseen, True), "edited in place unseen, then appended to": (_edit_unseen_and_append, True),
           "touched, then appended to": (_touch_and_append, False)}


@pytest.mark.parametrize("change, broken", CHANGES.values(), ids=list(CHANGES))
def test_what_a_report_finished_is_not_shown_for_a_changed_ledger(kit_home, capsys, change, broken):
    """A ledger cut, replaced, edited or torn after a report: neither the finished summary nor the finished page is
    shown again; both are what a reading of the whole file gives, and a broken chain is named."""
    path = _bulk(kit_home / "ledger.jsonl", 400)
    _cli(capsys, "--json")
    _page(path, True)
    assert _finished(kit_home) == {".summary", ".page"}
    change(path)
    kept, page = _cli(capsys, "--json"), _page(path, True)
    assert kept == _cold(capsys, kit_home, "--json") and page == _page(path, False)
    assert json.loads(kept)["chain"]["intact"] is not broken
    assert page["summary"]["chain"]["intact"] is not broken


def test_a_ledger_written_a_moment_ago_is_hashed_again_and_nothing_finished_is_kept(kit_home, capsys, monkeypatch):
    """A change time a later write in the same tick of the file system's clock would leave as it is (written less than
    `SETTLED_NS` ago) is not kept: the next report hashes the kept bytes again (an edit then is seen), and neither
    the summary nor the page is kept finished. The look-alike: settled, both are kept."""
    path = _bulk(kit_home / "ledger.jsonl", 400)
    monkeypatch.setattr(resume, "SETTLED_NS", 10**15)
    _cli(capsys, "--json")
    _page(path, True)
    assert _kept(kit_home)[0]["ctime_ns"] is None and _finished(kit_home) == set()
    monkeypatch.setattr(resume, "SETTLED_NS", 0)
    _cli(capsys, "--json")
    _page(path, True)
    assert _kept(kit_home)[0]["ctime_ns"] == path.stat().st_ctime_ns and _finished(kit_home) == {".summary", ".page"}


def test_a_page_kept_with_other_stores_is_made_again(kit_home):
    """The finished page was scrubbed by the stores of its time: a hidden test sealed since (its line in the page's
    text) makes the page again, scrubbed by the new stores, though the ledger did not change."""
    path = _bulk(kit_home / "ledger.jsonl", 400)
    first = _page(path, True)
    line = next(line for text in first["texts"] for line in text.splitlines() if line.startswith("(this line predates"))
    hidden = kit_home / "acceptance" / "someone" / "tests"
    hidden.mkdir(parents=True)
    (hidden / "test_hidden.py").write_text(f"def test_x():\n    pass\n# {line}\n{line}\n")
    again = _page(path, True)
    assert again == _page(path, False) and not any(line in text for text in again["texts"])
