"""No work twice: a stop on exactly what the last stop judged gets the last stop's verdict.

The key is a sha256 over everything the hidden run can read:

- every file under the repository except `.git/`, tracked or not, git-ignored ones included: path,
  mode and content digest (not timestamps: an agent can set those back), from a look at the tree
  (`donegate.tree.statcache`: a file is read again only when its stat moved); symlinks by their target text,
  and one leaving the repository for a file (every venv's `bin/python`) by where it leads and that file's
  stat, resolved at every stop (a link out to a folder, or to a file written within the stat's slack,
  turns the cache off for the stop: what is under the folder is not looked at); other file types by their type
  (hashed a folder at a time, then the folders: a look that found one file changed hashes its folder again);
- what the scope gate asks git: `.git/HEAD`, `.git/index`, `.git/config`, `.git/info/exclude`;
- the store's manifest (the hidden tests' hashes, the base, the protected snapshot);
- the interpreters involved (the kit's, and the project's the seal recorded: path, version, the
  executable's and site-packages' stat: a package installed or removed changes them) and the kit's version;
- the configuration.

A stop whose key equals the key of the last stop the session ran the tests for takes that stop's
scope and acceptance results instead of running them again; everything else (integrity, the
transcript scan, the reviewers, the appeal, the breaker) runs as always. Only complete runs are kept
(a timeout or an early exit runs again), and only when the key after the run equals the key before
it (a test run that changes the tree, or a change made during the run, is never kept). A tree of
more than `MAX_FILES` files is not cached. A hit costs one look at the tree, a miss one more after
the run unless the run worked in a mirror made from the first look (`donegate.hidden.copy`: then it
saw the tree as keyed and could not change it); a look reads only what changed since the last.
`cache: false` turns it off, for suites whose outcome depends on time or on anything outside the key.

The last entry of each session lives in `state/cache/`, beside the counters and as protected.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import json
import os
import sys
import time
from pathlib import Path

from donegate.core.util import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate.tree import statcache

VERSION = 2  # 2: the tree's hash is of its folders' hashes
MAX_FILES = 200_000  # beyond it even a look that hashes nothing (one lstat a file) costs more than it saves
GIT_FILES = ("HEAD", "index", "config", os.path.join("info", "exclude"))


class Skip(Exception):
    """The tree cannot be keyed (too big, a symlink leaving it for a folder): run the tests."""


def tree_digest(repo: Path, tree: statcache.Tree | None = None) -> tuple[str, int, int]:
    """(sha256 of the tree as the hidden run sees it, files, bytes), from a look at it (`donegate.tree.statcache`:
    only files whose stat moved since the last look are read)."""
    from donegate.tree import statcache

    tree = tree if tree is not None else statcache.look(repo)
    digest, files, size = tree.remember("tree-key", lambda: _digest(repo, tree))
    links = tree.remember("links", lambda: sorted(n for n, (_, d) in tree.entries.items() if d.startswith("symlink:")))
    # Where a link leads can change outside the tree (a venv's `bin/python -> /usr/bin/python3`): resolved at
    # every stop, and a link out of the tree keys the stop by its target's path and stat.
    outside = _outside(repo, links)
    if outside:
        digest = _sha256(json.dumps([digest, outside]).encode("utf-8", "surrogateescape")).hexdigest()
    return digest, files, size


def _outside(repo: Path, links: list[str]) -> list[list[str]]:
    """[name, where it leads, that file's stat key] of each link in `links` that leads out of the repository.
    Its stat stands for its content as the stat cache's does (ctime moves with every write and cannot be set
    back); a file written within the stat's slack (`statcache.SLACK_NS`), a folder (what is under it is not
    looked at) or anything but a regular file or nothing: Skip."""
    import stat as modes
    import time

    from donegate.tree import statcache

    top = os.path.realpath(repo)
    out = []
    racy = time.time_ns() - statcache.SLACK_NS
    for name in links:
        resolved = os.path.realpath(os.path.join(repo, name))
        if resolved == top or resolved.startswith(top + os.sep):
            continue  # what it leads to is in the tree, keyed with it
        try:
            st = os.stat(resolved)
        except FileNotFoundError:
            out.append([name, resolved, "missing"])
            continue
        except OSError:
            raise Skip(f"{name} is a symlink out of the repository that cannot be followed") from None
        if modes.S_ISDIR(st.st_mode):
            raise Skip(f"{name} is a symlink to a folder out of the repository")
        if not modes.S_ISREG(st.st_mode):
            raise Skip(f"{name} is a symlink out of the repository to something not a file")
        if st.st_mtime_ns >= racy or st.st_ctime_ns >= racy:
            raise Skip(f"{name} leads out of the repository to a file written just now")
        out.append([name, resolved, statcache.stat_key(st)])
    return out


def _digest(repo: Path, tree: statcache.Tree) -> tuple[str, int, int]:
    """(sha256 of the tree, files, bytes): of each folder's entries (name, mode, digest; links by where they say
    they lead), then of the folders and their hashes, both in sorted order. The folders' hashes are kept with the
    look's id (`_FolderMemo`): a look that started from that one hashes again only the folders holding a name it
    found changed (a 15,000-file tree whose look found one file changed: 16 -> ~2 ms). Only the content decides
    the key, not the way the tree got there."""
    from donegate.tree import statcache

    entries = tree.entries
    folders = tree.folders if tree.folders is not None else _folders(entries)
    memo = _FolderMemo.read(tree)
    since = tree.since
    if memo is not None and since is not None and memo.look == since[0]:
        hashes = memo.hashes
        for d in {n.rpartition("/")[0] for n in since[1]}:
            names = folders.get(d)
            if names:
                hashes[d] = _folder(entries, names)
            else:
                hashes.pop(d, None)
    else:
        hashes = {d: _folder(entries, names) for d, names in folders.items() if names}
    files = sum(h[1] for h in hashes.values())
    size = sum(h[2] for h in hashes.values())
    if files > MAX_FILES:
        raise Skip(f"more than {MAX_FILES} files")
    if tree.id is not None and tree.stat_path is not None and (memo is None or memo.look != tree.id):
        _FolderMemo(statcache.memo_path(tree, "folders"), tree.id, hashes).write()
    digest = _sha256("".join(f"{d}\0{hashes[d][0]}\0" for d in sorted(hashes)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), files, size


def _folders(entries: dict[str, tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in entries:
        out.setdefault(name.rpartition("/")[0], []).append(name)
    return out


_MODES: dict[str, str] = {}  # a tree has a handful of modes: each formatted once


def _folder(entries: dict[str, tuple[str, str]], names: list[str]) -> list[Any]:
    """[sha256 of the folder's entries, its regular files, their bytes]."""
    parts = []
    files = size = 0
    for name in sorted(names):
        key, digest = entries[name]
        raw, _, rest = key.partition(":")
        mode = _MODES.get(raw)
        if mode is None:
            mode = _MODES[raw] = f"{int(raw) & 0o777 if raw else 0:o}"
        parts.append(f"{name}\0{mode}\0{digest}\0")
        if len(digest) == 64:
            files += 1
            size += int(rest.partition(":")[0])
    return [_sha256("".join(parts).encode("utf-8", "surrogateescape")).hexdigest(), files, size]


class _FolderMemo:
    """The folders' hashes of one look, kept beside the stat cache under the look's id (the state root's, as
    protected as the stat cache it stands beside)."""

    def __init__(self, path: Path, look: str, hashes: dict[str, list[Any]]) -> None:
        self.path, self.look, self.hashes = path, look, hashes

    @classmethod
    def read(cls, tree: statcache.Tree) -> _FolderMemo | None:
        from donegate.tree import statcache
        from donegate.core.util import memo_read

        if tree.stat_path is None:
            return None
        path = statcache.memo_path(tree, "folders")
        memo = memo_read(path)
        if memo is None:
            return None
        look, hashes = memo
        if isinstance(hashes, dict) and all(
                isinstance(h, list) and len(h) == 3 and isinstance(h[0], str) and type(h[1]) is int
                and type(h[2]) is int for h in hashes.values()):
            return cls(path, look, hashes)
        return None

    def write(self) -> None:
        from donegate.core.util import memo_write

        memo_write(self.path, self.look, self.hashes)  # lost: the next changed tree is hashed whole


def _git_state(repo: Path) -> list[str]:
    git_dir = repo / ".git"
    if git_dir.is_file():  # a worktree or submodule: .git names the real folder
        return [git_dir.read_text(encoding="utf-8", errors="replace")]
    out = []
    for name in GIT_FILES:
        try:
            out.append(_sha256((git_dir / name).read_bytes()).hexdigest())
        except OSError:
            out.append("-")
    return out


def _site_packages(lib: str) -> list[str]:
    """`sorted(glob.glob(lib/python3*/site-packages))` without `glob`'s import at every stop (~0.4 ms)."""
    try:
        with os.scandir(lib) as it:
            found = [os.path.join(lib, e.name, "site-packages") for e in it if e.name.startswith("python3") and e.is_dir()]
    except OSError:
        return []
    return sorted(p for p in found if os.path.lexists(p))


def _interpreter(manifest: dict[str, Any] | None = None) -> list[Any]:
    import site

    out: list[Any] = [sys.executable, sys.version]
    rec = (manifest or {}).get("python")
    env = [str(rec.get("runs") or "")] if isinstance(rec, dict) else []
    if isinstance(rec, dict) and rec.get("env"):  # the project's environment: a package installed there moves these
        env += [os.path.join(str(rec["env"]), "pyvenv.cfg"), *_site_packages(os.path.join(str(rec["env"]), "lib"))]
    for p in [os.path.realpath(sys.executable), *site.getsitepackages(), *env]:
        try:
            st = os.stat(p)
            out.append([p, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
        except OSError:
            out.append([p, None])
    return out


def key(repo: Path, manifest: dict[str, Any], cfg: dict[str, Any], tree: statcache.Tree | None = None
        ) -> tuple[str, int, int]:
    from donegate import __version__

    digest, files, size = tree_digest(repo, tree)
    parts = [VERSION, __version__, digest, _git_state(repo), manifest, _interpreter(manifest), cfg]
    return _sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest(), files, size


def _entry_path(root: Path, session: str) -> Path:
    from donegate import paths

    digest = _sha256(session.encode("utf-8", "replace")).hexdigest()[:24]
    return paths.state_dir(root) / "cache" / f"session-{digest}.json"


def _load(path: Path, want: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != want:
        return None
    if not all(isinstance(entry.get(k), dict) for k in ("scope", "acceptance", "failures")):
        return None
    return entry


def _save(path: Path, entry: dict[str, Any] | None) -> None:
    if entry is None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        return
    atomic_write(path, json.dumps(entry), durable=False)  # a lost entry costs one full run, nothing more


class Lookup:
    """The cache's part in one stop: the key before the run, the entry it found, the ledger's gate."""

    def __init__(self, path: Path, key: str | None, entry: dict[str, Any] | None, gate: dict[str, Any]) -> None:
        self.path, self.key, self.entry, self.gate = path, key, entry, gate

    def result(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
        """(scope gate, acceptance gate, failures) of the stop this one repeats."""
        assert self.entry is not None
        return self.entry["scope"], self.entry["acceptance"], self.entry["failures"]


def lookup(repo: Path, manifest: dict[str, Any], cfg: dict[str, Any], root: Path, session: str,
           tree: statcache.Tree | None = None) -> Lookup:
    """The last run's verdict when this stop's key (from `tree`, a look taken now) matches it."""
    path = _entry_path(root, session)
    if not cfg["cache"]:
        return Lookup(path, None, None, {"hit": False, "off": True})
    t0 = time.monotonic()
    gate: dict[str, Any] = {"hit": False}
    before = entry = None
    try:
        before, files, size = key(repo, manifest, cfg, tree)
        gate.update(key=before[:16], files=files, bytes=size)
        if tree is not None:
            gate.update(hashed=tree.hashed, look=round(tree.duration, 4))
        entry = _load(path, before)
    except Skip as exc:
        gate["skipped"] = str(exc)
    except Exception as exc:  # a cache fault must never decide a stop: run the tests
        gate["error"] = f"{type(exc).__name__}: {exc}"
    gate["duration"] = round(time.monotonic() - t0, 4)
    if entry is not None:
        gate.update(hit=True, stop_time=entry.get("time"))
    return Lookup(path, before, entry, gate)


def keep(found: Lookup, repo: Path, manifest: dict[str, Any], cfg: dict[str, Any], root: Path,
         scope: dict[str, Any], accept: dict[str, Any], failures: dict[str, str], faithful: bool = False,
         tree_key: str | None = None) -> None:
    """Keep this stop's run for the next stop of the session when it may be: complete, and it saw the
    tree as keyed: `faithful` (the run's mirror was made from the look the key came from, every copied
    file hashed: `donegate.hidden.copy`), else the tree after the run (a new look) keyed as before it.
    `tree_key`: the working tree's `paths.repo_key` (the stop's context has it)."""
    if found.key is None:
        return
    from donegate.tree import statcache

    try:
        t1 = time.monotonic()
        ok = not accept.get("problem") and (faithful or key(repo, manifest, cfg, statcache.look(repo, root, key=tree_key))[0] == found.key)
        found.gate["duration"] = round(found.gate["duration"] + time.monotonic() - t1, 4)
        if not ok:
            found.gate["kept"] = False
        _save(found.path, {"key": found.key, "time": time.time(), "scope": scope, "acceptance": accept,
                           "failures": failures} if ok else None)
    except Exception as exc:
        found.gate["error"] = f"{type(exc).__name__}: {exc}"
