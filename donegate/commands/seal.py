"""`donegate seal REPO TEST_FILE...`: copy acceptance tests into the store, outside the repository's tree."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_seal(args: argparse.Namespace) -> int:
    from donegate import config, store

    cfg = config.load()
    st = store.seal(
        Path(args.repo), [Path(f) for f in args.tests], request=args.request or "", timeout=cfg["timeout"],
        protected=cfg["protected"], protect_repo_tests=cfg["protect_repo_tests"], allow_skip=args.allow_skip,
        confine=cfg["confine"], extra={"scan_allow": list(cfg["scan_allow"])},  # what the project allowed, at the seal
    )
    m = st.manifest
    print(
        f"sealed {m['count']} tests for {m['repo']} at {m['base'][:12]}: "
        f"{len(m['baseline']['failing'])} new requirements failing, {len(m['baseline']['passing'])} already passing"
        + (f", {len(m['baseline']['skipped'])} skipped (sealed with --allow-skip)" if m["baseline"]["skipped"] else "")
    )
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("seal", help="copy acceptance tests into the store for REPO, outside its tree")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.add_argument("tests", metavar="TEST_FILE", nargs="+", help="pytest files holding the acceptance tests")
    p.add_argument("--request", help="the request the tests were written for (kept in the manifest)")
    p.add_argument("--allow-skip", action="store_true", help="seal tests that skip or xfail now (they fail at every stop until they run)")
    p.set_defaults(func=cmd_seal)
