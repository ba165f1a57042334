"""Whether a CI workflow's step runs the tests, by its syntax: a command that names a test word and runs it (not
`echo pytest`, not a comment), a step or job given time to run (`timeout-minutes` above 0), a workflow run on the
events that test a change (`on: push`, `pull_request`). `donegate.seal.excluded` reads its test steps through these.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The words of a command that runs the tests.
TEST_WORDS = ("pytest", "py.test", "tox", "nox", "make test", "unittest", "manage.py test", "hatch test")
# The runner a test word is (`py.test` is pytest's old name).
SAME = {"py.test": "pytest"}

# A command's first word that runs none of the words after it (`echo pytest`, `# pytest`, `which pytest`).
NOT_RUN = ("echo", "printf", "true", ":", "cat", "exit", "false", "test", "[", "[[", "which", "type", "hash", "grep",
           "export", "alias", "set", "unset", "read")


# A package manager's command that installs (`pip install pytest`, `uv pip install -e .[test]`): it runs no test.
INSTALLERS = ("pip", "pip3", "uv", "poetry", "pipx", "conda", "mamba", "micromamba", "pdm", "apt", "apt-get", "brew")
INSTALLING = ("install", "add", "download", "wheel", "sync", "lock", "uninstall", "remove")


def _installs(words: list[str]) -> bool:
    """Whether a command's words install packages and run nothing else (`pip install pytest`, `python -m pip
    install -e .[test]`, `uv pip install tox`); `pipx run pytest`, `uv run pytest` run it."""
    if len(words) > 2 and words[0].rsplit("/", 1)[-1].startswith("python") and words[1] == "-m":
        words = words[2:]
    if not words or words[0].rsplit("/", 1)[-1] not in INSTALLERS:
        return False
    rest = [w for w in words[1:] if not w.startswith("-")]
    rest = rest[1:] if rest[:1] == ["pip"] else rest  # (`uv pip install`)
    return rest[:1] != [] and rest[0] in INSTALLING


def runs_tests(run: str) -> bool:
    """Whether a step's script runs a test command: one of its commands (after `!` and `VAR=value`) starts with
    no word of NOT_RUN and no comment, installs nothing (`_installs`), and names a test word; not one after `exit
    0`, nor one `false &&` or `true ||` skips; a shell's `-c` script read as a script (`bash -c 'echo pytest'` runs
    none)."""
    return bool(runners(run))


def runners(run: str) -> set[str]:
    """The test words (`TEST_WORDS`: pytest, tox, ...) a step's script runs, as `runs_tests` reads it: a step that
    runs none of a workflow's sealed runners any more runs less, however its steps are laid out."""
    import shlex

    found: set[str] = set()
    status = ""  # the status of the commands before: "0", "1" or "" (not known)
    for op, command in split(run):
        if (op == "&&" and status == "1") or (op == "||" and status == "0"):
            continue  # (skipped: the status stays)
        try:
            words = shlex.split(command, comments=True)
        except ValueError:
            words = command.split()
        while words and (words[0] == "!" or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
            words = words[1:]
        if words[:1] == ["exit"] and words[1:] in ([], ["0"]) and op in ("", ";", "\n"):
            return found  # (the script ends here, passing)
        status = {"true": "0", ":": "0", "false": "1"}.get(words[0], "") if len(words) == 1 else ""
        inner = wrapped(command)
        if inner is not None:
            found |= runners(inner[0])
        elif words and words[0] not in NOT_RUN and not _installs(words):
            found |= {SAME.get(w, w) for w in TEST_WORDS if w in " ".join(words)}
    return found


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
    """What a step writes to `$GITHUB_ENV`, the environment of the job's later steps (pytest's `PYTEST_ADDOPTS` among
    it): `echo "NAME=value" >> "$GITHUB_ENV"` (or `>`, `printf`, `| tee -a "$GITHUB_ENV"`), a heredoc (`cat >>
    "$GITHUB_ENV" <<EOF`), GitHub's `NAME<<DELIMITER` for a value of several lines; and pytest's variables
    (`PYTEST_ADDOPTS=...`) named in a step that writes it in a way not read here (a group, a program)."""
    import shlex

    lines, written, i = run.splitlines(), [], 0
    while i < len(lines):
        line, i = lines[i], i + 1
        if "GITHUB_ENV" not in line:
            continue
        heredoc = re.search(r"^(?:[^'\"]|'[^']*'|\"[^\"]*\")*?<<-?\s*(['\"]?)(\w+)\1", line)  # (`<<` outside quotes)
        if heredoc:
            while i < len(lines) and lines[i].strip() != heredoc.group(2):
                written.append(lines[i].strip())
                i += 1
            i += 1
            continue
        try:
            words = shlex.split(re.split(r">>?|\|\s*tee\b", line)[0])
        except ValueError:
            continue
        if words[:1] == ["printf"] and len(words) > 1:
            written += words[2:] if "%" in words[1] else words[1].split("\\n")
        elif words[:1] == ["echo"]:
            written += " ".join(w for w in words[1:] if not re.fullmatch(r"-[neE]+", w)).split("\\n")
    out: dict[str, str] = {}
    for k, line in enumerate(written):
        name, eq, value = line.partition("=")
        multi = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)<<(\S+)", line)
        if multi:  # (NAME<<EOF, its lines, EOF)
            end = next((n for n in range(k + 1, len(written)) if written[n] == multi.group(2)), len(written))
            out[multi.group(1)] = "\n".join(written[k + 1:end])
        elif eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out[name] = value
    if "GITHUB_ENV" in run:
        for name, value in re.findall(r"\b(PYTEST_ADDOPTS|PYTEST_PLUGINS)=([^\n\"']*)", run):
            out.setdefault(name, value)
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


@functools.lru_cache(maxsize=64)
def _load(text: str | None) -> Any:
    """A workflow's YAML, None when it does not parse (5,000 nested `[` go past the parser's stack); read once a
    stop (not changed by its readers)."""
    import yaml

    try:
        return yaml.safe_load(text or "")
    except (yaml.YAMLError, RecursionError):
        return None


def _filters(data: Any) -> dict[str, dict[str, Any]]:
    """{change event: its filters (`branches`, `paths`, their `-ignore`s)} of a workflow's `on:`."""
    on = data.get("on", data.get(True)) if isinstance(data, dict) else None
    names = {on: None} if isinstance(on, str) else dict.fromkeys(on) if isinstance(on, list) else on if isinstance(on, dict) else {}
    out = {str(k): v if isinstance(v, dict) else {} for k, v in names.items() if str(k) in CHANGE_EVENTS}
    return {**out, "workflow_call": {}} if any(str(k) == "workflow_call" for k in names) else out


def reach(name: str, texts: dict[str, str | None], seen: frozenset[str] = frozenset()) -> dict[str, list[dict[str, Any]]]:
    """{change event: [the filters it runs under]} of workflow `name` among the repository's workflows `texts`
    ({path: text}): its own `on:`, and, when it is reusable (`on: workflow_call`), the events of each workflow with a
    job that calls it (`uses: ./.github/workflows/NAME`) and runs (`skipped_jobs`)."""
    parsed = {n: _load(t) for n, t in sorted(texts.items())}
    own = _filters(parsed.get(name))
    out = {e: [f] for e, f in own.items() if e != "workflow_call"}
    if "workflow_call" not in own or name in seen:
        return out
    for caller, data in sorted(parsed.items()):
        jobs = _mapping(_mapping(data).get("jobs"))
        if caller == name or not any(str(_mapping(b).get("uses") or "").removeprefix("./") == name for b in jobs.values()):
            continue
        theirs = reach(caller, texts, seen | {name})
        skipped = skipped_jobs(jobs, set(theirs) or set(CHANGE_EVENTS))
        if any(str(_mapping(b).get("uses") or "").removeprefix("./") == name for j, b in jobs.items() if j not in skipped):
            for event, filters in theirs.items():
                out.setdefault(event, []).extend(filters)
    return out


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


def filtered(before: dict[str, list[dict[str, Any]]], now: dict[str, list[dict[str, Any]]], changed: list[str],
             mains: list[str] | None = None) -> list[str]:
    """What a workflow's `on:` filters (`reach`: {event: [filters]}, at the seal and now) no longer run on that they ran on
    at the seal: a push to (or pull request into) the main branch (`mains`: the repository's default branch read at
    the seal; without it, or where the sealed filters did not run on it, `main` and `master` both left), a change to one of `changed` (the Python files the agent
    changed: the product's and its tests')."""
    out = []
    for event, was in sorted(before.items()):
        if event not in now:
            continue  # (an event lost is `events`')
        is_ = now[event]
        # (either is the main branch: a workflow now run on `main` only, where it ran on all, still runs there)
        had = [b for b in mains or [] if _any(b, was, "branches")] or [b for b in ("main", "master") if _any(b, was, "branches")]
        if had and not any(_any(b, is_, "branches") for b in had):
            out.append(f"{event} to {' or '.join(had)}")
        kinds = [t for t in ("opened", "synchronize") if event.startswith("pull_request")
                 and any(_typed(t, f) for f in was) and not any(_typed(t, f) for f in is_)]
        if kinds:
            out.append(f"{event} {' or '.join(kinds)}")
        left = [p for p in changed if _any(p, was, "paths") and not _any(p, is_, "paths")]
        if left:
            out.append(f"{event} changing {', '.join(left[:3])}")
    return out


def _typed(kind: str, filters: dict[str, Any]) -> bool:
    """Whether a pull request event of `kind` runs a workflow under `filters`' `types` (by default opened,
    synchronize and reopened)."""
    types = filters.get("types")
    return types is None or kind == types or isinstance(types, list) and kind in map(str, types)


def _any(name: str, filters: list[dict[str, Any]], key: str) -> bool:
    """Whether `name` passes one of `filters`' `key` (`branches`, `paths`) and its `-ignore` (a push filtered by
    `tags` alone runs on no branch: GitHub's rule for a ref kind left undefined)."""
    return any(_passes(name, f.get(key), f.get(f"{key}-ignore")) and not (
        key == "branches" and f.get("branches") is None and f.get("branches-ignore") is None
        and (f.get("tags") is not None or f.get("tags-ignore") is not None)) for f in filters)


def split(run: str) -> list[tuple[str, str]]:
    """A script's commands, split where the shell splits them (`&&`, `||`, `;`, `|`, `&`, a line) outside quotes:
    [(the operator before it, the command)] (a `\\` continuation joined; "" before the first)."""
    out, word, op, quote, i = [], "", "", "", 0
    text = run.replace("\\\n", " ")
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif text.startswith(("&&", "||"), i) or ch in ";|\n" or ch == "&" and text[i - 1:i] not in ("<", ">") \
                and not text.startswith("&>", i):  # (`pytest &`: in the background; `2>&1`, `&>log` redirect)
            out.append((op, word))
            op, word = (text[i:i + 2], "") if text.startswith(("&&", "||"), i) else ("\n" if ch == "\n" else ch, "")
            i += len(op)
            continue
        word += ch
        i += 1
    return [(o, w) for o, w in [*out, (op, word)] if w.strip()]


SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "ash")


def wrapped(command: str) -> tuple[str, bool, bool] | None:
    """(the script, whether it stops at a failure, whether a pipeline fails with its test command) a command hands
    a shell (`bash -c 'pytest || true'`, `sh -ec ...`, `bash -o pipefail -c ...`); None for any other command."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and (words[0] in ("env", "exec", "command", "time") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words = words[1:]
    if not words or words[0].rsplit("/", 1)[-1] not in SHELLS:
        return None
    errexit = pipefail = False
    it = iter(enumerate(words[1:], 1))
    for i, w in it:
        if w in ("-o", "+o"):
            name = next(it, (0, ""))[1]
            errexit |= w == "-o" and name == "errexit"
            pipefail |= w == "-o" and name == "pipefail"
        elif w.startswith("-") and not w.startswith("--"):
            errexit |= "e" in w
            if "c" in w:
                return (words[i + 1], errexit, pipefail) if i + 1 < len(words) else None
        elif not w.startswith("--"):
            return None  # (a script file)
    return None


def _truthy(value: Any) -> bool:
    """`continue-on-error`'s value as GitHub reads it: true, or an expression that holds on an event that tests a
    change (`${{ true }}`, "true", `${{ 1 == 1 }}`; `gh_expr`); one not known (`matrix.experimental`) is not."""
    from donegate.seal.gh_expr import holds

    return value is True or (isinstance(value, str) and holds(value, set(CHANGE_EVENTS)))


def _or_else(run: str) -> bool:
    """A command after `||` that lets a failure through (`|| true`, `|| echo failed`); `|| exit 1` and `|| false`
    keep it a failure."""
    for after in re.findall(r"\|\|([^\n]*)", run):  # what runs on a failure: its last command decides
        last = [c for c in re.split(r"&&|;|\|\|", after.replace("(", " ").replace(")", " ").replace("{", " ")
                                                           .replace("}", " ")) if c.strip()]
        words = last[-1].split() if last else []
        if not words or not (words[0] == "false" or (words[0] == "exit" and words[1:2] and words[1] != "0")):
            return True
    return False


def _let_through(run: str, shell: Any) -> bool:
    """A test command whose failure the script's status no longer carries: negated (`! pytest`), or piped
    (`pytest | tee log`) where the shell has no pipefail (GitHub's default `bash -e`; `shell: bash` sets it)."""
    for line in run.splitlines():
        line = line.replace("||", "  ")
        head = line.split("|", 1)[0]
        if not any(w in head for w in TEST_WORDS):
            continue
        if re.match(r"\s*!\s", head) or re.search(r"(&&|;)\s*!\s", head):
            return True
        if "|" in line and "pipefail" not in run and str(shell or "").strip() != "bash":
            return True
    return False


def skipped_jobs(jobs: dict[Any, Any], on: set[str]) -> set[Any]:
    """The jobs of a workflow that never run on its change events `on`: their `if:` never holds (`gh_expr.never`),
    a matrix has an axis of no value, or a job they need never runs or is not there (unless their `if:` runs them
    whatever the jobs they need did: `always()`, `failure()`, `cancelled()`)."""
    from donegate.seal.gh_expr import never

    out = {j for j, b in jobs.items() if isinstance(b, dict) and (never(b.get("if"), on) or any(
        v == [] for k, v in _mapping(_mapping(b.get("strategy")).get("matrix")).items() if k not in ("include", "exclude")))}
    grew = True
    while grew:
        grew = False
        for job, body in jobs.items():
            needs = body.get("needs") if isinstance(body, dict) else None
            needs = [needs] if isinstance(needs, str) else needs if isinstance(needs, list) else []
            if job not in out and any(n in out or n not in jobs for n in needs) and not re.search(
                    r"\b(always|failure|cancelled)\s*\(", str(body.get("if") or "")):
                out.add(job)
                grew = True
    return out


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _main_dropped(command: str) -> bool:
    """A Python program that runs the tests by `pytest.main(...)` and drops its status (no `exit(...)`, `raise
    SystemExit`): `python -c 'import pytest; pytest.main()'` exits 0 whatever the tests do."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    at = next((i for i, w in enumerate(words[:-1]) if w == "-c" and re.fullmatch(r"(\S*/)?python[0-9.]*", words[0])), None)
    return at is not None and "pytest.main(" in words[at + 1] and not re.search(r"\bexit\(|SystemExit", words[at + 1])


def wrapper_lets_through(run: str) -> bool:
    """Whether a command of `run` hands its test command to a shell (`bash -c`, `sh -c`) whose status no longer
    carries the tests' failure: `pytest || true`, `pytest; true` (a shell without `-e` ends with its last command's
    status), `pytest | tee log` (no pipefail)."""
    for _, command in split(run):
        if _main_dropped(command):
            return True
        inner = wrapped(command)
        if inner is None or not any(w in inner[0] for w in TEST_WORDS):
            continue
        if script_lets_through(*inner):
            return True
    return False


def script_lets_through(script: str, errexit: bool, pipefail: bool) -> bool:
    """Whether a shell script's status no longer carries its test command's failure, in a shell that stops at a
    failure (`errexit`, as GitHub's `bash -e`) or not (`bash -c`, a step's `shell: bash {0}`: the script ends with
    its last command's status)."""
    errexit |= bool(re.match(r"\s*set\s+-[a-z]*e", script))
    pipefail |= "pipefail" in script
    commands = _top(script)
    # (`pytest; st=$?; ...; exit $st`, `pytest & wait $!`: its status kept)
    ends = [c for c in _carried(commands[-1][0] if commands else "")
            if not any(w in c for w in TEST_WORDS) and not re.fullmatch(r"\s*(exit|wait)\s+\$\S+\s*", c)]
    return (not errexit and bool(ends)) or _or_else(script) or "set +e" in script or _backgrounded(script, commands) \
        or _let_through(script, "bash" if pipefail else "sh") or shadowed(script) or wrapper_lets_through(script)


# A compound command's first word and the word that ends it (a group, a condition, a loop: one command to the shell).
_OPEN = {"if": "fi", "case": "esac", "for": "done", "while": "done", "until": "done", "select": "done", "{": "}"}
# The words after which the shell reads a command's first word again.
_LEADS = ("then", "do", "else", "elif", "{", "!", "time", "if", "while", "until")


def _top(script: str, lists: bool = False) -> list[tuple[str, str]]:
    """A script's commands at its top level (a `( ... )`, `{ ...; }`, `if ... fi`, `case ... esac` or loop one command,
    however many it holds), outside quotes and comments: [(the command, "&" where it is put in the background, else
    ""); with `lists`, an and-or list's or a pipeline's parts too."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []
    cur, quote, start, i = "", "", True, 0
    text = script.replace("\\\n", " ")
    while i < len(text):
        ch = text[i]
        if quote or ch in "'\"":
            quote = "" if ch == quote else quote or ch
            cur, i, start = cur + ch, i + 1, False
            continue
        if ch == "#" and (not cur or cur[-1] in " \t;"):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if ch == "(" or ch == ")" and stack[-1:] == [")"]:
            stack = [*stack, ")"] if ch == "(" else stack[:-1]
            cur, i, start = cur + ch, i + 1, ch == "("
            continue
        background = ch == "&" and not text.startswith("&&", i) and text[i - 1:i] not in ("&", ">", "<") \
            and not text.startswith("&>", i)
        if not stack and (ch in ";\n" or background or lists and ch == "|" or lists and text.startswith("&&", i)):
            out.append((cur, "&" if background else ""))
            cur, i, start = "", i + (2 if text.startswith(("&&", "||"), i) else 1), True
            continue
        if not ch.isspace() and ch not in ";&|<>()":
            word = re.match(r"[^\s;&|()<>'\"]+", text[i:]).group(0)  # type: ignore[union-attr]
            if start and word in _OPEN:
                stack.append(_OPEN[word])
            elif start and stack[-1:] == [word]:
                stack.pop()
            start = word in _LEADS or (start and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word) is not None)
            cur, i = cur + word, i + len(word)
            continue
        start = start or ch in ";&|\n"
        cur, i = cur + ch, i + 1
    if stack or quote:  # (not balanced: a heredoc's `if you read this`; read command by command, as before)
        return [(c, "") for c in re.split(r"[;\n]", text) if c.strip()]
    return [(c, b) for c, b in [*out, (cur, "")] if c.strip()]


def _carried(command: str, depth: int = 0) -> list[str]:
    """The commands whose status a command ends with: itself, or, for a group (`( ... )`, `{ ...; }`) or a loop, its
    own last command's; for `if ... fi`, each branch's last (`if [ -d tests ]; then pytest; fi` carries pytest's)."""
    command = command.strip()
    m = re.fullmatch(r"\((.*)\)|\{(.*)\}|(?:for|while|until|select)\s(.*)\bdone|if\s(.*)\bfi", command, re.S)
    if not m or depth > 20 or len(_top(command, lists=True)) > 1:
        return [command]  # (`a && b`, `a | b`: read whole, as `_or_else` and `_let_through` do)
    parts = [c.strip() for c, _ in _top(next(g for g in m.groups() if g is not None))]
    if not parts:
        return [command]
    if m.group(4) is None:
        return _carried(re.sub(r"^do\s", "", parts[-1]), depth + 1)
    ends = [p for k, p in enumerate(parts) if k + 1 == len(parts) or re.match(r"(elif|else)\s", parts[k + 1])]
    return [c for p in ends for c in _carried(re.sub(r"^(then|else)\s", "", p), depth + 1)]


def _backgrounded(script: str, commands: list[tuple[str, str]] | None = None) -> bool:
    """A test command put in the background (`pytest &`) whose status no `wait $!` (`wait PID`, `wait %1`) reads: the
    script goes on, and ends, whatever the tests do."""
    return any(b == "&" and any(w in c for w in TEST_WORDS) for c, b in (_top(script) if commands is None else commands)) \
        and not re.search(r"(^|[\s;&])wait\s+[\"']?[$%0-9]", script)


def shell_lets_through(run: str, shell: Any) -> bool:
    """Whether a step's own `shell:` drops its tests' status: a custom one (`bash {0}`: no `-e`, the script ends
    with its last command's status), or Python (`shell: python`) running them without exiting with their status."""
    shell = str(shell or "").strip()
    if re.fullmatch(r"python[0-9.]*", shell):
        return ("pytest.main(" in run or "subprocess" in run) and not re.search(r"\bexit\(|SystemExit|check=True|check_call|check_returncode", run)
    if "{0}" in shell and shell.split()[0].rsplit("/", 1)[-1] in SHELLS:
        flags = " ".join(w for w in shell.split()[1:] if w.startswith("-"))
        return script_lets_through(run, bool(re.search(r"-[a-z]*e|errexit", flags)), "pipefail" in shell)
    return False


def on_path(run: str, env: dict[str, str]) -> bool:
    """Whether a step puts a folder of the repository first on `PATH` (`echo "$PWD/bin" >> "$GITHUB_PATH"`, `export
    PATH=./bin:$PATH`, a `PATH` in its `env`): a `pytest` of the repository's own may run in place of the tests."""
    here = r"(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`|\$GITHUB_WORKSPACE|\$\{GITHUB_WORKSPACE\}|\$\{\{\s*github\.workspace\s*\}\}|(^|[\s\"':=])\.{1,2}/|^[\"']?[A-Za-z_.][\w.-]*/?[\"']?$)"
    lines = [line.split(">>")[0] for line in run.splitlines() if "GITHUB_PATH" in line]
    lines += re.findall(r"(?:^|[\s;&])(?:export\s+)?PATH=([^\s;&]*)", run) + [env.get("PATH", "").split(":")[0]]
    paths = [re.sub(r"^\s*(echo|printf)\s+(-\w+\s+)*", "", line).strip() for line in lines]
    # (a virtual environment or npm's tools the workflow makes there are its own: `$PWD/.venv/bin`, node_modules/.bin)
    return any(re.search(here, p) and not re.search(r"(^|/)(\.?venv|\.tox|env|node_modules)/(bin|Scripts|\.bin)\b", p) for p in paths if p)



def repository(repo: Any) -> str | None:
    """The repository's `owner/name` on GitHub, read at the seal from its `origin` remote's URL (`git@github.com:o/n.git`,
    `https://github.com/o/n`); None for no such remote (a workflow's `github.repository` is then not known)."""
    from donegate.tree import git

    res = git.run(repo, "config", "--get", "remote.origin.url")
    m = re.search(r"github\.com[:/]+([\w.-]+/[\w.-]+?)(?:\.git)?/?$", res.stdout.strip()) \
        if not res.timed_out and res.returncode == 0 else None
    return m.group(1) if m else None


def default_branches(repo: Any) -> list[str]:
    """The repository's main branch, read at the seal (a workflow's branch filters are compared on it): the one
    `origin/HEAD` names, else `main` or `master` where one is a branch, else the branch checked out; [] when none is
    known (`main` and `master` are compared)."""
    from donegate.tree import git

    res = git.run(repo, "for-each-ref", "--format=%(HEAD)|%(refname)|%(symref)", "refs/heads", "refs/remotes/origin/HEAD")
    if res.timed_out or res.returncode != 0:
        return []
    rows = [line.split("|") for line in res.stdout.splitlines() if line.count("|") == 2]
    origin = [s.removeprefix("refs/remotes/origin/") for _, ref, s in rows if ref == "refs/remotes/origin/HEAD" and s]
    local = [ref.removeprefix("refs/heads/") for _, ref, _ in rows if ref.startswith("refs/heads/")]
    return origin or [b for b in ("main", "master") if b in local] or \
        [ref.removeprefix("refs/heads/") for head, ref, _ in rows if head == "*"]


def expressions(run: str) -> str:
    """A step's script with each `${{ A || 'B' }}` as GitHub puts it there where `A` is empty (what a run with no such
    input, matrix value or variable gets): the first literal among its `||` parts, each part before it not known
    (a literal that holds is the value), then any `vars.NAME` among them kept as `${{ vars.NAME }}` (set outside the
    repository); the `||` inside is no shell's (`pytest ${{ matrix.extra || '' }}` keeps its status). Another
    expression holding `|`, `&` or `;` is one word (`${{ expression }}`); the rest are left as they are."""
    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        parts, cur, quote = [], "", False
        i = 0
        while i < len(body):
            if body[i] == "'":
                quote = not quote
            if not quote and body.startswith("||", i):
                parts.append(cur.strip())
                cur, i = "", i + 2
                continue
            cur, i = cur + body[i], i + 1
        parts.append(cur.strip())
        if len(parts) > 1:
            for part in parts:
                if re.fullmatch(r"'(?:[^']|'')*'", part):
                    text = part[1:-1].replace("''", "'")
                    if text or part is parts[-1]:
                        kept = [p for p in parts[:parts.index(part)] if re.fullmatch(r"vars\.[\w-]+", p)]
                        return " ".join([text, *(f"${{{{ {p} }}}}" for p in kept)])
        return m.group(0) if not re.search(r"[|&;]", body) else "${{ expression }}"

    return re.sub(r"\$\{\{(.*?)\}\}", one, run, flags=re.S)
