"""The acceptance stage: the hidden tests, in an isolated interpreter (`donegate.hidden.runner`), within the time
the stop's deadline leaves; every sealed test must report. A run that passes is run again by the second
harness (`donegate.hidden.second`): the stop passes only when both agree.

`start` begins both runs at once, each in a thread of the hook (the runs themselves are child processes,
each in its own copy of the tree), so the stages that only read (scope, scan, the transcript) go on beside
them, and a pass costs the slower run, not the two in turn. `finish` waits for the first; when its verdict
needs no second opinion (a block), the second run is cancelled and not waited for.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Callable

    from donegate.tree import statcache
    from donegate.hidden import second as second_run

from donegate.core import proc
from donegate.seal import store
from donegate.hidden import runner
from donegate.gate.stop import stage, time_left


class _Thread:
    """One run going on in a thread: `join()` gives what it returned, or raises what it raised."""

    def __init__(self, name: str, go: Callable[[Callable[[int], None]], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.pid: int | None = None
        self.cancelled = False
        self.begun = threading.Event()  # its child process runs (or it never will: it ended, or raised)
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._go, args=(go,), name=name, daemon=True)
        self.thread.start()

    def _started(self, pid: int) -> None:
        with self._lock:
            self.pid = pid
            if self.cancelled:
                proc.cancel(pid)
        self.begun.set()

    def _go(self, go: Callable[[Callable[[int], None]], Any]) -> None:
        try:
            self.result = go(self._started)
        except BaseException as exc:  # raised again in the stop's own thread by join()
            self.error = exc
        finally:
            self.begun.set()

    def join(self, timeout: float | None = None) -> Any:
        """What the run returned (None when it is still going after `timeout` seconds)."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            return None
        if self.error is not None:
            raise self.error
        return self.result

    def cancel(self) -> None:
        """End the run if it started, or as it starts; its copy is put back by its thread, not waited for."""
        with self._lock:
            self.cancelled = True
            if self.pid is not None:
                proc.cancel(self.pid)


class Running:
    """The hidden runs going on: `finish()` gives the gate and the first run, or raises what a run raised.
    Their mirrors are put back after the hook's answer (`donegate.hidden.copy.after_answer`)."""

    def __init__(self, repo: Path, st: store.Store, cfg: dict[str, Any], root: Path | None = None,
                 tree: statcache.Tree | statcache.Pending | None = None, every: bool = False,
                 key: str | None = None) -> None:
        from donegate.hidden import confine as walls, python as pyenv  # EnvProblem: raised to the stop, which hands over
        from donegate.hidden.channel import HARD

        self.st, self.cfg = st, cfg
        review = cfg["review_timeout"] if cfg["review"] != "off" else 0
        self.timeout = min(cfg["timeout"], max(0.0, time_left(cfg["timeout"] + review) - review))
        self.launch = pyenv.sealed(st.manifest, repo)  # in the stop's own thread: a broken environment raises here
        # The environment's pytest plugins the seal recorded, those still as sealed (a changed one is not loaded).
        plugins: list[str] = []
        hidden: list[str] = []
        self.plugins_changed: list[str] = []
        if st.manifest.get("plugins"):  # most projects have none: the module stays off the stop's imports
            from donegate.hidden import plugins as env_plugins

            plugins, self.plugins_changed = env_plugins.loadable(st.manifest["plugins"], self.launch)
            hidden = env_plugins.hidden_ones(st.manifest["plugins"], plugins)  # the project's own: its suite only
        # evidence is never waved through; `seal --allow`: this repository's own; the seal's baseline: what the
        # unchanged project already trips, and its own lines the scan found (`hidden.plugin.Reporter.own`)
        allow = tuple(r for r in (*(cfg.get("scan_allow") or ()), *(st.manifest.get("allow") or ()))
                      if r not in HARD) + own_marks(st.manifest)
        self.allow = allow  # the project's own suite runs under the same (`donegate.gate.own_suite`)
        self.plugins = plugins  # and loads the same plugins
        tests = st.tests()
        # The second opinion needs the whole sealed list passing in the first run; it starts now on that
        # bet (a pass is the case worth making fast), in the walls the first run gets, and is cancelled
        # as soon as a test of the first run does not pass (`cancel`: also when that comes before it exists).
        kind = walls.choose(cfg["confine"])
        self.second: _Thread | None = None
        self.progress: list[int] = []  # a line per test the second run has reported
        self.every = every  # the second run checks every sealed test (`start`)
        self.tests = len(tests)
        self.t0 = time.monotonic()
        # The secret `dg_random` draws from at this stop, for both runs (the second is sent each test's own seed): the
        # one the launcher drew for the first run it started early, if it did (`donegate.hidden.early`).
        from donegate.hidden import early

        seed = early.seed()
        begun = bool(seed)  # the first run's process runs already (the launcher's): its walls wait for nothing
        seed = seed or os.urandom(16).hex()
        self._cancelled = False
        # How many tests the second run had reported when the first run's block stopped it: the ledger says so
        # (`gates.acceptance.second.stopped`); a disagreement it would have found is seen at the next stop that passes.
        self._stopped: int | None = None
        # The first run (pytest: the one a stop waits for) starts first: its thread gets to its process sooner.
        self.first = _Thread("donegate-hidden-run", lambda started: runner.run(
            st.path, repo, timeout=self.timeout, expected=tests, confine=cfg["confine"],
            project=Path(self.launch.front[0]), python=self.launch, allow=allow, root=root, tree=tree,
            started=started, failed=self.cancel, later=True, seed=seed, last=sorted(st.manifest.get("held") or ()),
            plugins=hidden, key=key, own_pytest=str(st.manifest.get("own_pytest") or ""), early=True))
        # The second run's walls wait until the first run's process runs: built at once, they took the interpreter
        # lock from the first run's own (its process started 5-25 ms later, and a stop waits for that run).
        if not begun:
            self.first.begun.wait(min(5.0, max(0.0, time_left(cfg["timeout"]))))
        if tests:
            from donegate.hidden import second

            # Every test up to 200; above, every new requirement and a share of the rest drawn at this stop; every
            # test after a disagreement earlier in the session (`every`: a stop retried is no fresh draw).
            share = second.drawn(tests, st.manifest, every)
            self.tests = len(share)
            # Its own limit is the stop's (`finish` ends it sooner: `_second_limit`), so a second run slower than
            # the first is never killed at the configured timeout while the stop still has time for it.
            # Both second runs of this stop (the share, and `_confirm`'s) with the same walls, interpreter and seed.
            # pytest's first test (the held-back ones run last) is judged there after a warm-up round of itself
            held = set(st.manifest.get("held") or ())
            again = functools.partial(second.run, st.path, repo, kind=kind, allow=allow, python=self.launch, seed=seed,
                                      sealed=tests, key=key, first=next((t for t in tests if t not in held), None))
            self.second = _Thread("donegate-second-run", lambda started: again(
                share, timeout=max(self.timeout, time_left(4 * self.timeout + 60)), root=root, tree=tree, started=started,
                later=True, progress=self.progress, of=len(tests) if len(share) < len(tests) else 0))
            # A disagreement in a share is checked again with every sealed test before it (`_confirm`), in a
            # throwaway copy: the mirror holds what the share's tests wrote.
            self._again: Callable[[list[str], float], second_run.SecondRun] = lambda ids, limit: again(ids, timeout=limit)
            self.sealed = tests
            if self._cancelled:  # a test of the first run failed already
                self.second.cancel()

    def begun(self, timeout: float) -> None:
        """Wait (at most `timeout` s) until both runs' processes are started (before the stop's look).
        Starting them (the walls, a fork) is Python work in the hook, as are the look and the stages that read
        beside the runs: done first, it is not slowed by them (one interpreter lock), and each run's import of
        pytest, what a run then waits for, begins sooner (15,000 files, interleaved: 0.835)."""
        for t in (self.first, self.second):
            if t is not None:
                t.begun.wait(timeout)

    def finish(self) -> tuple[dict[str, Any], runner.TestRun]:
        stage("the hidden test run")
        _warm()
        try:
            run = self.first.join()
        except BaseException:
            self.cancel()
            raise
        gate = _gate(run, self.st, self.cfg, self.timeout, self.launch)
        if self.plugins_changed:  # not loaded: their fixtures are missing, and the tests that use them fail
            gate["plugins_not_loaded"] = self.plugins_changed[:20]
        # A pass, or a pass but for a tripwire honest code trips too: the second opinion decides whether
        # the product behaves differently under pytest (hard evidence then replaces the soft finding).
        from donegate.hidden.channel import HARD

        if self.second is not None and self._stopped is None and not gate["failed"] and (
                gate["ok"] or run.tamper and run.tamper_rule not in HARD and len(run.passing()) == gate["total"]):
            stage("the second run")
            two = self.second.join(self._second_limit(run.duration))
            if two is None:  # it could not finish in the time this stop has: a person's, not a block
                self.second.cancel()
                _unfinished(gate, len(self.progress), self.tests, time.monotonic() - self.t0, run.duration)
                run.faithful = False
            else:
                two = self._confirm(two, run.duration)
                _second(two, gate)
                if self.every:  # the ledger says why a large suite was checked whole
                    gate["second"]["every"] = "the runs disagreed earlier in this session"
                run.faithful = run.faithful and two.faithful  # the verdict cache keeps what both runs saw
        else:
            self.cancel()
            if self.second is not None:
                reported = len(self.progress) if self._stopped is None else self._stopped  # a line a test, then `done`
                gate["second"] = {"stopped": STOPPED, "reported": min(reported, self.tests), "of": self.tests}
        return gate, run

    def _confirm(self, two: second_run.SecondRun, first: float) -> second_run.SecondRun:
        """A share (`second.drawn`) leaves out tests a later one may need (a file an earlier test wrote): a test it
        failed that pytest passed is run again with every sealed test before it, in pytest's order. Passing
        then, it is cleared; failing again, or anything but a failure (the probe's evidence), the runs disagree.
        Code right only under pytest fails both times, so this costs a block nothing and an honest suite a run."""
        failed = [i for i, r in two.results.items() if r.get("outcome") not in ("passed", "unsupported")]
        if not two.of or not failed or any(two.results[i].get("outcome") != "failed" for i in failed):
            return two
        wanted = set(failed)
        last = max(k for k, t in enumerate(self.sealed) if t in wanted)
        again = self._again(self.sealed[: last + 1], self._second_limit(first))
        if again.tamper:
            again.of = two.of
            return again
        if again.problem or any((again.results.get(i) or {}).get("outcome") != "passed" for i in failed):
            return two
        for i in failed:
            two.results[i] = again.results[i]
        two.tamper = two.rule = ""
        two.confirmed = {"tests": len(again.results), "cleared": failed[:20]}
        two.faithful = two.faithful and again.faithful
        return two

    def _second_limit(self, first: float) -> float:
        """How much longer the stop waits for the second run, the first done: until the configured timeout, or
        twice the first run's own duration and 10 s (both ran at once on shared cores), whichever is later, as
        far as the stop's deadline allows."""
        spent = time.monotonic() - self.t0
        return max(0.0, min(time_left(4 * self.timeout + 60) - spent, max(self.timeout, 2 * first + 10.0) - spent))

    def cancel(self) -> None:
        """The first run blocks (a test did not pass, a file did not collect): the second run is of no use to this stop,
        ended now or as it starts. How many tests it had reported by then goes to the ledger (`finish`)."""
        self._cancelled = True
        if self._stopped is None:
            self._stopped = len(self.progress)
        if self.second is not None:
            self.second.cancel()

    def abandon(self, wait: float = 0.5) -> None:
        """The stop needs no run (its verdict came from the cache, or a stage failed): both runs end, started or
        not, and their threads are given `wait` seconds to let their mirrors go (their put-back is queued)."""
        for t in (self.first, self.second):
            if t is not None:
                t.cancel()
        for t in (self.first, self.second):
            if t is not None:
                t.thread.join(wait)


STOPPED = "not needed: the first run blocked"  # the ledger's `second.stopped` at a stop its first run blocks


def start(repo: Path, st: store.Store, cfg: dict[str, Any], root: Path | None = None,
          tree: statcache.Tree | statcache.Pending | None = None, every: bool = False,
          key: str | None = None) -> Running:
    """The runs begun; with the state root and the stop's look at the tree, each works in one of the tree's
    mirrors (`donegate.hidden.copy`), brought in step by what changed. With the look still to come
    (`statcache.Pending`), a confined run's interpreter starts now and waits: it goes on once its mirror is
    in step with the look, and is ended when the stop wants no run after all (`abandon`). `every`: the second
    run checks every sealed test, however many (the runs disagreed earlier in the session). `key`:
    `paths.repo_key(repo)`, derived once by the stop (`donegate.gate.context`), naming the mirrors and bytecode."""
    return Running(repo, st, cfg, root, tree, every, key)


def acceptance_gate(repo: Path, st: store.Store, cfg: dict[str, Any]) -> tuple[dict[str, Any], runner.TestRun]:
    return start(repo, st, cfg).finish()


def _gate(run: runner.TestRun, st: store.Store, cfg: dict[str, Any], timeout: float, launch: Any) -> dict[str, Any]:
    if run.problem and timeout < cfg["timeout"] and "timeout" in run.problem:
        run.problem += (f" (the stop's deadline left it {timeout:.1f} of the {cfg['timeout']:g} s configured: "
                        "an earlier stage was slow)")
    failing = run.failing()
    gate = {
        "ok": run.ok and not failing,
        "total": st.manifest["count"],
        "passed": len(run.passing()),
        "failed": len(failing),
        "failing": [{"id": k, "message": v[:1000]} for k, v in failing.items()],
        "problem": run.problem,
        "duration": round(run.duration, 4),
        "copy": round(run.copy_duration, 4),
        "confinement": run.confinement,
    }
    if run.seed:  # what `dg_random` drew from: the ledger's only (the agent is never shown it)
        gate["seed"] = run.seed
    if run.early:  # the launcher started its process from the last stop's recipe: adopted, or ended as stale
        gate["early"] = run.early
    held = st.manifest.get("held") or {}
    if held:  # the report's hard-coding rate: a held-back test failed while every shown one passed
        from donegate.seal.held import stats

        gate["held_back"] = stats(held, list(failing), run.ok)
    if run.tamper:
        gate["tamper"] = {"what": run.tamper, "changed": run.tamper_keys, "rule": run.tamper_rule}
        if len(run.alarms) > 1:  # every tripwire the run reported (at most 20), not the first alone
            gate["tamper"]["alarms"] = [{"rule": r, "what": w} for r, w in run.alarms]
    if run.note:
        gate["note"] = run.note
    if run.environment:
        gate["environment"] = run.environment
    if failing and run.imports:  # a test fails on a module not found: say when it is the environment's
        from donegate.hidden import missing

        found = missing.missing_module(run.imports, launch, Path(launch.front[0]), st.path)
        if found is not None:
            gate["missing"] = f"{found[0]} (fix: {found[1]})"
    return gate


CAPPED = ", and callers past them unread"  # traces.TRACE_CAPPED, unimported on a passing stop (test_redteam_traces)


def own_marks(manifest: dict[str, Any]) -> tuple[str, ...]:
    """What the seal's baseline says the unchanged project already does, for the run's plugin (beside the rules
    allowed): `own:RULE:WHAT` a tripwire it tripped at the seal, `line:FILE:CODE` a line the scan found in it, and
    `imports-pytest` when it already imported pytest."""
    from donegate.hidden.channel import HARD

    out = [f"own:{t['rule']}:{t['what']}" for t in manifest.get("tripwire_baseline") or ()  # a capped place: the change's
           if isinstance(t, dict) and t.get("rule") not in HARD and CAPPED not in str(t.get("what"))]
    for name, items in (manifest.get("scan_baseline") or {}).items():
        out += [f"line:{name}:{code}" for _rule, code, *_ in items if code]
        if any(rule == "imports-pytest" for rule, *_ in items):
            # The unchanged project imports pytest (it is a pytest plugin): its product needs pytest importable, as
            # the second run then offers it (never running); a new import of it in the change is still the scan's.
            out.append("imports-pytest")
    return tuple(dict.fromkeys(out))


def _unfinished(gate: dict[str, Any], done: int, total: int, waited: float, first: float) -> None:
    """The first run passed and the second could not finish within the stop's time: no evidence against the
    work, none for it either. The stop goes to a person (`gates.handover`: `second-run-time`), never blocks."""
    gate["ok"] = False
    gate["problem"] = (f"the second run of the hidden tests could not finish in this stop's time: it had checked "
                       f"{done} of {total} tests after {waited:.0f} s (the first run took {first:.1f} s)")
    gate["second"] = {"checked": done, "of": total, "unfinished": True, "duration": round(waited, 4)}
    gate["handover"] = "second-run-time"


def _second(two: second_run.SecondRun, gate: dict[str, Any]) -> None:
    """The second opinion on a pass: a disagreement blocks as tampering, a run that did not finish blocks."""
    from donegate.hidden.channel import HARD

    gate["second"] = two.summary()
    if two.tamper and two.rule in HARD:  # remembered by the session's counters (`breaker`): hard evidence
        gate["second"]["disagreement"] = two.rule
    if gate.get("tamper") and not (two.tamper and two.rule in HARD):
        return  # the first run's finding stands
    if two.tamper:
        gate["ok"] = False
        gate["problem"] = two.tamper
        gate["tamper"] = {"what": two.tamper, "changed": [], "rule": two.rule}
    elif two.problem:
        gate["ok"] = False
        gate["problem"] = two.problem


def _warm() -> None:
    """What every full stop imports once its runs are done (the verdict's wording, the ledger, the stop's CPU), imported
    while the first run goes on and the hook only waits: between the run's last byte and the answer they were
    1-2 ms of imports (strace: seal/held, ledger/chain, resource after the run's exit)."""
    import resource  # noqa: F401

    from donegate.ledger import chain  # noqa: F401
    from donegate.seal import held  # noqa: F401
