"""The managed drop-in: where Claude Code reads machine-wide settings, and what the kit's holds.

See `donegate.install.machine` for what the drop-in is for and how install and uninstall keep what was there.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from donegate.claude import settings as vocab
from donegate.errors import DonegateError

DROP_IN = "donegate.json"
LINUX_DIR = Path("/etc/claude-code")
MACOS_DIR = Path("/Library/Application Support/ClaudeCode")
PINNED_CAP_FLOOR = 20


def managed_root(platform: str | None = None) -> Path:
    """The folder Claude Code reads managed settings from on this platform."""
    platform = platform or sys.platform
    if platform == "darwin":
        return MACOS_DIR
    if platform.startswith("linux"):
        return LINUX_DIR
    raise DonegateError(f"managed settings are not supported on {platform} by this kit", "use the per-repository install")


def drop_in_path(root: Path | None = None) -> Path:
    return (root or managed_root()) / "managed-settings.d" / DROP_IN


def pinned_env(cfg: dict[str, Any]) -> dict[str, str]:
    return {"CLAUDE_CODE_SIMPLE": "0",
            "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": str(max(PINNED_CAP_FLOOR, cfg["max_blocks"] + 2)),
            "LD_PRELOAD": ""}


def drop_in(cfg: dict[str, Any], *, sandbox: bool, root: Path | None = None, kit: Path | None = None,
            home: Path | None = None, python: str | None = None, with_stubs: bool = False) -> Any:
    """The drop-in's content (with `with_stubs`: and the stubs its hooks run, path -> text, and the
    links its deny rules and sandbox name, link -> folder)."""
    root = root or managed_root()
    entries = vocab.kit_entries(cfg, kit=kit, home=home, python=python, managed=True, managed_root=root)
    folder = vocab.abs_pattern(root)
    deny = list(entries["deny"]) + [f"{tool}({folder}/**)" for tool in vocab.DENY_TOOLS]
    data: dict[str, Any] = {
        "hooks": {"Stop": [entries["Stop"]], "PreToolUse": [entries["PreToolUse"]]},
        "env": pinned_env(cfg),
        "permissions": {"deny": deny},
    }
    if sandbox:
        data["sandbox"] = {**vocab.SANDBOX_FLAGS,
                           "filesystem": {"denyRead": list(entries["sandbox_paths"]),
                                          "denyWrite": [*entries["sandbox_paths"], folder]}}
    return (data, entries["stubs"], entries["links"]) if with_stubs else data
