"""`donegate install --client gemini|copilot|qwen`, `uninstall --client ...`, and doctor's checks of them.

Install writes, for the user's client (its folder: `donegate.clients.homes`), as for Codex:

- a stub at a neutral path, `<client folder>/hooks/stop-<hash>` (the stubs of `donegate.claude.stubs`):
  the Stop launcher with `--managed --client <name>`. Every session of the account runs it; a stop
  outside every sealed repository passes quietly. The command the client runs is the stub's path alone;
- the hook where the client reads it, at the user level (outside every repository the agent works in):
  Gemini `settings.json` `hooks.AfterAgent` and Qwen Code `settings.json` `hooks.Stop` (timeouts in
  milliseconds), Copilot a file of the kit's own, `hooks/gate.json` `hooks.agentStop` (`timeoutSec`);
  each timeout above the kit's own deadline, which answers block first;
- the PreToolUse guard (`donegate.install.guard`, through a `pretooluse-<hash>` stub) for every tool:
  Gemini `BeforeTool`, Copilot `preToolUse`, Qwen Code `PreToolUse`, answered in the form each obeys;
- with REPO, the client's trust of REPO (`homes.trust`), so no `--skip-trust`, `--trust-folder` or
  `GEMINI_CLI_TRUST_WORKSPACE` is needed.

The kit's hook entries are the ones whose command is a kit stub: uninstall takes out exactly those (the
user's own hooks stay), and the stubs; a folder's trust stays (it is the person's decision as much as
the kit's).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from donegate import config, paths
from donegate.claude.settings import GUARD_TIMEOUT, check_scripts, guard_script, launch_words, stop_script
from donegate.clients import homes
from donegate.core.finding import ERROR, OK, WARNING, Finding
from donegate.errors import DonegateError
from donegate.claude import stubs

NAMES = {"gemini": "Gemini CLI", "copilot": "Copilot CLI", "qwen": "Qwen Code"}
EVENTS = {"gemini": "AfterAgent", "copilot": "agentStop", "qwen": "Stop"}
GUARDS = {"gemini": "BeforeTool", "copilot": "preToolUse", "qwen": "PreToolUse"}  # every tool: no matcher
COPILOT_FILE = "gate.json"  # Copilot reads every hooks/*.json of its folder; a neutral name


def _stub(client: str, home: Path, state: Path, kind: str = "stop") -> Path:
    return home / stubs.FOLDER / f"{kind}-{stubs.tag(state, None)}"


def _is_kit(command: Any) -> bool:
    try:
        return bool(stubs.words(shlex.split(str(command))[0]))
    except (ValueError, IndexError):
        return False


def _hooks_file(client: str, home: Path) -> Path:
    return home / stubs.FOLDER / COPILOT_FILE if client == "copilot" else home / "settings.json"


def _without_kit(client: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a settings file, or Copilot's hooks file) without the kit's hook entries."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    for event in (EVENTS[client], GUARDS[client]):
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        if client == "copilot":
            kept = [h for h in groups if not (isinstance(h, dict) and _is_kit(h.get("bash")))]
        else:
            kept = [g for g in groups if not (isinstance(g, dict) and any(
                isinstance(h, dict) and _is_kit(h.get("command")) for h in g.get("hooks") or []))]
        hooks = {**hooks, event: kept}
        if not kept:
            del hooks[event]
    return {**data, "hooks": hooks}


def plan(client: str, *, repo: Path | None = None, home: Path | None = None, kit: Path | None = None,
         state: Path | None = None, python: str | None = None, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """What install would write: {"file": hooks file, "data": its JSON, "stubs": {path: text}, "timeout": s,
    "trust": repo or None}."""
    if client not in NAMES:
        raise DonegateError(f"no such client: {client}", "one of: " + ", ".join(NAMES))
    cfg = cfg or config.load()
    home = home or homes.folder(client)
    kit = (kit or paths.KIT_ROOT).resolve()
    state = (state or paths.home()).resolve()
    check_scripts(kit)
    python = python or os.path.abspath(sys.executable)
    stub, guard = _stub(client, home, state), _stub(client, home, state, "pretooluse")
    site_flags = ("-S",) if paths.is_checkout(kit) else ()  # the Stop launcher runs site.main() itself
    words = launch_words(stop_script(kit), python=python, home=state, managed=True, flags=site_flags) + ["--client", client]
    guard_words = launch_words(guard_script(kit), python=python, home=state, flags=site_flags)
    timeout = config.hook_timeout(cfg)
    file = _hooks_file(client, home)
    data = _without_kit(client, homes.read_json(file))
    hooks = dict(data.get("hooks") or {}) if isinstance(data.get("hooks"), dict) else {}
    if client == "copilot":
        data = {"version": 1, **data}
    for event, path, seconds in ((EVENTS[client], stub, timeout), (GUARDS[client], guard, GUARD_TIMEOUT)):
        command = shlex.quote(str(path))
        entry: dict[str, Any] = ({"type": "command", "bash": command, "timeoutSec": seconds} if client == "copilot" else
                                 {"hooks": [{"type": "command", "command": command, "timeout": seconds * 1000}]})
        hooks[event] = [*(hooks.get(event) or []), entry]
    data["hooks"] = hooks
    return {"file": file, "data": data, "stubs": {str(stub): stubs.text(words), str(guard): stubs.text(guard_words)},
            "timeout": timeout, "home": home, "trust": repo}


def install(client: str, **kw: Any) -> dict[str, Any]:
    p = plan(client, **kw)
    stubs.write(p["stubs"])
    homes.write_json(p["file"], p["data"])
    p["trusted_now"] = homes.trust(client, p["home"], p["trust"]) if p["trust"] is not None else False
    return p


def uninstall(client: str, home: Path | None = None) -> tuple[Path, str]:
    home = home or homes.folder(client)
    file = _hooks_file(client, home)
    data = homes.read_json(file)
    left = _without_kit(client, data)
    folder = home / stubs.FOLDER
    mine = [str(p) for p in folder.iterdir() if p.name.startswith(("stop-", "pretooluse-"))] if folder.is_dir() else []
    if left == data and not [p for p in mine if stubs.words(p)]:
        return file, "nothing of the kit's was there"
    stubs.remove(mine)
    if client == "copilot" and not (left.get("hooks") or {}):
        file.unlink(missing_ok=True)
    else:
        homes.write_json(file, left)
    return file, "the Stop hook, the guard and their stubs removed; the rest of the file, and the folders' trust, kept"


def _kit_entries(client: str, data: dict[str, Any], event: str = "") -> list[dict[str, Any]]:
    groups = (data.get("hooks") or {}).get(event or EVENTS[client]) if isinstance(data.get("hooks"), dict) else None
    if not isinstance(groups, list):
        return []
    if client == "copilot":
        return [h for h in groups if isinstance(h, dict) and _is_kit(h.get("bash"))]
    return [h for g in groups if isinstance(g, dict) for h in g.get("hooks") or []
            if isinstance(h, dict) and _is_kit(h.get("command"))]


def _claude_install(repo: Path) -> bool:
    """Whether the repository's own Claude Code settings hold the kit's Stop hook (Copilot runs it too)."""
    for name in ("settings.json", "settings.local.json"):
        data = homes.read_json(repo / ".claude" / name) if (repo / ".claude" / name).is_file() else {}
        for g in ((data.get("hooks") or {}).get("Stop") or []) if isinstance(data.get("hooks"), dict) else []:
            for h in (g.get("hooks") or []) if isinstance(g, dict) else []:
                if isinstance(h, dict) and (_is_kit(h.get("command")) or "stop_gate" in str(h.get("command"))):
                    return True
    return False


def check(client: str, repo: Path, home: Path | None = None, state: Path | None = None) -> list[Finding]:
    """Doctor's checks for one client and the folder a session starts in: the hook is there and runs the kit
    for this state root, the client will run it there (trusted, hooks on), and what is weaker than under
    Claude Code."""
    home = home or homes.folder(client)
    state = (state or paths.home()).resolve()
    name, fix = NAMES[client], f"donegate install --client {client} {repo}"
    file = _hooks_file(client, home)
    try:
        entries = _kit_entries(client, homes.read_json(file))
    except DonegateError as exc:
        return [Finding(ERROR, exc.message, str(file), exc.fix or "")]
    out: list[Finding] = []
    via_claude = client == "copilot" and _claude_install(repo)
    if not entries and not via_claude:
        return [Finding(ERROR, f"no gate hook in {name}'s user configuration: {name} sessions are not gated",
                        str(file), fix)]
    for h in entries:
        words = stubs.words(shlex.split(str(h.get("command") or h.get("bash")))[0])
        if not words:
            out.append(Finding(ERROR, f"the {EVENTS[client]} hook's stub is gone: {name} fails open", str(file), fix))
        elif "--home" in words and words[words.index("--home") + 1] != str(state):
            out.append(Finding(WARNING, f"the {EVENTS[client]} hook runs the kit for another state root",
                               words[words.index("--home") + 1], fix))
        else:
            out.append(Finding(OK, f"{EVENTS[client]} hook declared in {name}'s user configuration", str(file)))
    if via_claude:
        out.append(Finding(OK, "Copilot CLI runs this repository's Claude Code Stop hook too (in a trusted folder)",
                           str(repo / ".claude")))
    out += _trusted(client, home, repo, name, fix, needed=client != "copilot" or (via_claude and not entries))
    out += _disabled(client, home, repo, name)
    if client != "copilot" or entries:
        guarded = _kit_entries(client, homes.read_json(file), GUARDS[client])
        out.append(Finding(OK, f"{GUARDS[client]} guard declared", str(file)) if guarded else
                   Finding(WARNING, f"no {GUARDS[client]} guard: the agent's tools can read the store and the hook",
                           str(file), fix))
    out.append(Finding(WARNING, f"weaker than under Claude Code: the guard is a tripwire and no sandbox or deny rules "
                                f"cover the kit's folders or the hooks' own file for {name} (a program of the agent's own can "
                                f"read or edit them; docs/{client}.md)", str(file)))
    return out


def _trusted(client: str, home: Path, repo: Path, name: str, fix: str, needed: bool) -> list[Finding]:
    if not homes.folder_trust_on(client, home):
        return []
    try:
        ok = homes.is_trusted(client, home, repo)
    except DonegateError as exc:
        return [Finding(ERROR, exc.message, str(homes.trust_file(client, home)), exc.fix or "")]
    if ok:
        return [Finding(OK, f"{repo} is a folder {name} trusts", str(homes.trust_file(client, home)))]
    what = {"gemini": "Gemini CLI refuses to run headless in a folder it does not trust, and asks interactively",
            "qwen": "Qwen Code runs an untrusted folder in safe mode",
            "copilot": "Copilot CLI skips a repository's hooks (its .claude/settings.json, .github/hooks) in a "
                       "folder it does not trust: the agent ends ungated"}[client]
    return [Finding(ERROR if needed else WARNING, f"{repo} is not a trusted folder: {what}",
                    str(homes.trust_file(client, home)), fix + " (writes the trust), or trust it in " + name)]


def _disabled(client: str, home: Path, repo: Path, name: str) -> list[Finding]:
    """Settings that switch the client's hooks off, at the user or the project level."""
    out = []
    project = {"gemini": repo / ".gemini" / "settings.json", "qwen": repo / ".qwen" / "settings.json"}.get(client)
    for file in [home / "settings.json"] + ([project] if project else []):
        try:
            data = homes.read_json(file)
        except DonegateError:
            continue
        hc: dict[str, Any] = data["hooksConfig"] if isinstance(data.get("hooksConfig"), dict) else {}
        if client == "gemini" and hc.get("enabled") is False:
            out.append(Finding(ERROR, "hooksConfig.enabled is false: Gemini CLI runs no hook at all", str(file),
                               "remove hooksConfig.enabled from that file"))
        if client == "gemini" and any(_is_kit(d) for d in hc.get("disabled") or []):
            out.append(Finding(ERROR, "hooksConfig.disabled names the gate's hook: Gemini CLI skips it", str(file),
                               "remove it from hooksConfig.disabled"))
        if data.get("disableAllHooks") is True:
            out.append(Finding(ERROR, f"disableAllHooks is true: {name} runs no hook at all", str(file),
                               "remove disableAllHooks from that file"))
    return out


def copilot_skips(repo: Path, env: dict[str, str]) -> list[Finding]:
    """Plain doctor's word on a Claude Code install where this account has used Copilot CLI (its folder exists):
    Copilot runs the repository's Claude Code Stop hook in a folder it trusts, and skips it silently elsewhere."""
    home = homes.folder("copilot", env)
    if not home.is_dir():
        return []
    try:
        if homes.is_trusted("copilot", home, repo) or installed("copilot", home):
            return []
    except DonegateError:
        return []
    return [Finding(WARNING, f"Copilot CLI is used on this account and does not trust {repo}: a Copilot session there "
                             "skips this Claude Code install's Stop hook and ends ungated", str(homes.trust_file("copilot", home)),
                    f"trust the folder in Copilot, or donegate install --client copilot {repo}")]


def installed(client: str, home: Path | None = None) -> bool:
    """Whether the client's user configuration holds the kit's Stop hook (for `status`)."""
    try:
        return bool(_kit_entries(client, homes.read_json(_hooks_file(client, home or homes.folder(client)))))
    except DonegateError:
        return False
