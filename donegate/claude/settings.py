"""Claude Code's settings vocabulary as the kit writes it: the hooks in exec form, the deny rules,
the sandbox keys, and the guard settings of the kit's own headless runs.

`donegate install` merges these entries into a repository's settings file, `donegate install
--managed` into the managed drop-in, `donegate doctor` checks a file against them, and the headless
runs pass `guard_settings()` with `--settings`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from donegate import _layout, config, git, paths
from donegate.claude import binary
from donegate.errors import DonegateError

SETTINGS = Path(".claude") / "settings.json"
DENY_TOOLS = ("Read", "Edit", "Write", "Grep", "Glob", "NotebookEdit")
SETTINGS_RULE_TOOLS = ("Edit", "Write")
SETTINGS_PATTERNS = ("/.claude/settings*.json", "~/.claude/settings*.json")  # project root, home
GUARD_TIMEOUT = 10  # seconds; the guard takes tens of milliseconds
SANDBOX_FLAGS = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False,
                 "autoAllowBashIfSandboxed": True}
SANDBOX_LISTS = ("denyRead", "denyWrite")
SANDBOX_DEPS = ("bwrap", "socat")
SANDBOX_FIX = "install bubblewrap and socat (Debian/Ubuntu: sudo apt-get install bubblewrap socat), or pass --sandbox off"


def stop_script(kit: Path | None = None) -> Path:
    return paths.hooks_dir(kit) / _layout.STOP_LAUNCHER


def guard_script(kit: Path | None = None) -> Path:
    return paths.hooks_dir(kit) / _layout.GUARD_LAUNCHER


def check_scripts(kit: Path | None = None) -> None:
    """The launchers must exist where the commands will point: a missing script opens the gate."""
    for script in (stop_script(kit), guard_script(kit)):
        if not script.is_file():
            from donegate import installation

            raise DonegateError(
                f"{script} does not exist: the kit's hook launchers are neither beside its package nor in "
                f"{_layout.SHARED_HOOKS} of its installation",
                installation.reinstall(kit),
            )


def quote(word: str) -> str:
    """Double quotes for the shell Claude Code runs hook commands with (`$`, `` ` ``, `"`, `\\` escaped)."""
    return '"' + re.sub(r'([$`"\\])', r"\\\1", word) + '"'


def hook_timeout(cfg: dict[str, Any]) -> int:
    """Whole seconds strictly above the kit's worst case: tests, reviewers when on, and the margin."""
    return config.hook_timeout(cfg)


protected_roots = paths.protected_roots  # what the deny rules and the sandbox cover


def abs_pattern(path: Path) -> str:
    """Claude Code's absolute path form: `//abs/path` (a single `/` would be relative to the project)."""
    return "/" + str(path)


def deny_rules(kit: Path | None = None, home: Path | None = None) -> list[str]:
    rules = [f"{tool}({abs_pattern(root)}/**)" for root in protected_roots(kit, home) for tool in DENY_TOOLS]
    rules += [f"{tool}({pattern})" for pattern in SETTINGS_PATTERNS for tool in SETTINGS_RULE_TOOLS]
    return rules


def hook_command(script: Path, *, python: str, home: Path, flags: tuple[str, ...] = ()) -> str:
    """The older shell form, `DONEGATE_HOME="..." "/abs/python" [flags] "/abs/script"` (recognised by
    uninstall and doctor; install writes `exec_hook` now)."""
    return " ".join([f"DONEGATE_HOME={quote(str(home))}", quote(python), *flags, quote(str(script))])


def git_executable() -> str:
    """The git the hook will run, resolved now (the system's, not a PATH the session can change)."""
    return git.executable()


def exec_hook(script: Path, *, python: str, home: Path, flags: tuple[str, ...] = (), repo: Path | None = None,
              managed: bool = False, timeout: int, claude: str | None = None) -> dict[str, Any]:
    """A hook in exec form: `command` is run directly with `args`, no shell in between."""
    args = ["-I", *flags, str(script), "--home", str(home)]
    if repo is not None:
        args += ["--repo", str(repo)]
    if managed:
        args.append("--managed")
    args += ["--git", git_executable()]
    if claude:
        args += ["--claude", claude]
    return {"type": "command", "command": python, "args": args, "timeout": timeout}


def hook_words(hook: Any) -> list[str]:
    """The command and its arguments of one hook entry (shell form: the command line as one word)."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return []
    args = hook.get("args")
    return [hook["command"], *(a for a in args if isinstance(a, str))] if isinstance(args, list) else [hook["command"]]


def sandbox_available() -> tuple[bool, str]:
    """(available, why not): Linux needs bubblewrap and socat on PATH; macOS has Seatbelt built in."""
    if sys.platform == "darwin":
        return True, ""
    if not sys.platform.startswith("linux"):
        return False, f"Claude Code's sandbox does not run on {sys.platform}"
    missing = [d for d in SANDBOX_DEPS if shutil.which(d) is None]
    if missing:
        return False, "missing on PATH: " + ", ".join(missing)
    return True, ""


def want_sandbox(mode: str) -> bool:
    ok, why = sandbox_available()
    if mode == "off":
        return False
    if mode == "on" and not ok:
        raise DonegateError(f"--sandbox on: Claude Code's sandbox cannot run here ({why})", SANDBOX_FIX)
    return ok


def _python() -> str:
    return os.path.abspath(sys.executable)


def kit_entries(cfg: dict[str, Any], *, kit: Path | None = None, home: Path | None = None,
                python: str | None = None, repo: Path | None = None, managed: bool = False) -> dict[str, Any]:
    """The hooks, rules and sandbox folders install adds, before merging."""
    kit = (kit or paths.KIT_ROOT).resolve()
    home = (home or paths.home()).resolve()
    python = python or _python()
    # `-S` (no site module) spares the guard ~10 ms per tool call, but only a checkout's launcher finds
    # the package beside itself; an installed launcher imports it from the interpreter's site-packages.
    guard_flags = ("-S",) if paths.is_checkout(kit) else ()
    from donegate import guard

    return {
        "Stop": {"hooks": [exec_hook(stop_script(kit), python=python, home=home, repo=repo, managed=managed,
                                     timeout=hook_timeout(cfg), claude=binary.executable())]},
        "PreToolUse": {"matcher": guard.MATCHER,
                       "hooks": [exec_hook(guard_script(kit), python=python, home=home, flags=guard_flags,
                                           timeout=GUARD_TIMEOUT)]},
        "deny": deny_rules(kit, home),
        "sandbox_paths": [abs_pattern(r) for r in protected_roots(kit, home)],
    }


def guard_settings() -> dict:
    """The kit's deny rules and PreToolUse guard for its own headless runs.

    Read-only tools are not enough: a writer or reviewer can Read or Grep any absolute path, the
    hidden tests included, and a reviewer's findings go back to the agent. `--setting-sources ""`
    keeps the guarded repository's settings out; these come in through `--settings` instead.
    """
    entries = kit_entries(config.defaults())
    return {"permissions": {"deny": entries["deny"]}, "hooks": {"PreToolUse": [entries["PreToolUse"]]}}
