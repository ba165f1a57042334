"""The working tree as git's index sees it: every file's stat, and its digest hashed again only when the stat moved.

One look walks the tree (everything but `.git`, ignored files included: an import does not care what
git ignores) with `lstat` only, and reads a file only when its stat differs from the last look's
(mode, size, mtime_ns, ctime_ns, inode, device). It serves the stages that used to hash the whole
tree at every stop: the scope check with `allowed` (`gate/scope.py`), the verdict cache's key
(`donegate.tree.verdict_cache`) and the scan (`donegate.gate.scan_rules`); and the seal takes its snapshot from it. A stop
on a tree where nothing changed reads no file; one where an agent edited three files hashes three.

Why a stat can be trusted, and when it cannot:

- `ctime` is set by the kernel on every write, chmod, rename, link or `utime`, and no system call
  sets it back: an edit that restores the mtime (`touch -d`, `os.utime`) and keeps the size still
  moves the ctime; a file replaced by another (a rename, a hard link to another file) has another
  inode and ctime. So a change the stat does not show needs the clock itself set back (root).
- Racy timestamps, git's rule: a file written in the same tick as the look that recorded it can be
  written again without its stat moving. An entry whose mtime or ctime lies within `SLACK_NS` of the
  look's start (or after it) is kept without its digest, so the next look hashes it again. The
  slack covers the kernel's coarse file clock and filesystems that keep seconds (2 s: FAT's tick).

The last look of each working tree lives in `state/stat/<repo-key>.json` under the state root
(which the agent cannot write), in columns (JSON parses three lists of strings faster than a table):
rewritten only when something changed. A lost or corrupt file costs one full hash, never a verdict.

Each kept look has an id, and a look says which names it found not as the kept look had them (`Tree.since`:
new, stat moved, read again, gone). What was worked out from the last look is brought in step by those names
alone: the runs' mirrors (`copy.Mirror.step`) and the changes since the seal (`store.Store.changes`). Gone
names are found by a count (names found that the kept look has, against how many it has), and only when the
count says some are gone by a set difference; the early part of a look knows its count from the kept look's
(how many entries it walked before the shared environments).
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import json
import os
import re
import stat
import time
from pathlib import Path

from donegate.core import fsafe

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this module at every stop: typing stays off its path
    from typing import Any, Callable, Iterator

VERSION = 1
SLACK_NS = 2_000_000_000
SKIP_TOP = ".git"
UNREADABLE = "unreadable folder"


class Tree:
    """One look at a working tree: `entries` {relative name: (stat key, digest)} of every file,
    symlink and special file (folders are not entries; one that cannot be read is, as `UNREADABLE`)."""

    def __init__(self, repo: Path, entries: dict[str, tuple[str, str]], hashed: int, hashed_bytes: int,
                 duration: float) -> None:
        self.repo = repo
        self.entries = entries
        self.hashed = hashed  # files read by this look: what changed since the last one
        self.hashed_bytes = hashed_bytes
        self.duration = duration
        self.compared: dict[object, tuple[list[str], dict[str, str]]] = {}  # `store.tree_changes`, per snapshot
        self.wanted: dict[tuple[str, ...], tuple[dict[str, str], set[str]]] = {}  # `copy.Mirror.sync`, per skip set
        # Set by a look that found exactly what the last one kept (nothing to hash, nothing new or gone):
        # the kept look's file and the id written in it (`remember`).
        self.kept: tuple[Path, str] | None = None
        self.later: tuple[str, ...] = ()  # an early part of a look (`Pending.early`): the top-level folders left out
        # What `files` leaves out, as the look found it: the entries in cache folders, a folder at a time, and
        # the folders it could not read (None: `files` finds them itself).
        self.left_out: set[str] | None = None
        # What this look is kept under (its id in the stat file; None: not kept), and (the id of the kept look
        # it started from, the names whose entry is not as that one has it) when it started from one: what a
        # memo of the last look can be brought in step with (`copy.Mirror`, `store.Store.tree_changes`).
        self.id: str | None = None
        self.since: tuple[str, set[str]] | None = None
        self.stat_path: Path | None = None  # the kept look's file (memos of what was worked out from it lie beside)
        self.folders: dict[str, list[str]] | None = None  # each folder's entries, as the walk listed them

    def remember(self, what: str, compute: Callable[[], Any]) -> Any:
        """`compute()`, or what it gave for the same tree before: kept beside the last look's file, under the
        id that file was written with, and used only by a look that found the tree exactly as that file has
        it. (The verdict cache's key: a 15,000-file tree costs a sort and a string a file to key.)"""
        if self.kept is None:
            return compute()
        from donegate.core.util import remembered

        return remembered(memo_path(self, what), self.kept[1], compute)

    def digest(self, name: str) -> str | None:
        """`fsafe.digest` of `name` as of this look (None: not there)."""
        entry = self.entries.get(name)
        return None if entry is None else entry[1]

    def digests(self) -> dict[str, str]:
        return {name: d for name, (_, d) in self.entries.items()}

    def sizes(self) -> tuple[int, int]:
        """(regular files, their bytes)."""
        files = size = 0
        for key, d in self.entries.values():
            if len(d) == 64:
                files += 1
                size += int(key.split(":", 2)[1])
        return files, size

    def files(self) -> dict[str, str]:
        """{name: digest} of every entry the seal's snapshot keeps (`snapshot`)."""
        out = {name: d for name, (_, d) in self.entries.items()}
        if self.left_out is not None:
            gone = [n for n in self.left_out if n in out]
        else:
            cached = _IN_CACHE.search  # one regular expression in C a name
            gone = [n for n, d in out.items() if d == UNREADABLE or cached(n)]
        for name in gone:
            del out[name]
        return out

    def file(self, name: str) -> str | None:
        """What `files` gives `name` (None: not one of them), without the pass over every entry."""
        entry = self.entries.get(name)
        if entry is None or entry[1] == UNREADABLE:
            return None
        if name in self.left_out if self.left_out is not None else _cached(name):
            return None
        return entry[1]

    def snapshot(self) -> dict[str, list[object]]:
        """The seal's `tree.json`: {name: [digest, size, mtime_ns, ctime_ns, inode]} of every entry not
        in a bytecode or pytest cache (running the code writes those)."""
        out: dict[str, list[object]] = {}
        for name in sorted(self.entries):
            key, d = self.entries[name]
            if d == UNREADABLE or _cached(name):
                continue
            _, size, mtime, ctime, ino, _dev = key.split(":")
            out[name] = [d, int(size), int(mtime), int(ctime), int(ino)]
        return out


class Pending:
    """The stop's look, for the runs started before it is taken (`donegate.gate`): their interpreters start
    while the hook looks, and a run's mirror is brought in step as soon as the part of the look it copies
    is taken (`early`: all but the shared environments, which the sandbox binds as they are), the rest of the
    look going on beside the runs. `run` False: the stop needs no run (its verdict came from the cache, or it
    failed first); `tree` then still serves the put-back of the mirrors the runs held."""

    PAUSE = 0.5  # seconds the look waits, at most, for the mirrors to be in step before it goes on

    def __init__(self, stat: Path | None = None) -> None:
        import threading

        self.stat = stat  # where the look will be kept (`_path`): what was kept with the last one lies beside it

        self._part = threading.Event()
        self._ready = threading.Event()
        self._syncing = threading.Condition()
        self._waiting = 0
        self.part: Tree | None = None
        self.tree: Tree | None = None
        self.run = False

    def expect(self) -> Ticket:
        """A mirror that will be brought in step with the early part: the look waits for its `done`."""
        with self._syncing:
            self._waiting += 1
        return Ticket(self)

    def _one_done(self) -> None:
        with self._syncing:
            self._waiting -= 1
            self._syncing.notify_all()

    def early(self, part: Tree) -> None:
        """The look so far: everything but the top-level folders `part.later` names. The look goes on once the
        mirrors waiting for it are in step (at most `PAUSE`): their syncs are Python in the hook's threads, and
        the runs wait for them, where the rest of the look is needed only beside the runs (one interpreter
        lock: the large tree's copy in step took 51 ms beside the look, 6 alone)."""
        self.part = part
        self._part.set()
        with self._syncing:
            self._syncing.wait_for(lambda: self._waiting <= 0, timeout=self.PAUSE)

    def set(self, tree: Tree | None, run: bool) -> None:
        self.tree, self.run = tree, run
        self._ready.set()
        self._part.set()

    def get(self, timeout: float | None = None) -> Tree | None:
        """The look to run on, once the stop has it; None when there is to be no run (or `timeout` passed)."""
        self._ready.wait(timeout)
        return self.tree if self.run else None

    def for_mirror(self, shared: list[str], ticket: Ticket | None = None) -> Tree | None:
        """What a mirror that leaves out `shared` is brought in step with: the early part of the look when it
        leaves out no more than that, else the whole look (then its `ticket` is done first: the look must not
        wait for a mirror that waits for the look); None when the stop wants no run."""
        self._part.wait()
        if self._ready.is_set() and not self.run:
            return None
        part = self.part
        if part is not None and set(part.later) <= set(shared):
            return part
        if ticket is not None:
            ticket.done()
        return self.get()


class Ticket:
    """One mirror the early part of a look waits for (`Pending.expect`); `done` once, however often called."""

    def __init__(self, pending: Pending) -> None:
        self.pending, self.open = pending, True

    def done(self) -> None:
        if self.open:
            self.open = False
            self.pending._one_done()


CACHE_DIRS = ("__pycache__", ".pytest_cache")
_IN_CACHE = re.compile("(?:^|/)(?:" + "|".join(map(re.escape, CACHE_DIRS)) + ")/")


def _cached(name: str) -> bool:
    """Inside a bytecode or pytest cache folder (running the code writes those)."""
    return _IN_CACHE.search(name) is not None


def _path(repo: Path, root: Path, key: str | None = None) -> Path:
    from donegate import paths

    return paths.state_dir(root) / "stat" / f"{key or paths.repo_key(repo)}.json"


def stat_path(repo: Path | None, root: Path | None, key: str) -> Path | None:
    """Where the look of the working tree `repo` (its key `key`) is kept under the state root (None: no state root)."""
    return _path(repo, root, key) if repo is not None and root is not None and key else None


def _load(path: Path, repo: Path, sealed: str | None = None
          ) -> tuple[dict[str, tuple[str, str]], str, tuple[tuple[str, ...], int] | None, bool]:
    """The kept look's entries, the id its file was written with ("" for none), and (the top-level folders
    it walked last, how many entries it kept from before them) when it says, and whether it names a sealed project
    other than `sealed` (or none: kept before looks named it). (JSON's strings and lists
    come back as what they were written as, or it fails: marshal read the table faster, but every entry
    then needed its types checked, which cost the difference.)"""
    try:
        data = json.loads(fsafe.read_text(path))
        if data.get("version") != VERSION or data.get("repo") != str(repo):
            return {}, "", None, False
        names, keys, digests = data["names"], data["stat"], data["digest"]
        # unequal columns: ValueError
        entries = dict(zip(names, zip(keys, digests, strict=True), strict=True))
        early = data.get("early")
        split = (tuple(early[0]), int(early[1])) if isinstance(early, list) and len(early) == 2 else None
        # kept before it named its sealed project (or for another): this look is kept, whatever changed
        return entries, str(data.get("id") or ""), split, bool(sealed) and data.get("sealed") != sealed
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, "", None, False


def _save(path: Path, repo: Path, entries: dict[str, tuple[str, str]], racy: set[str], dropped: set[str],
          early: tuple[tuple[str, ...], int] | None = None, ident: str | None = None, sealed: str | None = None
          ) -> str | None:
    """Keep this look for the next one, without the `dropped` names and with the `racy` ones' digests left out
    (git's racy rule: written within a tick of this look, they may change again without their stat moving);
    the id it is kept under (None: not kept)."""
    from donegate.core.util import atomic_write

    ident = ident or os.urandom(8).hex()
    names = [n for n in entries if n not in dropped] if dropped else list(entries)
    keys = [entries[n][0] for n in names]
    digests = [entries[n][1] for n in names]
    if racy:
        digests = ["" if n in racy else d for n, d in zip(names, digests, strict=True)]
    # the sealed project's key first: `sealed_looks` reads only the head of each look
    data: dict[str, Any] = {"version": VERSION, **({"sealed": sealed} if sealed else {}), "repo": str(repo), "id": ident,
                            "names": names, "stat": keys, "digest": digests}
    if early is not None:
        data["early"] = [list(early[0]), early[1]]
    try:
        atomic_write(path, json.dumps(data, separators=(",", ":")), durable=False)  # a lost look costs one full hash
    except OSError:
        return None
    return ident


def stat_key(st: os.stat_result) -> str:
    """What a look compares of an entry's lstat (the look itself writes it inline: it runs once a file)."""
    return f"{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}"


# What the kit keeps beside a look (`Tree.remember`'s names in verdict_cache, the verdict cache's folders, the tree's
# stems: `hidden/stems.py`): `kept_files`
# removes these by name at unseal and uninstall (a name not listed here is left there, costing only disk).
MEMOS = ("tree-key", "links", "folders", "stems")


def memo_path(tree: Tree, what: str) -> Path:
    """Where what is worked out from `tree` is kept: beside its stat file (a look with a state root)."""
    assert tree.stat_path is not None
    return tree.stat_path.with_suffix(f".{what}.json")


def kept_files(root: Path, key: str) -> list[Path]:
    """The files a working tree's looks keep under the state root (its look and the memos beside it: `unseal`,
    `uninstall`), by their exact names: another tree's key may start with this one's."""
    folder = _path(Path(), root, key).parent
    return [folder / f"{key}{part}.json" for part in ("", *(f".{what}" for what in MEMOS))]


def sealed_looks(root: Path, sealed: str) -> list[str]:
    """The keys of the working trees whose last look a stop judged against the sealed project `sealed` (its key):
    its worktrees' too, also of one git no longer lists (removed, pruned), which only this finds."""
    from donegate import paths

    head = b'{"version":%d,"sealed":%s,' % (VERSION, json.dumps(sealed).encode())
    out = []
    folder = paths.state_dir(root) / "stat"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            with open(path, "rb") as fh:
                if fh.read(len(head)) == head:
                    out.append(path.name[:-len(".json")])
        except OSError:
            continue
    return out


def _walk(root: str, later: tuple[str, ...], cached: set[str], folders: dict[str, list[str]]
          ) -> Iterator[tuple[str | None, os.stat_result | None]]:
    """(relative name, lstat) of every entry below `root` but folders (and the top `.git`); a folder
    that cannot be read as (name + "/", None). The top-level folders `later` names come last, after one
    (None, None) that says everything else is walked. `cached` is given the names that lie in a bytecode or
    pytest cache folder (told by the folder's name, once a folder: not a pattern matched on every name).

    Each folder is listed through a descriptor of its own, so each entry's lstat is looked up from that
    folder (`fstatat`), not along its whole path again: a 15,000-file walk, 50 -> 42 ms of CPU. `folders` is
    given each folder's entries (an unreadable folder's own entry is its)."""
    stack: list[tuple[str, bool]] = [("", False)]
    rest: list[tuple[str, bool]] = []
    said = False
    while True:
        if not stack:
            if not said:
                said = True
                yield None, None
            if not rest:
                return
            stack, rest = rest, []
        rel_dir, in_cache = stack.pop()
        batch = folders.setdefault(rel_dir, [])
        try:
            # (the root as named: it may be reached through a link)
            fd = os.open(os.path.join(root, rel_dir), _DIR_FLAGS) if rel_dir else os.open(root, _ROOT_FLAGS)
        except OSError:
            batch.append(rel_dir + "/")
            yield rel_dir + "/", None
            continue
        try:
            try:
                with os.scandir(fd) as it:
                    entries = list(it)
            except OSError:
                batch.append(rel_dir + "/")
                yield rel_dir + "/", None
                continue
            prefix = rel_dir + "/" if rel_dir else ""
            for e in entries:
                name = e.name
                if not rel_dir and name == SKIP_TOP:
                    continue
                rel = prefix + name
                try:
                    st = e.stat(follow_symlinks=False)  # from the folder's descriptor
                except OSError:
                    continue  # gone since the listing
                if stat.S_ISDIR(st.st_mode):
                    (rest if not rel_dir and name in later else stack).append((rel, in_cache or name in CACHE_DIRS))
                else:
                    if in_cache:
                        cached.add(rel)
                    batch.append(rel)
                    yield rel, st
        finally:
            os.close(fd)


# A folder opened to be listed: never through a link (the walk found it a folder by lstat), not kept open by a child.
_ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = _ROOT_FLAGS | getattr(os, "O_NOFOLLOW", 0)


def _hash(path: str, st: os.stat_result) -> str:
    """`fsafe.digest` of the entry whose lstat is `st`, never hanging on a FIFO or following a link."""
    if stat.S_ISLNK(st.st_mode):
        try:
            return "symlink:" + _sha256(os.fsencode(os.readlink(path))).hexdigest()
        except OSError:
            return "missing"
    if not stat.S_ISREG(st.st_mode):
        return fsafe.kind_of(st.st_mode)
    return fsafe.digest(path) or "missing"


def look(repo: Path, root: Path | None = None, later: tuple[str, ...] = (),
         early: Callable[[Tree], None] | None = None, keep: Callable[[Callable[[], None]], None] | None = None,
         key: str | None = None, sealed: str | None = None) -> Tree:
    """The working tree now. With `root`, the last look of this tree (kept under the state root) spares
    hashing every file whose stat did not move, and this look is kept for the next one. `early` is given
    the look of everything but the top-level folders `later` names, as soon as it is taken (then those
    folders are walked): the runs' mirrors leave out the shared environments, so they need not wait for them.
    `keep`: given the job that keeps this look, to do later (the hook: after its answer); else it is kept now.
    `key`: the tree's `paths.repo_key` when the caller has it (a stop: `donegate.gate.context`); `sealed`: the key of
    the sealed project the stop judged the tree against, kept in the look (`unseal` finds the looks of its worktrees
    by it, also of a worktree git no longer lists: `sealed_looks`)."""
    t0 = time.monotonic()
    start_ns = time.time_ns()
    top = str(repo)
    path = _path(repo, root, key) if root is not None else None
    before, kept, split, renamed = _load(path, repo, sealed) if path is not None else ({}, "", None, False)
    entries: dict[str, tuple[str, str]] = {}
    left_out: set[str] = set()  # (`Tree.files`)
    changed: list[str] = []  # not as the kept look has them: new, stat moved, read again, unreadable
    found = 0  # names the kept look has too
    parts: list[Tree] = []
    early_kept = -1  # entries kept from before the later folders (what the next look's early part checks)
    racy: set[str] = set()
    racy_ns = start_ns - SLACK_NS
    hashed = hashed_bytes = unreadable = 0
    folders: dict[str, list[str]] = {}
    for name, st in _walk(top, later, left_out, folders):
        if name is None:
            early_kept = len(entries) - unreadable  # (an unreadable folder is not kept)
            if early is not None:
                part = Tree(repo, dict(entries), hashed, hashed_bytes, time.monotonic() - t0)
                part.later, part.left_out = later, set(left_out)
                # Nothing of the kept look's early part gone (it says how many it kept): changed is the whole change.
                if kept and split == (later, found):
                    part.since = (kept, set(changed))
                parts.append(part)
                early(part)
            continue
        if st is None:
            entries[name] = ("", UNREADABLE)
            left_out.add(name)
            changed.append(name)
            unreadable += 1
            continue
        key = f"{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}"  # (`stat_key`)
        known = before.get(name)
        if known is not None:
            found += 1
            if known[0] == key and known[1]:
                entries[name] = known
                continue
        entries[name] = (key, _hash(os.path.join(top, name), st))
        changed.append(name)
        if st.st_mtime_ns >= racy_ns or st.st_ctime_ns >= racy_ns:
            racy.add(name)  # (an entry kept from the last look is not: its stat is older than that look's slack)
        hashed += 1
        hashed_bytes += st.st_size if stat.S_ISREG(st.st_mode) else 0
    tree = Tree(repo, entries, hashed, hashed_bytes, 0.0)
    tree.left_out, tree.folders, tree.stat_path = left_out, folders, path
    delta = set(changed)
    if found != len(before):  # names gone since the kept look (a set difference only then)
        delta.update(before.keys() - entries.keys())
    if kept:
        tree.since = (kept, delta)
    # (no id: written before ids were; no split, or another: the next look's early part could not say what changed)
    if path is not None and (delta or not kept or renamed or (early_kept >= 0 and split != (later, early_kept))):
        unreadable_names = {n for n in left_out if not entries[n][0]} if unreadable else set()
        split_now = (later, early_kept) if early_kept >= 0 else None
        if keep is None:
            tree.id = _save(path, repo, entries, racy, unreadable_names, split_now, sealed=sealed)
        else:
            # The hook keeps the look once its answer is out (`copy.after`: ~10 ms of JSON off the stop, for a
            # 15,000-file tree). The id is drawn now, for what is worked out from this look; a file never written
            # leaves the last one in place, which no memo of this look's id then matches.
            ident = os.urandom(8).hex()
            keep(lambda: None if _save(path, repo, entries, racy, unreadable_names, split_now, ident, sealed) else None)
            tree.id = ident
    elif path is not None:  # every entry found as kept (same names, same stat, a digest each)
        tree.kept, tree.id = (path, kept), kept
    for part in parts:
        part.id = tree.id  # what the part's entries are kept under, with the rest (`copy.Mirror`)
    tree.duration = time.monotonic() - t0
    return tree
