"""The reviewer pair runs in parallel: a pair's wall time against a single reviewer's, side by side.

The real `claude` binary talks to the scripted Messages API, which answers every model turn after a
fixed delay, so a reviewer's time is mostly waiting, as it is with a real model. A single reviewer is
timed through the same `reviewer.review` path: critic mode whose reviewer approves (no findings, so no
critic runs). Single and pair alternate, REPS times each; the medians are compared.
Target: pair <= 1.15 x single.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from donegate import config  # noqa: E402
from donegate.models import reviewer
from donegate.claude import binary  # noqa: E402
from donegate.errors import DonegateError  # noqa: E402
from tests.support.fakeapi import FakeAPI, tool, turn  # noqa: E402

DELAY = 2.0  # seconds before each scripted model answer
TURNS = 2  # per reviewer: one Read, then the answer
REPS = 5
TARGET = 1.15


def _repo(path: Path) -> tuple[Path, str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True, timeout=30).stdout

    path.mkdir()
    git("-c", "init.defaultBranch=main", "init", "-q")
    git("config", "user.email", "bench@example.com")
    git("config", "user.name", "bench")
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    base = git("rev-parse", "HEAD").strip()
    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return path, base


@contextmanager
def _environment(api: FakeAPI, home: Path) -> Iterator[None]:
    """os.environ pointed at the fake server with a throwaway HOME and DONEGATE_HOME (model.run reads it)."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.upper().startswith(("ANTHROPIC_", "CLAUDE")) or name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            del os.environ[name]
    os.environ.update(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY="bench-key", HOME=str(home),
                      DONEGATE_HOME=str(home / "donegate"), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                      DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", NO_PROXY="127.0.0.1,localhost")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def bench_review(delay: float = DELAY, reps: int = REPS) -> list[str]:
    try:
        binary.find_claude()
    except DonegateError as exc:
        return [f"skipped: {exc.message} (run `make setup`)"]
    answer = turn(tool("StructuredOutput", {"approve": True, "findings": []}))
    steps = [turn(tool("Read", {"file_path": "calc.py"})), answer]
    scripts = {"Role: reviewer A": steps * (2 * reps), "Role: reviewer B": steps * reps}
    cfg = config.defaults()
    single, pair = [], []
    with tempfile.TemporaryDirectory(prefix="donegate-review-bench-") as tmp, FakeAPI(scripts=scripts, delay=delay) as api:
        repo, base = _repo(Path(tmp) / "repo")
        with _environment(api, Path(tmp)):
            for i in range(reps):
                for mode in (("critic", "pair") if i % 2 == 0 else ("pair", "critic")):
                    t0 = time.monotonic()
                    result = reviewer.review(repo, "add must add", base, cfg, mode=mode, timeout=120)
                    took = time.monotonic() - t0
                    if result["verdict"] != "approve":
                        return [f"the {mode} run failed: {result['errors']}"]
                    (pair if mode == "pair" else single).append(took)
    s, p = statistics.median(single), statistics.median(pair)
    ratio = p / s
    return [
        f"scripted API answering after {delay:g} s, {TURNS} turns per reviewer, {reps} runs each, medians",
        f"single reviewer   {s:6.2f} s   (runs: {', '.join(f'{x:.2f}' for x in single)})",
        f"pair in parallel  {p:6.2f} s   (runs: {', '.join(f'{x:.2f}' for x in pair)})",
        f"pair / single     {ratio:6.2f}     (target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})",
    ]


if __name__ == "__main__":
    print("\n".join(bench_review()))
