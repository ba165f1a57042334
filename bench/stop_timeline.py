"""A stop's timeline, from the hook's entry to its answer: when each stage and each run (the hidden run, the second
opinion, the own suite's sealed run and the agent's changed tests) starts, is told to go, hears from its pytest and
ends, in perf_counter seconds from the hook's entry. Run in place of the launcher, with its arguments:

    python -I bench/stop_timeline.py OUT.json hooks/stop_gate.py --repo REPO --git GIT   (stdin: the hook's payload)

It wraps the kit's functions from outside (nothing in the kit knows of it) and writes the marks to OUT.json once
the answer is out. `own_bench.py --timeline` runs it beside the launcher.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time

T0 = time.perf_counter()
MARKS: list[tuple[float, str, str, float]] = []


def mark(what: str) -> None:
    """(seconds since the hook's entry, the thread, what, the hook process's CPU seconds so far: all its threads)."""
    MARKS.append((round(time.perf_counter() - T0, 4), threading.current_thread().name, what,
                  round(time.process_time(), 4)))


def _wrap(owner, name: str, label: str | None = None) -> None:
    real = getattr(owner, name)
    label = label or name

    @functools.wraps(real)
    def wrapped(*a, **kw):
        mark(f"{label} >")
        try:
            return real(*a, **kw)
        finally:
            mark(f"{label} <")
    setattr(owner, name, wrapped)


def _patch() -> None:
    import donegate.gate as gate
    from donegate.core import proc
    from donegate.gate import acceptance, feedback, leaks, own_suite, scan, scope
    from donegate.hidden import channel, runner
    from donegate.tree import verdict_cache

    real_run = proc.run

    def run(argv, *a, started=None, **kw):
        mark(f"proc.run > ({len(argv)} args)")

        def began(pid):
            mark("process started")
            if started is not None:
                started(pid)
        try:
            return real_run(argv, *a, started=began, **kw)
        finally:
            mark("proc.run <")
    proc.run = run
    real_go = runner.Walls.go

    def go(self, started, *a, **kw):
        both = real_go(self, started, *a, **kw)
        if both is None or both is started:
            return both

        def told(pid):
            both(pid)
            mark("told to go (copy in step)")
        return told
    runner.Walls.go = go
    real_feed = channel.Stream.feed

    def feed(self, line):
        if not getattr(self, "_marked", False):
            self._marked = True
            mark("first line from pytest")
        return real_feed(self, line)
    channel.Stream.feed = feed
    for owner, name in ((acceptance, "start"), (acceptance.Running, "begun"), (acceptance.Running, "finish"),
                        (gate, "_look"), (verdict_cache, "lookup"), (own_suite, "start"), (own_suite.OwnRuns, "chosen"),
                        (own_suite.OwnRuns, "finish"),
                        (leaks, "transcript_gate"), (scan, "scan_gate"), (scope, "scope_gate"),
                        (feedback, "passed"), (feedback, "blocked"), (gate, "evaluate")):
        _wrap(owner, name, f"{getattr(owner, '__name__', '')}.{name}".split("donegate.")[-1])
    gate.scope_gate = scope.scope_gate
    _wrap(runner, "_run", "runner._run")
    from donegate.hidden import copy as throwaway
    for owner, name in ((runner, "setting"), (throwaway, "working_copy")):
        _entered(owner, name)
    from donegate.hidden import pyc
    for owner, name in ((throwaway, "_take_mirror"), (throwaway.Mirror, "step"), (throwaway.Mirror, "sync"),
                        (pyc, "Tests"), (own_suite, "_selected")):
        _wrap(owner, name)


def _entered(owner, name: str) -> None:
    """A context manager's call, the end of its __enter__ and its exit, marked."""
    import contextlib

    real = getattr(owner, name)

    @contextlib.contextmanager
    def wrapped(*a, **kw):
        mark(f"{name} >")
        with real(*a, **kw) as got:
            mark(f"{name} entered")
            try:
                yield got
            finally:
                mark(f"{name} leaving")
    setattr(owner, name, wrapped)


def main() -> None:
    out, launcher, *args = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(launcher)))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(launcher))))
    import stop_gate

    _patch()
    mark("hook entry (patched)")
    rc = stop_gate.main(args)
    mark("answer")
    stop_gate.answered()
    with open(out, "w") as fh:
        json.dump(MARKS, fh)
    os._exit(rc)


if __name__ == "__main__":
    main()
