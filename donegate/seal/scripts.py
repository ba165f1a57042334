"""Test commands in the project's own files that CI or a person runs them through, beside tox and the workflows
(docs/own-suite.md "Weakening, named"): a Makefile's recipes, `scripts/*.sh`, a composite action's `run:` steps
(`.github/actions/*/action.yml`) and a noxfile's `session.run(...)` calls, each read as a CI step's script is
(`seal.ci_runs`, `seal.excluded`): a test command gone, given an option that takes tests out (`-k`, `--deselect`,
`-p NAME`, `--setup-only`), made to let its failure through (`|| true`, make's `-` prefix, `set +e`), or its
`--cov-fail-under` lowered, compared per Makefile target and nox session. A command added (a new target, a new session:
an addition, however narrow), or given `-v`, is none."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from donegate.seal.ci_runs import _or_else, runners, wrapper_lets_through
from donegate.seal.excluded import CI_EXCLUDING, NO_COV, NO_RUN, OFF_WEAKENS, _cov_fail_under, _pytest_options

NAMES = ("Makefile", "makefile", "GNUmakefile", "noxfile.py")


def sealed(project: Path) -> set[str]:
    """The files of `project` read here (relative): `NAMES`, `scripts/*.sh`, `.github/actions/*/action.y(a)ml`."""
    out = {n for n in NAMES if (project / n).is_file()}
    for folder, pattern in (("scripts", r".*\.sh"), (".github/actions", r"action\.ya?ml")):
        for root, dirs, files in os.walk(project / folder):
            dirs[:] = [d for d in dirs if not d.startswith(".")] if folder == "scripts" else dirs
            out |= {os.path.relpath(os.path.join(root, f), project) for f in files if re.fullmatch(pattern, f)}
    return out


def read(name: str) -> bool:
    """Whether `name` (relative to the project) is a file read here."""
    return name in NAMES or bool(re.fullmatch(r"scripts/.*\.sh|\.github/actions/.*/action\.ya?ml", name))


def _units(name: str, text: str | None) -> dict[str, list[str]]:
    """The test commands of a file, one a line (`runners`: a line that runs pytest, tox, nox, ...), by the unit that
    runs them: a Makefile's target, a noxfile's session (its function), else the whole file (key ""). `{"": ["?"]}`:
    the file no longer reads."""
    if text is None:
        return {}
    units: dict[str, list[str]] = {}
    if name.endswith("noxfile.py"):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {"": ["?"]}  # (a noxfile that no longer parses runs none: named where it ran tests at the seal)
        for unit, node in [("", tree), *((f.name, f) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef))]:
            calls = [c for c in _own_calls(node) if getattr(c.func, "attr", "") == "run"]
            units.setdefault(unit, []).extend(" ".join(a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else "ARG"
                                    for a in c.args)
                           + (" || true" if any(k.arg == "success_codes" for k in c.keywords) else "") for c in calls)
    elif name.endswith((".yml", ".yaml")):  # a composite action: its steps' `run:` scripts
        import yaml

        try:
            runs = (yaml.safe_load(text) or {}).get("runs") or {}
            steps = runs.get("steps") or []
        except (yaml.YAMLError, AttributeError, RecursionError, TypeError):
            return {"": ["?"]}
        if not isinstance(steps, list):
            return {"": ["?"]}  # (`steps: 5`: GitHub runs none)
        units[""] = [line for s in steps if isinstance(s, dict) and isinstance(s.get("run"), str)
                     for line in s["run"].replace("\\\n", " ").splitlines()]
    else:  # a Makefile's recipes (a tab first) or a shell script: one command a line
        unit = ""
        for line in text.replace("\\\n", " ").splitlines():
            target = re.match(r"([^\s#:=][^#:=]*)::?(?!=)", line) if name in NAMES else None  # (linear: no `\s*`)
            unit = target.group(1).strip() if target else unit
            line = line.strip()
            if not line.startswith("#"):
                units.setdefault(unit, []).append(("- " if line.startswith("-") else "") + line.lstrip("-@+ "))
    return {unit: [line for line in lines if runners(line.lstrip("- "))] for unit, lines in units.items()}


def _own_calls(node: ast.AST) -> list[ast.Call]:
    """The calls in `node` outside the functions defined in it (theirs are their own session's)."""
    out, todo = [], list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [child] if isinstance(child, ast.Call) else []
            todo += ast.iter_child_nodes(child)
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))


def findings(sealed_texts: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """What the files changed since the seal (`current`: {file: its text now, None gone}) take out of the test
    commands they held at the seal (`sealed_texts`), compared per Makefile target and nox session (as tox's are per
    environment): a target or session new since the seal is an addition, never a weakening; one gone is compared
    with every command of the file now."""
    out = []
    for name in sorted(current):
        was, now = _units(name, sealed_texts.get(name)), _units(name, current[name])
        if not any(was.values()) or "?" in was.get("", []):
            continue
        every = [line for lines in now.values() for line in lines]
        kind = "session" if name.endswith(".py") else "target"
        found = dict.fromkeys((rule, f"{kind} {unit}: {what}" if unit and unit in now else what)
                              for unit, ran in was.items() if ran for rule, what in _compare(ran, now.get(unit, every)))
        if {w for lines in was.values() for line in lines for w in runners(line.lstrip("- "))} - {
                w for line in every for w in runners(line.lstrip("- "))} and "ci-test-removed" not in {r for r, _ in found}:
            found = {("ci-test-removed", f"{sum(map(len, was.values()))} test command(s) at the seal, "
                      f"{len([r for r in every if r != '?'])} now"): None, **found}
        if "set +e" in (current[name] or "") and "set +e" not in (sealed_texts.get(name) or ""):
            found[("ci-ignores-failures", "a test command now lets its failure through (set +e)")] = None
        out += [{"test": name, "rule": rule, "what": what} for rule, what in found]
    return out


def _compare(ran: list[str], runs: list[str]) -> list[tuple[str, str]]:
    """(rule, what) the test commands `runs` (a target's, a session's, a file's now) take out of `ran` (then)."""
    out = []
    if "?" in runs or len([r for r in runs if not set(_pytest_options(r)) & set(NO_RUN)]) < len(ran):
        out.append(("ci-test-removed", f"{len(ran)} test command(s) at the seal, {len([r for r in runs if r != '?'])} "
                    "now (or one given an option after which it runs no test)"))
    words = {w for line in runs for w in _pytest_options(line)} - {w for line in ran for w in _pytest_options(line)}
    for word in sorted(words):
        if word in CI_EXCLUDING or word.startswith("-p ") and (not word.startswith("-p no:") or word[6:] in OFF_WEAKENS):
            out.append(("config-excluded", f"a test command gained {word}"))
        elif word in NO_COV:
            out.append(("coverage-lowered", f"a test command gained {word}"))
    through = [r for r in runs if (r.startswith("- ") or _or_else(r) or "set +e" in r or wrapper_lets_through(r))
               and r not in ran]
    if through:
        out.append(("ci-ignores-failures", f"a test command now lets its failure through ({through[0][:80]})"))
    was = [v for r in ran if (v := _cov_fail_under(r)) is not None]
    now = [v for r in runs if (v := _cov_fail_under(r)) is not None]
    if was and (not now or min(now) < min(was)):
        out.append(("coverage-lowered", f"--cov-fail-under {min(was):g} became {f'{min(now):g}' if now else 'none'}"))
    return out
