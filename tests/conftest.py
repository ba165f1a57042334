"""Shared fixtures. Every test runs with a fresh HOME and DONEGATE_HOME: none may touch the real ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parent.parent
HOOK = KIT / "hooks" / "stop_gate.py"
EXAMPLE = KIT / "examples" / "shop"
EXAMPLE_TESTS = KIT / "examples" / "shop-acceptance"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Forbid touching the real home or the kit's own ledger/store: each test gets its own."""
    home = tmp_path_factory.mktemp("home")
    kit_home = tmp_path_factory.mktemp("donegate-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DONEGATE_HOME", str(kit_home))
    for var in ("DONEGATE_NESTED", "PYTEST_ADDOPTS", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"):
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture
def kit_home() -> Path:
    return Path(os.environ["DONEGATE_HOME"])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, timeout=30).stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A real git repository with `files` committed."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(path)], check=True, timeout=30)
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "donegate tests")
    for name, text in files.items():
        p = path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base", "--allow-empty")
    return path


def example_files() -> dict[str, str]:
    return {str(p.relative_to(EXAMPLE)): p.read_text() for p in EXAMPLE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def shop_repo(tmp_path) -> Path:
    """The bundled example repository (with its bug), committed in a temporary folder."""
    return make_repo(tmp_path / "shop", example_files())


@pytest.fixture
def sealed_shop(shop_repo, kit_home) -> Path:
    res = subprocess.run(
        [sys.executable, "-m", "donegate", "seal", str(shop_repo), *map(str, sorted(EXAMPLE_TESTS.glob("test_*.py"))),
         "--request", "orders of 10 or more units get 10% off"],
        capture_output=True, text=True, timeout=120, cwd=KIT,
    )
    assert res.returncode == 0, res.stderr
    return shop_repo


def run_hook(payload, *, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run hooks/stop_gate.py the way Claude Code does: a subprocess with JSON on stdin."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, str(HOOK)], input=text, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def stop_payload(repo: Path, session: str = "s1", message: str = "Done.", **extra) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": message, "transcript_path": "", **extra}


def ledger_lines(kit_home: Path) -> list[dict]:
    path = kit_home / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
