"""Test commands in the project's own files that CI or a person runs them through, beside tox and the workflows
(docs/own-suite.md "Weakening, named"): a Makefile's recipes, `scripts/*.sh`, a composite action's `run:` steps
(`.github/actions/*/action.yml`) and a noxfile's `session.run(...)` calls, each read as a CI step's script is
(`seal.ci_runs`, `seal.excluded`): a test command gone, given an option that takes tests out (`-k`, `--deselect`,
`-p NAME`, `--setup-only`), made to let its failure through (`|| true`, make's `-` prefix, `set +e`), or its
`--cov-fail-under` lowered, compared per Makefile target and nox session. A command added (a new target, a new session:
an addition, however narrow), or given `-v`, is none."""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

from donegate.seal.ci_runs import SHELLS, _or_else, runners, script_lets_through, split, wrapper_lets_through
from donegate.seal.excluded import (CI_EXCLUDING, NO_COV, NO_RUN, OFF_WEAKENS, _cov_fail_under, _pytest_options,
                                     env_options)

NAMES = ("Makefile", "makefile", "GNUmakefile", "noxfile.py")
Reader = Callable[[str], "str | None"]  # (a project file's text now, by its path relative to the project)


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


def _units(name: str, text: str | None, env: tuple[tuple[str, str], ...] = (), read: Reader | None = None
           ) -> dict[str, list[str]]:
    """The test commands of a file, one a line (`runners`: a line that runs pytest, tox, nox, ...), by the unit that
    runs them: a Makefile's target (`_make_units`), a noxfile's session (its function: `_nox_units`), else the whole
    file (key ""). `{"": ["?"]}`: the file no longer reads. A line that lets its failure through starts with "- "; one
    given pytest's variables by its environment, with them (`PYTEST_ADDOPTS='-k x' pytest`). A Makefile read with make's
    environment `env` (its conditionals: `ifdef CI`), the files it `include`s read by `read` (a project file's text
    now, relative to the project) in its place."""
    if text is None:
        return {}
    units: dict[str, list[str]] = {}
    if name.endswith("noxfile.py"):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {"": ["?"]}  # (a noxfile that no longer parses runs none: named where it ran tests at the seal)
        units = _nox_units(tree)
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
    elif name in NAMES:
        try:
            units = _make_units(_included(text, read) if read else text, dict(env))
        except RecursionError:  # (variables that refer on past 100 deep: `_expand`)
            return {"": ["?"]}
    else:  # a shell script: one command a line
        for line in text.replace("\\\n", " ").splitlines():
            line = line.strip()
            if not line.startswith("#"):
                units.setdefault("", []).append(("- " if line.startswith("-") else "") + line.lstrip("-@+ "))
    return {unit: [line for line in lines if _runners(line.lstrip("- "))] for unit, lines in units.items()}


@functools.lru_cache(maxsize=4096)
def _runners(line: str) -> frozenset[str]:
    """`runners`, read once a line (a target's commands are its prerequisites' too: the same lines again)."""
    return frozenset(runners(line))


# The variables pytest reads as options (`excluded.env_options`): a test command given them by its environment runs so.
PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")


def _with_env(line: str, env: dict[str, str]) -> str:
    """`line` given pytest's variables of `env` before it, as a shell reads them (`PYTEST_ADDOPTS='-k x' pytest`)."""
    import shlex

    return "".join(f"{k}={shlex.quote(env[k])} " for k in PYTEST_ENV if k in env) + line


def _env_of(line: str) -> dict[str, str]:
    """The variables the commands of `line` are given before their first word (`PYTEST_ADDOPTS='-k x' pytest`)."""
    import shlex

    out: dict[str, str] = {}
    for _, command in split(line.removeprefix("- ")):
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        for w in words:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
                break
            out[w.split("=", 1)[0]] = w.split("=", 1)[1]
    return out


_ASSIGN = re.compile(r"((?:(?:export|override)\s+)*)([A-Za-z_.][\w.]*)\s*(:::=|::=|:=|\?=|\+=|!=|=)(.*)")
_TARGET = re.compile(r"([^\s#:=][^#:=]*)::?(?!=)(.*)")  # (linear: no `\s*`)


def _included(text: str, read: Reader, depth: int = 0) -> str:
    """A Makefile's text with each `include FILE ...` (`-include`, `sinclude`) of literal names (relative to the
    project's top, where make starts) replaced by those files' texts now, as make reads them in place, 5 deep; a name
    with a variable or a pattern, or a file not there, left as it is."""
    def one(m: re.Match[str]) -> str:
        names = m.group(2).split()
        texts = [read(n) if depth < 5 and re.fullmatch(r"[\w./-]+", n) and ".." not in n.split("/") else None
                 for n in names]
        if None in texts:
            return m.group(0)
        return "\n".join(_included(t or "", read, depth + 1) for t in texts)

    return re.sub(r"(?m)^(-?include|sinclude)[ \t]+([^\n#]+)$", one, text)


def _make_units(text: str, env: dict[str, str] | None = None) -> dict[str, list[str]]:
    """A Makefile's test commands by target, as make runs them: each recipe line (a tab first) with the file's
    variables expanded (`$(ARGS)`, `$(MAKE)` as `make`), given the variables it exports (`export PYTEST_ADDOPTS =
    ...`, a target's own `test: export ...`, `.EXPORT_ALL_VARIABLES`), marked "- " where its failure no longer fails
    the target (make's `-` prefix, `.IGNORE`, `MAKEFLAGS += -i`, a line whose shell ends with another command's status:
    `pytest; exit 0`, no `-e` unless `.POSIX` or `.SHELLFLAGS` give it); a target's prerequisites and the targets of
    this file it runs by `$(MAKE) NAME` counted as its own (`$(MAKE) -i NAME`: their failures ignored); only the
    lines its conditionals (`ifdef`, `ifeq`, `else`, `endif`) keep in the environment `env` (one on a function not
    known here, `$(shell ...)`: both branches)."""
    variables: dict[str, str] = dict(env or {})
    conditions: list[list[bool | None]] = []  # ([holds: True, False or None (not known), a branch taken, maybe taken])
    exported: set[str] = set()
    special: dict[str, list[str]] = {}
    recipes: dict[str, list[str]] = {}
    needs: dict[str, list[str]] = {}
    own_vars: dict[str, dict[str, str]] = {}
    own_exported: dict[str, set[str]] = {}
    current: list[str] = []
    fresh: set[str] = set()  # (the current rule's targets whose recipe a recipe line of this rule replaces: make keeps the last)
    lines, defining = text.replace("\\\n", " ").splitlines(), False
    for line in lines:
        if defining or re.match(r"\s*define\s", line):
            defining = not re.match(r"\s*endef\b", line) if defining else True
            continue
        prefix = variables.get(".RECIPEPREFIX") or "\t"
        if not line.startswith(prefix) and re.match(r"\s*(ifdef|ifndef|ifeq|ifneq|else|endif)(\s|$)", line):
            _condition(line.strip(), conditions, variables)
            continue
        if any(c[0] is False for c in conditions):
            continue
        if line.startswith(prefix):
            for t in current:
                recipes[t] = [] if t in fresh else recipes.get(t, [])
                fresh.discard(t)
                recipes[t].append(line[1:])
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        assign, target = _ASSIGN.fullmatch(line.strip()), _TARGET.match(line)
        if assign:
            _assign(variables, exported, assign)
        elif re.fullmatch(r"\s*(un)?export(\s.*)?", line):
            words = line.split()
            exported = (exported - set(words[1:])) if words[0] == "unexport" else exported | set(words[1:]) | (
                {"*"} if len(words) == 1 else set())
        elif target:
            names, rest = target.group(1).split(), target.group(2)
            rest, _, inline = rest.partition(";")
            own = _ASSIGN.fullmatch(rest.strip())
            if own:  # (`test: export PYTEST_ADDOPTS = ...`: that target's own)
                for t in names:
                    _assign(own_vars.setdefault(t, {}), own_exported.setdefault(t, set()), own)
                continue
            current = [t for t in names if not t.startswith(".")]
            fresh = set() if line[target.end(1):].startswith("::") else set(current)  # (`test::`: each rule runs)
            for t in names:
                (special if t.startswith(".") else needs).setdefault(t, []).extend(w for w in rest.split() if w != "|")
            for t in current:
                recipes[t] = [] if inline.strip() and t in fresh else recipes.get(t, [])
                recipes[t].extend([inline] if inline.strip() else [])
            fresh -= set(current) if inline.strip() else set()
    if ".EXPORT_ALL_VARIABLES" in special:
        exported.add("*")
    flags = variables.get("MAKEFLAGS", "").split()
    ignore_all = ".IGNORE" in special and not special[".IGNORE"] or any(
        w == "--ignore-errors" or re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z]*", w) for w in flags) or bool(
        flags and re.fullmatch(r"[a-zA-Z]*i[a-zA-Z]*", flags[0]))
    errexit = ".POSIX" in special or bool(re.search(r"(^|\s)-[a-z]*e", variables.get(".SHELLFLAGS", "")))
    pipefail = "pipefail" in variables.get(".SHELLFLAGS", "") + variables.get("SHELL", "")  # (`SHELL := bash -o pipefail`)
    ignored = set(special.get(".IGNORE", []))

    budget = [4096]  # (the references `_expand` reads, for the whole file)
    read: dict[str, list[tuple[str, tuple[list[str], bool, dict[str, str]] | None, bool]]] = {}

    def lines_of(target: str) -> list[tuple[str, tuple[list[str], bool, dict[str, str]] | None, bool]]:
        """(its command expanded, the sub-make it is if one, whether make or its shell lets it through) of each
        recipe line of `target`, read once."""
        if target not in read:
            names = {**variables, **own_vars.get(target, {})}
            read[target] = []
            for raw in recipes.get(target, [])[:500]:
                command = _expand(raw.lstrip("@-+ \t"), names, budget=budget)
                read[target].append((command, _sub_make(command), ignore_all or target in ignored or "-" in raw[
                    :len(raw) - len(raw.lstrip("@-+ \t"))] or script_lets_through(command, errexit, pipefail)))
        return read[target]

    patterns = [(t, re.compile(re.escape(t).replace("%", ".+", 1))) for t in recipes if "%" in t][:50]

    def rule(target: str) -> str:
        """The rule that makes `target`: its own, else the first pattern rule it matches (`test-py%`), else ""."""
        if target in recipes or target in needs:
            return target
        return next((t for t, p in patterns if p.fullmatch(target)), "")

    def run(target: str, ignore: bool, env: dict[str, str], seen: set[str], depth: int = 0) -> list[str]:
        """The commands `target` runs, its prerequisites' and sub-made targets' first (each once: `seen`; 40 deep)."""
        seen.add(target)
        names = {**variables, **own_vars.get(target, {})}
        out_env = exported | own_exported.get(target, set())
        env = {**env, **{k: names[k] for k in names if k in out_env or "*" in out_env}}
        out = [line for t in map(rule, needs.get(target, [])) if t and t not in seen and depth < 40
               for line in run(t, ignore, env, seen, depth + 1)]
        for command, sub, through in lines_of(target):
            if sub is not None and all(map(rule, sub[0])) and depth < 40:
                out += [line for t in map(rule, sub[0] or [next(iter(recipes), "")]) if t and t not in seen
                        for line in run(t, ignore or sub[1], {**env, **sub[2]}, seen, depth + 1)]
                continue
            out.append(("- " if through or ignore else "") + _with_env(command, env))
        return out[:500]

    shell = variables.get("SHELL", "/bin/sh").split()
    if shell and shell[0].rsplit("/", 1)[-1] not in (*SHELLS, "env"):
        return {t: [] for t in recipes}  # (`SHELL := /bin/true`: every recipe line handed to it, none run)
    return {t: run(t, False, {}, set()) for t in recipes}


def _condition(line: str, conditions: list[list[bool | None]], variables: dict[str, str]) -> None:
    """One of make's conditional lines read into `conditions` (a stack: [holds, a branch taken, a branch maybe taken])."""
    word, rest = re.match(r"(\w+)\s*(.*)", line).groups()  # type: ignore[union-attr]
    if word == "endif":
        del conditions[-1:]
        return
    if word == "else":
        if conditions:
            _, done, maybe = conditions[-1]
            sub = re.match(r"(ifn?def|ifn?eq)(?:\s+|(?=\())(.*)", rest)
            holds = _holds(sub.group(1), sub.group(2), variables) if sub else True
            conditions[-1] = [False, True, maybe] if done else [None if holds and maybe else holds, holds is True,
                                                                 bool(maybe) or holds is None]
        return
    live = all(c[0] is not False for c in conditions)
    holds = _holds(word, rest, variables) if live else False
    conditions.append([holds, holds is True or not live, holds is None])


def _holds(kind: str, arg: str, variables: dict[str, str]) -> bool | None:
    """Whether `ifdef NAME` (a value not empty), `ifeq (a,b)` (`'a' 'b'`, `"a" "b"`) holds with `variables`; None where
    it turns on a function not read here (`$(shell uname)`)."""
    if kind in ("ifdef", "ifndef"):
        name = _expand(arg.split("#")[0].strip(), variables)
        return None if "$" in name else (variables.get(name, "") != "") == (kind == "ifdef")
    arg, sides = arg.split("#")[0].strip(), None
    if arg.startswith("(") and arg.endswith(")"):
        depth = 0
        for i, ch in enumerate(arg[1:-1]):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                sides = (arg[1:i + 1], arg[i + 2:-1])
                break
    elif m := re.fullmatch(r"""(['"])(.*?)\1\s+(['"])(.*?)\3""", arg):
        sides = (m.group(2), m.group(4))
    if sides is None:
        return None
    a, b = (_expand(x.strip(), variables) for x in sides)
    return None if "$" in a + b else (a == b) == (kind == "ifeq")


def _assign(variables: dict[str, str], exported: set[str], m: re.Match[str]) -> None:
    """One make assignment (`NAME = value`, `:=`, `?=`, `+=`; `export NAME = value` exports it too)."""
    name, op, value = m.group(2), m.group(3), m.group(4).strip()
    if op == "?=" and name in variables:
        return
    variables[name] = f"{variables[name]} {value}" if op == "+=" and name in variables else value
    if "export" in m.group(1):
        exported.add(name)


def _expand(text: str, names: dict[str, str], within: frozenset[str] = frozenset(), budget: list[int] | None = None) -> str:
    """A recipe line as make hands it to the shell: `$(NAME)`/`${NAME}` as the file's value (none, or one that refers
    to itself: empty), `$(MAKE)` as `make`, `$$` as `$`; a function (`$(shell ...)`) and `$@` left as they are. At most
    4,096 references read in all (`A = $(B)$(B)`, `B = $(C)$(C)`, ...: doubled at each step)."""
    budget = [4096] if budget is None else budget

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(2)
        budget[0] -= 1
        if name == "MAKE" and name not in names:
            return "make"
        if len(within) > 100:
            raise RecursionError("make variables refer on past 100 deep")
        return _expand(names.get(name, ""), names, within | {name}, budget) if name not in within and budget[0] > 0 else ""

    return re.sub(r"\$\$|\$\(([A-Za-z_][\w.]*)\)|\$\{([A-Za-z_][\w.]*)\}", one, text)


def _sub_make(command: str) -> tuple[list[str], bool, dict[str, str]] | None:
    """(the targets, whether it ignores their failures, the variables it gives them) of a recipe's command that is one run of
    make on this file (`make test`, `make -i test`, `make -k test PYTEST_ADDOPTS=-v`); None for any other (`-C`, `-f`:
    another file; a command beside it). `-k` keeps going but still fails: not ignored."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(split(command)) != 1 or not words or words[0].rsplit("/", 1)[-1] not in ("make", "gmake"):
        return None
    targets, ignore, env, it = [], False, {}, iter(words[1:])
    for w in it:
        if w in ("-C", "-f", "--file", "--makefile", "--directory") or w.startswith(("-C", "-f", "--file=", "--makefile=", "--directory=")):
            return None
        if w in ("-o", "-W", "-I", "-l", "--old-file", "--what-if", "--include-dir"):
            next(it, None)
        elif w == "--ignore-errors" or re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z]*", w):
            ignore = True
        elif re.match(r"^[A-Za-z_][\w.]*=", w):
            env[w.split("=", 1)[0]] = w.split("=", 1)[1]
        elif not w.startswith("-") and not w.isdigit():
            targets.append(w)
    return targets, ignore, env


def _nox_units(tree: ast.Module) -> dict[str, list[str]]:
    """A noxfile's `session.run(...)` commands by session (its function; "" its top), as nox runs them: a call never
    reached (after `session.skip()`, `session.error()`, a `return` in its block, or under a condition false without
    running: `dead.inert`) runs nothing; one in a `try` whose handler takes its failure (`CommandFailed`, `Exception`)
    and does not raise, or given `success_codes=`, lets it through ("- "); the environment given it (`env={...}`,
    `session.env[...] = `, `session.env.update(...)`) before it."""
    from donegate.seal import dead

    units: dict[str, list[str]] = {}
    for unit, node in [("", tree), *((f.name, f) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef))]:
        gone: set[int] = set()
        swallowed: set[int] = set()
        env: dict[str, str] = {}
        if isinstance(node, ast.FunctionDef):
            who = node.args.args[0].arg if node.args.args else "session"
            _ended(node, who)
            saved, dead.FLAGS = dead.FLAGS, {}
            try:
                gone = dead.inert(node)
                swallowed = {id(n) for t in ast.walk(node) if isinstance(t, dead._TRIES) and any(
                    dead._swallows(h) for h in t.handlers) for s in t.body for n in ast.walk(s)}
            finally:
                dead.FLAGS = saved
            env = _session_env(node, who)
        for c in _own_calls(node):
            if getattr(c.func, "attr", "") != "run" or id(c) in gone and id(c) not in swallowed:
                continue
            words = " ".join(_nox_arg(a) for a in c.args)
            given = {**env, **_dict_of(next((k.value for k in c.keywords if k.arg == "env"), None))}
            through = id(c) in swallowed or any(k.arg == "success_codes" for k in c.keywords)
            units.setdefault(unit, []).append(("- " if through else "") + _with_env(words, given))
    for name in _not_default(tree):
        units[name] = []  # (a bare `nox`, as CI runs it, runs none of it)
    return units


def _nox_arg(a: ast.expr) -> str:
    """A `session.run` argument's words as a plain `nox` run gives them: a literal's text; `*session.posargs` none;
    `*(session.posargs or ['-k', 'x'])` its default list's (no posargs on such a run); anything else one word."""
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        return a.value
    value = a.value if isinstance(a, ast.Starred) else None
    if isinstance(value, ast.Attribute) and value.attr == "posargs":
        return ""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2 \
            and isinstance(value.values[0], ast.Attribute) and value.values[0].attr == "posargs" \
            and isinstance(value.values[1], (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.values[1].elts):
        return " ".join(str(e.value) for e in value.values[1].elts)  # type: ignore[attr-defined]
    return "ARG"


def _not_default(tree: ast.Module) -> set[str]:
    """The sessions (their functions) a bare `nox` does not run: `@nox.session(default=False)`, or left out of a
    literal `nox.options.sessions = [...]` (a session `tests` chosen as `tests` or `tests-3.12`)."""
    chosen = next((n.value.elts for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, (ast.List, ast.Tuple))
                   and any(ast.unparse(t) == "nox.options.sessions" for t in n.targets)), None)
    picked = None if chosen is None else [e.value for e in chosen if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    out = set()
    for f in [f for f in tree.body if isinstance(f, ast.FunctionDef)]:
        for d in f.decorator_list:
            if "session" not in ast.unparse(d.func if isinstance(d, ast.Call) else d):
                continue
            keywords = {k.arg: k.value for k in d.keywords} if isinstance(d, ast.Call) else {}
            named, default = keywords.get("name"), keywords.get("default")
            name = named.value if isinstance(named, ast.Constant) and isinstance(named.value, str) else f.name
            if isinstance(default, ast.Constant) and default.value is False or picked is not None \
                    and not any(c == name or str(c).startswith(f"{name}-") for c in picked):
                out.add(f.name)
    return out


def _ended(fn: ast.FunctionDef, who: str) -> None:
    """`fn` (a nox session) with what ends it read as a `raise` (`session.skip(...)`, `session.error(...)`) and a
    handler of nox's `CommandFailed` as one of `Exception` (`dead.inert` reads both), in place."""
    for n in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list):
                block[:] = [ast.copy_location(ast.Raise(exc=None, cause=None), s) if isinstance(s, ast.Expr) and isinstance(
                    s.value, ast.Call) and getattr(s.value.func, "attr", "") in ("skip", "error") and getattr(
                    s.value.func.value, "id", "") == who else s for s in block]  # type: ignore[attr-defined]
        if isinstance(n, ast.ExceptHandler) and n.type is not None and "CommandFailed" in ast.unparse(n.type):
            n.type = ast.Name(id="Exception", ctx=ast.Load())


def _dict_of(node: ast.AST | None) -> dict[str, str]:
    """{key: value} of a literal dict's string keys (a value not known without running: "?")."""
    from donegate.seal import dead

    if not isinstance(node, ast.Dict):
        return {}
    return {k.value: str(dead.text_of(v) if dead.text_of(v) is not None else "?") for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _session_env(fn: ast.FunctionDef, who: str) -> dict[str, str]:
    """The variables a session sets for its commands (`session.env['PYTEST_ADDOPTS'] = ...`, `.update({...})`,
    `os.environ[...] = `)."""
    from donegate.seal import dead

    out: dict[str, str] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Subscript) and ast.unparse(t.value) in (f"{who}.env", "os.environ") \
                        and (key := dead.text_of(t.slice)) is not None:
                    out[key] = str(dead.text_of(n.value) if dead.text_of(n.value) is not None else "?")
        elif isinstance(n, ast.Call) and ast.unparse(n.func) in (f"{who}.env.update", "os.environ.update"):
            out.update(_dict_of(n.args[0]) if n.args else {})
            out.update({k.arg: str(dead.text_of(k.value) or "?") for k in n.keywords if k.arg})
    return out


def _own_calls(node: ast.AST) -> list[ast.Call]:
    """The calls in `node` outside the functions defined in it (theirs are their own session's)."""
    out, todo = [], list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [child] if isinstance(child, ast.Call) else []
            todo += ast.iter_child_nodes(child)
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))


# The environments a Makefile with conditionals is read in: a developer's shell, and GitHub's runner (`ifdef CI`,
# `ifeq ($(GITHUB_ACTIONS),true)`); each reading compared with the sealed file's in the same.
SHELL_ENV = (("HOME", "/home/user"), ("PATH", "/usr/local/bin:/usr/bin:/bin"), ("USER", "user"))
CI_ENV = (*SHELL_ENV, ("CI", "true"), ("GITHUB_ACTIONS", "true"), ("RUNNER_OS", "Linux"), ("GITHUB_EVENT_NAME", "push"))


def findings(sealed_texts: dict[str, str | None], current: dict[str, str | None], read: Reader | None = None
             ) -> list[dict[str, str]]:
    """What the files changed since the seal (`current`: {file: its text now, None gone}) take out of the test
    commands they held at the seal (`sealed_texts`), compared per Makefile target and nox session (as tox's are per
    environment): a target or session new since the seal is an addition, never a weakening; one gone is compared
    with every command of the file now. A Makefile with conditionals is compared in each of its environments
    (`SHELL_ENV`, `CI_ENV`)."""
    out = []
    for name in sorted(current):
        texts = (sealed_texts.get(name) or "") + (current[name] or "")
        found: dict[tuple[str, str], None] | None = None
        for env in (SHELL_ENV, CI_ENV) if name in NAMES[:3] and re.search(r"(?m)^\s*ifn?(def|eq)\b", texts) else ((),):
            each = _found(name, _units(name, sealed_texts.get(name), env, read), _units(name, current[name], env, read))
            found = found if each is None else {**(found or {}), **each}
        if found is None:
            continue
        if "set +e" in (current[name] or "") and "set +e" not in (sealed_texts.get(name) or ""):
            found[("ci-ignores-failures", "a test command now lets its failure through (set +e)")] = None
        out += [{"test": name, "rule": rule, "what": what} for rule, what in found]
    return out


def _found(name: str, was: dict[str, list[str]], now: dict[str, list[str]]) -> dict[tuple[str, str], None] | None:
    """{(rule, what)} the test commands of a file's units now (`now`) take out of those at the seal (`was`); None where
    the sealed file ran none (or did not read)."""
    if not any(was.values()) or "?" in was.get("", []):
        return None
    every = [line for lines in now.values() for line in lines]
    kind = "session" if name.endswith(".py") else "target"
    where: dict[tuple[str, str], list[str]] = {}  # (one edit a target's prerequisites share: named once)
    for unit, ran in was.items():
        for rule, what in _compare(ran, now.get(unit, every)) if ran else []:
            where.setdefault((rule, what), []).extend([unit] if unit and unit in now else [])
    found = dict.fromkeys((rule, f"{kind} {', '.join(units[:5])}{f' (and {len(units) - 5} more)' if len(units) > 5 else ''}: "
                           f"{what}" if units else what)
                          for (rule, what), units in where.items())
    if {w for lines in was.values() for line in lines for w in _runners(line.lstrip("- "))} - {
            w for line in every for w in _runners(line.lstrip("- "))} and "ci-test-removed" not in {r for r, _ in found}:
        found = {("ci-test-removed", f"{sum(map(len, was.values()))} test command(s) at the seal, "
                  f"{len([r for r in every if r != '?'])} now"): None, **found}
    return found


def _compare(ran: list[str], runs: list[str]) -> list[tuple[str, str]]:
    """(rule, what) the test commands `runs` (a target's, a session's, a file's now) take out of `ran` (then)."""
    out = []
    if "?" in runs or len([r for r in runs if not set(_options(r)) & set(NO_RUN)]) < len(ran):  # (NO_RUN: few)
        out.append(("ci-test-removed", f"{len(ran)} test command(s) at the seal, {len([r for r in runs if r != '?'])} "
                    "now (or one given an option after which it runs no test)"))
    words = {w for line in runs for w in _options(line)} - {w for line in ran for w in _options(line)}
    for word in sorted(words):
        if word in CI_EXCLUDING or word.startswith("-p ") and (not word.startswith("-p no:") or word[6:] in OFF_WEAKENS):
            out.append(("config-excluded", f"a test command gained {word}"))
        elif word in NO_COV:
            out.append(("coverage-lowered", f"a test command gained {word}"))
    had = set(ran)
    through = [r for r in runs if r not in had and _through(r)]
    if through:
        out.append(("ci-ignores-failures", f"a test command now lets its failure through ({through[0][:80]})"))
    was = [v for r in ran for v in _cov(r)]
    now = [v for r in runs for v in _cov(r)]
    if was and (not now or min(now) < min(was)):
        out.append(("coverage-lowered", f"--cov-fail-under {min(was):g} became {f'{min(now):g}' if now else 'none'}"))
    return out


@functools.lru_cache(maxsize=4096)
def _options(line: str) -> tuple[str, ...]:
    """The pytest options a test command runs with: its own, and those its environment gives (`PYTEST_ADDOPTS`)."""
    return (*_pytest_options(line), *env_options(_env_of(line)))


@functools.lru_cache(maxsize=4096)
def _through(line: str) -> bool:
    """Whether a test command lets its failure through (marked "- ", `|| true`, `set +e`, a shell's `-c` that does)."""
    return line.startswith("- ") or _or_else(line) or "set +e" in line or wrapper_lets_through(line)


@functools.lru_cache(maxsize=4096)
def _cov(line: str) -> tuple[float, ...]:
    """The `--cov-fail-under` a test command runs with: its own, its `PYTEST_ADDOPTS`'."""
    return tuple(v for x in (line, _env_of(line).get("PYTEST_ADDOPTS")) if (v := _cov_fail_under(x)) is not None)


def cov_overridden(config: str | None, sealed_config: str | None, current: dict[str, str | None],
                   sealed: Callable[[str], str | None]) -> list[dict[str, str]]:
    """A test command that now gives `--cov-fail-under` lower than the sealed configuration's `addopts` does (`config`:
    its file's name, `sealed_config` its sealed text): pytest reads `addopts` first and the command line after, and
    pytest-cov keeps the last, so `pytest --cov-fail-under=0` checks 0 where `addopts` says 90. Each changed CI workflow
    (its test steps, `PYTEST_ADDOPTS` too), Makefile, noxfile or script (`current`: {file: its text now}; `sealed(file)`
    its sealed text) is compared by its lowest threshold given, with the sealed file's: a command that gave it as low at
    the seal, or one at or above the configuration's, is none."""
    from donegate.seal.excluded import _options as options, _test_steps

    want = _cov_fail_under(options(config, sealed_config).get("addopts")) if config and sealed_config else None
    if want is None:
        return []

    def given(name: str, text: str | None) -> list[float]:
        if name.startswith(".github/workflows/"):
            return [v["cov"] for v in (_test_steps(text) or {}).values() if v.get("cov") is not None]
        return [c for lines in _units(name, text).values() for line in lines for c in _cov(line)]

    out = []
    for name, text in sorted(current.items()):
        now, was = given(name, text), given(name, sealed(name))
        if now and min(now) < want and (not was or min(now) < min(was)):
            out.append({"test": name, "rule": "coverage-lowered", "what": f"a test command's --cov-fail-under "
                        f"{min(now):g} overrides the {want:g} of {config}'s addopts"})
    return out
