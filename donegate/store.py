"""The acceptance store: hidden tests for one repository, sealed with a manifest.

Layout: `$DONEGATE_HOME/acceptance/<repo-key>@<id>/` holds the test files, `pytest.ini`, `tree.json`
and `manifest.json`. A seal record in `$DONEGATE_HOME/state/seals/<repo-key>.json` names that folder
and keeps the manifest's hash apart from the store, so a store that was deleted or rewritten
(manifest included) is told apart from one that was never sealed.

Sealing is atomic: the new store is built in a folder of its own and switched in by replacing the
seal record (one `os.replace`); a seal that fails or crashes leaves the previous store as it was
(see "the swap" below).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import fsafe, git, paths, statcache
from donegate.hidden import runner
from donegate.errors import DonegateError, StoreError
from donegate.util import atomic_write, utc_now

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
# Test files of the repository itself, protected from the agent when they existed at seal time.
REPO_TEST_GLOBS = ("test_*.py", "*_test.py", "tests/*", "test/*", "*/tests/*", "*/test/*", "conftest.py", "*/conftest.py")
TREE = "tree.json"  # the store's snapshot of every file of the repository at seal time (the `allowed` check)
# Folders never part of the snapshot: git's own, and the bytecode and pytest caches that running the
# code writes (the hidden run reads neither: its bytecode lives under the state root).
SKIP_TOP = (".git",)
SKIP_DIRS = statcache.CACHE_DIRS
# What `donegate install` writes into the repository (tests/gate/test_gate.py keeps this in step with
# install.py): never the agent's change. They lie under `.claude/`, which the protected globs cover.
KIT_FILES = (".claude/settings.json", ".claude/settings.json.donegate-backup", ".claude/donegate-install.json",
             ".claude/settings.local.json", ".claude/settings.local.json.donegate-backup", ".claude/donegate-install.local.json")


def _utc_now() -> str:
    return utc_now(ms=False)


def sha256_file(path: Path) -> str:
    """sha256 of a regular file; for a symlink, FIFO, device or socket a label that never equals one
    (never following the link, never blocking on a FIFO: see `donegate.fsafe`)."""
    return fsafe.digest(path) or "missing"


_MATCHERS: dict[tuple[str, ...], Any] = {}


def _compile(globs: tuple[str, ...]):
    """A matcher for `globs`: each glob's literal start (up to its first wildcard) indexes one regular
    expression for the globs sharing it, so a name is tried only against globs that can match it."""
    import re

    table: dict[str, list[str]] = {}
    for g in globs:
        wild = re.search(r"[*?\[]", g)
        table.setdefault(g if wild is None else g[:wild.start()], []).append(fnmatch.translate(g))
    compiled = {prefix: re.compile("|".join(parts)).match for prefix, parts in table.items()}
    lengths = sorted({len(prefix) for prefix in compiled})

    def match(name: str) -> bool:
        for n in lengths:
            if n > len(name):
                return False
            found = compiled.get(name[:n])
            if found is not None and found(name):
                return True
        return False

    return match


def matcher(globs):
    """One compiled matcher for all of `globs` (compiled once per list, not per file)."""
    key = tuple(globs)
    found = _MATCHERS.get(key)
    if found is None:
        found = _compile(key)
        if len(_MATCHERS) > 16:
            _MATCHERS.clear()
        _MATCHERS[key] = found
    return found


def matches(name: str, globs) -> bool:
    """fnmatch semantics on the repository-relative path: `*` also crosses `/`."""
    return matcher(globs)(name)


def _walk(top: Path, rel: str = "", trees: bool = True):
    """(relative name, lstat) of every entry below `top` that is not a folder, symlinks not followed.
    Without `trees`, folders holding a `.git` entry below `top` (a worktree under `.claude/worktrees/`)
    are left out: another working tree's files are its own."""
    try:
        entries = list(os.scandir(top))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for e in entries:
        name = rel + e.name
        try:
            st = e.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if e.name in SKIP_DIRS or (not rel and e.name in SKIP_TOP):
                continue
            if not trees and os.path.lexists(os.path.join(e.path, ".git")):
                continue
            yield from _walk(Path(e.path), name + "/", trees)
        elif not (not rel and e.name in SKIP_TOP):  # a worktree's `.git` file
            yield name, st


def snapshot(repo: Path, globs) -> dict[str, str]:
    """Digest of every working-tree entry (tracked, untracked, and anything under .claude/) matching
    `globs`; a symlink, FIFO, device or socket is recorded as such (`sha256_file`)."""
    names = set(git.ls_files(repo))
    names.update(name for name, _ in _walk(repo / ".claude", ".claude/", trees=False))  # settings.local.json is usually git-ignored
    match = matcher(globs)
    out = {}
    for name in sorted(names):
        if match(name):
            digest = fsafe.digest(repo / name)
            if digest is not None:
                out[name] = digest
    return out


def tree(repo: Path, root: Path | None = None) -> dict[str, list[Any]]:
    """Every file of the working tree, tracked or not, ignored or not (but `.git/` and the caches):
    [digest, size, mtime_ns, ctime_ns, inode]. What `tree_changes` compares a later tree with. With
    `root`, the look is kept under it: the first stop after a seal reads only what changed since."""
    return statcache.look(repo, root).snapshot()


def tree_changes(repo: Path, sealed: dict[str, str], now: statcache.Tree | None = None
                 ) -> tuple[list[str], dict[str, str]]:
    """(names added, removed or changed since `sealed` was taken, {name: what it now is} where it is
    no longer a regular file), by content: `now` (a look at the tree, `donegate.statcache`) has every
    file's digest, read again only where its stat moved since the last look. The seal's own stat is
    never trusted: a file written again in the tick the seal read it keeps its mtime."""
    now = now if now is not None else statcache.look(repo)
    done = now.compared.get(id(sealed))
    if done is not None:  # the scope check and the scan ask the same question of one look
        return done
    changed: set[str] = set()
    kinds: dict[str, str] = {}
    current = now.files()
    for name, digest in current.items():
        _compare(name, digest, sealed.get(name), changed, kinds)
    changed.update(name for name in sealed if name not in current)
    now.compared[id(sealed)] = out = (sorted(changed), kinds)
    return out


def _compare(name: str, current: str | None, before: str | None, changed: set[str], kinds: dict[str, str]) -> None:
    """`name` into `changed` when its digest now (`current`; None: not a file of the snapshot's now) is not the
    sealed one (`before`), and into `kinds` what it now is where it was a regular file and is no longer."""
    if current is None:
        if before is not None:
            changed.add(name)  # gone
    elif before is None or current != before:
        changed.add(name)
        what = fsafe.describe(current)
        if what and before is not None and fsafe.describe(before) != what:
            kinds[name] = what


def _read_memo(path: Path) -> tuple[str, list[str], dict[str, str]] | None:
    """(look id, changed, kinds) of a kept `Store.changes` answer; None for none or a broken one."""
    from donegate.util import memo_read

    memo = memo_read(path)
    if memo is None:
        return None
    look, value = memo
    if isinstance(value, list) and len(value) == 2:
        changed, kinds = value
        if (isinstance(changed, list) and isinstance(kinds, dict) and all(isinstance(n, str) for n in changed)
                and all(isinstance(v, str) for v in kinds.values())):
            return look, changed, kinds
    return None


def _brought_in_step(changed: list[str], kinds: dict[str, str], delta: set[str], now: statcache.Tree,
                     sealed: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """`tree_changes` for `now`, from its answer for the look `now` started from: only the names whose entry
    moved since (`delta`) are compared again, as `tree_changes` compares them."""
    out = set(changed) - delta
    what_now = {k: v for k, v in kinds.items() if k not in delta}
    for name in delta:
        _compare(name, now.file(name), sealed.get(name), out, what_now)
    return sorted(out), what_now


seal_record_path = paths.seal_record


def _fault(step: str) -> None:
    """Crash here, as a kill -9 would, when DONEGATE_FAULT names this step (the swap's crash tests)."""
    if os.environ.get("DONEGATE_FAULT") == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


class Store:
    """A verified store. `repo` is the working tree it judges; `sealed_at` the project sealed (the same
    folder, or another working tree of its repository: a worktree, `donegate.repo`)."""

    def __init__(self, repo: Path, path: Path, manifest: dict[str, Any], sealed_at: Path | None = None) -> None:
        self.repo, self.path, self.manifest = repo, path, manifest
        self._tree: dict[str, list[Any]] | None = None
        self._digests: dict[str, str] | None = None
        self.sealed_at = sealed_at or repo

    def other_tree(self) -> bool:
        """Judging a working tree other than the one sealed (its untracked files are its own)."""
        return self.sealed_at != self.repo

    def tests(self) -> list[str]:
        return list(self.manifest["tests"])

    def tree(self) -> dict[str, list[Any]] | None:
        """The seal's snapshot of the whole working tree; None for a store sealed without one, or when
        another working tree is judged (its changes then come from git, against the sealed base)."""
        if TREE not in self.manifest.get("files", {}) or self.other_tree():
            return None
        if self._tree is None:
            try:
                data = json.loads(fsafe.read_text(self.path / TREE))
            except (OSError, ValueError):
                raise StoreError("acceptance tests were modified: the tree snapshot is unreadable", "seal the tests again") from None
            self._tree = data if isinstance(data, dict) else {}
        return self._tree

    def changes(self, now: statcache.Tree | None) -> tuple[list[str], dict[str, str]] | None:
        """`tree_changes` of the working tree against the seal's snapshot (None when there is none: `tree`), for the
        stop's look `now` (None: a look of its own). The last answer is kept (`state/tree/<snapshot sha>.changes.json`,
        under the id of the look it was worked out for): a look that started from that one (`Tree.since`) needs it
        brought in step only for the names it found changed, and no read of the seal's digests when none did (a
        15,000-file tree: ~10 ms of a pass over every file, at each stop, beside the runs)."""
        if TREE not in self.manifest.get("files", {}) or self.other_tree():
            return None
        if now is None:
            return tree_changes(self.repo, self.digests() or {}, None)
        sha = self.manifest["files"][TREE]
        done = now.compared.get(sha)
        if done is not None:  # the scope check and the scan ask the same question of one look
            return done
        memo_path = paths.state_dir(self.path.parent.parent) / "tree" / f"{sha}.changes.json"
        memo = _read_memo(memo_path)
        since = now.since
        if memo is not None and since is not None and memo[0] == since[0]:
            out = _brought_in_step(memo[1], memo[2], since[1], now, (self.digests() or {}) if since[1] else {})
        else:
            out = tree_changes(self.repo, self.digests() or {}, now)
        now.compared[sha] = out
        if now.id is not None and (memo is None or memo[0] != now.id):
            from donegate.util import memo_write

            memo_write(memo_path, now.id, list(out))  # lost: worked out whole at the next stop
        return out

    def digests(self) -> dict[str, str] | None:
        """{name: digest} of the seal's snapshot (`tree`), what `tree_changes` compares: kept with marshal in the
        state folder under the snapshot's sha256 (the manifest's, which the store check verified at this stop).
        A 15,000-file snapshot reads in 3 ms so, where its JSON takes 13 (the scan and the scope check ask)."""
        if TREE not in self.manifest.get("files", {}) or self.other_tree():
            return None
        if self._digests is None:
            import marshal

            # acceptance/<store>/ lies under the state root (`paths.acceptance_root`)
            memo = paths.state_dir(self.path.parent.parent) / "tree" / f"{self.manifest['files'][TREE]}.marshal"
            try:
                data = marshal.loads(fsafe.read_bytes(memo))
                if isinstance(data, dict):
                    self._digests = data
            except (OSError, EOFError, ValueError, TypeError):
                pass
            if self._digests is None:
                tree = self.tree() or {}
                self._digests = {name: entry[0] for name, entry in tree.items()}
                try:
                    atomic_write(memo, marshal.dumps(self._digests), durable=False)  # lost: computed again
                except OSError:
                    pass
        return self._digests


# -- the swap -----------------------------------------------------------------------------------------
#
# Each seal builds a new folder `acceptance/<repo-key>@<random>/` (tests, pytest.ini, tree.json,
# manifest.json). The seal record in `state/seals/<repo-key>.json` names the folder and holds its
# manifest's hash; replacing the record (`os.replace`, one atomic step) is the switch. A crash before
# it leaves the old record and its folder as they were; after it, the new ones. What a crash leaves
# over (a half-built folder, the folder switched away from) is swept at the next seal or stop; a
# seal holds `state/seals/<repo-key>.lock`, so a sweep never takes a folder being built.
# A record without `store` (sealed before this layout) names the folder `acceptance/<repo-key>/`.

def _lock_path(repo: Path, root: Path) -> Path:
    return paths.state_dir(root) / "seals" / f"{paths.repo_key(repo)}.lock"


def _read_record(repo: Path, root: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(fsafe.read_text(seal_record_path(repo, root), limit=1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again") from None
    if not isinstance(record, dict):
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again")
    return record


def _folder(repo: Path, root: Path, record: dict[str, Any]) -> Path:
    key = paths.repo_key(repo)
    name = record.get("store", key)
    if not isinstance(name, str) or not (name == key or name.startswith(key + "@")) or "/" in name:
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again")
    return paths.acceptance_root(root) / name


def _leftovers(repo: Path, root: Path, keep: str | None) -> list[Path]:
    key = paths.repo_key(repo)
    try:
        names = os.listdir(paths.acceptance_root(root))
    except OSError:
        return []
    prefixes = (key + "@", f".seal-{key}-", f".old-{key}-")
    return [paths.acceptance_root(root) / n for n in names
            if n != keep and (n.startswith(prefixes) or (n == key and keep is not None and keep != key))]


def sweep(repo: Path, root: Path | None = None, wait: float | None = 0.0) -> int:
    """Remove copies of the hidden tests a crashed or finished seal left beside the store; returns
    how many. Skipped (0) while a seal of the repository holds its lock."""
    root = root or paths.home()
    try:
        record = _read_record(repo, root)
        keep = _folder(repo, root, record).name if record is not None else None
    except StoreError:
        return 0  # a broken record blocks the stop; leave everything for a person to look at
    if not _leftovers(repo, root, keep):
        return 0
    from donegate.deadline import Busy, flock

    lock = _lock_path(repo, root)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            flock(fd, wait)
        except Busy:
            return 0
        record = _read_record(repo, root)  # again, under the lock
        keep = _folder(repo, root, record).name if record is not None else None
        gone = _leftovers(repo, root, keep)
        for p in gone:
            shutil.rmtree(p, ignore_errors=True)
        return len(gone)
    finally:
        os.close(fd)


def _switch(repo: Path, root: Path, folder: Path, text: str, sealed_at: str, by: dict[str, Any] | None = None) -> None:
    """Make `folder` (with manifest `text`) the store: one os.replace of the seal record. `by`: who
    sealed (`donegate.person.who`); the Stop hook hands a seal made inside a session to a person."""
    record = json.dumps({"manifest_sha256": hashlib.sha256(text.encode()).hexdigest(), "sealed_at": sealed_at,
                         "store": folder.name, **({"by": by} if by is not None else {})})
    path = seal_record_path(repo, root)
    atomic_write(path, record, before_replace=lambda: _fault("seal:record-written"))
    _fault("seal:switched")


def _sealing(repo: Path, root: Path):
    """The seal's lock for `repo` (held for the whole seal), with leftovers of earlier seals swept."""
    import contextlib
    from donegate.deadline import flock

    @contextlib.contextmanager
    def held():
        lock = _lock_path(repo, root)
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            flock(fd, None)
            record = _read_record(repo, root)
            keep = _folder(repo, root, record).name if record is not None else None
            for p in _leftovers(repo, root, keep):
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
        previous = _folder(repo, root, old)
        if previous != new:
            shutil.rmtree(previous, ignore_errors=True)
    _fault("seal:cleaned")


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
    counted as a new requirement."""
    from donegate import repo as repos
    from donegate.hidden import missing, python as pyenv

    repo = repos.project(repo)  # the folder named: a working tree's top, or a subfolder project in it
    project = repo
    launch = pyenv.launch(project, repo, named=python, named_by=python_by, pythonpath=pythonpath,
                          top=git.toplevel(repo))
    root = root or paths.home()
    paths.check_outside(repo, root)
    ident = repos.identity(repo)
    if not files:
        raise DonegateError("no test files given", "name at least one test file: donegate seal REPO test_x.py")
    names = set()
    for f in files:
        if not f.is_file():
            raise DonegateError(f"{f}: no such test file")
        if f.suffix != ".py":
            raise DonegateError(f"{f}: not a Python file", "acceptance tests are pytest files named test_*.py")
        if f.name in names or f.name == "conftest.py":
            raise DonegateError(f"{f}: two test files named {f.name} (or a conftest.py)", "give every test file its own name")
        names.add(f.name)
        check_syntax(f)

    def fill(tmp: Path) -> dict[str, Any]:
        nonlocal request
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
            request = request or st.manifest.get("request", "")
        for f in files:
            shutil.copyfile(f, tmp / f.name)
        (tmp / runner.INI_NAME).write_text(runner.INI_TEXT, encoding="utf-8")
        _fault("seal:copied")
        def env_check(run: runner.TestRun) -> None:
            if run.environment:
                raise DonegateError(run.environment, "repair or recreate the project's environment, or name another "
                                    "interpreter with --python / python: in donegate.yaml")
            found = missing.missing_module(run.imports, launch, project, tmp)
            if found is not None:
                raise DonegateError(*found)

        collected = runner.run(tmp, repo, timeout=timeout, collect_only=True, confine=confine, project=project, python=launch)
        env_check(collected)
        if not collected.ok:
            detail = "\n".join(e.get("detail", "") for e in collected.errors) or collected.output[-3000:]
            raise DonegateError(f"the test files do not collect: {collected.problem}\n{detail}".rstrip())
        if not collected.collected:
            raise DonegateError("the test files hold no tests", "write functions named test_* in them")
        baseline = runner.run(tmp, repo, timeout=timeout, expected=collected.collected, confine=confine, project=project,
                              python=launch)
        env_check(baseline)
        if not baseline.ok:
            raise DonegateError(f"the baseline run against {repo} failed: {baseline.problem}")
        skipped = baseline.skipped()
        if skipped and not allow_skip:
            shown = "; ".join(f"{k} ({v})" for k, v in list(skipped.items())[:5])
            raise DonegateError(
                f"{len(skipped)} test(s) skip or xfail at seal time, and only a passed test counts at the gate: {shown}",
                "remove the skip/xfail from the tests, or seal them anyway with --allow-skip (they fail every stop until they run)",
            )
        globs = list(protected if protected is not None else [".claude/**"])
        (tmp / TREE).write_text(json.dumps(tree(repo, root), separators=(",", ":")) + "\n", encoding="utf-8")
        return {
            "version": MANIFEST_VERSION,
            "repo": str(repo),
            "repo_key": paths.repo_key(repo),
            "base": git.head(repo),
            "request": request,
            "sealed_at": _utc_now(),
            "files": {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.name != MANIFEST},
            "tests": collected.collected,
            "count": len(collected.collected),
            "baseline": {"passing": sorted(baseline.passing()), "failing": sorted(set(baseline.failing()) - set(skipped)),
                         "skipped": sorted(skipped)},
            "protected": snapshot(repo, globs),
            "repo_tests": snapshot(repo, REPO_TEST_GLOBS) if protect_repo_tests else {},
            "project": os.path.relpath(project, repo),
            "python": {**launch.interp.record(), "named": python, "named_by": python_by if python else None,
                       "pythonpath": list(pythonpath or []), "binds": [str(b) for b in launch.binds]},
            **(extra or {}),
        }

    with _sealing(repo, root) as old:
        folder, manifest = _build(repo, root, old, fill, by)
        repos.record_identity(repo, root, ident)  # where its worktrees and moves are recognised from
        return Store(repo, folder, manifest)


def check_syntax(path: Path) -> None:
    """A test file that does not parse, in one line with file:line (not pytest's collection traceback)."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise DonegateError(f"{path}:{exc.lineno or 0}: {exc.msg}", "fix the syntax, then seal again") from None
    except ValueError as exc:  # null bytes
        raise DonegateError(f"{path}: {exc}", "acceptance tests are Python source files") from None


def is_sealed(repo: Path, root: Path | None = None) -> bool:
    """Whether `repo` has a seal record (intact or not: `load` says which)."""
    from donegate import repo as repos

    return seal_record_path(repos.project(repo), root).exists()


def unseal(repo: Path, root: Path | None = None) -> dict[str, Any] | None:
    """Remove `repo`'s seal: the record first (one atomic step: from then on the repository is not
    gated), then its folder. Returns the manifest that was sealed (None: nothing was, or it was
    unreadable)."""
    from donegate import repo as repos

    repo = repos.project(repo) if Path(repo).is_dir() else Path(repo).absolute()
    root = root or paths.home()
    with _sealing(repo, root) as old:
        repos.forget_identity(repo, root)  # its worktrees are no longer recognised as sealed
        if old is None:
            return None
        try:
            manifest: dict[str, Any] | None = json.loads(fsafe.read_text(_folder(repo, root, old) / MANIFEST))
        except (OSError, ValueError, StoreError):
            manifest = None
        folder = _folder(repo, root, old)
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
        _fault("seal:built")
        _switch(repo, root, tmp, text, manifest["sealed_at"], by)
        switched = True
    finally:
        if not switched:
            shutil.rmtree(tmp, ignore_errors=True)
    _retire(repo, root, old, tmp)
    return tmp, manifest


def sealed_repos(root: Path) -> list[Path]:
    """The repositories with a seal record, as their manifests name them (`status`, `donegate.person`)."""
    out = []
    for record in sorted((paths.state_dir(root) / "seals").glob("*.json")):
        try:
            name = json.loads(record.read_text(encoding="utf-8")).get("store", record.stem)
            manifest = json.loads((paths.acceptance_root(root) / name / MANIFEST).read_text(encoding="utf-8"))
            out.append(Path(manifest["repo"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return out


def sealed_by(repo: Path, root: Path | None = None) -> dict[str, Any] | None:
    """Who made the current seal (`donegate.person.who`, kept in the seal record); None when not recorded."""
    try:
        record = _read_record(repo, root or paths.home())
    except StoreError:
        return None
    by = (record or {}).get("by")
    return by if isinstance(by, dict) else None


def load(repo: Path, root: Path | None = None) -> Store | None:
    """The sealed store for `repo`, verified against its manifest and seal record; None if never sealed.

    Raises StoreError when the store is missing, modified or unrecorded.
    """
    root = root or paths.home()
    record = _read_record(repo, root)
    if record is None:
        if paths.store_dir(repo, root).exists():  # the folder of the old layout, its record gone
            raise StoreError("the acceptance store has no seal record", "seal the tests again: donegate seal")
        return None  # never sealed (a folder a crashed first seal left is swept, not read)
    path = _folder(repo, root, record)
    if not path.is_dir():
        raise StoreError("the acceptance store is missing although it was sealed", "seal the tests again: donegate seal")
    try:
        text = fsafe.read_text(path / MANIFEST)
        manifest = json.loads(text)
    except (OSError, ValueError):
        raise StoreError("acceptance tests were modified: the manifest is missing or unreadable", "seal the tests again") from None
    if hashlib.sha256(text.encode()).hexdigest() != record.get("manifest_sha256"):
        raise StoreError("acceptance tests were modified: the manifest changed", "seal the tests again")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise StoreError("acceptance tests were modified: the manifest is missing or unreadable", "seal the tests again")
    present = {p.name for p in path.iterdir() if p.name != MANIFEST and not p.name.startswith(".")}
    expected = set(manifest["files"])
    changed = sorted(
        name for name in expected | present
        if name not in present or name not in expected or sha256_file(path / name) != manifest["files"][name]
    )
    if changed:
        raise StoreError(f"acceptance tests were modified ({len(changed)} file(s) changed, added or removed)", "seal the tests again")
    return Store(repo, path, manifest)


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
    from donegate import repo as repos

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
