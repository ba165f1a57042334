"""Sealing: building a store for a repository and switching it in, and the changes to a seal after it
(`unseal`, `relocate`, the protected files refreshed at install, old stores swept).

The swap: the new store is built in a folder of its own (`_build`) and switched in by replacing the seal
record (one `os.replace`, `_switch`); a seal that fails or crashes leaves the previous store as it was, and
`store.sweep` removes what a crashed seal left (a stop does it too). Reading a store is `store.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any
from donegate.core import fsafe
from donegate.tree import git
from donegate import paths
from donegate.hidden import runner
from donegate.seal import own
from donegate.errors import DonegateError, StoreError
from donegate.core.util import atomic_write, utc_now
from donegate.seal.store import (MANIFEST, MANIFEST_VERSION, PLACES, REPO_TEST_GLOBS, TREE, Store, leftovers, fault, folder_of,
                                 load, lock_path, read_record, seal_record_path, sha256_file, snapshot, tree)


_ASYNC = "async def functions are not natively supported"


def _switch(repo: Path, root: Path, folder: Path, text: str, sealed_at: str, by: dict[str, Any] | None = None) -> None:
    """Make `folder` (with manifest `text`) the store: one os.replace of the seal record. `by`: who
    sealed (`donegate.person.ownership.who`); the Stop hook hands a seal made inside a session to a person."""
    record = json.dumps({"manifest_sha256": hashlib.sha256(text.encode()).hexdigest(), "sealed_at": sealed_at,
                         "store": folder.name, **({"by": by} if by is not None else {})})
    path = seal_record_path(repo, root)
    atomic_write(path, record, before_replace=lambda: fault("seal:record-written"))
    fault("seal:switched")


def _sealing(repo: Path, root: Path):
    """The seal's lock for `repo` (held for the whole seal), with leftovers of earlier seals swept."""
    import contextlib
    from donegate.core.deadline import flock

    @contextlib.contextmanager
    def held():
        lock = lock_path(repo, root)
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            flock(fd, None)
            record = read_record(repo, root)
            keep = folder_of(repo, root, record).name if record is not None else None
            for p in leftovers(repo, root, keep):
                shutil.rmtree(p, ignore_errors=True)
            yield record
        finally:
            os.close(fd)

    return held()


def _new_folder(repo: Path, root: Path) -> Path:
    parent = paths.acceptance_root(root)
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=parent, prefix=f"{paths.repo_key(repo)}@"))


def _retire(repo: Path, root: Path, old: dict[str, Any] | None, new: Path) -> None:
    if old is not None:
        previous = folder_of(repo, root, old)
        if previous != new:
            shutil.rmtree(previous, ignore_errors=True)
    fault("seal:cleaned")


def seal(
    repo: Path,
    files: list[Path],
    *,
    request: str = "",
    timeout: float = 120,
    protected: list[str] | None = None,
    protect_repo_tests: bool = True,
    extra: dict[str, Any] | None = None,
    root: Path | None = None,
    allow_skip: bool = False,
    confine: str = "auto",
    add: bool = False,
    python: str | None = None,
    python_by: str = "--python",
    pythonpath: list[str] | None = None,
    by: dict[str, Any] | None = None,
    held: list[Path] | None = None,
    held_share: float = 0.0,
    allow: list[str] | None = None,
    own_tests: list[str] | str | None = "auto",
    supersedes: list[str] | None = None,
) -> Store:
    """Copy `files` into a new store for `repo`, collect and run them once, write the manifest, switch.

    Only `passed` counts at the gate, so a test that skips or xfails at seal time could never pass:
    it is refused unless `allow_skip`, and the baseline records it either way. With `add`, the sealed
    set (verified) is kept and `files` join it: the whole new set is collected and run again, its
    request kept unless a new one is given.

    `repo` is the project (a working tree's top, or a subfolder: a monorepo's package): the hidden run
    is for it (its environment, its sys.path, its working folder); its environment is looked for in it,
    then in each folder above it up to the git top level. `python` names its interpreter (`python_by`
    says where that came from); default: found (`donegate.hidden.python`). The interpreter and
    `pythonpath` are kept in the manifest: every stop starts the same one. An import error that is the
    environment's (the project or a dependency not importable) refuses the seal in one line, never
    counted as a new requirement.

    `held`: files among `files` (or beside them) whose tests are held back (`donegate.seal.held`); none
    named, the kit holds back `held_share` of the tests of each file (`held.pick`; `seal --add`: of the files
    added, and none when the held-back tests sealed were a person's).

    `own_tests`: the project's own suite (`donegate.seal.own`): "auto" finds it as pytest would, "off" keeps none,
    a list names its paths; it is run once and packed into the store with its baseline (`seal --add` keeps the
    one sealed). `supersedes`: its test ids the request changes (they never block)."""
    from donegate.seal import held as held_back
    from donegate.tree import repo as repos
    from donegate.hidden import missing, python as pyenv

    repo = repos.project(repo)  # the folder named: a working tree's top, or a subfolder project in it
    project = repo
    launch = pyenv.launch(project, repo, named=python, named_by=python_by, pythonpath=pythonpath,
                          top=git.toplevel(repo))
    root = root or paths.home()
    paths.check_outside(repo, root)
    ident = repos.identity(repo)
    held_names = {f.name for f in held or []}
    files = [*files, *(f for f in held or [] if f not in files)]
    if not 0 <= held_share <= 1:
        raise DonegateError(f"held_share is {held_share}: a share of the tests, from 0 to 1", "fix held_share in donegate.yaml")
    if not files and not (add and supersedes):  # `seal --add --supersedes TEST`: the sealed set, one test superseded
        raise DonegateError("no test files given", "name at least one test file: donegate seal REPO test_x.py")
    names = set()
    for f in files:
        if not f.is_file():
            raise DonegateError(f"{f}: no such test file", "name a test file that exists (its path from here, or absolute)")
        if f.suffix != ".py":
            raise DonegateError(f"{f}: not a Python file", "acceptance tests are pytest files named test_*.py")
        if f.name == "conftest.py":
            raise DonegateError(f"{f}: a conftest.py is not sealed (the hidden run reads none)",
                                "move its fixtures into the test files that use them, then seal those")
        if f.name in names:
            raise DonegateError(f"{f}: two test files named {f.name}", "give every test file its own name")
        names.add(f.name)
        check_syntax(f)

    def fill(tmp: Path) -> dict[str, Any]:
        nonlocal request
        kept_held: dict[str, str] = {}
        kept_by = None
        kept_own: dict[str, Any] | None = None
        if add:
            st = load(repo, root)
            if st is None:
                raise DonegateError(f"nothing is sealed for {repo} yet, so there is nothing to add to",
                                    "seal without --add")
            kept = sorted(n for n in st.manifest["files"] if n.endswith(".py"))
            clash = sorted(names & set(kept))
            if clash:
                raise DonegateError(f"{', '.join(clash)}: already sealed for {repo}",
                                    "rename the new file, or seal the whole set again with --replace")
            for name in kept:
                shutil.copyfile(st.path / name, tmp / name)
            kept_own = st.manifest.get("own_suite")
            if own.NAME in st.manifest["files"]:  # the project's suite as it was when the work began, not as it is now
                pack = own.load(st.path) or {}
                if supersedes:  # a person says the request changes these: they no longer block
                    pack = own.supersede(pack, supersedes)
                    kept_own = own.summary(pack)
                (tmp / own.NAME).write_text(json.dumps(pack, separators=(",", ":")) + "\n", encoding="utf-8")
            request = request or st.manifest.get("request", "")
            kept_held = dict(st.manifest.get("held") or {})
            kept_by = st.manifest.get("held_by")
        for f in files:
            shutil.copyfile(f, tmp / f.name)
        (tmp / runner.INI_NAME).write_text(runner.INI_TEXT, encoding="utf-8")
        fault("seal:copied")
        def env_check(run: runner.TestRun) -> None:
            if run.environment:
                raise DonegateError(run.environment, "repair or recreate the project's environment, or name another "
                                    "interpreter with --python / python: in donegate.yaml")
            found = missing.missing_module(run.imports, launch, project, tmp)
            if found is not None:
                raise DonegateError(*found)

        # What the unchanged project already trips: the scan's findings in it first, so its own lines are its own
        # in the runs below too; a tripwire the baseline run still trips is recorded, not refused.
        from donegate.gate import scan_rules
        from donegate.gate.acceptance import own_marks
        from donegate.hidden.channel import HARD

        snap = tree(repo, root)
        found = scan_rules.baseline(repo, snap, root)
        from donegate.gate.scan_places import callers

        calls = callers(repo, snap, found)  # the calls into the functions that hold one: a new call is the change's
        marks = tuple(allow or ()) + own_marks({"scan_baseline": found})
        # One run collects and runs the tests (a collection run before it cost 0.5-1.8 more pytest runs a seal).
        from donegate.hidden import plugins as env_plugins

        plugins = env_plugins.found(launch, str(repo))  # its pytest plugins, loaded at every stop while unchanged
        off = own.switched_off(repo)  # `-p no:NAME` of its addopts (its configuration read once, not once a plugin)
        plugins = [p for p in plugins if p["name"] not in off]
        own_pytest = env_plugins.own_pytest(launch, str(repo))  # the project is pytest: its own runs the tests
        baseline = runner.run(tmp, repo, timeout=timeout, confine=confine, project=project, python=launch, allow=marks,
                              plugins=[p["module"] for p in plugins if not p.get("own")], own_pytest=own_pytest)
        env_check(baseline)
        _unwritten(baseline, tmp)
        if baseline.errors or not baseline.collected and not baseline.ok:
            detail = "\n".join(e.get("detail", "") for e in baseline.errors) or baseline.output[-3000:]
            blamed = env_plugins.blamed(baseline.imports, [p["module"] for p in plugins])
            if blamed is not None:
                raise DonegateError(f"the test files do not collect: {blamed[0]}\n{detail}".rstrip(), blamed[1])
            raise DonegateError(f"the test files do not collect: {baseline.problem}\n{detail}".rstrip(), _COLLECT_FIX)
        collected = baseline.collected
        if not collected:
            raise DonegateError("the test files hold no tests", "write functions named test_* in them")
        trips: list[dict[str, str]] = []
        if baseline.tamper and baseline.tamper_rule not in HARD and set(baseline.results) >= set(collected):
            alarms = baseline.alarms or [(baseline.tamper_rule, baseline.tamper)]
            trips = [{"rule": r, "what": w} for r, w in dict.fromkeys((r, _without_where(w)) for r, w in alarms)
                     if r not in HARD]
            baseline.ok, baseline.problem = True, ""
        unrun = [t for t in collected if t not in baseline.results]
        if baseline.ok and unrun:
            baseline.ok, baseline.problem = False, f"{len(unrun)} of {len(collected)} tests did not run: " + ", ".join(unrun[:5])
        if not baseline.ok:
            raise DonegateError(f"the baseline run against {repo} failed: {baseline.problem}",
                                "make the tests run to their end against the unchanged repository "
                                "(python -m pytest FILE there shows what stops them), then seal again")
        skipped = baseline.skipped()
        if skipped and not allow_skip:
            shown = "; ".join(f"{k} ({v})" for k, v in list(skipped.items())[:5])
            raise DonegateError(
                f"{len(skipped)} test(s) skip or xfail at seal time, and only a passed test counts at the gate: {shown}",
                "remove the skip/xfail from the tests, or seal them anyway with --allow-skip (they fail every stop until they run)",
            )
        # A test no work can make pass: an `async def` test no plugin runs (async-lru 2.0.4's own tests are bare `async
        # def`s, its `asyncio_mode = auto` in setup.cfg, which the hidden run never reads: sealed, it blocked every stop
        # with pytest's "not natively supported", a message the agent cannot act on).
        hopeless = [t for t, r in baseline.results.items() if _ASYNC in str(r.get("message") or "").partition("\n")[0]]
        if hopeless:
            raise DonegateError(f"{hopeless[0]}: {_ASYNC} in the hidden run, so it fails however the work is done "
                                "(the hidden run reads none of the project's configuration: `asyncio_mode = auto` is not applied)",
                                "mark each async test @pytest.mark.asyncio (pytest-asyncio) or @pytest.mark.anyio, then seal again")
        globs = list(protected if protected is not None else [".claude/**"])
        # Held back: the files a person names (--held, the writer's test_held_*.py), else the kit's pick by
        # held_share, in the files this seal adds; a seal whose held-back tests a person named gets none of the kit's.
        by_person = bool(held_names) or (bool(kept_held) and kept_by != "share")
        held_map = held_back.choose(collected, tmp, held_names, 0.0 if by_person else held_share, kept_held,
                                    failing=set(baseline.failing()) - set(skipped), pick_from=names if add else None)
        own_summary = kept_own
        if not add:
            suite = own.seal_suite(project, repo, launch=launch, timeout=timeout, confine=confine, allow=marks,
                                   named=own_tests, supersedes=supersedes, plugins=[p["module"] for p in plugins],
                                   own_pytest=own_pytest)
            if suite is not None and "off" in suite:
                own_summary = suite
            elif suite is not None:
                (tmp / own.NAME).write_text(json.dumps(suite, separators=(",", ":")) + "\n", encoding="utf-8")
                own_summary = own.summary(suite)
            else:
                own_summary = {"off": "switched off by own_tests: off or --own-tests off" if own_tests in ("off", ["off"])
                               else "no test folder found (testpaths, tests/, test/, PKG/tests/)"}
        (tmp / TREE).write_text(json.dumps(snap, separators=(",", ":")) + "\n", encoding="utf-8")
        return {
            "version": MANIFEST_VERSION,
            "repo": str(repo),
            "repo_key": paths.repo_key(repo),
            "base": git.head(repo),
            "request": request,
            "sealed_at": utc_now(ms=False),
            "files": {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.name != MANIFEST},
            "tests": collected,
            "count": len(collected),
            "held": held_map,
            **(({"held_by": "files"} if by_person else {"held_by": "share", "held_share": held_share}) if held_map else {}),
            "baseline": {"passing": sorted(baseline.passing()), "failing": sorted(set(baseline.failing()) - set(skipped)),
                         "skipped": sorted(skipped)},
            "protected": snapshot(repo, globs),
            "repo_tests": snapshot(repo, REPO_TEST_GLOBS) if protect_repo_tests else {},
            **({"own_suite": own_summary} if own_summary is not None else {}),
            "project": os.path.relpath(project, repo),
            # what the unchanged project already trips: never counted against a later stop
            "scan_baseline": found,
            "scan_calls": calls,
            "tripwire_baseline": trips,
            "places": PLACES,  # how their places are written (store.stale_places)
            **({"plugins": plugins} if plugins else {}),
            **({"own_plugin_fixtures": unserved} if (unserved := _unserved(plugins, baseline.failing())) else {}),
            **({"own_pytest": own_pytest} if own_pytest else {}),
            "allow": sorted(set(allow or ())),
            "python": {**launch.interp.record(), "named": python, "named_by": python_by if python else None,
                       "pythonpath": list(pythonpath or []), "binds": [str(b) for b in launch.binds]},
            **(extra or {}),
        }

    with _sealing(repo, root) as old:
        folder, manifest = _build(repo, root, old, fill, by)
        repos.record_identity(repo, root, ident)  # where its worktrees and moves are recognised from
    from donegate.hidden import second

    second.keep_at_seal(root, manifest["repo_key"], folder, list(manifest["tests"]))  # the first stop's rewrite, kept
    return Store(repo, folder, manifest)


_COLLECT_FIX = ("make each test file import against the unchanged repository (python -m pytest FILE shows why it does "
                "not): only an import of a name the work will add may fail at its top; then seal again")


def _unwritten(baseline: runner.TestRun, store: Path) -> None:
    """Test files that cannot be imported yet because they import what the work will add (`donegate.seal.unwritten`):
    their tests, named from their syntax, join the collected list in pytest's order, each failing at the seal with
    the import error. Refuses (with a fix) a file whose tests the syntax cannot name."""
    from donegate.seal import unwritten

    sealed: dict[str, list[str]] = {}
    for e in baseline.errors:
        if runner.import_error(e) and (store / e["nodeid"]).is_file():
            try:
                sealed[e["nodeid"]] = unwritten.ids(store / e["nodeid"], e["nodeid"])
            except DonegateError as exc:
                raise DonegateError(f"{exc.message} ({e['message'].splitlines()[0] if e['message'] else 'ImportError'})",
                                    exc.fix) from None
    if not sealed:
        return
    runner.uncollected(baseline, sealed)
    files: dict[str, list[str]] = {}
    for t in [*baseline.collected, *(t for ids in sealed.values() for t in ids)]:
        files.setdefault(t.split("::")[0], []).append(t)
    baseline.collected = [t for f in sorted(files) for t in files[f]]  # pytest's order: the files by name
    if not baseline.errors and baseline.problem.startswith("the hidden tests failed to collect"):
        baseline.ok, baseline.problem = True, ""


def _without_where(what: str) -> str:
    """A tripwire's line without the test it happened during (the same event at another test is the same)."""
    for cut in (" during ", " at the end of the run"):
        if cut in what:
            what = what.split(cut)[0]
    return what


def check_syntax(path: Path) -> None:
    """A test file that does not parse, in one line with file:line (not pytest's collection traceback)."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise DonegateError(f"{path}:{exc.lineno or 0}: {exc.msg}", "fix the syntax, then seal again") from None
    except ValueError as exc:  # null bytes
        raise DonegateError(f"{path}: {exc}", "acceptance tests are Python source files") from None


def unseal(repo: Path, root: Path | None = None) -> dict[str, Any] | None:
    """Remove `repo`'s seal: the record first (one atomic step: from then on the repository is not
    gated), then its folder. Returns the manifest that was sealed (None: nothing was, or it was
    unreadable)."""
    from donegate.tree import repo as repos

    repo = repos.project(repo) if Path(repo).is_dir() else Path(repo).absolute()
    root = root or paths.home()
    with _sealing(repo, root) as old:
        repos.forget_identity(repo, root)  # its worktrees are no longer recognised as sealed
        if old is None:
            return None
        try:
            manifest: dict[str, Any] | None = json.loads(fsafe.read_text(folder_of(repo, root, old) / MANIFEST))
        except (OSError, ValueError, StoreError):
            manifest = None
        folder = folder_of(repo, root, old)
        seal_record_path(repo, root).unlink()
        shutil.rmtree(folder, ignore_errors=True)
        return manifest if isinstance(manifest, dict) else {}


def _build(repo: Path, root: Path, old: dict[str, Any] | None, fill, by: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """A new store folder filled by `fill(folder) -> manifest`, its manifest written, switched in, the
    old folder removed; a failure before the switch removes the new folder and leaves the old store."""
    tmp = _new_folder(repo, root)
    switched = False
    try:
        manifest = fill(tmp)
        text = json.dumps(manifest, indent=2) + "\n"
        (tmp / MANIFEST).write_text(text, encoding="utf-8")
        fault("seal:built")
        _switch(repo, root, tmp, text, manifest["sealed_at"], by)
        switched = True
    finally:
        if not switched:
            shutil.rmtree(tmp, ignore_errors=True)
    _retire(repo, root, old, tmp)
    return tmp, manifest


def refresh_protected(repo: Path, globs: list[str], root: Path | None = None) -> bool:
    """Take a new snapshot of the protected files into a sealed store's manifest.

    For a person's own changes after sealing (installing or removing the kit's settings, which lie
    under `.claude/`): without this every later stop would block on "protected files were changed".
    Returns False when there is no sealed store. The store must be intact: a tampered one stays so.
    The new manifest goes into a copy of the store, switched in like a seal.
    """
    root = root or paths.home()
    with _sealing(repo, root) as old:
        st = load(repo, root)
        if st is None:
            return False
        manifest = {**st.manifest, "protected": snapshot(Path(st.manifest["repo"]), globs)}

        def fill(tmp: Path) -> dict[str, Any]:
            for name in manifest["files"]:
                shutil.copyfile(st.path / name, tmp / name)
            return manifest

        _build(repo, root, old, fill, (old or {}).get("by"))  # the tests are the same: so is who sealed them
        return True


def relocate(old: Path | str, new: Path | str, root: Path | None = None) -> Store:
    """Move the seal of the project sealed at `old` to the same project found at `new` (a moved or
    renamed repository): the store is copied under `new`'s key, verified first, and the old seal,
    store and identity are removed. Refused when `new` is not the same repository (no root commit
    in common), or when `old` still holds it (a copy: seal the copy instead)."""
    from donegate.tree import repo as repos

    root = root or paths.home()
    old_path = Path(old).expanduser().absolute()
    new_path = repos.project(new)
    paths.check_outside(new_path, root)
    ident_file = repos.identity_path(old_path, root)
    if not seal_record_path(old_path, root).exists():
        raise DonegateError(f"nothing is sealed for {old_path}", "name the path the repository was sealed at (donegate doctor NEW names it)")
    try:
        recorded = json.loads(ident_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    ident = repos.identity(new_path)
    if recorded.get("roots") and not set(recorded["roots"]) & set(ident["roots"]):
        raise DonegateError(f"{new_path} is not the repository sealed at {old_path}: they share no root commit",
                            f"seal the tests for {new_path}: donegate seal {new_path} TEST_FILE...")
    if old_path.is_dir() and os.path.isdir(recorded.get("common_dir") or "") and recorded.get("common_dir") != ident["common_dir"]:
        raise DonegateError(f"{old_path} still holds the sealed repository: {new_path} is a copy, not a move",
                            f"seal the tests for the copy: donegate seal {new_path} TEST_FILE...")
    with _sealing(old_path, root) as before:
        st = load(old_path, root)
        if st is None or before is None:
            raise DonegateError(f"nothing is sealed for {old_path}")
        manifest = {**st.manifest, "repo": str(new_path), "repo_key": paths.repo_key(new_path),
                    "relocated_from": str(old_path)}

        def fill(tmp: Path) -> dict[str, Any]:
            for name in manifest["files"]:
                shutil.copyfile(st.path / name, tmp / name)
            return manifest

        with _sealing(new_path, root) as previous:
            folder, _ = _build(new_path, root, previous, fill)
        repos.record_identity(new_path, root, ident)
        seal_record_path(old_path, root).unlink(missing_ok=True)
        shutil.rmtree(st.path, ignore_errors=True)
        repos.forget_identity(old_path, root)
    return Store(new_path, folder, manifest)


def _unserved(plugins: list[dict[str, Any]] | None, failing: dict[str, str]) -> list[str]:
    """The fixtures the hidden tests ask for and do not get, in a project with a pytest plugin of its own (pytest-mock's
    `mocker`): the hidden runs leave that plugin out (its hooks would run where the verdict is made, as the agent
    writes them), so such a test fails at every stop; the seal names them with the way a plugin's tests take
    (`pytester`, whose pytest loads the plugin as a developer's does)."""
    import re

    if not any(isinstance(p, dict) and p.get("own") for p in plugins or ()):
        return []
    return sorted({m.group(1) for text in failing.values() for m in re.finditer(r"fixture '([^']+)' not found", text)})

