"""The scan stage: the ast scan of the product files changed since the seal (`scan: block | hint | off`).
A finding can be wrong: it blocks with the rule named and the appeal offered (`donegate.gate.appeal`); rules in
`scan_allow` are not reported."""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate.tree import statcache

from donegate.seal import store


def scan_gate(repo: Path, st: store.Store, cfg: dict[str, Any], root: Path, tree: statcache.Tree | None = None
              ) -> dict[str, Any] | None:
    """The scan's findings for the ledger (None with `scan: off`); "problem" says them in one line.
    `tree`: the stop's look at the working tree, compared with the seal's snapshot of it."""
    if cfg["scan"] == "off":
        return None
    t0 = time.monotonic()
    allow = set(cfg.get("scan_allow") or ())
    own = set(st.manifest.get("allow") or ())  # `seal --allow RULE`: this repository's own allowances
    since_seal = st.changes(tree) if tree is not None else None
    findings: list[dict[str, Any]] = []
    problem = ""
    # With nothing changed since the seal's snapshot of the tree (the look compared every file) there is no file to
    # scan: the rules' module is not loaded (its import, its regexes and the kit's paths: 2-3 ms of a stop's CPU, beside
    # the runs). A store without a snapshot scans what git says changed, as ever.
    if since_seal is None or since_seal[0]:
        from donegate.gate import scan_rules as scan

        findings = [f for f in scan.scan(repo, st.manifest["base"], root, since_seal[0] if since_seal is not None else None,
                                         st.manifest.get("scan_baseline"), st.manifest.get("scan_calls"))
                    if f["rule"] not in allow | own]
        problem = scan.problem(findings) if findings else ""
    out = {"mode": cfg["scan"], "findings": findings[:50], "problem": problem, "duration": round(time.monotonic() - t0, 4)}
    sealed = st.manifest.get("scan_allow")
    if allow or sealed:
        out["allow"] = sorted(allow)  # what the project allowed, beside what was found
    if sealed is not None and sorted(sealed) != sorted(allow):
        out["allow_at_seal"] = sorted(sealed)  # changed since the seal: the person sees both
    if own:
        out["allow_repo"] = sorted(own)
    return out
