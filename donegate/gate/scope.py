"""The scope stage: protected files unchanged since the seal, and (with `allowed`) nothing changed outside it.

`scope_gate` is the one protected-file check: the Stop hook and `donegate doctor` both call it.
"""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate.tree import statcache

from donegate.core import fsafe
from donegate.tree import git
from donegate.seal import store
from donegate.gate.stop import stage


def changed_protected(repo: Path, manifest: dict[str, Any], cfg: dict[str, Any],
                      other_tree: bool = False, tree: statcache.Tree | None = None) -> tuple[list[str], dict[str, str]]:
    """The protected files changed since the seal (the `protected` globs, and with `protect_repo_tests`
    the repository's own tests as sealed), sorted, and what the changed ones are now where that is not
    a regular file (a symlink, FIFO, device, socket, or gone). `tree`: the stop's look at the working tree."""
    protected = store.matcher(cfg["protected"])
    before = {k: v for k, v in manifest.get("protected", {}).items() if protected(k)}
    now = _protected_now(repo, cfg["protected"], before, tree)
    if other_tree:
        # Another working tree of the sealed repository (a worktree): files the sealed checkout had
        # untracked (its `.claude/settings.local.json`, an install's files) stay with that checkout.
        # A file the sealed base tracks stays protected (deleting it is a change).
        tracked = set(git.tracked_at(repo, manifest["base"])) if before else set()
        before = {k: v for k, v in before.items() if k in now or k in tracked}
        # and what `donegate install` wrote into this tree (a person's install there) is not the agent's.
        now = {k: v for k, v in now.items() if k in before or k not in store.KIT_FILES}
    touched = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
    if touched:  # `claude plugin install donegate@...` after the seal: the person's install, never the agent's change
        touched = [k for k in touched if not plugin_only(repo, k, before.get(k), manifest.get("base"))]
    kinds = {k: fsafe.describe(now.get(k)) for k in touched if k in before}
    if cfg["protect_repo_tests"]:
        # With the project's own suite sealed (`donegate.gate.own_suite`), the agent may edit, add and delete
        # tests: the sealed copies run at every stop and a weakening is named there. What is never a test file
        # (a symlink, FIFO, device or socket where one was sealed) is still a change here.
        edits_allowed = "own-suite.json" in manifest.get("files", {}) and cfg.get("own_tests") not in ("off", False)
        for name, digest in manifest.get("repo_tests", {}).items():
            current = tree.digest(name) if tree is not None else fsafe.digest(repo / name)
            if current != digest and not (edits_allowed and fsafe.describe(current) in ("", "missing")):
                touched.append(name)
                kinds[name] = fsafe.describe(current)
    return sorted(set(touched)), {k: v for k, v in kinds.items() if v}


def plugin_only(repo: Path, name: str, before: str | None, base: str | None) -> bool:
    """Whether the protected settings file `name` differs from its sealed digest `before` only by the plugin's
    entries (`donegate.claude.marketplace`): created by `claude plugin install` with nothing else in it, or the
    file the sealed base commit holds (when that is what was sealed) plus the plugin."""
    if not name.startswith(".claude/settings") or not name.endswith(".json"):
        return False
    import json

    from donegate.claude.marketplace import plugin_enabled, unplugged

    try:
        text = fsafe.read_text(repo / name, limit=1 << 20)
    except (OSError, ValueError):
        return False
    try:
        if not plugin_enabled(json.loads(text)):
            return False
    except ValueError:
        return False
    now = unplugged(text)
    if before is None:
        return now == "{}"
    if not base:
        return False
    from donegate.core.fsafe import sha256 as _sha256

    res = git.run(repo, "show", f"{base}:./{name}")
    if res.returncode != 0 or _sha256(res.stdout.encode()).hexdigest() != before:
        return False
    return unplugged(res.stdout) == now


def _protected_now(repo: Path, globs: list[str], before: dict[str, str], tree: statcache.Tree | None) -> dict[str, str]:
    """What `store.snapshot` gives now (the files matching `globs`, by digest). With the stop's look, the sealed
    ones' digests are the look's, and git is asked only when a file matching the globs is new since the seal
    (the snapshot names what git lists: an ignored file there is not protected): at almost every stop it is
    not asked at all (it was three git processes beside the runs at every stop)."""
    if tree is None:
        return store.snapshot(repo, globs)
    match = store.matcher(globs)
    if any(name not in before and match(name) for name in tree.entries):
        return store.snapshot(repo, globs)
    return {name: d for name in before if (d := tree.digest(name)) is not None}


def scope_gate(repo: Path, st: store.Store, cfg: dict[str, Any], tree: statcache.Tree | None = None) -> dict[str, Any]:
    """Protected files changed since the seal, and (with `allowed`) files changed outside it.

    Both compare the files on disk with the seal's snapshot, never what git says about them (an
    ignore rule, skip-worktree, assume-unchanged or a `git replace` of the base hides a change from
    git). Nothing is followed or opened but regular files: a symlink, FIFO, device or socket where a
    file was sealed is a change, named as such. `tree`: the stop's look at the working tree
    (`donegate.tree.statcache`; without it, a look that hashes every file). Doctor runs this same check.
    """
    stage("the scope check")
    t0 = time.monotonic()
    problems = []
    manifest = st.manifest
    touched, kinds = changed_protected(repo, manifest, cfg, st.other_tree(), tree)

    def named(names: list[str], what: dict[str, str]) -> str:
        return ", ".join(f"{n} (now {what[n]})" if n in what else n for n in names)

    if touched:
        problems.append("protected files were changed (restore them): " + named(touched, kinds))
    outside: list[str] = []
    if cfg["allowed"] is not None:
        allowed = store.matcher(cfg["allowed"])
        more: dict[str, str]
        since_seal = st.changes(tree)
        if since_seal is None:  # a store sealed before the kit kept a snapshot of the whole tree
            changed, more = git.changed_since(repo, manifest["base"]), {}
        else:
            changed, more = since_seal
        outside = [n for n in changed if not allowed(n) and n not in touched and n not in store.KIT_FILES]
        if outside:
            problems.append("files outside the allowed scope were changed: " + named(outside, more))
        kinds.update((k, v) for k, v in more.items() if k in outside)
    out = {"ok": not problems, "protected": touched, "outside": outside, "problems": problems,
           "duration": round(time.monotonic() - t0, 4)}
    if kinds:
        out["kinds"] = kinds
    return out
