"""No work twice: a stop on exactly what the last stop judged gets the last stop's verdict.

The key is a sha256 over everything the hidden run can read:

- every file under the repository except `.git/`, tracked or not, git-ignored ones included: path,
  mode and content (not timestamps: an agent can set those back); symlinks by their target text
  (a symlink leaving the repository turns the cache off for the stop: its target is not hashed);
  other file types by their type;
- what the scope gate asks git: `.git/HEAD`, `.git/index`, `.git/config`, `.git/info/exclude`;
- the store's manifest (the hidden tests' hashes, the base, the protected snapshot);
- the interpreters involved (the kit's, and the project's the seal recorded: path, version, the
  executable's and site-packages' stat: a package installed or removed changes them) and the kit's version;
- the configuration.

A stop whose key equals the key of the last stop the session ran the tests for takes that stop's
scope and acceptance results instead of running them again; everything else (integrity, the
transcript scan, the reviewers, the appeal, the breaker) runs as always. Only complete runs are kept
(a timeout or an early exit runs again), and only when the key after the run equals the key before
it (a test run that changes the tree, or a change made during the run, is never kept). A tree too
large to hash cheaply (`MAX_FILES`, `MAX_BYTES`) is not cached. A miss costs two hashes of the
tree (before and after the run), a hit one. `cache: false` turns it off, for
suites whose outcome depends on time or on anything outside the key.

The last entry of each session lives in `state/cache/`, beside the counters and as protected.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from pathlib import Path

from donegate.util import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Callable

VERSION = 1
MAX_FILES = 20_000
MAX_BYTES = 64 << 20  # ~0.1 s to hash: beyond it, running the tests again is the cheaper bet
GIT_FILES = ("HEAD", "index", "config", os.path.join("info", "exclude"))
CHUNK = 1 << 20


class Skip(Exception):
    """The tree cannot be keyed (too big, a symlink leaving it): run the tests."""


def tree_digest(repo: Path) -> tuple[str, int, int]:
    """(sha256 of the tree as the hidden run sees it, files, bytes)."""
    h = hashlib.sha256()
    root = str(repo)
    top = os.path.realpath(root)
    files = size = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            h.update(f"D?{rel_dir}\0{exc.errno}\0".encode("utf-8", "surrogateescape"))
            continue
        subdirs = []
        for entry in entries:
            if entry.name == ".git":
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            name = rel.encode("utf-8", "surrogateescape")
            if entry.is_symlink():
                target = os.readlink(entry.path)
                resolved = os.path.realpath(entry.path)
                if resolved != top and not resolved.startswith(top + os.sep):
                    raise Skip(f"{rel} is a symlink out of the repository")
                h.update(b"L" + name + b"\0" + target.encode("utf-8", "surrogateescape") + b"\0")
            elif entry.is_dir(follow_symlinks=False):
                subdirs.append(rel)
            elif entry.is_file(follow_symlinks=False):
                files += 1
                if files > MAX_FILES:
                    raise Skip(f"more than {MAX_FILES} files")
                size += _file(h, name, entry.path, MAX_BYTES - size)
            else:
                h.update(b"O" + name + b"\0")  # a fifo, socket or device: never opened
        stack.extend(reversed(subdirs))
    return h.hexdigest(), files, size


def _file(h: Any, name: bytes, path: str, budget: int) -> int:
    try:  # O_NONBLOCK|O_NOFOLLOW: a file swapped for a fifo or a symlink meanwhile never hangs or leaves
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        h.update(b"F?" + name + b"\0" + str(exc.errno).encode() + b"\0")
        return 0
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            h.update(b"O" + name + b"\0")
            return 0
        if st.st_size > budget:  # checked before reading: one huge file must not cost its whole read
            raise Skip(f"more than {MAX_BYTES >> 20} MB")
        h.update(b"F" + name + b"\0" + f"{st.st_mode & 0o777:o}:{st.st_size}\0".encode())
        while True:
            data = os.read(fd, CHUNK)
            if not data:
                break
            h.update(data)
        return st.st_size
    finally:
        os.close(fd)


def _git_state(repo: Path) -> list[str]:
    git_dir = repo / ".git"
    if git_dir.is_file():  # a worktree or submodule: .git names the real folder
        return [git_dir.read_text(encoding="utf-8", errors="replace")]
    out = []
    for name in GIT_FILES:
        try:
            out.append(hashlib.sha256((git_dir / name).read_bytes()).hexdigest())
        except OSError:
            out.append("-")
    return out


def _interpreter(manifest: dict[str, Any] | None = None) -> list[Any]:
    import site

    out: list[Any] = [sys.executable, sys.version]
    rec = (manifest or {}).get("python")
    env = [str(rec.get("runs") or "")] if isinstance(rec, dict) else []
    if isinstance(rec, dict) and rec.get("env"):  # the project's environment: a package installed there moves these
        import glob

        env += [os.path.join(str(rec["env"]), "pyvenv.cfg"), *sorted(glob.glob(os.path.join(glob.escape(str(rec["env"])),
                                                                                       "lib", "python3*", "site-packages")))]
    for p in [os.path.realpath(sys.executable), *site.getsitepackages(), *env]:
        try:
            st = os.stat(p)
            out.append([p, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
        except OSError:
            out.append([p, None])
    return out


def key(repo: Path, manifest: dict[str, Any], cfg: dict[str, Any]) -> tuple[str, int, int]:
    from donegate import __version__

    tree, files, size = tree_digest(repo)
    parts = [VERSION, __version__, tree, _git_state(repo), manifest, _interpreter(manifest), cfg]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest(), files, size


def _entry_path(root: Path, session: str) -> Path:
    from donegate import paths

    digest = hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:24]
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


def judged(repo: Path, manifest: dict[str, Any], cfg: dict[str, Any], root: Path, session: str,
           judge: Callable[[], tuple[dict[str, Any], dict[str, Any], dict[str, str]]]
           ) -> tuple[dict[str, Any], dict[str, Any], dict[str, str], dict[str, Any]]:
    """(scope gate, acceptance gate, failures {test id: message}, cache gate) for this stop: the
    last run's when its key matches, else `judge()`'s (kept for the next stop when it may be)."""
    if not cfg["cache"]:
        scope, accept, failures = judge()
        return scope, accept, failures, {"hit": False, "off": True}
    t0 = time.monotonic()
    gate: dict[str, Any] = {"hit": False}
    path = _entry_path(root, session)
    before = None
    try:
        before, files, size = key(repo, manifest, cfg)
        gate.update(key=before[:16], files=files, bytes=size)
        entry = _load(path, before)
    except Skip as exc:
        gate["skipped"] = str(exc)
        entry = None
    except Exception as exc:  # a cache fault must never decide a stop: run the tests
        gate["error"] = f"{type(exc).__name__}: {exc}"
        entry = None
    gate["duration"] = round(time.monotonic() - t0, 4)
    if entry is not None:
        gate.update(hit=True, stop_time=entry.get("time"))
        return entry["scope"], entry["acceptance"], entry["failures"], gate
    scope, accept, failures = judge()
    if before is None:
        return scope, accept, failures, gate
    try:
        t1 = time.monotonic()
        keep = not accept.get("problem") and key(repo, manifest, cfg)[0] == before
        gate["duration"] = round(gate["duration"] + time.monotonic() - t1, 4)
        if not keep:
            gate["kept"] = False
        _save(path, {"key": before, "time": time.time(), "scope": scope, "acceptance": accept, "failures": failures}
              if keep else None)
    except Exception as exc:
        gate["error"] = f"{type(exc).__name__}: {exc}"
    return scope, accept, failures, gate
