"""What tox.ini's test environments take out of a run, by their syntax (docs/own-suite.md "Weakening, named"): a
`commands` line given a pytest option that deselects (`-k`, `--deselect`, as a CI step's: `excluded.CI_EXCLUDING`),
pytest-cov's `--cov-fail-under` lowered there, a failure let through (a command prefixed with `-`, tox's "ignore its
exit code", or `ignore_outcome = true`), or fewer commands that run the tests (one given `--setup-only` runs none)."""

from __future__ import annotations

import configparser

from donegate.seal.ci_runs import TEST_WORDS
from donegate.seal.excluded import CI_EXCLUDING, _cov_fail_under, _pytest_options, runs_none


def _envs(text: str | None) -> dict[str, dict[str, str]] | None:
    """{test environment: its keys} of a tox.ini (`[testenv]`, `[testenv:NAME]`), None when it does not parse."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return None
    return {s: dict(parser.items(s)) for s in parser.sections() if s == "testenv" or s.startswith("testenv:")}


def _lines(env: dict[str, str]) -> list[str]:
    """The commands of an environment that run the tests, one a line (a `\\` continuation joined; a pytest given an
    option after which it runs no test, `--setup-only`, runs none: `excluded.runs_none`, as a CI step's)."""
    text = env.get("commands", "").replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if any(w in line for w in TEST_WORDS) and not runs_none(line)]


def findings(name: str, sealed: str | None, current: str | None) -> list[dict[str, str]]:
    """What tox.ini's test environments lost since the seal (`sealed`, `current`: its text then and now)."""
    before, now = _envs(sealed), _envs(current)
    if not before or now is None:
        return []
    out = []
    ran = [line for env in before.values() for line in _lines(env)]
    runs = [line for env in now.values() for line in _lines(env)]
    if len(runs) < len(ran):
        out.append({"test": name, "rule": "ci-test-removed", "what": "no test environment runs the tests now" if not runs
                    else f"{len(ran)} test command(s) at the seal, {len(runs)} now"})
    had = {w for line in ran for w in _pytest_options(line)}
    for word in sorted({w for line in runs for w in _pytest_options(line)} - had):
        if word in CI_EXCLUDING:
            out.append({"test": name, "rule": "config-excluded", "what": f"a test environment's commands gained {word}"})
    was = [v for line in ran if (v := _cov_fail_under(line)) is not None]
    is_now = [v for line in runs if (v := _cov_fail_under(line)) is not None]
    if was and (not is_now or min(is_now) < min(was)):
        out.append({"test": name, "rule": "coverage-lowered", "what": f"--cov-fail-under {min(was):g} became "
                    f"{'none' if not is_now else f'{min(is_now):g}'} in a test environment's commands"})
    for env, keys in sorted(now.items()):
        old = before.get(env, before.get("testenv", {}))
        ignored = [line for line in _lines(keys) if line.startswith("-")]
        if any(line not in _lines(old) for line in ignored) or (_on(keys.get("ignore_outcome")) and not _on(
                old.get("ignore_outcome"))):
            out.append({"test": name, "rule": "ci-ignores-failures", "what": f"[{env}] now lets its tests' failures "
                        "through (a `-` command or ignore_outcome)"})
    return out


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "1", "yes", "on")
