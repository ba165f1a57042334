"""Whether a CI workflow's step runs the tests, by its syntax: a command that names a test word and runs it (not
`echo pytest`, not a comment), a step or job given time to run (`timeout-minutes` above 0), a workflow run on the
events that test a change (`on: push`, `pull_request`). `donegate.seal.excluded` reads its test steps through these.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The words of a command that runs the tests.
TEST_WORDS = ("pytest", "tox", "nox", "make test", "unittest", "manage.py test")

# A command's first word that runs none of the words after it (`echo pytest`, `# pytest`, `which pytest`).
NOT_RUN = ("echo", "printf", "true", ":", "cat", "exit", "false", "test", "[", "[[", "which", "type", "hash", "grep",
           "export", "alias", "set", "unset", "read")


def runs_tests(run: str) -> bool:
    """Whether a step's script runs a test command: one of its commands (after `!` and `VAR=value`) starts with
    no word of NOT_RUN and no comment, and names a test word."""
    import shlex

    for command in re.split(r"&&|\|\||;|\||\n", run.replace("\\\n", " ")):
        if not any(w in command for w in TEST_WORDS):
            continue
        try:
            words = shlex.split(command, comments=True)
        except ValueError:
            words = command.split()
        while words and (words[0] == "!" or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
            words = words[1:]
        if words and words[0] not in NOT_RUN and any(w in " ".join(words) for w in TEST_WORDS):
            return True
    return False


def no_time(minutes: Any) -> bool:
    """A `timeout-minutes` that leaves no time to run (`0`, `${{ 0 }}`, a negative number)."""
    try:
        return minutes is not None and not isinstance(minutes, bool) and float(str(minutes).strip("${} ")) <= 0
    except ValueError:
        return False


# The events a workflow runs on that test a change: a workflow no longer run on one of them tests less.
CHANGE_EVENTS = ("push", "pull_request", "pull_request_target", "merge_group")


def events(text: str | None) -> set[str] | None:
    """The change events (`CHANGE_EVENTS`) a workflow's `on:` names (YAML 1.1 reads the key `on` as True)."""
    import yaml

    try:
        data = yaml.safe_load(text or "")
    except (yaml.YAMLError, RecursionError):
        return None
    on = data.get("on", data.get(True)) if isinstance(data, dict) else None
    names = [on] if isinstance(on, str) else list(on) if isinstance(on, (list, dict)) else []
    return {str(n) for n in names} & set(CHANGE_EVENTS)


def exported(run: str) -> dict[str, str]:
    """What a step writes to `$GITHUB_ENV` (`echo "NAME=value" >> "$GITHUB_ENV"`): the environment of the job's later
    steps, pytest's `PYTEST_ADDOPTS` among it."""
    import shlex

    out = {}
    for line in run.splitlines():
        head, sep, target = line.partition(">>")
        if not sep or "GITHUB_ENV" not in target:
            continue
        try:
            words = shlex.split(head)
        except ValueError:
            continue
        if words[:1] in (["echo"], ["printf"]):
            name, eq, value = " ".join(w for w in words[1:] if not w.startswith("-")).partition("=")
            if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                out[name] = value
    return out


def shadowed(run: str) -> bool:
    """A test command made a shell function or alias of the step's own (`pytest() { true; }`, `alias pytest=true`):
    the step runs that, whatever the tests do."""
    word = r"(pytest|py\.test|tox|nox|python3?|make)"
    for m in re.finditer(rf"(^|[\s;&|({{])(function\s+{word}\b\s*(\(\s*\))?|{word}\s*\(\s*\)|alias\s+{word}=)", run):
        name = next(g for g in m.groups()[2:] if g and g[0] not in "(")
        body = re.match(r"\s*('[^']*'|\"[^\"]*\"|\S+)" if "alias" in m.group(2) else r"\s*\{(.*?)\}", run[m.end():], re.S)
        if not body or not _passed_on(name, body.group(1).strip("'\""), "alias" in m.group(2)):
            return True
    return False


def _passed_on(name: str, body: str, alias: bool) -> bool:
    """Whether a function's or alias's body runs the same command or an interpreter with the step's arguments
    (`alias python=python3`, `python() { python3 "$@"; }`), its status unchanged."""
    runs = re.search(rf"(^|[\s;]|command\s+){re.escape(name)}\b|\b(python[0-9.]*|pypy3?)\b", body)
    given = alias or re.search(r"\$@|\$\{@\}|\$\*", body)
    return bool(runs and given) and not re.search(r"\|\||(^|[\s;&])(true|exit|:|-c)($|[\s;])", body)


def _filters(text: str | None) -> dict[str, dict[str, Any]] | None:
    """{change event: its filters (`branches`, `paths`, their `-ignore`s)} of a workflow's `on:`, None when it does
    not parse."""
    import yaml

    try:
        data = yaml.safe_load(text or "")
    except (yaml.YAMLError, RecursionError):
        return None
    on = data.get("on", data.get(True)) if isinstance(data, dict) else None
    names = {on: None} if isinstance(on, str) else dict.fromkeys(on) if isinstance(on, list) else on if isinstance(on, dict) else {}
    return {str(k): v if isinstance(v, dict) else {} for k, v in names.items() if str(k) in CHANGE_EVENTS}


def _match(name: str, pattern: str) -> bool:
    """GitHub's filter pattern (`*` within a folder or branch part, `**` across them, `?` one character)."""
    out = ""
    for part in re.split(r"(\*\*|\*|\?)", pattern):
        out += {"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    return re.fullmatch(out, name) is not None


def _passes(name: str, keep: Any, ignore: Any) -> bool:
    """Whether `name` passes a filter and its `-ignore` (the later of `keep`'s patterns decides: `!` negates)."""
    if isinstance(keep, (list, str)):
        hit = False
        for p in [keep] if isinstance(keep, str) else keep:
            p = str(p)
            if _match(name, p.lstrip("!")):
                hit = not p.startswith("!")
        return hit
    if isinstance(ignore, (list, str)):
        return not any(_match(name, str(p)) for p in ([ignore] if isinstance(ignore, str) else ignore))
    return True


def filtered(sealed: str | None, current: str | None, changed: list[str]) -> list[str]:
    """What a workflow's `on:` filters no longer run on that they ran on at the seal: a push to (or pull request into)
    the main branch (`main` and `master` both left), a change to one of `changed` (the Python files the agent changed: the product's and its tests')."""
    before, now = _filters(sealed), _filters(current)
    out = []
    for event, was in sorted((before or {}).items()):
        if now is None or event not in now:
            continue  # (an event lost is `events`')
        is_ = now[event]
        # (either is the main branch: a workflow now run on `main` only, where it ran on all, still runs there)
        had = [b for b in ("main", "master") if _passes(b, was.get("branches"), was.get("branches-ignore"))]
        if had and not any(_passes(b, is_.get("branches"), is_.get("branches-ignore")) for b in had):
            out.append(f"{event} to {' or '.join(had)}")
        left = [p for p in changed if _passes(p, was.get("paths"), was.get("paths-ignore"))
                and not _passes(p, is_.get("paths"), is_.get("paths-ignore"))]
        if left:
            out.append(f"{event} changing {', '.join(left[:3])}")
    return out
