"""`donegate doctor FOLDER`: the installation as Claude Code will see it, every check the gate runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from donegate.install.diagnose import diagnose, render
from donegate.core.finding import ERROR


def cmd_doctor(args: argparse.Namespace) -> int:
    if getattr(args, "client", "claude") == "codex":
        from donegate.codex import installing as codex

        findings = codex.check()
        print(f"donegate doctor --client codex {Path(args.repo).expanduser().resolve()}")
        print(render(findings, verbose=args.verbose))
        return 1 if any(f.level == ERROR for f in findings) else 0
    if getattr(args, "client", "claude") in ("gemini", "copilot", "qwen"):
        from donegate.clients import wiring

        repo = Path(args.repo).expanduser().resolve()
        findings = wiring.check(args.client, repo)
        print(f"donegate doctor --client {args.client} {repo}")
        print(render(findings, verbose=args.verbose))
        return 1 if any(f.level == ERROR for f in findings) else 0
    from donegate.claude import stubs

    findings = diagnose(args.repo)
    print(f"donegate doctor {Path(args.repo).expanduser().resolve()}")
    gone = stubs.sweep()  # a deleted clone's or a test's stubs: their hooks could only fail
    if gone:
        print(f"removed {len(gone)} hook stub(s) of installs whose repository or kit is gone (in {stubs.folder()})")
    print(render(findings, verbose=args.verbose))
    return 1 if any(f.level == ERROR for f in findings) else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("doctor", help="check FOLDER's installation as Claude Code will load it there; exit 1 on any error")
    p.add_argument("repo", metavar="FOLDER", help="the folder a session starts in: a repository, a worktree, a subfolder project")
    p.add_argument("-v", "--verbose", action="store_true", help="list the checks that passed too")
    p.add_argument("--client", choices=("claude", "codex", "gemini", "copilot", "qwen"), default="claude",
                   help="check Claude Code's settings (default), or that client's user configuration and trust of FOLDER")
    p.set_defaults(func=cmd_doctor)
