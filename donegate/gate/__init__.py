"""The Stop hook. Its stages are this package's files, in the order a stop runs them:

    integrity.py   the store matches its manifest and its seal record
    acceptance.py  the hidden runs start, in child processes that import pytest and wait for their copies
    (the look)     one stat walk of the working tree (`donegate.tree.statcache`) for the runs' copies (its part
                   without the shared environments first: the runs go on then), the cache key, scope and scan;
                   when `donegate.tree.verdict_cache` has this tree's verdict, the runs are ended; while they run, the
                   stages that only read:
      leaks.py       the transcript scan (a leak is told, never blocks on its own)
      scan.py        the ast scan of the product files changed since the seal
      scope.py       protected files unchanged; with `allowed`, nothing changed outside it
    acceptance.py  the run's results: every sealed test must report and pass
    review_gate.py the reviewers (optional)
    feedback.py    what the agent is told
    appeal.py      `APPEAL: <reason>` lets a blocked stop through to a person
    breaker.py     blocks counted per session; the session handed to a person when the loop stops paying
    record.py      the ledger line

`stop.py` holds the stop in progress (deadline, stage, log); `watchdog.py` answers when the deadline
passes; `inputs.py` reads stdin and the environment; the outcome is `donegate.core.outcome`.

`evaluate` decides; `run_hook` wraps it so that whatever happens the hook exits 0 (stop allowed) or
2 (blocked), writes exactly one ledger line, and never shows the agent a traceback. Claude Code treats
any other exit code, a crash or a timeout as "let the agent stop", so failing closed is done here.
"""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.tree import verdict_cache as cache, git, statcache
from donegate import config, paths
from donegate.core import deadline, proc
from donegate.sessions import ids as sessions
from donegate.seal import store
from donegate.errors import ConfigError, DonegateError, StoreError
from donegate.gate import acceptance, breaker, feedback, integrity, leaks, once, own_suite, record, review_gate, scan, scope, watchdog as _watchdog
from donegate.gate.context import StopContext
from donegate.gate.inputs import client_of, parse_payload, weakened_env
from donegate.gate.scope import scope_gate
from donegate.gate.stop import AFTER_RUN, STOP as _STOP, fault as _fault, log_exception as _log_exception, stage as _stage
from donegate.gate.stop import time_left
from donegate.gate.watchdog import budget as _budget
from donegate.core.outcome import ALLOW, BLOCK, Outcome, render

# What other modules and the tests use of the hook, kept where they have always found it.
__all__ = ["ALLOW", "BLOCK", "Outcome", "evaluate", "render", "run_hook", "scope_gate", "time_left",
           "_STOP", "_budget", "_log_exception"]


def evaluate(ctx: StopContext, repo_arg: str | None = None, managed: bool = False) -> Outcome:
    """The stop's verdict: the repository found (once, into `ctx`), then its stages (`_evaluate`)."""
    from donegate.tree import repo as where

    payload, root = ctx.payload, ctx.root
    target = where.locate(payload, root, repo_arg, managed)
    if target is None or target.moved_from is None and not ctx.at(target).has_record():
        target = _below(payload, root) or target  # a monorepo's root: the sealed package the session changed
    if target is None:
        out = Outcome("unsealed", ALLOW)
        out.quiet = True
        return out
    if target.moved_from is not None:
        return moved(target, payload)
    ctx.at(target)
    paths.check_outside(target.tree, root)
    if ctx.cfg["mode"] == "retry":  # the blind control: no store, no test, no appeal (there is no test to appeal)
        from donegate.gate import retry

        out = retry.outcome()
        out.repo = str(target.tree)
        return out
    out = _evaluate(ctx)
    out.repo = str(target.tree)
    out.gates["found"] = target.found_from  # which folder named the tree: the session's, the cwd, the hook's --repo
    if target.tree != target.sealed:
        out.gates["sealed"] = str(target.sealed)  # the working tree judged is another one of the sealed repository
    if out.verdict != "block" or ctx.cfg["appeal"] != "on":
        return out  # nothing to appeal (`appeal.consider`): its module (a regex compiled at import, ~1 ms) stays unloaded
    from donegate.gate import appeal

    return appeal.consider(out, payload, ctx.cfg, root, target.tree, ctx.session, sealed=target.sealed,
                           manifest=ctx.store.manifest if ctx.store is not None else None)


def _below(payload: dict[str, Any], root: Path) -> Any:
    from donegate.tree import repo as where

    def changed(t: Any) -> bool:
        t.key = paths.repo_key(t.sealed)  # the stop's context takes both (`StopContext.at`)
        t.record = store.read_record(t.sealed, root, t.key)
        st = store.load(t.sealed, root, key=t.key, record=t.record)
        names = git.changed_since(t.tree, st.manifest["base"]) if st is not None else []
        return any(n not in store.KIT_FILES for n in names)  # an install's own files are not a change

    start = where.project_dir(payload) or Path(payload.get("cwd") or ".")
    found = where.touched_below(start, root, changed)
    if found is not None:
        found.found_from = "subfolder"
    return found


def moved(target: Any, payload: dict[str, Any]) -> Outcome:
    """A sealed repository at a path it was not sealed at (or gone from it): nothing the agent can fix.
    The stop is handed to a person at once, with the one command that fixes it; no test ran, so it
    never counts as failing tests."""
    old = target.moved_from
    if target.tree == target.sealed:  # the hook names a repository that is gone, and the session is nowhere we know
        cwd = payload.get("cwd") or "this folder"
        what = f"the sealed repository {old} is gone (moved or deleted)"
        fix = f"donegate relocate {old} NEW_PATH (where it is now), or donegate uninstall here; stop in {cwd} was not judged"
    else:
        what = f"this repository was sealed at {old} and is now at {target.tree}"
        fix = f"donegate relocate {old} {target.tree}"
    msg = f"donegate: {what}: the stop was NOT verified; a person must run: {fix}"
    out = Outcome("gave_up", ALLOW, gates={"moved": {"from": old, "to": str(target.tree)},
                                           "breaker": {"gave_up": "moved", "was": "moved"}},
                  system_message=msg, repo=str(target.tree))
    return out


def _evaluate(ctx: StopContext) -> Outcome:
    """The stages, on `ctx.tree` (the working tree judged) against the seal of `ctx.sealed`."""
    payload, cfg, root, repo, tree = ctx.payload, ctx.cfg, ctx.root, ctx.sealed, ctx.tree
    assert repo is not None and tree is not None
    record: Any
    try:
        record = ctx.record()
    except StoreError:
        record = store.READ  # the store check reads it and says what is wrong with it
    st, sealed, _ = integrity.check(repo, root, ctx.session, key=ctx.key, record=record)
    if sealed["ok"] is False:
        return Outcome("block", BLOCK, gates={"integrity": sealed},
                       reason=f"donegate: {sealed['problem']}; the session needs a person to re-seal the tests",
                       failing=["integrity"])
    store.sweep(repo, root, key=ctx.key, record=record)  # copies of the tests a crashed seal left beside the store
    if st is None:
        msg = f"donegate: no acceptance tests are sealed for {repo}; the stop was allowed unchecked"
        return Outcome("unsealed", ALLOW, system_message=msg, gates={"integrity": sealed})
    if tree != repo:
        st = store.Store(tree, st.path, st.manifest, sealed_at=repo)
    ctx.store = st
    repo = tree
    gates: dict[str, Any] = {"integrity": sealed}
    from donegate.hidden.python import EnvProblem

    # The hidden runs start first: their interpreters import pytest while the hook takes its look at the
    # working tree, and a confined run goes on once its mirror is in step with the part of that look it copies
    # (`statcache.Pending`). When the verdict comes from the cache instead, they are ended (`abandon`), and
    # what they did in their mirrors is put back.
    pending = statcache.Pending(statcache.stat_path(ctx.tree, root, ctx.tree_key)) if _looks(cfg) else None
    try:
        # After a disagreement of the runs in this session, every later stop checks every sealed test again.
        started = acceptance.start(repo, st, cfg, root, pending, every=breaker.disagreed(root, ctx.session) > 0,
                                   key=ctx.key)
    except EnvProblem as exc:
        return _environment(gates, exc.message, exc.fix or "")
    running: acceptance.Running | None = started
    own_runs: own_suite.OwnRuns | None = None
    try:
        # Their processes first: what starts them (the walls, a fork) is Python in this interpreter, as the
        # look is, and each run's import of pytest, not the look, is what a run waits for (15,000 files).
        started.begun(timeout=min(5.0, max(0.0, time_left(cfg["timeout"]))))
        # The own suite's sealed run begins too (its interpreter imports pytest while the hook looks); the look
        # tells it which sealed files the change reaches (`own_suite.OwnRuns.chosen`).
        own_runs = own_suite.start(repo, st, cfg, started.launch, started.allow, pending, root, ctx.key,
                                   started.plugins) if pending is not None else None
        # One look at the working tree (stat only; a file is read again only if its stat moved) serves
        # the cache key, the mirrors, the scope check and the scan.
        look = ctx.look = _look(ctx, pending)
        found = cache.lookup(repo, st.manifest, cfg, root, ctx.session, look)
        if pending is not None:
            pending.set(look, run=found.entry is None)
        if found.entry is not None:
            started.abandon()
            running = None
            if own_runs is not None:
                own_runs.drop()
                own_runs = None
        elif own_runs is not None:
            own_runs.chosen(look)
        else:
            own_runs = own_suite.start(repo, st, cfg, started.launch, started.allow, look, root, ctx.key, started.plugins)
        leak, scrub = leaks.transcript_gate(payload, st, root)
        scanned = scan.scan_gate(repo, st, cfg, root, look)
        if running is None:
            in_scope, accept, failures = found.result()
        else:
            in_scope = scope.scope_gate(repo, st, cfg, look)
            ctx.agent_usage()  # the transcript read while the runs run: the ledger line after them waits for nothing
            accept, run = running.finish()
            failures = run.failing()
            if own_runs is not None:
                accept["own"] = own_runs.finish()  # kept with the run's verdict: the cache key covers the same tree
            if not (accept.get("own") or {}).get("problem"):
                cache.keep(found, repo, st.manifest, cfg, root, in_scope, accept, failures, run.faithful, tree_key=ctx.tree_key)
    except BaseException:
        if pending is not None and not pending.run:
            pending.set(None, run=False)  # the runs waiting for the look end unrun
        if own_runs is not None and not own_runs._chosen.is_set():
            own_runs.drop()  # the own suite's, waiting for what the look chose too
        proc.kill_all()  # a stage beside the run failed: the stop blocks, and no run goes on without it
        raise
    if leak:
        gates["leak"] = leak
    if _STOP.get("transcript_unread"):  # a FIFO or device planted where the transcript was: refused, recorded
        gates["transcript"] = _STOP["transcript_unread"]
    if accept.get("environment"):
        return _environment(gates, accept["environment"], "repair or recreate the project's environment, or seal again")
    accept = dict(accept)
    own_gate = accept.pop("own", None)
    gates["scope"] = in_scope
    gates["acceptance"] = accept
    if own_gate is not None:
        gates["own"] = own_gate
    gates["cache"] = found.gate
    problems = list(in_scope["problems"]) + own_suite.problems(own_gate)
    if accept["problem"]:
        problems.append(accept["problem"])
    if accept.get("missing"):  # a dependency not installed: the agent may install it, or stop importing it
        problems.append(accept["missing"])
    hint = ""
    if scanned is not None:
        gates["scan"] = scanned
        if scanned["problem"] and cfg["scan"] == "block":
            problems.append(scanned["problem"])
        hint = scanned["problem"] if cfg["scan"] == "hint" else ""
    leak_msg = leaks.LEAK_MSG if leak else ""
    if accept.get("handover") == "second-run-time" and problems == [accept["problem"]] and not failures:
        return _unverified(gates, accept)
    if not problems and not failures:
        passed = feedback.passed(gates, accept, hint, leak_msg)
        if cfg["review"] == "off":
            return passed
        return review_gate.review_gate(payload, cfg, root, repo, st, passed, scrub, session=ctx.session)
    return feedback.blocked(payload, cfg, gates, problems, failures, hint, leak_msg, scrub, st.manifest.get("held"))


def hand_over(exc: DonegateError, root: Path) -> Outcome:
    """A broken donegate.yaml is the person's to fix, never the agent's (it cannot reach the state root):
    blocking would only loop the agent until the breaker. The stop is allowed at once, the person told
    (system message) and the session counted as left for a person (`gave_up`, with `gates.handover`)."""
    msg = feedback.hide_kit(f"donegate: {exc.message}" + (f" (fix: {exc.fix})" if exc.fix else ""), root)
    return Outcome("gave_up", ALLOW, gates={"error": exc.message, "handover": "config"},
                   system_message=msg + "; the stop was allowed but the work is NOT verified: a person must fix "
                   "the kit's configuration (donegate.yaml), then check it with donegate doctor")


def _environment(gates: dict[str, Any], problem: str, fix: str) -> Outcome:
    """The project's interpreter cannot run the hidden tests (gone, broken, inside the repository):
    nothing the agent does in the code changes that, so the stop goes to a person at once instead
    of looping through the block counter."""
    gates["environment"] = {"problem": problem, "fix": fix}
    gates["handover"] = "environment"
    out = Outcome("block", BLOCK, gates=gates, failing=["environment"])
    return breaker.hand_over(out, "the project's environment cannot run the hidden tests",
                             f"donegate: {problem} (fix: {fix})")


def _unverified(gates: dict[str, Any], accept: dict[str, Any]) -> Outcome:
    """The hidden tests passed and the second run could not finish in the stop's time: time is no reason to
    block honest work, nor a pass. The stop goes to a person at once, the ledger saying how far the run got."""
    gates["acceptance"] = accept
    gates["handover"] = "second-run-time"
    out = Outcome("block", BLOCK, gates=gates, failing=["second-run-time"])
    return breaker.hand_over(out, "the second run of the hidden tests could not finish in the stop's time",
                             f"donegate: {accept['problem']}: a person must look (the code under test may be slower, or stall, "
                             "only in the second run)")


def _looks(cfg: dict[str, Any]) -> bool:
    """Whether the stop looks at the working tree: a stage reads it (the cache key, the scope check with
    `allowed`, the scan; stores sealed before the tree snapshot scan what git says changed)."""
    return bool(cfg["cache"] or cfg["allowed"] is not None or cfg["scan"] != "off")


def _look(ctx: StopContext, pending: statcache.Pending | None = None) -> statcache.Tree | None:
    """The stop's look at the working tree, when a stage reads it (`_looks`). The runs waiting for it (`pending`)
    get its part without the shared environments first: their mirrors hold nothing of those."""
    if not _looks(ctx.cfg):
        return None
    _stage("looking at the working tree")
    from donegate.hidden.copy import after, shared_dirs

    repo, root = ctx.tree, ctx.root
    assert repo is not None
    if pending is None:
        return statcache.look(repo, root, keep=after, key=ctx.tree_key, sealed=ctx.key)
    return statcache.look(repo, root, tuple(shared_dirs(repo)), pending.early, keep=after, key=ctx.tree_key,
                          sealed=ctx.key)


def run_hook(stdin_text: str, root: Path | None = None, watchdog: bool = True, *, repo: str | None = None,
             git_path: str | None = None, managed: bool = False, env_seen: list[str] | None = None,
             client: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one stop. Never raises.

    With `watchdog` (the hook), the stop runs under one deadline: if it is not done in time, a watchdog
    thread answers block and ends the process (see `donegate.core.deadline`). `repo`, `git_path`, `managed`:
    from the hook's arguments (install wrote them); `env_seen`: the distrusted variables the launcher
    found set (names only); `client`: the agent's CLI when install named it (`--client`), else read from the
    payload (`donegate.gate.inputs.client_of`)."""
    t0 = time.monotonic()
    root = root or paths.home()
    payload: dict[str, Any] = {}
    cfg = config.defaults()
    git.use(git_path)
    # Until the config is read the hook timeout is unknown: take the shortest any config can give.
    dl = deadline.Deadline(_budget(config.minimal()), start=t0)
    claim = once.Claim(root)  # the other donegate hooks of this stop report the verdict of the one that judges it
    watch: dict[str, Any] = {"deadline": dl, "root": root, "payload": payload, "cfg": cfg, "claim": claim, "client": client}
    _STOP.update(deadline=dl, stage="reading the config", scanned_to=0, transcript_unread="", fault=_fault(root))
    if watchdog:
        dl.arm(lambda: _watchdog.expired(watch))
    ctx: StopContext | None = None
    try:
        payload = watch["payload"] = parse_payload(stdin_text)
        from donegate.sessions import kitruns

        if kitruns.is_kit_session(root, payload.get("session_id")):
            return _watchdog.answer(dl, breaker.quiet(root, "kit:runs"))  # the kit's own writer or reviewer run: never gated, counted
        cfg = config.load(paths.config_path(root))
        watch["cfg"] = cfg
        dl.set_budget(_budget(cfg))
        ctx = StopContext(root, payload, cfg, client)  # what every stage reads, found once (`gate/context.py`)
        _stage("waiting for another donegate hook of this stop")
        shared = claim.take(payload, wait=dl.remaining() - 2 * AFTER_RUN)
        if shared is not None:
            return _watchdog.answer(dl, shared)
        _stage("finding the repository")
        outcome = evaluate(ctx, repo, managed)
        if outcome.quiet:
            return _watchdog.answer(dl, claim.keep(breaker.quiet(root)))
    except ConfigError as exc:
        outcome = hand_over(exc, root)
    except DonegateError as exc:
        reason = feedback.hide_kit(f"donegate: {exc.message}" + (f" (fix: {exc.fix})" if exc.fix else ""), root)
        outcome = Outcome("error", BLOCK, reason=reason, gates={"error": exc.message}, failing=["error:" + exc.message])
    except Exception as exc:  # a kit bug: block, bounded by the breaker, traceback to the log only
        log = _log_exception(root)
        reason = (f"donegate: internal error ({type(exc).__name__}); the traceback is in the kit's log "
                  f"({Path(log).name}); a person must look")
        outcome = Outcome("error", BLOCK, reason=reason, gates={"error": f"{type(exc).__name__}: {exc}"},
                          failing=["error:internal"])
    if outcome.repo:
        try:
            outcome = feedback.tell_rejections(outcome, root, ctx.key_of(outcome.repo) if ctx is not None else None)
        except Exception:  # a person's note is never worth a stop the hook cannot answer
            _log_exception(root)
    session, session_from = (ctx.session, ctx.session_from) if ctx is not None else sessions.resolve(payload)
    _stage("the block counter")
    counters = breaker.count(outcome, session, cfg, root, wait=min(deadline.LOCK_WAIT, max(0.0, dl.remaining() - AFTER_RUN)),
                             key=ctx.key if ctx is not None else None)  # (the sealed project's: `integrity.check`'s)
    weak = weakened_env(cfg, env_seen) if env_seen is not None else []
    if weak:
        outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + (
            "donegate: the session's environment weakens the gate (" + ", ".join(weak) + "); run donegate doctor")
    _stage("the session's cost and time")
    line = record.record(outcome, payload, session, session_from, counters, cfg, t0, env_seen, weak,
                         client_of(payload, client),
                         ctx.agent_usage() if ctx is not None else record.agent_usage(payload, session, root))
    _stage("the ledger")
    record.write(line, outcome, root, wait=min(deadline.LOCK_WAIT, max(0.0, dl.remaining() - 0.5)))
    if outcome.exit_code == ALLOW and outcome.verdict != "unsealed" and outcome.repo:
        try:
            leaks.after_pass(root, session, outcome.gates.get("sealed") or outcome.repo, payload)
        except OSError:
            _log_exception(root)
    return _watchdog.answer(dl, claim.keep(render(outcome)))
