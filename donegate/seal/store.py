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
from donegate.core.fsafe import sha256 as _sha256
import json
import os
import stat
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.core import fsafe
from donegate.tree import git, statcache
from donegate import paths
from donegate.errors import StoreError
from donegate.core.util import atomic_write

MANIFEST = "manifest.json"
OWN_SUITE = "own-suite.json"  # the project's own suite in the store (`donegate.seal.own`), when the seal kept it
MANIFEST_VERSION = 1
# How a tripwire's place is written (`hidden.traces.trace_where`): 3, its statements from the kit's own copy and its
# callers read through other files' frames; 4, the text of the function that did it too (`trace_body`); 5, that
# function's syntax tree instead, without docstrings and comments; 6, whether its caller's call names it
# (`trace_called`). A seal without it whose baseline holds a tripwire matches no stop's finding.
PLACES = 6
# Test files of the repository itself, protected from the agent when they existed at seal time.
REPO_TEST_GLOBS = ("test_*.py", "*_test.py", "tests/*", "test/*", "*/tests/*", "*/test/*", "conftest.py", "*/conftest.py")
TREE = "tree.json"  # the store's snapshot of every file of the repository at seal time (the `allowed` check)
# Folders never part of the snapshot: git's own, and the bytecode and pytest caches that running the
# code writes (the hidden run reads neither: its bytecode lives under the state root).
SKIP_TOP = (".git",)
SKIP_DIRS = statcache.CACHE_DIRS
# the folders the own suite's walks of the project leave out (`seal.own`, `seal.helper_data`: one set)
OWN_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".git", "node_modules", ".tox", ".nox"}
# What `donegate install` writes into the repository (tests/gate/test_gate.py keeps this in step with
# install.py): never the agent's change. They lie under `.claude/`, which the protected globs cover.
KIT_FILES = (".claude/settings.json", ".claude/settings.json.donegate-backup", ".claude/donegate-install.json",
             ".claude/settings.local.json", ".claude/settings.local.json.donegate-backup", ".claude/donegate-install.local.json")



def sha256_file(path: Path) -> str:
    """sha256 of a regular file; for a symlink, FIFO, device or socket a label that never equals one
    (never following the link, never blocking on a FIFO: see `donegate.core.fsafe`)."""
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
    no longer a regular file), by content: `now` (a look at the tree, `donegate.tree.statcache`) has every
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
    from donegate.core.util import memo_read

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


def fault(step: str) -> None:
    """Crash here, as a kill -9 would, when DONEGATE_FAULT names this step (the swap's crash tests)."""
    if os.environ.get("DONEGATE_FAULT") == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


class Store:
    """A verified store. `repo` is the working tree it judges; `sealed_at` the project sealed (the same
    folder, or another working tree of its repository: a worktree, `donegate.tree.repo`)."""

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
            from donegate.core.util import memo_write

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

def lock_path(repo: Path, root: Path, key: str | None = None) -> Path:
    return paths.state_dir(root) / "seals" / f"{key or paths.repo_key(repo)}.lock"


def read_record(repo: Path, root: Path, key: str | None = None) -> dict[str, Any] | None:
    """The seal record of `repo` (None: never sealed); `key`: its `paths.repo_key` when the caller has it."""
    try:
        record = json.loads(fsafe.read_text(seal_record_path(repo, root, key), limit=1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again") from None
    if not isinstance(record, dict):
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again")
    return record


def folder_of(repo: Path, root: Path, record: dict[str, Any], key: str | None = None) -> Path:
    key = key or paths.repo_key(repo)
    name = record.get("store", key)
    if not isinstance(name, str) or not (name == key or name.startswith(key + "@")) or "/" in name:
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again")
    return paths.acceptance_root(root) / name


def is_sealed(repo: Path, root: Path | None = None) -> bool:
    """Whether `repo` has a seal record (intact or not: `load` says which)."""
    from donegate.tree import repo as repos

    return seal_record_path(repos.project(repo), root).exists()


def sealed_repos(root: Path) -> list[Path]:
    """The repositories with a seal record, as their manifests name them (`status`, `donegate.person.ownership`)."""
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
    """Who made the current seal (`donegate.person.ownership.who`, kept in the seal record); None when not recorded."""
    try:
        record = read_record(repo, root or paths.home())
    except StoreError:
        return None
    return recorded_by(record)


def recorded_by(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """`sealed_by` of a seal record already read."""
    by = (record or {}).get("by")
    return by if isinstance(by, dict) else None


READ = object()  # `load`'s record not given: read it


def stale_places(manifest: dict[str, Any]) -> str:
    """Why the seal's tripwire baseline can match no stop's finding ("" when it can): recorded before a place was
    written as it is now (its callers, its whole statement), the project's own reads would be findings at every
    stop (the stop, doctor and status say to seal again instead)."""
    trips = manifest.get("tripwire_baseline")
    if manifest.get("places") == PLACES or not (isinstance(trips, list) and any(isinstance(t, dict) for t in trips)):
        return ""
    return ("the seal's baseline of what the unchanged project already does was recorded by an older kit, without "
            "the places this one matches (the statement, its function's text and its callers)")


def load(repo: Path, root: Path | None = None, *, key: str | None = None, record: Any = READ) -> Store | None:
    """The sealed store for `repo`, verified against its manifest and seal record; None if never sealed.
    `key`, `record`: its `paths.repo_key` and its seal record (`read_record`) when the caller has them (a stop
    reads them once: `donegate.gate.context`).

    Raises StoreError when the store is missing, modified or unrecorded.
    """
    root = root or paths.home()
    key = key or paths.repo_key(repo)
    return _verified(repo, root, key, read_record(repo, root, key) if record is READ else record)


def _verified(repo: Path, root: Path, key: str, record: dict[str, Any] | None) -> Store | None:
    if record is None:
        if paths.store_dir(repo, root, key).exists():  # the folder of the old layout, its record gone
            raise StoreError("the acceptance store has no seal record", "seal the tests again: donegate seal")
        return None  # never sealed (a folder a crashed first seal left is swept, not read)
    path = folder_of(repo, root, record, key)
    if not path.is_dir():
        raise StoreError("the acceptance store is missing although it was sealed", "seal the tests again: donegate seal")
    try:
        text = fsafe.read_text(path / MANIFEST)
        manifest = json.loads(text)
    except (OSError, ValueError):
        raise StoreError("acceptance tests were modified: the manifest is missing or unreadable", "seal the tests again") from None
    if _sha256(text.encode()).hexdigest() != record.get("manifest_sha256"):
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


def leftovers(repo: Path, root: Path, keep: str | None, key: str | None = None) -> list[Path]:
    key = key or paths.repo_key(repo)
    try:
        names = os.listdir(paths.acceptance_root(root))
    except OSError:
        return []
    prefixes = (key + "@", f".seal-{key}-", f".old-{key}-")
    return [paths.acceptance_root(root) / n for n in names
            if n != keep and (n.startswith(prefixes) or (n == key and keep is not None and keep != key))]


def sweep(repo: Path, root: Path | None = None, wait: float | None = 0.0, *, key: str | None = None,
          record: Any = READ) -> int:
    """Remove copies of the hidden tests a crashed or finished seal left beside the store; returns
    how many. Here, below the stages, not in `sealing` (the seal's builder): a stop that imported the builder for
    it loaded the seal's whole run (`hidden.runner`, `seal.own`, the scan's rules; issue 48). Skipped (0) while a seal of the repository holds its lock. `key`, `record`: the repository's key
    and its seal record when the caller has them (a stop: `donegate.gate.context`); read again under the lock."""
    root = root or paths.home()
    key = key or paths.repo_key(repo)
    try:
        if record is READ:
            record = read_record(repo, root, key)
        keep = folder_of(repo, root, record, key).name if record is not None else None
    except StoreError:
        return 0  # a broken record blocks the stop; leave everything for a person to look at
    if not leftovers(repo, root, keep, key):
        return 0
    import shutil

    from donegate.core.deadline import Busy, flock

    lock = lock_path(repo, root, key)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            flock(fd, wait)
        except Busy:
            return 0
        record = read_record(repo, root, key)  # again, under the lock
        keep = folder_of(repo, root, record, key).name if record is not None else None
        gone = leftovers(repo, root, keep, key)
        for p in gone:
            shutil.rmtree(p, ignore_errors=True)
        return len(gone)
    finally:
        os.close(fd)


def test_files(store: Path) -> list[Path]:
    """The sealed test files of a store's folder (the runs name them; the transcript scan reads them)."""
    return sorted(p for p in store.iterdir() if p.suffix == ".py" and p.is_file())
