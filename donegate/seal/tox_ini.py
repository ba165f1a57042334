"""What tox.ini's test environments take out of a run, by their syntax (docs/own-suite.md "Weakening, named"),
environment by environment (each one that ran the tests at the seal, as it is now; a new one beside them is the
agent's own): a `commands` line given a pytest option that deselects (`-k`, `--deselect`, as a CI step's:
`excluded.CI_EXCLUDING`), or given it through `setenv` (`PYTEST_ADDOPTS`, `PYTEST_PLUGINS`: `excluded.env_options`),
pytest-cov's `--cov-fail-under` lowered there, a failure let through (a command prefixed with `-`, tox's "ignore its
exit code", `ignore_outcome = true`, a shell's `-c` script whose status drops the tests': `bash -c 'pytest || true'`),
fewer commands that run the tests (one given `--setup-only` runs none), `env_list` no longer running an environment
that ran them, or a tox.ini that parsed at the seal and no longer does."""

from __future__ import annotations

import re

from donegate.core.util import READS_TOML, parsed_ini, parsed_toml
from donegate.seal.ci_runs import runs_tests, wrapper_lets_through
from donegate.seal.excluded import (CI_EXCLUDING, NO_COV, NO_RUN, OFF_WEAKENS, _cov_fail_under, _narrowed, _pytest_options,
                                    _pytest_paths, env_options, runs_none)


Parsed = tuple[dict[str, dict[str, str]], list[str]]
# Where tox reads its configuration, in its order (tox 4.21+): the first that holds one is read, the rest never.
TOX_FILES = ("tox.ini", "setup.cfg", "pyproject.toml", "tox.toml")


def _parse(text: str | None, core: str = "tox") -> Parsed | None:
    """({section: its keys} of `[testenv]` and `[testenv:NAME]`, the environments `tox` runs: `env_list` expanded,
    else `py`), None when it does not parse (tox reads it with the same parser). `core`: the section of tox's own
    keys (setup.cfg's is `[tox:tox]`)."""
    parser = parsed_ini(text)
    if parser is None:
        return None
    sections = {s: dict(parser.items(s)) for s in parser.sections()}
    envs = {s: {k: _referred(v, sections) for k, v in keys.items()} for s, keys in sections.items()
            if s == "testenv" or s.startswith("testenv:")}
    raw = parser.get(core, "env_list", fallback="") or parser.get(core, "envlist", fallback="") \
        if parser.has_section(core) else ""
    try:
        names = [n for item in re.split(r",(?![^{]*\})|\n", raw) for n in _expand(item.strip()) if n]
    except ValueError:
        return None  # (more names than tox would run in a day: read as not parsing, named where it parsed at the seal)
    return envs, names or ["py"]


# The most environment names a generative `env_list` is read into (`{a,b}` 20 times is a million).
MOST_NAMES = 512


def _expand(item: str) -> list[str]:
    """tox's generative names: `py{311,312}-unit` as py311-unit and py312-unit; ValueError past MOST_NAMES."""
    out, todo = [], [item]
    while todo:
        name = todo.pop()
        m = re.search(r"\{([^{}]*)\}", name)
        if not m:
            out.append(name)
        else:
            todo += [name[:m.start()] + alt.strip() + name[m.end():] for alt in reversed(m.group(1).split(","))]
        if len(out) + len(todo) > MOST_NAMES:
            raise ValueError(item)
    return out


def _referred(value: str, sections: dict[str, dict[str, str]], depth: int = 0) -> str:
    """A value with tox's references to another section's key, `{[testenv]commands}`, replaced by that key's value
    (itself read so); one to no key left as written, and past 8 levels (a cycle) none replaced: a `commands` of
    references alone then runs no test."""
    if depth > 8 or len(value) > 100_000:
        return re.sub(r"\{\[[^\]{}]*\][^{}:]*\}", "", value)

    def one(m: re.Match[str]) -> str:
        got = sections.get(m.group(1).strip(), {}).get(m.group(2).strip())
        return m.group(0) if got is None else _referred(got, sections, depth + 1)

    return re.sub(r"\{\[([^\]{}]*)\]([^{}:]*)\}", one, value)


def read(tox: str | None, pyproject: str | None) -> str | None:
    """The ini text tox reads: tox.ini, else pyproject.toml's `[tool.tox] legacy_tox_ini` (an ini held as a string);
    None for neither."""
    if tox is not None or not pyproject or "legacy_tox_ini" not in pyproject:
        return tox
    table = _tool_tox(parsed_toml(pyproject))
    legacy = table.get("legacy_tox_ini") if table else None
    return legacy if isinstance(legacy, str) else None


def _tool_tox(data: dict | None) -> dict | None:
    """pyproject.toml's `[tool.tox]` table, None without one."""
    tool = data.get("tool") if data else None
    table = tool.get("tox") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def reads(texts: dict[str, str | None]) -> tuple[str, Parsed | None] | None:
    """(the file tox reads its configuration from, what it holds: `_parse`'s, None when it does not parse), None for
    no tox configuration, in tox's order: tox.ini; setup.cfg holding `[tox:tox]`; pyproject.toml's `[tool.tox]`, an
    ini in `legacy_tox_ini` or tox's native TOML; tox.toml. LookupError where its TOML cannot be read here (Python
    3.10, no tomllib): nothing is compared then."""
    if texts.get("tox.ini") is not None:
        return "tox.ini", _parse(texts["tox.ini"])
    if re.search(r"^\s*\[\s*tox:tox\s*\]", texts.get("setup.cfg") or "", re.M):
        return "setup.cfg", _parse(texts["setup.cfg"], "tox:tox")
    pyproject, toml = texts.get("pyproject.toml") or "", texts.get("tox.toml")
    if ("tool.tox" in pyproject or re.search(r"^\s*\[\s*tool\s*\.\s*tox\b", pyproject, re.M) or toml is not None) \
            and not READS_TOML:
        raise LookupError("tox's TOML")
    if "tox" in pyproject:
        data = parsed_toml(pyproject)
        table = _tool_tox(data)
        if table is not None:
            legacy = table.get("legacy_tox_ini")
            return "pyproject.toml", _parse(legacy) if isinstance(legacy, str) else _native(table)
        if data is None and re.search(r"^\s*\[\s*tool\s*\.\s*tox\b", pyproject, re.M):
            return "pyproject.toml", None
    if toml is not None:
        data = parsed_toml(toml)
        return "tox.toml", _native(data) if data is not None else None
    return None


def _native(table: dict) -> Parsed | None:
    """tox's native TOML (tox.toml, pyproject.toml's `[tool.tox]`) as `_parse` reads an ini: `env_run_base` as
    `[testenv]`, `env.NAME` as `[testenv:NAME]`, each command a line of its arguments (`{replace = "posargs",
    default = [...]}` as `{posargs:...}`, a `ref` to another table's key as its value), `set_env` a `NAME=value` a
    line; None for a form tox refuses."""
    envs: dict[str, dict[str, str]] = {}
    tables = table.get("env", {})
    if not isinstance(tables, dict) or not isinstance(table.get("env_run_base", {}), dict):
        return None
    for section, keys in [("testenv", table.get("env_run_base", {})), *((f"testenv:{n}", t) for n, t in tables.items())]:
        if isinstance(keys, dict):
            envs[section] = {k: v for k, v in ((k, _native_value(k, v, table)) for k, v in keys.items()) if v is not None}
    listed = table.get("env_list", table.get("envlist", []))
    names: list[str] = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict) and isinstance(item.get("product"), list):
            try:  # (tox 4.26's generative form: one name for each pick of one factor from each list)
                names += _expand("-".join("{" + ",".join(map(str, f if isinstance(f, list) else [f])) + "}"
                                          for f in item["product"]))
            except ValueError:
                return None
    return envs, names or ["py"]


def _native_value(key: str, value: object, root: dict, depth: int = 0) -> str | None:
    """One key of a native TOML environment as its ini form (`_native`), None for one not read."""
    if key in ("commands", "commands_pre", "commands_post"):
        lines = []
        for command in _refd(value, root, depth) if isinstance(value, (list, dict)) else []:
            if isinstance(command, dict):  # (a ref to another table's commands, extending these)
                lines += (_native_value(key, command, root, depth + 1) or "").splitlines()
            elif isinstance(command, list):
                lines.append(" ".join(_arg(a, root, depth) for a in command))
        return "\n".join(lines)
    if key in ("set_env", "setenv") and isinstance(value, dict):
        return "\n".join(f"{k}={v}" for k, v in value.items() if isinstance(v, (str, int, float)))
    if isinstance(value, bool):
        return str(value).lower()
    return value if isinstance(value, str) else None


def _refd(value: object, root: dict, depth: int) -> list:
    """A list value, or what a `{replace = "ref", of = [...]}` names in the document (past 8 levels: nothing)."""
    if isinstance(value, dict) and value.get("replace") == "ref" and isinstance(value.get("of"), list) and depth < 8:
        got: object = root
        for part in value["of"]:
            got = got.get(part) if isinstance(got, dict) else None
        return _refd(got, root, depth + 1)
    return value if isinstance(value, list) else []


def _arg(arg: object, root: dict, depth: int) -> str:
    """One argument of a native command as an ini command line writes it (`posargs` and `env` as tox's `{...}`)."""
    import shlex

    if isinstance(arg, dict):
        default = " ".join(_arg(a, root, depth) for a in _refd(arg.get("default", []), root, depth)
                           if not isinstance(a, (dict, list)))
        if arg.get("replace") == "posargs":
            return "{posargs" + (f":{default}" if default else "") + "}"
        if arg.get("replace") == "env":
            return "{env:" + str(arg.get("name", "")) + (f":{default}" if default else "") + "}"
        return " ".join(_arg(a, root, depth + 1) for a in _refd(arg, root, depth) if not isinstance(a, (dict, list)))
    text = str(arg)
    return text if re.fullmatch(r"[\w@%+=:,./{}\-]+", text) else shlex.quote(text)


def _env(envs: dict[str, dict[str, str]], name: str) -> dict[str, str]:
    """The keys environment `name` runs with: `[testenv]`'s, under its own section's."""
    return {**envs.get("testenv", {}), **envs.get(f"testenv:{name}", {})}


def _lines(env: dict[str, str], name: str = "") -> list[str]:
    """The commands of an environment that run the tests, one a line (a `\\` continuation joined; a line given to
    other factors, `fast: pytest -k x`, left out; a pytest given an option after which it runs no test,
    `--setup-only`, runs none: `excluded.runs_none`, as a CI step's)."""
    factors, out = set(name.split("-")), []
    for line in _substituted(env.get("commands", "")).replace("\\\n", " ").splitlines():
        m = re.match(r"\s*([\w.!,-]+):\s+(.*)", line)
        if m and not any(all((f[1:] not in factors) if f.startswith("!") else f in factors for f in alt.split("-"))
                         for alt in m.group(1).split(",")):
            continue
        line = (m.group(2) if m else line).strip()
        if runs_tests(line.lstrip("- ")) and not runs_none(line):
            out.append(line)
    return out if not set(env_options(_setenv(env))) & set(NO_RUN) else []


def _substituted(text: str) -> str:
    """tox's substitutions as a plain `tox` run reads them: `{posargs:-k x}` and `{env:NAME:-k x}` are their
    defaults (no arguments given, the variable not set), `{posargs}` nothing."""
    return re.sub(r"\{(?:posargs|env:[^:{}]*)(?::([^{}]*))?\}", lambda m: m.group(1) or "", text)


def _setenv(env: dict[str, str]) -> dict[str, str]:
    """An environment's `setenv`: {NAME: value}, one a line (`NAME = value`, `NAME=value`)."""
    out = {}  # (tox 4 spells it `set_env` too)
    for line in _substituted(env.get("setenv", "") + "\n" + env.get("set_env", "")).splitlines():
        name, eq, value = line.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            out[name.strip()] = value.strip()
    return out


def _compare(was: dict[str, str], old: str, now: dict[str, str], new: str,
             tests: list[str] | None = None) -> list[tuple[str, str]]:
    """(rule, what) environment `new` as it is now takes out of what `old` ran at the seal (`tests`: the sealed test
    ids, when known: a path that still runs every one is no narrowing)."""
    ran, runs = _lines(was, old), _lines(now, new)
    if not ran:
        return []
    out = []
    if _skipped(now) and not _skipped(was):
        out.append(("ci-test-removed", f"is skipped on Linux now (platform = {now.get('platform', '').strip()})"))
    if len(runs) < len(ran):
        out.append(("ci-test-removed", "runs no test command now" if not runs
                    else f"{len(ran)} test command(s) at the seal, {len(runs)} now"))
    had = {w for line in ran for w in _pytest_options(line)} | set(env_options(_setenv(was)))
    for word in sorted({w for line in runs for w in _pytest_options(line)} | set(env_options(_setenv(now))) - had):
        if word in CI_EXCLUDING or (word.startswith("-p ") and not word.startswith("-p no:")) or word[6:] in OFF_WEAKENS \
                and word.startswith("-p no:"):
            out.append(("config-excluded", f"gained {word}"))
        elif word in NO_COV:
            out.append(("coverage-lowered", f"gained {word}"))
    if _setenv(now).get("COVERAGE_RCFILE", "") not in ("", _setenv(was).get("COVERAGE_RCFILE")):
        out.append(("coverage-lowered", "gained COVERAGE_RCFILE in setenv: coverage.py reads another configuration"))
    was_at = [v for line in [*ran, _setenv(was).get("PYTEST_ADDOPTS", "")] if (v := _cov_fail_under(line)) is not None]
    is_now = [v for line in [*runs, _setenv(now).get("PYTEST_ADDOPTS", "")] if (v := _cov_fail_under(line)) is not None]
    if was_at and (not is_now or min(is_now) < min(was_at)):
        out.append(("coverage-lowered", f"--cov-fail-under {min(was_at):g} became "
                    f"{'none' if not is_now else f'{min(is_now):g}'}"))
    ran_in, runs_in = ({p for line in lines for p in _pytest_paths(line) or []} for lines in (ran, runs))
    left = _narrowed(sorted(ran_in), sorted(runs_in), tests) if ran_in and runs_in and "?" not in ran_in else []
    if left:  # (as a CI step's: `pytest tests/test_new.py` where `pytest` ran)
        out.append(("config-excluded", f"its pytest commands ran {' '.join(sorted(ran_in))} at the seal, now only "
                    f"{' '.join(sorted(runs_in))}: {', '.join(left[:3])}{' and more' if len(left) > 3 else ''} no longer run"))
    ignored = [line for line in runs if (line.startswith("-") or wrapper_lets_through(line)) and line not in ran]
    if ignored or (_on(now.get("ignore_outcome")) and not _on(was.get("ignore_outcome"))):
        out.append(("ci-ignores-failures", "now lets its tests' failures through (a `-` command, a shell's script "
                    "or ignore_outcome)"))
    return out


def stop_findings(sealed: dict[str, str | None], changed: dict[str, str | None], tests: list[str] | None = None) -> list[dict[str, str]]:
    """`findings` of a stop: tox's configuration at the seal and now (`sealed`: the text of `TOX_FILES` at the seal;
    `changed`: those of them changed since, their text now), each where tox reads it (`reads`)."""
    if not set(TOX_FILES) & set(changed):
        return []
    now = {n: changed[n] if n in changed else sealed.get(n) for n in TOX_FILES}
    try:
        was, is_now = reads(sealed), reads(now)
    except LookupError:
        return []
    if was is None or was[1] is None:
        return []
    return _findings(is_now[0] if is_now else was[0], was[1], is_now[1] if is_now else _parse(""), tests)


def _tox_envs(text: str | None, listed: list[str]) -> set[str]:
    """The tox environments a workflow's steps run (`tox -e a,b`, `-ea`, `--env a`; a plain `tox`: `TOXENV`'s where
    the workflow sets it, else those `env_list` names, `listed`). `pip install tox` runs none."""
    toxenv = {n for m in re.finditer(r"^\s*TOXENV\s*:\s*['\"]?([\w.,-]+)", text or "", re.M) for n in m.group(1).split(",")}
    out: set[str] = set()
    for m in re.finditer(r"(?:^|[\s;&|(`'\"])tox(?=[\s;&|)`'\"]|$)([^\n;&|]*)", text or "", re.M):
        if re.search(r"\b(install|add|uninstall)\b[^\n;&|]*$", (text or "")[:m.start() + 1]):
            continue
        named = re.findall(r"(?:-e\s*=?\s*|--env[\s=]+)([\w.,{}-]+)", m.group(1))
        out |= {n for item in named for n in item.split(",") if n} if named else toxenv or set(listed)
    return out


def ci_findings(sealed: dict[str, str | None], now: dict[str, str | None],
                flows: dict[str, tuple[str | None, str | None]]) -> list[dict[str, str]]:
    """A workflow that ran tox environments that ran the tests at the seal (`tox`, `tox -e py`) and now runs others
    (`tox -e fast`, a new narrow environment) none of which runs them as they did (`_compare`): named on the
    workflow. `sealed`, `now`: the text of `TOX_FILES` then and now; `flows`: {workflow: (its text then, now)}."""
    try:
        was, is_now = reads(sealed), reads(now)
    except LookupError:
        return []
    if not was or was[1] is None or not is_now or is_now[1] is None:
        return []  # (no tox then, or tox's own file gone or broken now: `stop_findings`' to name)
    (envs, listed), (envs_now, listed_now) = was[1], is_now[1]
    out = []
    for flow, (then, today) in sorted(flows.items()):
        ran, runs = _tox_envs(then, listed), _tox_envs(today, listed_now)
        lost = sorted(e for e in ran - runs if _lines(_env(envs, e), e) and all(
            _compare(_env(envs, e), e, _env(envs_now, m), m) for m in runs))
        if lost and runs:
            out.append({"test": flow, "rule": "config-excluded", "what": f"its tox steps ran {', '.join(sorted(ran))} at "
                        f"the seal, now {', '.join(sorted(runs))}: none of those runs the tests as {', '.join(lost)} did"})
    return out


def findings(name: str, sealed: str | None, current: str | None, tests: list[str] | None = None) -> list[dict[str, str]]:
    """What tox.ini's test environments lost since the seal (`sealed`, `current`: its text then and now, `read`
    from pyproject.toml where tox reads it there; `tests`: the sealed test ids)."""
    before = _parse(sealed)
    return [] if before is None else _findings(name, before, _parse(current), tests)


def _findings(name: str, before: Parsed, now: Parsed | None, tests: list[str] | None) -> list[dict[str, str]]:
    """`findings` of tox's configuration read (`_parse`, `_native`) at the seal and now (None: it no longer parses)."""
    if now is None:
        return [{"test": name, "rule": "ci-test-removed", "what": f"{name} parsed at the seal and no longer does: "
                 "tox runs none of its test environments"}]
    (envs, listed), (envs_now, listed_now) = before, now
    named = dict.fromkeys([*listed, *(s.split(":", 1)[1] for s in envs if ":" in s)])
    found: dict[tuple[str, str], list[str]] = {}
    for env in named:
        for key in _compare(_env(envs, env), env, _env(envs_now, env), env, tests):
            found.setdefault(key, []).append(env)
    for env in listed:  # an environment `tox` ran that it no longer runs, none of those it runs now doing as much
        if env not in listed_now and _lines(_env(envs, env), env) and all(
                _compare(_env(envs, env), env, _env(envs_now, m), m, tests) for m in listed_now):
            found.setdefault(("ci-test-removed", f"is no longer in env_list (now {', '.join(listed_now)}), and "
                              "none there runs its tests as it did"), []).append(env)
    return [{"test": name, "rule": rule, "what": f"[{', '.join(envs)}] {what}"} for (rule, what), envs in found.items()]


def _skipped(env: dict[str, str]) -> bool:
    """Whether tox skips an environment on Linux, where CI runs it: its `platform` (a regular expression matched
    against `sys.platform`) does not match `linux`."""
    platform = env.get("platform", "").strip()
    try:
        return bool(platform) and re.match(platform, "linux") is None
    except re.error:
        return True


def _on(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "1", "yes", "on")
