"""The acceptance stage: the hidden tests, in an isolated interpreter (`donegate.hidden.runner`), within the time
the stop's deadline leaves; every sealed test must report. A run that passes is run again by the second
harness (`donegate.hidden.second`): the stop passes only when both agree."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import store
from donegate.hidden import runner
from donegate.gate.stop import stage, time_left


def acceptance_gate(repo: Path, st: store.Store, cfg: dict[str, Any]) -> tuple[dict[str, Any], runner.TestRun]:
    stage("the hidden test run")
    review = cfg["review_timeout"] if cfg["review"] != "off" else 0
    timeout = min(cfg["timeout"], max(0.0, time_left(cfg["timeout"] + review) - review))
    from donegate.hidden import python as pyenv  # EnvProblem: raised to the stop, which hands over
    from donegate.hidden.channel import HARD

    allow = tuple(r for r in cfg.get("scan_allow") or () if r not in HARD)  # evidence is never waved through
    launch = pyenv.sealed(st.manifest, repo)
    run = runner.run(st.path, repo, timeout=timeout, expected=st.tests(), confine=cfg["confine"],
                     project=Path(launch.front[0]), python=launch, allow=allow)
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
        gate["tamper"] = {"what": run.tamper, "changed": run.tamper_keys, "rule": run.tamper_rule}
    if run.note:
        gate["note"] = run.note
    if run.environment:
        gate["environment"] = run.environment
    if failing and run.imports:  # a test fails on a module not found: say when it is the environment's
        from donegate.hidden import missing

        found = missing.missing_module(run.imports, launch, Path(launch.front[0]), st.path)
        if found is not None:
            gate["missing"] = f"{found[0]} (fix: {found[1]})"
    # A pass, or a pass but for a tripwire honest code trips too: the second opinion decides whether
    # the product behaves differently under pytest (hard evidence then replaces the soft finding).
    if not failing and (gate["ok"] or run.tamper and run.tamper_rule not in HARD and len(run.passing()) == gate["total"]):
        _second(repo, st, cfg, run, gate, allow, review, launch)
    return gate, run


def _second(repo: Path, st: store.Store, cfg: dict[str, Any], run: runner.TestRun, gate: dict[str, Any],
            allow: tuple[str, ...], review: float, launch: Any) -> None:
    """The second opinion on a pass: a disagreement blocks as tampering, a run that did not finish blocks."""
    from donegate.hidden import second

    stage("the second run")
    timeout = min(cfg["timeout"], max(0.0, time_left(cfg["timeout"] + review) - review))
    two = second.run(st.path, repo, run.passing(), timeout=timeout, kind=run.confinement, allow=allow,
                     python=launch)
    gate["second"] = two.summary()
    from donegate.hidden.channel import HARD

    if gate.get("tamper") and not (two.tamper and two.rule in HARD):
        return  # the first run's finding stands
    if two.tamper:
        gate["ok"] = False
        gate["problem"] = two.tamper
        gate["tamper"] = {"what": two.tamper, "changed": [], "rule": two.rule}
    elif two.problem:
        gate["ok"] = False
        gate["problem"] = two.problem
