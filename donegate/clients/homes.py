"""Where Gemini CLI, Copilot CLI and Qwen Code keep their configuration, and their folder trust.

| client | its folder | hooks | folder trust |
|---|---|---|---|
| Gemini CLI 0.61.0 | `$GEMINI_CLI_HOME/.gemini` (default `~/.gemini`) | `settings.json` `hooks.AfterAgent` | `trustedFolders.json` `{path: "TRUST_FOLDER"}`: on by default; headless, an untrusted folder is refused outright |
| Copilot CLI 1.0.102 | `$COPILOT_HOME` (default `~/.copilot`) | `hooks/*.json` `hooks.agentStop` | `config.json` `trustedFolders: [path]`: a repository's hooks (`.github/hooks/`, `.claude/settings.json`) run only in a trusted folder; the user's own hooks run anyway |
| Qwen Code 0.15.10 | `$QWEN_HOME` (default `~/.qwen`) | `settings.json` `hooks.Stop` | `trustedFolders.json` as Gemini's, read only with `security.folderTrust.enabled` |

Gemini's `settings.json` and Copilot's `config.json` may hold comments (`//` lines): they are read
with those lines left out and written back with Copilot's header lines kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from donegate.core.util import atomic_write
from donegate.errors import DonegateError

TRUSTED = ("TRUST_FOLDER", "TRUST_PARENT")


def folder(client: str, env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if client == "gemini":
        return (Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini").expanduser().resolve()
    if client == "copilot":
        return Path(env.get("COPILOT_HOME") or home / ".copilot").expanduser().resolve()
    if client == "qwen":
        return Path(env.get("QWEN_HOME") or home / ".qwen").expanduser().resolve()
    raise DonegateError(f"no such client: {client}", "one of: gemini, copilot, qwen")


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is none), `//` comment lines left out; refused with the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise DonegateError(f"{path} cannot be read ({exc.strerror or exc})", f"check {path}") from None
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise DonegateError(f"{path} is not valid JSON ({exc})", f"fix {path} by hand, then install again") from None
    if not isinstance(data, dict):
        raise DonegateError(f"{path} does not hold a JSON object", f"fix {path} by hand, then install again")
    return data


def write_json(path: Path, data: dict[str, Any]) -> None:
    """`data` into `path`, replaced whole, with the file's `//` header lines kept (Copilot writes some)."""
    head = ""
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        head = "".join(line + "\n" for line in lines[: next((i for i, x in enumerate(lines) if not x.lstrip().startswith("//")), len(lines))])
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (head + json.dumps(data, indent=2) + "\n").encode(), 0o600)


def trust_file(client: str, home: Path) -> Path:
    return home / ("config.json" if client == "copilot" else "trustedFolders.json")


def _under(path: str, rule: str) -> bool:
    return path == rule or path.startswith(rule.rstrip("/") + "/")


def is_trusted(client: str, home: Path, repo: Path) -> bool:
    """Whether the client trusts `repo` by its trust file: a trusted folder at or above it (Gemini and Qwen:
    the most specific rule wins, `TRUST_PARENT` trusts the folder's parent)."""
    data = read_json(trust_file(client, home))
    where = str(repo)
    if client == "copilot":
        folders = data.get("trustedFolders") or data.get("trusted_folders") or []
        return any(isinstance(f, str) and _under(where, os.path.realpath(f)) for f in folders)
    best, level = -1, ""
    for rule, value in data.items():
        base = os.path.realpath(rule)
        if value == "TRUST_PARENT":
            base = os.path.dirname(base)
        if _under(where, base) and len(base) > best:
            best, level = len(base), str(value)
    return level in TRUSTED


def trust(client: str, home: Path, repo: Path) -> bool:
    """Write the client's trust of `repo` (True when it was not there before)."""
    if is_trusted(client, home, repo):
        return False
    file = trust_file(client, home)
    data = read_json(file)
    if client == "copilot":
        key = "trustedFolders" if "trustedFolders" in data or "trusted_folders" not in data else "trusted_folders"
        data[key] = [*(data.get(key) or []), str(repo)]
    else:
        data[str(repo)] = "TRUST_FOLDER"
    write_json(file, data)
    return True


def folder_trust_on(client: str, home: Path) -> bool:
    """Whether the client checks folder trust at all (Gemini and Copilot always; Qwen Code only when asked)."""
    if client != "qwen":
        return True
    sec = read_json(home / "settings.json").get("security")
    ft = sec.get("folderTrust") if isinstance(sec, dict) else None
    return isinstance(ft, dict) and ft.get("enabled") is True

