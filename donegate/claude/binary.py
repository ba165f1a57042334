"""Which Claude Code the kit runs, and the version its checkout pins."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from donegate import paths
from donegate.errors import DonegateError

CLAUDE_ENV = "DONEGATE_CLAUDE"
# The oldest release the kit is proven on (`make e2e CLAUDE_VERSION=2.1.197` and CI's compatibility
# set); the newest is the one package.json pins. Older releases lack what the kit relies on (exec-form
# hooks with `args`); newer ones are unproven until the e2e tests ran on them (claude-code.md).
OLDEST = "2.1.197"
# The newest release the kit is proven on, carried by the package itself: a wheel has no package.json
# (tests/claude/test_binary.py holds it equal to the checkout's pin).
NEWEST = "2.1.332"


def find_claude() -> str:
    """$DONEGATE_CLAUDE, else the kit's pinned node_modules/.bin/claude, else `claude` on PATH."""
    env = os.environ.get(CLAUDE_ENV)
    if env:
        path = Path(env).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        found = shutil.which(env)
        if found:
            return found
        raise DonegateError(
            f"{CLAUDE_ENV}={env} is not an executable Claude Code binary",
            f"point {CLAUDE_ENV} at the `claude` executable, or unset it to use the kit's own",
        )
    pinned = paths.KIT_ROOT / "node_modules" / ".bin" / "claude"
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return str(pinned)
    found = shutil.which("claude")
    if found:
        return found
    from donegate.core import kit as installation

    raise DonegateError(
        "Claude Code (`claude`) is not installed",
        f"{installation.claude_install(high=supported_range()[1])}, or set {CLAUDE_ENV} to its path",
    )


def executable() -> str | None:
    """The `claude` the reviewers run inside the hook, resolved now (None: none found; the hook then
    looks for the kit's pinned one, else on PATH, and the reviewers report it missing)."""
    try:
        return os.path.abspath(find_claude())
    except DonegateError:
        return None


def pinned_version() -> str | None:
    """The checkout's package.json pin (what `npm ci` installs), else the release the package was proven on."""
    try:
        pkg = json.loads((paths.KIT_ROOT / "package.json").read_text(encoding="utf-8"))
        return pkg["dependencies"]["@anthropic-ai/claude-code"]
    except (OSError, ValueError, KeyError, TypeError):
        return NEWEST


def _key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def supported_range() -> tuple[str, str]:
    return OLDEST, pinned_version() or NEWEST


def support(version: str) -> str:
    """"ok" inside the supported range, "older" below it, "newer" above it, "unknown" unparseable."""
    key, (low, high) = _key(version), supported_range()
    if not key:
        return "unknown"
    if key < _key(low):
        return "older"
    if key > _key(high):
        return "newer"
    return "ok"
