"""The real Gemini CLI, Copilot CLI and Qwen Code from the project's node_modules, run headless and offline
against the scripted servers (`fakegemini.FakeGemini`, `fakechat.FakeChat`), in a HOME of the test's own.

| client | pinned | headless | its model server |
|---|---|---|---|
| gemini | 0.61.0 | `gemini -p PROMPT --yolo -m M` in REPO | `GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY`, `security.auth.selectedType: gemini-api-key` |
| copilot | 1.0.102 | `copilot -p PROMPT --allow-all-tools -C REPO` | `COPILOT_OFFLINE=true`, `COPILOT_PROVIDER_BASE_URL`, `COPILOT_MODEL` |
| qwen | 0.15.10 | `qwen -p PROMPT --yolo` in REPO | `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`, `security.auth.selectedType: openai` |

No skip-trust flag and no `GEMINI_CLI_TRUST_WORKSPACE`: the trust is what `donegate install --client` wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = {"gemini": "0.61.0", "copilot": "1.0.102", "qwen": "0.15.10"}
DROPPED = ("DONEGATE_", "OPENAI", "GEMINI", "GOOGLE", "COPILOT", "QWEN", "CLAUDE", "CODEX", "ANTHROPIC")
_FOUND: dict[str, Path] = {}


def binary(client: str) -> Path:
    return ROOT / "node_modules" / ".bin" / client


def find(client: str) -> Path:
    """The pinned CLI, or skip (fail under DGTEST_REQUIRE_CLAUDE=1, as CI runs). The version is the one its npm
    package says it is (`node_modules/<package>/package.json`, where the link in `.bin` leads): a `--version` would
    start Node and load the whole CLI (1-2 CPU-s each, once per xdist worker and client) to say the same, and the
    test's own run of the binary fails with its output when the install is broken."""
    if client in _FOUND:
        return _FOUND[client]
    path, why = binary(client), ""
    if not path.exists():
        why = f"{client} not installed: run `make setup` (npm ci puts it in node_modules)"
    else:
        version = _package_version(path.resolve())
        if version != VERSIONS[client]:
            why = f"{client} is {version or 'of no version'} here, the tests drive {VERSIONS[client]}: run `make setup`"
    if why:
        if os.environ.get("DGTEST_REQUIRE_CLAUDE") == "1":
            pytest.fail(why + " (DGTEST_REQUIRE_CLAUDE=1: this run must not skip it)")
        pytest.skip(why)
    _FOUND[client] = path
    return path


def _package_version(script: Path) -> str | None:
    """The `version` of the npm package holding `script` (the nearest package.json above it that names one)."""
    for folder in script.parents:
        meta = folder / "package.json"
        if meta.is_file():
            try:
                data = json.loads(meta.read_text())
            except ValueError:
                return None
            if isinstance(data, dict) and data.get("name") and data.get("version"):
                return str(data["version"])
        if folder.name == "node_modules":
            return None
    return None


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    env.update(HOME=str(home), COPILOT_HOME=str(home / ".copilot"), COPILOT_AUTO_UPDATE="false", NO_COLOR="1", **extra)
    return env


def provider(client: str, home: Path, api: Any) -> dict[str, str]:
    """Point the client at the scripted server: its settings (before install merges the kit's hook into them)
    and the variables of the session."""
    if client == "copilot":
        return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": api.base_url, "COPILOT_MODEL": "gpt-4.1",
                "COPILOT_PROVIDER_API_KEY": "dummy"}
    folder = home / (".gemini" if client == "gemini" else ".qwen")
    folder.mkdir(parents=True, exist_ok=True)
    auth = "gemini-api-key" if client == "gemini" else "openai"
    # No usage statistics or telemetry: Qwen Code 0.15.10 otherwise sends its logger's events to a host of its own
    # (seen in its --debug log); and no managed memory, whose side requests would take the script's turns.
    settings = {"security": {"auth": {"selectedType": auth}}, "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False}}
    if client == "qwen":
        settings["memory"] = {"enableManagedAutoMemory": False, "enableManagedAutoDream": False}
    (folder / "settings.json").write_text(json.dumps(settings))
    if client == "gemini":
        return {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": api.base_url}
    return {"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": api.base_url, "OPENAI_MODEL": "scripted"}


@dataclass
class ClientRun:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"exit {self.returncode}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-3000:]}"


# Gemini CLI and Qwen Code start a second Node process of themselves (more heap; Qwen Code where half the memory is
# more than Node's limit, as here) with this variable set, and that child runs the session and its hooks: the same
# session and the same hook environment in one process, without parsing the bundle twice (~1 CPU-s a session).
NO_RELAUNCH = {"gemini": {"GEMINI_CLI_NO_RELAUNCH": "true"}, "qwen": {"QWEN_CODE_NO_RELAUNCH": "true"}}


def copilot_cache(tmp_path_factory: Any) -> dict[str, str]:
    """The variable that points Copilot CLI at one folder of the test run (every xdist worker's) for the package its
    native binary unpacks, unpacked there once. With a HOME of its own per test, each test's first session unpacked
    the same 1.0.102 package into `~/.cache/copilot/pkg` again (the binary's `--binary-version` child with
    COPILOT_SEA_EXTRACT_ONLY=1: 1.25-1.34 CPU-s, on top of the session's own ~1.2-1.8), as a person's does once.
    Here that same call is made once, under a lock, before the first session (two tests starting together would
    each unpack it otherwise); every session then finds the package and runs it, as a person's later ones do."""
    import fcntl

    from .pool import shared_root

    root = shared_root(tmp_path_factory, "copilot-pkg")
    env = {"COPILOT_PKG_CACHE_HOME": str(root)}
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".unpacked").exists():
            # What the binary runs itself at a first start (its package in COPILOT_PKG_CACHE_HOME/pkg/<platform>/).
            res = subprocess.run([str(find("copilot")), "--binary-version"], capture_output=True, text=True, timeout=240,
                                 env=clean_env(root / "home", COPILOT_SEA_EXTRACT_ONLY="1", **env), stdin=subprocess.DEVNULL)
            assert res.returncode == 0, f"copilot --binary-version (unpack only): {res.stdout}{res.stderr}"
            (root / ".unpacked").touch()
    return env


def run(client: str, repo: Path, home: Path, prompt: str, env: dict[str, str], *, timeout: float = 240) -> ClientRun:
    exe = str(find(client))
    argv = {"gemini": [exe, "-p", prompt, "--yolo", "-m", "gemini-2.5-pro"],
            "copilot": [exe, "-p", prompt, "--allow-all-tools", "-C", str(repo), "--no-auto-update"],
            "qwen": [exe, "-p", prompt, "--yolo"]}[client]
    res = subprocess.run(argv, cwd=repo, env=clean_env(home, **NO_RELAUNCH.get(client, {}), **env), capture_output=True,
                         text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return ClientRun(res.returncode, res.stdout, res.stderr)


def install(client: str, g: Any, api: Any, *args: str) -> dict[str, str]:
    """The scripted provider in the session's HOME, then `donegate install --client CLIENT REPO` as a person runs
    it (HOME the session's); the session's variables."""
    from .gated import kit_cmd

    env = provider(client, g.user_home, api)
    res = kit_cmd(g.kit, g.home, "install", "--client", client, str(g.repo), *args, user_home=g.user_home)
    assert res.returncode == 0, res.stdout + res.stderr
    return env


def guard_lines(home: Path) -> list[dict]:
    from .gated import ledger

    return [r for r in ledger(home) if r.get("event") == "guard"]
