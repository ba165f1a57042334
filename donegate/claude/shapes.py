"""What Claude Code accepts when it reads a settings file, and how it reads what is in one.

Measured against Claude Code 2.1.197: a value of the wrong shape costs the whole file, its hooks or
one event's hooks, silently (`check_json`, `check_shapes` name each). `parse_hook` reads a hook entry
in exec or shell form; `rule_covers` and `sandbox_path_covers` read the path forms of a deny rule and
of a sandbox path list (`//abs`, `~/home`, a single `/` and a bare relative path). Install refuses to
merge into a file these reject; doctor reports each finding.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from donegate import paths
from donegate.claude import stubs
from donegate.core.finding import ERROR, WARNING, Finding

DROPS_FILE = "Claude Code silently ignores the whole file"
DROPS_HOOKS = "Claude Code silently ignores every hook in this file"
DROPS_EVENT = "Claude Code silently ignores the hooks of this event"
HOOK_TYPES = ("command", "prompt", "agent", "http")
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
SANDBOX_BOOLS = ("enabled", "failIfUnavailable", "allowUnsandboxedCommands", "autoAllowBashIfSandboxed",
                 "enableWeakerNestedSandbox")
FS_LISTS = ("denyRead", "denyWrite", "allowWrite", "allowRead")
DEFAULT_HOOK_TIMEOUT = 600  # seconds, Claude Code's default for command hooks
DEFAULT_BLOCK_CAP = 8
MISSING = object()  # a key that is not there (None is a value)


def _show(value: Any) -> str:
    kind = {dict: "an object", list: "a list", str: "the string", bool: "the boolean", type(None): "null"}.get(type(value))
    if kind is None:
        kind = "the number" if isinstance(value, (int, float)) else type(value).__name__
    if isinstance(value, (dict, list)):
        return kind
    return f"{kind} {json.dumps(value)[:60]}"


def check_json(text: str, where: str) -> tuple[Any, list[Finding]]:
    """(parsed data or MISSING, findings) for the text of one settings file."""
    try:
        return json.loads(text), []
    except ValueError as exc:
        lineno, colno = getattr(exc, "lineno", 0), getattr(exc, "colno", 0)
        m = re.search(r",\s*[}\]]", text)
        if m:
            line = text.count("\n", 0, m.start()) + 1
            what = f"a trailing comma at line {line}: not valid JSON, so {DROPS_FILE}"
            fix = f"remove the comma before the closing bracket on line {line}"
        else:
            what = f"not valid JSON ({getattr(exc, 'msg', exc)} at line {lineno}, column {colno}), so {DROPS_FILE}"
            fix = "fix the JSON syntax (comments and single quotes are not JSON)"
        return MISSING, [Finding(ERROR, what, where, fix)]


def check_shapes(data: Any, where: str) -> list[Finding]:
    """Every value of a parsed settings file that Claude Code 2.1.197 rejects (seen), each named."""
    out: list[Finding] = []

    def bad(path: str, value: Any, expected: str, fix: str, drops: str = DROPS_FILE) -> None:
        out.append(Finding(ERROR, f"{path} is {_show(value)}, expected {expected}: {drops}", where, fix))

    if not isinstance(data, dict):
        bad("the top level", data, "an object", "make the file a JSON object: {...}")
        return out
    hooks = data.get("hooks", MISSING)
    if hooks is not MISSING and not isinstance(hooks, dict):
        # Seen: a list, null or a string here costs the file its hooks, not its other settings.
        bad("hooks", hooks, "an object keyed by event name", 'write "hooks": {"Stop": [...], ...}', DROPS_HOOKS)
    elif isinstance(hooks, dict):
        for event, groups in hooks.items():
            if groups is None:
                continue  # tolerated
            if not isinstance(groups, list):
                bad(f"hooks.{event}", groups, "a list of matcher groups", f'write "{event}": [{{"hooks": [...]}}]', DROPS_EVENT)
                continue
            for i, group in enumerate(groups):
                gpath = f"hooks.{event}[{i}]"
                if not isinstance(group, dict):
                    bad(gpath, group, 'an object {"hooks": [...]}', 'wrap it: {"hooks": [...]}')
                    continue
                if "matcher" in group and not isinstance(group["matcher"], str):
                    bad(f"{gpath}.matcher", group["matcher"], "a string", 'write the matcher as a string, e.g. "Bash|Read", or leave it out')
                inner = group.get("hooks", MISSING)
                if not isinstance(inner, list):
                    bad(f"{gpath}.hooks", None if inner is MISSING else inner, "a list of hooks", f'give {gpath} a list: "hooks": [{{"type": "command", ...}}]')
                    continue
                for j, hook in enumerate(inner):
                    hpath = f"{gpath}.hooks[{j}]"
                    if not isinstance(hook, dict):
                        bad(hpath, hook, "an object", 'write {"type": "command", "command": "..."}')
                        continue
                    kind = hook.get("type")
                    if kind not in HOOK_TYPES:
                        bad(f"{hpath}.type", kind, " or ".join(f'"{t}"' for t in HOOK_TYPES), 'use "type": "command" for a script')
                    if kind == "command" and not isinstance(hook.get("command"), str):
                        bad(f"{hpath}.command", hook.get("command"), "a string", "give the command line as one string")
                    if "timeout" in hook:
                        t = hook["timeout"]
                        if isinstance(t, bool) or not isinstance(t, (int, float)) or t <= 0:
                            bad(f"{hpath}.timeout", t, "a positive number of seconds", "write the timeout as a number without quotes, e.g. 151")
    perms = data.get("permissions", MISSING)
    if perms is not MISSING:
        if not isinstance(perms, dict):
            bad("permissions", perms, "an object", 'write "permissions": {"deny": [...]}')
        else:
            for key in ("allow", "deny", "ask", "additionalDirectories"):
                if key in perms:
                    value = perms[key]
                    if not isinstance(value, list):
                        bad(f"permissions.{key}", value, "a list of strings", f'write "{key}": [{json.dumps(value)}]' if isinstance(value, str) else f"make permissions.{key} a list")
                        continue
                    for k, item in enumerate(value):
                        if not isinstance(item, str):
                            out.append(Finding(WARNING, f"permissions.{key}[{k}] is {_show(item)}, not a string: Claude Code ignores it", where, "write the rule as a string"))
            if "defaultMode" in perms and perms["defaultMode"] not in MODES:
                bad("permissions.defaultMode", perms["defaultMode"], "one of " + ", ".join(MODES), "use one of the modes Claude Code knows, or leave it out")
    if "disableAllHooks" in data and not isinstance(data["disableAllHooks"], bool):
        bad("disableAllHooks", data["disableAllHooks"], "a boolean", "remove disableAllHooks")
    box = data.get("sandbox", MISSING)
    if box is not MISSING:
        if not isinstance(box, dict):
            bad("sandbox", box, "an object", 'write "sandbox": {"enabled": true, ...} (donegate install writes it)')
        else:
            for key in SANDBOX_BOOLS:
                if key in box and not isinstance(box[key], bool):
                    bad(f"sandbox.{key}", box[key], "true or false", f"write sandbox.{key} without quotes")
            for sub in ("filesystem", "network"):
                if sub in box and not isinstance(box[sub], dict):
                    bad(f"sandbox.{sub}", box[sub], "an object", f"make sandbox.{sub} an object")
            fs = box.get("filesystem")
            if isinstance(fs, dict):
                for key in FS_LISTS:
                    if key in fs and not isinstance(fs[key], list):
                        bad(f"sandbox.filesystem.{key}", fs[key], "a list of paths", f"write sandbox.filesystem.{key} as a list: [...]")
    if "env" in data and not isinstance(data["env"], dict):
        bad("env", data["env"], "an object of variables", "write env as an object, or leave it out")
    if "model" in data and not isinstance(data["model"], str):
        bad("model", data["model"], "a string", "write the model name as a string")
    return out


def parse_hook(hook: dict) -> tuple[dict[str, str], str | None, str | None]:
    """(state root and the like, interpreter, script) of a hook entry, exec form or shell form."""
    args = hook.get("args")
    command = hook["command"]
    inner = stubs.words(command) if not args else []
    if inner:  # the kit's stub: the words written inside it
        command, args = inner[0], inner[1:]
    if not isinstance(args, list):
        return parse_command(command)
    args = [a for a in args if isinstance(a, str)]
    script = next((a for a in args if a.endswith(".py")), None)
    env = {"DONEGATE_HOME": args[args.index("--home") + 1]} if "--home" in args[:-1] else {}
    return env, command, script


def parse_command(command: str) -> tuple[dict[str, str], str | None, str | None]:
    """(variables set before it, interpreter, script) of a hook command line."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}, None, None
    env = {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    if not words:
        return env, None, None
    script = next((w for w in words[1:] if w.endswith(".py")), None)
    return env, words[0], script


def rule_covers(rule: Any, tool: str, target: Path, repo: Path) -> bool:
    """Whether a deny rule covers every file below `target` for `tool`."""
    if not isinstance(rule, str):
        return False
    m = re.fullmatch(r"\s*(\w+)\s*(?:\((.*)\))?\s*", rule)
    if not m or m.group(1) != tool:
        return False
    spec = m.group(2)
    if spec is None or spec.strip() == "//**":
        return True  # the tool is denied everywhere
    return _path_covers(spec, target, repo, slash_is_project=True)


def sandbox_path_covers(item: str, root: Path, repo: Path) -> bool:
    """Whether a sandbox path list entry (`sandbox.filesystem.denyRead`) covers every file below `root`."""
    return _path_covers(item, root, repo, slash_is_project=False)


def _path_covers(spec: str, target: Path, repo: Path, *, slash_is_project: bool) -> bool:
    """`//abs` is absolute, `~/x` below the home folder, a bare path below the project; a single `/`
    is the project root in a permission rule and (the older form) absolute in a sandbox list. A
    trailing `/**` covers the folder; any other glob covers no whole folder."""
    if spec.startswith("//"):
        base = Path(spec[1:])
    elif spec.startswith("~/"):
        base = Path.home() / spec[2:]
    elif spec.startswith("/"):
        base = repo / spec[1:] if slash_is_project else Path(spec)
    else:
        base = repo / spec.removeprefix("./")
    text = str(base).removesuffix("/**")
    return not re.search(r"[*?[]", text) and paths.is_within(target, Path(text))
