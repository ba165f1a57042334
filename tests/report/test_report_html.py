"""`donegate report --html`: the page from ledgers written by the real hook and by hand, checked as text
(no hidden-test source, sizes, escaping) and in headless Chromium from disk with the network blocked
(the counts, the marks, a feedback text opened by a click, the filters, no request leaving the page)."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repos import KIT, stop_lines, make_repo, run_hook, stop_payload, write_config
from donegate import cli, report
from donegate.ledger import chain as ledger
from donegate.report import html as report_html
from donegate.report import experiment_page
from donegate.experiment import table
from tests.support import require
from tests.support.pool import SharedRuns, shared_root

sys.path.insert(0, str(KIT / "bench"))
sys.path.insert(0, str(KIT / "examples"))
import report_html_bench  # noqa: E402

T = "2026-12-01T10:{:02d}:00.000+00:00"
NEUTRAL = report_html.NEUTRAL


def stop(session: str, verdict: str, n: int, *, config: str = "tests", minute: int = 0, passed: int = 3, total: int = 5,
         shown: str | None = None, day: str = "2026-12-01", appeal: dict | None = None, tamper: dict | None = None,
         **top) -> dict:
    """A stop record in the gate's key order; `shown` is the line's `feedback`."""
    failing = [{"id": f"test_a.py::test_{k}", "message": f"assert {k} == {k + 1}"} for k in range(total - passed)]
    gates = {"integrity": {"ok": True, "tests": total},
             "scope": {"ok": True, "protected": [], "outside": [], "problems": [], "duration": 0.01},
             "acceptance": {"ok": passed == total, "total": total, "passed": passed, "failed": total - passed,
                            "failing": failing, "problem": "", "duration": 1.25}}
    if appeal:
        gates["appeal"] = appeal
    if tamper:  # the confined run's finding (gates.acceptance.tamper)
        gates["acceptance"]["tamper"] = tamper
    if verdict == "gave_up":
        gates["breaker"] = {"gave_up": "6 blocks in this session (max_blocks)", "was": "block"}
    rec = {"event": "stop", "time": T.format(minute).replace("2026-12-01", day), "repo": "/r/shop", "session": session,
           "stop": n, "stop_hook_active": n > 1, "verdict": verdict, "gates": gates}
    if shown is not None:
        rec["feedback"] = shown
    rec.update(blocks=0, duration=1.5, kit_version="0.1.0", config=config, **top)
    return rec


def known_ledger(path: Path) -> Path:
    """Five sessions: two configurations, verdicts known and new, a cached stop, a label."""
    recs = [
        stop("aaaa-passes", "block", 1, minute=1, shown="A fails: assert 4300 == 3870"),
        stop("aaaa-passes", "pass", 2, minute=2, passed=5),
        stop("bbbb-gives-up", "block", 1, minute=3, shown="B fails: assert 1 == 2", config="strict"),
        stop("bbbb-gives-up", "gave_up", 2, minute=4, config="strict"),
        stop("cccc-new-verdicts", "appealed", 1, minute=5, shown="appeal text", day="2026-12-02",
             appeal={"accepted": True, "reason": "the test wants cents rounded up", "failing": ["test_a.py::test_0"]}),
        stop("cccc-new-verdicts", "tamper", 2, minute=6, day="2026-12-02",
             tamper={"what": "the code under test replaced pytest's reporter", "changed": ["_pytest.runner"]}),
        stop("cccc-new-verdicts", "frobnicated", 3, minute=7, day="2026-12-02"),
        stop("dddd-cached", "pass", 1, minute=8, passed=5, cached=True, day="2026-12-02"),
        stop("eeee-blocked", "block", 1, minute=9, shown="E fails: assert 'x' == 'y'", config="strict", day="2026-12-03"),
    ]
    for rec in recs:
        ledger.append(rec, path)
    ref = next(ledger.stop_ref(line) for _, line in ledger.read(path) if b"B fails" in line)
    report.label_stop(path, ref, "unjustified", "the writer's mistake")
    return path


def page(tmp_path: Path, *ledgers: Path, extra: tuple = ()) -> Path:
    out = tmp_path / "report.html"
    assert cli.main(["report", *map(str, ledgers), "--html", str(out), *extra]) == 0
    return out


def page_json(path: Path) -> dict:
    text = path.read_text()
    return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))


# -- no hidden-test source, whatever the ledger holds ---------------------------------------------


SECRET = "secret_expected_total_for_ten_units = 3870"
HIDDEN = ("import mod, pathlib\n\n\ndef test_value():\n"
          f"    {SECRET}\n"
          "    here_is_the_store = pathlib.Path(__file__).parent\n"
          f"    assert mod.VALUE == 2, '\\n{SECRET}\\n' + str(here_is_the_store)\n")


def _once(tmp_path_factory, name: str, build) -> Path:
    """`build(root)` (a fresh folder) run once for the whole test run, by whichever xdist worker asks first, in a
    folder every worker reads (tests/support/pool.py): its tests only read what it made (a page's kept summary,
    written whole under the state root by whichever test reads first, is the same for every reader)."""
    return SharedRuns(shared_root(tmp_path_factory, f"report-html-{name}"), [name], lambda key, base: build(base),
                      threads=0)[name]


@contextlib.contextmanager
def _sealed_mod(root: Path, repo_name: str, hidden: str, *seal_args: str):
    """A state root of its own (`root`), `mod.py` in the repository `repo_name` sealed with HIDDEN (in the folder
    `hidden` beside it): (root, home, repo, the hidden test), DONEGATE_HOME the root's home within the block."""
    home = root / "home"
    home.mkdir()
    write_config(home, "")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DONEGATE_HOME", str(home))
        repo = make_repo(root / repo_name, {"mod.py": "VALUE = 1\n"})
        test = root / hidden / "test_mod.py"
        test.parent.mkdir()
        test.write_text(HIDDEN)
        res = subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(test), *seal_args],
                             capture_output=True, text=True, timeout=120, cwd=KIT)
        assert res.returncode == 0, res.stderr
        yield root, home, repo, test


@pytest.fixture(scope="module")
def _gated(tmp_path_factory) -> Path:
    """A repository sealed with a hidden test whose failure message repeats its own source and store path;
    two real stops (a block, then a pass), plus one whose transcript leaks the source. Once per run (`_once`; it was
    once per module and worker), in a state root of its own: the tests only read its ledger and stores (a seal and
    three stops, ~1.6 CPU-s)."""
    def build(base: Path) -> Path:
        with _sealed_mod(base, "repo", "hidden") as (root, home, repo, test):
            test.unlink()
            transcript = root / "transcript.jsonl"
            transcript.write_text(json.dumps({"type": "user", "message": {"content": HIDDEN}}) + "\n")
            assert run_hook(stop_payload(repo, session="s-leaks", transcript_path=str(transcript))).returncode == 2
            assert run_hook(stop_payload(repo, session="s-fixes", message="All done.")).returncode == 2
            (repo / "mod.py").write_text("VALUE = 2\n")
            assert run_hook(stop_payload(repo, session="s-fixes")).returncode == 0
        return home / "ledger.jsonl"

    return _once(tmp_path_factory, "gated", build)


@pytest.fixture
def gated(_gated, monkeypatch) -> Path:
    """`_gated`'s ledger, with its state root as the test's (`gated.parent`): the page scrubs against its stores."""
    monkeypatch.setenv("DONEGATE_HOME", str(_gated.parent))
    return _gated


def source_lines() -> list[str]:
    return [line.strip() for line in HIDDEN.splitlines() if len(line.strip()) > 12]


@pytest.mark.parametrize("where", ["with its stores", "elsewhere"])
def test_the_page_shows_what_the_agent_saw_and_no_hidden_source(gated, tmp_path, monkeypatch, where):
    raw = gated.read_text()
    assert SECRET in raw and str(gated.parent / "acceptance") in raw  # the attack: the ledger's gates hold both
    assert "<th>appeals" not in page(tmp_path, gated).read_text()  # no appeal, no column
    if where == "elsewhere":  # no store to scrub against: the gate's own feedback must be clean by itself
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.setenv("DONEGATE_HOME", str(tmp_path / "elsewhere"))
    text = page(tmp_path, gated).read_text()
    for line in source_lines():
        assert line not in text, f"hidden test source in the page: {line!r}"
    assert str(gated.parent) not in text and "/acceptance/" not in text
    data = page_json(tmp_path / "report.html")
    shown = [t for t in data["texts"] if "test_mod.py::test_value" in t]
    blocks = [r["feedback"] for r in stop_lines(gated.parent) if r["verdict"] == "block"]
    assert shown and set(shown) == set(blocks)  # the page's text is the gate's feedback, as the agent read it
    assert "assert 1 == 2" in shown[0]  # (the message's path line is dropped: only assertion and where lines are kept)


def test_a_line_without_feedback_shows_test_ids_never_raw_messages(gated, tmp_path, monkeypatch):
    # A ledger written before `feedback` existed: its raw messages hold the source; the page must not,
    # even read where no store is at hand to scrub against (a ledger mailed to someone else).
    old = tmp_path / "old.jsonl"
    for rec in stop_lines(gated.parent):
        rec.pop("v"), rec.pop("prev"), rec.pop("feedback", None)
        ledger.append(rec, old)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("DONEGATE_HOME", str(tmp_path / "elsewhere"))
    text = page(tmp_path, old).read_text()
    assert SECRET in old.read_text()
    for line in source_lines():
        assert line not in text
    assert str(gated.parent) not in text
    assert "test_mod.py::test_value" in text and "predates the ledger" in text


def test_the_store_scrubber_catches_source_a_feedback_text_would_carry(gated, tmp_path):
    # Defence in depth: even a `feedback` holding a source line (a gate bug) loses it in the page.
    bad = tmp_path / "bad.jsonl"
    for rec in stop_lines(gated.parent):
        rec.pop("v"), rec.pop("prev")
        if "feedback" in rec:
            rec["feedback"] += f"\n{SECRET}\n{gated.parent / 'acceptance'}"
        ledger.append(rec, bad)
    text = page(tmp_path, bad).read_text()
    assert SECRET not in text and str(gated.parent) not in text


def test_ledger_text_cannot_become_markup(tmp_path):
    led = tmp_path / "ledger.jsonl"
    evil = '<img src="http://evil.invalid/x" onerror="alert(1)"></script><script>alert(2)</script>'
    ledger.append(stop("x-1", "block", 1, config=evil, shown=evil), led)
    text = page(tmp_path, led).read_text()
    assert "<img" not in text and "<script>alert" not in text
    assert page_json(tmp_path / "report.html")["configs"] == [evil]


# -- numbers and shape ----------------------------------------------------------------------------


def test_the_page_holds_the_reports_own_summary(tmp_path):
    led = known_ledger(tmp_path / "ledger.jsonl")
    text = page(tmp_path, led).read_text()
    summary = report.summarize([led])
    assert summary["total"]["appeals"] == 1 and "<th>appeals <small>" in text  # the column shows where there were appeals
    for g in summary["groups"]:
        row = re.search(rf'<tr class="cfg" data-config="{g["config"]}">(.*?)</tr>', text, re.S).group(1)
        assert f'{g["ended_passing"]}/{g["sessions"]}' in row
        assert f'{g["requirements_passed"]}/{g["requirements_sealed"]}' in row
    data = page_json(tmp_path / "report.html")
    # left for a person first (a block, a verdict the report does not know, a give-up), each part latest first
    assert [r[0] for r in data["rows"]] == ["eeee-blocked", "cccc-new-verdicts", "bbbb-gives-up", "dddd-cached", "aaaa-passes"]
    by = {r[0]: r for r in data["rows"]}
    assert [by[s][6] for s in ("eeee-blocked", "bbbb-gives-up", "aaaa-passes")] == [1, 2, 0]  # left, gave up, done
    code = {v: report_html.CODES[i] for i, v in enumerate(data["verdicts"])}
    assert by["bbbb-gives-up"][5] == code["block"] + report_html.UNJUSTIFIED + code["gave_up"]
    assert by["cccc-new-verdicts"][5] == code["appealed"] + code["tamper"] + code["frobnicated"]
    assert by["dddd-cached"][5].endswith("*")
    colour = dict(zip(data["verdicts"], data["colours"], strict=True))
    assert colour["frobnicated"] == NEUTRAL and colour["tamper"] != NEUTRAL and colour["appealed"] != NEUTRAL


def test_labels_of_other_kinds_are_flagged_too(tmp_path):
    # An appeal is labelled upheld (the test was wrong) or rejected (the agent was): the appeal engineer's labels.
    led = known_ledger(tmp_path / "ledger.jsonl")
    ref = next(ledger.stop_ref(line) for _, line in ledger.read(led) if b"appeal text" in line)
    ledger.append({"event": "label", "time": T.format(30), "ref": ref, "label": "upheld", "note": "the test was wrong",
                   "session": "cccc-new-verdicts", "stop": 1, "stop_time": T.format(5), "repo": "/r/shop",
                   "config": "tests", "verdict": "appealed"}, led)
    page(tmp_path, led)
    data = page_json(tmp_path / "report.html")
    row = next(r for r in data["rows"] if r[0] == "cccc-new-verdicts")
    assert row[5].startswith(report_html.CODES[data["verdicts"].index("appealed")] + report_html.UNJUSTIFIED)
    assert data["details"][row[9]][0]["lb"] == "upheld" and data["details"][row[9]][0]["ln"] == "the test was wrong"


@pytest.mark.parametrize("k, n, shown", [(0, 5, "0%"), (5, 5, "100%"), (3, 4, "75%"), (1536618, 1539700, "99.8%"),
                                         (1539699, 1539700, "99.9%"), (1, 3000, "0.1%"), (2, 3, "67%")])
def test_a_rate_never_rounds_to_0_or_100_percent_unless_it_is(k, n, shown):
    assert report_html.pct(k, n) == shown


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, Path]:
    """A generated ledger of 100,000 stops (the bench's) and its page, made once for the whole run
    (whichever xdist worker asks first: tests/support/pool.py)."""

    def make(key: str, tmp: Path) -> tuple[Path, Path]:
        led = tmp / "ledger.jsonl"
        assert report_html_bench.generate(led, stops=100_000) == 100_000
        (tmp / "donegate-home").mkdir()
        with pytest.MonkeyPatch.context() as mp:  # module scope: before the per-test home is set
            mp.setenv("DONEGATE_HOME", str(tmp / "donegate-home"))
            return led, page(tmp, led)

    return SharedRuns(shared_root(tmp_path_factory, "report-of-100000-stops"), ["big"], make, threads=0)["big"]


def test_the_page_of_100000_stops_stays_under_5_mb(big):
    led, out = big
    assert out.stat().st_size < 5_000_000
    data = page_json(out)
    # `big` counted the stops it wrote (report_html_bench.generate: 100,000): the page's count is checked against that,
    # not against a second cold read of the ledger here (report.summarize, ~1.2 CPU-s); the page against the report's
    # own summary is test_the_page_holds_the_reports_own_summary's.
    assert data["stops"] == 100_000
    assert data["rows"][0][6] and len(data["details"]) > 100  # left for a person first; details kept for the first


def test_bad_targets_and_options_say_what_to_do(tmp_path, capsys):
    led = known_ledger(tmp_path / "ledger.jsonl")
    assert cli.main(["report", str(led), "--html", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err
    assert cli.main(["report", str(led), "--html", str(tmp_path / "no" / "x.html")]) == 1
    assert "no folder" in capsys.readouterr().err
    assert cli.main(["report", str(led), "--html", str(tmp_path / "x.html"), "--json"]) == 1
    assert "drop --session" in capsys.readouterr().err
    assert cli.main(["report", str(led), "--experiment", "x"]) == 0  # without --html: the (empty) terminal table
    assert "No runs of experiment x" in "".join(capsys.readouterr())
    assert cli.main(["report", str(led), "--experiment", "nope", "--html", str(tmp_path / "e.html")]) == 1
    assert "no run of experiment 'nope'" in capsys.readouterr().err


# -- the experiment view --------------------------------------------------------------------------


def run_line(task: str, config: str, rep: int, met: int, cost: float = 0.1, duration: float = 60, blocks: int = 0, **more) -> dict:
    """A `run` line as the harness writes it (every field), `more` on top."""
    rec = {"event": "run", "time": T.format(rep), "experiment": "e1", "task": task, "config": config, "rep": rep,
           "met": met, "of": 5, "requirements": {f"g.py::t{i}": i < met for i in range(5)},
           "cost": {"agent": cost, "writer": 0.0, "reviewer": 0.0, "total": cost}, "turns": 4, "duration": duration,
           "stops": blocks + 1, "blocks": blocks, "gave_up": False, "appeals": 0, "result": "done",
           "key": f"e1/{task}/{config}/{rep}", "spec": "f", "session": f"s-{task}-{config}-{rep}", "subtype": "success",
           "last_verdict": "pass", "refusals": 0, "appeal_refs": [], "acceptance_failing": [], "grading_problem": None,
           "blocked_by": [{"ref": f"{task}{config}{k}", "stop": k + 1, "verdict": "block", "tests": ["acc.py::t"], "review": False}
                          for k in range(blocks)]}
    rec.update(more)
    return rec


def experiment_ledger(path: Path) -> Path:
    no_met, text_met = run_line("t2", "tests", 2, 0), run_line("t3", "none", 1, 5)
    del no_met["met"]
    text_met["met"] = "5"
    for rec in [
        run_line("t1", "none", 1, 3, cost=0.1, duration=60, result="All done: every test passes."),
        run_line("t1", "none", 2, 2, cost=0.3, duration=80),
        run_line("t1", "none", 2, 0, cost=9.9, duration=999),  # a duplicate: the first counts
        run_line("t2", "none", 1, 1, cost=0.2, duration=100, subtype="timeout"),
        run_line("t1", "tests", 1, 5, cost=0.5, appeals=1, appeal_refs=["t1appeal"]),  # appealed, then passed
        run_line("t2", "tests", 1, 4, cost=0.7, gave_up=True, blocks=6, last_verdict="gave_up"),
        no_met,  # damaged: no score
        text_met,  # damaged: met is text
        run_line("t3", "tests", 1, 2, last_verdict="block", blocks=2),
        run_line("t1", "none", 1, 0, experiment="other"),
    ]:
        ledger.append(rec, path)
    return path


def test_the_experiment_page_shows_the_tables_numbers(tmp_path):
    led = experiment_ledger(tmp_path / "l.jsonl")
    s = table.summarize([led], "e1")
    none, tests = s["configurations"]
    assert (none["config"], none["runs"], none["met"], none["of"], none["runs_for_person"]) == ("none", 3, 6, 15, 1)
    assert none["cost_per_run"] == pytest.approx(0.2) and none["seconds_per_run"] == pytest.approx(80)
    # an appeal hands a run to a person (the table's rule, now the page's too); the run with no score is skipped
    assert (tests["runs"], tests["met"], tests["of"], tests["runs_for_person"], tests["blocks"]) == (3, 11, 15, 3, 8)
    assert s["matrix"]["t2"]["tests"] == {"met": 4, "of": 5, "runs": 1} and s["matrix"]["t1"]["none"]["runs"] == 2
    assert s["matrix"]["t3"]["none"] is None and s["duplicates"] == ["e1/t1/none/2"]
    assert [e["why"] for e in s["skipped"]["examples"]] == ["missing met", "met is not a whole number"]
    assert sorted((p["config"], p["cost"], p["met"]) for p in s["points"])[:2] == [("none", 0.1, 3), ("none", 0.2, 1)]
    text = experiment_page.render(s)
    for r in s["configurations"]:
        row = re.search(rf'<tr data-config="{r["config"]}">(.*?)</tr>', text, re.S).group(1)
        cells = re.findall(r'<td class="n[^"]*">(.*?)</td>', row)
        assert cells[0] == str(r["runs"]) and cells[1] == f'{r["met"]} of {r["of"]}' and cells[-1] == str(r["runs_for_person"])
        assert cells[-2] == str(r["blocks"]) and f'{r["met"]}/{r["of"]}' in row
    assert text.count('<circle class="run"') == len(s["points"]) == 6
    assert "2 run lines skipped (line 7 missing met, line 8 met is not a whole number;" in text
    assert "1 run(s) recorded more than once, counted once: e1/t1/none/2" in text
    for note in table.comparison_notes(s):
        assert note[1:] in text  # the table's comparisons, word for word


def test_the_experiment_page_says_generated_or_scripted_data_and_mixed_versions_at_the_top(tmp_path):
    what = {"agent_model": "m", "claude_version": "2.1.197", "kit_version": "0.1.0", "spec_hash": "aaaaaaaaaaaa"}
    gen = tmp_path / "g.jsonl"
    for rec in (run_line("t1", "none", 1, 3, source="generated", **what), run_line("t1", "retry", 1, 4, source="generated", **what)):
        ledger.append(rec, gen)
    page = experiment_page.render(table.summarize([gen], "e1"))
    top = page[: page.index("</header>")]
    assert 'id="source">These runs are GENERATED data' in top and "of generated data (no session ran, no money spent)" in top
    assert "Ran with agent model m, Claude Code 2.1.197" in top
    mixed = tmp_path / "m.jsonl"
    for rec in (run_line("t1", "none", 1, 3, source="scripted", **what),
                run_line("t1", "retry", 1, 4, source="scripted", **dict(what, claude_version="2.1.332"))):
        ledger.append(rec, mixed)
    page = experiment_page.render(table.summarize([mixed], "e1"))
    assert "Scripted runs: the models are a scripted stand-in" in page[: page.index("</header>")]
    assert "WARNING: the runs were mixed: 2 combinations" in page and "retry<small> (B)</small>" in page
    assert "Ran with" not in page


# -- in the browser -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    from tests.support.browser import Chromium

    with Chromium(require.browser()) as b:
        yield b


def test_the_browser_writes_nothing_into_the_home(tmp_path, monkeypatch):
    """Chromium keeps its crash database under $HOME/.config/chromium whatever `--user-data-dir` says: the tests'
    browser ran with the person's real home and left `Crash Reports` there. Its home is its profile's now."""
    from tests.support.browser import Chromium

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    with Chromium(require.browser()) as b:
        assert b.js("1 + 1") == 2
    assert list(home.rglob("*")) == []


def outside(b) -> list[str]:
    return [u for u in b.requests() if not u.startswith(("file://", "data:"))]


def rows(b) -> list[str]:
    return b.js("[...document.querySelectorAll('#rows tr[data-session]')].map(t => t.dataset.session)")


def test_the_browser_shows_the_known_ledger_opens_feedback_and_filters(browser, tmp_path):
    b = browser
    led = known_ledger(tmp_path / "ledger.jsonl")
    ledger.append(stop("ffff-xss", "block", 1, config='<img src="http://evil.invalid/x">', shown="<b>not bold</b>"), led)
    b.open(page(tmp_path, led))
    b.wait_for("window.donegateReady")
    assert b.js("document.getElementById('count').textContent") == "6 of 6 sessions listed, 10 stops"
    assert rows(b)[:3] == ["ffff-xss", "eeee-blocked", "cccc-new-verdicts"]
    marks = b.js("[...document.querySelectorAll('tr[data-session=\"cccc-new-verdicts\"] .mark')].map(m => m.dataset.verdict)")
    assert marks == ["appealed", "tamper", "frobnicated"]
    assert b.js("getComputedStyle(document.querySelector('.mark[data-verdict=\"frobnicated\"]')).backgroundColor") == "rgb(124, 133, 145)"
    assert "frobnicated" in b.js("document.getElementById('legend').textContent")
    assert b.js("document.querySelector('tr[data-session=\"dddd-cached\"] .mark').classList.contains('cached')")
    assert b.js("document.querySelector('tr[data-session=\"bbbb-gives-up\"] .mark').classList.contains('lab-u')")
    # a real click on a mark opens what the agent was shown
    b.click('tr[data-session="bbbb-gives-up"] .mark[data-verdict="block"]')
    assert b.wait_for("document.getElementById('feedback') && document.getElementById('feedback').textContent") == "B fails: assert 1 == 2"
    assert "labelled unjustified: the writer's mistake" in b.js("document.getElementById('detail').textContent")
    b.click('tr[data-session="cccc-new-verdicts"] .mark[data-verdict="appealed"]')
    assert b.js("document.getElementById('appeal').textContent") == (
        "the agent's appeal, accepted (against test_a.py::test_0): the test wants cents rounded up")
    b.click('tr[data-session="cccc-new-verdicts"] .mark[data-verdict="tamper"]')
    assert b.js("document.getElementById('tamper').textContent") == (
        "tamper: the code under test replaced pytest's reporter (changed: _pytest.runner)")
    b.click('tr[data-session="ffff-xss"] .mark')
    assert b.js("document.getElementById('feedback').textContent") == "<b>not bold</b>"
    assert b.js("document.querySelectorAll('#rows img, #detail b').length") == 0
    # filters: configuration, verdict, date, labels, left for a person
    b.js("(() => { const s = document.getElementById('f-config'); s.value = String([...s.options].findIndex(o => o.text === 'strict') - 1);"
         " s.dispatchEvent(new Event('change')); })()")
    assert sorted(rows(b)) == ["bbbb-gives-up", "eeee-blocked"]
    assert b.js("[...document.querySelectorAll('#summary tr.cfg')].filter(t => !t.hidden).map(t => t.dataset.config)") == ["strict"]
    b.js("(() => { const s = document.getElementById('f-config'); s.value = ''; s.dispatchEvent(new Event('change')); })()")
    b.click('.chip[data-verdict="pass"]')
    assert sorted(rows(b)) == ["aaaa-passes", "dddd-cached"]
    b.click('.chip[data-verdict="pass"]')
    b.js("(() => { const f = document.getElementById('f-from'); f.value = '2026-12-02'; f.dispatchEvent(new Event('change'));"
         " const t = document.getElementById('f-to'); t.value = '2026-12-02'; t.dispatchEvent(new Event('change')); })()")
    assert sorted(rows(b)) == ["cccc-new-verdicts", "dddd-cached"]
    b.js("(() => { for (const id of ['f-from', 'f-to']) { const f = document.getElementById(id); f.value = '';"
         " f.dispatchEvent(new Event('change')); } const l = document.getElementById('f-label'); l.value = 'u';"
         " l.dispatchEvent(new Event('change')); })()")
    assert rows(b) == ["bbbb-gives-up"]
    b.js("(() => { const l = document.getElementById('f-label'); l.value = ''; l.dispatchEvent(new Event('change')); })()")
    b.click("#f-left")
    assert sorted(rows(b)) == ["bbbb-gives-up", "cccc-new-verdicts", "eeee-blocked", "ffff-xss"]
    assert b.js("performance.getEntriesByType('resource').length") == 0
    assert outside(b) == []


def test_a_page_that_asks_the_network_is_caught(browser, tmp_path):
    # The check itself: a page with an image from elsewhere shows up in the requests.
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><img src="http://example.invalid/x.png"><script>fetch("https://cdn.invalid/a.js").catch(() => 0)</script>')
    browser.open(bad)
    browser.wait_for("performance.getEntriesByType('resource').length >= 1")
    assert any("invalid" in u for u in outside(browser))
    assert "csp" not in browser.blocked().values()  # no policy here: only the blocked network stopped it


def test_the_browser_renders_100000_stops_one_page_at_a_time(browser, big):
    _, out = big
    browser.open(out)
    ready = browser.wait_for("window.donegateReady", timeout=60)
    print(f"\n100,000 stops: {out.stat().st_size / 1e6:.2f} MB, interactive after {ready:.0f} ms")
    data = page_json(out)
    assert len(rows(browser)) == 100
    browser.click("#more")
    assert len(rows(browser)) == 200
    assert browser.js("document.querySelectorAll('#rows tr[data-session] .badge').length") >= 1
    assert browser.js("document.getElementById('count').textContent").startswith(f"{len(data['rows']):,} of {len(data['rows']):,} sessions")
    browser.click("#rows tr[data-session] .mark")
    assert browser.wait_for("document.getElementById('feedback') && document.getElementById('feedback').textContent")
    assert outside(browser) == []


def test_the_browser_shows_the_experiment(browser, tmp_path):
    led = experiment_ledger(tmp_path / "l.jsonl")
    out = tmp_path / "e.html"
    assert cli.main(["report", str(led), "--experiment", "e1", "--html", str(out)]) == 0
    browser.open(out)
    shown = browser.js("[...document.querySelectorAll('#experiment tbody tr')].map(t => [...t.children].map(c => c.textContent))")
    assert [r[0] for r in shown] == ["none", "tests"]
    assert shown[0][2] == "6 of 15" and shown[1][2] == "11 of 15" and shown[1][-1] == "3"  # the appealed run: 3
    cells = browser.js("[...document.querySelectorAll('#heat td.cell')].map(c => [c.dataset.task, c.dataset.config, c.querySelector('small').textContent])")
    assert cells == [["t1", "none", "5/10"], ["t1", "tests", "5/5"], ["t2", "none", "1/5"], ["t2", "tests", "4/5"],
                     ["t3", "none", "0/0"], ["t3", "tests", "2/5"]]
    assert browser.js("document.getElementById('apart').textContent").startswith("Requirements met")
    assert "2 run lines skipped" in browser.js("document.body.textContent")
    assert "All done" not in browser.js("document.body.textContent")  # the agent's words are not the page's
    assert browser.js("document.querySelectorAll('#scatter g.cfgpt').length") == 2
    assert outside(browser) == []


def test_the_browser_shows_a_real_gates_feedback_and_no_source(browser, gated, tmp_path):
    browser.open(page(tmp_path, gated))
    browser.wait_for("window.donegateReady")
    assert browser.js("document.querySelector('tr[data-session=\"s-leaks\"] .mark').classList.contains('leak')")
    browser.click('tr[data-session="s-fixes"] .mark[data-verdict="block"]')
    shown = browser.wait_for("document.getElementById('feedback') && document.getElementById('feedback').textContent")
    assert shown == next(r["feedback"] for r in stop_lines(gated.parent) if r["session"] == "s-fixes")
    browser.click('tr[data-session="s-leaks"] .mark')
    assert "source line(s)" in browser.js("document.getElementById('detail').textContent")
    everything = browser.js("document.documentElement.outerHTML")
    for line in source_lines():
        assert line not in everything
    assert outside(browser) == []


def test_the_pages_own_policy_stops_a_request_even_from_injected_markup(browser, tmp_path):
    # Defence in depth behind the escaping: were markup ever to get into the page, its
    # Content-Security-Policy still lets nothing out (the unprotected page above does ask).
    led = known_ledger(tmp_path / "ledger.jsonl")
    out = page(tmp_path, led)
    text = out.read_text().replace("<footer>", '<img src="http://example.invalid/x.png"><footer>', 1)
    out.write_text(text)
    browser.open(out)
    browser.wait_for("window.donegateReady")
    assert browser.js("document.images.length") == 1
    # DevTools names the attempt, and that Chromium refused it for the page's policy: nothing was sent
    assert outside(browser) == ["http://example.invalid/x.png"]
    assert browser.blocked() == {"http://example.invalid/x.png": "csp"}


@pytest.fixture(scope="module")
def _claimed(tmp_path_factory) -> Path:
    """A repository sealed with its request; one stop whose agent's last message repeats a hidden line and a store path.
    Once per run, in a state root of its own (`_gated`)."""
    def build(base: Path) -> Path:
        with _sealed_mod(base, "claims", "hidden2", "--request", "VALUE must be 2") as (_, home, repo, _t):
            store = next((home / "acceptance").iterdir())
            said = f"All done: VALUE is 2 now.\n{SECRET}\nI read it in {store}/test_mod.py"
            assert run_hook(stop_payload(repo, session="s-claims", message=said)).returncode == 2
        return home / "ledger.jsonl"

    return _once(tmp_path_factory, "claimed", build)


@pytest.fixture
def claimed(_claimed, monkeypatch) -> Path:
    """`_claimed`'s ledger, with its state root as the test's (`claimed.parent`)."""
    monkeypatch.setenv("DONEGATE_HOME", str(_claimed.parent))
    return _claimed


def test_the_page_shows_the_sealed_request_and_the_agents_last_message_scrubbed(claimed, tmp_path):
    # Before: neither was on the page (the stop line did not keep the message; the request was only in the store).
    assert SECRET in stop_lines(claimed.parent)[-1]["said"]  # the ledger keeps it, for the person
    data = page_json(page(tmp_path, claimed))
    assert data["requests"] == ["VALUE must be 2"] and len(data["repos"]) == 1  # (the repository beside the store: redacted)
    (stops,) = data["details"]
    said = stops[0]["sa"]
    assert said.startswith("All done: VALUE is 2 now.") and SECRET not in said and str(claimed.parent) not in said
    text = (tmp_path / "report.html").read_text()
    assert SECRET not in text and str(claimed.parent / "acceptance") not in text


def test_the_browser_shows_the_request_and_what_the_agent_said(browser, claimed, tmp_path):
    b = browser
    b.open(page(tmp_path, claimed))
    b.wait_for("window.donegateReady")
    b.click('tr[data-session="s-claims"] .mark')
    assert b.wait_for("document.getElementById('said') && document.getElementById('said').textContent").startswith("All done: VALUE is 2 now.")
    assert "request (sealed)VALUE must be 2" in b.js("document.getElementById('detail').textContent")
