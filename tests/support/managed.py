"""Managed settings for tests, never in the real /etc: a temporary folder mounted over
`/etc/claude-code` with bubblewrap (Claude Code 2.1.197 reads no override variable).

The recipe (claude-code.md): `--dev-bind / /` (the whole machine, devices included), a `--tmpfs /etc`
with each real `/etc` entry bound back read-only, then the test's folder at `/etc/claude-code`.
Everything started inside (Claude Code, its hooks, its own sandbox's bwrap) sees that folder there,
and the real `/etc` is untouched: a write lands in the test's folder or fails.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import require

MANAGED = "/etc/claude-code"


def wrap(folder: Path, *, writable: bool = False) -> list[str]:
    """The bwrap prefix that runs a command with `folder` as /etc/claude-code (skips without bwrap)."""
    bwrap = require.bwrap()
    argv = [bwrap, "--dev-bind", "/", "/", "--tmpfs", "/etc"]
    for name in sorted(os.listdir("/etc")):
        if name == "claude-code":
            continue
        src = os.path.join("/etc", name)
        argv += ["--symlink", os.readlink(src), src] if os.path.islink(src) else ["--ro-bind-try", src, src]
    argv += ["--bind" if writable else "--ro-bind", str(folder), MANAGED, "--die-with-parent", "--"]
    return argv
