"""The own-suite bench's stops for several kits side by side (issue 44 item 5): each kit (a checkout with its `.venv`)
seals its own copy of `own_bench`'s project (200 modules, 2,000 own tests, one hidden test), then its stops and a bare
`pytest` of the hidden test plus the reached files are interleaved, the order rotating each round. Wall and CPU per
stop, CPU counting every process a stop starts: this process is a subreaper (Linux), so the runs' processes and the
after-answer jobs, orphaned, are reaped here and counted. The hook's own CPU is read from its ledger lines.

A kit may carry a variant: `KIT:ownoff` (`own_tests: off` at the stop: what the own run costs), `KIT:fold` (the reached
own test file sealed as a hidden test, the own suite off: its tests in the first run's pytest, an upper bound of
folding the own run into it).

    python bench/own_side.py ROUNDS one,all OLD_KIT NEW_KIT [KIT:ownoff] [KIT:fold]
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hook_bench as hb
import own_bench as ob

MARKERS: list[bytes] = []


def _settle(timeout: float = 60.0) -> None:
    """Until no process of a kit's Stop hook is left (its after-answer child)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        alive = False
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    alive = any(m in fh.read() for m in MARKERS)
            except OSError:
                continue
            if alive:
                break
        if not alive:
            return
        time.sleep(0.002)


def _reap(wait: float = 5.0) -> None:
    """The orphans handed to this subreaper, waited for (their CPU then counts in RUSAGE_CHILDREN)."""
    end = time.perf_counter() + wait
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            if time.perf_counter() > end:
                return
            time.sleep(0.005)


def _run(argv: list[str], **kw) -> tuple[float, float]:
    _settle()
    _reap()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)
    took = time.perf_counter() - t0
    _settle()  # the after-answer work counts in CPU (it is the stop's), not in wall
    _reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in (0, 2):
        raise SystemExit(f"bench: {argv[:3]} failed ({res.returncode}): {res.stderr[-800:]}")
    return took, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _project(tmp: Path, kit: Path, variant: str) -> tuple[Path, Path, Path, dict]:
    repo, hidden, home, env = ob.made(tmp)
    extra: list[str] = []
    if variant == "fold":
        (hidden / "test_mod_007.py").write_text((repo / "tests" / "test_mod_007.py").read_text())
        extra = [str(hidden / "test_mod_007.py"), "--own-tests", "off"]
    subprocess.run([str(kit / ".venv/bin/python"), "-m", "donegate", "seal", str(repo), str(hidden / "test_hidden.py"),
                    *extra], check=True, timeout=900, env=env, cwd=kit, capture_output=True)
    if variant == "ownoff":
        with open(home / "donegate.yaml", "a") as fh:  # (beside own_bench's `confine: off` where it wrote one)
            fh.write("own_tests: off\n")
    return repo, hidden, home, env


def bench(rounds: int, rows: list[str], specs: list[str]) -> list[str]:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    kits = [(spec, Path(spec.split(":")[0]).resolve(), spec.partition(":")[2]) for spec in specs]
    MARKERS.extend(str(kit / "hooks" / "stop_gate.py").encode() for _, kit, _ in kits)
    tmp = Path(tempfile.mkdtemp(prefix="donegate-bench-"))
    out = []
    try:
        setups = []
        for n, (spec, kit, variant) in enumerate(kits):
            repo, hidden, home, env = _project(tmp / f"k{n}", kit, variant)
            hook = [str(kit / ".venv/bin/python"), "-I", str(kit / "hooks/stop_gate.py"), "--repo", str(repo),
                    "--git", shutil.which("git") or "/usr/bin/git"]
            setups.append((spec, repo, hidden, home, env, hook, hb._payloads(repo)))
        first_repo, first_hidden = setups[0][1], setups[0][2]
        bare_env = hb.bare_environ(PYTHONPATH=str(first_repo))
        counter = iter(range(1_000_000))
        for row in rows:
            names = ["mod_007.py"] if row == "one" else [f"mod_{i:03}.py" for i in range(ob.MODULES)]
            files = [str(first_hidden), str(first_repo / "tests" / ("test_mod_007.py" if row == "one" else ""))]
            bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
            times: dict[str, list[tuple[float, float]]] = {s[0]: [] for s in setups}
            times["bare"] = []
            for s in setups:  # warm
                ob._touch(s[1], names, next(counter))
                _run(s[5], input=next(s[6]), env=s[4])
            _run(bare, cwd=first_repo, env=bare_env)
            order: list[int | str] = [*range(len(setups)), "bare"]
            for i in range(rounds):
                for x in order[i % len(order):] + order[:i % len(order)]:
                    if x == "bare":
                        times["bare"].append(_run(bare, cwd=first_repo, env=bare_env))
                    else:
                        s = setups[int(x)]
                        ob._touch(s[1], names, next(counter))
                        times[s[0]].append(_run(s[5], input=next(s[6]), env=s[4]))
            bw = statistics.median(w for w, _ in times["bare"])
            bc = statistics.median(c for _, c in times["bare"])
            out.append(f"{row}: {rounds} rounds, load {os.getloadavg()[0]:.1f}; bare wall {bw:.3f} s, CPU {bc:.3f} s")
            for s in setups:
                xs, lines = times[s[0]], hb._stops(s[3])[-rounds:]
                verdicts = sorted({str(r["verdict"]) for r in lines})
                ran = sorted({json.dumps((r["gates"].get("own") or {}).get("ran_sealed"))[:40] for r in lines})
                out.append(f"  {s[0]}: wall {statistics.median(w for w, _ in xs):.3f} CPU "
                           f"{statistics.median(c for _, c in xs):.3f}; ratio wall "
                           f"{statistics.median(a[0] / b[0] for a, b in zip(xs, times['bare'], strict=True)):.3f} CPU "
                           f"{statistics.median(a[1] / b[1] for a, b in zip(xs, times['bare'], strict=True)):.3f}; hook CPU "
                           f"{statistics.median(r['cpu']['hook'] for r in lines):.3f}; {verdicts} {ran}")
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    print("\n".join(bench(int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3:])))
