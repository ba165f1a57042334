"""Costly runs shared by every pytest-xdist worker: each key is run once in the whole test run.

A module that pools its Claude Code sessions (the escapes of tests/e2e/test_gate_e2e.py, the attacks of
tests/e2e/test_env_attacks_e2e.py) cannot tell which of its tests this worker will get: under xdist every
worker collects every test and is handed its share one batch at a time. Pooling "every key of the
session" ran the whole pool on each worker. `SharedRuns` draws the keys from one list instead, in a
folder every worker of the run sees:

- `key.lock`: whoever runs a key holds an exclusive flock on it from the claim until `key.pickle` is
  written, so a test that needs the key waits on that lock, then reads the result; when the lock is free
  and no result is there (nobody claimed it yet, or its runner died, which releases the lock), the test
  runs the key itself;
- threads in the background (`threads` in all, shared out between the workers; started when a test
  first asks) claim the keys nobody holds, without waiting, so the workers run the pool side by side
  while their tests go on. With `threads=0` a key is run by the first test that asks for it (one costly
  set-up both workers read: the venv template, the report of 100,000 stops).
- `group(key)`, when given, names what a run can reuse from the last run of its thread (a sealed repository
  kept per thread: `thread_slot`). Each runner starts on a group of its own (round robin over the groups,
  counted across the workers) and takes the keys of the group it last ran first: a thread builds what a group
  needs about once, not once for each group it happens to meet in the list's order.

A result crosses processes pickled: the run function returns plain data (paths, records, a finished
FakeAPI), never what it was given as callables. A run that raised is re-raised in each test that asks
for its key, with the runner's traceback as text.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import re
import tempfile
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable


class RunFailed(Exception):
    """The pooled run of a key raised; the message holds its traceback (perhaps from another worker)."""


def shared_root(tmp_path_factory, name: str) -> Path:
    """A folder of this test run that every xdist worker sees: the parent of the worker's basetemp
    (`.../pytest-N/popen-gwK`) under xdist, the basetemp itself without it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / name
    root.mkdir(parents=True, exist_ok=True)
    return root


def _slug(key: Hashable) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(map(str, parts)))[:120]


class SharedRuns:
    """`runs[key]`: the result of `run(key, base)` (base: a fresh folder of its own), run once across
    the workers; see the module docstring."""

    def __init__(self, root: Path, keys: Iterable[Hashable], run: Callable[[Any, Path], Any], threads: int,
                 group: Callable[[Any], Hashable] | None = None):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.keys = list(keys)
        self._slugs = {key: _slug(key) for key in self.keys}
        assert len(set(self._slugs.values())) == len(self.keys), "two keys share a folder name"
        self._run = run
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
        self._threads = max(1, threads // workers) if threads else 0  # 0: no runners in the background
        self._group = group or (lambda key: None)
        self._pool: ThreadPoolExecutor | None = None
        self._start_lock = threading.Lock()
        self._closing = False

    def _paths(self, key) -> tuple[Path, Path]:
        slug = self._slugs[key]
        return self.root / f"{slug}.lock", self.root / f"{slug}.pickle"

    def _attempt(self, key, wait: bool) -> bool:
        """Run `key` unless its result is there; `wait`: wait for whoever holds it, else skip a held key. True when
        this call ran it."""
        lock, result = self._paths(key)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # another thread or worker is running it
            if result.exists():
                return False
            # A folder per attempt: a runner that died may have left a half-built one.
            base = Path(tempfile.mkdtemp(prefix=self._slugs[key] + "-", dir=self.root))
            try:
                value: tuple = ("ok", self._run(key, base))
                data = pickle.dumps(value)
            except BaseException:  # re-raised by each test that asks for the key
                data = pickle.dumps(("error", f"the pooled run of {key} raised:\n{traceback.format_exc()}"))
            tmp = result.with_name(f"{result.name}.{os.getpid()}.{threading.get_ident()}")
            tmp.write_bytes(data)
            os.replace(tmp, result)  # whole or absent: a reader never sees half a result
            return True
        finally:
            os.close(fd)  # releases the lock

    def _runner(self, index: int) -> None:
        """One background runner: try every key once (a held one is skipped: its holder runs it), those of the
        group it last ran first, starting on group `index` (round robin)."""
        groups = list(dict.fromkeys(self._group(key) for key in self.keys))
        last = groups[index % len(groups)] if groups else None
        left = list(self.keys)
        while left and not self._closing:
            key = next((k for k in left if self._group(k) == last), left[0])
            left.remove(key)
            if self._attempt(key, wait=False):
                last = self._group(key)

    def start(self) -> None:
        """Start this worker's background runners (once)."""
        with self._start_lock:
            if self._pool is not None or not self._threads:
                return
            self._closing = False
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=f"pool-{self.root.name}")
            worker = int(re.sub(r"\D", "", os.environ.get("PYTEST_XDIST_WORKER", "")) or 0)
            for i in range(self._threads):
                self._pool.submit(self._runner, worker * self._threads + i)

    def close(self, cancel: bool = False) -> None:
        """Wait for the runs this worker started (`cancel`: drop those not started yet)."""
        if self._pool is not None:
            self._closing = cancel  # a runner ends after its current key
            self._pool.shutdown(wait=True, cancel_futures=cancel)

    def __getitem__(self, key):
        if key not in self._slugs:
            raise KeyError(key)
        self.start()
        self._attempt(key, wait=True)
        status, value = pickle.loads(self._paths(key)[1].read_bytes())
        if status == "error":
            raise RunFailed(value)
        return value


def thread_slot() -> str:
    """A name of this thread's own among the runners of a pool (`pool-<root>_<n>`; `MainThread` for a test that ran
    a key itself): a run that keeps a sealed repository per thread (`GatedRepo.pooled`, whose copies go to one path
    at a time) names it by this."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", threading.current_thread().name)
