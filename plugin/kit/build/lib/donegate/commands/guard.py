"""`donegate guard`: the PreToolUse guard (Claude Code's JSON on stdin; exit 0 or 2)."""

from __future__ import annotations

import sys

from donegate.guard import run_hook


def cmd_guard(args) -> int:
    code, out, err = run_hook(sys.stdin.read())
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    return code


def register(subparsers) -> None:
    p = subparsers.add_parser("guard", help="run the PreToolUse guard (reads Claude Code's JSON on stdin; exits 0 or 2)")
    p.set_defaults(func=cmd_guard)
