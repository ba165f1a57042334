"""The seal's scan baseline belongs to its place (issue 45 item 6): a finding of the unchanged project is its own in
the function that held it at the seal (its qualname and its line's text, wherever an edit above it moved the line),
not in another function; and a call the change adds into a function that holds one is the change's.

`where` names the function (or class) around a line (`Outer.method`, "" at module level); `calls` finds the calls
to a set of function names (the callee's last name: `netinfo.interfaces()` and `interfaces()` alike), each with
its line's text and its `where`, for the seal (`callers`, kept as `scan_calls` in the manifest) and a stop
(`new_calls`: those the seal did not see, as findings of the callee's rule).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


def where(tree: ast.AST) -> Callable[[int], str]:
    """line -> the qualname of the innermost function or class around it ("" at module level): one notion for the
    scan's baseline and the tripwires' (`hidden/traces.trace_qualnames`, sent to the runs; imported when a scan finds)."""
    from donegate.hidden.traces import trace_qualnames

    return trace_qualnames(tree)  # type: ignore[no-any-return]


ENVS = ("site-packages", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".git")


def sources(repo: Path, names: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the project's Python sources among `names`, without virtual environments and caches."""
    for name in sorted(names):
        if not name.endswith(".py") or any(part in ENVS for part in name.split("/")[:-1]):
            continue
        try:
            yield name, (repo / name).read_bytes()
        except OSError:
            continue


# A name the builtin types' methods use (`d.get()`, `s.split()`) is no sign of a call into the project's function.
_COMMON = frozenset(n for t in (object, dict, list, str, bytes, set, int, float, tuple, type) for n in dir(t))


def held_names(baseline: dict[str, list[list[str]]] | None) -> set[str]:
    """The functions (their last name) that hold a finding of the seal's baseline; names the builtin types'
    methods share (`get`, `items`) and dunders are left out: a call by that name tells nothing."""
    names = {str(e[3]).rsplit(".", 1)[-1] for items in (baseline or {}).values() for e in items if len(e) > 3 and e[3]}
    return {n for n in names if n not in _COMMON and not n.startswith("__") and len(n) > 2}


def calls(data: bytes, names: Iterable[str]) -> list[tuple[str, int, str, str]]:
    """(callee, line, its text with whitespace collapsed, where) of each call in `data` to one of `names`."""
    wanted = {n for n in names if n.encode() in data}
    if not wanted:
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    at = where(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in wanted:
                text = " ".join(lines[node.lineno - 1].split()) if 0 < node.lineno <= len(lines) else ""
                out.append((name, node.lineno, text, at(node.lineno)))
    return sorted(out, key=lambda c: c[1])


def callers(repo: Path, files: Iterable[str], baseline: dict[str, list[list[str]]]) -> dict[str, list[list[str]]]:
    """For the seal: {file: [[callee, code, where], ...]} of every call in the project into a function that holds a
    finding of its baseline (files without the callee's name are not parsed)."""
    names = held_names(baseline)
    out: dict[str, list[list[str]]] = {}
    if not names:
        return out
    for name, data in sources(repo, files):
        found = calls(data, names)
        if found:
            out[name] = [[callee, text, at] for callee, _, text, at in found]
    return out


def new_calls(data: bytes, name: str, baseline: dict[str, list[list[str]]] | None,
              sealed: list[list[str]] | None, rules: dict[str, str]) -> list[dict[str, object]]:
    """For a stop: the calls in a changed file (`data`) into a function holding a baselined finding that the seal
    did not see there (`sealed`: the file's `scan_calls`, a multiset of (callee, code, where)), as findings of the
    callee's rule. `rules`: {callee: "rule at file:function"} of the baseline."""
    names = held_names(baseline)
    if not names:
        return []
    left = Counter((str(c), str(t), str(w)) for c, t, w, *_ in sealed or ())
    out: list[dict[str, object]] = []
    for callee, line, text, at in calls(data, names):
        if left[(callee, text, at)] > 0:
            left[(callee, text, at)] -= 1
            continue
        rule, place = rules[callee].split(" ", 1)
        out.append({"file": name, "line": line, "rule": rule, "code": text, "where": at,
                    "what": f"calls {callee}(), which holds the project's own {rule} finding ({place}): "
                            "a new use of it is the change's"})
    return out


def baseline_rules(baseline: dict[str, list[list[str]]] | None) -> dict[str, str]:
    """{function's last name: "rule at file:qualname"} of the findings the seal's baseline holds in functions."""
    out: dict[str, str] = {}
    for file, items in (baseline or {}).items():
        for e in items:
            if len(e) > 3 and e[3]:
                out.setdefault(str(e[3]).rsplit(".", 1)[-1], f"{e[0]} at {file}:{e[3]}")
    return out


PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default `python_files` (a project's own is not read: not exempt)


def in_test(repo: Path, name: str, found: dict[str, object]) -> bool:
    """A new call into a function holding a baselined finding that pytest collects as a test (typeguard's honest test
    calling `check_type()` was blocked as `frame-walk`): a `test_*` function of the module, or a `test_*` method of
    its `Test*` class, in a file pytest collects (`PYTHON_FILES`), whose name no other source file of the project
    mentions (a test function the product imports is the product's). Anything else (a helper of a test folder, a
    `Test*` class's other method, `testing_*`: review A, trial) is still the change's (issue 45 item 6), as is a
    frame read written in the test itself."""
    import fnmatch
    import os
    import re

    if not any(fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], g) for g in PYTHON_FILES):
        return False
    parts = str(found.get("where") or "").split(".")
    if not (len(parts) == 1 and parts[0].startswith("test_")
            or len(parts) == 2 and parts[0].startswith("Test") and parts[1].startswith("test_")):
        return False
    word = re.compile(rb"\b%s\b" % re.escape(parts[0].encode()))
    for top, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in ENVS]
        for f in files:
            if not f.endswith(".py") or any(fnmatch.fnmatchcase(f, g) for g in PYTHON_FILES):
                continue
            try:
                if word.search(Path(top, f).read_bytes()):
                    return False
            except OSError:
                return False
    return True
