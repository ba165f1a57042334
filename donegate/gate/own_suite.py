"""The own-suite stage (docs/own-suite.md): the project's own tests as sealed run against the agent's code, and the
test files the agent added or changed run as they are now, each in the walls of the hidden run, beside it.

A sealed test that passed at the seal and fails now blocks, named by id, `file:line` and assertion, as the project's
own test as it was when the work began; when the agent changed that test, the block says the old contract changed
and the appeal is offered. A test of the agent's (added or changed) that fails blocks as its own. What the current
test files weaken against the sealed ones (`donegate.seal.loosened`) is named.
"""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate.seal import store
    from donegate.tree import statcache

from donegate.core import fsafe
from donegate.core.util import make_temp_dir
from donegate.gate.stop import stage, time_left

from donegate.gate import own_changed
from donegate.gate.own_changed import COVERAGE_FILES, SKIP_PARTS, TEST_NAMES


class _Run(threading.Thread):
    def __init__(self, go: Any) -> None:
        super().__init__(name="donegate-own-run", daemon=True)
        self.go = go
        self.result: Any = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.result = self.go()
        except BaseException as exc:  # raised again in the stop's own thread
            self.error = exc

    def get(self, timeout: float) -> Any:
        self.join(timeout)
        if self.error is not None:
            raise self.error
        return self.result


class OwnRuns:
    """The two runs going on: the sealed copies, and the agent's added or changed test files."""

    def __init__(self, repo: Path, st: store.Store, cfg: dict[str, Any], pack: dict[str, Any], launch: Any,
                 allow: tuple[str, ...], look: statcache.Tree | statcache.Pending | None, root: Path | None = None,
                 key: str | None = None, plugins: list[str] | None = None) -> None:
        from donegate.hidden import runner
        from donegate.tree import statcache

        self.repo, self.st, self.cfg, self.pack, self.t0 = repo, st, cfg, pack, time.monotonic()
        self.root, self.key = root, key
        self.timeout = min(cfg["timeout"], max(1.0, time_left(cfg["timeout"])))
        self.tmp = Path(make_temp_dir("donegate-own-"))
        # Named while its runs may use it: a stop ended before `drop` or `finish` (the watchdog's answer, a stage's
        # error) leaves it to the after-answer child, once the hook has exited (`copy.LIVE`), not to a day's sweep.
        from donegate.hidden import copy as throwaway

        throwaway.LIVE.add(str(self.tmp))
        self.suite = self.tmp / "suite"
        self.suite.mkdir()  # the runs' store (bound read-only), the sealed files in it only for a run of them
        self.launch = launch
        self.prefix = _prefix(repo, Path(launch.front[0]))
        # Confined, each run works in a mirror of the tree of its own (`donegate.hidden.copy`: kept between stops,
        # brought in step by what changed, put back after the answer), beside the hidden runs' mirrors, and reads
        # the product's bytecode they keep (`donegate.hidden.pyc`); unconfined, a throwaway copy as before.
        # The environment's pytest plugins, as the hidden run loads them; a project that is pytest, its own pytest.
        own_pytest = str(st.manifest.get("own_pytest") or "")
        self._go = functools.partial(runner.run, repo=repo, timeout=self.timeout, confine=cfg["confine"],
                                     project=Path(launch.front[0]), allow=allow, root=root, key=key, later=True,
                                     plugins=plugins or (), own_pytest=own_pytest)
        self.sealed: _Run | None = None
        self.now: _Run | None = None
        self.mixed: _Run | None = None  # the suite's changed non-test files run the project's way (`own_mixed`)
        self.changed: list[str] = []
        self.selected: set[str] | None = None
        self.current: dict[str, str | None] = {}
        self.data: dict[str, str | None] = {}  # the sealed data files changed since the seal: their text now
        self.docs_now: list[str] = []  # the product's modules whose doctests the agent added or changed
        self.documented: dict[str, str | None] = {}  # the sealed doctests' modules changed since the seal: their text now
        self.helpers: dict[str, str | None] = {}  # the suite's helper modules changed since the seal: their text now
        self.texts = own_changed.doctext(pack)  # the sealed text doctests, worked out once a stop
        self.elsewhere: dict[str, str | None] = {}
        self.conftests: dict[str, str | None] = {}
        self.weakened: list[dict[str, str]] = []
        self._skip: list[str] | None = None  # what the sealed run leaves out; None: it is not to run
        self._chosen = threading.Event()
        if isinstance(look, statcache.Pending):
            # Begun before the stop's look (as the hidden runs are): the sealed copies' process imports pytest while
            # the hook looks, and is sent what the look chose (`chosen`) with its go. What it costs: a stop whose change
            # reaches no sealed test file starts that process and ends it unrun (~0.1 CPU-s, a cached stop's as well).
            rewrite = self._lay_out()
            self.sealed = _Run(lambda: self._go(self._store, python=self._sealed_launch, layout=self._layout, slot="own",
                                                rewrite=rewrite, tree=look, chosen=self._told,
                                                doctests=pack.get("doctests")))
        else:
            self.chosen(look)

    def _lay_out(self) -> list[Path]:
        """The sealed suite laid out in the runs' store (the sealed configuration's `pythonpath` applied), and the
        files whose rewrite the bytecode job keeps. Confined, the store is the seal's, kept from stop to stop under
        the state root (`own_laid`); else the stop's own."""
        from donegate.seal import own

        kept = self._kept()
        if kept is not None:
            self._store, self._layout = kept
        else:
            self._store, self._layout = self.suite, own.lay_out(self.pack, self.suite)
        self._sealed_launch = own.with_pythonpath(self.pack, self.launch, self._store)
        # (the kit's pytest makes the kept rewrite: a project that is pytest rewrites with its own)
        return [] if self.st.manifest.get("own_pytest") else _rewritten(self.pack, self._store)

    def _kept(self) -> tuple[Path, list[str]] | None:
        """The seal's laid-out suite kept under the state root (`own_laid`), for a confined run; None: none."""
        from donegate.hidden import confine as walls
        from donegate.seal.store import OWN_SUITE

        digest = (self.st.manifest.get("files") or {}).get(OWN_SUITE)
        if self.root is None or not self.key or not digest or walls.choose(self.cfg["confine"]) != "bwrap":
            return None
        from donegate.hidden import own_laid

        return own_laid.laid(self.pack, self.root, self.key, digest)

    def _told(self) -> dict[str, Any] | None:
        """The sealed run's go (`runner.Walls.go`): what the look chose of it, once it has (None: it is not to run)."""
        self._chosen.wait(max(1.0, time_left(self.cfg["timeout"])))
        return None if self._skip is None else {"skip": self._skip}

    def chosen(self, look: statcache.Tree | None) -> None:
        """What the stop's look chooses: the sealed test files the change can reach (`donegate.seal.reach`), or all;
        the agent's added or changed test files, run as they are now."""
        repo, st, pack, prefix = self.repo, self.st, self.pack, self.prefix
        since = own_changed.since_seal(repo, st, look)  # once: without a look or a snapshot, a walk or a git run
        self.changed = own_changed.changed_tests(repo, since, prefix)
        self.documented = own_changed.doctested_changed(repo, since, pack, prefix, self.texts)
        # the product's modules whose doctests the agent added or changed (`--doctest-modules`): run as they are now
        self.docs_now = own_changed.doctested_mine(repo, since, pack, prefix, self.documented)
        # a sealed doctest text file the agent changed runs as it is now too (its examples, the agent's own tests)
        self.docs_now += [r for r in self.texts if self.documented.get(r) is not None]
        self.docs_now += own_changed.texts_mine(repo, since, pack, prefix)  # and a text doctest it added
        self.data = own_changed.data_changed(repo, since, pack, prefix, self.texts)
        self.helpers = own_changed.helpers_changed(repo, since, pack, prefix)  # (their constants: expected values)
        if self.data:  # the tests reading a data file the agent changed run with its rows too (`own_data`)
            from donegate.gate import own_data

            self.changed = sorted({*self.changed, *(f for f in own_data.readers(pack, self.data)
                                                    if own_changed.text(repo / prefix / f) is not None)})
        # Cost follows the change: the sealed test files the change can reach (`donegate.seal.reach`), or all.
        self.selected = None if self.cfg.get("own_run") == "all" else _selected(since, pack, prefix)
        if self.selected is None or self.selected:
            # The suite's paths as sealed, what the change cannot reach not collected (named one by one instead,
            # pytest collects their folder once per file named); the sealed tests' rewrite kept between stops.
            rewrite = self._lay_out() if self.sealed is None else []
            self._skip = _skipped(pack, self._store, self.selected) if self.selected is not None else []
            if self.sealed is None:
                self.sealed = _Run(lambda: self._go(self._store, python=self._sealed_launch, layout=self._layout, slot="own",
                                                    skip=self._skip, rewrite=rewrite, tree=look,
                                                    doctests=pack.get("doctests")))
        self._chosen.set()
        if self.helpers:  # a non-test file of the suite changed: run the project's way too (`own_mixed`)
            from donegate.gate import own_mixed
            self.mixed = own_mixed.start(self, look, _Run, _skipped)
        if self.changed or self.docs_now:
            args = ["--rootdir", ".", *self.changed, *self.docs_now]
            self.now = _Run(lambda: self._go(self.suite, python=self.launch, layout=args, slot="own-now", tree=look))
        # What only the verdict reads, once the runs are on their way (parsing the changed files: their processes
        # start sooner; the values are the same).
        self.current = {name: own_changed.text(repo / prefix / name) for name in own_changed.sealed_changed(since, pack, prefix)}
        self.elsewhere = own_changed.added(repo, pack, self.changed, prefix)
        self.conftests = own_changed.conftests(repo, self.current, prefix)
        self.weakened = _support_weakened(repo, since, pack, prefix)

    def drop(self) -> None:
        """The stop wants no run (its verdict came from the cache): the sealed run, begun, ends unrun."""
        self._skip = None
        self._chosen.set()
        self._unrun()
        self._let_go()

    def _let_go(self) -> None:
        """The runs' store removed after the answer, as the runs' own folders (`copy.remove_later`)."""
        from donegate.hidden import copy as throwaway

        throwaway.LIVE.discard(str(self.tmp))
        throwaway.remove_later(str(self.tmp))

    def _unrun(self, wait: float = 0.5) -> None:
        """The sealed run told not to run, given `wait` seconds to let its mirror go (its put-back queued before the
        answer), as `acceptance.Running.abandon` gives the hidden runs; its folder, if it still holds it then, goes
        once the hook has exited (`copy.LIVE`)."""
        if self.sealed is not None:
            self.sealed.join(wait)

    def finish(self) -> dict[str, Any]:
        stage("the project's own tests")
        from donegate.hidden.runner import TestRun

        try:
            # (a sealed run begun before the look and ended unrun: the change reaches none of its files)
            if self._skip is None:
                self._unrun()
            sealed = self.sealed.get(max(1.0, self.timeout + 30)) if self.sealed is not None and self._skip is not None \
                else TestRun(True)
            now = self.now.get(max(1.0, self.timeout + 30)) if self.now is not None else None
            mixed = self.mixed.get(max(1.0, self.timeout + 30)) if self.mixed is not None else []
        finally:
            self._let_go()
        if sealed is None or (self.now is not None and now is None) or mixed is None:
            return {"ok": False, "problem": "the project's own tests did not finish in the stop's time", "failing": [],
                    "mine": [], "weakened": []}
        gate = judge(self.pack, sealed, now, [*self.changed, *self.docs_now], self.current, time.monotonic() - self.t0, self.selected,
                     self.elsewhere, self.conftests, functools.partial(_hidden_texts, self.st.path), self.documented,
                     self.data, self.texts, self.helpers, mixed, own_changed.reader(self.repo / self.prefix))
        if now is not None and now.errors:  # a module of the project said missing: its mirror's state, to the log
            from donegate.gate import own_missing

            own_missing.noted(self.root, self.key, self.repo, self.prefix, now)
        if self.weakened:
            gate["weakened"] += self.weakened
            gate["ok"] = False
        return gate


def start(repo: Path, st: store.Store, cfg: dict[str, Any], launch: Any, allow: tuple[str, ...],
          look: statcache.Tree | statcache.Pending | None, root: Path | None = None, key: str | None = None,
          plugins: list[str] | None = None) -> OwnRuns | None:
    """The runs begun, or None when the seal holds no own suite (or it is switched off). `root`, `key`: the state
    root and `paths.repo_key(repo)`, for the runs' mirrors (with the stop's `look`: a `statcache.Pending` begins the
    sealed run before the look, which the stop then tells what it chose, `OwnRuns.chosen`); `plugins`: the
    environment's pytest plugins the hidden run loads (`hidden.plugins`: those still as sealed)."""
    from donegate.seal.store import OWN_SUITE

    if OWN_SUITE not in st.manifest.get("files", {}) or cfg.get("own_tests") in ("off", False):
        return None  # before importing the suite's modules (seal.own, its shapes' configparser and ast): 4 ms of CPU
    from donegate.seal import own

    pack = own.load(st.path)
    if not pack or not pack.get("tests"):
        return None
    return OwnRuns(repo, st, cfg, pack, launch, allow, look, root, key, plugins)


def _skipped(pack: dict[str, Any], suite: Path, selected: set[str]) -> list[str]:
    """The sealed test files the change cannot reach, each as the highest folder that holds none it can reach (its
    `conftest.py` is then not loaded either, as when the reached files were named one by one), under `suite`."""
    from pathlib import PurePosixPath

    # a folder the run names (the sealed paths) is collected whatever a plugin says: only below those
    named = {str(d) for p in pack.get("paths") or [] for d in (PurePosixPath(p), *PurePosixPath(p).parents)}
    reached = {str(d) for f in selected for d in PurePosixPath(f).parents} | named
    out = set()
    for name in {t.split("::", 1)[0] for t in pack["tests"]} - selected:
        top = name
        for d in map(str, PurePosixPath(name).parents):
            if d in reached:
                break
            top = d
        out.add(str(suite / top))
    return sorted(out)


def _rewritten(pack: dict[str, Any], suite: Path) -> list[Path]:
    """The laid-out files pytest rewrites (the test files, `conftest.py`): the bytecode job keeps their rewrite for
    the next stops (`hidden.pyc.Tests`). None when the sealed configuration names the assertion pass hook (the kept
    rewrite is made without it)."""
    from donegate.seal.store import matcher

    config = pack.get("config")
    if config and "enable_assertion_pass_hook" in ((pack.get("files") or {}).get(config) or {}).get("text", ""):
        return []
    tested, match = {t.split("::", 1)[0] for t in pack["tests"]}, matcher((*TEST_NAMES, "conftest.py"))
    return [suite / n for n in sorted(pack.get("files") or {})
            if n.endswith(".py") and (n in tested or match(n.rsplit("/", 1)[-1]))]


def _hidden_texts(folder: Path) -> list[str]:
    """The sealed hidden tests' texts (never shown: what the request asks decides whether a changed expected value
    is named a weakening, `own_expected.to_actual`)."""
    from donegate.seal.store import test_files

    out = []
    for path in test_files(folder):
        try:
            out.append(fsafe.read_text(path))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _prefix(repo: Path, project: Path) -> str:
    try:
        rel = project.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel


def _selected(changed: list[str], pack: dict[str, Any], prefix: str) -> set[str] | None:
    """The sealed test files the change since the seal (`changed`) can reach (None: all of them)."""
    from donegate.seal import own, reach

    # (the sealed run reads the sealed configuration)
    names = [rel for _, rel in own_changed.inside(changed, prefix) if rel not in own.CONFIGS]
    files = set(pack.get("files") or {})
    return reach.select(pack.get("reach"), pack["tests"], names, files)


def judge(pack: dict[str, Any], sealed: Any, now: Any, changed: list[str], current: dict[str, str | None],
          duration: float, selected: set[str] | None = None, elsewhere: dict[str, str | None] | None = None,
          conftests: dict[str, str | None] | None = None, asked: Any = None,
          documented: dict[str, str | None] | None = None, data: dict[str, str | None] | None = None,
          texts: list[str] | None = None, helpers: dict[str, str | None] | None = None,
          mixed: list[tuple[str, set[str] | None, Any]] | None = None, read: Any = None) -> dict[str, Any]:
    """The gate of both runs: the sealed tests that passed at the seal and fail now, the agent's tests that fail,
    what the current test files weaken. `selected`: the sealed test files this stop ran (None: all); `elsewhere`:
    the test files the agent added (`_added`); `conftests`: the conftest.py files now (`_conftests`); `asked`: the
    hidden tests' texts, read only for an expected value changed to what the code returns (`own_expected`);
    `documented`: the modules of the sealed doctests changed since the seal, their text now (`seal.doctested`);
    `data`: the sealed data files of the tests changed since the seal, their text now (`own_data`); `texts`: the
    sealed text doctests (`own_changed.doctext`, worked out here when not given); `helpers`: the suite's helper
    modules changed since the seal, their text now (`own_changed.helpers_changed`); `mixed`: `own_mixed.run`'s runs; `read`: a
    project file's text now, by its path (a fixture's fake made by a helper module: `faked`)."""
    from donegate.seal import loosened, own

    passing = set(pack["baseline"]["passing"])
    lines = pack.get("where") or {}
    shapes = own_changed.sealed_shapes(pack, current)
    changed_tests = own_changed.changed_test_ids(shapes, current, conftests)
    doctests = pack.get("doctests") or {}
    if documented:
        from donegate.seal import doctested

        # (a README's examples, a test folder's test*.txt, read as a docstring's)
        texts = own_changed.doctext(pack) if texts is None else texts
        doctests = {**doctests, **doctested.text_entries(pack, texts)}

        changed_tests |= doctested.changed(doctests, documented)
    failing = []
    gate: dict[str, Any] = {"tests": len(pack["tests"]), "sealed_passing": len(passing), "duration": round(duration, 4),
                            "ran_now": changed, "ran_sealed": "all" if selected is None else sorted(selected)}
    sealed_passing = passing  # (a weakening is named whether or not the change reaches the test's file)
    if selected is not None:  # the tests the change cannot reach are as they were at the seal
        passing = {t for t in passing if t.split("::", 1)[0] in selected}
    problem = ""
    if sealed.problem and not sealed.results and not sealed.errors:  # a file that no longer imports: its tests, below
        problem = f"the project's own tests (as sealed) did not run: {sealed.problem}"
    elif sealed.tamper:
        problem = f"the project's own tests (as sealed): {sealed.tamper}"
    elif sealed.problem and "timeout" in sealed.problem:
        problem = f"the project's own tests (as sealed): {sealed.problem}"
    errors = {e.get("nodeid", ""): (e.get("message") or "").strip() for e in sealed.errors}
    for tid in sorted(passing):
        r = sealed.results.get(tid)
        if r is not None and r.get("outcome") == "passed":
            continue
        if r is None:
            file = tid.split("::", 1)[0]
            why = next((m for n, m in errors.items() if n == file or n.startswith(file)), "") or "it did not run"
            message = "no longer collects: " + why.splitlines()[-1] if why != "it did not run" else why
        else:
            from donegate.hidden.runner import _shown

            message = _shown(r)
        failing.append({"id": tid, "where": own.line_of(tid, lines), "message": _short(message, sealed),
                        "contract": tid.split("[", 1)[0] in changed_tests})
    if mixed:  # a non-test file of the suite the agent changed, as it holds it now (`own_mixed`)
        from donegate.gate import own_mixed
        problem = problem or own_mixed.failing(mixed, sealed_passing, failing, lines, changed_tests, set(current))
    if helpers and pack.get("helpers"):  # a data module of the tests outside their folders, its values changed
        from donegate.seal import helper_data

        _data_moved(helper_data.changed(pack, helpers, own.pythonpath(pack)), sealed_passing, failing, lines)
    mine = []
    if now is not None:
        for tid, r in sorted(now.results.items()):
            if r.get("outcome") in ("passed", "skipped", "xfailed") or tid in pack["baseline"]["failing"] \
                    or tid in pack["baseline"]["skipped"] or any(f["id"] == tid for f in failing):
                continue
            from donegate.hidden.runner import _shown

            mine.append({"id": tid, "message": _short(_shown(r), now)})
        for e in now.errors:
            mine.append({"id": e.get("nodeid", ""), "message": "does not collect: "
                         + ((e.get("message") or "").strip().splitlines() or [""])[-1][:300]})
        gate["added"] = sum(1 for t in now.results if t not in pack["tests"])  # the agent's new tests (the report)
        if now.problem and "timeout" in now.problem:
            problem = problem or f"the tests you added or changed did not finish: {now.problem}"
    weakened = loosened.findings(shapes, current, sealed_passing, elsewhere, conftests)
    sealed_files = pack.get("files") or {}
    weakened += _module_weakened(sealed_files, current, sealed_passing, (pack.get("reach") or {}).get("project_files"), read)
    if documented:
        weakened += doctested.findings(doctests, documented, sealed_passing)
    for f in failing:  # an expected value changed to what the code returns now: by the failure, parsed
        name = f["id"].split("::", 1)[0]
        if name in (documented or {}):  # a doctest of the product's module: its docstring's expected output
            found = doctested.to_actual(doctests, documented or {}, f["id"], f["message"])
            if found is not None:
                weakened.append(found)
            continue
        # (the agent changed the test, or a constant, fixture or helper it reads, or a helper module it imports from)
        if name not in current and not helpers:
            continue
        from donegate.gate import own_expected as expected

        sealed_text = (sealed_files.get(name) or {}).get("text")
        # the constants it imports from a helper module the agent changed (`tests/expected.py`'s `SUM`)
        imported = expected.imports(name, sealed_text, sealed_files, helpers) if helpers else ({}, {})
        if name not in current and not imported[0]:
            continue
        from donegate.seal import calls

        chain = calls.conftests_of(name)  # the fixtures of its conftest.py files, as sealed and now
        held = ([t for c in chain if (t := (sealed_files.get(c) or {}).get("text"))],
                [t for c in chain if (t := (conftests or {}).get(c))])
        found = expected.to_actual(sealed_text, current.get(name, sealed_text), f["id"], f["message"], held, asked,
                                   imported)
        if found is not None:
            weakened.append(found)
            f["contract"] = True  # (a constant of its file it reads changed: what it checks changed all the same)
    if data:
        from donegate.gate import own_data

        weakened += own_data.findings(pack, data, failing, sealed_passing, asked)
    gate.update(ok=not (failing or mine or problem or weakened), problem=problem, failing=failing, mine=mine,
                weakened=weakened, contract=sum(1 for f in failing if f["contract"]))
    return gate


def _data_moved(moved: dict[str, list[str]], passing: set[str], failing: list[dict[str, Any]], lines: dict[str, int]) -> None:
    """The sealed tests importing a data module outside the test folders whose values the agent changed
    (`seal.helper_data.changed`), passing as sealed: each the old contract changed (the appeal offered)."""
    from donegate.seal import own

    for tid in sorted(t for t in passing if t.split("::", 1)[0] in moved and all(f["id"] != t for f in failing)):
        failing.append({"id": tid, "where": own.line_of(tid, lines), "contract": True, "message":
                        f"it reads the values of {'; '.join(moved[tid.split('::', 1)[0]])} as sealed, and they were "
                        "changed: the project's copy is what the product ships"})


def _short(message: str, run: Any) -> str:
    return message.strip()[:1000]


def problems(gate: dict[str, Any] | None) -> list[str]:
    """What the block says of the project's own tests, one problem each."""
    if not gate:
        return []
    out = []
    if gate.get("problem"):
        out.append(gate["problem"])
    for f in gate.get("failing", []):
        if f.get("contract"):
            out.append(f"the old contract changed: the project's own test {f['id']} ({f['where']}), as it was when the "
                       f"work began, fails now and you changed that test: {f['message']}. If the request changes what "
                       "it checks, say so with an appeal; otherwise make the code pass it as sealed")
        else:
            out.append(f"the project's own test {f['id']} ({f['where']}), as it was when the work began, fails now "
                       f"(a regression of what the project already did): {f['message']}")
    for f in gate.get("mine", []):
        out.append(f"your own test {f['id']} (a test you added or changed) fails: {f['message']}")
    for w in gate.get("weakened", []):
        out.append(f"a test of the project was weakened: {w['test']}: {w['what']} [{w['rule']}]; restore what it "
                   "checks, or appeal if the request changes it")
    return out


def weakenings(repo: Path, st: store.Store, cfg: dict[str, Any]) -> list[str]:
    """What the repository's test files weaken against the sealed suite now, without running anything (`doctor`:
    the same finding a stop names)."""
    from donegate.seal import loosened, own

    if own.NAME not in st.manifest.get("files", {}) or cfg.get("own_tests") in ("off", False):
        return []
    pack = own.load(st.path) or {}
    prefix = str(st.manifest.get("project") or ".")
    prefix = "" if prefix == "." else prefix
    since = own_changed.since_seal(repo, st, None)  # once: a walk of the tree (or a git run) each time
    current = {name: own_changed.text(repo / prefix / name) for name in own_changed.sealed_changed(since, pack, prefix)}
    elsewhere = own_changed.added(repo, pack, own_changed.changed_tests(repo, since, prefix), prefix)
    found = loosened.findings(own_changed.sealed_shapes(pack, current), current, set(pack.get("baseline", {}).get("passing", [])),
                              elsewhere, own_changed.conftests(repo, current, prefix))
    found += _module_weakened(pack.get("files") or {}, current, set(pack.get("baseline", {}).get("passing", [])),
                              (pack.get("reach") or {}).get("project_files"), own_changed.reader(repo / prefix))
    texts = own_changed.doctext(pack)
    data = own_changed.data_changed(repo, since, pack, prefix, texts)
    if data:
        from donegate.gate import own_data

        found += own_data.findings(pack, data, [], set(pack.get("baseline", {}).get("passing", [])))
    documented = own_changed.doctested_changed(repo, since, pack, prefix, texts)
    if documented:
        from donegate.seal import doctested

        found += doctested.findings({**(pack.get("doctests") or {}), **doctested.text_entries(pack, texts)}, documented,
                                    set(pack.get("baseline", {}).get("passing", [])))
    return problems({"weakened": found + _support_weakened(repo, since, pack, prefix)})


def _module_weakened(sealed_files: dict[str, Any], current: dict[str, str | None], passing: set[str],
                     project_files: list[str] | None = None, read: Any = None) -> list[dict[str, str]]:
    """What the changed sealed test modules gained besides their tests (`loosened.module_findings`), and the
    equalities of their tests that passed at the seal now checked through a normalising call (`normalizing.normalized`;
    `project_files`: the project's Python files at the seal, `faked.findings`')."""
    from donegate.seal import faked, loosened

    sealed = {n: (sealed_files.get(n) or {}).get("text") for n in current}
    out, marked = loosened.module_findings(sealed, current), []
    if current:  # (none changed: nothing normalised or newly marked, and their modules not imported)
        from donegate.seal import gated, normalizing

        out += normalizing.normalized(sealed, current, passing)
        marked = gated.newly_marked(sealed, current, passing, read)
    return out + faked.findings(sealed_files, current, project_files, read) + marked


def _support_weakened(repo: Path, changed: list[str], pack: dict[str, Any], prefix: str) -> list[dict[str, str]]:
    """What the configuration files and the conftest.py files changed since the seal (`changed`) take out of a run."""
    from donegate.seal import own

    sealed_files = pack.get("files") or {}
    configs, conftests, coverage, ci, commands = {}, {}, {}, {}, {}
    for name, rel in own_changed.inside(changed, prefix):
        parts = rel.split("/")
        if rel in own.CONFIGS or rel == "tox.toml":  # (tox's own file: read by the tox rules alone)
            configs[rel] = own_changed.text(repo / name)
        elif parts[-1] == "conftest.py" and not SKIP_PARTS & set(parts):
            conftests[rel] = own_changed.text(repo / name)
        if rel in COVERAGE_FILES:
            coverage[rel] = own_changed.text(repo / name)
        elif rel.startswith(".github/workflows/") and rel.endswith((".yml", ".yaml")):
            ci[rel] = own_changed.text(repo / name)
        elif own_changed.runs_tests_file(rel) and rel in sealed_files:
            commands[rel] = own_changed.text(repo / name)

    if not (configs or conftests or coverage or ci or commands):
        return []  # (before importing the rules: most stops change none of these files)
    from donegate.seal import ci_inputs, conftest_hooks, coverage_files, excluded, faked, gh_expr, pytest_files, scripts, tox_ini

    gh_expr.known(pack.get("repository"))  # (a workflow's `github.repository` read as the seal read it)

    configs = {n: t for n, t in configs.items() if n not in own.TOMLS or pytest_files.reads_toml()}  # (pytest 9's only)

    def sealed(name: str) -> str | None:
        return (sealed_files.get(name) or {}).get("text")

    read = own_changed.reader(repo / prefix)  # (the files the rules below read as they are now, each read once)

    # a configuration file the agent added where none was sealed counts too (pytest reads the first it finds); one
    # pytest now reads before the sealed one (pytest.toml over pytest.ini) is compared with the sealed one's keys
    was = pack.get("config")
    now = own.configuration(repo / prefix)[0] if configs and was else None
    moved = {now: str(was)} if now and now in configs and now != was else {}
    tox_was = {n: sealed(n) for n in tox_ini.TOX_FILES}
    tox_now = {n: configs[n] if n in configs else sealed(n) for n in tox_ini.TOX_FILES}
    tox = tox_ini.stop_findings(tox_was, configs, list(pack.get("tests") or []))
    configs.pop("tox.toml", None)
    out = excluded.config_findings({**{n: sealed(n) for n in configs}, **{n: sealed(w) for n, w in moved.items()}},
                                   configs, moved, carried := _carried(read, pack), pack.get("tests")) + tox
    out += coverage_files.findings({n: sealed(n) for n in COVERAGE_FILES}, {n: coverage.get(n, sealed(n)) for n in
                                   COVERAGE_FILES}, [n for n in changed if n.endswith(".py") and n not in sealed_files])
    flows = {n: (sealed(n), ci[n] if n in ci else sealed(n)) for n in [*ci, *sealed_files] if n.startswith(".github/")}
    out += excluded.ci_findings({n: sealed(n) for n in ci}, ci, list(pack.get("tests") or []),
                                [n for n in changed if n.endswith(".py")], pack.get("branches"), flows if ci else None,
                                ci_inputs.inlined(ci, {n: sealed(n) for n in ci}, flows) if ci else None)
    out += tox_ini.ci_findings(tox_was, tox_now, {n: flows[n] for n in ci}) if ci else []  # (`tox -e` a new narrow env)
    out += ci_inputs.findings(flows) if ci else []  # (a reusable workflow's steps as its callers' `with:` run them)
    out += scripts.findings({n: sealed(n) for n in commands}, commands, read) \
        + scripts.cov_overridden(was, sealed(was) if was else None, {**ci, **commands}, sealed)
    return out + conftest_hooks.conftest_findings({n: sealed(n) for n in conftests}, conftests, carried,
                                     tuple(sorted({t.split('::')[0] for t in pack.get('baseline', {}).get('passing', [])}))) \
        + faked.findings(sealed_files, conftests, (pack.get("reach") or {}).get("project_files"), read)


def _carried(read: Any, pack: dict[str, Any]) -> Any:
    """`carried(marks)`: the tests that passed at the seal carrying one of `marks` in their files as they are now
    (`read`; `seal.gated.carriers`: a conftest's hook that skips only tests so marked takes none of them)."""
    def carried(marks: set[str]) -> list[str]:
        from donegate.seal import gated

        return gated.carriers(marks, read, sorted(pack.get("baseline", {}).get("passing", [])))

    return carried
