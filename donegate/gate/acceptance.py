"""The acceptance stage: the hidden tests, in an isolated interpreter (`donegate.hidden.runner`), within the time
the stop's deadline leaves; every sealed test must report."""

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

    launch = pyenv.sealed(st.manifest, repo)
    run = runner.run(st.path, repo, timeout=timeout, expected=st.tests(), confine=cfg["confine"],
                     project=Path(launch.front[0]), python=launch)
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
    if run.environment:
        gate["environment"] = run.environment
    if failing and run.imports:  # a test fails on a module not found: say when it is the environment's
        from donegate.hidden import missing

        found = missing.missing_module(run.imports, launch, Path(launch.front[0]), st.path)
        if found is not None:
            gate["missing"] = f"{found[0]} (fix: {found[1]})"
    return gate, run
