"""`donegate review REPO`: the reviewers on the change since the seal (exit 0 approve, 1 block, 2 error)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from donegate.errors import DonegateError
from donegate.models.reviewer import report, review


def cmd_review(args: argparse.Namespace) -> int:
    """Exit 0 approve, 1 block, 2 when the review itself failed or could not start (the help says so:
    a script reading 1 as "the reviewers block" must not get it for a missing seal or prompt)."""
    try:
        return _review(args)
    except DonegateError as exc:
        print(f"donegate: {exc}", file=sys.stderr)
        return 2


def _review(args: argparse.Namespace) -> int:
    from donegate import config
    from donegate.tree import git
    from donegate.seal import store

    cfg = config.load()
    repo = git.toplevel(Path(args.repo))
    st = store.load(repo)
    base = args.base or (st.manifest["base"] if st else None)
    if not base:
        raise DonegateError(f"no acceptance tests are sealed for {repo}, so there is no base commit to diff against",
                            "seal the tests first (donegate seal), or name the base: --base REV")
    request = args.request if args.request is not None else (st.manifest.get("request", "") if st else "")
    if not request.strip():
        raise DonegateError("no request to review against (none was given at seal time)", "pass --request TEXT")
    result = review(repo, request, base, cfg, timeout=args.timeout, mode=args.mode)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(report(result, f"{repo} since {base[:12]}"))
    return {"approve": 0, "block": 1}.get(result["verdict"], 2)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="ask model reviewers about REPO's change since the seal (exit 0 approve, 1 block, 2 error)")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.add_argument("--request", help="what was asked for (default: the request given at seal time)")
    p.add_argument("--mode", choices=("pair", "critic"), help="two reviewers in parallel, or a reviewer and a critic (default: review_mode)")
    p.add_argument("--base", help="commit to diff against (default: the sealed base commit)")
    p.add_argument("--timeout", type=float, help="seconds for the whole review (default: review_timeout)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (the ledger's gates.review)")
    p.set_defaults(func=cmd_review)
