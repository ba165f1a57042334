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

    def __init__(self, root: Path, keys: Iterable[Hashable], run: Callable[[Any, Path], Any], threads: int):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.keys = list(keys)
        self._slugs = {key: _slug(key) for key in self.keys}
        assert len(set(self._slugs.values())) == len(self.keys), "two keys share a folder name"
        self._run = run
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
        self._threads = max(1, threads // workers) if threads else 0  # 0: no runners in the background
        self._pool: ThreadPoolExecutor | None = None
        self._start_lock = threading.Lock()

    def _paths(self, key) -> tuple[Path, Path]:
        slug = self._slugs[key]
        return self.root / f"{slug}.lock", self.root / f"{slug}.pickle"

    def _attempt(self, key, wait: bool) -> None:
        """Run `key` unless its result is there; `wait`: wait for whoever holds it, else skip a held key."""
        lock, result = self._paths(key)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # another thread or worker is running it
            if result.exists():
                return
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
        finally:
            os.close(fd)  # releases the lock

    def start(self) -> None:
        """Start this worker's background runners (once)."""
        with self._start_lock:
            if self._pool is not None or not self._threads:
                return
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=f"pool-{self.root.name}")
            for key in self.keys:
                self._pool.submit(self._attempt, key, False)

    def close(self, cancel: bool = False) -> None:
        """Wait for the runs this worker started (`cancel`: drop those not started yet)."""
        if self._pool is not None:
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
