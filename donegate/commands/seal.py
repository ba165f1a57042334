"""`donegate seal REPO TEST_FILE...` (copy acceptance tests into the store, outside the repository's tree)
and `donegate unseal REPO` (stop gating it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from donegate.errors import DonegateError


def cmd_seal(args: argparse.Namespace) -> int:
    from donegate import config, git, store

    repo = git.toplevel(Path(args.repo))
    if store.is_sealed(repo) and not (args.add or args.replace):
        # Replacing a set is a choice: a second `seal` of one file used to drop the others without a word.
        raise DonegateError(f"{repo} already has sealed acceptance tests",
                            "add these to them with --add, or replace the whole set with --replace "
                            "(donegate status shows what is sealed)")
    cfg = config.load()
    st = store.seal(
        repo, [Path(f) for f in args.tests], request=args.request or "", timeout=cfg["timeout"],
        protected=cfg["protected"], protect_repo_tests=cfg["protect_repo_tests"], allow_skip=args.allow_skip,
        confine=cfg["confine"], add=args.add,
        extra={"scan_allow": list(cfg["scan_allow"])},  # what the project allowed, at the seal
    )
    m = st.manifest
    print(
        f"sealed {m['count']} tests for {m['repo']} at {m['base'][:12]}: "
        f"{len(m['baseline']['failing'])} new requirements failing, {len(m['baseline']['passing'])} already passing"
        + (f", {len(m['baseline']['skipped'])} skipped (sealed with --allow-skip)" if m["baseline"]["skipped"] else "")
    )
    return 0


def cmd_unseal(args: argparse.Namespace) -> int:
    from donegate import git, ledger, paths, store
    from donegate.util import utc_now

    repo = git.toplevel(Path(args.repo))
    manifest = store.unseal(repo)
    if manifest is None:
        raise DonegateError(f"nothing is sealed for {repo}", "donegate status lists the sealed repositories")
    ledger.append({"event": "unseal", "time": utc_now(), "repo": str(repo), "count": manifest.get("count")},
                  paths.ledger_path())
    print(f"unsealed {repo}: {manifest.get('count', 'its')} acceptance tests removed from the store; "
          "its sessions stop ungated from now on")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("seal", help="copy acceptance tests into the store for REPO, outside its tree")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.add_argument("tests", metavar="TEST_FILE", nargs="+", help="pytest files holding the acceptance tests")
    p.add_argument("--request", help="the request the tests were written for (kept in the manifest)")
    p.add_argument("--allow-skip", action="store_true", help="seal tests that skip or xfail now (they fail at every stop until they run)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--add", action="store_true", help="add the files to REPO's sealed tests (the whole set is run again)")
    how.add_argument("--replace", action="store_true", help="replace REPO's sealed tests with these (needed when some are sealed)")
    p.set_defaults(func=cmd_seal)
    p = subparsers.add_parser("unseal", help="remove REPO's sealed acceptance tests: its sessions stop ungated")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.set_defaults(func=cmd_unseal)
