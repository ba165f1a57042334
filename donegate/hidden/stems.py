"""The stems of a repository's tree (`models` of `vendor/models.py`, of a `models/` package or of a
`models.cpython-312-x86_64-linux-gnu.so`): what the product can import from a folder of its own, which the second
run's helper name must never be (`second._helper`: a project module of the helper's name was shadowed by it).

A stop takes them from its one look at the working tree (`statcache`), never from a walk of its own: the second run
starts before the look is taken (its helper name is in its walls' mounts), so it draws the name from the stems kept
with the last look of the tree (a memo beside its stat file, `known`), and once the look is here, before the run is
told to go, `clear` checks the name against the stems of this look, brought in step from the kept ones by what the
look says changed (`Tree.since`). A name taken since (a file of its name new in the tree) ends that run unrun and it
is run once more with the name drawn from this look's stems (`second.run`). A tree without a kept memo is walked once
(`walked`), as is a run without a look.

Where the name stands: `as_shown`, in the program's text, every column where `pytest` was (`shown_at`: kept with the
second run's rewrite, `rewritten.py`, so a stop splices the name in without the pass of a regular expression).

The walk's rules, and the look's: not inside git's folder, bytecode caches, node_modules, nor a folder whose name
starts with a dot (a virtual environment's: the project's paths are listed on their own); their own names count.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.tree import statcache

_SKIP = ("__pycache__", "node_modules")
MEMO = "stems"  # beside the look's stat file (`statcache.MEMOS`)


def walked(repo: Path) -> set[str]:
    """The stems of every file and folder in `repo`'s tree, by a walk of it (a run without the stop's look)."""
    out: set[str] = set()
    stack = [str(repo)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for e in entries:
                    out.add(e.name.partition(".")[0])
                    if e.name[:1] != "." and e.name not in _SKIP and e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return out


def _inside(folder: str) -> bool:
    """Whether the walk lists what `folder` (a relative path, "" the top) holds."""
    return not folder or all(p[:1] != "." and p not in _SKIP for p in folder.split("/"))


def of_names(names: "list[str] | set[str]") -> set[str]:
    """The stems the walk would find along each of these relative paths (every folder on the way, and the name)."""
    out: set[str] = set()
    for name in names:
        parts = name.rstrip("/").split("/")
        for i, part in enumerate(parts):
            out.add(part.partition(".")[0])
            if i + 1 < len(parts) and (part[:1] == "." or part in _SKIP):
                break
    return out


def of_look(tree: "statcache.Tree") -> set[str]:
    """The stems of the tree as `tree` saw it: each folder's entries (`Tree.folders`) and the folders' own names."""
    folders = tree.folders
    if folders is None:
        return of_names(list(tree.entries))
    out: set[str] = set()
    for folder, names in folders.items():
        if folder:
            parent, _, own = folder.rpartition("/")
            if _inside(parent):
                out.add(own.partition(".")[0])
        if _inside(folder):
            out.update(n.rpartition("/")[2].partition(".")[0] for n in names)
    return out


def _memo(stat: "Path | None") -> "Path | None":
    return None if stat is None else stat.with_suffix(f".{MEMO}.json")


def known(stat: "Path | None") -> "tuple[str, set[str]] | None":
    """(the id of the look they were taken from, the stems) kept with the tree's last look (None: none kept)."""
    from donegate.core.util import memo_read

    path = _memo(stat)
    memo = memo_read(path) if path is not None else None
    if memo is None or not isinstance(memo[1], list):
        return None
    return memo[0], set(memo[1])


def now(tree: "statcache.Tree", kept: "tuple[str, set[str]] | None") -> set[str]:
    """The stems of this look (at least: a name gone since the kept look may stay in them), from the kept ones and
    what the look says changed since; kept with the look's id (after the hook's answer) when they moved."""
    since = tree.since
    if kept is not None and tree.id == kept[0]:
        return kept[1]
    if kept is not None and since is not None and since[0] == kept[0]:
        out = kept[1] | of_names([n for n in since[1] if n in tree.entries])
    else:
        out = of_look(tree)
    path = _memo(tree.stat_path)
    if path is not None and tree.id is not None:
        from donegate.core.util import memo_write
        from donegate.hidden.copy import after

        ident = tree.id
        after(lambda: memo_write(path, ident, sorted(out)))
    return out


def clear(pending: "statcache.Pending", kept: "tuple[str, set[str]] | None", name: str, taken: list[set[str]]) -> bool:
    """Whether `name`, drawn before the stop's look from the `kept` stems, is none of this look's (the run may go);
    the look's stems go to `taken` either way (a run again draws from them)."""
    tree = pending.get()
    if tree is None:  # no run: nothing to check
        return True
    stems = now(tree, kept)
    taken.append(stems)
    return name not in stems


# A string (skipped whole: what it says is the test's), a comment, or pytest named (`import pytest`, `pytest.raises`,
# `pytestmark`; not `_pytest`, `pytester`, `pytest_plugins`), scanned left to right as the tokenizer reads them
_SHOWN = (r"""(?P<s>(?:(?<![\w])[rRbBuUfF]{1,2})?(?:'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''|"""
          r'''"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"))'''
          r"""|(?P<c>#[^\n]*)|(?P<w>(?<![\w.])pytest(?=mark\b|\b))""")


def as_shown(sources: dict[str, str], helper: str, at: dict[str, list[int]] | None = None) -> dict[str, str]:
    """{test file: its text with `pytest` (a name, `pytestmark`'s start, a comment's word) as `helper`, every column
    where it was} for each file that names it so: a program's text names no test framework (issue 45 item 1; a string
    that names it stays as it is). The columns (`shown_at`) as kept with the rewrite (`at`), else found now."""
    out = {}
    for rel, cols in (shown_at(sources) if at is None else at).items():
        text, parts, last = sources[rel], [], 0
        for col in cols:
            parts += [text[last:col], helper]
            last = col + 6  # (the helper is as long as pytest)
        out[rel] = "".join(parts) + text[last:]
    return out


def shown_at(sources: dict[str, str]) -> dict[str, list[int]]:
    """{test file: the columns of each `pytest` `as_shown` replaces} for each file that names it so: one pass of a
    regular expression, ~2 ms (7.5 M instructions) for the bench's 6 KB (the tokenizer's: 48 ms for 55 KB)."""
    import re

    scan, out = re.compile(_SHOWN), {}
    for rel, text in sources.items():
        cols = [m.start() + i for m in scan.finditer(text) if not m.group("s") for i in _each(m.group())] if "pytest" in text else []
        if cols:
            out[rel] = cols
    return out


def _each(found: str) -> list[int]:
    """The columns of `pytest` in a match of `_SHOWN` (a comment may name it more than once)."""
    cols, i = [], found.find("pytest")
    while i >= 0:
        cols.append(i)
        i = found.find("pytest", i + 6)
    return cols
