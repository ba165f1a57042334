"""What the files around the tests take out of a run, by their syntax: the pytest configuration (`addopts`, the
collection keys), a conftest.py's hooks, a coverage threshold, a CI workflow's test steps (docs/own-suite.md). The
tests' own shapes are `donegate.seal.loosened`'s.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from donegate.seal.ci_runs import (CHANGE_EVENTS, runners, _backgrounded, _let_through, _or_else, _truthy, events, exported, expressions,
                                   filtered, no_time, on_path, reach, runs_tests, shadowed, shell_lets_through, skipped_jobs, split, wrapped, wrapper_lets_through)
from donegate.seal import gated
from donegate.seal.gh_expr import never
from donegate.seal.pytest_files import pytest_section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Options that take tests out of a run: in `addopts`, or as the keys that say what is collected.
EXCLUDING_OPTS = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--co", "--collect-only", "--lf", "--last-failed",
                  "-x", "--exitfirst", "--maxfail", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip",
                  "--pyargs",  # (testpaths read as module names: another `tests` installed runs instead)
                  "--noconftest",  # (what the conftest.py files check or set up is left out)
                  # (pytest shows something and exits 0 without running a test)
                  "--setup-only", "--setup-plan", "--fixtures", "--funcargs", "--fixtures-per-test", "--markers",
                  "--version", "-V", "--help", "-h", "--cache-show")
# pytest's own plugins that `-p no:NAME` turns off to run fewer tests or let more through: no test module collected
# (`python`), no TestCase or doctest, no warning filters (`filterwarnings = error` undone), no unraisable exceptions
# or threads' errors, no `pythonpath` (the installed copy tested instead).
OFF_WEAKENS = ("python", "unittest", "doctest", "warnings", "unraisableexception", "threadexception", "python_path")
# Options that take pytest-cov's check out of a run (its threshold never read) or read its configuration elsewhere;
# `COVERAGE_RCFILE` in an environment does the latter for coverage.py itself.
NO_COV = ("--no-cov", "-p no:cov", "-p no:pytest_cov", "--cov-config", "COVERAGE_RCFILE")
# `addopts` flags that add tests or checks, lost (a key of the same meaning set instead keeps it: `strict_markers`),
# and pytest's ini keys that make a run stricter, turned off.
LOST_WEAKENS = {"--doctest-modules": "", "--doctest-glob": "", "--runxfail": "", "--strict-markers": "strict_markers",
                "--strict-config": "strict_config", "--strict": "strict"}
STRICT_KEYS = ("strict", "strict_markers", "strict_config", "strict_xfail", "strict_parametrization_ids")
COLLECT_KEYS = ("testpaths", "python_files", "python_classes", "python_functions", "norecursedirs", "collect_ignore")


def _options(name: str, text: str | None) -> dict[str, str]:
    """The pytest options of a configuration file's text ({} for none)."""
    if not text:
        return {}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / name.rsplit("/", 1)[-1]
        p.write_text(text, encoding="utf-8")
        found = pytest_section(p) or {}
    if name.endswith("pyproject.toml"):  # the pyproject reader keeps testpaths only: the rest by its own look
        from donegate.core.util import parsed_toml

        data = parsed_toml(text)
        tool = data.get("tool") if data is not None else None
        tool = tool.get("pytest", {}) if isinstance(tool, dict) else None
        opts = tool.get("ini_options", tool) if isinstance(tool, dict) else None
        if data is not None:
            found = {k: ("\n" if k == "filterwarnings" else " ").join(map(str, v)) if isinstance(v, list) else str(v)
                     for k, v in (opts if isinstance(opts, dict) else {}).items()}
    return found


def _words(addopts: str | None) -> list[str]:
    """`addopts` split as pytest splits it (`shlex`: `"-knot add"` is one word), `--opt=value` as two, and a plugin
    brought in as one word (`-p name`, `-pname`; `-p no:name` turns one off and is none)."""
    import shlex

    try:
        words = shlex.split(addopts or "")
    except ValueError:
        words = (addopts or "").split()
    out: list[str] = []
    for w in words:
        if w.startswith("--") and "=" in w:
            out += w.split("=", 1)
        elif out and out[-1] == "-p":  # `-p name`
            out[-1] = "-p " + w
        elif w.startswith("-p") and len(w) > 2:  # `-pname`
            out.append("-p " + w[2:])
        else:
            out.append(w)
    return out


def _errors(filterwarnings: str | None) -> bool:
    """Whether `filterwarnings` turns every warning into an error: its last line about every warning (`error`,
    `ignore`, `ignore::Warning`, `default:.*`; not `error::SomeWarning`) is `error`: pytest applies the later lines
    over the earlier ones."""
    last = None
    for line in (filterwarnings or "").replace(",", "\n").splitlines():
        action, *rest = line.strip().strip("'\"").split(":")
        fields = [f.strip() for f in rest] + ["", "", ""]
        if action.strip() and fields[0] in ("", ".*") and fields[1] in ("", "Warning", "builtins.Warning") \
                and not any(fields[2:]):
            last = action.strip()
    return last == "error"


def _overridden(opts: dict[str, str]) -> dict[str, str]:
    """The options with `addopts`' `-o KEY=VALUE` (`--override-ini`) applied: pytest reads them over the file's keys
    (`-o xfail_strict=false`)."""
    words, out = _words(opts.get("addopts")), dict(opts)
    for i, w in enumerate(words):
        value = words[i + 1] if w in ("-o", "--override-ini") and i + 1 < len(words) else \
            w[2:] if w.startswith("-o") and not w.startswith("--") and len(w) > 2 else None
        key, eq, val = (value or "").partition("=")
        if eq and key.strip() and key.strip() != "addopts":
            out[key.strip()] = val
    return out


def _value(words: list[str], option: str) -> str | None:
    """The value `addopts` gives `option` (`--confcutdir tests`, `--confcutdir=tests`), None without it."""
    return next((words[i + 1] for i, w in enumerate(words[:-1]) if w == option), None)


def _ignores_all(addopts: str | None) -> int:
    """How many `-W` of `addopts` ignore every warning (`-W ignore`, `-Wignore::`, `--pythonwarnings=ignore`; not
    `-W ignore::SomeWarning`): pytest applies them after `filterwarnings`, so they undo its `error`."""
    words, out = _words(addopts), 0
    for i, w in enumerate(words):
        value = words[i + 1] if w in ("-W", "--pythonwarnings") and i + 1 < len(words) else \
            w[2:] if w.startswith("-W") and len(w) > 2 else None
        fields = (value or "").strip("'\"").split(":")
        out += fields[0].strip() == "ignore" and not any(f.strip() for f in fields[1:])
    return out


def _errors_w(addopts: str | None) -> int:
    """How many `-W error` of `addopts` turn every warning into an error (`-Werror`, `--pythonwarnings=error`)."""
    words = _words(addopts)
    values = [words[i + 1] if w in ("-W", "--pythonwarnings") and i + 1 < len(words) else w[2:]
              for i, w in enumerate(words) if w in ("-W", "--pythonwarnings") or w.startswith("-W") and len(w) > 2]
    return sum(v.strip("'\"").split(":")[0] == "error" and not any(v.strip("'\"").split(":")[1:]) for v in values)


def _strict(xfail_strict: str | None) -> bool:
    """`xfail_strict` on as pytest reads an ini bool (`true`, `1`, `yes`, `on`; pyproject's `true` read as True)."""
    return (xfail_strict or "").strip().strip("'\"").lower() in ("true", "1", "yes", "y", "on")


def _option(word: str) -> str:
    """A short option as pytest reads it: `-knot_slow` is `-k`; in a cluster of flags, `-qx` holds `-x`, and an
    option that takes a value ends the flags (`-rxs`: `-r xs`, the report's characters)."""
    if len(word) > 2 and word[0] == "-" and word[1] not in "-p":
        for ch in word[1:]:
            if ch in "kmx":
                return "-" + ch
            if ch in "pcorWn" or not ch.isalpha():
                break
    return word


def config_findings(sealed: dict[str, str | None], current: dict[str, str | None],
                    sealed_as: dict[str, str] | None = None, carried: Any = None, tests: list[str] | None = None
                    ) -> list[dict[str, str]]:
    """Tests taken out by configuration: an option in `addopts` that deselects or stops early, a collection key
    narrowed or changed. `sealed` and `current`: {configuration file: text (None: none)}; `sealed_as`: {file: the
    file its sealed text is read as} (a file pytest reads now before the sealed one is compared with that one);
    `carried(marks)`: the sealed passing tests carrying one of `marks` now (`-m 'not slow'` none carries: none);
    `tests`: the sealed test ids (a `testpaths` that holds every one's file is no narrowing). A sealed file gone whose
    keys another file now holds (`sealed_as`: pytest.ini moved into pyproject.toml) is read through that one alone."""
    out = []
    for name in sorted(set(sealed) | set(current)):
        if current.get(name) is None and name in (sealed_as or {}).values():
            continue
        before = _overridden(_options((sealed_as or {}).get(name, name), sealed.get(name)))
        now = _overridden(_options(name, current.get(name)))
        old_words = set(map(_option, _words(before.get("addopts"))))
        for word in map(_option, _words(now.get("addopts"))):
            if word == "-m" and carried and gated.selects_all(_value(_words(now.get("addopts")), "-m"), carried):
                continue
            if (word in EXCLUDING_OPTS or (word.startswith("-p ") and not word.startswith("-p no:"))
                    or word.startswith("-p no:") and word[6:] in OFF_WEAKENS) and word not in old_words:
                out.append({"test": name, "rule": "config-excluded", "what": f"addopts gained {word}"})
            elif word in NO_COV and word not in old_words:
                out.append({"test": name, "rule": "coverage-lowered", "what": f"addopts gained {word}: coverage's "
                            "threshold no longer checked as sealed"})
        now_words = set(map(_option, _words(now.get("addopts"))))
        for word, key in LOST_WEAKENS.items():
            if word in old_words and word not in now_words and not (key and _strict(now.get(key))):
                out.append({"test": name, "rule": "config-excluded", "what": f"addopts lost {word}"})
        out += [{"test": name, "rule": "config-excluded", "what": f"{key} lost true"} for key in STRICT_KEYS
                if _strict(before.get(key)) and not _strict(now.get(key))]
        if _errors_w(before.get("addopts")) > _errors_w(now.get("addopts")):
            out.append({"test": name, "rule": "config-excluded", "what": "addopts lost -W error: a warning no longer fails a test"})
        cut = _value(_words(now.get("addopts")), "--confcutdir")
        if cut not in (None, _value(_words(before.get("addopts")), "--confcutdir")) and os.path.normpath(cut) != ".":
            out.append({"test": name, "rule": "config-excluded", "what": f"addopts gained --confcutdir {cut}: the "
                        "conftest.py files above it are no longer read"})
        if _errors(before.get("filterwarnings")) and not _errors(now.get("filterwarnings")):
            out.append({"test": name, "rule": "config-excluded",
                        "what": "filterwarnings lost error: a warning no longer fails a test"})
        if _errors(before.get("filterwarnings")) and _ignores_all(now.get("addopts")) > _ignores_all(before.get("addopts")):
            out.append({"test": name, "rule": "config-excluded",
                        "what": "addopts gained -W ignore: filterwarnings' error undone, a warning no longer fails a test"})
        if _strict(before.get("xfail_strict")) and not _strict(now.get("xfail_strict")):
            out.append({"test": name, "rule": "config-excluded",
                        "what": "xfail_strict lost true: an xfail test that passes no longer fails"})
        for key in COLLECT_KEYS:
            if key == "testpaths" and now.get(key) and tests and all(any(
                    t.split("::")[0].startswith(p.strip("/") + "/") for p in now[key].split()) for t in tests):
                continue  # (every sealed test's file under the paths now: `testpaths = tests` added)
            if now.get(key, before.get(key)) != before.get(key):
                out.append({"test": name, "rule": "config-excluded",
                            "what": f"{key} changed from {before.get(key)!r} to {now.get(key)!r}"})
        was, is_now = _cov_fail_under(before.get("addopts")), _cov_fail_under(now.get("addopts"))
        if was is not None and (is_now is None or is_now < was):  # pytest-cov's threshold, in addopts
            out.append({"test": name, "rule": "coverage-lowered",
                        "what": f"--cov-fail-under {was:g} became {'none' if is_now is None else f'{is_now:g}'}"})
    return out


def _cov_fail_under(addopts: str | None) -> float | None:
    """The `--cov-fail-under` of options as pytest-cov reads them: the last given wins (`=90 --cov-fail-under=0`: 0)."""
    words = re.split(r"[\s=;'\"]+", addopts or "")  # (also in a shell's script: `bash -c 'pytest ...=90; x'`)
    out: float | None = None
    for i, word in enumerate(words[:-1]):
        if word == "--cov-fail-under":
            try:
                out = float(words[i + 1])
            except ValueError:
                return None
    return out


# The environment variables pytest reads as options: `PYTEST_ADDOPTS` (before the command line's), `PYTEST_PLUGINS`
# (modules loaded as plugins, as `-p`).
def env_options(env: dict[str, str]) -> list[str]:
    """The pytest options an environment gives every pytest run in it, as pytest reads them (`-knot_add` as `-k`;
    each of `PYTEST_PLUGINS` as `-p NAME`; `PYTEST_DISABLE_PLUGIN_AUTOLOAD` as itself)."""
    plugins = [f"-p {p.strip()}" for p in env.get("PYTEST_PLUGINS", "").split(",") if p.strip()]
    # (every installed plugin left out, pytest-cov's check with them: any value but "" does it)
    off = ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] if env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "") else []
    return [*map(_option, _words(env.get("PYTEST_ADDOPTS"))), *plugins, *off]


# -- coverage thresholds and CI workflows ----------------------------------------------------------------------

# Options of a CI step's pytest command that take tests out of its run (`-x` and the like end it early, but a
# failure still fails the step).
CI_EXCLUDING = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--co", "--collect-only", "--lf", "--last-failed",
                "--noconftest", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "-o addopts", "-c elsewhere")
# The files pytest reads its configuration from: a test command pointed (`-c`) at another reads none of the sealed one.
CONFIGS = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "tox.ini", "setup.cfg")
# Options after which pytest runs no test (it shows something and exits 0): a step given one runs none.
NO_RUN = ("--setup-only", "--setup-plan", "--fixtures", "--funcargs", "--fixtures-per-test", "--markers", "--version",
          "-V", "--help", "-h", "--cache-show")


def runs_none(run: str) -> bool:
    """Whether a test command's pytest is given an option after which it runs no test (`NO_RUN`): a CI step's, a tox
    environment's command."""
    return bool(set(_pytest_options(run)) & set(NO_RUN))


def _pytest_commands(run: str, folder: str = ".") -> list[tuple[str, list[str]]]:
    """(the folder it runs in, the words after `pytest`) of each pytest command in a step's commands (split as the
    shell splits them; `folder`: the step's `working-directory`, moved by a `cd` before it); the words before
    `pytest` are the launcher's (`python -m`)."""
    import shlex

    out = []
    for _, command in split(run):
        if (inner := wrapped(command)) is not None:  # (`bash -c 'pytest -k x'`: its script's commands)
            out += _pytest_commands(inner[0], folder)
            continue
        try:
            words = [w.strip() for w in shlex.split(command)]
        except ValueError:
            words = command.split()
        if words[:1] == ["cd"]:
            folder = _joined(folder, words[1] if len(words) > 1 else "~")
        at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in ("pytest", "py.test")), None)
        if at is not None:
            out.append((folder, words[at + 1:]))
    return out


def _joined(folder: str, path: str) -> str:
    """`path` run from `folder`, relative to the repository; "?" where that is not known (a variable, a path above
    the repository or outside it), which is read as every test (a path not known is no finding)."""
    if folder == "?" or any(c in path for c in "$`~") or path.startswith("/"):
        return "?"
    out = os.path.normpath(os.path.join(folder, path))
    return "?" if out == ".." or out.startswith("../") else out


def _pytest_options(run: str) -> list[str]:
    """The options given to pytest in a step's commands (`python -m pytest -k 'not x'`: `-k`; `--ignore=x`:
    `--ignore`), as pytest reads them (`_option`)."""
    out = []
    for _, words in _pytest_commands(run):
        for i, w in enumerate(words):
            value = words[i + 1] if i + 1 < len(words) and w in ("-o", "--override-ini", "-c", "--config-file") else \
                w.split("=", 1)[1] if w.startswith(("--override-ini=", "--config-file=")) else w[2:] if w[:2] in ("-o", "-c") else ""
            if w.startswith(("-o", "--override-ini")) and re.match(r"\s*addopts\s*=", value):
                out.append("-o addopts")  # (every sealed addopts dropped: CI_EXCLUDING)
            elif w.startswith(("-c", "--config-file")) and value and value.removeprefix("./") not in CONFIGS:
                out.append("-c elsewhere")  # (`-c /dev/null`: not the sealed configuration)
            elif w == "-p" and i + 1 < len(words):  # `-p no:warnings`: one word, as in addopts (`_words`)
                out.append("-p " + words[i + 1])
            elif w.startswith("-p") and len(w) > 2 and not w.startswith("--"):
                out.append("-p " + w[2:])
            elif w.startswith("-"):
                out.append(_option(w.split("=", 1)[0]))
    return out


# pytest's options (and common plugins') that never take a value: the word after one is a path. Any other option
# given without `=` may take the next word as its value (`-n 2`, `--cov src`, a plugin's): that word is not read as
# a path (a path missed there is no finding; a value read as a path would be a false one).
FLAGS = {"-q", "-v", "-s", "-x", "-l", "-h", "-vv", "-vvv", "-qq", "--quiet", "--verbose", "--exitfirst", "--lf",
         "--last-failed", "--ff", "--failed-first", "--nf", "--new-first", "--sw", "--stepwise", "--co", "--collect-only",
         "--strict-markers", "--strict-config", "--strict", "--showlocals", "--no-header", "--no-summary", "--runxfail",
         "--pdb", "--trace", "--disable-warnings", "--disable-pytest-warnings", "--full-trace", "--fulltrace",
         "--cache-clear", "--setup-only", "--setup-show", "--setup-plan", "--doctest-modules", "--pyargs",
         "--continue-on-collection-errors", "--cov-append", "--cov-branch", "--no-cov", "--no-cov-on-fail", "-f",
         "--looponfail", "--forked", "--benchmark-skip", "--benchmark-only", "--benchmark-disable", "--lsof", "-ra"}
SHORT_FLAGS, SHORT_VALUES = "qvsxlf", "kmpcorWn"


def _takes_next(word: str) -> bool:
    """Whether the option `word` (given without `=`) takes the next word as its value."""
    if word in FLAGS or "=" in word:
        return False
    if len(word) > 2 and word[1] != "-":  # a cluster: `-qx` flags only; `-vk` ends with `-k`; `-rxXs`, `-n2` hold theirs
        for i, ch in enumerate(word[1:], 1):
            if ch in SHORT_VALUES:
                return i == len(word) - 1
            if ch not in SHORT_FLAGS:
                return False
        return False
    return True


def _pytest_paths(run: str, folder: str = ".") -> list[str] | None:
    """What a step's pytest commands name to run, relative to the repository (`./tests/` as `tests`; a test id kept);
    the folder it runs in for a command that names none (pytest's `testpaths`, or that folder: all of them), "?" for
    one not known (`_joined`); None for a step that runs no pytest command (`tox`, `make test`)."""
    commands = _pytest_commands(run, _joined(".", folder))
    if not commands:
        return None
    out: list[str] = []
    for at, words in commands:
        named, skip = [], False
        for w in words:
            if skip:
                skip = False
            elif w.startswith("-"):
                skip = _takes_next(w)
            elif w:
                named.append(_joined(at, w))
        out += named or [at]
    return sorted(set(out))


def _covers(path: str, what: str) -> bool:
    """Whether running `path` runs `what` (a path or a test id); a path with a shell pattern (`tests/test_*.py`) as
    the shell expands it; "?" (not known) runs everything."""
    if path in (".", "?") or what == path or what.startswith((path + "/", path + "::", path + "[")):
        return True
    if any(c in path for c in "*?["):
        import fnmatch

        file = what.split("::", 1)[0]
        return any(fnmatch.fnmatchcase(file if not n else file.rsplit("/", n)[0], path) for n in range(file.count("/") + 1))
    return False


def _narrowed(before: list[str], now: list[str], tests: list[str] | None) -> list[str]:
    """What the sealed steps' pytest commands ran that the current ones do not: the sealed test ids (`tests`, when
    known: `pytest tests` where `pytest` ran is no narrowing when every test is under `tests/`), else the sealed
    paths themselves."""
    wanted = [t for t in tests if any(_covers(p, t) for p in before)] if tests else before
    return [t for t in wanted if not any(_covers(p, t) for p in now)]


def _test_steps(text: str | None) -> dict[str, dict[str, Any]] | None:
    """{job/step: {"ignored": failures ignored, "excludes": pytest options that take tests out}} of a workflow's steps
    that run the tests; None when it does not parse."""
    if not text:
        return {}
    import yaml

    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):  # (5,000 nested `[` go past the parser's stack)
        return None
    out: dict[str, dict[str, Any]] = {}
    top = _dict(data)
    on = events(text) or set(CHANGE_EVENTS)  # (a `github.event_name` compared in an `if:`: read on these)
    never_run = skipped_jobs(_dict(top.get("jobs")), on)
    for job, body in _dict(top.get("jobs")).items():
        if not isinstance(body, dict) or job in never_run or no_time(body.get("timeout-minutes")):
            continue
        job_ignores = _truthy(body.get("continue-on-error"))
        written: dict[str, str] = {}  # what the job's steps wrote to $GITHUB_ENV: the later steps' environment
        pathed = False  # whether a step so far put a folder of the repository first on PATH
        steps = body.get("steps")
        job_run, top_run = _dict(_dict(body.get("defaults")).get("run")), _dict(_dict(top.get("defaults")).get("run"))
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            run = step.get("run") if isinstance(step, dict) else None
            run = expressions(run) if isinstance(run, str) and "${{" in run else run  # (`A || 'B'`: GitHub's, not the shell's)
            pathed = pathed or isinstance(run, str) and on_path(run, {**_env(top), **_env(body), **_env(step)})
            if isinstance(run, str) and runs_tests(run) and not never(step.get("if"), on) \
                    and not no_time(step.get("timeout-minutes")) and not runs_none(run):
                shell = step.get("shell") or job_run.get("shell") or top_run.get("shell")
                ignored = job_ignores or pathed or _truthy(step.get("continue-on-error")) or _or_else(run) or "set +e" in run \
                    or _let_through(run, shell) or shadowed(run) or wrapper_lets_through(run) or shell_lets_through(run, shell) \
                    or _backgrounded(run)
                folder = step.get("working-directory") or job_run.get("working-directory") or "."
                env = {**_env(top), **_env(body), **written, **_env(step)}  # PYTEST_ADDOPTS: pytest reads it as options
                words = _pytest_options(run) + env_options(env)  # (a plugin brought in: `-p NAME`, PYTEST_PLUGINS)
                words += re.findall(r"\$\{\{\s*(vars\.[\w-]+)", run + " ".join(env.values()))  # (set outside the repository)
                cov = [v for v in (_cov_fail_under(run), _cov_fail_under(env.get("PYTEST_ADDOPTS"))) if v is not None]
                out[f"{job}/{step.get('name') or i}"] = {"ignored": ignored, "excludes": sorted(
                    {w for w in words if w in (*CI_EXCLUDING, *NO_RUN, *NO_COV) or w.startswith("vars.") or w.startswith("-p ") and (
                        not w.startswith("-p no:") or w[6:] in OFF_WEAKENS)} | {"COVERAGE_RCFILE"} & set(env)),
                    "cov": None if set(words) & set(NO_COV) else min(cov, default=None),
                    "paths": _pytest_paths(run, str(folder)), "runs": sorted(runners(run))}
            if isinstance(run, str):
                written.update(exported(run))
    return out


def _dict(value: Any) -> dict[Any, Any]:
    """A workflow's mapping, or none: a key a person wrote as a list or a word (`defaults: x`) holds nothing to read."""
    return value if isinstance(value, dict) else {}


def _env(part: Any) -> dict[str, str]:
    env = part.get("env") if isinstance(part, dict) else None
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}


def steps_weakened(before: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(rule, what) a workflow's test steps now (`_test_steps`) take out of those at the seal: a runner gone, failures
    ignored, an option that takes tests out, `--cov-fail-under` lowered."""
    out = []
    # (what runs, not how many steps: two jobs made one matrix job, an install line, run as much; a runner
    # replaced, `tox` where `pytest` ran, is no loss, one dropped beside the others is)
    ran_by, runs_by = ({w for v in steps.values() for w in v["runs"]} for steps in (before, now))
    if ran_by - runs_by and len(runs_by) < len(ran_by):
        out.append(("ci-test-removed", f"{len(before)} test step(s) at the seal ran {', '.join(sorted(ran_by))}, "
                    f"{len(now)} now run {', '.join(sorted(runs_by)) or 'none'}"))
    newly = sorted(k for k, v in now.items() if v["ignored"] and not (before.get(k) or {}).get("ignored", False))
    if newly:
        out.append(("ci-ignores-failures", f"{', '.join(newly)} now ignores its failures"))
    had = {w for v in before.values() for w in v.get("excludes", [])}
    out += [("coverage-lowered" if word in NO_COV else "config-excluded", f"the test step {key} gained {word}" + (
        ": its value is set in the repository's settings, not in a file" if word[:5] == "vars." else ""))
        for key, v in sorted(now.items()) for word in v["excludes"] if word not in had]
    cov_was, cov_now = ([v["cov"] for v in steps.values() if v.get("cov") is not None] for steps in (before, now))
    if cov_was and (not cov_now or min(cov_now) < min(cov_was)):  # (pytest-cov's, in the test steps)
        out.append(("coverage-lowered", f"--cov-fail-under {min(cov_was):g} became "
                    f"{f'{min(cov_now):g}' if cov_now else 'none'} in the test steps"))
    return out


def ci_findings(sealed: dict[str, str | None], current: dict[str, str | None], tests: list[str] | None = None,
                changed: list[str] | None = None, mains: list[str] | None = None,
                flows: dict[str, tuple[str | None, str | None]] | None = None,
                inlined: dict[str, str | None] | None = None) -> list[dict[str, str]]:
    """A CI workflow's test step removed, made to ignore failures, given a pytest option that takes tests out (one
    no sealed test step of the workflow had: a step renamed keeps its options), or its pytest commands narrowed by
    path (`pytest tests/unit` where `pytest` ran: what the workflow's sealed pytest commands ran, its sealed test
    ids `tests` when known, that none of its pytest commands runs now), or run on fewer events, branches or paths
    (`changed`: the product's paths changed since the seal; `mains`: the default branch read at the seal;
    `ci_runs.filtered`), or no longer parsing. `flows`: {workflow: (its text at the seal, now)} of every workflow of
    the repository: a reusable one (`on: workflow_call`) runs on its callers' events (`ci_runs.reach`). `inlined`:
    {workflow: its text now with the jobs it newly calls in their place} (`ci_inputs.inlined`), whose steps are read."""
    out = []
    flows = {**(flows or {}), **{n: (sealed.get(n), current.get(n)) for n in current}}
    then, today = {n: t[0] for n, t in flows.items()}, {n: t[1] for n, t in flows.items()}
    for name in sorted(flows):
        before, now = _test_steps(then[name]), _test_steps((inlined or {}).get(name, today[name]))
        if not before:
            continue
        if now is None:
            out.append({"test": name, "rule": "ci-test-removed", "what": "the workflow parsed at the seal and no longer "
                        "does: GitHub runs none of its steps"})
            continue
        was, is_ = reach(name, then), reach(name, today)
        lost = sorted(set(was) - set(is_)) + filtered(was, is_, changed or [], mains)
        if lost:
            out.append({"test": name, "rule": "ci-test-removed", "what": f"the workflow no longer runs on {', '.join(lost)}"})
        out += [{"test": name, "rule": rule, "what": what} for rule, what in steps_weakened(before, now)]
        ran = sorted({p for v in before.values() for p in v.get("paths") or []})
        runs = sorted({p for v in now.values() for p in v.get("paths") or []})
        # (a workflow with no pytest command now, `tox`: a runner changed, not a narrowing; one whose sealed command's
        # paths are not known, `pytest $ARGS`: what it ran is not known either)
        left = _narrowed(ran, runs, tests) if ran and runs and "?" not in ran else []
        if left:
            shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
            out.append({"test": name, "rule": "config-excluded", "what": "its pytest steps ran "
                        f"{' '.join(ran) if ran != ['.'] else 'all the tests'} at the seal, now only {' '.join(runs)}: "
                        f"{shown} no longer run"})
    return out

