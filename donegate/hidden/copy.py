"""The copy of the working tree the hidden run works in: nothing the run writes outlives it.

Environments in the repository (a `.venv` with `pyvenv.cfg`, `node_modules`) are not copied but
shared: the sandbox binds them read-only, an unconfined run reaches them by a link.

A stop copies by what changed (issue 27): each working tree has a mirror under the state root
(`state/mirror/<repo-key>/`), brought in step with the stop's look at the tree (`donegate.tree.statcache`)
before the run and put back after it (`Mirror.sync`): a file is copied only when its stat in the
repository moved since it was copied, and anything the run wrote, made, removed, chmod-ed or linked
in the mirror is undone (a file whose stat differs from the one recorded right after the copy is
removed and copied again: ctime cannot be set back, so no write escapes the check). The hook does
that put-back in a child once its answer is out (`after_answer`): the mirror stays locked, with a
`.putback` mark, until it is done, and the next stop waits for it. The put-back's `.clean` mark names
the look the mirror is then in step with: a stop whose look started from that one (`statcache.Tree.since`)
copies and removes the names it found changed and nothing else (`Mirror.step`), without reading the
mirror's record or passing over the whole look (on a 15,000-file tree, ~15 ms of the hook's CPU at each
stop, beside the runs). Any other mark, or none, is a sync by the record, or a walk of the mirror. On this
machine's ext4, creating a file is what a copy costs (`make bench`: a full copy of a 15,000-file
tree takes seconds; the mirror's two syncs a stat of each file). A stop that finds the mirror in use
(another session's stop on the same tree), and the seal, copy the whole tree into a temporary folder
(`copy_repo`) as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path

from donegate.core import fsafe, proc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

    from donegate.tree import statcache


def shared_dirs(repo: Path) -> list[str]:
    """Top-level folders of the repository that are environments, not code: a virtualenv (it has
    `pyvenv.cfg`) or `node_modules`. They are not copied (a project's `.venv` alone can hold tens of
    thousands of files): the sandbox binds them read-only, an unconfined run reaches them by a link."""
    out: list[str] = []
    try:
        entries = list(os.scandir(repo))
    except OSError:
        return out
    for e in entries:
        if e.is_dir(follow_symlinks=False) and (e.name == "node_modules" or os.path.exists(os.path.join(e.path, "pyvenv.cfg"))):
            out.append(e.name)
    return sorted(out)


def copy_repo(repo: Path, dest: Path, skip: list[str] | None = None) -> None:
    """A throwaway copy of the working tree (without `.git`), symlinks kept as links, without any
    bytecode: Python trusts a `.pyc` whose source has the same size and mtime, and imports a lone
    `x.pyc` where no `x.py` is, so planted bytecode would run instead of the source the scan read.

    `cp -a` (a C loop) where it exists, Python's copy otherwise; see bench/hook_bench.py for the cost.
    """
    cp = proc.system_tool("cp")
    names = [n for n in os.listdir(repo) if n != ".git" and n not in (skip or ())]
    dest.mkdir(exist_ok=True)  # (made empty, with the project's folder, for a run already started: `working_copy`)
    done = False
    if cp and names and not _small(repo):  # starting cp costs ~10 ms: more than copying a small tree
        import subprocess

        res = subprocess.run([cp, "-a", "--", *[str(repo / n) for n in names], str(dest)],
                             capture_output=True, text=True, timeout=300)
        done = res.returncode == 0
        if not done:
            _empty(dest)
    if not done:
        _pycopy(repo, dest, names)
    for top, dirs, files in os.walk(dest):
        if "__pycache__" in dirs:
            dirs.remove("__pycache__")
            fsafe.remove_tree(os.path.join(top, "__pycache__"))  # as `shutil.rmtree`, without its import (bz2, lzma)
        for f in files:
            if f.endswith((".pyc", ".pyo")):
                os.unlink(os.path.join(top, f))


def _pycopy(src: Path, dest: Path, names: list[str]) -> None:
    """Copy `names` of `src` into `dest`: files, folders, symlinks as links; a FIFO, socket or
    device is left out (opening a FIFO to copy it would wait for a writer forever); bytecode too (`copy_repo`
    removes what `cp` copied of it: copied first, a developer's `__pycache__` cost a stop 5-10 ms to remove)."""
    import stat

    for n in names:
        s, d = src / n, dest / n
        mode = os.lstat(s).st_mode
        if n.endswith((".pyc", ".pyo")) or n == "__pycache__" and stat.S_ISDIR(mode):
            continue
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(s), d)
        elif stat.S_ISDIR(mode):
            d.mkdir(exist_ok=True)
            _pycopy(s, d, os.listdir(s))
        elif stat.S_ISREG(mode):
            fsafe.copy_file(s, d)  # as `shutil.copy2` (bytes, mode, times), without its import (bz2, lzma)


def _small(repo: Path, limit: int = 200) -> bool:
    """Fewer than `limit` files (without .git): Python copies them faster than cp starts."""
    n = 0
    for top, dirs, files in os.walk(repo):
        if top == str(repo):
            dirs[:] = [d for d in dirs if d != ".git" and d not in shared_dirs(repo)]
        n += len(files) + len(dirs)
        if n >= limit:
            return False
    return True


def _copied(names: Iterable[str], top: tuple[str, ...]) -> set[str]:
    """Which of `names` are part of the copy: not `.git` or the shared environments (bound or linked), and
    no bytecode (a planted `.pyc` would run instead of the source the scan read). String methods only: a
    15,000-file look goes through it at every stop."""
    under, pyc = tuple(f"{t}/" for t in top), (".pyc", ".pyo")
    return {n for n in names if not (n.startswith(under) or n in top or n.endswith(pyc) or "__pycache__/" in n
                                     or n.startswith("__pycache__"))}


class Mirror:
    """A copy kept between stops, brought in step by what changed (see the module); one per sealed project and harness."""

    def __init__(self, path: Path, repo: Path, top: tuple[str, ...]) -> None:
        self.path, self.repo, self.top = path, repo, top
        self.record_path = path.with_suffix(".json")
        self.record: dict[str, tuple[str, str]] = {}  # name: (its stat key in the repository, in the mirror)
        self.copied = 0
        self.loaded = False  # `record` read from its file (`load`)
        self.noted: dict[str, tuple[str, str] | None] = {}  # what `step` changed before the record was read
        # Every file copied by the last sync holds the bytes the look saw (hashed after the copy): the
        # mirror is the tree as keyed, whatever changed in the repository since the look.
        self.faithful = True

    def load(self) -> bool:
        """Read the record; False when there is none to read (then only a walk of the mirror says what it holds)."""
        record: dict[str, tuple[str, str]] | None = None
        try:
            data = json.loads(self.record_path.read_text(encoding="utf-8"))
            if data.get("repo") == str(self.repo):
                record = dict(zip(data["names"], zip(data["src"], data["dst"], strict=True), strict=True))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        self._hold(record or {})
        return record is not None

    def _hold(self, record: dict[str, tuple[str, str]]) -> None:
        """`record` is the mirror's from here on, with what `step` noted before it was read."""
        self.record, self.loaded = record, True
        for name, entry in self.noted.items():
            self._note(name, entry)
        self.noted = {}

    def _note(self, name: str, entry: tuple[str, str] | None) -> None:
        """Record `name` as copied (its stat key in the repository, in the mirror) or gone; kept aside until
        the record is read (`step` does not read it: the put-back after the answer does)."""
        if not self.loaded:
            self.noted[name] = entry
        elif entry is None:
            self.record.pop(name, None)
        else:
            self.record[name] = entry

    def save(self) -> None:
        from donegate.core.util import atomic_write

        names = list(self.record)
        atomic_write(self.record_path, json.dumps({"repo": str(self.repo), "names": names,
                                                  "src": [self.record[n][0] for n in names],
                                                  "dst": [self.record[n][1] for n in names]}, separators=(",", ":")),
                     durable=False)

    def sync(self, tree: statcache.Tree, trusted: bool = False, keep: Iterable[str] = ()) -> None:
        """Make the mirror hold exactly what `tree` (a look at the repository) saw, but what is skipped.
        `trusted`: the last sync put back everything the last run did and nothing ran in the mirror
        since (its `.clean` mark), so only the repository's changes are applied, without a walk of
        the mirror. (The mirror lives under the state root, whose integrity the verdict cache and the
        stat cache rely on already.) `keep`: names the walk leaves, the run's own mount points (`second._programs`:
        unlinked here, a mount in the run's namespace would be detached); the put-back after it removes them."""
        if not self.loaded:  # a mirror synced without reading its record: the record is what this object holds
            self._hold(self.record)
        want, dirs = _wanted(tree, self.top)
        self.path.mkdir(parents=True, exist_ok=True)
        self.faithful = True
        seen = set()
        stale_dirs: list[str] = []
        if trusted:
            # What the look read again is copied again whatever its stat (a racy file: its bytes may have
            # changed within the stat's tick), as `step` does.
            reread = tree.since[1] if tree.since is not None else set()
            for name, (was, _) in list(self.record.items()):
                if name in want and was == want[name] and name not in reread:
                    seen.add(name)
                    continue
                (self.path / name).unlink(missing_ok=True)
                del self.record[name]
                d = name.rpartition("/")[0]
                while d not in dirs:  # a folder no wanted entry lies under any more
                    stale_dirs.append(d)
                    d = d.rpartition("/")[0]
        for name, st, is_dir in _entries(self.path, self.top) if not trusted else ():
            if is_dir:
                if name not in dirs:
                    stale_dirs.append(name)
                continue
            rec = self.record.get(name)
            if name in keep and name not in want or rec is not None and name in want and rec == (want[name], _key(st)):
                seen.add(name)
                continue
            os.unlink(self.path / name)
            self.record.pop(name, None)
        for name in sorted(stale_dirs, reverse=True):
            _rmtree(self.path / name)
        for name in [n for n in self.record if n not in seen]:
            del self.record[name]
        for name, key in want.items():
            if name not in seen:
                self._copy(name, key, tree.entries[name][1])

    def step(self, tree: statcache.Tree, changed: set[str]) -> None:
        """`sync`, for a mirror in step with the look `tree` started from (its `.clean` mark names that look, and
        nothing ran in it since): only the names that look found changed (`Tree.since`) are removed and copied
        again, without a walk of the mirror, a pass over the whole look or a read of the record (what it did is
        noted, for the put-back, which reads it). A name read again with its stat as it was (a racy one) is
        copied again too: its bytes may have changed within the stat's tick."""
        from donegate.tree import statcache

        names = _copied(changed, self.top)
        self.faithful = True
        parents: set[str] = set()
        for name in names:  # (the record is not read: what the mirror holds is what the look it is in step with saw)
            try:
                (self.path / name).unlink()
                parents.add(name.rpartition("/")[0])
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):  # not there; a folder: its files go too
                pass
            self._note(name, None)
        # Folders left empty go, the deepest first (the mirror holds wanted files only: an empty one is stale).
        stale: set[str] = set()
        for d in parents:
            while d and d not in stale:
                stale.add(d)
                d = d.rpartition("/")[0]
        for d in sorted(stale, key=lambda n: n.count("/"), reverse=True):
            try:
                os.rmdir(self.path / d)
            except OSError:  # gone already, or not empty: it still holds wanted files
                pass
        for name in sorted(names):
            entry = tree.entries.get(name)
            if entry is None or not entry[0] or entry[1] == statcache.UNREADABLE:
                continue
            self._copy(name, entry[0], entry[1])

    def _copy(self, name: str, key: str, digest: str) -> None:
        """Copy `name` from the repository (its stat key there `key`, its digest as looked `digest`) and record it."""
        from donegate.tree import statcache

        src, dst = self.repo / name, self.path / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        mode = int(key.split(":", 1)[0])
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(src), dst)
        elif stat.S_ISREG(mode):
            fsafe.copy_file(src, dst)  # as `shutil.copy2`, without its import (bz2, lzma) at a stop with a change
        else:
            return  # a FIFO, socket or device is left out (opening a FIFO to copy it would wait forever)
        now = os.lstat(dst)
        if statcache._hash(str(dst), now) != digest:
            self.faithful = False  # changed in the repository since the look
        self._note(name, (key, _key(now)))
        self.copied += 1


def _wanted(tree: statcache.Tree, top: tuple[str, ...]) -> tuple[dict[str, str], set[str]]:
    """What a mirror of `tree` holds ({name: stat key in the repository}) and its folders; worked out once
    per look (both harnesses' mirrors sync from the same look at once, and their threads share one GIL)."""
    from donegate.tree import statcache

    found = tree.wanted.get(top)
    if found is None:
        keep = _copied(tree.entries, top)
        want = {n: key for n, (key, d) in tree.entries.items() if key and d != statcache.UNREADABLE and n in keep}
        dirs = {""}
        for n in want:
            d = n.rpartition("/")[0]
            while d not in dirs:
                dirs.add(d)
                d = d.rpartition("/")[0]
        found = tree.wanted[top] = (want, dirs)
    return found


def _key(st: os.stat_result) -> str:
    from donegate.tree import statcache

    return statcache.stat_key(st)


def _entries(top: Path, skip_top: tuple[str, ...]) -> Iterator[tuple[str, os.stat_result, bool]]:
    """(relative name, lstat, is a folder) of everything below `top` but the top-level `skip_top`."""
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(top / rel_dir if rel_dir else top) as it:
            entries = list(it)
        for e in entries:
            if not rel_dir and e.name in skip_top:
                continue
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            st = e.stat(follow_symlinks=False)
            is_dir = stat.S_ISDIR(st.st_mode)
            if is_dir:
                stack.append(rel)
            yield rel, st, is_dir


def _rmtree(path: Path) -> None:
    """Remove `path` whatever the run did to its modes (a folder made read-only keeps its files)."""
    import shutil  # lazily: `shutil` (bz2, lzma) off the stop's imports

    def unlock(func, p, _exc):  # type: ignore[no-untyped-def]
        os.chmod(os.path.dirname(p), 0o700)
        func(p)

    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    for top, dirs, _ in os.walk(path):
        for d in dirs:
            try:
                os.chmod(os.path.join(top, d), 0o700, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass
    os.chmod(path, 0o700)
    shutil.rmtree(path, onerror=unlock)


@contextlib.contextmanager
def working_copy(repo: Path, tmp: Path, shared: list[str], *, root: Path | None = None,
                 tree: statcache.Tree | statcache.Pending | None = None, link_shared: bool = False,
                 told: dict[str, Any] | None = None, slot: str = "", later: bool = False,
                 wait: statcache.Pending | None = None, sub: str = "", key: str | None = None) -> Iterator[Path]:
    """The folder the run works in: the working tree's mirror, brought in step with `tree` and put back
    when the run is over (a confined run: bubblewrap binds it at the repository's path, the shared
    environments over it), or (no state root or look given, or the mirror in use) a copy in `tmp`.
    `link_shared`: the shared environments reached by a link in the copy (an unconfined run).
    `told["faithful"]` says whether the run saw exactly what `tree` saw (the mirror's copies hashed:
    then the verdict cache needs no second look at the tree after the run). `slot`: which of the tree's
    mirrors (one per harness, so two runs at once never share a folder). `later`: the put-back waits
    for `after_answer` (the hook, once its answer is out) instead of holding up the stop's verdict.
    With a look still to come (`statcache.Pending`), the mirror is yielded before it is in step, and
    `told["bring"]()` brings it in step once the look is here (False: the stop wants no run): the run's
    process can start first (bubblewrap binds the folder itself, so what the sync writes is seen).
    `wait`: a whole copy made only once the stop wants the run (an unconfined run: nothing of the product
    runs on a cached stop), yielded empty but for the project's folder `sub` (the process's working folder)
    with `told["bring"]` making it: the run's process imports pytest meanwhile. `key`: `paths.repo_key(repo)`
    when the caller has it (a stop derives it once: `donegate.gate.context`)."""
    from donegate.tree import statcache

    told = told if told is not None else {}
    told["faithful"] = False
    mirror = lock = None
    if root is not None and tree is not None:
        lock, mirror = _take_mirror(repo, root, shared, slot, key)
        told["lock"] = f"{mirror.path}.lock" if mirror is not None else ""  # the early start takes it (`early`)
    if mirror is None or tree is None:
        copy = tmp / "repo"  # a whole copy needs no look: the run starts at once (a cached stop ends it)
        if wait is not None:
            (copy / sub).mkdir(parents=True, exist_ok=True)  # (there already in a folder the launcher laid out)

            def made() -> bool:
                if wait.get() is None:
                    return False
                t0 = time.monotonic()
                copy_repo(repo, copy, skip=shared)
                _link(repo, copy, shared, link_shared)
                told["copied"] = time.monotonic() - t0
                return True

            told["bring"] = made
            yield copy
            return
        copy_repo(repo, copy, skip=shared)
        _link(repo, copy, shared, link_shared)
        yield copy
        return
    clean = mirror.path.with_suffix(".clean")
    synced: list[statcache.Tree] = []
    ticket = tree.expect() if isinstance(tree, statcache.Pending) else None

    def bring() -> bool:
        try:
            look = tree.for_mirror(shared, ticket) if isinstance(tree, statcache.Pending) else tree
            if look is None:
                return False
            t0 = time.monotonic()  # the copy's own time, not the wait for the look
            try:
                if trusted and in_step and look.since is not None and look.since[0] == in_step:
                    mirror.step(look, look.since[1])
                    told["stepped"] = True
                else:
                    # No record (lost, or an older kit's): only a walk of the mirror says what is in it.
                    mirror.sync(look, trusted=mirror.load() and trusted, keep=told.get("keep", ()))
            except OSError:  # the run left what cannot be undone in place: start the mirror again (the same folder)
                _empty(mirror.path)
                mirror.noted = {}
                mirror._hold({})
                mirror.sync(look)
        finally:
            if ticket is not None:
                ticket.done()
        synced.append(look)
        told["faithful"] = mirror.faithful
        told["copied"] = time.monotonic() - t0
        return True

    try:
        try:  # the put-back's mark: the mirror is clean, in step with the look it names
            in_step, trusted = clean.read_text(encoding="utf-8").strip(), True
        except (OSError, ValueError):
            in_step, trusted = "", False
        clean.unlink(missing_ok=True)  # from here until the sync after the run, the mirror is the run's
        mirror.path.mkdir(parents=True, exist_ok=True)
        told["mirror"] = True
        if isinstance(tree, statcache.Pending):
            told["bring"] = bring
        else:
            bring()
        yield mirror.path
    finally:
        if ticket is not None:
            ticket.done()  # a run that never got to bring its mirror in step: the look waits for it no more
        assert lock is not None
        # What the mirror was brought in step with; else, for a run ended before that, the stop's look if any.
        look = synced[0] if synced else (tree.tree if isinstance(tree, statcache.Pending) else tree)
        done = _PutBack(mirror, look, clean, lock)
        if later:
            _PENDING.append(done)
        else:
            done()


def _empty(path: Path) -> None:
    """Remove what is in `path`, whatever the run did to its modes, keeping the folder (a sandbox may bind it)."""
    os.chmod(path, 0o700)
    for name in os.listdir(path):
        _rmtree(path / name)


class _PutBack:
    """Undo what the run wrote in the mirror (nothing of it outlives the run), mark the mirror clean, let
    it go. Until then the mirror is locked and has no `.clean` mark: a stop that comes first waits
    (`_take_mirror`), and a put-back that never ran is done by the next stop's walk of the mirror."""

    def __init__(self, mirror: Mirror, tree: statcache.Tree | None, clean: Path, lock: int) -> None:
        self.mirror, self.tree, self.clean, self.lock = mirror, tree, clean, lock
        self.mark = mirror.path.with_suffix(".putback")

    def __call__(self) -> None:
        from donegate.core.util import atomic_write

        try:
            if self.tree is None:  # a run cancelled before the stop looked: no clean mark, the next stop walks it
                return
            if not self.mirror.loaded:  # a run cancelled before its mirror was brought in step
                self.mirror.load()
            self.mirror.sync(self.tree)
            self.mirror.save()
            # The look the mirror is now in step with: the next stop's look, if it started from that one, names
            # what changed since (`Mirror.step`).
            atomic_write(self.clean, self.tree.id or "", durable=False)
        except OSError:
            _rmtree(self.mirror.path)
            self.mirror.record_path.unlink(missing_ok=True)
        finally:
            # The lock goes first: a stop that finds it held and no mark takes a copy of its own, so the
            # other order made a stop coming in between copy a mirror that was just about free.
            os.close(self.lock)
            self.mark.unlink(missing_ok=True)


_PENDING: list[Callable[[], None]] = []  # put-backs, then `pyc.Compile` jobs: done in order


def after(job: Callable[[], None]) -> None:
    """`job` done once the hook has answered, after the put-backs queued before it (`after_answer`)."""
    _PENDING.append(job)


_REMOVE: list[str] = []  # the runs' own temporary folders (`remove_later`): removed once the hook has answered
LIVE: set[str] = set()  # the folders of a stop's runs not let go of yet (`runner.setting`, `own_suite.OwnRuns`, `leftovers.once_gone`)


def remove_later(folder: str) -> None:
    """`folder` (a run's temporary folder, made by the hook) removed once the hook has answered, by the child that
    does the put-backs (`after_answer`): unlinking it before the answer waited 10-100 ms on a busy disk, with the
    stop's runs done. A process that never answers (an in-process caller) removes it at its next run's start
    (`remove_now`) or at its exit."""
    if not _REMOVE:
        import atexit

        atexit.register(remove_now)
    _REMOVE.append(folder)


def remove_now() -> None:
    """The folders `remove_later` named, removed (after the answer; a stop's runs call it with none to remove)."""
    while _REMOVE:
        fsafe.remove_tree(_REMOVE.pop())  # as `shutil.rmtree(ignore_errors=True)`, without its import (bz2, lzma)


def drain() -> None:
    """Do every put-back still waiting, here and now (a process that stops twice, or exits without
    `after_answer`)."""
    while _PENDING:
        _PENDING.pop(0)()


def after_answer() -> None:
    """The hook's answer is out: do the waiting put-backs in a child of their own, so the hook can exit
    (Claude Code waits for it) while the mirrors are brought back. The child leaves the session and
    Claude Code's pipes at once; the mirror locks go with it (`flock` follows the open file)."""
    if not _PENDING and not _REMOVE and not LIVE:
        return
    orphans, parent = sorted(LIVE), os.getpid()
    for done in _PENDING:
        if isinstance(done, _PutBack):
            done.mark.touch()  # a stop that finds the mirror locked waits for a put-back, not for a run
    try:
        pid = os.fork()
    except OSError:
        drain()
        remove_now()
        return
    if pid:
        _PENDING.clear()
        _REMOVE.clear()
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        drain()
        bases = {os.path.dirname(f) for f in _REMOVE}
        remove_now()
        from donegate.hidden import leftovers

        leftovers.once_gone(parent, orphans, _rmtree)  # the folders of runs still letting go at the answer
        leftovers.sweep(bases, _rmtree)  # the folders killed stops left in the same place (`leftovers`)
    finally:
        os._exit(0)


PUTBACK_WAIT = 5.0  # seconds for the last stop's put-back, then a copy of its own
def _take_mirror(repo: Path, root: Path, shared: list[str], slot: str,
                 key: str | None = None) -> tuple[int | None, Mirror | None]:
    from donegate.core import deadline
    from donegate import paths

    folder = paths.state_dir(root) / "mirror"
    folder.mkdir(parents=True, exist_ok=True)
    key = (key or paths.repo_key(repo)) + (f"-{slot}" if slot else "")
    drain()  # this process's own put-backs first (it holds their locks)
    from donegate.hidden import early

    held = early.held(str(folder / f"{key}.lock"))  # taken by the launcher for the run it started early
    if held is not None:
        return held, Mirror(folder / key, repo, (".git", *shared))
    fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    mark = folder / f"{key}.putback"
    try:
        # The last stop's put-back still going (it takes a walk of the mirror): wait for it, a little.
        # Another stop's run in it (no mark): copy.
        deadline.flock(fd, PUTBACK_WAIT, worth_waiting=mark.exists)
    except OSError:
        os.close(fd)
        return None, None
    return fd, Mirror(folder / key, repo, (".git", *shared))


def _link(repo: Path, copy: Path, shared: list[str], link_shared: bool) -> None:
    if link_shared:
        for name in shared:  # bwrap binds them read-only; here a link is what there is
            os.symlink(repo / name, copy / name)
