"""The hook's wall time against a bare `python -m pytest -q` of the same 40 hidden tests, with the
hidden run confined (`confine: on`, bubblewrap) and unconfined (`confine: off`) side by side, a cached
stop against a full one, what keying the tree costs, what the throwaway copy of the repository costs, and
what the second opinion (`donegate.hidden.second`) adds to a pass.

Each pair runs side by side in one process, interleaved, so machine noise hits both alike; the figure
is the median of the per-pair ratios. Targets: the confined hook within 1.15 of bare pytest, the
unconfined within 1.10, confinement costing under 10% over the unconfined hook. Every
full stop is a new session, so none is answered from the cache (and each pays for keying the tree).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
N_TESTS = 40

MODULE = '''\
"""A small inventory module for the benchmark."""


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, sku, qty):
        if qty <= 0:
            raise ValueError("qty must be positive")
        self.items[sku] = self.items.get(sku, 0) + qty

    def remove(self, sku, qty):
        have = self.items.get(sku, 0)
        if qty > have:
            raise KeyError(sku)
        self.items[sku] = have - qty

    def count(self, sku):
        return self.items.get(sku, 0)
'''


def _tests() -> str:
    out = ["import pytest\nfrom inventory import Inventory\n"]
    for i in range(N_TESTS):
        out.append(
            f"\ndef test_add_then_count_{i}():\n    inv = Inventory()\n    inv.add('sku{i}', {i + 1})\n"
            f"    inv.add('sku{i}', 1)\n    assert inv.count('sku{i}') == {i + 2}\n"
        )
    return "".join(out)


def _run(argv, **kw) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)
    took = time.perf_counter() - t0
    if res.returncode not in (0, 2):
        raise SystemExit(f"bench: {argv[:3]} failed ({res.returncode}): {res.stderr[-500:]}")
    return took


def bench_hook(rounds: int = 15) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        tmp = Path(tmp)
        repo, hidden, home = tmp / "repo", tmp / "hidden", tmp / "home"
        repo.mkdir(), hidden.mkdir(), home.mkdir()
        (repo / "inventory.py").write_text(MODULE)
        git = ["git", "-C", str(repo)]
        subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
        subprocess.run([*git, "add", "-A"], check=True, timeout=30)
        subprocess.run([*git, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True, timeout=30)
        (hidden / "test_inventory.py").write_text(_tests())
        env = {**os.environ, "DONEGATE_HOME": str(home)}
        env.pop("DONEGATE_NESTED", None)
        subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(hidden / "test_inventory.py")],
                       check=True, timeout=300, env=env, cwd=KIT, capture_output=True)
        payload = _payloads(repo)
        hook = [sys.executable, str(KIT / "hooks" / "stop_gate.py")]
        bare = [sys.executable, "-m", "pytest", "-q", str(hidden / "test_inventory.py")]
        bare_env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        # Warm both (bytecode caches, page cache) before timing.
        for _ in range(2):
            _run(hook, input=next(payload), env=env)
            _run(bare, cwd=repo, env=bare_env)
        out = _confine_on_off(tmp, home, env, rounds, lambda e: _run(hook, input=next(payload), env=e),
                              lambda: _run(bare, cwd=repo, env=bare_env))
        # A cached stop: the same session stopping again on the same tree (the first stop ran the tests).
        cached = json.dumps({"session_id": "bench-cached", "cwd": str(repo), "stop_hook_active": False,
                             "last_assistant_message": "done", "transcript_path": ""})
        _run(hook, input=cached, env=env)
        pairs = _pairs(rounds, lambda: _run(hook, input=cached, env=env), lambda: _run(hook, input=next(payload), env=env))
        lines = [json.loads(line) for line in (home / "ledger.jsonl").read_text().splitlines()]
        hits = sum(1 for r in lines if r["session"] == "bench-cached" and r.get("cached"))
        out += [f"cached stop vs full stop (the tree unchanged), {rounds} interleaved pairs ({hits} of {rounds + 1} "
                "cached stops answered from the cache):", *_medians(pairs, "cached", "full"),
                f"  median ratio cached/full = {statistics.median(c / f for c, f in pairs):.3f}",
                f"  keying the tree ({lines[-1]['gates']['cache']['files']} files) in the hook: median "
                f"{statistics.median(r['gates']['cache']['duration'] for r in lines) * 1000:.2f} ms a stop"]
        return out + _second_cost(tmp)


def _second_cost(tmp: Path) -> list[str]:
    """What the second opinion costs a pass: its run against the pytest run of the same stop (both timed by
    the hook itself, in the same stop, so the machine's noise hits both), per confinement."""
    out = ["the second opinion on a pass (the bare harness, a fork per test) against the pytest run, same stops:"]
    for home in sorted(tmp.glob("home-*")):
        lines = [json.loads(line) for line in (home / "ledger.jsonl").read_text().splitlines()]
        both = [(r["gates"]["acceptance"]["duration"], r["gates"]["acceptance"]["second"]["duration"])
                for r in lines if r["verdict"] == "pass" and (r["gates"]["acceptance"].get("second") or {}).get("duration")]
        if not both:
            continue
        first, second = statistics.median(a for a, _ in both), statistics.median(b for _, b in both)
        ratio = statistics.median((a + b) / a for a, b in both)
        out.append(f"  confine: {home.name[5:]:<3} pytest run median {first * 1000:.0f} ms, second run median {second * 1000:.0f} ms, "
                   f"median ratio (both)/(pytest alone) = {ratio:.3f}  ({len(both)} passing stops, "
                   f"{N_TESTS} tests double-checked each)")
    return out


def _confine_on_off(tmp: Path, home: Path, env: dict, rounds: int, hook, bare) -> list[str]:
    """The hook with `confine: on` and `confine: off` (each its own copy of the sealed state root)
    against bare pytest, the three interleaved; without bubblewrap only `off`."""
    modes = ["on", "off"] if shutil.which("bwrap") else ["off"]
    envs = {}
    for mode in modes:
        h = tmp / f"home-{mode}"
        shutil.copytree(home, h, symlinks=True)
        (h / "donegate.yaml").write_text(f"confine: {mode}\n")
        envs[mode] = {**env, "DONEGATE_HOME": str(h)}
        hook(envs[mode])  # warm
    took: dict[str, list[float]] = {mode: [] for mode in [*modes, "bare"]}
    for i in range(rounds):
        order = [*modes, "bare"]
        for what in (reversed(order) if i % 2 else order):
            took[what].append(bare() if what == "bare" else hook(envs[what]))
    out = [f"hook vs bare pytest, {N_TESTS} hidden tests, {rounds} interleaved rounds "
           f"(bare `python -m pytest -q` median {statistics.median(took['bare']) * 1000:.0f} ms):"]
    for mode in modes:
        label = "confine: on  (bwrap)" if mode == "on" else "confine: off (none) "
        ratio = statistics.median(h / b for h, b in zip(took[mode], took["bare"]))
        out.append(f"  {label} hook median {statistics.median(took[mode]) * 1000:.0f} ms, median ratio hook/bare = "
                   f"{ratio:.3f}  (target <= {'1.15' if mode == 'on' else '1.10'})")
    if len(modes) == 2:
        cost = statistics.median(a / b for a, b in zip(took["on"], took["off"]))
        out.append(f"  confinement costs: median ratio on/off = {cost:.3f}  (target < 1.10)")
    return out


def bench_copy(files: int = 2000, rounds: int = 5) -> list[str]:
    """What the throwaway copy of the repository costs a stop (bubblewrap 0.8.0 has no overlay)."""
    from donegate.hidden import copy as throwaway

    with tempfile.TemporaryDirectory(prefix="donegate-bench-copy-") as tmp:
        tree = Path(tmp) / "tree"
        for i in range(files):
            p = tree / f"pkg{i % 50}" / f"mod{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(MODULE)
        took = []
        for i in range(rounds):
            dest = Path(tmp) / f"copy{i}"
            t0 = time.perf_counter()
            throwaway.copy_repo(tree, dest)
            took.append(time.perf_counter() - t0)
            shutil.rmtree(dest)
    return [f"throwaway copy of a {files}-file working tree: median {statistics.median(took) * 1000:.0f} ms a stop "
            "(bubblewrap 0.8.0 has no --overlay to avoid it)"]


def _payloads(repo: Path):
    """Stop payloads of new sessions, one after another: none is answered from the cache."""
    n = 0
    while True:
        n += 1
        yield json.dumps({"session_id": f"bench-{n}", "cwd": str(repo), "stop_hook_active": False,
                          "last_assistant_message": "done", "transcript_path": ""})


def _pairs(rounds: int, a, b) -> list[tuple[float, float]]:
    """`rounds` (a, b) timings, interleaved: which one goes first alternates."""
    pairs = []
    for i in range(rounds):
        if i % 2:
            tb = b()
            ta = a()
        else:
            ta = a()
            tb = b()
        pairs.append((ta, tb))
    return pairs


def _medians(pairs: list[tuple[float, float]], a: str, b: str) -> list[str]:
    return [f"  {a} median {statistics.median(x for x, _ in pairs) * 1000:.0f} ms, "
            f"{b} median {statistics.median(y for _, y in pairs) * 1000:.0f} ms"]


def bench_tree_key(rounds: int = 15) -> list[str]:
    """What `cache.tree_digest` costs on the bundled example and on a repository of 2,000 files."""
    from donegate import cache

    out = ["keying the tree (sha256 of every file but .git), median of %d:" % rounds]
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        big = Path(tmp) / "big"
        for i in range(2000):  # about the size of a mid-sized Python project's files
            p = big / f"pkg{i // 50}" / f"mod{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(MODULE * (1 + i % 8))
        for name, repo in (("examples/shop", KIT / "examples" / "shop"), ("2,000 files", big)):
            times, files, size = [], 0, 0
            for _ in range(rounds):
                t0 = time.perf_counter()
                _, files, size = cache.tree_digest(repo)
                times.append(time.perf_counter() - t0)
            out.append(f"  {name}: {files} files, {size / 1024:.0f} KiB: {statistics.median(times) * 1000:.2f} ms")
    return out


if __name__ == "__main__":
    print("\n".join(bench_hook() + bench_tree_key() + bench_copy()))
