"""`donegate status [REPO]`: what is sealed where, how the kit is installed, which sessions wait for a person."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def cmd_status(args: argparse.Namespace) -> int:
    from donegate.person import overview as status

    s = status.gather(Path(args.repo) if args.repo else None)
    print(json.dumps(s, indent=1) if args.json else status.render(s))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("status", help="what is sealed where, how the kit is installed, and which sessions wait for a person")
    p.add_argument("repo", metavar="REPO", nargs="?", help="only this repository (default: every sealed one)")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.set_defaults(func=cmd_status)
