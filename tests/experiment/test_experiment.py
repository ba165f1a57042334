"""The experiment harness without a model: the spec, the plan and its shards, key locks, the report's
table from ledger lines. The runs themselves are end-to-end tests (tests/e2e/test_experiment_e2e.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.repos import KIT
from donegate import cli
from donegate.ledger import chain as ledger
from donegate.errors import ConfigError
from donegate.experiment import harness, spec, table

SHOP = KIT / "examples" / "experiment" / "shop.yaml"
TINYDB = KIT / "examples" / "experiment" / "tinydb.yaml"


def write_spec(tmp_path: Path, data: dict) -> Path:
    (tmp_path / "grading").mkdir(exist_ok=True)
    (tmp_path / "grading" / "test_g.py").write_text("def test_g():\n    pass\n")
    (tmp_path / "repo").mkdir(exist_ok=True)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def base(**more) -> dict:
    data = {"experiment": "x", "configurations": ["none", "tests"],
            "tasks": [{"name": "t", "repo": "repo", "request": "do it", "grading": "grading"}]}
    data.update(more)
    return data


def error_of(tmp_path: Path, data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        spec.load(write_spec(tmp_path, data))
    return info.value.message


# -- the spec ----------------------------------------------------------------------------------------


def test_the_bundled_specs_validate():
    shop = spec.load(SHOP)
    assert (shop.name, len(harness.plan(shop))) == ("shop", 36)
    tiny = spec.load(TINYDB)
    assert [t["name"] for t in tiny.tasks] == ["push_pull", "between", "rename_table", "sorted_search", "write_cache"]
    assert all(t["repo"]["pypi"] == "tinydb==4.9.0" for t in tiny.tasks)
    assert [c["name"] for c in tiny.configurations] == spec.ORDER and len(harness.plan(tiny)) == 60
    for t in tiny.tasks:  # five grading tests a task
        assert len(list((tiny.resolve(t["grading"])).glob("test_*.py"))) == 1
        assert (tiny.resolve(t["grading"]) / next(iter(tiny.resolve(t["grading"]).glob("test_*.py"))).name).read_text().count("\ndef test_") == 5


@pytest.mark.parametrize("change, path", [
    (lambda d: d.update(colour="red"), "spec key colour: unknown key"),
    (lambda d: d.update(repetitions="2"), "spec key repetitions: expected integer, got str '2'"),
    (lambda d: d["tasks"][0].update(grading=3), "spec key tasks[0].grading: expected string, got int 3"),
    (lambda d: d["tasks"].append({"name": "u", "repo": "repo", "request": "r"}), "spec key tasks[1].grading: missing"),
    (lambda d: d["tasks"][0].update(repo={"git": "https://example.invalid/r.git"}), "spec key tasks[0].repo.commit: missing"),
    (lambda d: d["tasks"][0].update(repo={"pypi": "tinydb"}), "spec key tasks[0].repo.pypi: 'tinydb' is not name==version"),
    (lambda d: d["tasks"][0].update(acceptance="grading"), "spec key tasks[0].acceptance: the same folder as grading"),
    (lambda d: d.update(configurations=["none", "bogus"]), "spec key configurations[1]: 'bogus' is not a predefined configuration"),
    (lambda d: d.update(configurations=[{"name": "strict", "keys": {"max_blocks": "3"}}]),
     "spec key configurations[0].keys.max_blocks: expected integer, got str '3'"),
    (lambda d: d.update(configurations=[{"name": "s", "keys": {"writer": {"attempt": 2}}}]),
     "spec key configurations[0].keys.writer.attempt: unknown key"),
    (lambda d: d.update(configurations=[{"name": "s", "gate": "maybe"}]), "spec key configurations[0].gate: 'maybe' is not one of on, off"),
    (lambda d: d.update(limits={"turns": 0}), "spec key limits.turns: 0 is below the minimum 1"),
    (lambda d: d.update(configurations=["tests", "tests"]), "spec key configurations[1].name: 'tests' is used twice"),
    (lambda d: d.pop("tasks"), "spec key tasks: missing"),
    (lambda d: d.update(keys={"confine": "maybe"}), "spec key keys.confine: 'maybe' is not one of"),
    (lambda d: d.update(keys={"config": "x"}), "spec key keys.config: set by the harness"),
])
def test_a_spec_error_names_the_key_path(tmp_path, change, path):
    data = base()
    change(data)
    message = error_of(tmp_path, data)
    assert path in message, message
    assert message.startswith(str(tmp_path / "spec.yaml"))


def test_a_spec_error_is_one_line_from_the_command(tmp_path, capsys):
    data = base()
    data["tasks"][0]["grading"] = 3
    code = cli.main(["experiment", "check", str(write_spec(tmp_path, data))])
    err = capsys.readouterr().err
    assert code == 1 and "spec key tasks[0].grading: expected string, got int 3" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2


def test_predefined_and_custom_configurations(tmp_path):
    data = base(configurations=["reviewers", {"name": "strict", "keys": {"max_blocks": 2}}, {"name": "bare", "gate": "off"}])
    s = spec.load(write_spec(tmp_path, data))
    rev, strict, bare = s.configurations
    assert (rev["gate"], rev["tests"], rev["keys"]["review"]) == ("on", False, "block")
    assert (strict["gate"], strict["tests"], strict["keys"]) == ("on", True, {"max_blocks": 2})
    assert (bare["gate"], bare["tests"]) == ("off", False)
    assert s.fingerprint(s.tasks[0], strict) != s.fingerprint(s.tasks[0], bare)


def test_the_spec_s_keys_go_to_every_configuration_and_its_confine_to_the_grading(tmp_path):
    """A machine without bubblewrap: `keys: {confine: off}` once, not in every configuration."""
    data = base(configurations=["tests", {"name": "walled", "keys": {"confine": "on", "max_blocks": 2}}],
                keys={"confine": "off", "timeout": 30})
    s = spec.load(write_spec(tmp_path, data))
    tests, walled = s.configurations
    assert tests["keys"] == {"confine": "off", "timeout": 30, "review": "off"}
    assert walled["keys"] == {"confine": "on", "timeout": 30, "max_blocks": 2}  # its own keys win
    assert s.confine == "off" and spec.load(write_spec(tmp_path, base())).confine == "auto"


# -- plan, shards, locks ------------------------------------------------------------------------------


def test_shards_split_the_plan_into_disjoint_parts_that_make_it_whole():
    s = spec.load(SHOP)
    whole = [r.key for r in harness.plan(s)]
    for n in (1, 2, 3, 7):
        parts = [[r.key for r in harness.plan(s, (k, n))] for k in range(1, n + 1)]
        assert sorted(sum(parts, [])) == sorted(whole) and len(set(sum(parts, []))) == len(whole)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert [r.key for r in harness.plan(s, (2, 3))] == [r.key for r in harness.plan(s, (2, 3))]


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(Exception) as info:
        harness.parse_shard(text)
    assert "--shard" in str(info.value)


def test_a_key_lock_is_exclusive_and_dies_with_its_process(tmp_path):
    path = tmp_path / "ledger.jsonl"
    code = ("import sys, time; from pathlib import Path; from donegate.experiment.harness import KeyLock;"
            f"l = KeyLock(Path({str(path)!r}), 'x/t/c/1'); assert l.acquire(); print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=KIT)
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = harness.KeyLock(path, "x/t/c/1")
        assert not mine.acquire()  # held by the other process
        other = harness.KeyLock(path, "x/t/c/2")
        assert other.acquire()  # another key is free
        other.release()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        for _ in range(50):
            if mine.acquire():
                break
            time.sleep(0.1)
        assert mine.fd is not None
        mine.release()
    finally:
        holder.kill()
        holder.wait()


# -- the report ---------------------------------------------------------------------------------------


def run_line(task: str, config: str, rep: int, met: int, *, of: int = 5, blocked: list | None = None, still: list | None = None,
             gave_up: bool = False, cost: float = 0.1, experiment: str = "x") -> dict:
    return {"event": "run", "time": "2026-12-03T08:00:00.000+00:00", "experiment": experiment, "task": task, "config": config,
            "rep": rep, "met": met, "of": of, "requirements": {f"g.py::t{i}": i < met for i in range(of)},
            "cost": {"agent": cost, "writer": 0.0, "reviewer": 0.0, "total": cost}, "turns": 4, "duration": 10.0,
            "stops": len(blocked or []) + 1, "blocks": len(blocked or []), "gave_up": gave_up, "appeals": 0, "result": "done",
            "key": f"{experiment}/{task}/{config}/{rep}", "spec": "f", "session": f"s-{task}-{config}-{rep}", "subtype": "success",
            "last_verdict": "gave_up" if gave_up else "pass", "blocked_by": blocked or [], "acceptance_failing": still or []}


def ledger_of(path: Path, records: list[dict]) -> Path:
    for r in records:
        ledger.append(r, path)
    return path


def test_the_table_counts_rates_intervals_and_the_matrix(tmp_path):
    lines = [run_line("a", "none", 1, 2), run_line("b", "none", 1, 3), *(run_line(t, "tests", r, 5) for t in "ab" for r in (1, 2)),
             run_line("a", "x-custom", 1, 4), run_line("b", "x-custom", 1, 1, gave_up=True), run_line("a", "none", 1, 0, experiment="other")]
    s = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")
    rows = {r["config"]: r for r in s["configurations"]}
    assert [r["config"] for r in s["configurations"]] == ["none", "tests", "x-custom"]
    assert (rows["none"]["met"], rows["none"]["of"], rows["none"]["rate"], rows["none"]["missed"]) == (5, 10, 50.0, 5)
    assert rows["none"]["ci95"] == [23.7, 76.3]  # Wilson 5 of 10
    assert rows["tests"]["ci95"][1] == 100.0 and rows["x-custom"]["runs_for_person"] == 1
    assert s["matrix"]["a"]["tests"] == {"met": 10, "of": 10, "runs": 2} and s["runs"] == 8
    apart = {(c["a"], c["b"]) for c in s["comparisons"] if c["rate"]["apart"]}
    assert ("none", "x-custom") not in apart and ("none", "tests") in apart
    pair = next(c for c in s["comparisons"] if (c["a"], c["b"]) == ("none", "tests"))
    assert pair["rate"] == {"diff": -50.0, "ci95": [-76.3, -19.1], "apart": True}  # Newcombe, 5/10 against 20/20
    text = table.render(s)
    assert "requirements met, not told apart (the interval includes 0): none / x-custom" in text
    assert "requirements met, told apart (Newcombe's 95% interval of the difference excludes 0): tests above none by 50 points [19 to 76]" in text
    md = table.render(s, "markdown")
    assert "| none | 5 of 10 | 50% [24-76] | 5 |" in md
    rows_csv = table.render(s, "csv").splitlines()
    assert rows_csv[0].startswith("experiment,config,runs,met,of,rate,ci95_low,ci95_high") and rows_csv[1].startswith("x,none,2,5,10,50.0,23.7,76.3")
    assert json.loads(table.render(s, "json"))["configurations"][0]["config"] == "none"


def test_blocks_likely_unjustified_and_a_persons_label_overrides(tmp_path):
    bad = [{"ref": "aaaaaaaaaa", "stop": 1, "verdict": "block", "tests": ["acc.py::test_wrong"], "review": False},
           {"ref": "bbbbbbbbbb", "stop": 2, "verdict": "block", "tests": ["acc.py::test_wrong"], "review": False}]
    real = [{"ref": "cccccccccc", "stop": 1, "verdict": "block", "tests": ["acc.py::test_real"], "review": False}]
    lines = [run_line("a", "tests", 1, 5, blocked=bad, still=["acc.py::test_wrong"], gave_up=True),  # met all, blocker still fails
             run_line("b", "tests", 1, 5, blocked=real),  # fixed what blocked it
             run_line("c", "tests", 1, 4, blocked=[dict(bad[0], ref="dddddddddd")], still=["acc.py::test_wrong"]),  # missed one
             {"event": "label", "time": "2026-12-03T08:01:00.000+00:00", "ref": "bbbbbbbbbb", "label": "justified", "note": "",
              "session": "s", "stop": 2, "stop_time": "t", "repo": "r", "config": "tests", "verdict": "block"},
             {"event": "label", "time": "2026-12-03T08:01:00.000+00:00", "ref": "cccccccccc", "label": "unjustified", "note": "",
              "session": "s", "stop": 1, "stop_time": "t", "repo": "r", "config": "tests", "verdict": "block"}]
    row = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")["configurations"][0]
    assert {k: row[k] for k in ("blocks", "justified", "unjustified", "likely_unjustified", "unlabelled", "gave_up")} == \
        {"blocks": 4, "justified": 1, "unjustified": 1, "likely_unjustified": 1, "unlabelled": 1, "gave_up": 1}


def test_several_ledgers_each_chain_verified_and_a_run_counted_once(tmp_path):
    one = ledger_of(tmp_path / "shard1.jsonl", [run_line("a", "none", 1, 2), run_line("a", "tests", 1, 5)])
    two = ledger_of(tmp_path / "shard2.jsonl", [run_line("b", "none", 1, 3), run_line("a", "none", 1, 2)])  # a/none/1 again
    s = table.summarize([one, two], "x")
    assert s["runs"] == 3 and s["duplicates"] == ["x/a/none/1"]
    assert all(c["intact"] for c in s["ledgers"])
    text = two.read_text().splitlines()
    text[0] = text[0].replace('"met":3', '"met":5')  # edited by hand
    two.write_text("\n".join(text) + "\n")
    s = table.summarize([one, two], "x")
    assert [c["intact"] for c in s["ledgers"]] == [True, False]
    assert "hash chain broken at line 2" in table.render(s)
    from donegate import cli

    assert cli.main(["report", "--experiment", "x", str(one), str(two)]) == 1  # the command says so in its exit code


def test_report_command_hook(tmp_path, capsys):
    path = ledger_of(tmp_path / "l.jsonl", [run_line("a", "none", 1, 2), run_line("a", "tests", 1, 5)])
    assert cli.main(["report", str(path), "--experiment", "x", "--csv"]) == 0
    assert capsys.readouterr().out.startswith("experiment,config,runs")
    assert cli.main(["report", str(path), "--experiment", "x"]) == 0
    assert "Experiment x: 2 runs, 7 of 10 requirements met" in capsys.readouterr().out
    assert cli.main(["report", str(path), "--csv"]) == 1
    assert "--csv is for --experiment" in capsys.readouterr().err


def test_recorded_runs_and_failures_are_read_back(tmp_path):
    path = ledger_of(tmp_path / "l.jsonl", [
        run_line("a", "none", 1, 2),
        {"event": "run_failed", "time": "t", "experiment": "x", "task": "b", "config": "none", "rep": 1, "key": "x/b/none/1",
         "error": "boom", "cost": {"total": 0.25}},
        run_line("a", "none", 1, 2, experiment="y"),
    ])
    assert list(harness.recorded(path, "x")) == ["x/a/none/1"]
    assert harness.failed_cost(path, "x") == 0.25
    s = table.summarize([path], "x")
    assert s["failed_runs"] == ["x/b/none/1"] and "1 run(s) failed" in table.render(s)


def test_when_no_two_configurations_are_told_apart_the_table_says_so_once(tmp_path):
    lines = [run_line("a", c, 1, m) for c, m in (("none", 3), ("tests", 4), ("reviewers", 3))]
    notes = table.notes(table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x"))
    assert notes[0] == ("requirements met: no two configurations are told apart (Newcombe's 95% interval of each difference "
                        "includes 0; more repetitions narrow the intervals)")
    assert [n for n in notes if n.startswith("requirements met")] == notes[:1]


@pytest.mark.parametrize("edit, why", [
    (lambda r: r.pop("met"), "missing met"), (lambda r: r.pop("of"), "missing of"), (lambda r: r.pop("cost"), "missing cost"),
    (lambda r: r["cost"].pop("total"), "missing cost.total"), (lambda r: r.update(met="5"), "met is not a whole number"),
    (lambda r: r.update(met=True), "met is not a whole number"), (lambda r: r.update(of=None), "of is not a whole number"),
    (lambda r: r.update(met=6), "met is above of"), (lambda r: r.update(cost=0.1), "cost is not an object"),
    (lambda r: r["cost"].update(total="0.1"), "cost.total is not a number"),
    (lambda r: r["cost"].update(agent=[1]), "cost.agent is not a number"),
    (lambda r: r.update(duration="10 s"), "duration is not a number"),
    (lambda r: r.update(turns=float("inf")), "turns is not a number"), (lambda r: r.pop("task"), "missing task"),
    (lambda r: r.update(config=["tests"]), "config is not a name"),
    (lambda r: r.update(blocked_by=["aaaaaaaaaa"]), "blocked_by is not a list of blocks"),
    (lambda r: r.update(blocked_by=[{"ref": "a", "tests": [["x"]]}]), "blocked_by is not a list of blocks"),
    (lambda r: r.update(acceptance_failing=[{"id": "x"}]), "acceptance_failing is not a list of names"),
    (lambda r: r.update(key=7), "key is not a name"),
])
def test_a_damaged_run_line_is_skipped_and_said_never_a_crash(tmp_path, edit, why):
    # The attack: a `run` line edited by hand (or torn by a disk) lacking a field or holding the wrong type.
    damaged = run_line("b", "tests", 1, 5)
    edit(damaged)
    lines = [run_line("a", "tests", 1, 4), damaged, run_line("a", "none", 1, 2, experiment="y")]
    s = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")
    assert s["runs"] == 1 and s["configurations"][0]["met"] == 4 and s["tasks"] == ["a"]  # the honest line alone counts
    assert s["skipped"] == {"count": 1, "examples": [{"ledger": str(tmp_path / "l.jsonl"), "line": 2, "why": why}]}
    assert f"1 run line skipped: {why} (line 2; the harness writes full lines" in table.render(s)
    json.loads(table.render(s, "json")) and table.render(s, "csv") and table.render(s, "markdown")


def test_skipped_run_lines_are_counted_by_cause_and_an_all_damaged_experiment_says_so(tmp_path):
    honest = run_line("a", "tests", 1, 4, blocked=[{"ref": "r", "stop": 1, "verdict": "block", "tests": ["t.py::a", None],
                                                    "review": False}])  # a failing entry without an id: still honest
    assert table.damaged(honest) is None
    broken = [{k: v for k, v in run_line("a", "tests", r, 5).items() if k != "met"} for r in (2, 3)]
    lines = [honest, *broken, dict(run_line("b", "tests", 1, 5), cost={"total": -1})]
    s = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")
    assert s["runs"] == 1 and s["skipped"]["count"] == 3
    assert "3 run lines skipped (line 2 missing met, line 3 missing met, line 4 cost.total is not a number;" in table.render(s)
    only = table.summarize([ledger_of(tmp_path / "m.jsonl", broken)], "x")
    assert table.render(only).splitlines() == [f"No runs of experiment x in {tmp_path / 'm.jsonl'}.", table.problem_notes(only)[0]]
    assert table.problem_notes(only)[0].startswith("2 run lines skipped: missing met (line 1, line 2;")


def test_the_progress_line_counts_done_failures_spend_and_eta(tmp_path):
    out = (tmp_path / "err").open("w+")
    p = harness.Progress(out, total=10, done=4, spent=0.5, jobs=2)
    p.show()
    p.done, p.new, p.failed, p.spent = 6, 2, 1, 0.75
    p.start -= 20  # two new runs in 20 s: four left take 40 s
    p.show("x/t/c/1: 5/5")
    out.seek(0)
    first, second = out.read().splitlines()
    assert first == "runs 4/10 done, 0 failed, $0.5000 spent, ETA ?"
    assert second == "runs 6/10 done, 1 failed, $0.7500 spent, ETA 40s  (x/t/c/1: 5/5)"


def test_resuming_refuses_runs_of_another_version_of_the_spec(tmp_path):
    path = write_spec(tmp_path, base())
    s = spec.load(path)
    led = tmp_path / "ledger.jsonl"
    first = harness.plan(s)[0]
    ledger.append(dict(run_line("t", first.conf["name"], 1, 1), key=first.key, spec=first.fingerprint), led)
    assert harness.recorded(led, "x")  # the same version: resumable (nothing is refused)
    (tmp_path / "grading" / "test_g.py").write_text("def test_g():\n    assert 1\n")  # the grading changed since
    with pytest.raises(Exception) as info:
        harness.run_experiment(spec.load(path), led, jobs=1, max_cost=None, shard=None)
    assert "another version of the spec" in str(info.value)


# -- issue 25: the blind control's table, what ran the runs, unknown costs, estimates ------------------


def ran(line: dict, **what) -> dict:
    return {**line, "agent_model": "claude-x", "claude_version": "2.1.197", "kit_version": "0.1.0", "spec_hash": "abc123abc123",
            "source": "live", **what}


def test_cost_turns_and_time_get_bootstrap_intervals_and_the_pairs_the_data_tell_apart(tmp_path):
    lines = []
    for rep in range(1, 7):  # retry: about 2.4 times the cost and twice the turns of tests, the same requirements met
        lines.append(ran({**run_line("a", "tests", rep, 5, cost=0.20 + 0.01 * (rep % 3)), "turns": 10 + rep % 2, "duration": 60.0 + rep}))
        lines.append(ran({**run_line("a", "retry", rep, 5, cost=0.48 + 0.01 * (rep % 3)), "turns": 20 + rep % 3, "duration": 61.0 + rep}))
    s = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")
    rows = {r["config"]: r for r in s["configurations"]}
    lo, hi = rows["retry"]["cost_ci95"]
    assert lo <= rows["retry"]["cost_per_run"] <= hi and rows["tests"]["turns_ci95"][0] <= 10.5 <= rows["tests"]["turns_ci95"][1]
    (pair,) = s["comparisons"]
    assert (pair["a"], pair["b"]) == ("tests", "retry") and not pair["rate"]["apart"]
    assert pair["cost"]["apart"] and pair["cost"]["ratio"] == 0.43 and pair["turns"]["apart"]
    assert not pair["seconds"]["apart"]  # 63.5 s against 64.5 s: the data do not tell these apart
    notes = "\n".join(table.comparison_notes(s))
    assert "requirements met, not told apart (the interval includes 0): tests / retry" in notes
    assert "cost per run, told apart (95% bootstrap interval of the ratio of means excludes 1): tests 0.43x retry [" in notes
    assert "time per run, not told apart: tests / retry" in notes
    assert table.summarize([tmp_path / "l.jsonl"], "x") == s  # a fixed seed: the same report every time
    text = table.render(s)
    assert "cost per run (95% CI)" in text and "turns (95% CI)" in text
    assert "Ran with agent model claude-x, Claude Code 2.1.197, donegate 0.1.0, spec abc123abc123." in text


def test_runs_of_mixed_versions_are_grouped_and_said(tmp_path):
    lines = [ran(run_line("a", "none", 1, 2)), ran(run_line("a", "tests", 1, 5)),
             ran(run_line("a", "retry", 1, 5), claude_version="2.1.332", spec_hash="def456def456"),  # the arm added later
             run_line("b", "none", 1, 3)]  # an old line, from before the fields
    s = table.summarize([ledger_of(tmp_path / "l.jsonl", lines)], "x")
    assert [g["group"] for g in s["versions"]] == ["A", "B", "C"] and s["versions"][1]["configurations"] == {"retry": 1}
    assert s["versions"][2]["claude_version"] == "unrecorded"
    rows = {r["config"]: r for r in s["configurations"]}
    assert rows["none"]["groups"] == ["A", "C"] and rows["retry"]["groups"] == ["B"]
    text = table.render(s)
    assert "WARNING: the runs were mixed: 3 combinations of agent model, Claude Code, kit and spec" in text
    assert "group B: agent model claude-x, Claude Code 2.1.332, donegate 0.1.0, spec def456def456: 1 run (retry 1)" in text
    assert "retry (B)" in text and "Ran with" not in text
    assert not next(c for c in s["comparisons"] if c["b"] == "retry")["same_versions"]


def test_a_run_with_unknown_cost_counts_by_estimate_and_is_never_free(tmp_path):
    killed = ran(run_line("b", "tests", 1, 3), subtype="timeout", turns=None)
    killed["cost"] = {"agent": None, "writer": 0.05, "reviewer": 0.0, "total": None, "estimate": 0.25,
                      "unknown": "the session was killed at its time limit"}
    path = ledger_of(tmp_path / "l.jsonl", [ran(run_line("a", "tests", 1, 5, cost=0.2)), killed])
    assert table.damaged(killed) is None
    assert table.damaged({**killed, "cost": {**killed["cost"], "estimate": None}}) == "cost.estimate is not a number"
    s = table.summarize([path], "x")
    row = s["configurations"][0]
    assert (row["runs"], row["cost_unknown"], row["cost_per_run"], row["cost_estimated"], row["turns_per_run"]) == (2, 1, 0.2, 0.25, 4.0)
    assert "$0.2000 (1 unknown)" in table.render(s)
    assert "1 run killed at its time limit: cost unknown (left out of the cost per run; --max-cost counted them at an estimated $0.2500)" in table.render(s)
    from donegate.experiment import estimate

    assert estimate.counted_cost(killed) == 0.25 and estimate.counted_cost(run_line("a", "tests", 1, 5, cost=0.2)) == 0.2


def test_scripted_and_generated_dollars_are_labelled_never_spent(tmp_path):
    scripted = table.summarize([ledger_of(tmp_path / "s.jsonl", [ran(run_line("a", "none", 1, 2), source="scripted")])], "x")
    text = table.render(scripted)
    assert "computed from a scripted server's tokens (no money spent)" in text and "in all" not in text
    generated = table.summarize([ledger_of(tmp_path / "g.jsonl", [ran(run_line("a", "none", 1, 2), source="generated")])], "x")
    assert "GENERATED data" in table.render(generated) and "no session ran" in table.render(generated)


def test_dry_run_lists_the_runs_to_do_with_estimates_from_the_ledger_else_the_article(tmp_path, capsys):
    path = write_spec(tmp_path, base(configurations=["none", "tests", "retry", {"name": "mine", "keys": {"max_blocks": 2}}], repetitions=2))
    led = tmp_path / "ledger.jsonl"
    ledger.append(dict(ran(run_line("t", "none", 1, 2, cost=0.05)), key="x/t/none/1", spec=harness.plan(spec.load(path))[0].fingerprint), led)
    assert cli.main(["experiment", "run", str(path), "--dry-run", "--ledger", str(led), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "experiment x: 7 run(s) to do of 8 (1 already in" in out and "nothing is run (--dry-run)" in out
    assert "  none: 1 run(s), $0.0500 and 10s a run (x's earlier runs, 1 run(s))" in out
    assert "  tests: 2 run(s), $0.2000 and 1m10s a run (the article's tinydb runs)" in out
    assert "  retry: 2 run(s), $0.4800 and 2m20s a run (the peer evaluation: 2.4x the gate's cost)" in out
    assert "  mine: 2 run(s), no estimate" in out and "    x/t/mine/2" in out and "    x/t/none/1" not in out
    assert "estimate: $1.4100 plus 2 run(s) with no estimate (US dollars)" in out
    assert not led.read_text().count('"event":"run"') - 1  # nothing ran
    # Scripted: only scripted runs are a basis, and the dollars are not money.
    assert cli.main(["experiment", "run", str(path), "--dry-run", "--scripted", "--ledger", str(led)]) == 0
    out = capsys.readouterr().out
    assert "(computed from a scripted server's tokens, no money)" in out and "none: 1 run(s), no estimate" in out


def test_the_article_study_with_the_retry_arm_is_estimated_from_the_published_figures(tmp_path, capsys):
    assert cli.main(["experiment", "run", str(TINYDB), "--dry-run", "--ledger", str(tmp_path / "none.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "60 run(s) to do of 60" in out and "estimate: $14.7500 (US dollars)" in out  # $9.95 of the article + 10 x $0.48
