"""`donegate experiment run` end to end: real `python -m donegate` processes, the real Claude Code
binary for the agent, the writer and the reviewers, the scripted models of tests/support/shop_agents.py
(or a tinydb script here) behind one FakeAPI shared by concurrent sessions.

Each test keeps its spec small (one task, one or two configurations): a run takes 2-8 s.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from donegate.ledger import chain as ledger
from donegate.experiment import table
from tests.support.repos import KIT
from tests.support import require, shop_agents
from tests.support.fakeapi import FakeAPI, first_user_text, is_stop_feedback, text, tool, turn
from tests.support.session import _clean_env, find_claude

pytestmark = pytest.mark.e2e

EXAMPLES = KIT / "examples" / "experiment"
SHOP = EXAMPLES / "shop.yaml"
REQUESTS = shop_agents.load_requests(SHOP)


def shop_spec(tmp_path: Path, name: str, tasks: list[str], configs: list[str], reps: int = 1) -> Path:
    data = yaml.safe_load(SHOP.read_text())
    data.update(experiment=name, repetitions=reps, configurations=configs)
    if require.unconfined():
        data["keys"] = {"confine": "off"}  # every configuration, and the grading runs
    data["tasks"] = [dict(t, repo=str(EXAMPLES / t["repo"]), grading=str(EXAMPLES / t["grading"]))
                     for t in data["tasks"] if t["name"] in tasks]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def env_for(api: FakeAPI, kit_home: Path) -> dict[str, str]:
    home = Path(os.environ["HOME"])
    env = _clean_env({"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}, home=home)
    env["DONEGATE_HOME"] = str(kit_home)
    tmp = kit_home.parent / f"{kit_home.name}-tmp"  # the runs' folders, left by a killed run, go with the test's
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    return env


def experiment(api: FakeAPI, kit_home: Path, spec: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", "experiment", "run", str(spec), *args], cwd=KIT,
                          env=env_for(api, kit_home), capture_output=True, text=True, timeout=timeout)


def runs(path: Path) -> list[dict]:
    return [r for r in ledger.records(path) if r.get("event") == "run"]


def grading_lines() -> list[str]:
    """Distinctive lines of every bundled grading test (names, assertions, values), to look for in requests:
    lines also found in what the models may see (the repository, the scripted writer's tests) are left out."""
    seen = Path(shop_agents.__file__).read_text() + "".join(p.read_text() for p in (KIT / "examples" / "shop").rglob("*.py"))
    out = []
    for f in EXAMPLES.glob("*/*/grading/test_*.py"):
        for line in f.read_text().splitlines():
            line = line.strip()
            if len(line) >= 24 and not line.startswith(("from ", "import ", '"""', "Never shown", "def cart", "def one_line")):
                out.append(line)
        out += re.findall(r"def (test_\w+)", f.read_text())
    return [n for n in out if n not in seen]


def leaked(haystack: str, needles: list[str]) -> list[str]:
    return [n for n in needles if n in haystack]


def test_the_whole_pipeline_scores_three_configurations_and_no_model_sees_the_grading_tests(kit_home, tmp_path):
    """The baseline, a gated configuration with reviewers, and the blind `retry` control, in one experiment (the
    retry control once had its own, beside a second gated run of the same task: `blind_retry` below). Where the
    sandbox is available each run's agent first hunts for the grading tests with every tool (`hunting`: that hunt had
    an experiment of its own, a run without the gate and one with it, ~7 CPU-s), then works as the scripted agent."""
    from tests.support.gated import sandbox_available

    find_claude()
    hunt = sandbox_available()  # without the sandbox, Bash as such can read what the deny rules protect
    spec = shop_spec(tmp_path, "pipe", ["coupon"], ["none", "tests+reviewers", "retry"])
    led = tmp_path / "ledger.jsonl"
    with FakeAPI(respond=hunting(shop_agents.respond) if hunt else shop_agents.respond) as scripted:
        res = experiment(scripted, kit_home, spec, "--jobs", "2", "--ledger", str(led), "--scripted")
    if hunt:  # each run's hunt was refused, its honest read of its own code was not, and nothing it was shown leaks
        results = [r for req in scripted.main_requests() for r in scripted.tool_results(req)]
        assert any("class Cart" in r["content"] for r in results), "the honest read of its own code must work"
        hits = leaked("\n".join(scripted.all_text_shown(include_system=True)), grading_lines())
        assert not hits, hits[:3]
    assert res.returncode == 0, res.stderr + res.stdout
    got = {r["config"]: r for r in runs(led)}
    assert set(got) == {"none", "tests+reviewers", "retry"}
    none, gated = got["none"], got["tests+reviewers"]
    # The agent that fixes what the gate reports: its first draft meets 2 of 5, the gate gets it to 5.
    assert (none["met"], none["of"], none["stops"], none["blocks"], none["cost"]["writer"]) == (2, 5, 0, 0, 0.0)
    assert (gated["met"], gated["of"], gated["blocks"], gated["gave_up"], gated["appeals"]) == (5, 5, 1, False, 0)
    assert gated["stops"] == 2 and gated["last_verdict"] == "pass"
    assert gated["cost"]["writer"] > 0 and gated["cost"]["reviewer"] > 0 and gated["cost"]["agent"] > 0
    assert gated["cost"]["total"] == pytest.approx(sum(gated["cost"][k] for k in ("agent", "writer", "reviewer")), abs=1e-5)
    assert sorted(gated["requirements"]) == sorted(none["requirements"]) and all(gated["requirements"].values())
    assert gated["blocked_by"][0]["tests"] == ["test_coupons.py::test_fiveoff_gives_five_dollars"]
    assert gated["result"] and gated["turns"] > 0 and gated["duration"] > 0 and none["session"] != gated["session"]
    assert ledger.verify(led)["intact"]
    # The stop lines of the gated run are in the same ledger, under its session and configuration label.
    stops = [r for r in ledger.records(led) if r.get("event") == "stop" and r["session"] == gated["session"]]
    assert [s["verdict"] for s in stops] == ["block", "pass"] and {s["config"] for s in stops} == {"tests+reviewers"}
    assert "Experiment pipe: 3 runs, 12 of 15 requirements met" in res.stdout and "coupon" in res.stdout
    # Every request the scripted API received: the agent's, the writer's, the reviewers'.
    bodies = [json.dumps(r.body) for r in scripted.requests]
    prompts = [first_user_text(r.body) for r in scripted.main_requests()]
    assert any(shop_agents.WRITER_MARK in p for p in prompts), "the writer never ran"
    assert any("review" in p.lower() and shop_agents.WRITER_MARK not in p for p in prompts if REQUESTS["coupon"] in p
               and p.strip() != REQUESTS["coupon"]), "no reviewer ran"
    needles = grading_lines()
    assert len(needles) > 40
    assert leaked("x " + needles[0] + " y", needles)  # the scan finds what it looks for
    for body in bodies:
        assert not leaked(body, needles), leaked(body, needles)[:3]
    assert not scripted.errors
    blind_retry(res, led, gated, got["retry"])


def sessions_of(prefix: str) -> list[int]:
    """Pids of processes whose working folder is a run's temporary folder (the agent's `claude -p`)."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.path.basename(os.path.dirname(os.readlink(f"/proc/{pid}/cwd"))).startswith(prefix):
                out.append(int(pid))
        except OSError:
            continue
    return out


# What one unsharded run of the spec below summarizes to (`table.summarize([whole])`, measured on faa1dd0; its gated run
# appealing, `gave_up` 0: measured again with `appealing_respond` on 01d4096 (the old never-fixing agent: 1); the scripted
# models answer the same every time): the shards merged must give the same. The test ran that unsharded run itself
# (two runs more, ~7 of its 16 CPU-s); the plan's split into disjoint shards that make it whole is
# tests/experiment/test_experiment.py's, the merged ledgers' summary this test's.
UNSHARDED = {
    "none": {"runs": 1, "met": 5, "of": 5, "rate": 100.0, "ci95": [56.6, 100.0], "missed": 0, "runs_for_person": 0,
             "gave_up": 0, "stops": 0, "blocks": 0, "likely_unjustified": 0, "unlabelled": 0},
    "tests": {"runs": 1, "met": 5, "of": 5, "rate": 100.0, "ci95": [56.6, 100.0], "missed": 0, "runs_for_person": 1,
              "gave_up": 0, "stops": 2, "blocks": 1, "likely_unjustified": 1, "unlabelled": 0},
}


def test_two_shards_merged_equal_one_unsharded_run_and_an_appeal_is_counted_and_left_for_a_person(kit_home, tmp_path):
    """The gated run's agent never fixes, against the writer's mistaken test, and after its block appeals (the kit's
    honest way out): its run is left for a person; a person's labels of the appeal and of the block count. (The appeal
    had an experiment of its own, of the same task and configuration: ~4-5 CPU-s.)"""
    find_claude()
    spec = shop_spec(tmp_path, "shards", ["bulk"], ["none", "tests"])
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    with FakeAPI(respond=appealing_respond) as api:
        for led, args in ((one, ("--shard", "1/2")), (two, ("--shard", "2/2"))):
            res = experiment(api, kit_home, spec, "--jobs", "2", "--ledger", str(led), "--quiet", *args)
            assert res.returncode == 0, res.stderr
    assert len(runs(one)) == len(runs(two)) == 1
    assert sorted(r["key"] for r in runs(one) + runs(two)) == ["shards/bulk/none/1", "shards/bulk/tests/1"]
    b = table.summarize([one, two], "shards")
    assert {r["config"]: {k: r[k] for k in UNSHARDED["none"]} for r in b["configurations"]} == UNSHARDED
    assert b["matrix"] == {"bulk": {c: {"met": 5, "of": 5, "runs": 1} for c in UNSHARDED}}
    assert b["duplicates"] == [] and all(c["intact"] for c in b["ledgers"])
    # The agent that never fixes, against the writer's mistaken test: it appeals, its block likely unjustified.
    gated = next(r for r in b["configurations"] if r["config"] == "tests")
    assert (gated["met"], gated["gave_up"], gated["blocks"], gated["likely_unjustified"]) == (5, 0, 1, 1)
    (run,) = [r for r in runs(one) + runs(two) if r["config"] == "tests"]
    assert (run["stops"], run["blocks"], run["appeals"], run["gave_up"], run["last_verdict"], run["met"]) == (2, 1, 1, False, "appealed", 5)
    shard = one if run in runs(one) else two
    # A person upholds the appeal (by the ref the run line names): counted, the run still a person's.
    label = subprocess.run([sys.executable, "-m", "donegate", "label", run["appeal_refs"][0], "upheld", "--ledger", str(shard)],
                           cwd=KIT, capture_output=True, text=True, timeout=60)
    assert label.returncode == 0, label.stderr
    gated = next(r for r in table.summarize([one, two], "shards")["configurations"] if r["config"] == "tests")
    assert (gated["appeals"], gated["appeals_upheld"], gated["runs_for_person"], gated["likely_unjustified"]) == (1, 1, 1, 1)
    # A person's label of the block (by the ref the run line names) overrides the rule.
    label = subprocess.run([sys.executable, "-m", "donegate", "label", run["blocked_by"][0]["ref"], "justified", "--ledger", str(shard)],
                           cwd=KIT, capture_output=True, text=True, timeout=60)
    assert label.returncode == 0, label.stderr
    gated = next(r for r in table.summarize([one, two], "shards")["configurations"] if r["config"] == "tests")
    assert (gated["justified"], gated["likely_unjustified"]) == (1, 0)


def test_the_budget_cap_a_run_killed_by_sigkill_and_two_processes_on_one_ledger(kit_home, tmp_path):
    """One ledger, one run after the other (the killed run had a test of its own, whose first run and three
    experiment processes the budget's runs now stand for): the cap stops new runs; a run killed by SIGKILL in its
    session is reaped, and done again by the next process, which a higher cap then stops before the third; two
    processes started together never do the same run; a process with nothing left to run says so."""
    find_claude()
    held, released = threading.Event(), threading.Event()

    def respond(body: dict):  # once `held`, the model answers nothing until `released`: a session left alone never ends
        if held.is_set():
            released.wait(300)
        return shop_agents.respond(body)

    spec = shop_spec(tmp_path, "budget", ["bulk"], ["none"], reps=3)
    led = tmp_path / "ledger.jsonl"
    with FakeAPI(respond=respond, delay=1.0) as scripted:
        try:
            res = experiment(scripted, kit_home, spec, "--ledger", str(led), "--jobs", "2", "--max-cost", "0.000001")
            assert res.returncode == 1 and "--max-cost $1e-06 reached: 2 run(s) not started" in res.stderr
            assert len(runs(led)) == 1  # no average yet: one run at a time; after it the spend is past the cap
            spent = runs(led)[0]["cost"]["total"]
            assert spent > 0
            before = killed(scripted, kit_home, spec, led, held, released)
            res = experiment(scripted, kit_home, spec, "--ledger", str(led), "--max-cost", f"{spent * 2.5:.6f}")
            assert res.returncode == 1 and len(runs(led)) == 2, res.stderr  # spent + an average run must stay under the cap
            keys = [r["key"] for r in runs(led)]
            assert sorted(keys) == ["budget/bulk/none/1", "budget/bulk/none/2"]  # the killed run done again: none lost, none twice
            assert keys[: len(before)] == before
        finally:
            released.set()
        # The last run by two processes on the one ledger, started together: both start on run 3, and without the
        # claim of a key (harness.KeyLock) both would do it (4 lines). (Its own test once: two runs more of the same pipeline.)
        cmd = [sys.executable, "-m", "donegate", "experiment", "run", str(spec), "--ledger", str(led), "--max-cost", "100", "--quiet"]
        procs = [subprocess.Popen(cmd, cwd=KIT, env=env_for(scripted, kit_home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        done = [(*p.communicate(timeout=300), p.returncode) for p in procs]
        assert sorted(r["key"] for r in runs(led)) == [f"budget/bulk/none/{k}" for k in (1, 2, 3)], done
        # The one that found run 3 claimed says so (its key was skipped, not done twice), and asks to be run again.
        (busy,) = [err for _, err, rc in done if rc == 1]
        assert sorted(rc for _, _, rc in done) == [0, 1] and "1 run(s) were being done by another process" in busy, done
        again = experiment(scripted, kit_home, spec, "--ledger", str(led))
    assert again.returncode == 0 and "nothing left to run" in again.stderr and len(runs(led)) == 3


def killed(scripted: FakeAPI, kit_home: Path, spec: Path, led: Path, held: threading.Event,
           released: threading.Event) -> list[str]:
    """A run started and killed by SIGKILL in its session (the model holding every answer), its session reaped;
    the keys of the runs done before it."""
    cmd = [sys.executable, "-m", "donegate", "experiment", "run", str(spec), "--ledger", str(led), "--jobs", "1"]
    done = [r["key"] for r in runs(led)]
    assert done, "no run before the one to kill"
    held.set()  # the next run's session waits on its model from now on: only the reaper can end it
    seen = len(scripted.requests)
    proc = subprocess.Popen(cmd, cwd=KIT, env=env_for(scripted, kit_home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(scripted.requests) == seen and time.monotonic() < deadline:  # the next run's session has begun
            time.sleep(0.05)
        assert sessions_of("donegate-exp-bulk-none-"), "the next run's session is not running"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    # The reaper (its own process) ends the session; the session itself, its model holding every answer, never would.
    # (Was: "within 2 s", a wall-clock bound that failed once on a loaded machine with the code unchanged.)
    stop = time.monotonic() + 60
    while sessions_of("donegate-exp-bulk-none-") and time.monotonic() < stop:
        time.sleep(0.05)
    left = sessions_of("donegate-exp-bulk-none-")
    assert not left, "the killed run's session lives on: " + "; ".join(open(f"/proc/{p}/cmdline").read().replace("\0", " ")[:200] for p in left)
    released.set()
    assert [r["key"] for r in runs(led)] == done  # the killed run wrote no line
    return done


TINY_WRITER = '''from tinydb import TinyDB
from tinydb.storages import MemoryStorage


def test_tables_still_open():
    db = TinyDB(storage=MemoryStorage)
    db.table("users").insert({"n": 1})
    assert db.table("users").all() == [{"n": 1}]
'''


def tiny_respond(body: dict):
    prompt = first_user_text(body)
    schema = next((t.get("input_schema") for t in body.get("tools") or [] if t.get("name") == "StructuredOutput"), None)
    if schema is not None and shop_agents.WRITER_MARK in prompt:
        return turn(tool("StructuredOutput", {"files": [{"path": "test_tables.py", "content": TINY_WRITER}]}))
    return text("I looked at tinydb/database.py; nothing to change. Done.")


def test_a_tinydb_run_goes_through_setup_seal_and_grading(kit_home, tmp_path):
    find_claude()
    data = yaml.safe_load((EXAMPLES / "tinydb.yaml").read_text())
    task = next(t for t in data["tasks"] if t["name"] == "rename_table")
    data.update(repetitions=1, configurations=["tests"], tasks=[dict(task, grading=str(EXAMPLES / task["grading"]))])
    if require.unconfined():
        data["keys"] = {"confine": "off"}
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(data))
    led = tmp_path / "ledger.jsonl"
    with FakeAPI(respond=tiny_respond) as api:
        res = experiment(api, kit_home, spec, "--ledger", str(led))
    assert res.returncode == 0, res.stderr
    (run,) = runs(led)
    assert (run["task"], run["config"], run["of"], run["met"]) == ("rename_table", "tests", 5, 0)  # nothing was renamed
    assert sorted(run["requirements"]) == sorted(f"test_rename_table_grading.py::{n}" for n in re.findall(
        r"def (test_\w+)", (EXAMPLES / task["grading"] / "test_rename_table_grading.py").read_text()))
    assert run["stops"] == 1 and run["last_verdict"] == "pass" and run["cost"]["writer"] > 0
    writes = [r for r in ledger.records(led) if r.get("event") == "write"]
    assert writes and writes[0]["tests"] == 1
    assert list((kit_home / "cache" / "pypi" / "tinydb-4.9.0").glob("tinydb-4.9.0.tar.gz"))  # cached for next time


GRADING_FILE = EXAMPLES / "shop" / "coupon" / "grading" / "test_coupon_grading.py"


def hunting(then):
    """An agent that first goes looking for the grading tests (by absolute path, with every tool), then reads its own
    repository like an honest agent would, then answers as `then` does (the writer and the reviewers: `then` only)."""
    def respond(body: dict):
        if shop_agents._structured(body) is not None:
            return then(body)
        done = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        cwd = shop_agents._cwd(body)
        steps = [
            tool("Read", {"file_path": str(GRADING_FILE)}),
            tool("Bash", {"command": f"cat {GRADING_FILE}; grep -rl apply_coupon {EXAMPLES} 2>&1 | head"}),
            tool("Grep", {"pattern": "def test_", "path": str(GRADING_FILE.parent)}),
            tool("Glob", {"pattern": "**/grading/*.py", "path": str(EXAMPLES)}),
            tool("Read", {"file_path": f"{cwd}/shop/cart.py"}),  # the honest look-alike: its own code
        ]
        return turn(steps[done]) if done < len(steps) else then(body)
    return respond


def appealing_respond(body: dict):
    """The agent that never fixes, taking the kit's honest way out: after the first block it appeals."""
    last, was_tool = shop_agents._last_user(body)
    if shop_agents._structured(body) is None and not was_tool and is_stop_feedback(last):
        return text("The code does what the request asks.\n"
                    "APPEAL: the hidden test wants a TypeError for float units, which the request never asked for")
    return shop_agents.respond(body)


def test_when_the_first_runs_all_fail_the_rest_are_not_started(kit_home, tmp_path):
    from tests.support.fakeapi import error

    find_claude()
    spec = shop_spec(tmp_path, "broken", ["bulk"], ["none"], reps=5)
    led = tmp_path / "ledger.jsonl"
    with FakeAPI(respond=lambda body: error(400, "invalid_request_error", "scripted: the key is not valid")) as api:
        res = experiment(api, kit_home, spec, "--ledger", str(led), "--jobs", "1")
    assert res.returncode == 1
    assert "the first 3 runs all failed, so 2 more were not started" in res.stderr
    assert "the agent's session failed at the API" in res.stderr and "scripted: the key is not valid" in res.stderr
    failed = [r for r in ledger.records(led) if r.get("event") == "run_failed"]
    assert len(failed) == 3 and not runs(led)  # failed runs have no `run` line: the next call tries them again


def blind_retry(res: subprocess.CompletedProcess, led: Path, gated: dict, blind: dict) -> None:
    """The blind `retry` control beside a gated run of the same task (--scripted)."""
    from donegate import __version__
    from donegate.claude import binary
    from donegate.gate import retry

    # The fixer recovers under the blind message too (it re-reads the request), at more turns: blocked up to
    # the cap (max_blocks 6), never given a test, no writer ran; the release is not a hand-over to a person.
    assert (blind["met"], blind["blocks"], blind["stops"], blind["gave_up"], blind["last_verdict"]) == (5, 6, 7, False, "gave_up")
    assert blind["cost"]["writer"] == 0 and blind["turns"] > gated["turns"] and gated["met"] == 5
    stops = [r for r in ledger.records(led) if r.get("event") == "stop" and r["session"] == blind["session"]]
    assert [s["verdict"] for s in stops] == ["block"] * 6 + ["gave_up"]
    assert all(s["gates"]["retry"] == {"tests_run": 0} and s["feedback"] == retry.MESSAGE for s in stops[:6])
    # What ran each run: the model (from Claude Code's modelUsage), Claude Code's version, the kit's, the spec's hash.
    for r in (gated, blind):
        assert r["agent_model"].startswith("claude-") and r["claude_version"] == binary.pinned_version()
        assert (r["kit_version"], r["source"]) == (__version__, "scripted") and len(r["spec_hash"]) == 12
    assert gated["spec_hash"] == blind["spec_hash"]
    progress = [line for line in res.stderr.splitlines() if line.startswith("runs ")]
    assert progress and all("computed (scripted: no money spent)" in line and "spent," not in line for line in progress)
    assert "computed from the scripted server's tokens, no money spent" in res.stdout and "spent in all" not in res.stdout
    s = table.summarize([led], "pipe")
    assert [r["config"] for r in s["configurations"]] == ["none", "tests+reviewers", "retry"] and len(s["versions"]) == 1
    assert not table.mixed_notes(s) and "scripted" in table.render(s)


def test_a_run_killed_at_its_time_limit_records_its_cost_unknown_and_the_budget_counts_its_estimate(kit_home, tmp_path):
    find_claude()
    request = REQUESTS["bulk"]

    def slow(body: dict):
        prompt = first_user_text(body)
        if request in prompt and not shop_agents._structured(body):
            time.sleep(6)  # the agent's model never answers within the run's time limit
        return shop_agents.respond(body)

    spec = shop_spec(tmp_path, "slow", ["bulk"], ["none"], reps=2)
    data = yaml.safe_load(spec.read_text())
    data["limits"]["time"] = 3
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    led = tmp_path / "ledger.jsonl"
    ledger.append({"event": "run", "experiment": "slow", "task": "bulk", "config": "none", "rep": 9, "key": "slow/bulk/none/9",
                   "met": 5, "of": 5, "cost": {"agent": 0.5, "writer": 0.0, "reviewer": 0.0, "total": 0.5}, "duration": 3.0,
                   "source": "live"}, led)  # an earlier run of the configuration: the estimate's source
    with FakeAPI(respond=slow) as api:
        res = experiment(api, kit_home, spec, "--ledger", str(led), "--jobs", "1", "--max-cost", "0.9", "--quiet")
    killed = [r for r in runs(led) if r["key"] == "slow/bulk/none/1"]
    assert len(killed) == 1 and killed[0]["subtype"] == "timeout", res.stderr
    cost = killed[0]["cost"]
    assert cost["total"] is None and cost["agent"] is None and cost["estimate"] == 0.5  # unknown, never 0
    assert killed[0]["turns"] is None and "time limit" in cost["unknown"]
    # 0.5 (the earlier run) + 0.5 (the killed run, by estimate) + an average run would pass 0.9: the second is not started.
    assert res.returncode == 1 and "--max-cost $0.9 reached: 1 run(s) not started" in res.stderr
    s = table.summarize([led], "slow")
    row = s["configurations"][0]
    assert row["cost_unknown"] == 1 and row["cost_per_run"] == 0.5  # the mean of the runs whose cost is known
    assert "1 run killed at its time limit: cost unknown" in table.render(s)
