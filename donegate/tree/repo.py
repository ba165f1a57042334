"""Which repository a stop is about, and which working tree of it: never inferred from a folder the
agent steers alone.

A seal is for a *project*: a git repository's working tree, or a subfolder of it (a monorepo
package), named by the folder the person sealed. What makes another folder "the same repository" is
recorded at seal time under the state root (`state/repos/<repo-key>.json`, the agent cannot write
it): the repository's common git dir (shared by all its worktrees), its root commits, and where the
project lies inside the working tree (`sub`). A stop is judged on one working tree (`Target.tree`)
against the seal of the repository it belongs to (`Target.sealed`):

- A folder at or below a sealed folder belongs to that seal: the nearest one wins (a subfolder
  project sealed inside a sealed repository is its own). Seals are made by a person, so no folder the
  agent creates can have one: a `git init`, a `.git` file or `core.worktree` inside a sealed tree makes
  no new repository.
- Otherwise each folder at or above it that holds a `.git` entry (found on disk, not asked of git, so
  `core.worktree` cannot move it) is asked for its common git dir: a linked worktree of a sealed
  repository, or a clone that shares its git dir, is judged on that working tree (plus `sub`), against
  the seal. Several `.git` folders are tried upward, so a nested `git init` inside a worktree hides
  nothing.
- A repository found at a new path, whose recorded common git dir is gone and whose root commits
  match, was moved: `Target.moved_from` names the old path, the stop is handed to a person with the
  one command that fixes it (`donegate relocate`), never judged as failing tests.
- A folder that belongs to no sealed repository is never judged as one.

Which folder to start from: the session's project folder first (`CLAUDE_PROJECT_DIR`, which Claude
Code sets for hooks to the folder the session started in; believed only when it agrees with the
transcript's project folder), then the payload's `cwd` (which follows the agent's `cd`). A hook with
`--repo` (an older per-repository install) fixes the sealed repository; the session's folders only
choose which of its working trees is judged.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

IDENTITIES = "repos"  # state/repos/<repo-key>.json: what makes a folder the sealed repository


class Target:
    """The working tree a stop is judged on, the sealed project whose seal judges it, and (for a moved
    repository) the path it was sealed at. A plain class: dataclasses cost start-up time."""

    def __init__(self, tree: Path, sealed: Path, moved_from: str | None = None, key: str | None = None) -> None:
        self.tree, self.sealed, self.moved_from = tree, sealed, moved_from
        self.found_from = ""  # which folder named it: "project" (the session's), "cwd", or "hook" (--repo)
        self.key = key  # `paths.repo_key(sealed)` when finding it derived it (the stop's context takes it, not again)
        self.record: Any = None  # its seal record when finding it read it (a monorepo's root: `touched_below`)

    def __repr__(self) -> str:
        return f"Target(tree={self.tree}, sealed={self.sealed}, moved_from={self.moved_from})"


def sealed_ancestor(cwd: Path, root: Path) -> Path | None:
    """The nearest folder at or above `cwd` with a seal record or a store under `root`."""
    found = _sealed_ancestor(cwd, root)
    return found[0] if found is not None else None


def _sealed_ancestor(cwd: Path, root: Path, keys: dict[Path, str] | None = None) -> tuple[Path, str] | None:
    """(`sealed_ancestor`, its `paths.repo_key`): each folder's key is derived once, and the stop keeps the one found
    (and, in `keys`, each folder's it tried: a repository found without a seal keeps its own)."""
    from donegate import paths

    try:
        start = cwd.resolve()
    except OSError:
        return None
    for folder in (start, *start.parents):
        key = keys.get(folder) if keys is not None else None
        if key is None:
            key = paths.repo_key(folder)
            if keys is not None:
                keys[folder] = key
        if paths.seal_record(folder, root, key).exists() or paths.store_dir(folder, root, key).exists():
            return folder, key
    return None


# -- the identity recorded at seal time -------------------------------------------------------------

def identity_path(project: Path, root: Path, key: str | None = None) -> Path:
    from donegate import paths

    return paths.state_dir(root) / IDENTITIES / f"{key or paths.repo_key(project)}.json"


def identity(project: Path) -> dict[str, Any]:
    """What makes another folder this project's repository: the working tree's top, the project's
    place in it, the common git dir and the root commits."""
    from donegate.tree import git

    project = project.resolve()
    top = git.toplevel(project)
    return {"repo": str(project), "top": str(top), "sub": project.relative_to(top).as_posix() if project != top else "",
            "common_dir": str(git.common_dir(top)), "roots": git.roots(top)}


def record_identity(project: Path, root: Path, ident: dict[str, Any] | None = None) -> dict[str, Any]:
    from donegate.core.util import atomic_write

    ident = ident or identity(project)
    atomic_write(identity_path(project, root), json.dumps(ident, indent=2) + "\n")
    return ident


def forget_identity(project: Path, root: Path) -> None:
    identity_path(project, root).unlink(missing_ok=True)


def identities(root: Path) -> list[dict[str, Any]]:
    from donegate import paths

    folder = paths.state_dir(root) / IDENTITIES
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("repo", "sub", "common_dir")):
            out.append(data)
    return out


# -- from a folder to the target --------------------------------------------------------------------

def _git_tops(folder: Path) -> list[Path]:
    """Every folder at or above `folder` that holds a `.git` entry, nearest first (read from disk)."""
    return [f for f in (folder, *folder.parents) if os.path.lexists(f / ".git")]


def _common_dir(top: Path) -> str | None:
    """The common git dir of the working tree at `top`, read as git reads it (a `.git` folder, or a
    `.git` file naming a worktree's git dir, whose `commondir` names the shared one): no process, so
    a stop outside every sealed repository costs a few file reads. Seal records git's own answer
    (`git.common_dir`); both are resolved paths."""
    dotgit = top / ".git"
    try:
        if dotgit.is_dir():
            return str(dotgit.resolve())
        with open(dotgit, encoding="utf-8", errors="replace") as fh:
            text = fh.read(4096)
        m = re.match(r"gitdir: *(.+)", text)
        if not m:
            return None
        gitdir = top / m.group(1).strip()  # an absolute path stays itself
        try:
            with open(gitdir / "commondir", encoding="utf-8", errors="replace") as fh:
                return str((gitdir / fh.read(4096).strip()).resolve())
        except FileNotFoundError:
            return str(gitdir.resolve())
    except OSError:
        return None


def _within(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _in_project(folder: Path, top: Path, entries: list[dict[str, Any]]) -> tuple[Path, dict[str, Any]] | None:
    """The entry whose project (top/sub) holds `folder`, the deepest one."""
    best = None
    for e in entries:
        tree = top / e["sub"] if e["sub"] else top
        if _within(folder, tree) and (best is None or len(e["sub"]) > len(best[1]["sub"])):
            best = (tree, e)
    return best


def resolve(folder: Path, root: Path, keys: dict[Path, str] | None = None) -> Target | None:
    """The target a stop in `folder` is judged on, or None: no sealed repository holds it. `keys`: the folders'
    keys derived on the way (`_sealed_ancestor`)."""
    try:
        folder = folder.resolve()
    except OSError:
        return None
    found = _sealed_ancestor(folder, root, keys)
    if found is not None:
        sealed, key = found
        return _own_worktree(folder, sealed, root, key) or Target(sealed, sealed, key=key)
    entries = identities(root)
    if not entries or not folder.is_dir():
        return None
    from donegate.tree import git
    from donegate.errors import DonegateError

    stale: list[dict[str, Any]] = []
    for e in entries:
        if not os.path.isdir(e["common_dir"]):
            stale.append(e)
    for top in _git_tops(folder):
        common = _common_dir(top)
        if common is None:
            continue
        hit = _in_project(folder, top, [e for e in entries if e["common_dir"] == common])
        if hit is not None:
            tree, e = hit
            return Target(tree, Path(e["repo"]))
        if stale:
            try:
                roots = set(git.roots(top))
            except DonegateError:
                continue
            hit = _in_project(folder, top, [e for e in stale if roots & set(e.get("roots") or [])])
            if hit is not None:
                tree, e = hit
                return Target(tree, Path(e["repo"]), moved_from=e["repo"])
    return None


def _own_worktree(folder: Path, sealed: Path, root: Path, key: str | None = None) -> Target | None:
    """A linked worktree of the sealed repository inside the sealed folder (Claude Code puts its
    worktrees under `.claude/worktrees/`): judged on itself. A nested `git init` or a `.git` file
    naming another repository has another common git dir: the sealed folder stays the tree."""
    below = [top for top in _git_tops(folder) if sealed in top.parents]
    if not below:
        return None
    try:
        ident = json.loads(identity_path(sealed, root, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for top in below:
        if _common_dir(top) == ident.get("common_dir"):
            hit = _in_project(folder, top, [ident])
            if hit is not None:
                return Target(hit[0], sealed, key=key)
    return None


def _sanitized(path: str) -> str:
    """Claude Code's name for a project's transcript folder: every character but [A-Za-z0-9] a `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def project_dir(payload: dict[str, Any], env: Any = None) -> Path | None:
    """The folder the session started in (`CLAUDE_PROJECT_DIR`), when the transcript agrees."""
    env = os.environ if env is None else env
    value = env.get("CLAUDE_PROJECT_DIR") or ""
    if not value or not os.path.isabs(value):
        return None
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript:
        # ~/.claude/projects/<the project folder, sanitized>/<session>.jsonl: a variable a settings
        # `env` set cannot also move the transcript.
        if Path(transcript).parent.name not in (_sanitized(value), _sanitized(os.path.realpath(value))):
            return None
    return Path(value)


def locate(payload: dict[str, Any], root: Path, fixed: str | None = None, managed: bool = False,
           env: Any = None) -> Target | None:
    """The target of this stop; None: nothing sealed here and the hook is for every repository."""
    cwd = payload.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd):
        from donegate.errors import DonegateError

        raise DonegateError(f"the hook's stdin has a cwd that is not a folder path ({type(cwd).__name__})")
    keys: dict[Path, str] = {}  # the folders' keys derived while finding it: the stop derives none twice
    start = project_dir(payload, env)
    folders = [(f, name) for f, name in ((start, "project"), (Path(cwd) if isinstance(cwd, str) and cwd else None, "cwd")) if f]
    if fixed:
        named = Path(fixed).resolve()
        own = resolve(named, root, keys) if named.is_dir() else None  # the hook may name a worktree or a subfolder of it
        sealed = own.sealed if own is not None else named
        for folder, name in folders:
            t = resolve(folder, root, keys)
            if t is not None and t.sealed == sealed:
                return _named(t, name)
        if own is not None:
            return _named(own, "hook")
        if named.is_dir():
            return _named(Target(named, named, key=keys.get(named)), "hook")
        return _named(Target(named, named, moved_from=str(named)), "hook")  # gone: moved (where to, this session does not say) or deleted
    for folder, name in folders or [(Path(os.getcwd()), "cwd")]:
        t = resolve(folder, root, keys)
        if t is not None:
            return _named(t, name)
    if managed:
        return None
    from donegate.tree import git

    top = git.toplevel(folders[-1][0] if folders else Path(os.getcwd()))
    return _named(Target(top, top, key=keys.get(top)), "cwd")


def sealed_below(folder: Path, root: Path) -> list[Target]:
    """The sealed projects inside `folder`'s working tree below `folder` (a monorepo's packages seen from its root)."""
    try:
        folder = folder.resolve()
    except OSError:
        return []
    tops = _git_tops(folder)
    common = _common_dir(tops[0]) if tops else None
    if common is None:
        return []
    out = []
    for e in identities(root):
        tree = tops[0] / e["sub"] if e["sub"] else tops[0]
        if e["common_dir"] == common and tree != folder and _within(tree, folder) and tree.is_dir():
            out.append(Target(tree, Path(e["repo"])))
    return sorted(out, key=lambda t: str(t.tree))


def touched_below(folder: Path, root: Path, changed: Any) -> Target | None:
    """A session started above a sealed subfolder (a monorepo's root) that changed files in it since its seal
    is judged on it: the first such subfolder (`changed(target)`: its changes since the seal, as the seal
    reads them; it raises when the seal is broken, and that one is judged, so the stop says so). Untouched ones
    pass, as any folder outside a seal does."""
    for t in sealed_below(folder, root):
        try:
            if changed(t):
                return t
        except Exception:
            return t
    return None


def _named(t: Target, name: str) -> Target:
    t.found_from = name
    return t


def guarded(payload: dict, root: Path, fixed: str | None = None, managed: bool = False) -> Path | None:
    """The working tree this stop is judged on (see `locate`)."""
    t = locate(payload, root, fixed, managed)
    return None if t is None else t.tree


def project(folder: Path | str) -> Path:
    """The project a person names (seal, install, doctor): the folder itself when it is a git working
    tree's top or a subfolder of one (a monorepo package), resolved."""
    from donegate.tree import git
    from donegate.errors import DonegateError

    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise DonegateError(f"{folder}: no such folder", "name the project's folder (a git working tree, or a folder in one)")
    folder = folder.resolve()
    top = git.toplevel(folder)
    if not _within(folder, top):  # core.worktree elsewhere: git's answer does not hold the folder
        raise DonegateError(f"{folder} is not inside the working tree git reports ({top})",
                            "unset core.worktree in the repository's config")
    return folder


def target(repo: Path | str) -> Path:
    """The project `repo` names (its folder: a working tree's top or a subfolder), a project the kit
    may guard: neither inside the kit, its launchers or its state root (the agent could read the
    hidden tests) nor around one of them (the deny rules would cover the whole repository). Install
    and doctor both ask this."""
    from donegate.tree import git
    from donegate import paths
    from donegate.errors import DonegateError

    top = project(repo)
    whole = git.toplevel(top)
    kit = "the kit checkout" if paths.is_checkout() else "the kit's installed package folder"
    for root, name in ((paths.KIT_ROOT, kit), (paths.hooks_dir(), "the kit's hook launchers"),
                       (paths.home(), "the donegate state root (DONEGATE_HOME)")):
        if paths.is_within(root, whole):
            raise DonegateError(
                f"{name} {root} lies inside the repository {whole}: the agent could read the hidden tests",
                "keep the kit (its checkout, or the environment it is installed in) outside the repository, "
                "and set DONEGATE_HOME to a folder outside it",
            )
        if paths.is_within(top, root):
            raise DonegateError(
                f"the repository {top} lies inside {name} {root}: the deny rules would cover the whole repository",
                "copy or clone the repository to a folder outside the kit",
            )
    return top
