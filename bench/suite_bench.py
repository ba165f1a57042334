"""Large hidden suites (issue 40): 40 CPU-bound tests, 500 test files of one test each, and 2,000 tests in one
file, all passing.

For each: the seal against one bare `python -m pytest -q` of the same tests (the seal runs them once: collection
and baseline in one pytest run), then full stops (new sessions, default config: confined where bubblewrap runs)
against bare pytest, interleaved, the figure the median of the per-pair ratios; and how far each stop's two
runs took (the pytest run and the second opinion, from its ledger line). Target: hook/bare <= 1.30.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hook_bench import KIT, MODULE, _pairs, _payloads, _run, _stops, bare_environ, hook_argv

TEST = "def test_{i}():\n    inv = Inventory()\n    inv.add('s', {i} + 1)\n    assert inv.count('s') == {i} + 1\n"
HEAD = "from inventory import Inventory\n"
# ~0.1 s of the CPU each (one core, idle): the stop's cost is the tests' own, run twice on two cores.
CPU_TEST = ("def test_cpu_{i}():\n    inv = Inventory()\n    s = 0\n    for k in range(2_500_000):\n        s += k % 7\n"
            "    inv.add('s', s)\n    assert inv.count('s') == s\n")
SUITES = {
    "40 CPU-bound tests (~0.1 s each)": lambda: {"test_cpu.py": HEAD + "".join(CPU_TEST.format(i=i) for i in range(40))},
    "500 files of one test each": lambda: {f"test_f{i}.py": HEAD + TEST.format(i=i) for i in range(500)},
    "2,000 tests in one file": lambda: {"test_many.py": HEAD + "".join(TEST.format(i=i) for i in range(2000))},
}


def _suite(tmp: Path, files: dict[str, str]) -> tuple[Path, Path, Path, dict, float]:
    """(repo, hidden, home, env, seconds the seal took) for the inventory module sealed with `files`."""
    repo, hidden, home = tmp / "repo", tmp / "hidden", tmp / "home"
    for p in (repo, hidden, home):
        p.mkdir()
    (repo / "inventory.py").write_text(MODULE)
    for name, text in files.items():
        (hidden / name).write_text(text)
    git = ["git", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    subprocess.run([*git, "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True, timeout=60)
    env = {**os.environ, "DONEGATE_HOME": str(home)}
    env.pop("DONEGATE_NESTED", None)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), *sorted(map(str, hidden.glob("test_*.py")))],
                   check=True, timeout=900, env=env, cwd=KIT, capture_output=True)
    return repo, hidden, home, env, time.perf_counter() - t0


def bench_suites(rounds: int = 3, only: str = "") -> list[str]:
    out: list[str] = []
    for label, build in SUITES.items():
        if only and only not in label:
            continue
        tmp = Path(tempfile.mkdtemp(prefix="donegate-bench-"))
        try:
            out += _bench_one(label, tmp, build(), rounds)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _bench_one(label: str, tmp: Path, files: dict[str, str], rounds: int) -> list[str]:
    repo, hidden, home, env, seal = _suite(tmp, files)
    payload = _payloads(repo)
    hook = hook_argv(repo)
    bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(hidden)]
    bare_env = bare_environ(PYTHONPATH=str(repo))
    once = _run(bare, cwd=repo, env=bare_env)
    _run(hook, input=next(payload), env=env)  # warm: the mirrors and the kept bytecode are made
    pairs = _pairs(rounds, lambda: _run(hook, input=next(payload), env=env), lambda: _run(bare, cwd=repo, env=bare_env))
    lines = _stops(home)[-rounds:]
    verdicts = sorted({r["verdict"] for r in lines})
    runs = [(r["gates"]["acceptance"]["duration"], (r["gates"]["acceptance"].get("second") or {}).get("duration", 0.0))
            for r in lines if "acceptance" in r["gates"]]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return [f"{label}: seal {seal:.1f} s against one bare pytest run {once:.1f} s (ratio {seal / once:.2f}); "
            f"{rounds} interleaved pairs, verdicts {verdicts}, load average at the end {load}:",
            "  pairs (hook/bare): " + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in pairs),
            f"  hook median {statistics.median(a for a, _ in pairs):.2f} s, bare pytest median "
            f"{statistics.median(b for _, b in pairs):.2f} s, median ratio hook/bare = "
            f"{statistics.median(a / b for a, b in pairs):.3f} (target <= 1.30)",
            f"  in the stop: pytest run median {statistics.median(a for a, _ in runs):.2f} s, second run median "
            f"{statistics.median(b for _, b in runs):.2f} s (at once, on the machine's cores)"]


if __name__ == "__main__":  # one row: `python bench/suite_bench.py "2,000" 3`
    print("\n".join(bench_suites(int(sys.argv[2]) if len(sys.argv) > 2 else 3, sys.argv[1] if len(sys.argv) > 1 else "")))
