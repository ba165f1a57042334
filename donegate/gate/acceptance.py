"""The acceptance stage: the hidden tests, in an isolated interpreter (`donegate.hidden.runner`), within the time
the stop's deadline leaves; every sealed test must report.

`start` begins the run in a thread of the hook (the run itself is a child process, on the other core)
so the stages that only read (scope, scan, the transcript) go on beside it; `finish` waits for it.
"""

from __future__ import annotations

import threading
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate import statcache

from donegate import store
from donegate.hidden import runner
from donegate.gate.stop import stage, time_left


class Running:
    """A hidden run going on in a thread: `finish()` gives its gate and run, or raises what it raised."""

    def __init__(self, repo: Path, st: store.Store, cfg: dict[str, Any], root: Path | None = None,
                 tree: statcache.Tree | None = None) -> None:
        from donegate.hidden import python as pyenv  # EnvProblem: raised to the stop, which hands over

        self.st, self.cfg = st, cfg
        review = cfg["review_timeout"] if cfg["review"] != "off" else 0
        self.timeout = min(cfg["timeout"], max(0.0, time_left(cfg["timeout"] + review) - review))
        self.launch = pyenv.sealed(st.manifest, repo)  # in the stop's own thread: a broken environment raises here
        self.run: runner.TestRun | None = None
        self.error: BaseException | None = None
        self.root, self.tree = root, tree
        self.thread = threading.Thread(target=self._go, args=(repo,), name="donegate-hidden-run", daemon=True)
        self.thread.start()

    def _go(self, repo: Path) -> None:
        try:
            self.run = runner.run(self.st.path, repo, timeout=self.timeout, expected=self.st.tests(),
                                  confine=self.cfg["confine"], project=Path(self.launch.front[0]), python=self.launch,
                                  root=self.root, tree=self.tree)
        except BaseException as exc:  # raised again in the stop's own thread by finish()
            self.error = exc

    def finish(self) -> tuple[dict[str, Any], runner.TestRun]:
        stage("the hidden test run")
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.run is not None
        return _gate(self.run, self.st, self.cfg, self.timeout, self.launch), self.run


def start(repo: Path, st: store.Store, cfg: dict[str, Any], root: Path | None = None,
          tree: statcache.Tree | None = None) -> Running:
    """The run begun; with the state root and the stop's look at the tree, it works in the tree's mirror
    (`donegate.hidden.copy`), brought in step by what changed."""
    return Running(repo, st, cfg, root, tree)


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
    return gate
