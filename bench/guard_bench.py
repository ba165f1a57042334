"""What the PreToolUse guard costs each tool call: its launcher run as install writes it (`python -I -S guard.py
--home ROOT`, a Bash command with globs on stdin) against a bare `python -I -S -c pass` start, interleaved,
medians; and one decision in process against that start. The guard runs before every tool call of a session,
so the figure to read is the launcher's ratio to the bare start (tests pin why it is low: tests/install/test_guard.py).

Where the launcher's extra time goes (measured 06:30 UTC, load 16, CPU-ms per call, process_time in a fresh
`python -I -S`; wall is these times stretched ~4-5x by the load): the stdlib's `re` chain 8.0 (enum alone 5.0:
Python 3.11 builds re.RegexFlag; `re` is needed by fnmatch, glob, shlex, json and the guard's own patterns),
json 2.1, fnmatch/glob/shlex/contextlib 1.9, the guard module 2.3 (its patterns compiled), the decision 1.8,
compiling the launcher's source 0.5 (+1 ms compiler warm-up a bare `-c pass` pays too). No second process, no
git, no hashing, no recompiled module: the kit's and the stdlib's bytecode are read from __pycache__ (-I drops
PYTHONDONTWRITEBYTECODE; it does not imply -B)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 10
DECISIONS = 200
KIT = Path(__file__).resolve().parent.parent


def bench_guard() -> list[str]:
    from donegate.install import guard

    with tempfile.TemporaryDirectory(prefix="donegate-guard-") as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        for rel in ("src/app.py", "src/tests/test_app.py", "README.md"):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text("x = 1\n")
        home.mkdir()
        payload = {"tool_name": "Bash", "cwd": str(repo),
                   "tool_input": {"command": "cd src && grep -rn x . | head -5; cat ../*.md; pytest -q tests/*.py"}}
        text = json.dumps(payload)
        runs = {"bare": [sys.executable, "-I", "-S", "-c", "pass"],
                "launcher": [sys.executable, "-I", "-S", str(KIT / "hooks" / "guard.py"), "--home", str(home)]}
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(ROUNDS):
            for name, argv in runs.items():
                t0 = time.perf_counter()
                res = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=60)
                times[name].append(time.perf_counter() - t0)
                assert res.returncode == 0, res.stderr
        old = os.environ.get("DONEGATE_HOME")
        os.environ["DONEGATE_HOME"] = str(home)
        try:
            t0 = time.perf_counter()
            for _ in range(DECISIONS):
                assert guard.decide(payload) is None
            decision = (time.perf_counter() - t0) / DECISIONS
        finally:
            if old is None:
                os.environ.pop("DONEGATE_HOME", None)
            else:
                os.environ["DONEGATE_HOME"] = old
    bare, launcher = statistics.median(times["bare"]), statistics.median(times["launcher"])
    return [f"the guard per tool call, a whole launcher: {launcher * 1000:.1f} ms ({launcher / bare:.2f}x a bare python start, {bare * 1000:.1f} ms)",
            f"the guard's decision in process: {decision * 1000:.2f} ms ({decision / bare:.2f}x a bare python start)"]


if __name__ == "__main__":
    sys.path.insert(0, str(KIT))
    print("\n".join(bench_guard()))
