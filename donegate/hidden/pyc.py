"""The product's bytecode, kept between stops for the confined runs.

The pytest run reads none of the repository's bytecode but what the kit compiled (a planted `.pyc` would run
instead of the source the scan read; what the run writes beside a source it never reads), so it compiled every
product module at every stop: a 26,000-line package
cost half of a 1.2 s run, where bare pytest reads its `__pycache__`. The runs cannot keep bytecode
themselves, since the code under test runs in them. So once the hook has answered (in the child that
puts the mirrors back, `copy.after_answer`), a job that runs no product code compiles the mirror's
sources into this store: confined as the runs are (bubblewrap, the mirror read-only at the repository's
path, the store the one folder it may write), with the project's interpreter. Its files are checked
hash-based pycs (PEP 552): an import reads the source and uses the bytecode only when the source hashes
to what it was compiled from, whatever its mtime, size or inode say. Both runs see the store read-only
at `INSIDE`, for the repository's modules only (`donegate.hidden.kept`); a module whose source moved on
is compiled as before.

The sealed tests are kept too, rewritten as the pytest run rewrites them (pytest's assertion rewrite, then
the kit's equality probes, `donegate.hidden.probe`): that rewrite cost ~21 ms of a 220 ms run of 40 tests,
where bare pytest reads its cached rewrite. The same job writes them (`Tests`), from the store's
files (bound read-only) with the kit's pytest, before anything else, in pytest's own checked-hash format:
the run's pytest uses one only when the source hashes to what it was made from. Only for tests of `REWRITE_FROM` bytes
or more: the rewrite costs the run ~3 ms a KB here (a 40-test file of 5.5 KB, ~21 ms), while importing pytest's rewriter
was most of the job's cost (~0.1 of its ~0.15 CPU-s). Below it the run's own rewrite is a few ms of a stop and the job
imports no pytest: measured on three of the kit's test files (92 stops, hidden tests of a few lines), the jobs' CPU
went from 15.4 to 1.6 s, and the own suite's job, which only rewrites, no longer starts for them. An unconfined run
reads the sealed tests' rewrite too (`Rewrite`), not the product's bytecode.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.tree import statcache
    from donegate.hidden import python as pyenv

INSIDE = "/tmp/.pycache"  # where the runs see the store (their /tmp is their own)
MAX_FILES = 20_000
MAX_BYTES = 4 << 20  # a larger source is compiled by the run that imports it, as before
REWRITE_FROM = 2048  # the sealed tests' rewrite is kept only from this much source on (the module's docstring)
# The product's sources are kept only from this much source on (the mirror's `.py` files together): a job is a bubblewrap
# and an interpreter after every stop whose sources changed (~45 ms of CPU each, measured at load 12-19, a tree of one
# module), where each run compiles what it imports at ~0.1-0.15 ms a KB. Below it, the runs compile (two runs, at most
# ~10 ms a stop) and no job starts: a suite stop on a one-module project, 454 -> ~405 ms of CPU (issue 48 item 4).
COMPILE_FROM = 32 << 10

# `python -I -S -c COMPILE`, its JSON on stdin: compile each file (read at its path in the repository,
# where the mirror is bound) into `prefix`, unless the pyc there was made from the same source.
COMPILE = """\
def read(path, limit):
    import os, stat
    # A regular file only, opened without following a link and without waiting on a FIFO: a
    # `.py` linked to /dev/zero would be read until the memory runs out.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return fh.read(limit + 1)
def put(path, data):
    import os
    tmp = "%s.%s.tmp" % (path, os.urandom(6).hex())  # two stops' jobs at once never share one (nor a pid)
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
def tests(job):
    import ast, importlib.util, marshal, os, sys
    std = list(sys.path)
    sys.path[:] = std + job["pytest"]
    try:
        import _pytest.assertion.rewrite as rw
        probe = {"__name__": "donegate_probe"}
        exec(compile(job["probe"], "<donegate probe>", "exec"), probe)
        for path, mark, sub, text in job["tests"]:
            # the own suite's files are sent (laid out afresh at each stop, gone by now), under their folder `sub`
            source = read(path, job["max_bytes"]) if text is None else text.encode("utf-8")
            if source is None:
                continue
            tree = ast.parse(source, filename=path)
            rw.rewrite_asserts(tree, source, path, None)  # no config: as the run's (its ini sets nothing of it)
            probe["rewrite_probes"](tree)
            code = compile(tree, path, "exec", dont_inherit=True)
            name = os.path.basename(path)[:-3] + rw.PYC_TAIL
            os.makedirs(os.path.join(job["tests_dir"], sub), exist_ok=True)
            put(os.path.join(job["tests_dir"], sub, name), importlib.util.MAGIC_NUMBER + b"\\x03\\x00\\x00\\x00"
                + importlib.util.source_hash(source)[:8] + marshal.dumps(code))
            put(os.path.join(job["tests_dir"], mark), b"")
    except Exception:
        pass  # the runs rewrite the tests themselves, as before
    finally:
        sys.path[:] = std
def main():
    import importlib.util, json, os, sys
    from importlib import _bootstrap_external as ext
    job = json.loads(sys.stdin.read())
    sys.dont_write_bytecode = True
    if job.get("tests"):
        tests(job)
    sys.pycache_prefix = job["prefix"]
    sys.dont_write_bytecode = False
    for rel in job["files"]:
        path = os.path.join(job["repo"], rel)
        try:
            source = read(path, job["max_bytes"])
            if source is None:
                continue
            want = importlib.util.source_hash(source)
            cfile = importlib.util.cache_from_source(path)
            try:
                with open(cfile, "rb") as fh:
                    head = fh.read(16)
                if head == importlib.util.MAGIC_NUMBER + b"\\x03\\x00\\x00\\x00" + want:
                    continue
            except OSError:
                pass
            data = ext._code_to_hash_pyc(compile(source, path, "exec", dont_inherit=True), want, True)
            os.makedirs(os.path.dirname(cfile), exist_ok=True)
            put(cfile, data)
        except (OSError, SyntaxError, ValueError):
            continue
main()
"""


def folder(root: Path, repo: Path, key: str | None = None) -> Path:
    """`key`: `paths.repo_key(repo)` when the caller has it (a stop derives it once: `donegate.gate.context`)."""
    from donegate import paths

    return paths.state_dir(root) / "pyc" / (key or paths.repo_key(repo))


def bind(root: Path | None, repo: Path, key: str | None = None) -> list[str]:
    """bubblewrap's arguments that show a run the store; `key` as for `folder`. A store not made yet is made here,
    empty (the job fills it after the answer): a run binds it from the first stop on, so the next stop starts the same
    run and adopts the one its launcher started from this stop's recipe (`donegate.hidden.early`; bound only from
    the second stop, that stop's early run was ended). None when it cannot be made."""
    if root is None:
        return []
    store = folder(root, repo, key)
    if not store.is_dir():
        try:
            store.mkdir(parents=True, exist_ok=True)
        except OSError:
            return []
    return ["--ro-bind", str(store), INSIDE]


TESTS = "tests"
OWN = "own"  # the project's own suite's rewrite, by path, beside the hidden tests' (`Tests.under`)
DONE = ".compiled"  # what the last finished job was given (`Compile._done`)


class Tests:
    """The sealed tests' rewritten bytecode for one run: where the job writes it (`folder`, under a recipe:
    what else than their source it depends on) and where the runs see it (`inside`; `confined` False: an unconfined
    run reads it at its real path, `Rewrite`). `missing`: the store's
    files the job has not rewritten yet (a mark per file and digest). `key` as for `folder`. `under`: the folder the
    project's own suite is laid out in for this run (`seal.own.lay_out`): its files are kept under `OWN` by their path
    below it, and sent to the job (the folder is gone once the hook has answered)."""

    def __init__(self, root: Path, repo: Path, python: pyenv.Launch, files: list[Path], key: str | None = None,
                 under: Path | None = None, confined: bool = True) -> None:
        from donegate.core.fsafe import sha256 as _sha256
        import os

        # The kit's probes, the kit's pytest (a stat of its rewriter: an upgrade), the interpreter (another
        # version writes another file name). The run's pytest checks each file's source hash anyway:
        # a stale recipe costs a rewrite, never a wrong test.
        from donegate.hidden import ship

        self.probe = ship.source(ship.PROBE).encode("utf-8")  # as the runs get it: the recipe's, and what the job is sent
        parts = [self.probe, python.interp.exe.encode()]
        for d in python.pytest:
            try:
                st = os.stat(os.path.join(d, "_pytest", "assertion", "rewrite.py"))
                parts.append(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode())
            except OSError:
                continue
        recipe = _sha256(b"\0".join(parts)).hexdigest()[:20]
        self.folder = folder(root, repo, key) / TESTS / recipe
        self.inside = f"{INSIDE}/{TESTS}/{recipe}" if confined else str(self.folder)
        self.sub = f"/{OWN}" if under is not None else ""
        self.marks: dict[str, str] = {}
        self.where: dict[str, tuple[str, str | None]] = {}  # each file's folder under `sub`, its text when sent
        base = under.resolve() if under is not None else None
        size = 0
        for f in files:  # read where the job's walls show them: the store bound at its real path
            try:
                data = f.read_bytes()
                size += len(data)
                real = f.resolve() if under is None else _below(f, under, base)
                folder_of = real.parent.relative_to(base).as_posix() if base is not None else ""
                text = data.decode("utf-8") if under is not None else None
            except (OSError, ValueError):  # not below `under`, not UTF-8: rewritten by the run, as before
                continue
            sub = "" if under is None else OWN if folder_of == "." else f"{OWN}/{folder_of}"
            self.marks[str(real)] = os.path.join(sub, f"{f.name}.{_sha256(data).hexdigest()[:16]}.done")
            self.where[str(real)] = (sub, text)
        # Small tests are rewritten by the run itself (`REWRITE_FROM`): the job then imports no pytest for them.
        self.missing = [path for path, mark in self.marks.items() if not (self.folder / mark).exists()] \
            if size >= REWRITE_FROM else []
        self.python = python

    def job(self) -> dict[str, object]:
        """The job's part ({} when every file is rewritten already)."""
        if not self.missing:
            return {}
        return {"tests": [[p, self.marks[p], *self.where[p]] for p in self.missing], "tests_dir": self.inside,
                "pytest": self.python.pytest, "probe": self.probe.decode("utf-8")}


def _below(f: Path, under: Path, base: Path | None) -> Path:
    """`f`'s real path, below `base` (`under`'s). The own suite's folder is new and holds only what `seal.own.lay_out`
    wrote (folders and regular files, no link): a name below it lexically is below it, and its real path is `base`
    and the rest of the name (a `resolve` of each of 200 files walked every folder of the path twice: 15 of the
    22 ms of CPU this took a stop). Otherwise it is resolved (ValueError: not below)."""
    assert base is not None
    for top in (under, base):
        try:
            return base / f.relative_to(top)
        except ValueError:
            continue
    return base / f.resolve().relative_to(base)


class Compile:
    """The job, for `copy.after_answer`: the mirror's sources compiled into the store. `key` as for `folder`."""

    def __init__(self, root: Path, repo: Path, mirror: Path, tree: statcache.Tree | statcache.Pending,
                 top: tuple[str, ...],
                 python: pyenv.Launch, project: Path, store: Path | None, tests: Tests | None = None,
                 key: str | None = None, code: bool = True) -> None:
        self.root, self.repo, self.mirror, self.python, self.project = root, repo, mirror, python, project
        self.code = code  # the sources too (the own suite's run leaves them to the hidden run's job)
        self.key = key
        self.store, self.tests, self.tree, self.top = store, tests, tree, top
        self.shared = [t for t in top if t != ".git"]

    def sources(self, tree: statcache.Tree) -> list[tuple[str, str]]:
        """The mirror's regular `.py` files with their stat keys (the key starts with the mode); the job checks again
        as it opens each. Worked out here, after the answer: at the stop it was a pass over the look beside a run."""
        from donegate.hidden import copy as throwaway

        want, _ = throwaway._wanted(tree, self.top)
        return [(n, key) for n, key in want.items()
                if n.endswith(".py") and stat.S_ISREG(int(key.partition(":")[0]))][:MAX_FILES]

    def _done(self, sources: list[tuple[str, str]]) -> str:
        """What the last finished job was given: the sources' stat keys and the interpreter. The same again means
        every source is compiled already, so no job starts (a bubblewrap and an interpreter: 0.2-0.3 CPU-s after
        every stop, most of them with nothing to compile). A stat key that stays while the source changes costs
        the run a compile from source, never a wrong module: each pyc is checked against its source's hash."""
        from donegate.core.fsafe import sha256 as _sha256

        h = _sha256(self.python.interp.exe.encode())
        for n, key in sorted(sources):
            h.update(f"\0{n}\0{key}".encode())
        return h.hexdigest()

    def __call__(self) -> None:
        from donegate.core import proc
        from donegate.core.util import atomic_write
        from donegate.hidden import confine as walls
        from donegate.tree import statcache

        # The run ended before the stop set its look: it is set by now (`runner.run`).
        tree = self.tree.get(0) if isinstance(self.tree, statcache.Pending) else self.tree
        if tree is None:  # the stop wanted no run after all (its verdict came from the cache): no job, as before
            return
        tests = self.tests.job() if self.tests is not None else {}
        sources = self.sources(tree) if self.code else []
        if not tests and sum(_size(key) for _, key in sources) < COMPILE_FROM:
            return  # a small project's runs compile its sources for less than the job costs (`COMPILE_FROM`)
        files = [n for n, _ in sources]
        if not files and not tests:
            return
        store = folder(self.root, self.repo, self.key)
        done, mark = self._done(sources), store / DONE
        try:
            if not tests and (not self.code or mark.read_text() == done):
                return
        except OSError:
            pass
        held = hold(store, self.mirror)
        if held is None:  # the repository's copies were forgotten (`unseal`, `uninstall`) since the run
            return
        try:
            hidden = walls.hidden_roots()
            env = walls.env("/tmp", hidden)
            # The acceptance store read-only at its own path, as the runs see it; the bytecode store the one
            # folder the job may write.
            argv = walls.bwrap_argv(proc.system_tool("bwrap") or "/usr/bin/bwrap", repo=self.repo, copy=self.mirror,
                                    store=self.store, hidden=hidden, env=env, shared=self.shared, python=self.python.binds,
                                    chdir=self.project, read_only=True, extra=["--bind", str(store), INSIDE])
            res = proc.run([*argv, *self.python.argv, "-c", COMPILE], timeout=120, env=env,
                           input=json.dumps({"prefix": INSIDE, "repo": str(self.repo), "files": files,
                                             "max_bytes": MAX_BYTES, **tests}))
            if res.returncode == 0 and self.code:
                atomic_write(mark, done, durable=False)
        except Exception:  # noqa: BLE001 - a job that failed costs the next stops a compile from source, nothing more
            pass
        finally:
            os.close(held)


def _size(key: str) -> int:
    """A source's size from its stat key (`statcache.stat_key`: mode, size, ...); unreadable: as large as allowed."""
    try:
        return int(key.split(":")[1])
    except (IndexError, ValueError):
        return MAX_BYTES


class Rewrite:
    """The job after an unconfined run (`confine: off`, no walls to bind a store into): the sealed tests' rewrite
    only (`Tests`, made from the store's files with the kit's pytest, by the project's interpreter, which runs none of
    the product's code), into the same folder the confined runs read; the next unconfined runs read it at its real path
    (`Tests.inside`), their pytest never writing there (`plugin._probe_asserts`). That rewrite cost every unconfined
    stop's pytest run ~20 ms of its ~220 (40 tests, 5.5 KB), on the path the stop waits for. The product's own
    sources are not kept: an unconfined run's copy of the tree is a new folder at every stop. Unconfined, the code
    under test can write this folder as it can write the kit and the state root (docs/security.md: the confinement is
    the wall)."""

    def __init__(self, tests: Tests, store: Path) -> None:
        self.tests, self.store = tests, store

    def __call__(self) -> None:
        from donegate.core import proc
        from donegate.hidden import confine as walls

        job = self.tests.job()
        if not job:
            return
        held = hold(self.tests.folder.parent.parent, self.store)  # unsealed since the run: nothing is written
        if held is None:
            return
        try:
            import tempfile

            env = walls.env(tempfile.gettempdir(), walls.hidden_roots())
            proc.run([*self.tests.python.argv, "-c", COMPILE], timeout=120, env=env, cwd=str(self.store),
                     input=json.dumps({"prefix": str(self.tests.folder), "repo": str(self.store), "files": [],
                                       "max_bytes": MAX_BYTES, **job}))
        except Exception:  # noqa: BLE001 - nothing kept: the next run rewrites the tests itself, as before
            pass
        finally:
            os.close(held)


def hold(store: Path, mirror: Path) -> int | None:
    """`store` made and locked for a job (an exclusive `flock` on the folder itself, which `hidden.forget` takes
    before it removes the folder), or None: the mirror the job compiles from is gone, or the folder was removed
    before the lock was had. `unseal` and `uninstall` remove the mirrors first, so a job that starts after them
    writes nothing (it made the folder again, with every source compiled, before this); a folder made here for
    nothing goes again."""
    import fcntl

    if not mirror.is_dir():
        return None
    try:
        store.mkdir(parents=True, exist_ok=True)
        fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    fcntl.flock(fd, fcntl.LOCK_EX)  # `forget` holds it only while it removes the folder
    if os.fstat(fd).st_nlink == 0 or not mirror.is_dir():
        os.close(fd)
        with contextlib.suppress(OSError):
            store.rmdir()  # made here for nothing (empty): a folder holding bytecode is `forget`'s to remove
        return None
    return fd
