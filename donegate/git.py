"""The few git questions the kit asks, each one subprocess through `proc.run`."""

from __future__ import annotations

from pathlib import Path

from donegate import proc
from donegate.errors import DonegateError

# Local git questions answer in milliseconds; a hung one (a lock, a dying disk) must leave the stop
# inside the hook timeout, whose `hook_margin` (30 s) covers the few git calls of one stop.
GIT_TIMEOUT = 10.0


def _git(repo: Path, *args: str) -> str:
    res = proc.run(["git", "-C", str(repo), *args], timeout=GIT_TIMEOUT)
    if res.timed_out or res.returncode != 0:
        why = "timed out" if res.timed_out else (res.stderr.strip().splitlines() or ["failed"])[-1]
        raise DonegateError(f"git {' '.join(args)} in {repo}: {why}")
    return res.stdout


def toplevel(path: Path) -> Path:
    res = proc.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], timeout=GIT_TIMEOUT)
    if res.returncode != 0:
        raise DonegateError(
            f"{path} is not inside a git repository",
            "run Claude Code (and donegate) from inside a git repository",
        )
    return Path(res.stdout.strip()).resolve()


def head(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\0") if line]


def changed_since(repo: Path, base: str) -> list[str]:
    """Files that differ from `base` in the working tree (committed or not), plus untracked files."""
    changed = _lines(_git(repo, "diff", "--name-only", "-z", "--no-renames", base, "--"))
    untracked = _lines(_git(repo, "ls-files", "-z", "--others", "--exclude-standard"))
    return sorted(set(changed) | set(untracked))


def ls_files(repo: Path) -> list[str]:
    """Tracked plus untracked (not ignored) files of the working tree."""
    return _lines(_git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"))


def diff(repo: Path, base: str) -> str:
    """The full diff against `base`, untracked files included (for reviewers)."""
    text = _git(repo, "diff", "--no-color", base, "--")
    for name in _lines(_git(repo, "ls-files", "-z", "--others", "--exclude-standard")):
        res = proc.run(
            ["git", "-C", str(repo), "diff", "--no-color", "--no-index", "--", "/dev/null", name],
            timeout=GIT_TIMEOUT,
        )
        text += res.stdout
    return text
