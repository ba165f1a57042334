"""The test suite's CPU, test by test: a pytest plugin that runs each test in a cpuacct cgroup of its own (cgroup v1,
as root), and a summary of what it wrote, with a replay of xdist's load scheduling on two cores.

    python -m pytest -q -n 2 -p bench.suite_profile [FILES]     # one JSON line a test: $DGTEST_PROFILE.<worker>
    python bench/suite_profile.py summary PREFIX [N]            # CPU-s by file, the N costliest tests
    python bench/suite_profile.py replay PREFIX [WORKERS]       # `make test`'s -n WORKERS on 2 cores, chunk sizes

A test's figure is every process it started while it ran (the hook, the hidden runs, Claude Code, git), its wait
aside; a pool's build (a seal shared by later tests, a session-scoped fixture) counts for the test that asked first,
a pool's background runner for whichever test its worker ran meanwhile. Load it with `-p`, never through
PYTHONPATH: a session's environment carrying PYTHONPATH is a weakening the gate reports (tests that read it fail).
The replay takes each test's off-CPU time as `wall - ALPHA * cpu` (the profile's wall is stretched by its own
load): compare chunk sizes and worker counts with each other, not with a clock.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import sys
import time

ROOT = "/sys/fs/cgroup/cpuacct/dgtest-profile"
OUT = "DGTEST_PROFILE"  # the prefix of the files written (default /tmp/dgtest-profile)
_count = [0]


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _enter(path: str) -> None:
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


try:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _count[0] += 1
        group = os.path.join(ROOT, f"{_worker()}-{os.getpid()}-{_count[0]}")
        os.makedirs(group, exist_ok=True)
        _enter(group)
        start = time.monotonic()
        yield
        wall = time.monotonic() - start
        _enter(ROOT)
        with open(os.path.join(group, "cpuacct.usage")) as f:
            cpu = int(f.read()) / 1e9
        with open(f"{os.environ.get(OUT, '/tmp/dgtest-profile')}.{_worker()}", "a") as f:
            f.write(json.dumps({"id": item.nodeid, "cpu": round(cpu, 3), "wall": round(wall, 3)}) + "\n")
        try:
            os.rmdir(group)
        except OSError:
            pass  # a process it left still runs there
except ImportError:  # the summary needs no pytest
    pass


def rows(prefix: str) -> list[dict]:
    paths = sorted(glob.glob(prefix + ".gw*")) + glob.glob(prefix + ".main")
    return [json.loads(line) for path in paths for line in open(path)]


def summary(prefix: str, top: int = 30) -> None:
    got = rows(prefix)
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in got:
        f = files[r["id"].split("::")[0]]
        f[0] += 1
        f[1] += r["cpu"]
        f[2] += r["wall"]
    total = sum(r["cpu"] for r in got)
    e2e = sum(r["cpu"] for r in got if r["id"].startswith("tests/e2e/"))
    big = [r for r in got if r["cpu"] >= 2]
    print(f"{len(got)} tests, {total:.1f} CPU-s (end-to-end {e2e:.1f}); {len(big)} tests of >= 2 CPU-s: "
          f"{sum(r['cpu'] for r in big):.1f}")
    print("   CPU-s   wall-s  tests  file")
    for name, (n, cpu, wall) in sorted(files.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{cpu:8.1f} {wall:8.1f} {n:6d}  {name}")
    print("   CPU-s   wall-s  test")
    for r in sorted(got, key=lambda r: -r["cpu"])[:top]:
        print(f"{r['cpu']:8.2f} {r['wall']:8.1f}  {r['id']}")


def replay(tests: list[tuple[float, float]], workers: int, chunk: int | None, alpha: float, cores: float = 2.0) -> float:
    """Seconds until the last test ends: xdist's LoadScheduling (its first chunks and its refills, `chunk` its
    --maxschedchunk) over `tests` [(cpu, wall)] in collection order, the running tests sharing `cores` (each at most
    one core, at most its own share of CPU over its length)."""
    jobs = [(max(c, 1e-3), max(0.1 * c, w - alpha * c, 0.05)) for c, w in tests]
    pending = list(range(len(jobs)))
    queue: dict[int, list[int]] = {w: [] for w in range(workers)}
    most = chunk or len(jobs)
    first = max(min(len(jobs) // workers // 4, most), 2)
    for w in range(workers):
        queue[w] += pending[:first]
        del pending[:first]
    now, running = 0.0, {}  # worker -> [job, progress 0..1, started]

    def start(w: int) -> None:
        if queue[w] and w not in running:
            running[w] = [queue[w][0], 0.0, now]

    for w in range(workers):
        start(w)
    while running:
        demand = sum(jobs[j][0] / sum(jobs[j]) for j, _, _ in running.values())
        speed = min(1.0, cores / demand)
        step = min((1 - p) * sum(jobs[j]) / speed for j, p, _ in running.values())
        now += step
        ended = []
        for w, r in running.items():
            r[1] += step * speed / sum(jobs[r[0]])
            if r[1] >= 1 - 1e-9:
                ended.append(w)
        for w in ended:
            _, _, began = running.pop(w)
            queue[w].pop(0)
            if pending:  # xdist's check_schedule
                low, high = max(2, len(pending) // workers // 4), max(2, len(pending) // workers // 2)
                mine = queue[w]
                if len(mine) < low and not (now - began >= 0.1 and len(mine) >= 2):
                    n = min(high - len(mine), max(2 - len(mine), most))
                    mine += pending[:n]
                    del pending[:n]
            start(w)
    return now


def replays(prefix: str, workers: int = 6) -> None:
    """The replay for chunk sizes, in the order the suite collects now (pytest --collect-only, conftest's sort)."""
    import subprocess

    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist"],
                            capture_output=True, text=True).stdout.splitlines()
    cost = {r["id"]: (r["cpu"], r["wall"]) for r in rows(prefix)}
    tests = [cost[i] for i in listed if i in cost]
    total = sum(c for c, _ in tests)
    print(f"{len(tests)} of {len(listed) - 2} collected tests profiled, {total:.0f} CPU-s: floor {total / 2:.0f} s on 2 cores")
    for alpha in (1.5, 2.0, 3.0, 4.0):
        row = [f"{chunk or 'default'}: {replay(tests, workers, chunk, alpha):.0f} s" for chunk in (None, 64, 32, 16, 8, 4)]
        print(f"-n {workers}, off-CPU = wall - {alpha} x CPU:  " + ",  ".join(row))


if __name__ == "__main__":
    what, prefix = sys.argv[1], sys.argv[2]
    if what == "summary":
        summary(prefix, int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    else:
        replays(prefix, int(sys.argv[3]) if len(sys.argv) > 3 else 6)
