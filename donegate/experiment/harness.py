"""Running an experiment: plan the runs, skip those already recorded, run the rest, one line each.

One run (`execute`), in a fresh temporary folder:

    <tmp>/<repo>/   a copy of the task's prepared repository (one commit)
    <tmp>/home/     the run's DONEGATE_HOME: donegate.yaml with the configuration's keys, the sealed
                    store; its ledger.jsonl is a symlink to the experiment's ledger, so the hook's
                    stop lines (and the writer's line) land there directly, hash-chained with the rest

1. `donegate install` (the configuration `gate: off` then drops the Stop hook, keeping the deny rules,
   guard and sandbox, so the baseline agent is confined exactly as the gated ones), then `donegate seal`
   of the task's acceptance folder or `donegate write` (the writer, afresh for this run);
2. a real headless session on the request: `claude -p --output-format json`, the agent's usual tools,
   the repository's settings (`--setting-sources project`), its turn and time limits;
3. the grading tests, through the gate's own hidden run (`donegate.hidden.runner.run`), against what the
   agent left: requirements met of n;
4. one `run` line in the ledger (docs/ledger.md). A run that could not be carried out (setup failed,
   the session gave no result) writes `run_failed` instead, and is tried again next time.

Resuming: a run is named by its key `experiment/task/config/rep`. Before a run starts its process
takes an exclusive lock on that key (a file lock: the kernel drops it when the process dies, kill -9
included) and re-reads the ledger: a key that has a `run` line, or is locked by another process,
is not started. So a restarted experiment does only the runs without a line, and two processes on
one ledger never do the same run. The report counts a key once even if two ledgers both hold it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TextIO

from donegate import __version__, paths
from donegate.ledger import chain as ledger
from donegate.core import proc
from donegate.hidden import runner
from donegate.claude import binary
from donegate.errors import DonegateError
from donegate.experiment import estimate, source
from donegate.experiment.spec import Spec
from donegate.core.util import utc_now
from donegate.experiment.bookkeeping import (KeyLock, Progress, events, failed_cost, gate_account, parse_result, recorded,
                                             session_lines, writer_cost, writer_failed_cost)

PLACEHOLDER = "test_reviewers_only.py"
PLACEHOLDER_TEXT = ('"""Sealed by the experiment for a configuration without acceptance tests: the reviewers need a sealed base."""\n\n\n'
                    "def test_no_acceptance_tests_in_this_configuration():\n    pass\n")
RESULT_CHARS = 2000
FAIL_FAST = 3  # failed runs, before any succeeded, that stop the rest from starting
SETUP_TIMEOUT = 1800  # seconds for install/seal/write of one run (the writer's own timeout is in its keys)
# Variables of a surrounding Claude Code session or gate that must not reach the runs' sessions.
DROP_ENV = ("DONEGATE_NESTED", "DONEGATE_HOME", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT")


class RunFailed(Exception):
    def __init__(self, message: str, cost: float = 0.0) -> None:
        super().__init__(message)
        self.message = message
        self.cost = cost


class Planned:
    def __init__(self, spec: Spec, task: dict[str, Any], conf: dict[str, Any], rep: int) -> None:
        self.task = task
        self.conf = conf
        self.rep = rep
        self.key = f"{spec.name}/{task['name']}/{conf['name']}/{rep}"
        self.fingerprint = spec.fingerprint(task, conf)

    def __repr__(self) -> str:
        return f"<run {self.key}>"


def plan(spec: Spec, shard: tuple[int, int] | None = None) -> list[Planned]:
    """Every run in spec order (repetition, task, configuration), or shard K of N: every N-th from K."""
    runs = [Planned(spec, t, c, r) for r in range(1, spec.repetitions + 1) for t in spec.tasks for c in spec.configurations]
    if shard:
        k, n = shard
        runs = runs[k - 1 :: n]
    return runs


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise DonegateError(f"--shard {text}: expected K/N, e.g. 2/4", "give the shard number and the count of shards") from None
    if not 1 <= k <= n:
        raise DonegateError(f"--shard {text}: K must be between 1 and N", "shards are numbered from 1, e.g. 1/4 ... 4/4")
    return k, n


_now = utc_now


# --------------------------------------------------------------------------
# Locks
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Preparation (once per process)
# --------------------------------------------------------------------------


class Prepared:
    """A task's committed base repository and its grading tests' ids."""

    def __init__(self, base: Path, grading: Path, expected: list[str], confine: str = "auto") -> None:
        self.base = base
        self.grading = grading
        self.expected = expected
        self.confine = confine  # the grading runs' walls (the spec's `keys.confine`)


def repo_name(task: dict[str, Any]) -> str:
    repo = task["repo"]
    if repo.get("path"):
        return Path(repo["path"]).resolve().name or "repo"
    if repo.get("pypi"):
        return repo["pypi"].split("==")[0]
    return repo["git"].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "repo"


def ensure_ini(folder: Path) -> None:
    """The hidden run reads `<folder>/pytest.ini` (never the repository's): add the kit's when missing."""
    ini = folder / runner.INI_NAME
    if not ini.exists():
        ini.write_text(runner.INI_TEXT, encoding="utf-8")


def prepare(spec: Spec, task: dict[str, Any], work: Path) -> Prepared:
    base = source.prepare(task["repo"], spec.folder, work / task["name"] / repo_name(task), f"{spec.name}/{task['name']}")
    grading = spec.resolve(task["grading"])
    ensure_ini(grading)
    run = runner.run(grading, base, timeout=spec.limits["grading_timeout"], collect_only=True, confine=spec.confine)
    if not run.ok or not run.collected:
        raise DonegateError(f"task {task['name']}: the grading tests in {grading} do not collect against the repository: "
                            f"{run.problem or 'no tests'}", "fix the grading tests (run them with pytest against the repository)")
    return Prepared(base, grading, sorted(run.collected), spec.confine)


# --------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------


def kit(home: Path, *args: str, timeout: float = SETUP_TIMEOUT) -> proc.Result:
    """`python -m donegate ARGS` with the run's DONEGATE_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in DROP_ENV}
    env["DONEGATE_HOME"] = str(home)
    return proc.run([sys.executable, "-m", "donegate", *args], timeout=timeout, cwd=paths.KIT_ROOT, env=env, die_with_parent=True)


def _kit_ok(res: proc.Result, what: str) -> None:
    if res.timed_out or res.returncode != 0:
        said = (res.stderr.strip() or res.stdout.strip() or "no output").splitlines()
        raise RunFailed(f"{what} failed: " + " ".join(said[-3:])[:600])


def agent_command(spec: Spec) -> list[str]:
    agent, limits = spec.agent, spec.limits
    argv = [binary.find_claude(), "-p", "--output-format", "json", "--max-turns", str(limits["turns"]),
            "--setting-sources", agent["setting_sources"]]
    if agent["model"]:
        argv += ["--model", agent["model"]]
    return argv + ["--allowedTools", *agent["tools"]]  # last: it takes a variable number of values


_CLAUDE_VERSION: dict[str, str] = {}


def claude_version() -> str:
    """`claude --version` of the binary the runs use (once per process): every run line carries it."""
    exe = binary.find_claude()
    if exe not in _CLAUDE_VERSION:
        res = proc.run([exe, "--version"], timeout=60, env=agent_env())
        words = res.stdout.split()
        _CLAUDE_VERSION[exe] = words[0] if res.returncode == 0 and words else "unknown"
    return _CLAUDE_VERSION[exe]


def agent_model(result: dict[str, Any], spec: Spec) -> str | None:
    """The model that did the agent's work: of Claude Code's `modelUsage`, the one that cost the most
    (a session also uses a small model for titles and the like); else the one the spec asked for."""
    usage = result.get("modelUsage")
    if isinstance(usage, dict) and usage:
        def cost(item: tuple[str, Any]) -> float:
            value = item[1].get("costUSD") if isinstance(item[1], dict) else None
            return float(value) if isinstance(value, (int, float)) else 0.0
        return max(usage.items(), key=cost)[0]
    return spec.agent["model"]


def agent_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in DROP_ENV}


def _write_config(home: Path, conf: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    data = {**conf["keys"], "config": conf["name"]}
    (home / "donegate.yaml").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")  # JSON is YAML


def _drop_stop_hook(repo: Path) -> None:
    path = repo / ".claude" / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    (data.get("hooks") or {}).pop("Stop", None)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def setup(spec: Spec, run: Planned, prep: Prepared, tmp: Path, ledger_path: Path) -> tuple[Path, Path]:
    """The run's repository and DONEGATE_HOME, the kit installed and the tests sealed; (repo, home)."""
    repo = tmp / prep.base.name
    shutil.copytree(prep.base, repo, symlinks=True)
    home = tmp / "home"
    _write_config(home, run.conf)
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    (home / "ledger.jsonl").symlink_to(ledger_path.resolve())
    if run.conf.get("client") == "codex":
        pass  # the run's own CODEX_HOME gets the hooks when the session starts (`donegate.experiment.codex_runs`)
    else:
        _kit_ok(kit(home, "install", str(repo)), "donegate install")
    if run.conf["gate"] == "off" and run.conf.get("client") == "codex":
        return repo, home
    if run.conf["gate"] == "off":
        _drop_stop_hook(repo)
        return repo, home
    if run.conf["keys"].get("mode") == "retry":
        return repo, home  # the blind control reads no store: nothing to seal or write
    request = run.task["request"]
    if not run.conf["tests"]:
        folder = tmp / "placeholder"
        folder.mkdir()
        (folder / PLACEHOLDER).write_text(PLACEHOLDER_TEXT, encoding="utf-8")
        _kit_ok(kit(home, "seal", str(repo), str(folder / PLACEHOLDER), "--request", request), "donegate seal")
    elif run.task["acceptance"] == "writer":
        res = kit(home, "write", str(repo), "--request", request)
        if res.timed_out or res.returncode != 0:
            failed = RunFailed("donegate write failed: " + " ".join((res.stderr.strip() or "no output").splitlines()[-3:])[:600])
            failed.cost = writer_failed_cost(ledger_path, repo)
            raise failed
    else:
        folder = spec.resolve(run.task["acceptance"])
        files = sorted(str(p) for p in folder.glob("test_*.py"))
        _kit_ok(kit(home, "seal", str(repo), *files, "--request", request), "donegate seal")
    return repo, home


def grade(prep: Prepared, repo: Path, timeout: float) -> tuple[dict[str, bool], str]:
    """{grading test id: passed} against what the agent left, and the run's problem if any."""
    res = runner.run(prep.grading, repo, timeout=timeout, expected=prep.expected, confine=prep.confine)
    passing = set(res.passing())
    return {t: t in passing for t in prep.expected}, res.problem


def acceptance_at_end(home: Path, repo: Path, timeout: float, confine: str = "auto") -> list[str]:
    """The sealed acceptance tests still failing when the run ended (for the `likely unjustified` rule)."""
    from donegate.seal import store

    try:
        st = store.load(repo, home)
    except DonegateError:
        return []
    if st is None or PLACEHOLDER in st.manifest.get("files", {}):
        return []
    res = runner.run(st.path, repo, timeout=timeout, confine=confine)
    return sorted(res.failing())


def execute(spec: Spec, run: Planned, prep: Prepared, ledger_path: Path, *, keep: bool = False,
            err: TextIO | None = None, scripted: bool = False) -> dict[str, Any]:
    """Carry out one run and append its `run` line; RunFailed when it could not be carried out."""
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f"donegate-exp-{run.task['name']}-{run.conf['name'].replace('+', '-')}-"))
    try:
        repo, home = setup(spec, run, prep, tmp, ledger_path)
        writer = writer_cost(home)
        codex = run.conf.get("client") == "codex"
        if codex:
            from donegate.experiment import codex_runs

            codex_conf = spec.resolve(spec.agent["codex_config"]) if spec.agent["codex_config"] else None
            env = {**agent_env(), **codex_runs.setup(run.conf, home, tmp, codex_conf)}
            argv = codex_runs.command(repo, spec.agent["model"])
        else:
            env, argv = agent_env(), agent_command(spec)
        try:
            res = proc.run(argv, timeout=spec.limits["time"], cwd=repo, env=env, input=run.task["request"],
                           die_with_parent=True)
        finally:
            if codex:
                codex_runs.reap_helpers(repo)
        result = codex_runs.parse_events(res.stdout) if codex else parse_result(res.stdout)
        if result is None and not res.timed_out:
            said = (res.stderr.strip() or res.stdout.strip() or "no output").splitlines()
            tail = (next((s for s in said if s.startswith("Error")), said[-1]) if codex else said[-1])[:300]
            raise RunFailed(f"the agent's session ended without a result (exit {res.returncode}): {tail}", writer)
        result = result or {}
        text = str(result.get("result") or "")
        if result.get("is_error") and (result.get("api_error_status") or text.startswith("API Error") or "/login" in text):
            raise RunFailed(f"the agent's session failed at the API: {text[:300]}",
                            writer + float(result.get("total_cost_usd") or 0))
        session = str(result.get("session_id") or "")
        lines = session_lines(ledger_path, session, repo)
        account = gate_account(lines)
        session = session or next((str(r["session"]) for _, r in lines if r.get("event") == "stop"), "")
        requirements, problem = grade(prep, repo, spec.limits["grading_timeout"])
        at_end = acceptance_at_end(home, repo, spec.limits["grading_timeout"], spec.confine) if account["blocks"] else []
        known = writer + account["reviewer"]
        cost: dict[str, Any]
        if codex:  # Codex reports tokens, not cost: the agent's share is unknown, never 0
            cost = {"agent": None, "writer": round(writer, 6), "reviewer": account["reviewer"], "total": None,
                    "estimate": round(known, 6), "unknown": "Codex CLI reports no cost", "usage": result.get("usage")}
        elif res.timed_out and "total_cost_usd" not in result:
            # Killed at its time limit: Claude Code reports the cost only at the end. Unknown, never 0;
            # `--max-cost` counts the estimate (the configuration's earlier runs, else the prior).
            guess = estimate.agent_cost(events(ledger_path, "run"), spec.name, run.conf["name"], scripted)
            cost = {"agent": None, "writer": round(writer, 6), "reviewer": account["reviewer"], "total": None,
                                    "estimate": round(known + guess, 6), "unknown": "the session was killed at its time limit"}
        else:
            agent_cost = float(result.get("total_cost_usd") or 0)
            cost = {"agent": round(agent_cost, 6), "writer": round(writer, 6), "reviewer": account["reviewer"],
                    "total": round(agent_cost + known, 6)}
        record = {
            "event": "run", "time": _now(),
            "experiment": spec.name, "task": run.task["name"], "config": run.conf["name"], "rep": run.rep,
            "met": sum(requirements.values()), "of": len(requirements), "requirements": requirements,
            "cost": cost,
            "turns": int(result["num_turns"]) if isinstance(result.get("num_turns"), int) else None,
            "duration": round(time.monotonic() - t0, 2),
            "stops": account["stops"], "blocks": account["blocks"], "gave_up": account["gave_up"],
            "appeals": account["appeals"], "result": text[:RESULT_CHARS],
            "key": run.key, "spec": run.fingerprint, "session": session or None,
            "subtype": "timeout" if res.timed_out else result.get("subtype"),
            "last_verdict": account["last"], "refusals": account["refusals"],
            "blocked_by": account["blocked_by"], "appeal_refs": account["appeal_refs"], "acceptance_failing": at_end,
            "grading_problem": problem or None,
            # what ran it: the report groups by these and says when an experiment's runs were mixed
            "agent_model": agent_model(result, spec),
            **({"client": "codex", "codex_version": codex_runs.version()} if codex else {"claude_version": claude_version()}),
            "kit_version": __version__,
            "spec_hash": spec.digest(), "source": "scripted" if scripted else "live",
        }
        return ledger.append(record, ledger_path)
    finally:
        if keep:
            (err or sys.stderr).write(f"donegate: kept {tmp} ({run.key})\n")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# The whole experiment
# --------------------------------------------------------------------------


def run_experiment(spec: Spec, ledger_path: Path, *, jobs: int, max_cost: float | None, shard: tuple[int, int] | None,
                   keep: bool = False, err: TextIO | None = None, scripted: bool = False) -> dict[str, Any]:
    """Do every planned run without a line; {"planned", "done", "new", "failed", "skipped_budget", "busy", "spent"}."""
    err = err or sys.stderr
    runs = plan(spec, shard)
    have = recorded(ledger_path, spec.name)
    for r in runs:
        rec = have.get(r.key)
        if rec is not None and rec.get("spec") != r.fingerprint:
            raise DonegateError(
                f"the ledger {ledger_path} already holds run {r.key} of another version of the spec "
                f"(task or configuration changed since)",
                "give the changed experiment a new `experiment:` name, or use another --ledger",
            )
    todo = [r for r in runs if r.key not in have]
    spent_runs = [estimate.counted_cost(have[r.key]) for r in runs if r.key in have]
    spent = sum(spent_runs) + failed_cost(ledger_path, spec.name)
    progress = Progress(err, len(runs), len(runs) - len(todo), spent, jobs, scripted)
    summary: dict[str, Any] = {"planned": len(runs), "done": len(runs) - len(todo), "new": 0, "failed": 0, "skipped_budget": 0,
               "busy": 0, "spent": spent, "failures": [], "stopped": 0}
    if not todo:
        progress.show("nothing left to run")
        progress.end()
        return summary
    costs = list(spent_runs)  # costs of completed runs, for the average
    work = Path(tempfile.mkdtemp(prefix="donegate-exp-base-"))
    prepared: dict[str, Prepared] = {}

    try:  # every task ready (and its grading tests collected) before any money is spent
        for r in todo:
            if r.task["name"] not in prepared:
                prepared[r.task["name"]] = prepare(spec, r.task, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise

    def one(r: Planned) -> tuple[str, Any]:
        key_lock = KeyLock(ledger_path, r.key)
        if not key_lock.acquire():
            return "busy", None
        try:
            if r.key in recorded(ledger_path, spec.name):  # another process finished it meanwhile
                return "busy", None
            try:
                return "ok", execute(spec, r, prepared[r.task["name"]], ledger_path, keep=keep, err=err, scripted=scripted)
            except RunFailed as exc:
                ledger.append({"event": "run_failed", "time": _now(), "experiment": spec.name, "task": r.task["name"],
                               "config": r.conf["name"], "rep": r.rep, "key": r.key, "error": exc.message,
                               "cost": {"total": round(exc.cost, 6)}}, ledger_path)
                return "failed", exc
        finally:
            key_lock.release()

    def may_start(inflight: int) -> bool:
        if max_cost is None:
            return True
        if not costs:  # no average yet: one run at a time until there is one
            return inflight == 0 and summary["spent"] < max_cost
        avg = sum(costs) / len(costs)
        return summary["spent"] + (inflight + 1) * avg <= max_cost

    progress.show()
    pending = list(todo)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            inflight: dict[Any, Planned] = {}
            while pending or inflight:
                while pending and len(inflight) < jobs and may_start(len(inflight)):
                    r = pending.pop(0)
                    inflight[pool.submit(one, r)] = r
                if not inflight:
                    break  # the budget stops what is left
                try:
                    finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    # Like kill -9, but said: the runs in flight die with this process (their sessions
                    # were started to), their keys have no line, and the next call does them again.
                    progress.end()
                    err.write(f"donegate: interrupted; {len(inflight)} run(s) in flight dropped, run again to resume\n")
                    err.flush()
                    os._exit(130)
                for fut in finished:
                    r = inflight.pop(fut)
                    status, value = fut.result()
                    if status == "ok":
                        cost = estimate.counted_cost(value)
                        costs.append(cost)
                        summary["spent"] += cost
                        summary["new"] += 1
                        summary["done"] += 1
                        progress.done += 1
                        progress.new += 1
                        note = f"{r.key}: {value['met']}/{value['of']}"
                    elif status == "failed":
                        summary["spent"] += value.cost
                        summary["failed"] += 1
                        summary["failures"].append(f"{r.key}: {value.message}")
                        progress.failed += 1
                        note = f"{r.key} FAILED: {value.message[:200]}"
                    else:
                        summary["busy"] += 1
                        note = f"{r.key}: recorded or running elsewhere, skipped"
                    progress.spent = summary["spent"]
                    progress.show(note)
                    if summary["failed"] >= FAIL_FAST and not summary["new"] and pending:
                        # The first runs all failed: most likely the same cause (no login, no key, a bad
                        # spec entry) for every run; say so instead of failing every run the same way.
                        summary["stopped"] = len(pending)
                        pending.clear()
    finally:
        progress.end()
        shutil.rmtree(work, ignore_errors=True)
    summary["skipped_budget"] = len(pending)
    return summary


def dry_run(spec: Any, ledger_path: Path, *, jobs: int, shard: tuple[int, int] | None, scripted: bool = False) -> dict[str, Any]:
    """The runs `experiment run` would do now (those without a line), each with its estimate, and the
    totals: cost (of the runs with an estimate), time at `jobs` at a time, and the time limit's bound."""
    runs = plan(spec, shard)
    have = recorded(ledger_path, spec.name)
    todo = [r for r in runs if r.key not in have]
    by_conf = estimate.per_configuration(events(ledger_path, "run"), spec.name, [c["name"] for c in spec.configurations], scripted)
    rows = [{"key": r.key, "config": r.conf["name"], "cost": by_conf[r.conf["name"]].cost,
             "seconds": by_conf[r.conf["name"]].seconds} for r in todo]
    costs = [x["cost"] for x in rows if x["cost"] is not None]
    seconds = [x["seconds"] for x in rows if x["seconds"] is not None]
    waves = -(-len(todo) // max(1, jobs))  # runs in a row on one job slot
    return {
        "planned": len(runs), "recorded": len(runs) - len(todo), "runs": rows,
        "configurations": {name: {"cost": e.cost, "seconds": e.seconds, "source": e.source, "from_runs": e.runs,
                                  "todo": sum(1 for x in rows if x["config"] == name)} for name, e in by_conf.items()},
        "cost": round(sum(costs), 4), "unestimated": len(rows) - len(costs),
        "seconds": round(sum(seconds) / max(1, jobs), 1) if seconds else None, "seconds_bound": waves * float(spec.limits["time"]),
        "jobs": jobs, "scripted": scripted,
    }
