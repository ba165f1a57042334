"""The real Codex CLI from the project's node_modules, run offline against `fakeresponses.FakeResponses`.

Every run gets its own CODEX_HOME (never ~/.codex: Codex writes helper links there even for
`--version`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from donegate.experiment.codex_runs import reap_helpers

from .fakeresponses import FakeResponses

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / "node_modules" / ".bin" / "codex"
VERSION = "0.169.0"

PROVIDER = """model = "gpt-5.1-codex"
model_provider = "scripted"
approval_policy = "never"

[model_providers.scripted]
name = "scripted"
base_url = "{url}"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"""


def clean_env(codex_home: Path, **extra: str) -> dict[str, str]:
    """Codex 0.169.0 refuses to make its sandbox helper under the temporary folder, and the test's folders are
    under it: the session's TMPDIR is a folder of its own beside CODEX_HOME instead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX", "DONEGATE_"))}
    tmp = codex_home.parent / f"{codex_home.name}-tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env.update(CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="dummy", TMPDIR=str(tmp), **extra)
    return env


_FOUND: list[Path] = []  # the pinned CLI once `--version` answered in this process (a Node start saved per run)


def find_codex() -> Path:
    """The pinned Codex CLI, or skip (fail under DGTEST_REQUIRE_CLAUDE=1, as CI runs)."""
    if _FOUND:
        return _FOUND[0]
    why = ""
    if not CODEX.exists():
        why = "Codex CLI not installed: run `make setup` (npm ci puts @openai/codex in node_modules)"
    else:
        with tempfile.TemporaryDirectory() as home:
            res = subprocess.run([str(CODEX), "--version"], env=clean_env(Path(home)), capture_output=True,
                                 text=True, timeout=60, stdin=subprocess.DEVNULL)
            if res.returncode != 0 or VERSION not in res.stdout:
                why = f"Codex CLI unusable: {res.stdout.strip()} {res.stderr.strip()[:200]}"
    if why:
        if os.environ.get("DGTEST_REQUIRE_CLAUDE") == "1":
            pytest.fail(why + " (DGTEST_REQUIRE_CLAUDE=1: this run must not skip it)")
        pytest.skip(why)
    _FOUND.append(CODEX)
    return CODEX


@dataclass
class CodexRun:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"codex exit {self.returncode}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-3000:]}"


def write_provider(codex_home: Path, api: FakeResponses, extra: str = "") -> None:
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(PROVIDER.format(url=api.base_url) + extra)


def run_codex(codex_home: Path, repo: Path, prompt: str, *, timeout: float = 240, args: tuple[str, ...] = (),
              env: dict[str, str] | None = None) -> CodexRun:
    from .require import namespaces_work

    if not namespaces_work():  # no sandbox can start here: Codex's default read-only one would refuse every command
        args = ("--dangerously-bypass-approvals-and-sandbox", *args)
    try:
        res = subprocess.run([str(find_codex()), "exec", "--skip-git-repo-check", "-C", str(repo), *args, prompt],
                             env=clean_env(codex_home, **(env or {})), capture_output=True, text=True,
                             timeout=timeout, stdin=subprocess.DEVNULL)
    finally:
        reap_helpers(repo)  # the kit's own: an experiment's Codex runs end theirs the same way
    return CodexRun(res.returncode, res.stdout, res.stderr)
