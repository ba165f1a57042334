"""`donegate install --client codex`, `uninstall --client codex`, and doctor's Codex checks.

Install writes, for the user's Codex (`$CODEX_HOME`, default `~/.codex`; every session of the account,
like Claude Code's `--scope user`: a stop outside every sealed repository passes quietly):

- two stubs at a neutral path, `$CODEX_HOME/hooks/stop-<hash>` and `pretooluse-<hash>` (the same
  stubs as Claude Code's, `donegate.claude.stubs`): the Stop launcher with `--managed --client codex`,
  and the guard. Codex runs a hook command through a shell and accepts only a string (an argument list
  makes it ignore the whole file), so the command is the stub's path alone;
- the kit's block in `config.toml` (`donegate.codex.userconfig`): the Stop hook with a timeout above
  the kit's own deadline, the PreToolUse guard for `Bash`, their `trusted_hash` entries (no
  `--dangerously-bypass-hook-trust` needed), and, with `--sandbox auto|on`, a permission profile
  (`:workspace` plus reads denied of the kit, the state root, the stubs and config.toml itself).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from donegate import config, paths
from donegate.claude.settings import GUARD_TIMEOUT, check_scripts, guard_script, launch_words, stop_script
from donegate.codex import trust, userconfig
from donegate.core.finding import ERROR, OK, WARNING, Finding
from donegate.core.util import atomic_write
from donegate.errors import DonegateError
from donegate.claude import stubs

MATCHER = "Bash"  # Codex 0.169.0 names its shell tool `Bash` to hooks (`exec_command` matches nothing)


def _stub_paths(codex: Path, home: Path) -> tuple[Path, Path]:
    folder = codex / stubs.FOLDER
    tag = stubs.tag(home, None)
    return folder / f"stop-{tag}", folder / f"pretooluse-{tag}"


def deny_paths(codex: Path, kit: Path | None = None, home: Path | None = None) -> list[Path]:
    """What the permission profile denies reading: the kit, the state root, the stubs, the hooks' config.

    Never the folder Codex itself runs from: Codex 0.169.0 starts its sandbox helper from its own binary,
    and a session whose profile denies it fails to start (`bwrap: execvp .../codex-linux-sandbox:
    Permission denied`). A protected folder holding it (a kit checkout with Codex in its node_modules)
    is denied entry by entry, that one left out."""
    holders = codex_homes(kit)
    state = (home or paths.home()).resolve()
    out: list[Path] = []
    for root in paths.protected_roots(kit, home):
        inside = [h for h in holders if paths.is_within(h, root)]
        if not inside:
            out.append(root)
            continue
        if root == state:  # the store's folders, made now: an entry made later would not be denied
            for name in ("acceptance", "state", "logs"):
                (root / name).mkdir(exist_ok=True)
        out += [p for p in sorted(root.iterdir()) if not any(paths.is_within(h, p) for h in inside)]
    return out + [codex / stubs.FOLDER, userconfig.config_path(codex)]


def codex_homes(kit: Path | None = None) -> list[Path]:
    """Where Codex's executables lie: the checkout's `node_modules/@openai`, and the `codex` on PATH."""
    import shutil

    out = []
    pinned = (kit or paths.KIT_ROOT).resolve() / "node_modules" / "@openai"
    if pinned.is_dir():
        out.append(pinned)
    found = shutil.which("codex")
    if found:
        out.append(Path(os.path.realpath(found)).parent)
    return out


def plan(*, sandbox: str = "auto", codex: Path | None = None, kit: Path | None = None, home: Path | None = None,
         python: str | None = None, cfg: dict[str, Any] | None = None, stop: bool = True) -> dict[str, Any]:
    """What install would write: {"config": path, "text": new text, "stubs": {path: text}, "trusted": {...},
    "profile": bool, "why_no_profile": str, "timeout": int}. `stop=False`: the guard and the profile without
    the Stop hook (an experiment's ungated baseline)."""
    import sys

    cfg = cfg or config.load()
    codex = codex or userconfig.codex_home()
    kit = (kit or paths.KIT_ROOT).resolve()
    home = (home or paths.home()).resolve()
    python = python or os.path.abspath(sys.executable)
    check_scripts(kit)
    file = userconfig.config_path(codex)
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    base = userconfig.parse(userconfig.strip(text), file)
    why = "" if sandbox != "off" else "--sandbox off"
    if not why:
        why = userconfig.profile_conflict(base)
        if why and sandbox == "on":
            raise DonegateError(f"--sandbox on: {why}", f"remove it from {file}, or pass --sandbox off (the guard alone)")
    stop_stub, guard_stub = _stub_paths(codex, home)
    guard_flags = ("-S",) if paths.is_checkout(kit) else ()  # the Stop launcher's too: it runs site.main() itself
    stop_words = launch_words(stop_script(kit), python=python, home=home, managed=True,
                              flags=guard_flags) + ["--client", "codex"]
    guard_words = launch_words(guard_script(kit), python=python, home=home, flags=guard_flags)
    timeout = config.hook_timeout(cfg)
    top, body, trusted = userconfig.block(file, base, shlex.quote(str(stop_stub)) if stop else None, timeout,
                                          shlex.quote(str(guard_stub)), GUARD_TIMEOUT, MATCHER,
                                          None if why else deny_paths(codex, kit, home))
    return {"config": file, "text": userconfig.compose(text, top, body, file), "trusted": trusted,
            "stubs": {str(stop_stub): stubs.text(stop_words), str(guard_stub): stubs.text(guard_words)},
            "profile": not why, "why_no_profile": why, "timeout": timeout}


def install(**kw: Any) -> dict[str, Any]:
    p = plan(**kw)
    p["config"].parent.mkdir(parents=True, exist_ok=True)
    stubs.write(p["stubs"])
    atomic_write(p["config"], p["text"].encode(), 0o600)
    return p


def uninstall(codex: Path | None = None) -> tuple[Path, str]:
    codex = codex or userconfig.codex_home()
    file = userconfig.config_path(codex)
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    if not userconfig.kit_block(text):
        return file, "nothing of the kit's was there"
    folder = codex / stubs.FOLDER
    mine = [str(p) for p in folder.iterdir()] if folder.is_dir() else []
    stubs.remove(mine)
    atomic_write(file, userconfig.strip(text).encode(), 0o600)
    return file, "the hooks, their trust and the permission profile removed; the rest of the file kept"


def check(codex: Path | None = None, home: Path | None = None) -> list[Finding]:
    """Doctor's Codex checks: the block is there, Codex will run it (trusted, hooks on), the stubs run the
    kit for this state root, and what is weaker than under Claude Code."""
    codex = codex or userconfig.codex_home()
    home = (home or paths.home()).resolve()
    file = userconfig.config_path(codex)
    fix = "donegate install --client codex"
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    if not userconfig.kit_block(text):
        return [Finding(ERROR, "no gate hooks in Codex's user config: Codex sessions are not gated", str(file), fix)]
    data = userconfig.parse(text, file)
    out: list[Finding] = []
    if (data.get("features") or {}).get("hooks") is False:
        out.append(Finding(ERROR, "[features] hooks = false: Codex runs no hook at all", str(file), "remove that line"))
    state = (data.get("hooks") or {}).get("state") or {}
    for event, groups in userconfig.hooks_of(text).items():
        if event not in trust.LABELS:
            continue
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks") or []):
                try:  # Codex runs the command through a shell: its first word is the stub
                    words = stubs.words(shlex.split(str(handler.get("command", "")))[0])
                except (ValueError, IndexError):
                    words = []
                if not words:
                    continue
                k = trust.key(str(file), event, gi, hi)
                want = trust.trusted_hash(event, handler, group.get("matcher"))
                got = (state.get(k) or {}).get("trusted_hash")
                if got != want:
                    out.append(Finding(ERROR, f"the {event} hook is not trusted as it stands (Codex skips it silently)",
                                       k, fix + " (writes the trust again)"))
                else:
                    out.append(Finding(OK, f"{event} hook declared and trusted", k))
                if "--home" in words and words[words.index("--home") + 1] != str(home):
                    out.append(Finding(WARNING, f"the {event} hook runs the kit for another state root",
                                       words[words.index("--home") + 1], fix))
    if "sandbox_mode" in data or data.get("default_permissions") != userconfig.PROFILE:
        out.append(Finding(WARNING, "no permission profile over the kit: a Codex agent's commands can read the hidden "
                                    "tests and the hooks' config; only the guard (a tripwire) stands in the way",
                           str(file), "remove sandbox_mode from the config, then " + fix))
    out.append(Finding(WARNING, "weaker than under Claude Code: a session started with --sandbox, "
                                "--dangerously-bypass-approvals-and-sandbox or -c sandbox_mode=... runs without the "
                                "profile; the denied folders' paths are listed to the model; file tools other than the "
                                "shell are not guarded (docs/codex.md)", str(file)))
    return out
