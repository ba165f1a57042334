"""`donegate write REPO --request TEXT`: a separate model writes the acceptance tests, then they are sealed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from donegate import config
from donegate.person import ownership as person
from donegate.models.writer import summary, write


def cmd_write(args: argparse.Namespace) -> int:
    cfg = config.load()
    st, warnings = write(Path(args.repo), args.request, cfg, allow_skip=args.allow_skip,
                         by=getattr(args, "by", None) or person.who())
    for w in warnings:
        print(f"donegate: warning: {w}", file=sys.stderr)
    print(summary(st))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "write", help="have a separate model write acceptance tests for a request, check them and seal them",
    )
    p.add_argument("repo", metavar="REPO", help="the guarded project, exactly as `seal` takes it: a git repository, or a "
                   "subfolder of one (a monorepo package: `write packages/x` seals packages/x); the writer sees its HEAD")
    p.add_argument("--request", required=True, help="the request, as the developer would type it to the agent")
    p.add_argument("--allow-skip", action="store_true", help="accept tests that skip or xfail now (they fail at every stop until they run)")
    p.set_defaults(func=cmd_write)
