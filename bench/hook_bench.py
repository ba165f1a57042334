"""The hook's wall time against a bare `python -m pytest -q` of the same 40 hidden tests, with the
hidden run confined (`confine: on`, bubblewrap), confined with `allowed` set, and unconfined
(`confine: off`) side by side, on a small repository and on a ~15,000-file one with ~300 MB of
git-ignored data (an in-repo venv, node_modules, build output); the per-stage split of the hook
(from its ledger lines); a cached stop against a full one, what keying the tree costs, what the
throwaway copy of the repository costs, and what the second opinion (`donegate.hidden.second`) adds
to a pass.

Each pair runs side by side in one process, interleaved, so machine noise hits both alike; the figure
is the median of the per-pair ratios. Each timed run starts once the last stop's after-answer work (its
hook's child: the mirrors put back, the bytecode job) is done, as a session's next stop does after a model
turn; how long that work went on after the answer is printed beside the ratios (`_settle`). Targets (issue 27): confined with `allowed` set, hook/bare
<= 1.25 on the small repository and <= 1.35 on the large one. Every full stop is a new session, so
none is answered from the verdict cache (each pays for its look at the tree and its run); the stat
cache and the mirror of the tree are per working tree, so they carry over, as in real use.
"""

from __future__ import annotations

import itertools
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


CPU: list[float] = []  # user + system seconds of each `_run`, its children's children included
AFTER: list[float] = []  # seconds the last stop's after-answer work went on once its hook had answered


def _settle(timeout: float = 60.0) -> float:
    """Wait until no process of this kit's Stop hook is left: once a stop has answered, a child of its hook
    puts the mirrors back and runs the bytecode job (`copy.after_answer`). Between a session's stops lies a
    model turn, so the next stop does not meet that work; back to back, the next timed run (a stop or bare
    pytest) would share the two cores with it. Returns how long it went on (0 where there is no /proc)."""
    marker = str(KIT / "hooks" / "stop_gate.py").encode()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        try:
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return 0.0
        alive = False
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    alive = marker in fh.read()
            except OSError:
                continue
            if alive:
                break
        if not alive:
            return time.perf_counter() - t0
        time.sleep(0.002)
    return time.perf_counter() - t0


def hook_argv(repo: Path) -> list[str]:
    """The hook as install writes it for this checkout (`donegate.claude.settings.kit_entries`, `launch_words`): -I -S
    (a checkout's launcher runs `site.main()` itself once the first run is started), the repository and git in its
    arguments. Run without -I in an environment with PYTHONDONTWRITEBYTECODE (this machine's), the launcher
    before issue 48 compiled the kit's modules at every stop: 0.13 CPU-s of the hook's 0.23. Without -S (as this bench
    ran it until issue 48 item 2), `site` and the venv's `.pth` lines ran before the first run's process was started."""
    return [sys.executable, "-I", "-S", str(KIT / "hooks" / "stop_gate.py"), "--repo", str(repo), "--git",
            shutil.which("git") or "/usr/bin/git"]


def bare_environ(**extra: str) -> dict[str, str]:
    """A developer's `python -m pytest`: no PYTEST_ADDOPTS, and its bytecode kept (`PYTHONDONTWRITEBYTECODE` set here
    would have pytest rewrite the tests' asserts at every run, which no developer's repeated run does)."""
    drop = ("PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def _run(argv, **kw) -> float:
    import resource

    _settle()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if res.returncode not in (0, 2):
        raise SystemExit(f"bench: {argv[:3]} failed ({res.returncode}): {res.stderr[-500:]}")
    if any(str(a).endswith("stop_gate.py") for a in argv):
        AFTER.append(_settle())
    return took


def _sealed(tmp: Path, build=None) -> tuple[Path, Path, Path, dict]:
    """A repository (the inventory module, plus what `build` adds) sealed with the 40 tests: (repo, hidden, home, env)."""
    repo, hidden, home = tmp / "repo", tmp / "hidden", tmp / "home"
    repo.mkdir(), hidden.mkdir(), home.mkdir()
    (repo / "inventory.py").write_text(MODULE)
    if build is not None:
        build(repo)
    git = ["git", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    subprocess.run([*git, "add", "-A"], check=True, timeout=120)
    subprocess.run([*git, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True, timeout=120)
    (hidden / "test_inventory.py").write_text(_tests())
    env = {**os.environ, "DONEGATE_HOME": str(home)}
    env.pop("DONEGATE_NESTED", None)
    subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(hidden / "test_inventory.py")],
                   check=True, timeout=600, env=env, cwd=KIT, capture_output=True)
    return repo, hidden, home, env


def large_repo(repo: Path, data_mb: int = 300) -> None:
    """~15,000 files: an in-repo venv (6,000), node_modules (3,000), the code (1,500), build output
    (4,000), and `data_mb` MB of data (1 MB files); the venv, node_modules, build and data git-ignored."""
    (repo / ".venv").mkdir()
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    body = "def f(x):\n    return x + 1\n" * 20
    for top, n, ext in ((".venv/lib/site-packages", 6000, ".py"), ("node_modules", 3000, ".js"), ("src", 1500, ".py"),
                        ("build", 4000, ".o")):
        for i in range(n):
            p = repo / top / f"d{i // 50}" / f"f{i}{ext}"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
    (repo / "data").mkdir()
    chunk = os.urandom(1 << 20)
    for i in range(data_mb):
        (repo / "data" / f"blob{i}.bin").write_bytes(chunk)
    (repo / ".gitignore").write_text(".venv/\nnode_modules/\nbuild/\ndata/\n")


def bench_hook(rounds: int = 21) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        tmp = Path(tmp)
        repo, hidden, home, env = _sealed(tmp)
        payload = _payloads(repo)
        hook = hook_argv(repo)
        bare = [sys.executable, "-m", "pytest", "-q", str(hidden / "test_inventory.py")]
        bare_env = bare_environ()
        # Warm both (bytecode caches, page cache) before timing.
        for _ in range(2):
            _run(hook, input=next(payload), env=env)
            _run(bare, cwd=repo, env=bare_env)
        out = _confine_on_off(tmp, home, env, rounds, lambda e: _run(hook, input=next(payload), env=e),
                              lambda: _run(bare, cwd=repo, env=bare_env), targets={"allowed": "1.25"},
                              label="a small repository")
        # A cached stop: the same session stopping again on the same tree (the first stop ran the tests).
        cached = json.dumps({"session_id": "bench-cached", "cwd": str(repo), "stop_hook_active": False,
                             "last_assistant_message": "done", "transcript_path": ""})
        _run(hook, input=cached, env=env)
        pairs = _pairs(rounds, lambda: _run(hook, input=cached, env=env), lambda: _run(hook, input=next(payload), env=env))
        lines = _stops(home)
        hits = sum(1 for r in lines if r["session"] == "bench-cached" and r.get("cached"))
        out += [f"cached stop vs full stop (the tree unchanged), {rounds} interleaved pairs ({hits} of {rounds + 1} "
                "cached stops answered from the cache):", *_medians(pairs, "cached", "full"),
                f"  median ratio cached/full = {statistics.median(c / f for c, f in pairs):.3f}",
                f"  keying the tree ({lines[-1]['gates']['cache']['files']} files) in the hook: median "
                f"{statistics.median(r['gates']['cache']['duration'] for r in lines) * 1000:.2f} ms a stop"]
        return out + _second_cost(tmp)


def _second_cost(tmp: Path) -> list[str]:
    """What the second opinion costs a pass: its run against the pytest run of the same stop (both timed by
    the hook itself, in the same stop, so the machine's noise hits both), per confinement. The two run at
    once, so a pass waits for the slower: max(both)/(pytest alone) is what the second opinion adds."""
    out = ["the second opinion on a pass (the bare harness, a fork per test, beside the pytest run), same stops:"]
    for home in sorted(tmp.glob("home-*")):
        lines = _stops(home)
        both = [(r["gates"]["acceptance"]["duration"], r["gates"]["acceptance"]["second"]["duration"])
                for r in lines if r["verdict"] == "pass" and (r["gates"]["acceptance"].get("second") or {}).get("duration")]
        if not both:
            continue
        first, second = statistics.median(a for a, _ in both), statistics.median(b for _, b in both)
        ratio = statistics.median(max(a, b) / a for a, b in both)
        out.append(f"  {home.name[5:]:<10} pytest run median {first * 1000:.0f} ms, second run median {second * 1000:.0f} ms, "
                   f"median ratio max(both)/(pytest alone) = {ratio:.3f}  ({len(both)} passing stops, "
                   f"{N_TESTS} tests double-checked each)")
    return out


def package_repo(repo: Path, modules: int = 40, per_module: int = 60) -> None:
    """The inventory module importing a package of `modules` modules (~26,000 lines at the defaults):
    a project whose tests import real code, as most do. Every fork of the second run imports it afresh."""
    pkg = repo / "pkg"
    pkg.mkdir()
    body = "".join(f"\ndef func_{j}(x, y=1):\n    total = 0\n    for i in range(x):\n        total += i * y + {j}\n"
                   f"    return total\n\n\nclass C{j}:\n    def m(self, a):\n        return [a] * {j}\n" for j in range(per_module))
    for i in range(modules):
        (pkg / f"mod{i}.py").write_text(body)
    (pkg / "__init__.py").write_text("".join(f"from . import mod{i}\n" for i in range(modules)))
    (repo / "inventory.py").write_text("import pkg  # noqa: F401\n" + MODULE)


def bench_package(rounds: int = 5) -> list[str]:
    """The hook (confined where bubblewrap is) against bare pytest when the tests import a 40-module package:
    what the second run costs when the product is real code."""
    mode = "on" if shutil.which("bwrap") else "off"
    return _built("pkg", package_repo, rounds, (mode,), {}, "tests importing a 40-module package (26,000 lines)",
                  second=True)


def bench_large(rounds: int = 11) -> list[str]:
    """The hook confined, and confined with `allowed` set, on the ~15,000-file repository (`large_repo`)."""
    if not shutil.which("bwrap"):
        return ["the large repository is measured confined only: bubblewrap is not installed"]
    return _built("large", large_repo, rounds, ("on", "allowed"), {"allowed": "1.35"},
                  "~15,000 files and 300 MB of ignored data")


def bench_large_edited(rounds: int = 11) -> list[str]:
    """The same tree as a session sees it: one file of the code edited before every stop (and before every bare
    run: pytest compiles it again too), so each look reads it, the mirrors copy it, the changes since the seal
    are brought in step by it and the stop's look is kept again. The figures above are of an unchanged tree."""
    if not shutil.which("bwrap"):
        return []
    return _built("large-edited", large_repo, rounds, ("allowed",), {}, "the same tree, a file of the code edited before "
                  "each run", edit="inventory.py")


def _built(name: str, build, rounds: int, modes: tuple[str, ...], targets: dict, label: str,
           second: bool = False, edit: str = "") -> list[str]:
    """The hook against bare pytest on a repository `build` makes, in each of `modes`; `edit`: a file of it
    that gets one more line before each run (a comment: the tests' outcome stays)."""
    with tempfile.TemporaryDirectory(prefix=f"donegate-bench-{name}-") as tmp:
        tmp = Path(tmp)
        repo, hidden, home, env = _sealed(tmp, build)
        payload = _payloads(repo)
        hook = hook_argv(repo)
        bare = [sys.executable, "-m", "pytest", "-q", str(hidden / "test_inventory.py")]
        bare_env = bare_environ()
        _run(bare, cwd=repo, env=bare_env)
        edits = itertools.count()

        def edited() -> None:
            if edit:
                with open(repo / edit, "a", encoding="utf-8") as fh:
                    fh.write(f"# edit {next(edits)}\n")

        out = _confine_on_off(tmp, home, env, rounds, lambda e: (edited(), _run(hook, input=next(payload), env=e))[1],
                              lambda: (edited(), _run(bare, cwd=repo, env=bare_env))[1], modes=modes, targets=targets,
                              label=label)
        return out + (_second_cost(tmp) if second else [])


CONFIGS = {
    "on": ("confine: on  (bwrap)           ", "confine: on\n", None),
    "allowed": ("confine: on, `allowed` set    ", "confine: on\nallowed: ['inventory.py']\n", None),
    "off": ("confine: off (none)            ", "confine: off\n", None),
}
STAGES = (("look", "look at the tree", lambda g: g.get("cache", {}).get("look")),
          ("key", "cache key", lambda g: g.get("cache", {}).get("duration")),
          ("scope", "scope check", lambda g: g.get("scope", {}).get("duration")),
          ("scan", "scan", lambda g: (g.get("scan") or {}).get("duration")),
          ("copy", "copy in step (before the run)", lambda g: g.get("acceptance", {}).get("copy")),
          ("run", "hidden run (the child process)", lambda g: g.get("acceptance", {}).get("duration")))


def _confine_on_off(tmp: Path, home: Path, env: dict, rounds: int, hook, bare, modes=("on", "allowed", "off"),
                    targets: dict | None = None, label: str = "") -> list[str]:
    """The hook in each of `modes` (each its own copy of the sealed state root) against bare pytest,
    all interleaved; without bubblewrap only `off`. Then the per-stage split from the ledger."""
    modes = [m for m in modes if m == "off" or shutil.which("bwrap")]
    targets = targets or {}
    envs = {}
    for mode in modes:
        h = tmp / f"home-{label}-{mode}"
        shutil.copytree(home, h, symlinks=True)
        (h / "donegate.yaml").write_text(CONFIGS[mode][1])
        envs[mode] = {**env, "DONEGATE_HOME": str(h)}
        hook(envs[mode])  # warm (the first stop after the seal brings the mirror in step)
        hook(envs[mode])
    took: dict[str, list[float]] = {mode: [] for mode in [*modes, "bare"]}
    cpu: dict[str, list[float]] = {mode: [] for mode in [*modes, "bare"]}
    load = os.getloadavg()[0]
    for i in range(rounds):
        order = [*modes, "bare"]
        for what in (reversed(order) if i % 2 else order):
            took[what].append(bare() if what == "bare" else hook(envs[what]))
            cpu[what].append(CPU[-1])
    load_end = os.getloadavg()[0]
    bare_cpu = statistics.median(cpu["bare"])
    out = [f"hook vs bare pytest{label and ', ' + label}, {N_TESTS} hidden tests, {rounds} interleaved rounds, load "
           f"{load:.1f} -> {load_end:.1f} on {os.cpu_count()} cores (bare `python -m pytest -q` median "
           f"{statistics.median(took['bare']) * 1000:.0f} ms, {bare_cpu * 1000:.0f} ms CPU; each timed run "
           f"starts once the last stop's after-answer work is done, which went on a median "
           f"{statistics.median(AFTER[-rounds * len(modes):]) * 1000:.0f} ms after its answer):"]
    for mode in modes:
        ratios = [h / b for h, b in zip(took[mode], took["bare"], strict=True)]
        target = f"  (target <= {targets[mode]})" if mode in targets else ""
        out.append(f"  {CONFIGS[mode][0]} hook median {statistics.median(took[mode]) * 1000:.0f} ms, "
                   f"median ratio hook/bare = {statistics.median(ratios):.3f} {_spread(ratios)}{target}")
    # CPU time, which the machine's load hardly moves: the hook's own (its process: start-up, imports, the stages,
    # from its ledger line) against bare pytest's whole run, and for an unconfined stop everything it waited for
    # (rusage does not reach the runs inside bubblewrap's PID namespace).
    for mode in modes:
        own = [r["cpu"]["hook"] for r in _stops(Path(envs[mode]["DONEGATE_HOME"]))[-rounds:] if "cpu" in r]
        if own:
            out.append(f"  CPU, {mode}: the hook's own process median {statistics.median(own) * 1000:.0f} ms "
                       f"{_spread(own, 1000, 'ms')}, {statistics.median(own) / bare_cpu:.2f}x bare pytest's whole run")
    # Wall time cannot go below the CPU a stop needs spread over the cores: the hook, the pytest run and
    # the second run beside it (its mirrors' put-back runs after the answer and is not counted).
    if "off" in modes:
        cores = os.cpu_count() or 1
        need = statistics.median(cpu["off"])
        out.append(f"  CPU an unconfined stop needs (user+system, with its runs): median {need * 1000:.0f} ms "
                   f"{_spread(cpu['off'], 1000, 'ms')}, {need / bare_cpu:.2f}x bare pytest's {bare_cpu * 1000:.0f} ms "
                   f"{_spread(cpu['bare'], 1000, 'ms')}; on {cores} cores its wall time cannot go below "
                   f"{need / bare_cpu / cores:.2f}x bare's")
    if "on" in modes and "off" in modes:
        cost = statistics.median(a / b for a, b in zip(took["on"], took["off"], strict=True))
        out.append(f"  confinement costs: median ratio on/off = {cost:.3f}")
    for mode in modes:
        lines = _stops(Path(envs[mode]["DONEGATE_HOME"]))
        lines = lines[-rounds:]
        parts = []
        for _, name, get in STAGES:
            vals = [v for v in (get(r["gates"]) for r in lines) if v is not None]
            if vals:
                parts.append(f"{name} {statistics.median(vals) * 1000:.0f}")
        total = statistics.median(r["duration"] for r in lines) * 1000
        out.append(f"  stages, {mode} (median ms; scope and scan run beside the hidden run): " + ", ".join(parts)
                   + f"; the stop in the hook {total:.0f}, the hook's wall time {statistics.median(took[mode]) * 1000:.0f}")
    return out


def _spread(xs: list[float], scale: float = 1.0, unit: str = "") -> str:
    """The spread of a figure over the rounds: its quartiles and its extremes."""
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    f = "{:.0f}" if unit else "{:.3f}"
    return (f"[quartiles {f.format(q[0] * scale)}-{f.format(q[2] * scale)}, range {f.format(min(xs) * scale)}-"
            f"{f.format(max(xs) * scale)}{' ' + unit if unit else ''}]")


def bench_copy(files: int = 2000, rounds: int = 5) -> list[str]:
    """What the copy of the repository costs a stop: a whole throwaway copy (`copy_repo`, what the seal
    and a stop finding the mirror in use do) against bringing the tree's mirror in step after one edit
    (`Mirror.sync`, what a confined stop does, twice: before the run and after it)."""
    from donegate.tree import statcache
    from donegate.hidden import copy as throwaway

    with tempfile.TemporaryDirectory(prefix="donegate-bench-copy-") as tmp:
        tree = Path(tmp) / "tree"
        for i in range(files):
            p = tree / f"pkg{i % 50}" / f"mod{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(MODULE)
        full, synced = [], []
        mirror = throwaway.Mirror(Path(tmp) / "mirror", tree, (".git",))
        mirror.sync(statcache.look(tree))
        for i in range(rounds):
            dest = Path(tmp) / f"copy{i}"
            t0 = time.perf_counter()
            throwaway.copy_repo(tree, dest)
            full.append(time.perf_counter() - t0)
            shutil.rmtree(dest)
            (tree / "pkg1" / "mod1.py").write_text(MODULE + f"# {i}\n")
            look = statcache.look(tree)
            t0 = time.perf_counter()
            mirror.sync(look)
            synced.append(time.perf_counter() - t0)
    return [f"copy of a {files}-file working tree: a whole throwaway copy median {statistics.median(full) * 1000:.0f} ms, "
            f"the mirror brought in step after one edit median {statistics.median(synced) * 1000:.1f} ms "
            "(bubblewrap 0.8.0 has no --overlay)"]


def _stops(home: Path) -> list[dict]:
    """The ledger's stop lines (a seal, a label or an approval is a line too)."""
    lines = [json.loads(x) for x in (home / "ledger.jsonl").read_text().splitlines()]
    return [r for r in lines if "verdict" in r]


# A session's transcript as Claude Code names one in every stop's payload: the stop reads the session's cost and
# time from it and scans it for leaks (a stop of a new session reads it from its start).
TRANSCRIPT = [
    {"type": "user", "timestamp": "2026-01-01T10:00:00.000Z", "message": {"role": "user", "content": "fix it"}},
    {"type": "assistant", "timestamp": "2026-01-01T10:01:30.250Z", "message": {
        "id": "msg_1", "model": "claude-sonnet-4-5", "role": "assistant", "content": [{"type": "text", "text": "Done."}],
        "usage": {"input_tokens": 1200, "output_tokens": 300}}},
]


def _payloads(repo: Path):
    """Stop payloads of new sessions, one after another: none is answered from the cache. Each names a transcript
    (beside the repository, outside it), as Claude Code's do."""
    transcript = repo.parent / "session.jsonl"
    transcript.write_text("".join(json.dumps(e) + "\n" for e in TRANSCRIPT))
    n = 0
    while True:
        n += 1
        yield json.dumps({"session_id": f"bench-{n}", "cwd": str(repo), "stop_hook_active": False,
                          "last_assistant_message": "done", "transcript_path": str(transcript)})


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
    """What keying the tree costs on the bundled example and on a repository of 2,000 files: hashing every
    file (a look without the stat cache) against a look that finds nothing changed."""
    from donegate.tree import verdict_cache as cache, statcache

    out = ["keying the tree (sha256 of every file but .git; with the stat cache, of what changed), median of %d:" % rounds]
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        big = Path(tmp) / "big"
        for i in range(2000):  # about the size of a mid-sized Python project's files
            p = big / f"pkg{i // 50}" / f"mod{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(MODULE * (1 + i % 8))
        root = Path(tmp) / "home"
        time.sleep(statcache.SLACK_NS / 1e9)  # past the racy window: the stat cache may trust what it saw
        for name, repo in (("examples/shop", KIT / "examples" / "shop"), ("2,000 files", big)):
            statcache.look(repo, root)
            for label, where in (("every file hashed", None), ("stat cache, nothing changed", root)):
                times, files, size = [], 0, 0
                for _ in range(rounds):
                    t0 = time.perf_counter()
                    _, files, size = cache.tree_digest(repo, statcache.look(repo, where))
                    times.append(time.perf_counter() - t0)
                out.append(f"  {name}: {files} files, {size / 1024:.0f} KiB, {label}: {statistics.median(times) * 1000:.2f} ms")
    return out


if __name__ == "__main__":
    # `python bench/hook_bench.py stop [ROUNDS]`: only the 40-test stop's rows (confined, `allowed`, unconfined, the
    # cached stop, the second opinion's cost), ~1.5 min at 21 rounds instead of the whole `make bench`'s 7.5.
    if sys.argv[1:2] == ["stop"]:
        print("\n".join(bench_hook(*map(int, sys.argv[2:3]))))
    else:
        print("\n".join(bench_hook() + bench_package() + bench_large() + bench_large_edited() + bench_tree_key()
                        + bench_copy()))
