"""Which repository a stop is about: never inferred from a folder the agent steers.

The Stop payload's `cwd` follows the agent's `cd`, and `git rev-parse --show-toplevel` answers for
whatever repository holds that folder: a nested `git init`, a `.git` file pointing elsewhere, or
`core.worktree` made a sealed repository's stop look like an unsealed one's (allowed unchecked).

- A per-repository install names the repository in the hook's arguments (`--repo`): that is the
  repository, wherever the agent has gone.
- Otherwise (the machine-wide managed hook, or an older install), the stop belongs to the nearest
  folder at or above `cwd` that has a seal: a stop anywhere inside a sealed tree is judged by that
  seal. Seals are made by a person, under the state root the agent cannot write, so no folder the
  agent creates can have one. Only when no folder above has a seal does git say which repository
  it is (for the "unsealed" message); a managed hook does not even ask.
"""

from __future__ import annotations

import os
from pathlib import Path


def sealed_ancestor(cwd: Path, root: Path) -> Path | None:
    """The nearest folder at or above `cwd` with a seal record or a store under `root`."""
    from donegate import paths, store

    try:
        start = cwd.resolve()
    except OSError:
        return None
    for folder in (start, *start.parents):
        if store.seal_record_path(folder, root).exists() or paths.store_dir(folder, root).exists():
            return folder
    return None


def guarded(payload: dict, root: Path, fixed: str | None = None, managed: bool = False) -> Path | None:
    """The repository this stop is judged for; None: nothing sealed here and the hook is managed."""
    if fixed:
        return Path(fixed).resolve()
    cwd = Path(payload.get("cwd") or os.getcwd())
    found = sealed_ancestor(cwd, root)
    if found is not None or managed:
        return found
    from donegate import git

    return git.toplevel(cwd)


def target(repo: Path | str) -> Path:
    """The git top-level of `repo`, a repository the kit may guard: neither inside the kit, its
    launchers or its state root (the agent could read the hidden tests) nor around one of them (the
    deny rules would cover the whole repository). Install and doctor both ask this."""
    from donegate import git, paths
    from donegate.errors import DonegateError

    repo = Path(repo).expanduser()
    if not repo.is_dir():
        raise DonegateError(f"{repo}: no such folder")
    top = git.toplevel(repo)
    kit = "the kit checkout" if paths.is_checkout() else "the kit's installed package folder"
    for root, name in ((paths.KIT_ROOT, kit), (paths.hooks_dir(), "the kit's hook launchers"),
                       (paths.home(), "the donegate state root (DONEGATE_HOME)")):
        if paths.is_within(root, top):
            raise DonegateError(
                f"{name} {root} lies inside the repository {top}: the agent could read the hidden tests",
                "keep the kit (its checkout, or the environment it is installed in) outside the repository, "
                "and set DONEGATE_HOME to a folder outside it",
            )
        if paths.is_within(top, root):
            raise DonegateError(
                f"the repository {top} lies inside {name} {root}: the deny rules would cover the whole repository",
                "copy or clone the repository to a folder outside the kit",
            )
    return top
