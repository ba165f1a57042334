"""Test commands in the project's own files that CI or a person runs them through, beside tox and the workflows
(docs/own-suite.md "Weakening, named"): a Makefile's recipes, `scripts/*.sh`, a composite action's `run:` steps
(`.github/actions/*/action.yml`) and a noxfile's `session.run(...)` calls, each read as a CI step's script is
(`seal.ci_runs`, `seal.excluded`): a test command gone, given an option that takes tests out (`-k`, `--deselect`,
`-p NAME`, `--setup-only`), made to let its failure through (`|| true`, make's `-` prefix, `set +e`), or its
`--cov-fail-under` lowered. A command added, or given `-v`, is none."""

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


def _lines(name: str, text: str | None) -> list[str]:
    """The test commands of a file, one a line (`runners`: a line that runs pytest, tox, nox, ...)."""
    if text is None:
        return []
    if name.endswith("noxfile.py"):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ["?"]  # (a noxfile that no longer parses runs none: named where it ran tests at the seal)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "run"]
        lines = [" ".join(a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else "ARG" for a in c.args)
                 + (" || true" if any(k.arg == "success_codes" for k in c.keywords) else "") for c in calls]
    elif name.endswith((".yml", ".yaml")):  # a composite action: its steps' `run:` scripts
        import yaml

        try:
            steps = ((yaml.safe_load(text) or {}).get("runs") or {}).get("steps") or []
        except (yaml.YAMLError, AttributeError, RecursionError):
            return ["?"]
        lines = [line for s in steps if isinstance(s, dict) and isinstance(s.get("run"), str)
                 for line in s["run"].replace("\\\n", " ").splitlines()]
    else:  # a Makefile's recipes (a tab first) or a shell script: one command a line
        lines = [line.strip() for line in text.replace("\\\n", " ").splitlines() if not line.lstrip().startswith("#")]
        lines = [("- " if line.startswith("-") else "") + line.lstrip("-@+ ") for line in lines]
    return [line for line in lines if runners(line.lstrip("- "))]


def findings(sealed_texts: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """What the files changed since the seal (`current`: {file: its text now, None gone}) take out of the test
    commands they held at the seal (`sealed_texts`)."""
    out = []
    for name in sorted(current):
        ran, runs = _lines(name, sealed_texts.get(name)), _lines(name, current[name])
        if not ran or "?" in ran:
            continue

        def add(rule: str, what: str, name: str = name) -> None:
            out.append({"test": name, "rule": rule, "what": what})

        words = {w for line in runs for w in _pytest_options(line)} - {w for line in ran for w in _pytest_options(line)}
        by = {w for line in ran for w in runners(line.lstrip("- "))}
        if "?" in runs or by - {w for line in runs for w in runners(line.lstrip("- "))} \
                or len([r for r in runs if not set(_pytest_options(r)) & set(NO_RUN)]) < len(ran):
            add("ci-test-removed", f"{len(ran)} test command(s) at the seal, {len([r for r in runs if r != '?'])} now "
                "(or one given an option after which it runs no test)")
        for word in sorted(words):
            if word in CI_EXCLUDING or word.startswith("-p ") and (not word.startswith("-p no:") or word[6:] in OFF_WEAKENS):
                add("config-excluded", f"a test command gained {word}")
            elif word in NO_COV:
                add("coverage-lowered", f"a test command gained {word}")
        through = [r for r in runs if (r.startswith("- ") or _or_else(r) or "set +e" in r or wrapper_lets_through(r))
                   and r not in ran]
        if through or "set +e" in (current[name] or "") and "set +e" not in (sealed_texts.get(name) or ""):
            add("ci-ignores-failures", f"a test command now lets its failure through ({(through or ['set +e'])[0][:80]})")
        was = [v for r in ran if (v := _cov_fail_under(r)) is not None]
        now = [v for r in runs if (v := _cov_fail_under(r)) is not None]
        if was and (not now or min(now) < min(was)):
            add("coverage-lowered", f"--cov-fail-under {min(was):g} became {f'{min(now):g}' if now else 'none'}")
    return out
