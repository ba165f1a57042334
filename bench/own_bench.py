"""The project's own suite at every stop (issue 44): a project of 200 modules with 2,000 tests of its own (ten per
module, one test file each) and one hidden test file, sealed; then stops (new sessions, default config: confined where
bubblewrap runs) against bare pytest, interleaved, the figure the median of the per-pair ratios:

- a change to one module: the hook against a bare `pytest` of the hidden tests plus the test files that reach that
  module (the one file that imports it), target <= 1.30;
- a change everywhere: the hook against a bare `pytest` of the hidden tests and all 2,000, target <= 1.30.
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

from hook_bench import KIT, _pairs, _payloads, _run, _stops, bare_environ, hook_argv

MODULES = 200
PER = 10
MOD = "def value_{i}(x):\n    return x * {k} + {i}\n"
TEST = "def test_v_{j}():\n    assert value_{i}({j}) == {j} * {k} + {i}\n"
HIDDEN = "import mod_000\n\n\ndef test_hidden():\n    assert mod_000.value_0(1) == 3\n"


def _project(tmp: Path) -> tuple[Path, Path, Path, dict, float]:
    repo, hidden, home, env = made(tmp)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(hidden / "test_hidden.py")],
                   check=True, timeout=900, env=env, cwd=KIT, capture_output=True)
    return repo, hidden, home, env, time.perf_counter() - t0


def made(tmp: Path) -> tuple[Path, Path, Path, dict]:
    """The project (a git repository), its hidden test and a state root, not sealed: (repo, hidden, home, env)."""
    repo, hidden, home = tmp / "repo", tmp / "hidden", tmp / "home"
    for p in (repo / "tests", hidden, home):
        p.mkdir(parents=True)
    for i in range(MODULES):
        (repo / f"mod_{i:03}.py").write_text(MOD.format(i=i, k=3))
        (repo / "tests" / f"test_mod_{i:03}.py").write_text(
            f"from mod_{i:03} import value_{i}\n\n\n" + "".join(TEST.format(i=i, j=j, k=3) for j in range(PER)))
    (hidden / "test_hidden.py").write_text(HIDDEN)
    git = ["git", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    subprocess.run([*git, "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True, timeout=60)
    if not shutil.which("bwrap"):  # no walls here: the figures are the unconfined ones (said in the first line)
        (home / "donegate.yaml").write_text("confine: off\n")
    env = {**os.environ, "DONEGATE_HOME": str(home)}
    env.pop("DONEGATE_NESTED", None)
    return repo, hidden, home, env


def _touch(repo: Path, names: list[str], n: int) -> None:
    """A behaviour-keeping edit of each module named (a new comment each time: the tree, and so the key, moves)."""
    for name in names:
        p = repo / name
        p.write_text(p.read_text().split("# edit")[0] + f"# edit {n}\n")


def bench_own(rounds: int = 3) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="donegate-bench-"))
    try:
        repo, hidden, home, env, seal = _project(tmp)
        payload = _payloads(repo)
        hook = hook_argv(repo)
        bare_env = bare_environ(PYTHONPATH=str(repo))
        walls = "confined (bubblewrap)" if shutil.which("bwrap") else "unconfined (no bubblewrap here)"
        out = [f"the project's own suite ({MODULES} modules, {MODULES * PER} tests) and one hidden test, {walls}: "
               f"seal {seal:.1f} s"]
        counter = iter(range(10_000))
        for label, names, bare_files in (
                ("a change to one module", ["mod_007.py"], [str(hidden), str(repo / "tests" / "test_mod_007.py")]),
                ("a change everywhere", [f"mod_{i:03}.py" for i in range(MODULES)], [str(hidden), str(repo / "tests")])):
            bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *bare_files]

            def stop(names: list[str] = names) -> float:
                _touch(repo, names, next(counter))
                return _run(hook, input=next(payload), env=env)

            def plain(bare: list[str] = bare) -> float:
                return _run(bare, cwd=repo, env=bare_env)

            stop()  # warm
            pairs = _pairs(rounds, stop, plain)
            lines = _stops(home)[-rounds:]
            verdicts = sorted({r["verdict"] for r in lines})
            ran = [len((r["gates"].get("own") or {}).get("ran_sealed") or []) for r in lines]
            out += [f"{label}: {rounds} interleaved pairs, verdicts {verdicts}, sealed test files run per stop {ran}:",
                    "  pairs (hook/bare): " + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in pairs),
                    f"  hook median {statistics.median(a for a, _ in pairs):.2f} s, bare pytest median "
                    f"{statistics.median(b for _, b in pairs):.2f} s, median ratio hook/bare = "
                    f"{statistics.median(a / b for a, b in pairs):.3f} (target <= 1.30)"]
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # `python bench/own_bench.py 3`
    print("\n".join(bench_own(int(sys.argv[1]) if len(sys.argv) > 1 else 3)))
