"""Held-back tests: sealed tests whose failures block with the requirement's name and a count, never their
inputs, expected values, assertion text or test id (a parametrised id can carry the inputs).

Which tests are held back is decided at the seal and kept in the manifest (`held`: test id -> requirement):
the tests of the files a person names with `seal --held FILE` (or the writer writes as `test_held_*.py`),
else the kit's pick (`pick`): `held_share` (default 0.25; 0 turns it off) of each file's tests, never a whole
file, drawn from a secret the seal does not keep. The requirement is the test's docstring first line, else its
name made readable. See docs/held-back.md.
"""

from __future__ import annotations

import math
import random
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Callable
    from pathlib import Path

WRITER_PREFIX = "test_held_"  # the writer's held-back files (writer/prompt.md asks for them)
MAX_NAME = 120


def humanise(name: str) -> str:
    """`test_discount_over_100` -> `discount over 100`; `TestCart::test_total` -> `cart: total`."""
    parts = [re.sub(r"^(test_?|Test)", "", p) for p in name.split("::")]
    words = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", p).replace("_", " ").strip().lower() for p in parts]
    return ": ".join(w for w in words if w) or name


def _docstrings(source: str) -> dict[str, str]:
    """{qualname: first line of its docstring} for the test functions and methods of a file."""
    import ast  # here, not at the top: a stop imports this module for `stats` and `split` alone (issue 48 item 2)

    out: dict[str, str] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out

    def take(fn: ast.AST, qual: str) -> None:
        doc = ast.get_docstring(fn) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        first = next((line.strip() for line in (doc or "").splitlines() if line.strip()), "")
        if first:
            out[qual] = first

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            take(node, node.name)
        elif isinstance(node, ast.ClassDef):
            for m in node.body:
                take(m, f"{node.name}::{m.name}" if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) else "")
    return out


def requirement(nodeid: str, docs: dict[str, str]) -> str:
    """The name a held-back test's failure is told by: never its parameters (the part in brackets)."""
    base = nodeid.split("[", 1)[0]
    qual = base.partition("::")[2]
    name = docs.get(qual) or humanise(qual or base)
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 3] + "..."


def choose(collected: list[str], folder: Path, held_files: set[str], share: float,
           kept: dict[str, str] | None = None, *, failing: set[str] | frozenset[str] = frozenset(),
           pick_from: set[str] | None = None, rng: random.Random | None = None) -> dict[str, str]:
    """{test id: requirement} of the held-back tests among `collected` (ids relative to the store `folder`):
    `kept` (an earlier seal's held tests still sealed: `seal --add`), the tests of `held_files`, else (none
    named) the kit's pick (`pick`) with `share` among the tests of the files in `pick_from` (None: every
    file). `failing`: the tests the baseline run fails (the new requirements)."""
    docs: dict[str, dict[str, str]] = {}

    def named(nodeid: str) -> str:
        if nodeid in (kept or {}):
            return (kept or {})[nodeid]
        name = nodeid.split("::", 1)[0]
        if name not in docs:
            try:
                docs[name] = _docstrings((folder / name).read_text(encoding="utf-8"))
            except OSError:
                docs[name] = {}
        return requirement(nodeid, docs[name])

    by_file: dict[str, list[str]] = {}
    for nodeid in collected:
        by_file.setdefault(nodeid.split("::", 1)[0], []).append(nodeid)
    picked = [t for t in collected if t in (kept or {})]
    if held_files:
        picked += [t for name in sorted(held_files) for t in by_file.get(name, [])]
    elif share > 0:
        files = {n: ids for n, ids in by_file.items() if pick_from is None or n in pick_from}
        import secrets  # the seal's draw only: `secrets` (hmac, base64) off a stop's imports

        picked += pick(files, share, failing, rng or secrets.SystemRandom(), named)
    return {nodeid: named(nodeid) for nodeid in dict.fromkeys(picked)}


def pick(files: dict[str, list[str]], share: float, failing: set[str] | frozenset[str],
         rng: random.Random, named: Callable[[str], str] | None = None) -> list[str]:
    """The kit's own pick (`held_share`, drawn from `rng`: a secret the seal does not keep), from {file: its
    test ids}: in each file of 2 tests or more, `share` of its tests (at least one) and never all of them, so
    every file keeps a shown test, a failing one when the file has one (the assertion an honest fix reads).
    A file of one test gives none; when no file has two, the tests of all files are one group. `named`: a
    test's requirement (what a block shows of it), to hold back tests whose name holds no digit first."""
    named = named or (lambda t: requirement(t, {}))
    groups = [ids for ids in files.values() if len(ids) >= 2]
    if not groups:
        every = [t for ids in files.values() for t in ids]
        groups = [every] if len(every) >= 2 else []
    out: list[str] = []
    for ids in groups:
        out += _pick_group(ids, share, failing, rng, named)
    return sorted(out)


def _pick_group(ids: list[str], share: float, failing: set[str] | frozenset[str], rng: random.Random,
                named: Callable[[str], str]) -> list[str]:
    """`share` of `ids` (at least one, never all). One test stays shown, failing if any fails; first held back
    are the failing cases of a parametrised test whose other case stays shown (that case shows the assertion's
    shape), then other failing tests (a table that answers unknown inputs as the old code did passes a held-back
    test the old code passes), then the rest; within each, a test whose name holds no digit (a block shows the
    name: a value in it is a value handed out)."""
    want = min(len(ids) - 1, max(1, math.floor(share * len(ids) + 0.5)))
    order = {t: rng.random() for t in ids}
    first = sorted(ids, key=lambda t: (t not in failing, order[t]))
    shown = first[0]
    cases: dict[str, list[str]] = {}
    for t in ids:
        if "[" in t:
            cases.setdefault(t.split("[", 1)[0], []).append(t)
    anchors = {shown} | {next(t for t in first if t in group) for group in cases.values() if shown not in group}
    sibling = {t for group in cases.values() if len(group) >= 2 for t in group if t not in anchors}
    rest = sorted((t for t in ids if t != shown), key=lambda t: (t not in failing, t not in sibling,
                                                                 any(c.isdigit() for c in named(t)), order[t]))
    return rest[:want]


def split(failures: dict[str, str], held: dict[str, str]) -> tuple[dict[str, str], dict[str, int]]:
    """(the shown failures {id: message}, the held-back ones {requirement: how many of its tests fail})."""
    shown: dict[str, str] = {}
    counts: dict[str, int] = {}
    for nodeid, message in failures.items():
        if nodeid in held:
            counts[held[nodeid]] = counts.get(held[nodeid], 0) + 1
        else:
            shown[nodeid] = message
    return shown, counts


def unnamed(text: str, held: dict[str, str]) -> str:
    """`text` (a problem of the run: tests that did not run, a collection error) with held-back test ids
    replaced by the words `a held-back test` (longest first: a parametrised id contains its base)."""
    for nodeid in sorted(held, key=len, reverse=True):
        text = text.replace(nodeid, "a held-back test")
        base = nodeid.split("[", 1)[0]
        if base != nodeid:
            text = text.replace(base, "a held-back test")
    return text


def stats(held: dict[str, str], failing: list[str], run_ok: bool) -> dict[str, object]:
    """What the ledger keeps of a stop's held-back tests (`gates.acceptance.held_back`): the report's
    hard-coding rate counts the stops whose shown tests all passed and a held-back test failed."""
    held_failed = sum(1 for t in failing if t in held)
    shown_failed = len(failing) - held_failed
    return {"sealed": len(held), "failed": held_failed, "shown_failed": shown_failed,
            "shown_passed": run_ok and shown_failed == 0, "blocked": run_ok and shown_failed == 0 and held_failed > 0}
