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

from donegate import _layout, config, paths
from donegate.tree import git
from donegate.claude import stubs
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
            from donegate.core import kit as installation

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
    """The rules by the folders' own paths (an install before the links wrote these; uninstall knows them)."""
    rules = [f"{tool}({abs_pattern(root)}/**)" for root in protected_roots(kit, home) for tool in DENY_TOOLS]
    return rules + settings_rules()


def settings_rules() -> list[str]:
    return [f"{tool}({pattern})" for pattern in SETTINGS_PATTERNS for tool in SETTINGS_RULE_TOOLS]


def hook_command(script: Path, *, python: str, home: Path, flags: tuple[str, ...] = ()) -> str:
    """The older shell form, `DONEGATE_HOME="..." "/abs/python" [flags] "/abs/script"` (recognised by
    uninstall and doctor; install writes `exec_hook` now)."""
    return " ".join([f"DONEGATE_HOME={quote(str(home))}", quote(python), *flags, quote(str(script))])


def git_executable() -> str:
    """The git the hook will run, resolved now (the system's, not a PATH the session can change)."""
    return git.executable()


def launch_words(script: Path, *, python: str, home: Path, flags: tuple[str, ...] = (), repo: Path | None = None,
                 managed: bool = False, claude: str | None = None) -> list[str]:
    """The interpreter, its flags, the launcher and the launcher's arguments: what a hook runs."""
    words = [python, "-I", *flags, str(script), "--home", str(home)]
    if repo is not None:
        words += ["--repo", str(repo)]
    if managed:
        words.append("--managed")
    words += ["--git", git_executable()]
    if claude:
        words += ["--claude", claude]
    return words


def exec_hook(stub: Path, *, timeout: int, on_failure: str | None = None) -> dict[str, Any]:
    """A hook in exec form whose command line names nothing of the kit: the stub's path, no arguments.

    Since 2.1.332 Claude Code shows the model a blocking hook's whole command line; the interpreter,
    the launcher, the state root and the repository are inside the stub (see `donegate.claude.stubs`).
    `on_failure: "block"` (2.1.295): a hook that crashes, cannot start or exits with another code
    refuses the tool call instead of letting it through (measured on 2.1.332 for PreToolUse; 2.1.197
    ignores the key and keeps the file; reported as ignored on Stop, whose launcher blocks by itself)."""
    # `args` present, even empty, is what makes it exec form: without it Claude Code runs `command`
    # through a shell, and CLAUDE_CODE_SHELL_PREFIX from settings `env` wraps it (measured, 2.1.332).
    hook: dict[str, Any] = {"type": "command", "command": str(stub), "args": [], "timeout": timeout}
    if on_failure:
        hook["onFailure"] = on_failure
    return hook


def hook_words(hook: Any) -> list[str]:
    """The command and its arguments of one hook entry (shell form: the command line as one word; a
    kit's stub: the words written inside it)."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return []
    args = hook.get("args")
    if isinstance(args, list) and args:
        return [hook["command"], *(a for a in args if isinstance(a, str))]
    inner = stubs.words(hook["command"])
    return inner if inner else [hook["command"]]


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
                python: str | None = None, repo: Path | None = None, managed: bool = False,
                managed_root: Path | None = None) -> dict[str, Any]:
    """The hooks, the stubs they run (path -> text), rules and sandbox folders install adds, before merging."""
    kit = (kit or paths.KIT_ROOT).resolve()
    home = (home or paths.home()).resolve()
    python = python or _python()
    # `-S` (no site module) spares the guard ~10 ms per tool call, but only a checkout's launcher finds
    # the package beside itself; an installed launcher imports it from the interpreter's site-packages.
    # The Stop launcher runs `site.main()` itself once the first run is started (hooks/stop_gate.py `_site`).
    guard_flags = ("-S",) if paths.is_checkout(kit) else ()
    folder = stubs.folder(managed_root)
    tag = stubs.tag(home, repo)
    stop_words = launch_words(stop_script(kit), python=python, home=home, repo=repo, managed=managed,
                              claude=binary.executable(), flags=guard_flags)
    guard_words = launch_words(guard_script(kit), python=python, home=home, flags=guard_flags)
    stop_stub, guard_stub = folder / f"stop-{tag}", folder / f"pretooluse-{tag}"
    # The deny rules and the sandbox name the protected folders by neutral links beside the stubs:
    # 2.1.332 lists every folder the sandbox hides (and every Read deny rule's) in the system prompt;
    # both follow a link to the folder itself (measured, docs/claude-code.md).
    links = {str(stubs.alias(folder, tag, i)): str(r) for i, r in enumerate(protected_roots(kit, home))}
    hidden = [Path(link) for link in links] + [folder]
    return {
        "Stop": {"hooks": [exec_hook(stop_stub, timeout=hook_timeout(cfg))]},
        "PreToolUse": {"matcher": "|".join(_layout.GUARD_TOOLS),
                       "hooks": [exec_hook(guard_stub, timeout=GUARD_TIMEOUT, on_failure="block")]},
        "stubs": {str(stop_stub): stubs.text(stop_words), str(guard_stub): stubs.text(guard_words)},
        "links": links,
        "deny": [f"{tool}({abs_pattern(h)}/**)" for h in hidden for tool in DENY_TOOLS] + settings_rules(),
        "sandbox_paths": [abs_pattern(h) for h in hidden],
    }


def entry_words(entries: dict[str, Any], event: str) -> list[str]:
    """The words the kit's hook for `event` runs, from `kit_entries` before its stubs are written."""
    hook = entries[event]["hooks"][0]
    return stubs.parse(entries["stubs"][hook["command"]])


def guard_settings() -> dict:
    """The kit's deny rules and PreToolUse guard for its own headless runs.

    Read-only tools are not enough: a writer or reviewer can Read or Grep any absolute path, the
    hidden tests included, and a reviewer's findings go back to the agent. `--setting-sources ""`
    keeps the guarded repository's settings out; these come in through `--settings` instead.
    """
    entries = kit_entries(config.defaults())
    # The kit's own runs need no stub (nothing of theirs reaches the agent): the launcher directly.
    words = entry_words(entries, "PreToolUse")
    hook = {"type": "command", "command": words[0], "args": words[1:], "timeout": GUARD_TIMEOUT}
    return {"permissions": {"deny": entries["deny"]},
            "hooks": {"PreToolUse": [{"matcher": entries["PreToolUse"]["matcher"], "hooks": [hook]}]}}
