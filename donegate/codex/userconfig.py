"""The kit's part of the user's Codex configuration, `$CODEX_HOME/config.toml` (default `~/.codex`).

Why the user level, and why config.toml rather than a hooks.json (verified on Codex 0.169.0):
- a project's `.codex/hooks.json` runs only in a trusted project, lies in the agent's writable workspace
  (an edited handler has a new hash and Codex then skips it silently), and its path names the project;
- Codex shows the model the path of the file a blocking hook came from
  (`<hook_prompt hook_run_id="stop:0:<file>">`): for hooks declared in `[hooks]` of config.toml that is
  `~/.codex/config.toml`, which names nothing of the kit; the command line itself is never shown.

The kit's lines are one block at the end of the file between two marker lines, and one line at its
top (`default_permissions`, a top-level key, must come before every table), so uninstall takes out
exactly what install put in. The file is checked with `tomllib` before it is written: a user file the
block cannot be appended to (an inline `hooks = {...}`, say) is refused with the fix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from donegate.codex import trust
from donegate.errors import DonegateError

try:
    import tomllib as _toml  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # Python 3.10 has no TOML reader: `_rough` reads the few keys the kit needs
    _toml = None

BEGIN = "# >>> gate hooks (managed block: written by install, removed by uninstall)"
END = "# <<< gate hooks"
TOP = "  # gate hooks: managed line"
PROFILE = "standard"  # the permission profile's name: Codex may show it, so it names nothing of the kit


def codex_home(env: dict[str, str] | None = None) -> Path:
    value = (os.environ if env is None else env).get("CODEX_HOME")
    return Path(value or Path.home() / ".codex").expanduser().resolve()


def config_path(home: Path | None = None) -> Path:
    return (home or codex_home()) / "config.toml"


def strip(text: str) -> str:
    """`text` without the kit's block and top line."""
    text = re.sub(rf"\n*{re.escape(BEGIN)}\n.*?{re.escape(END)}\n?", "\n", text, flags=re.S)
    lines = [line for line in text.splitlines(keepends=True) if not line.rstrip("\n").endswith(TOP)]
    return "".join(lines).rstrip("\n") + "\n" if "".join(lines).strip() else ""


def _rough(text: str) -> dict[str, Any]:
    """Without a TOML reader: the top-level keys before the first table, and how many hook groups of each event."""
    head = re.split(r"(?m)^\s*\[", text, maxsplit=1)[0]
    out: dict[str, Any] = {m[1]: m[2] for m in re.finditer(r'(?m)^\s*([\w-]+)\s*=\s*"([^"]*)"', head)}
    out["hooks"] = {e: [{}] * len(re.findall(rf"(?m)^\s*\[\[hooks\.{e}\]\]", text)) for e in trust.LABELS}
    return out


def parse(text: str, where: Path) -> dict[str, Any]:
    if _toml is None:
        return _rough(text)
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise DonegateError(f"{where} is not valid TOML ({exc}); Codex would not start with it",
                            f"fix {where} by hand, then install again") from None


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def block(file: Path, base: dict[str, Any], stop_cmd: str | None, stop_timeout: int, guard_cmd: str, guard_timeout: int,
          matcher: str, deny: list[Path] | None) -> tuple[str, str, dict[str, str]]:
    """(top line, block, {trust key: hash}) for a file whose content without the kit's lines is `base`."""
    hooks: dict[str, Any] = base["hooks"] if isinstance(base.get("hooks"), dict) else {}
    stop_group = len(hooks.get("Stop") or [])
    guard_group = len(hooks.get("PreToolUse") or [])
    stop = {"type": "command", "command": stop_cmd, "timeout": stop_timeout}
    guard = {"type": "command", "command": guard_cmd, "timeout": guard_timeout}
    trusted = {trust.key(str(file), "Stop", stop_group): trust.trusted_hash("Stop", stop)} if stop_cmd else {}
    trusted[trust.key(str(file), "PreToolUse", guard_group)] = trust.trusted_hash("PreToolUse", guard, matcher)
    lines = [BEGIN]
    if stop_cmd:
        lines += ["[[hooks.Stop]]", "[[hooks.Stop.hooks]]", 'type = "command"', f"command = {_q(stop_cmd)}",
                  f"timeout = {stop_timeout}", ""]
    lines += ["[[hooks.PreToolUse]]", f"matcher = {_q(matcher)}",
             "[[hooks.PreToolUse.hooks]]", 'type = "command"', f"command = {_q(guard_cmd)}", f"timeout = {guard_timeout}", ""]
    for k, h in trusted.items():
        lines += [f"[hooks.state.{_q(k)}]", f"trusted_hash = {_q(h)}", ""]
    top = ""
    if deny is not None:
        top = f"default_permissions = {_q(PROFILE)}{TOP}\n"
        lines += [f"[permissions.{PROFILE}]", 'extends = ":workspace"', "", f"[permissions.{PROFILE}.filesystem]"]
        lines += [f"{_q(str(p))} = \"none\"" for p in deny]
        lines.append("")
    lines.append(END)
    return top, "\n".join(lines) + "\n", trusted


def profile_conflict(base: dict[str, Any]) -> str:
    """Why a permission profile of the kit's cannot be the session's ('' when it can): Codex 0.169.0 uses
    the older `sandbox_mode` instead of any profile when a config sets it."""
    if "sandbox_mode" in base:
        return f"the config sets sandbox_mode = {base['sandbox_mode']!r}, which Codex uses instead of any permission profile"
    if "default_permissions" in base:
        return f"the config already selects the permission profile {base['default_permissions']!r}"
    if isinstance(base.get("permissions"), dict) and PROFILE in base["permissions"]:
        return f"the config already defines a permission profile named {PROFILE!r}"
    return ""


def compose(text: str, top: str, body: str, where: Path) -> str:
    """The file with the kit's lines: `top` first, `body` at the end; refused if Codex could not read it."""
    base = strip(text)
    out = top + base + ("\n" if base else "") + body
    parse(out, where)  # raises with the fix when the user's file cannot take the block
    return out


def hooks_of(text: str) -> dict[str, list[dict[str, Any]]]:
    """{event: [group, ...]} of a config text (empty when it declares none)."""
    try:
        hooks = (_toml.loads(text) if _toml is not None else {}).get("hooks")
    except ValueError:  # TOMLDecodeError
        return {}
    return hooks if isinstance(hooks, dict) else {}


def kit_block(text: str) -> str:
    m = re.search(rf"{re.escape(BEGIN)}\n.*?{re.escape(END)}", text, flags=re.S)
    return m.group(0) if m else ""
