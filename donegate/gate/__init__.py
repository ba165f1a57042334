"""The Stop hook: integrity, scope, acceptance, feedback, breaker, ledger.

`evaluate` decides; `run_hook` wraps it so that whatever happens the hook exits 0 (stop allowed) or
2 (blocked), writes exactly one ledger line, and never shows the agent a traceback. Claude Code treats
any other exit code, a crash or a timeout as "let the agent stop", so failing closed is done here.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import __version__, appeal, cache, config, deadline, feedback, fsafe, git, leaks, paths, runner, sessions, store
from donegate.errors import DonegateError, StoreError
from donegate.outcome import ALLOW, BLOCK, Outcome, render
from donegate.state import FileCounters

MAX_HINTED = 50  # hinted states remembered per session
AFTER_RUN = 1.0  # seconds of the deadline kept after the hidden run (and the reviewers) for counters and ledger

# The stop in progress: its deadline and the stage it is in (what the watchdog names when time runs out).
_STOP: dict[str, Any] = {"deadline": None, "stage": "start"}


def _stage(name: str) -> None:
    _STOP["stage"] = name
    if _STOP.get("fault") == "hang:" + name:  # the deadline's tests: a stage that never ends
        time.sleep(10**6)


def _fault(root: Path) -> str | None:
    """The deadline tests' fault hook: `state/fault` under the state root, which the agent cannot write
    (deny rules, sandbox). Never an environment variable: a settings file's `env` reaches the hook."""
    try:
        return (paths.state_dir(root) / "fault").read_text(encoding="utf-8").strip()
    except OSError:
        return None


def time_left(cap: float) -> float:
    """`cap` seconds, or less when the stop's deadline comes sooner (AFTER_RUN seconds kept for the end)."""
    dl = _STOP["deadline"]
    return cap if dl is None else max(0.0, min(cap, dl.remaining() - AFTER_RUN))


def _now() -> str:
    # ISO 8601 in UTC with milliseconds, without importing datetime on the hook's path.
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}+00:00"


def scope_gate(repo: Path, st: store.Store, cfg: dict[str, Any]) -> dict[str, Any]:
    """Protected files changed since the seal, and (with `allowed`) files changed outside it.

    Both compare the files on disk with the seal's snapshot, never what git says about them (an
    ignore rule, skip-worktree, assume-unchanged or a `git replace` of the base hides a change from
    git). Nothing is followed or opened but regular files: a symlink, FIFO, device or socket where a
    file was sealed is a change, named as such. Doctor runs this same check.
    """
    _stage("the scope check")
    t0 = time.monotonic()
    problems = []
    manifest = st.manifest
    protected = store.matcher(cfg["protected"])
    now = store.snapshot(repo, cfg["protected"])
    before = {k: v for k, v in manifest.get("protected", {}).items() if protected(k)}
    touched = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
    kinds = {k: fsafe.describe(now.get(k)) for k in touched if k in before}
    if cfg["protect_repo_tests"]:
        for name, digest in manifest.get("repo_tests", {}).items():
            current = fsafe.digest(repo / name)
            if current != digest:
                touched.append(name)
                kinds[name] = fsafe.describe(current)
    touched = sorted(set(touched))
    kinds = {k: v for k, v in kinds.items() if v}

    def named(names: list[str], what: dict[str, str]) -> str:
        return ", ".join(f"{n} (now {what[n]})" if n in what else n for n in names)

    if touched:
        problems.append("protected files were changed (restore them): " + named(touched, kinds))
    outside: list[str] = []
    if cfg["allowed"] is not None:
        allowed = store.matcher(cfg["allowed"])
        sealed_tree = st.tree()
        more: dict[str, str]
        if sealed_tree is None:  # a store sealed before the kit kept a snapshot of the whole tree
            changed, more = git.changed_since(repo, manifest["base"]), {}
        else:
            changed, more = store.tree_changes(repo, sealed_tree)
        outside = [n for n in changed if not allowed(n) and n not in touched and n not in store.KIT_FILES]
        if outside:
            problems.append("files outside the allowed scope were changed: " + named(outside, more))
        kinds.update((k, v) for k, v in more.items() if k in outside)
    out = {"ok": not problems, "protected": touched, "outside": outside, "problems": problems,
           "duration": round(time.monotonic() - t0, 4)}
    if kinds:
        out["kinds"] = kinds
    return out


def acceptance_gate(repo: Path, st: store.Store, cfg: dict[str, Any]) -> tuple[dict[str, Any], runner.TestRun]:
    _stage("the hidden test run")
    review = cfg["review_timeout"] if cfg["review"] != "off" else 0
    timeout = min(cfg["timeout"], max(0.0, time_left(cfg["timeout"] + review) - review))
    run = runner.run(st.path, repo, timeout=timeout, expected=st.tests(), confine=cfg["confine"])
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
        "confinement": run.confinement,
    }
    if run.tamper:
        gate["tamper"] = {"what": run.tamper, "changed": run.tamper_keys}
    if run.note:
        gate["note"] = run.note
    return gate, run


def scan_gate(repo: Path, st: store.Store, cfg: dict[str, Any], root: Path) -> dict[str, Any] | None:
    """The ast scan of the product files changed since the seal (`scan: block | hint | off`)."""
    if cfg["scan"] == "off":
        return None
    from donegate import scan

    t0 = time.monotonic()
    findings = scan.scan(repo, st.manifest["base"], root)
    return {"mode": cfg["scan"], "findings": findings[:50], "problem": scan.problem(findings) if findings else "",
            "duration": round(time.monotonic() - t0, 4)}


def evaluate(payload: dict[str, Any], cfg: dict[str, Any], root: Path, repo_arg: str | None = None,
             managed: bool = False) -> Outcome:
    from donegate import repo as where

    repo = where.guarded(payload, root, repo_arg, managed)
    if repo is None:
        out = Outcome("unsealed", ALLOW)
        out.quiet = True
        return out
    paths.check_outside(repo, root)
    out = _evaluate(payload, cfg, root, repo)
    out.repo = str(repo)
    return appeal.consider(out, payload, cfg, root, repo, _session(payload))


def _evaluate(payload: dict[str, Any], cfg: dict[str, Any], root: Path, repo: Path) -> Outcome:
    _stage("the store check")
    try:
        st = store.load(repo, root)
    except StoreError as exc:
        return Outcome("block", BLOCK, gates={"integrity": {"ok": False, "problem": exc.message}},
                       reason=f"donegate: {exc.message}; the session needs a person to re-seal the tests",
                       failing=["integrity"])
    store.sweep(repo, root)  # copies of the tests a crashed seal left beside the store
    if st is None:
        msg = f"donegate: no acceptance tests are sealed for {repo}; the stop was allowed unchecked"
        return Outcome("unsealed", ALLOW, system_message=msg, gates={"integrity": {"ok": None}})
    gates: dict[str, Any] = {"integrity": {"ok": True, "tests": st.manifest["count"]}}
    secret_paths = [st.path, paths.acceptance_root(root), root, *paths.protected_roots(home=root)]
    markers, sources, kit_sources = leaks.secrets(st)
    scrub = feedback.Scrubber(secret_paths, sources)

    _stage("the transcript scan")
    shown, scanned_to = leaks.shown_since(payload.get("transcript_path"))
    _STOP["scanned_to"] = scanned_to
    leak = leaks.find(shown, markers, sources, kit_sources)
    if leak:
        gates["leak"] = leak
    scope, accept, failures, cached = cache.judged(repo, st.manifest, cfg, root, _session(payload),
                                                   lambda: _judge(repo, st, cfg))
    gates["scope"] = scope
    gates["acceptance"] = accept
    gates["cache"] = cached
    problems = list(scope["problems"])
    if accept["problem"]:
        problems.append(accept["problem"])
    found = scan_gate(repo, st, cfg, root)
    hint = ""
    if found is not None:
        gates["scan"] = found
        if found["problem"] and cfg["scan"] == "block":
            problems.append(found["problem"])
        hint = found["problem"] if cfg["scan"] == "hint" else ""
    leak_msg = ("donegate: the session transcript shows hidden acceptance-test content, store paths or the kit's "
                "hook code; the tests may be compromised, review the session") if leak else ""
    unconfined = "" if accept.get("confinement") != "none" else \
        " (unconfined: no sandbox ran the tests, see `donegate doctor`)" + (f"; {accept['note']}" if accept.get("note") else "")
    if not problems and not failures:
        passed = Outcome("pass", ALLOW, gates=gates,
                         system_message=leak_msg or f"donegate: {accept['total']} acceptance tests pass{unconfined}"
                         + (f"; the scan found: {hint}" if hint else ""))
        if cfg["review"] == "off":
            return passed
        return review_gate(payload, cfg, root, repo, st, passed, scrub)
    text = feedback.block_text(problems, failures, claimed=feedback.claims_done(payload.get("last_assistant_message")),
                               total=accept["total"], scrub=scrub, cap=cfg["feedback_chars"],
                               note=f"donegate (a hint, not a failure): {hint}" if hint else "")
    failing = sorted(failures) + [p.split(":")[0] for p in problems]
    if accept.get("tamper"):
        failing.append("tamper")
    return Outcome("block", BLOCK, reason=text, gates=gates, failing=failing, system_message=leak_msg)


def _judge(repo: Path, st: store.Store, cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    scope = scope_gate(repo, st, cfg)
    accept, run = acceptance_gate(repo, st, cfg)
    return scope, accept, run.failing()


def _session(payload: dict[str, Any]) -> str:
    return sessions.resolve(payload)[0]


def _hinted(root: Path, payload: dict[str, Any]) -> list[str]:
    return list(FileCounters(paths.state_dir(root)).peek(_session(payload)).get("hinted") or [])


def review_gate(payload: dict[str, Any], cfg: dict[str, Any], root: Path, repo: Path, st: store.Store,
                passed: Outcome, scrub: feedback.Scrubber) -> Outcome:
    """The reviewers, once scope and acceptance pass (`review: hint | block`); `passed` is the outcome
    without them. Their result goes to the ledger as `gates.review`.

    - hint: standing findings go back to the agent once per state of the code (request + diff,
      hashed), labelled as a model's judgment; the next stop on a hinted state is allowed without
      running the reviewers again.
    - block: blocking findings block like a failing test, counted by the same breaker; `failing` is
      "review:<file>" per blocking finding, so reviewers flagging the same files stop after stop are
      "no progress" (their wording changes every run, their files do not).
    - a review that failed (timeout, error, no structured output, broken reviewer files, a kit bug)
      allows the stop and tells the user: verdict `review_error`. It never blocks, never passes silently.
    """
    from donegate import reviewer

    t0 = time.monotonic()
    base, request, mode = st.manifest["base"], st.manifest.get("request", ""), cfg["review_mode"]
    state = ""
    try:
        diff = git.diff(repo, base)
        state = hashlib.sha256(json.dumps([request, diff]).encode()).hexdigest()[:32]
        if cfg["review"] == "hint" and state in _hinted(root, payload):
            passed.gates["review"] = {"mode": mode, "skipped": "the hint for this state of the code was given", "state": state}
            return passed
        _stage("the review")
        result = reviewer.review(repo, request, base, cfg, timeout=time_left(cfg["review_timeout"]), diff=diff)
    except DonegateError as exc:
        result = reviewer.error_result(mode, exc.message, time.monotonic() - t0)
    except Exception as exc:  # a kit bug in the review must not turn into a block
        result = reviewer.error_result(mode, f"internal error ({type(exc).__name__}), traceback in {_log_exception(root)}",
                                       time.monotonic() - t0)
    result["state"] = state
    passed.gates["review"] = result
    told = [passed.system_message] if "leak" in passed.gates else []
    if result["verdict"] == "error":
        told.append(f"donegate: the acceptance tests pass, but the review failed ({'; '.join(result['errors'])}); "
                    "the stop was allowed WITHOUT a review (see the ledger)")
        passed.verdict, passed.system_message = "review_error", " ".join(told)
        return passed
    if result["errors"]:  # a block stands on a healthy reviewer's finding; its failed partner is still news
        told.append("donegate: part of the review failed: " + "; ".join(result["errors"]))
    claimed = feedback.claims_done(payload.get("last_assistant_message"))
    standing = reviewer.standing(result)
    if cfg["review"] == "hint" and standing:
        text = feedback.capped(scrub(reviewer.feedback(result, hint=True, claimed=claimed)), cfg["feedback_chars"], "findings")
        return Outcome("hint", BLOCK, reason=text, gates=passed.gates, system_message=" ".join(told), hint=state)
    if cfg["review"] == "block" and result["verdict"] == "block":
        text = feedback.capped(scrub(reviewer.feedback(result, hint=False, claimed=claimed)), cfg["feedback_chars"], "findings")
        failing = sorted({"review:" + (f["file"] or "-") for f in reviewer.blocking(result)})
        return Outcome("block", BLOCK, reason=text, gates=passed.gates, failing=failing, system_message=" ".join(told))
    minor = f" ({len(standing)} minor finding(s) in the ledger)" if standing else ""
    told.append(f"donegate: {passed.gates['acceptance']['total']} acceptance tests pass; the reviewers approve{minor}")
    passed.system_message = " ".join(told)
    return passed


def breaker(outcome: Outcome, counters: dict[str, Any], cfg: dict[str, Any]) -> Outcome:
    """Count blocks per session; hand the session to a person when the loop stops paying.

    A reviewers' hint is a block too (exit 2), but it comes on passing tests: that is progress, so it
    starts the no-progress streak over, while it still counts toward `max_blocks` (it costs a turn,
    and an agent that changes a little each time would get a new hint each time). A hint that would
    pass `max_blocks` is dropped rather than handed over: the tests pass, there is nothing to hand over.
    """
    counters["stops"] += 1
    if outcome.hint:
        counters["hinted"] = [*(counters.get("hinted") or []), outcome.hint][-MAX_HINTED:]
    if outcome.exit_code == ALLOW:
        counters.update(blocks=0, same_streak=0, last_failing=None)
        return outcome
    if outcome.hint:
        if counters["blocks"] >= cfg["max_blocks"]:
            outcome.gates["breaker"] = {"hint_dropped": f"{counters['blocks']} blocks in this session (max_blocks)"}
            counters.update(blocks=0, same_streak=0, last_failing=None)
            outcome.verdict, outcome.exit_code = "pass", ALLOW
            outcome.system_message = ("donegate: the acceptance tests pass; the reviewers' findings were not sent to the "
                                      "agent (max_blocks reached), they are in the ledger")
            return outcome
        counters.update(blocks=counters["blocks"] + 1, same_streak=0, last_failing=None)
        return outcome
    same = counters["last_failing"] == outcome.failing
    why = ""
    if counters["blocks"] >= cfg["max_blocks"]:
        why = f"{counters['blocks']} blocks in this session (max_blocks)"
    elif cfg["max_same_failure"] and same and counters["same_streak"] >= cfg["max_same_failure"]:
        why = f"the same tests failed {counters['same_streak']} stops in a row (max_same_failure)"
    if why:
        counters.update(blocks=0, same_streak=0, last_failing=None)
        outcome.gates["breaker"] = {"gave_up": why, "was": outcome.verdict}
        outcome.verdict, outcome.exit_code = "gave_up", ALLOW
        outcome.system_message = (f"donegate: gave up after {why}; the stop was allowed but the work is NOT verified: "
                                  "this session needs a person (see the ledger)")
        if "leak" in outcome.gates:  # the person taking over must hear it too, not only the ledger
            outcome.system_message += ("; the session transcript also shows hidden acceptance-test content, store "
                                       "paths or the kit's hook code")
        return outcome
    counters["blocks"] += 1
    counters["same_streak"] = counters["same_streak"] + 1 if same else 1
    counters["last_failing"] = outcome.failing
    return outcome


def _log_exception(root: Path) -> str:
    log = paths.log_path(root)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            import traceback  # only on the error path

            fh.write(f"--- {_now()}\n{traceback.format_exc()}\n")
    except OSError:
        pass
    return str(log)


def _hide_kit(text: str, root: Path) -> str:
    """An error the agent reads must not say where the kit (and so the hidden tests) lives."""
    for p in sorted({str(r) for r in (root, *paths.protected_roots(home=root))}, key=len, reverse=True):
        text = text.replace(p, "<donegate>")
    return text


def parse_payload(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DonegateError(f"the hook's stdin is not JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(payload, dict):
        raise DonegateError("the hook's stdin is not a JSON object")
    return payload


# Variables of the hook's environment that weaken the gate without stopping it from running.
WEAKENING = ("CLAUDE_CODE_SHELL_PREFIX", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
             "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT")


def weakened_env(cfg: dict[str, Any], seen: list[str]) -> list[str]:
    """What of the session's environment could have switched the gate off (the hook got through this
    time; a person should know): the names the launcher saw, and a block cap at or below max_blocks."""
    out = [k for k in seen if k in WEAKENING or k.startswith("DONEGATE_") and k != "DONEGATE_HOME"]
    out += [k for k in ("CLAUDE_CODE_SHELL_PREFIX",) if os.environ.get(k) and k not in out]
    cap = os.environ.get("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
    try:
        if cap and 0 < int(cap) <= cfg["max_blocks"]:
            out.append(f"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP={int(cap)}")
    except ValueError:
        pass
    return sorted(out)


def _quiet(root: Path, counter: str = "managed:unsealed") -> tuple[int, str, str]:
    """A stop let through without a ledger line (a managed hook's stop where nothing is sealed, or
    one of the kit's own runs): one counter instead of a line per session."""
    try:
        with FileCounters(paths.state_dir(root)).transact(counter) as counters:
            counters["stops"] += 1
    except Exception:
        _log_exception(root)
    return ALLOW, "", ""


def _budget(cfg: dict[str, Any]) -> float:
    """Seconds the whole stop may take: the hook timeout install writes for `cfg`, less the reserve."""
    return config.hook_timeout(cfg) - deadline.RESERVE


def _record(outcome: Outcome, payload: dict[str, Any], session: str, session_from: str | None, counters: dict[str, Any],
            cfg: dict[str, Any], t0: float, env_seen: list[str] | None = None, weak: list[str] | None = None) -> dict[str, Any]:
    return {
        "event": "stop",
        "time": _now(),
        "repo": outcome.repo or payload.get("cwd"),
        "session": session,
        "stop": counters.get("stops"),
        "stop_hook_active": payload.get("stop_hook_active"),
        "verdict": outcome.verdict,
        "gates": outcome.gates,
        **({"cached": True} if (outcome.gates.get("cache") or {}).get("hit") else {}),
        **({"session_from": session_from} if session_from else {}),
        # The text the agent was shown (blocks only): already scrubbed and capped, unlike the raw
        # messages in `gates`. Before "blocks": the report's fast path reads the line's tail.
        **({"feedback": outcome.reason} if outcome.exit_code == BLOCK else {}),
        **({"env": env_seen} if env_seen is not None else {}),
        **({"env_weakened": weak} if weak else {}),
        "blocks": counters.get("blocks"),
        "duration": round(time.monotonic() - t0, 4),
        "kit_version": __version__,
        "config": cfg.get("config", "default"),
    }


def _count(outcome: Outcome, session: str, cfg: dict[str, Any], root: Path, wait: float) -> dict[str, Any]:
    """Run the breaker on the session's counters (waiting at most `wait` s for their lock)."""
    counters: dict[str, Any] = {"stops": 0, "blocks": 0}
    try:
        with FileCounters(paths.state_dir(root)).transact(session, wait=wait) as counters:
            appeal.count(outcome, counters)
            outcome = breaker(outcome, counters, cfg)
    except deadline.Busy:
        # Someone holds the counters' lock (an agent's `flock`?): the verdict stands, uncounted.
        outcome.gates["counter_error"] = "locked"
        if outcome.exit_code == ALLOW:
            outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + \
                "donegate: the session's block counter was locked by another process; this stop was not counted"
    except Exception:
        _log_exception(root)
        outcome.gates["counter_error"] = True
        if outcome.exit_code == BLOCK:
            # Without a working counter a block could trap the session forever: let it go, say so.
            outcome.verdict, outcome.exit_code = "error", ALLOW
            outcome.system_message = "donegate: the block counter is broken; the stop was allowed unverified"
    return counters


def _log(root: Path, line: str) -> None:
    try:
        log = paths.log_path(root)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"--- {_now()} {line}\n")
    except OSError:
        pass


def _write_ledger(record: dict[str, Any], outcome: Outcome, root: Path, wait: float) -> None:
    """Append the stop's line; a lock held past `wait` parks it for the next append (and says so in the log)."""
    from donegate import ledger

    note = ""
    try:
        ledger.append(record, paths.ledger_path(root), wait=wait)
    except deadline.Busy:
        try:
            parked = ledger.park(record, paths.ledger_path(root))
            _log(root, f"the ledger was locked for {wait:.1f} s: stop {record.get('stop')} of session "
                       f"{record.get('session')} ({record.get('verdict')}) parked in {parked}; the next append writes it")
            note = "donegate: the ledger was locked by another process; this stop's line waits beside it (see the kit's log)"
        except Exception:
            _log_exception(root)
            note = "donegate: the ledger could not be written (see the kit's log)"
    except Exception:
        _log_exception(root)
        note = "donegate: the ledger could not be written (see the kit's log)"
    if note:
        outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + note


def _expired(ctx: dict[str, Any]) -> int:
    """The watchdog's answer when the stop's deadline passes: block (bounded by the breaker), one ledger
    line without waiting on any lock, the answer on stdout and stderr. Returns the exit code."""
    from donegate import proc

    proc.kill_all()
    dl: deadline.Deadline = ctx["deadline"]
    stage = _STOP["stage"]
    budget = dl.budget()
    reason = (f"donegate: the stop did not finish within its deadline ({budget:.0f} s; still in {stage}), so it is "
              "blocked rather than left to Claude Code's hook timeout, which would let it through; if this repeats, "
              "a person must look (see the kit's log)")
    outcome = Outcome("error", BLOCK, reason=reason, failing=["error:deadline"],
                      gates={"error": f"deadline of {budget:.1f} s passed in {stage}", "deadline": {"stage": stage, "budget": round(budget, 3)}})
    root, payload, cfg = ctx["root"], ctx["payload"], ctx["cfg"]
    session, session_from = sessions.resolve(payload)
    _log(root, f"the stop's deadline ({budget:.1f} s) passed in {stage}: answered block by the watchdog")
    try:
        counters = _count(outcome, session, cfg, root, wait=0.2)
        _write_ledger(_record(outcome, payload, session, session_from, counters, cfg, dl.start), outcome, root, wait=0.2)
    except BaseException:
        pass
    code, out, err = render(outcome)
    for fd, text in ((1, out), (2, err)):
        try:
            os.write(fd, text.encode())
        except OSError:
            pass
    return code


def _answer(dl: deadline.Deadline, answer: tuple[int, str, str]) -> tuple[int, str, str]:
    """Hand `answer` back unless the watchdog has claimed the stop (it answers, and ends the process)."""
    if not dl.claim():
        dl.wait_forever()  # the watchdog is answering for this stop
    _STOP.update(deadline=None, stage="start", scanned_to=0)
    return answer


def run_hook(stdin_text: str, root: Path | None = None, watchdog: bool = True, *, repo: str | None = None,
             git_path: str | None = None, managed: bool = False, env_seen: list[str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one stop. Never raises.

    With `watchdog` (the hook), the stop runs under one deadline: if it is not done in time, a watchdog
    thread answers block and ends the process (see `donegate.deadline`). `repo`, `git_path`, `managed`:
    from the hook's arguments (install wrote them); `env_seen`: the distrusted variables the launcher
    found set (names only)."""
    t0 = time.monotonic()
    root = root or paths.home()
    payload: dict[str, Any] = {}
    cfg = config.defaults()
    git.use(git_path)
    # Until the config is read the hook timeout is unknown: take the shortest any config can give.
    dl = deadline.Deadline(_budget(config.minimal()), start=t0)
    ctx: dict[str, Any] = {"deadline": dl, "root": root, "payload": payload, "cfg": cfg}
    _STOP.update(deadline=dl, stage="reading the config", scanned_to=0, fault=_fault(root))
    if watchdog:
        dl.arm(lambda: _expired(ctx))
    try:
        payload = ctx["payload"] = parse_payload(stdin_text)
        from donegate import kitruns

        if kitruns.is_kit_session(root, payload.get("session_id")):
            return _answer(dl, _quiet(root, "kit:runs"))  # the kit's own writer or reviewer run: never gated, counted
        cfg = config.load(paths.config_path(root))
        ctx["cfg"] = cfg
        dl.set_budget(_budget(cfg))
        _stage("finding the repository")
        outcome = evaluate(payload, cfg, root, repo, managed)
        if outcome.quiet:
            return _answer(dl, _quiet(root))
    except DonegateError as exc:
        reason = _hide_kit(f"donegate: {exc.message}" + (f" (fix: {exc.fix})" if exc.fix else ""), root)
        outcome = Outcome("error", BLOCK, reason=reason, gates={"error": exc.message}, failing=["error:" + exc.message])
    except Exception as exc:  # a kit bug: block, bounded by the breaker, traceback to the log only
        log = _log_exception(root)
        reason = (f"donegate: internal error ({type(exc).__name__}); the traceback is in the kit's log "
                  f"({Path(log).name}); a person must look")
        outcome = Outcome("error", BLOCK, reason=reason, gates={"error": f"{type(exc).__name__}: {exc}"},
                          failing=["error:internal"])
    session, session_from = sessions.resolve(payload)
    _stage("the block counter")
    counters = _count(outcome, session, cfg, root, wait=min(deadline.LOCK_WAIT, max(0.0, dl.remaining() - AFTER_RUN)))
    weak = weakened_env(cfg, env_seen) if env_seen is not None else []
    if weak:
        outcome.system_message = (outcome.system_message + " " if outcome.system_message else "") + (
            "donegate: the session's environment weakens the gate (" + ", ".join(weak) + "); run donegate doctor")
    record = _record(outcome, payload, session, session_from, counters, cfg, t0, env_seen, weak)
    _stage("the ledger")
    _write_ledger(record, outcome, root, wait=min(deadline.LOCK_WAIT, max(0.0, dl.remaining() - 0.5)))
    if outcome.exit_code == ALLOW and outcome.verdict != "unsealed" and outcome.repo:
        try:  # the transcript may still grow after this read: `donegate report` looks again
            leaks.note_pass(root, session, outcome.repo, payload.get("transcript_path"), _STOP.get("scanned_to", 0))
        except OSError:
            _log_exception(root)
    return _answer(dl, render(outcome))


