"""An experiment's runs on OpenAI's Codex CLI (a configuration's `client: codex`), beside Claude Code's.

A Codex run differs from a Claude Code run in three places only; the seal, the grading and the run's
line are the same (`donegate.experiment.harness`):

- setup: the run's own CODEX_HOME (`<tmp>/codex-home`), its config.toml copied from the spec's
  `agent.codex_config` (the model provider; Codex authenticates from the environment, e.g. the
  provider's `env_key`: no credential file is copied), then the kit's hooks, trust and permission
  profile written into it (`donegate.codex.installing`); `gate: off` keeps the guard and the profile
  and leaves out the Stop hook, as Claude Code's baseline keeps its deny rules and sandbox;
- the session: `codex exec --json --skip-git-repo-check -C REPO -` with the request on stdin, a
  TMPDIR of its own beside CODEX_HOME (Codex 0.169.0 will not make its sandbox helper under the
  temporary folder);
- the result: Codex's JSON events (`thread.started` names the session the ledger's stops carry,
  `agent_message` the last words, `turn.completed` the tokens); Codex reports no cost, so the agent's
  cost is unknown (`None`), never 0.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from donegate import config, paths
from donegate.errors import DonegateError
from donegate.core.util import json_object

CODEX_NPM = ("node_modules", ".bin", "codex")


def find_codex() -> str:
    """The Codex CLI the runs use: `$DONEGATE_CODEX`, else the checkout's pinned one, else `codex` on PATH."""
    if os.environ.get("DONEGATE_CODEX"):
        return os.environ["DONEGATE_CODEX"]
    pinned = paths.KIT_ROOT.joinpath(*CODEX_NPM)
    if pinned.exists():
        return str(pinned)
    found = shutil.which("codex")
    if found is None:
        raise DonegateError("no Codex CLI for a configuration with client: codex",
                            "npm install (the checkout pins @openai/codex), or put codex on PATH")
    return found


def setup(run_conf: dict[str, Any], home: Path, tmp: Path, codex_config: Path | None) -> dict[str, str]:
    """The run's CODEX_HOME with the kit installed: the environment the session runs with."""
    from donegate.codex import installing

    codex_home = tmp / "codex-home"
    codex_home.mkdir(parents=True, exist_ok=True)
    if codex_config is not None:
        shutil.copyfile(codex_config, codex_home / "config.toml")
    cfg = config.load(paths.config_path(home))
    installing.install(codex=codex_home, home=home, cfg=cfg, stop=run_conf["gate"] != "off")
    session_tmp = tmp / "codex-tmp"
    session_tmp.mkdir(exist_ok=True)
    return {"CODEX_HOME": str(codex_home), "TMPDIR": str(session_tmp)}


def command(repo: Path, model: str | None) -> list[str]:
    argv = [find_codex(), "exec", "--json", "--skip-git-repo-check", "-C", str(repo)]
    if model:
        argv += ["--model", model]
    return argv + ["-"]


def parse_events(stdout: str) -> dict[str, Any] | None:
    """Claude Code's result shape from Codex's events: session_id, result, num_turns, usage; None without
    a `thread.started` (the session never began)."""
    out: dict[str, Any] = {}
    turns = 0
    for line in stdout.splitlines():
        ev = json_object(line)
        if ev is None:
            continue
        kind = ev.get("type")
        if kind == "thread.started":
            out["session_id"] = ev.get("thread_id")
        elif kind == "item.completed" and (ev.get("item") or {}).get("type") == "agent_message":
            out["result"] = ev["item"].get("text") or ""
            turns += 1
        elif kind == "item.completed" and (ev.get("item") or {}).get("type") == "command_execution":
            turns += 1
        elif kind == "turn.completed":
            out["usage"] = ev.get("usage")
            out["subtype"] = "success"
        elif kind in ("turn.failed", "error"):
            out["is_error"] = True
            out["result"] = json.dumps(ev)[:300]
    if "session_id" not in out:
        return None
    out["num_turns"] = turns
    return out


def version() -> str:
    from donegate.core import proc

    res = proc.run([find_codex(), "--version"], timeout=60)
    words = res.stdout.split()
    return words[-1] if res.returncode == 0 and words else "unknown"


def reap_helpers(repo: Path) -> list[int]:
    """End the sandboxed file-system helpers a run left behind: Codex 0.169.0 sometimes leaves a
    `bwrap ... codex --codex-run-as-fs-helper` (its parent gone) after `codex exec` exits. Only this run's:
    the profile in its command line names the run's workspace."""
    import signal

    ended = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"--codex-run-as-fs-helper" in text and f'"{repo}"'.encode() in text:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                ended.append(int(entry.name))
            except OSError:
                pass
    return ended
