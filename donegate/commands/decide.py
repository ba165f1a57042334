"""`donegate approve REF` and `donegate reject REF`: a person's decision on a session left for them."""

from __future__ import annotations

import argparse
from pathlib import Path

from donegate import paths


def cmd_decide(args: argparse.Namespace) -> int:
    from donegate.person import ownership as person
    from donegate.report.labels import decide

    path = Path(args.ledger).expanduser() if args.ledger else paths.ledger_path()
    rec = decide(path, args.ref, args.decision, args.note or "", by=getattr(args, "by", None) or person.who())
    what = {"appealed": "an appeal", "gave_up": "a hand-over"}.get(rec["verdict"], "a passed session")
    done = {"approve": "approved", "reject": "rejected"}[args.decision]
    print(f"{done} {what}: stop {rec['ref']} (session {rec['session']}, {rec['repo'] or 'no repository'})"
          + ("; the next stop in that repository is told" if args.decision == "reject" and rec["repo"] else ""))
    return 0


def register(subparsers) -> None:
    for name, help, note in (
        ("approve", "accept the work of a session left for a person (an appeal or a hand-over)", "why (kept in the ledger)"),
        ("reject", "refuse it (or a session that passed): the ledger says so, and the next session in that repository is told why",
         "why: the next session in that repository is told this"),
    ):
        p = subparsers.add_parser(name, help=help)
        p.add_argument("ref", metavar="STOP_REF", help="the stop's ref, as `donegate status` or `donegate report` shows it")
        p.add_argument("--note", required=name == "reject", help=note)
        p.add_argument("--ledger", metavar="PATH", help="the ledger holding the stop (default: the kit's ledger)")
        p.set_defaults(func=cmd_decide, decision=name)
