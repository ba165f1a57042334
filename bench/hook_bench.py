"""The hook's wall time against a bare `python -m pytest -q` of the same 40 hidden tests.

Both run side by side in one process, interleaved, so machine noise hits them alike; the figure is
the median of the per-pair ratios. Target: at most 1.10.
"""

from __future__ import annotations

import json
import os
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
        payload = json.dumps({"session_id": "bench", "cwd": str(repo), "stop_hook_active": False,
                              "last_assistant_message": "done", "transcript_path": ""})
        hook = [sys.executable, str(KIT / "hooks" / "stop_gate.py")]
        bare = [sys.executable, "-m", "pytest", "-q", str(hidden / "test_inventory.py")]
        bare_env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        # Warm both (bytecode caches, page cache) before timing.
        for _ in range(2):
            _run(hook, input=payload, env=env)
            _run(bare, cwd=repo, env=bare_env)
        pairs = []
        for i in range(rounds):
            if i % 2:
                b = _run(bare, cwd=repo, env=bare_env)
                h = _run(hook, input=payload, env=env)
            else:
                h = _run(hook, input=payload, env=env)
                b = _run(bare, cwd=repo, env=bare_env)
            pairs.append((h, b))
        ratio = statistics.median(h / b for h, b in pairs)
        hook_med = statistics.median(h for h, _ in pairs)
        bare_med = statistics.median(b for _, b in pairs)
        return [
            f"hook vs bare pytest, {N_TESTS} hidden tests, {rounds} interleaved pairs:",
            f"  hook median {hook_med * 1000:.0f} ms, bare `python -m pytest -q` median {bare_med * 1000:.0f} ms",
            f"  median ratio hook/bare = {ratio:.3f}  (target <= 1.10)",
        ]


if __name__ == "__main__":
    print("\n".join(bench_hook()))
