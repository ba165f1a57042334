"""Run the hidden tests against a repository in a process the repository cannot subvert, confined.

- confined (`donegate.hidden.confine`): bubblewrap where it exists (the system and the store read-only,
  the kit, the state root and the user's home hidden, no network, its own PID namespace), else an
  allow-listed environment; either way the repository is a throwaway copy, so nothing the run
  writes outlives it;
- the project's own interpreter (`donegate.hidden.python`) as `python -I -S`, no bytecode written and
  none of the repository's read (the copy has no `__pycache__` and no `.pyc`: a planted one would run
  instead of a source the scan read): no current folder on sys.path, no PYTHON* variables, no user
  site, no `site` at all, so no `.pth` import line, `sitecustomize.py` or `pytest.py` of the repository
  or its environment is imported at start-up (the bootstrap adds the path lines itself);
- the kit's pytest is imported first, then the project goes on sys.path (so it cannot shadow pytest);
- `-c <store>/pytest.ini`, rootdir and confcutdir in the store: no `conftest.py` or ini file of the
  repository is read; plugin autoload off, PYTEST_* dropped, no cache provider;
- its own process group with a timeout (proc.run);
- results from the kit's plugin, one JSON line per event on an inherited pipe, checked as they come
  (`donegate.hidden.channel`): text a test prints can never pose as a result, and a stream out of pytest's
  order, or a tripwire of the plugin, is tampering.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

from donegate.core import proc
from donegate.core.util import make_temp_dir
from donegate.tree import statcache
from donegate.hidden import bootstrap, python as pyenv, ship
from donegate.seal.store import test_files  # the store's test files: what the runs name (here too: hidden.second)

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this module at every stop: typing stays off its path
    from typing import Any, Callable, Iterator, Sequence

    from donegate.hidden import channel

INI_NAME = "pytest.ini"
INI_TEXT = "[pytest]\n# Written by donegate: keeps pytest from reading any ini file of the repository.\naddopts =\n"

ENV_EXIT = 97
STARTER = "/tmp/.python"  # where a confined run sees the environment it starts from (`python.Launch.starter`)
ENV_MARK = "donegate-env: "

class TestRun:
    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, ok: bool, problem: str = "", collected: list[str] | None = None,
                 results: dict[str, dict[str, str]] | None = None, errors: list[dict[str, str]] | None = None,
                 duration: float = 0.0, output: str = "", confinement: str = "none") -> None:
        self.ok = ok  # the run reported on every test it had to
        self.problem = problem  # why it is not ok: a timeout, an early exit, a collection error, missing tests
        self.collected = collected or []
        self.results = results or {}
        self.errors = errors or []
        self.duration = duration
        self.output = output  # pytest's own text, for the log only: it may quote test source
        self.confinement = confinement  # bwrap | sandbox-exec | none
        self.tamper = ""  # what the code under test did to the harness or the result stream, in one line
        self.note = ""  # e.g. why a sandbox that should have run did not
        self.sandbox_failed = ""
        self.tamper_keys: list[str] = []
        self.tamper_rule = ""  # its rule (`channel.HARD`: not appealable; the others are)
        self.alarms: list[tuple[str, str]] = []  # every tripwire reported: (rule, what), the seal's baseline
        self.copy_duration = 0.0  # bringing the copy of the working tree in step (`donegate.hidden.copy`)
        self.faithful = False  # the run saw exactly the stop's look at the tree (the mirror, its copies hashed)
        self.environment = ""  # the project's interpreter cannot run the tests at all: a person's to fix
        self.python: dict[str, Any] = {}  # the interpreter that ran (`python.Interpreter.record`)
        self.imports: list[dict[str, str]] = []  # modules not found, and the file importing each
        self.seed = ""  # the secret `dg_random` drew from (`donegate.hidden.seeded`): the ledger's only
        self.early = ""  # its process started by the launcher (`donegate.hidden.early`): adopted, or ended (stale)

    def failing(self) -> dict[str, str]:
        """Every test that did not pass: only `passed` counts. A test that skipped, xfailed or xpassed
        at run time fails, with the reason shown (code under test can call `pytest.skip` itself)."""
        return {nodeid: _shown(r) for nodeid, r in self.results.items() if r["outcome"] != "passed"}

    def passing(self) -> list[str]:
        return [nodeid for nodeid, r in self.results.items() if r["outcome"] == "passed"]

    def skipped(self) -> dict[str, str]:
        """Tests that skipped, xfailed or xpassed, with the reason shown: a seal refuses them."""
        return {nodeid: _shown(r) for nodeid, r in self.results.items() if r["outcome"] in NOT_RUN}


NOT_RUN = ("skipped", "xfailed", "xpassed")


def _shown(result: dict[str, str]) -> str:
    outcome, message = result["outcome"], result.get("message") or ""
    if outcome in NOT_RUN:
        reason = message.removeprefix("Skipped: ").strip() or "no reason given"
        return f"{outcome} at run time: {reason}"
    return message


def collected_as(store: Path, files: list[Path]) -> list[str]:
    """pytest's arguments naming the sealed files. Named one by one, pytest 9 collects the store's folder once per
    file (500 files: 250,000 modules made, 35 s of a 40 s run); so a store of plain files only is named as its
    folder, every `.py` in it a test file (`python_files`), collected in the same order under the same ids."""
    plain = all(p.is_file() for p in store.iterdir()) and not any(f.name == "__init__.py" for f in files)
    return ["-o", "python_files=*.py", str(store)] if plain and len(files) > 1 else [str(f) for f in files]


def _plugin_source(root: Path | None = None) -> str:
    """The plugin, the probe, the bytecode hook and the project's own copies: one namespace (`donegate.hidden.ship`),
    kept between stops in the state root's `state/ship/` when there is one."""
    return ship.payload(("plugin", *ship.PROBE, "kept", "seeded", "copies", "conftests", "traces", "failures", "inert",
                         "doctests"),
                        "<donegate plugin>",
                        ship_keep(root))


def ship_keep(root: Path | None) -> str | None:
    """Where the runs' payloads are kept between stops (`donegate.hidden.ship.payload`): under the state root."""
    return str(root / "state" / "ship") if root is not None else None


def _read(fd: int, stream: "channel.Stream") -> threading.Thread:
    """Feed `stream` from the pipe as the run goes (a thread of the parent, blocked in read)."""
    def loop() -> None:
        buf = b""
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    stream.feed(line.decode("utf-8", "replace"))
        finally:
            os.close(fd)
        if buf:
            stream.feed(buf.decode("utf-8", "replace"))

    thread = threading.Thread(target=loop, name="donegate-channel", daemon=True)
    thread.start()
    return thread


PYTEST_ARGS = (
    # Plugins the hidden run has no use for; not loading them is what lets the gate keep up with a
    # bare `pytest -q` of the same tests (measured when nine were off: the last six saved 50-70 ms on a
    # 40-test file; three of those six are on again below).
    # None decides an outcome: they add options the run does not pass (--setup-only, --setup-plan,
    # the `pythonpath` ini key). The terminal plugin stays: assertion explanations need its options.
    "-p", "no:cacheprovider", "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest",
    "-p", "no:stepwise", "-p", "no:setuponly", "-p", "no:setupplan", "-p", "no:python_path",
    # Not `no:faulthandler`, `no:unraisableexception`, `no:threadexception`: a developer's pytest has faulthandler
    # on and its own sys.unraisablehook and threading.excepthook, and the run looks like theirs (issue 45 item 1:
    # each told the first run from a developer's pytest; tests/gate/test_catalogue.py).
    # A plugin added to or taken from the `no:` ones above: the same in BOOTSTRAP's list of their modules (bootstrap.py,
    # imported by this module, so written twice).
    "-q", "--no-header", "-rN", "--tb=line",
    # A test file that cannot be imported yet (it imports a name the work will add) fails its own tests
    # (`uncollected`); the other files' tests still run, as a developer's `pytest` with this flag runs them.
    "--continue-on-collection-errors",
)


def run(store: Path, repo: Path, *, timeout: float, collect_only: bool = False, expected: list[str] | None = None,
        confine: str = "auto", allow: Sequence[str] = (), project: Path | None = None,
        python: "pyenv.Launch | None" = None, root: Path | None = None, tree: statcache.Tree | statcache.Pending | None = None,
        started: Callable[[int], None] | None = None, failed: Callable[[], None] | None = None,
        later: bool = False, seed: str = "", layout: Sequence[str] | None = None, slot: str = "",
        last: Sequence[str] = (), plugins: Sequence[str] = (), key: str | None = None, own_pytest: str = "",
        skip: Sequence[str] = (), rewrite: Sequence[Path] = (), early: bool = False,
        chosen: Callable[[], dict[str, Any] | None] | None = None, doctests: dict[str, Any] | None = None) -> TestRun:
    """Run (or collect) the store's tests against a throwaway copy of `repo`, confined as `confine`
    (auto | on | off) allows; `expected` is the sealed list of test ids; `allow`, the rules whose
    tripwires stay quiet (`scan.allow`). `project`: the folder of the repository the tests are for (a
    monorepo's package; default the repository), its working folder and first on sys.path; `python`: its
    interpreter (`donegate.hidden.python.launch`; default: found for `project`). Raises
    `python.EnvProblem` when that interpreter cannot run. With the state root and the stop's look at the
    tree (`tree`), the copy is the tree's mirror, brought in step by what changed (`setting`). `started`
    as `proc.run` has it; `failed` is called once as soon as a test reports anything but a pass. `seed`: the
    secret the `dg_random` fixture draws from (`donegate.hidden.seeded`; default: drawn now), kept as `.seed`.
    `layout`: pytest's arguments naming what to run and how instead of the store's hidden tests (the project's own
    suite laid out in `store`, `donegate.seal.own`): its configuration, rootdir and paths; `slot`: the mirror's.
    `last`: tests run after every other (the held-back ones: no value they compare is yet in the process when a
    shown test's failure is written, `donegate.seal.held`), in their own order. `plugins`: modules pytest loads as
    plugins (the environment's, as the seal recorded them: `hidden.plugins`). `key`: `paths.repo_key(repo)` when
    the caller has it (a stop derives it once: `donegate.gate.context`), naming the mirror and the bytecode store.
    `own_pytest`: the project is pytest (the seal found its `pytest` and `_pytest` in this folder of the repository,
    `hidden.plugins.own_pytest`): the run imports the project's own, as its developers' `python -m pytest` does.
    `skip`: test files under `layout`'s paths not collected (the own suite's files the change cannot reach);
    `rewrite`: the files of `layout`'s suite whose rewrite the bytecode job keeps for the next stops (`pyc.Tests`).
    `early`: a stop's first run, which may adopt the process the launcher started (`donegate.hidden.early`).
    `chosen`: for a run started before the stop's look (`tree` a `statcache.Pending`), what the look chose of it, asked
    for once its copy is in step and sent with the go (`{"skip": [...]}`: the own suite's files the change cannot
    reach); None ends the run unrun. `doctests`: the sealed doctests of the product's modules the own suite's run makes
    items of (own-suite.json's `doctests`, `seal.doctested`)."""
    from donegate.hidden import confine as walls, python as pyenv

    repo = repo.resolve()
    project = (project or repo).resolve()
    python = python or pyenv.launch(project, repo)
    kind = walls.choose(confine)
    out = _run(store, repo, timeout=timeout, collect_only=collect_only, expected=expected, kind=kind, allow=allow,
               project=project, python=python, root=root, tree=tree, started=started, failed=failed, later=later,
               seed=seed or os.urandom(16).hex(), layout=layout, slot=slot, last=last, plugins=plugins, key=key,
               own_pytest=own_pytest, skip=skip, rewrite=rewrite, early=early, chosen=chosen,
               doctests=doctests)
    if kind == "bwrap" and out.sandbox_failed:
        # No unconfined fallback: the person chooses that (confine: off), never the machine.
        out.problem = (f"the sandbox (bubblewrap) failed to start: {out.sandbox_failed} "
                       "(fix: make bubblewrap work here, or set confine: off to run the hidden tests unconfined)")
    return out


class Walls:
    """One confined run's setting: the copy of the working tree (`copy`), the environment, the argv prefix
    of the walls (the project's interpreter bound in) and the sys.path spec of that interpreter as the run
    sees it. Both harnesses (this pytest run and `donegate.hidden.second`) start `argv` inside it."""

    def __init__(self, store: Path, repo: Path, kind: str, tmp: Path, *, copy: Path, shared: list[str],
                 project: Path, python: "pyenv.Launch", pytest_env: bool = True, root: Path | None = None,
                 key: str | None = None, keep: str | None = None) -> None:
        from donegate.hidden import confine as walls

        self.kind, self.repo, self.store, self.tmp, self.copy, self.shared = kind, repo, store, tmp, copy, shared
        self.copied = 0.0  # seconds it took to bring the copy in step
        self.faithful = False  # the copy holds exactly what the stop's look saw (`copy.working_copy`)
        self.mirrored = False  # the copy is the tree's mirror, kept between stops
        self.told: dict[str, Any] = {}  # what `copy.working_copy` said of the copy
        self.wait: int | None = None  # the pipe a run started early waits on (`go`)
        self.passed: tuple[int, ...] = ()  # what of it the run's process is handed
        hidden = walls.hidden_roots()
        self.private = "/tmp" if kind == "bwrap" else str(tmp / "tmp")
        # HOME as a developer's shell has it where the walls hide the account's home (empty, the run's own);
        # unconfined, a fresh folder beside the private temporary one (`confine.env`).
        home = (walls.seen_home(hidden) or "/tmp/home") if kind == "bwrap" else str(tmp / "home")
        if kind != "bwrap":  # (already there in a folder the launcher laid out: `setting`'s `laid`)
            os.makedirs(self.private, exist_ok=True)
            os.makedirs(home, exist_ok=True)
        self.env = walls.env(self.private, hidden, home=home, tmpdir=kind != "bwrap")
        if not pytest_env:  # the second harness: nothing named like pytest in what the product sees
            self.env = {k: v for k, v in self.env.items() if not k.startswith("PYTEST")}
        self.seen_repo = repo if kind == "bwrap" else copy
        self.seen_project = self.seen_repo / project.relative_to(repo)
        self.env["PWD"] = str(self.seen_project)  # the working folder, as a developer's shell exports it
        self.spec = python.spec({} if kind == "bwrap" else {str(repo): str(copy)})
        # What a developer's shell exports to the command it starts (issue 45 item 1): `_`, the command's path.
        self.env["_"] = self.spec["executable"]
        walls.activate(self.env, python.interp.env, self.spec["prefix"], hidden)
        self.spec["repo"] = str(self.seen_repo)
        self.spec["shared"] = list(shared)
        from donegate.hidden import pyc as bytecode

        pyc: list[str] = []
        if kind == "bwrap":  # the product's bytecode from the last stops, read-only
            pyc = bytecode.bind(root, repo, key)
            self.spec["pyc"] = bytecode.INSIDE if pyc else ""
        self.cwd = str(self.seen_project) if kind != "bwrap" else str(tmp)
        # The interpreter both harnesses start (`python.Launch.starter`), seen in the sandbox at /tmp/.python.
        starter = python.starter(tmp / "python", bootstrap.pth(keep))  # its `.pth` line: the bootstrap's code kept
        self.argv = [STARTER + "/bin/python" if kind == "bwrap" else str(starter)]
        self.prefix: list[str] = []
        if kind == "bwrap":
            names: list[str] = []  # names looked up as a developer's machine answers them (`confine.offline_nsswitch`)
            if walls.NSSWITCH.is_file():
                pyenv.lay(tmp / "nsswitch.conf", walls.offline_nsswitch(walls.NSSWITCH.read_text(errors="replace")))
                names = ["--ro-bind", str(tmp / "nsswitch.conf"), str(walls.NSSWITCH)]
            # The second harness is sent the sealed tests without their literal expected values: no store there.
            self.prefix = walls.bwrap_argv(proc.system_tool("bwrap") or "/usr/bin/bwrap", repo=repo, copy=copy,
                                           store=store if pytest_env else None, hidden=hidden, env=self.env, shared=shared,
                                           python=python.binds, chdir=project, pid1=not pytest_env,
                                           extra=[*pyc, "--ro-bind", str(tmp / "python"), STARTER, *names])
        elif kind == "sandbox-exec":
            self.prefix = ["/usr/bin/sandbox-exec", "-p", walls.sandbox_profile(copy=copy, store=store if pytest_env else None, tmp=tmp,
                                                                                hidden=hidden, python=python.binds)]

    def go(self, started: Callable[[int], None] | None, pipe: tuple[int, int] | None = None,
           chosen: Callable[[], dict[str, Any] | None] | None = None,
           check: Callable[[], bool] | None = None) -> Callable[[int], None] | None:
        """`proc.run`'s `started` for this run: `started`, then, for a run started before its copy is in step
        (the mirror, with the look still to come), what brings the copy in step and tells the process to go on
        (a byte on the pipe `wait` names to it, passed with `passed`), or ends it when the stop wants no run.
        `pipe`: that pipe, made by the launcher for a process it started early (`donegate.hidden.early`); `chosen`:
        what the run is sent with its go (`run`'s), after the byte, to the pipe's end (None: the run is ended); `check`:
        asked once the copy is in step, before the go (False: the run is ended unrun, as `second.run`'s helper name)."""
        bring = self.told.get("bring")
        if bring is None and chosen is None:
            return started
        stepped = bring is not None  # (else the copy was made whole, before the run: only the choice is waited for)
        r, w = pipe or os.pipe()
        self.wait, self.passed = r, (r,)

        def both(pid: int) -> None:
            if started is not None:
                started(pid)
            try:
                ok = bring() if bring is not None else True
                ok = ok and (check is None or check())
                told = chosen() if ok and chosen is not None else None
                if ok and (chosen is None or told is not None):
                    if stepped:
                        self.copied, self.faithful = self.told.get("copied", 0.0), self.told.get("faithful", False)
                    more = json.dumps(told).encode() if told is not None else b""
                    with contextlib.suppress(BrokenPipeError):  # the run ended before it was told: its exit says why
                        os.write(w, b"g" + more)
                else:
                    proc.cancel(pid)
            finally:
                os.close(w)  # never told: the process reads its end and leaves
        return both

    def unseen(self, text: str) -> str:
        """`text` with the copy's path shown as the repository's (unconfined runs see the copy's)."""
        return text if self.kind == "bwrap" else text.replace(str(self.copy), str(self.repo))


@contextlib.contextmanager
def setting(store: Path, repo: Path, kind: str, *, project: Path, python: "pyenv.Launch", root: Path | None = None,
            tree: statcache.Tree | statcache.Pending | None = None, slot: str = "", pytest_env: bool = True,
            later: bool = False, key: str | None = None, laid: str = "") -> Iterator[Walls]:
    """The walls of one run, around a copy of the working tree: with the state root and the stop's look
    (`tree`), a confined run works in the tree's mirror `slot` (each harness has its own, so two runs at
    once share nothing), brought in step by what changed and put back after the run
    (`donegate.hidden.copy.working_copy`); otherwise a throwaway copy in a temporary folder. The mirror
    only inside bubblewrap, which binds it at the repository's path: an unconfined run would see (and
    print) a path under the state root. `later`: the mirror is put back after the hook's answer
    (`copy.after_answer`). `key`: `paths.repo_key(repo)` when the caller has it (as `run` has it). `laid`: the
    temporary folder the launcher laid out for a process it started early (`donegate.hidden.early`)."""
    from donegate.hidden import copy as throwaway

    shared = throwaway.shared_dirs(repo)
    mirror = (root, tree) if kind == "bwrap" else (None, None)
    # Unconfined, the run's process starts at once and imports pytest, and its copy of the tree is made only once
    # the stop wants the run (nothing of the product runs on a cached stop: `copy.working_copy`, `Walls.go`).
    wait = tree if isinstance(tree, statcache.Pending) and kind != "bwrap" else None
    t0 = time.monotonic()
    told: dict[str, Any] = {}
    throwaway.remove_now()  # the folders of this process's earlier runs (a process that runs several stops)
    tmp = laid or make_temp_dir("donegate-run-")
    if later:
        throwaway.LIVE.add(tmp)
    try:
        with throwaway.working_copy(repo, Path(tmp), shared, root=mirror[0], tree=mirror[1], link_shared=kind != "bwrap",
                                    told=told, slot=slot, later=later, wait=wait,
                                    sub=project.relative_to(repo).as_posix() if project != repo else "", key=key) as copy:
            w_ = Walls(store, repo, kind, Path(tmp), copy=copy, shared=shared, project=project, python=python,
                       pytest_env=pytest_env, root=mirror[0], key=key, keep=ship_keep(root))
            w_.copied, w_.faithful = time.monotonic() - t0, told.get("faithful", False)
            w_.mirrored = told.get("mirror", False)
            w_.told = told
            yield w_
    finally:
        # A stop's runs (`later`): the folder goes after the answer, with the put-backs (`copy.remove_later`).
        if later:
            throwaway.LIVE.discard(tmp)
            throwaway.remove_later(tmp)
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


def _run(store: Path, repo: Path, *, timeout: float, collect_only: bool, expected: list[str] | None, kind: str,
         allow: Sequence[str], project: Path, python: "pyenv.Launch", root: Path | None = None,
         tree: statcache.Tree | statcache.Pending | None = None, started: Callable[[int], None] | None = None,
         failed: Callable[[], None] | None = None, later: bool = False, seed: str = "",
         layout: Sequence[str] | None = None, slot: str = "", last: Sequence[str] = (),
         plugins: Sequence[str] = (), key: str | None = None, own_pytest: str = "", skip: Sequence[str] = (),
         rewrite: Sequence[Path] = (), early: bool = False,
         chosen: Callable[[], dict[str, Any] | None] | None = None, doctests: dict[str, Any] | None = None) -> TestRun:
    from donegate.hidden import channel, early as kept

    files = test_files(store) if layout is None else []
    store = store.resolve()
    offer = kept.take() if early else None  # the process the launcher started, if any: its folder is this run's
    with setting(store, repo, kind, project=project, python=python, root=root, tree=tree, later=later, slot=slot,
                 key=key, laid=offer.tmp if offer is not None else "") as w_:
        # The project's own suite (`layout`): its fingerprints checked per test file (`plugin.Reporter.by_file`).
        spec = {**w_.spec, "allow": list(allow), "seed": seed, "last": list(last), "by_file": layout is not None,
                "skip": list(skip), **({"doctests": doctests} if doctests else {})}
        if own_pytest:  # the project is pytest: its own folder holds the harness's code (the tripwires' `kit`)
            own = str(w_.seen_repo / own_pytest)
            spec.update(own_pytest=True, pytest=[own], theirs=[*spec["theirs"], own + "/pytest", own + "/_pytest"])
        tests = None
        # The sealed tests' kept rewrite: confined, bound read-only; unconfined (the hidden tests only), at its real path.
        unconfined = kind == "none" and layout is None
        if root is not None and (w_.mirrored and (layout is None or rewrite) or unconfined):
            from donegate.hidden import pyc as bytecode

            # The own suite is laid out afresh at every stop (`store`): its rewrite kept by path below it.
            tests = bytecode.Tests(root, repo, python, files or list(rewrite), key, under=store if rewrite else None,
                                   confined=not unconfined)
            # Named whether or not the job has written it yet (a rewrite not there is made by the run, never written
            # there): the run is the same before and after the first stop's job, and the next stop adopts its
            # early run (`donegate.hidden.early`).
            if spec.get("pyc") or unconfined:
                spec["tests_pyc"] = {"stores": sorted({str(f.parent) for f in files} | {str(store)}),
                                     "dir": tests.inside + tests.sub, "root": str(store) if rewrite else ""}
        args = ["-c", str(store / INI_NAME), "--rootdir", str(store), "--confcutdir", str(store)] if layout is None else []
        # The project's own suite (`layout`) as its pytest runs it: the `pythonpath` ini key applied (the sealed
        # configuration's folders outside the laid-out suite are put on sys.path by `seal.own.with_pythonpath`), and
        # its doctests collected (`test*.txt`, `addopts = --doctest-modules`: inflect 7.4.0's suite was refused as
        # "unrecognized arguments: --doctest-modules", as is every project's of jaraco's layout).
        pytest_args = PYTEST_ARGS if layout is None else _without(_without(PYTEST_ARGS, "no:python_path"), "no:doctest")
        # No `--basetemp`: the tests' temporary folders are pytest's own (`pytest-of-USER/pytest-N`), in the run's private
        # /tmp (unconfined: TMPDIR), as a developer's pytest makes them (issue 45 item 1).
        args += [*pytest_args, *(a for m in plugins for a in ("-p", m))]  # the environment's plugins the seal recorded
        if layout is not None and any(m.partition(".")[0] == "pytest_cov" for m in plugins):
            # The project's `--cov` in addopts (async-lru 2.0.4): coverage's tracer, set before the tests and taken
            # away at the end, reads as the tests' tracer left running, and the suite was not kept. Coverage is no
            # verdict of a stop (a lowered `fail_under` is named as a weakening): pytest-cov's own switch, off.
            args.append("--no-cov")
        if collect_only:
            args.append("--collect-only")
        args += collected_as(store, files) if layout is None else list(layout)
        source, go_on = _plugin_source(root), started

        def build(w: int, nonce: str, pipe: tuple[int, int] | None = None) -> tuple[list[str], str]:
            nonlocal started
            started = w_.go(go_on, pipe, chosen)
            spec.update(go=w_.wait, fd=w, args=args, **({"chosen": True} if chosen is not None and w_.wait is not None else {}))
            # `python -m pytest` with no argument, as a developer types it: pytest's arguments reach it in the spec
            # (`bootstrap.BOOTSTRAP`), so sys.argv, sys.orig_argv and /proc/self/cmdline hold none of the kit's.
            return [*w_.prefix, *w_.argv, "-m", "pytest"], nonce + "\n" + json.dumps(spec) + "\n" + source

        argv, data, r, w, nonce, was = kept.adopt(offer, build, w_)  # the launcher's process, if it is this one
        offer = offer if was == "adopted" else None
        laid = kept.laid(str(w_.tmp)) if early and kept.KEEP and offer is None else None  # the next stop's recipe
        stream = channel.Stream(nonce)
        stream.on_fail = failed
        reader = _read(r, stream)
        res = proc.run(argv, timeout=timeout, cwd=w_.cwd, env=w_.env, input=data,
                       pass_fds=(w, *w_.passed) if offer is None else (), started=started, adopted=offer)
        if offer is None and laid is not None:
            kept.keep(argv, w, w_.env, w_.cwd, data, str(w_.tmp), laid, w_.told.get("lock") or "", seed, nonce,
                      spec["go"])
        reader.join(timeout=2)
        outlived = reader.is_alive()
    look = tree.get(0) if isinstance(tree, statcache.Pending) else tree  # None: the stop cancelled the run unrun
    # The job takes the stop's look after the answer (`pyc.Compile`): a run can end before the stop has set it (a
    # loaded machine: the look's rest and the cache's lookup outlast the run). Was: `look` here, none yet, no job at
    # all, and the next stop compiled every source again (seen once in CI, test_own_suite_cost).
    if later and w_.mirrored and root is not None and tree is not None and (layout is None or tests is not None):
        # The run used the tree's mirror (confined): once the hook has answered and the mirror is put
        # back, its sources are compiled for the next stops (`donegate.hidden.pyc`); the own suite's run, only its
        # sealed tests' rewrite, when some is missing (the hidden run's job compiles the same tree's sources).
        from donegate.hidden import copy as throwaway, pyc as bytecode

        throwaway.after(bytecode.Compile(root, repo, w_.copy, tree, (".git", *w_.shared), python, project,
                                         store if layout is None else None, tests, key, code=layout is None))
    elif later and unconfined and look is not None and tests is not None and tests.missing:  # unconfined: the tests' rewrite only (`pyc.Rewrite`)
        from donegate.hidden import copy as throwaway, pyc as bytecode

        throwaway.after(bytecode.Rewrite(tests, store))
    output = w_.unseen(res.stdout + res.stderr)
    def run_of(ok: bool, problem: str, **found: Any) -> TestRun:
        made = TestRun(ok, problem, duration=res.duration, output=output, confinement=kind, **found)
        made.python = python.interp.record()
        made.copy_duration, made.faithful = w_.copied, w_.faithful
        made.seed = seed
        made.early = was
        return made

    if res.timed_out:
        what = "the hidden tests" if layout is None else "the project's own tests"  # (attrs 24.2.0's, at the seal)
        return run_of(False, f"{what} did not finish within {timeout:g} s (timeout); the run was killed")
    if kind == "bwrap" and not stream.hello and res.stderr.startswith("bwrap:"):
        out = run_of(False, "the sandbox failed to start")
        out.sandbox_failed = res.stderr.strip().splitlines()[0][:300]
        return out
    if not stream.hello and res.returncode == ENV_EXIT and ENV_MARK in res.stderr:
        # Before the plugin said hello nothing of the project has run: the interpreter itself cannot run pytest.
        why = res.stderr.split(ENV_MARK, 1)[1].splitlines()[0][:300]
        out = run_of(False, f"the project's interpreter {python.interp.describe()} cannot run the kit's pytest ({why})")
        out.environment = out.problem
        return out
    tamper, problem = stream.problem(res.returncode)
    refused = _hook_refused(output) if not stream.hello and res.returncode == 1 else ""
    if not stream.hello and (res.returncode in (3, 4) or refused) and not tamper:
        # pytest itself refused to start (its configuration: an option of a plugin not installed, a conftest.py that
        # does not import, a conftest hook of an older pytest's: wrapt 1.16.0's `pytest_pycollect_makemodule(path,
        # parent)` under the kit's pytest 9): before the plugin's hello nothing of a test ran; its own error says what
        problem = f"pytest stopped before running any test (exit code {res.returncode}): {refused or _refusal(output)}"
    if outlived and not tamper:
        tamper = problem = "a process started by the code under test outlived the run and kept the result channel open"
    for entry in [*stream.results.values(), *stream.errors]:
        entry["message"] = w_.unseen(entry["message"])
    for entry in stream.imports:
        entry["file"] = w_.unseen(entry["file"])
    out = run_of(not problem, problem, collected=stream.collected or [], results=stream.results, errors=stream.errors)
    out.tamper = tamper
    out.tamper_rule = (stream.rule or "stream") if tamper else ""
    out.tamper_keys = stream.keys
    out.alarms = stream.alarms
    out.imports = stream.imports
    if problem:
        return out
    if expected is not None and not collect_only:
        uncollected(out, _by_file(expected))
    if out.errors:
        out.ok = False
        out.problem = "the hidden tests failed to collect: " + "; ".join(e["message"].splitlines()[0] if e["message"] else e["nodeid"] for e in out.errors)
    elif expected is not None:
        seen = set(out.collected) if collect_only else set(out.results)
        missing = [t for t in expected if t not in seen]
        if missing:
            out.ok = False
            out.problem = f"{len(missing)} of {len(expected)} sealed tests did not run: " + ", ".join(missing[:5])
    return out


def _refusal(output: str) -> str:
    """pytest's own line for why it did not start: its usage error, else the error a conftest.py raised."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("ERROR:", "E ")) or ": error: " in line]
    return (said[-1] if said else lines[-1] if lines else "no output")[:300]


def _hook_refused(output: str) -> str:
    """pluggy's refusal of a conftest.py hook (its arguments not in the kit's pytest's hookspec), as one line: the
    hook as defined and why; "" when the output holds none."""
    lines = output.splitlines()
    at = next((i for i, line in enumerate(lines) if "PluginValidationError: Plugin " in line), None)
    if at is None:
        return ""
    said = [x.strip().removeprefix("hookimpl definition: ") for x in lines[at + 1:at + 3] if x.strip()]
    return (f"the kit's pytest refuses the hook {': '.join(said)} (rename the arguments it no longer passes as pytest "
            "7+ spells them: pytest 9 dropped `path` and `fspath`)")[:330]


def _without(args: Sequence[str], plugin: str) -> tuple[str, ...]:
    """`args` without `-p plugin`."""
    out: list[str] = []
    for a in args:
        if a == plugin and out and out[-1] == "-p":
            out.pop()
        else:
            out.append(a)
    return tuple(out)


def _by_file(ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in ids:
        out.setdefault(t.split("::")[0], []).append(t)
    return out


IMPORT_ERROR = "ImportError while importing test module"  # pytest's own words for a test file that cannot import


def import_error(error: dict[str, str]) -> bool:
    """A collection error that is a test file's import failing (ImportError, ModuleNotFoundError)."""
    return "::" not in error.get("nodeid", "::") and IMPORT_ERROR in error.get("detail", "")


def uncollected(out: TestRun, sealed: dict[str, list[str]]) -> None:
    """A sealed file pytest could not import (`donegate.seal.unwritten`: it imports a name the work is to add, or
    the work broke an import) fails each of its sealed tests with the import error, as a developer's run shows it;
    `sealed`: each file's sealed tests. Any other collection error stays the run's problem."""
    kept = []
    for e in out.errors:
        tests = sealed.get(e["nodeid"])
        if not tests or not import_error(e) or any(t in out.results for t in tests):
            kept.append(e)
            continue
        for t in tests:
            out.results[t] = {"outcome": "failed", "message": e["message"], "when": "collect"}
    out.errors = kept
