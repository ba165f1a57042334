"""`donegate write REPO --request TEXT`: a separate model writes the acceptance tests, then they are sealed.

The writer is not the implementer. It runs headless (`claude.headless.run`) in a clean copy of REPO at HEAD,
with read-only tools, and answers with test files (`writer/schema.json`, prompt in
`writer/prompt.md`; both are the user's to edit). Its answer is checked before anything is sealed:
valid against the schema, plain `test_*.py` names, each file compiles, pytest collects at least one
test from each. A failed check goes back to the writer as the next prompt, with the exact problems,
up to `writer.attempts` times; then the command fails and nothing is sealed.

The accepted tests run once against the copy (the repository before the change): passing tests are
existing behaviour, failing ones the new requirements. A run where nothing fails, or where every
test fails for one import error, is reported as suspicious. Sealing goes through `sealing.seal`.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from donegate.tree import git
from donegate.core import kit as installation
from donegate.ledger import chain as ledger
from donegate import paths
from donegate.person import ownership as person
from donegate.seal import held as held_back, own, sealing, store
from donegate.hidden import runner
from donegate.claude import headless
from donegate.errors import DonegateError
from donegate.core.util import plural, utc_now

# The kit's own (checkout or installed wheel); donegate.yaml's `prompts` folder can replace each.
PROMPT_FILE = installation.kit_dir("writer") / "prompt.md"
SCHEMA_FILE = installation.kit_dir("writer") / "schema.json"
TOOLS = ["Read", "Grep", "Glob"]
NAME = re.compile(r"test_[A-Za-z0-9_]+\.py")
MAX_LISTED = 300  # repository files listed in the prompt
MAX_ECHO = 60_000  # characters of a rejected answer's files shown again in the retry prompt
PROGRESS_EVERY = 10.0  # seconds between progress lines when stderr is not a terminal
# Model failures that another attempt can fix; anything else (login, API, timeout) ends the command.
RETRYABLE = ("bad_output", "error_max_turns", "error_max_structured_output_retries")


# --------------------------------------------------------------------------
# The user's files
# --------------------------------------------------------------------------


def load_schema(path: Path | None = None, override: str | None = None) -> dict:
    path = path or installation.file("writer", "schema.json", override)
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DonegateError(f"the writer's schema {path} is missing", installation.restore("writer/schema.json")) from None
    except ValueError as exc:
        raise DonegateError(f"{path} is not valid JSON: {exc}", "fix the JSON syntax of the writer's schema") from None
    files = schema.get("properties", {}).get("files") if isinstance(schema, dict) else None
    if not isinstance(files, dict) or "files" not in schema.get("required", []):
        raise DonegateError(
            f"{path} does not require a top-level `files` list",
            'keep "files" in the schema\'s "properties" and "required": the kit reads the test files from it',
        )
    return schema


def load_prompt(path: Path | None = None, override: str | None = None) -> str:
    path = path or installation.file("writer", "prompt.md", override)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DonegateError(f"the writer's prompt {path} is missing", installation.restore("writer/prompt.md")) from None


def render_prompt(template: str, *, request: str, repo: str, base: str, files: list[str], retry: str = "") -> str:
    """Fill `{{request}}`, `{{repo}}`, `{{base}}`, `{{files}}`; a template without `{{request}}` gets it appended."""
    listed = "\n".join(f"- {name}" for name in files[:MAX_LISTED])
    if len(files) > MAX_LISTED:
        listed += f"\n- ... and {len(files) - MAX_LISTED} more (use Glob)"
    text = template
    if "{{request}}" not in text:
        text += "\n\n## The request\n\n{{request}}\n"
    for key, value in (("repo", repo), ("base", base), ("files", listed or "(no files)"), ("request", request.strip())):
        text = text.replace("{{" + key + "}}", value)  # the request last: its text is never expanded
    return text + (f"\n\n{retry}" if retry else "")


# --------------------------------------------------------------------------
# Checking the answer
# --------------------------------------------------------------------------

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_errors(value: Any, schema: dict, where: str = "answer") -> list[str]:
    """Problems of `value` against the subset of JSON Schema the writer's schema uses.

    Keywords: type, enum, const, properties, required, additionalProperties, items, minItems,
    maxItems, minLength, maxLength, pattern. Others are ignored (Claude Code checks the full schema
    first; this is the kit's own check of what it is about to seal).
    """
    if not isinstance(schema, dict):
        return []
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_TYPES.get(k, lambda v: True)(value) for k in kinds):
            return [f"{where}: expected {' or '.join(kinds)}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: must be {schema['const']!r}")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                out.append(f"{where}: missing required property {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                out += schema_errors(item, props[name], f"{where}.{name}")
            elif extra is False:
                out.append(f"{where}: unexpected property {name!r}")
            elif isinstance(extra, dict):
                out += schema_errors(item, extra, f"{where}.{name}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{where}: needs at least {schema['minItems']} item(s), got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{where}: at most {schema['maxItems']} item(s), got {len(value)}")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                out += schema_errors(item, schema["items"], f"{where}[{i}]")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{where}: must not be shorter than {schema['minLength']} character(s)")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{where}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{where}: {value!r} does not match the pattern {schema['pattern']}")
    return out


def check_files(answer: dict) -> tuple[dict[str, str], list[str]]:
    """The files of an answer that passed the schema: ({name: content}, problems)."""
    files: dict[str, str] = {}
    problems: list[str] = []
    for i, entry in enumerate(answer.get("files") or []):
        name, content = entry.get("path"), entry.get("content")
        if not isinstance(name, str) or not isinstance(content, str):
            problems.append(f"files[{i}]: needs a string path and a string content")
            continue
        if not NAME.fullmatch(name):
            problems.append(
                f"files[{i}].path {name!r}: must be a plain file name test_<topic>.py "
                "(letters, digits, underscores; no folders, no '..')"
            )
            continue
        if name in files:
            problems.append(f"files[{i}].path {name!r}: two files with the same name; give each its own")
            continue
        try:
            compile(content, name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            line = (exc.text or "").strip()
            problems.append(f"{name} line {exc.lineno}: {exc.msg}" + (f": {line}" if line else ""))
        except ValueError as exc:  # e.g. a NUL byte in the source
            problems.append(f"{name}: not valid Python source ({exc})")
        files[name] = content
    if not files and not problems:
        problems.append("files: no test files in the answer; write at least one test_<topic>.py")
    return files, problems


def _import_error(message: str) -> bool:
    return any(word in message for word in ("ImportError", "ModuleNotFoundError", "cannot import"))


def check_run(files: dict[str, str], run: runner.TestRun, allow_skip: bool = False) -> list[str]:
    """Problems of the accepted files' first run: collection errors, files without tests, a hang, and
    (unless `allow_skip`) tests that skip or xfail: only a passed test counts at the gate."""
    problems = []
    if not allow_skip:
        for nodeid, why in run.skipped().items():
            problems.append(f"{nodeid}: {why}; only a passed test counts at the gate, so never skip or xfail a test")
    for err in run.errors:
        message = err.get("message") or ""
        problems.append(f"{err.get('nodeid') or 'collection'} does not collect: {message}".rstrip())
        if _import_error(message):
            problems.append(
                f"{err.get('nodeid')}: a name the change will add must be imported inside the test functions, "
                "not at the top of the file, where a name that does not exist yet stops the whole file from collecting"
            )
    if not run.ok and not run.errors:
        problems.append(f"the tests did not run to the end: {run.problem}")
    if not problems:
        for name in files:
            if not any(t.split("::", 1)[0] == name for t in run.collected):
                problems.append(f"{name}: pytest collected no test from it; name the test functions test_*")
    return problems


def suspicious(run: runner.TestRun) -> list[str]:
    """Warnings about a run of the accepted tests against the repository before the change."""
    failing = run.failing()
    total = len(run.results)
    if total and not failing:
        return [f"no test fails before the change ({_n(total, 'test')}, all passing): none of them holds a new requirement"]
    if total and len(failing) == total:
        heads = {(m or "").strip().splitlines()[0] if (m or "").strip() else "" for m in failing.values()}
        if len(heads) == 1:
            head = heads.pop()
            if _import_error(head):
                return [f"every test ({total}) fails before the change with the same import error ({head}): "
                        "they may not import the project the way its code does"]
    return []


def retry_text(attempt: int, attempts: int, problems: list[str], previous: dict[str, str]) -> str:
    """The section added to the prompt after a rejected attempt: the exact problems, then the old files."""
    lines = [
        f"## Your previous answer was rejected (attempt {attempt} of {attempts})",
        "",
        "Nothing was kept. Fix every problem below and answer again with the complete set of files:",
        "",
        *[f"- {p}" for p in problems],
    ]
    shown = sum(len(c) for c in previous.values())
    if previous and shown <= MAX_ECHO:
        lines += ["", "The files you gave last time, for reference:"]
        for name, content in previous.items():
            lines += ["", f"### {name}", "", "```python", content.rstrip("\n"), "```"]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


class Progress:
    """Elapsed time and turns on stderr: one line rewritten with \\r on a terminal, else a line now and then."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream = stream
        self.label = label
        self.tty = stream.isatty()
        self.last = -PROGRESS_EVERY  # the first call always shows
        self.shown = False

    def __call__(self, elapsed: float, turns: int) -> None:
        text = f"{self.label}: {elapsed:4.0f} s, {plural(turns, 'turn')}"
        if self.tty:
            self.stream.write("\r" + text + "\033[K")
        elif elapsed - self.last >= PROGRESS_EVERY:
            self.last = elapsed
            self.stream.write(text + "\n")
        else:
            return
        self.stream.flush()
        self.shown = True

    def end(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def clean_copy(repo: Path, dest: Path) -> Path:
    """The tracked files of `repo` at HEAD (no .git, no working-tree changes) extracted into `dest`."""
    archive = dest / "head.tar"
    res = git.archive(repo, archive, timeout=120)  # smudge filters and the like neutralised
    if res.timed_out or res.returncode != 0:
        why = "timed out" if res.timed_out else (res.stderr.strip().splitlines() or ["failed"])[-1]
        raise DonegateError(f"cannot take a clean copy of {repo} at HEAD: {why}", "commit at least once, then run donegate write")
    src = dest / "src"
    src.mkdir()
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(src, filter="data")
        else:  # Python < 3.11.4: git archive writes no links out of the tree
            tar.extractall(src)
    archive.unlink()
    return src


@dataclass
class Attempts:
    """What the writer runs cost so far, summed over attempts."""

    count: int = 0
    turns: int = 0
    cost_usd: float = 0.0
    duration: float = 0.0
    model: str | None = None
    problems: list[str] = field(default_factory=list)

    def add(self, run: headless.ModelRun) -> None:
        self.count += 1
        self.turns += run.turns
        self.cost_usd += run.cost_usd
        self.duration += run.duration
        self.model = run.model or self.model

    def record(self) -> dict[str, Any]:
        return {"model": self.model, "turns": self.turns, "cost_usd": round(self.cost_usd, 6),
                "duration": round(self.duration, 1), "attempts": self.count}


def _fatal(run: headless.ModelRun, wcfg: dict[str, Any]) -> DonegateError:
    if run.subtype == "timeout":
        return DonegateError(
            f"the writer did not finish within {wcfg['timeout']:g} s and was stopped; nothing was sealed",
            "raise writer.timeout in donegate.yaml, or narrow the request",
        )
    return DonegateError(f"the writer failed, nothing was sealed: {run.error}")


def _model_problem(run: headless.ModelRun, wcfg: dict[str, Any]) -> str:
    if run.subtype == "error_max_turns":
        return (f"you used all {wcfg['max_turns']} turns without answering: read only what the request touches, "
                "and call StructuredOutput before the turns run out")
    if run.subtype == "bad_output":
        return "you answered in text; the answer must be one call of the StructuredOutput tool holding the files"
    return run.error


def _ledger_write(record: dict[str, Any]) -> None:
    ledger.append({"event": record.pop("event"), "time": utc_now(), **record}, paths.ledger_path())


def _failed(repo: Path, cfg: dict[str, Any], spent: Attempts, error: str) -> None:
    """The receipt of a write that sealed nothing: what it cost, and why."""
    _ledger_write({"event": "write_failed", "repo": str(repo), "config": cfg["config"], "error": error[:2000], **spent.record()})


def _check(run: headless.ModelRun, schema: dict, copy: Path, timeout: float, folder: Path,
           allow_skip: bool = False, python: Any = None, pythonpath: list[str] | None = None,
           confine: str = "auto") -> tuple[dict[str, str], runner.TestRun | None, list[str]]:
    """(files, their first run against the copy, problems) of one answer; problems empty when accepted."""
    problems = schema_errors(run.structured, schema)
    if problems:
        return {}, None, problems
    files, problems = check_files(run.structured or {})
    if problems:
        return files, None, problems
    first = _first_run(files, copy, timeout, folder, python, pythonpath, confine)
    return files, first, check_run(files, first, allow_skip)


def write(repo: Path, request: str, cfg: dict[str, Any], *, err: TextIO | None = None,
          allow_skip: bool = False, run_model: Callable[..., headless.ModelRun] | None = None,
          by: dict[str, Any] | None = None) -> tuple[store.Store, list[str]]:
    """Have the writer write tests for `request`, check them, seal them; (store, warnings). Progress goes to `err`.
    `by`: who asked (`donegate.person.ownership.who`), kept in the seal record and the `write` line.

    `run_model` is the model boundary (`claude.headless.run` by default, with its arguments): the
    reviewer has the same seam, and the tests script the writer's answers through it."""
    err = err or sys.stderr
    wcfg = cfg["writer"]
    from donegate.tree import repo as repos

    repo = repos.project(repo)  # the project, exactly as `seal` takes it: a repository, or a subfolder of one
    top = git.toplevel(repo)
    paths.check_outside(repo)
    if not request.strip():
        raise DonegateError("the request is empty", 'say what the change should do: donegate write REPO --request "..."')
    schema, template = load_schema(override=cfg.get("prompts")), load_prompt(override=cfg.get("prompts"))
    if run_model is None:
        headless.find_claude()  # a missing binary is reported before any work
        run_model = headless.run
    base = git.head(repo)
    warnings = []
    dirty = git.changed_since(repo, base)
    if dirty:
        warnings.append(f"{len(dirty)} file(s) differ from HEAD in the working tree ({', '.join(dirty[:3])}"
                        f"{', ...' if len(dirty) > 3 else ''}); the writer saw HEAD {base[:12]}")
    spent = Attempts()
    tmp = Path(tempfile.mkdtemp(prefix="donegate-write-"))
    try:
        if paths.is_within(tmp, repo):
            raise DonegateError(f"the temporary folder {tmp} lies inside {repo}", "set TMPDIR to a folder outside the repository")
        from donegate.hidden import python as pyenv

        interp = pyenv.find(repo, top, cfg.get("python"))  # the project's environment, for the copy's runs too
        copy = clean_copy(top, tmp) / repo.resolve().relative_to(top.resolve())  # the project's folder in the repository's HEAD
        listing = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
        retry = ""
        accepted: tuple[dict[str, str], runner.TestRun, dict[str, Any]] | None = None
        for attempt in range(1, wcfg["attempts"] + 1):
            prompt = render_prompt(template, request=request, repo=repo.name, base=base, files=listing, retry=retry)
            progress = Progress(err, f"donegate: writing tests (attempt {attempt} of {wcfg['attempts']})")
            progress(0.0, 0)
            try:
                run = run_model(prompt, cwd=copy, schema=schema, tools=TOOLS, max_turns=wcfg["max_turns"],
                                timeout=wcfg["timeout"], model=wcfg["model"], on_progress=progress, purpose="writer")
            finally:
                progress.end()
            spent.add(run)
            if run.ok:
                files, first, problems = _check(run, schema, copy, cfg["timeout"], tmp / f"attempt-{attempt}", allow_skip,
                                                interp, cfg.get("pythonpath"), cfg["confine"])
            elif run.subtype in RETRYABLE:
                files, first, problems = {}, None, [_model_problem(run, wcfg)]
            else:
                _failed(repo, cfg, spent, run.error)
                raise _fatal(run, wcfg)
            if not problems and first is not None:
                accepted = (files, first, run.structured or {})
                break
            spent.problems = problems
            err.write(f"donegate: the writer's answer was rejected: {'; '.join(problems)[:500]}\n")
            retry = retry_text(attempt, wcfg["attempts"], problems, files)
        if accepted is None:
            _failed(repo, cfg, spent, "; ".join(spent.problems))
            raise DonegateError(
                f"the writer gave no usable tests in {spent.count} attempt(s); nothing was sealed. "
                f"Last problem: {'; '.join(spent.problems)[:800]}",
                "run again, or raise writer.attempts / writer.max_turns in donegate.yaml, or adjust writer/prompt.md",
            )
        files, first, answer = accepted
        flags = suspicious(first)
        warnings += flags
        out = tmp / "accepted"
        out.mkdir()
        for name, content in files.items():
            (out / name).write_text(content, encoding="utf-8")
        extra = {"writer": {**spent.record(), "behaviours": answer.get("behaviours", []), "notes": answer.get("notes", ""),
                            "suspicious": flags}}
        try:
            held = [p for p in sorted(out.iterdir()) if p.name.startswith(held_back.WRITER_PREFIX)]
            st = sealing.seal(repo, sorted(out.iterdir()), request=request, timeout=cfg["timeout"], protected=cfg["protected"],
                            protect_repo_tests=cfg["protect_repo_tests"], extra=extra, allow_skip=allow_skip,
                            confine=cfg["confine"], python=cfg.get("python"), python_by="python:",
                            pythonpath=cfg.get("pythonpath"), by=by, held=held,
                            held_share=float(cfg.get("held_share") or 0), own_tests=own.configured(cfg.get("own_tests", "auto")))
        except DonegateError as exc:
            _failed(repo, cfg, spent, exc.message)
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    m = st.manifest
    warnings += contradicted(answer, m)
    if not m.get("held"):  # no test_held_*.py, and held_share 0 (or a suite of one test)
        warnings.append("no test is held back (the writer wrote no test_held_*.py; held_share picked none): a block "
                        "shows every failing assertion, which a session could hard-code (docs/held-back.md)")
    _ledger_write({"event": "write", "repo": str(repo), "config": cfg["config"], "tests": m["count"],
                   "new": len(m["baseline"]["failing"]), "existing": len(m["baseline"]["passing"]), **spent.record(),
                   **({"by": by, "inside_session": person.inside_session(by)} if by is not None else {})})
    return st, warnings


def contradicted(answer: dict[str, Any], manifest: dict[str, Any]) -> list[str]:
    """The existing tests of the project the writer says the request contradicts (issue 44): named for the person,
    never superseded by the writer's word. A sealed test the agent changes for it and that fails in its sealed form
    blocks as "the old contract changed", with the appeal offered."""
    out = []
    for item in answer.get("contradicts") or []:
        if not isinstance(item, dict) or not isinstance(item.get("test"), str):
            continue
        test, why = item["test"], str(item.get("why") or "")[:200]
        out.append(f"the writer says the request contradicts the project's own test {test} ({why}): if it does, seal "
                   f"again with --supersedes {test}; until then that test blocks a stop that breaks it, with the appeal offered")
    return out


def _first_run(files: dict[str, str], copy: Path, timeout: float, folder: Path, python: Any = None,
               pythonpath: list[str] | None = None, confine: str = "auto") -> runner.TestRun:
    """Run the answer's files once against the clean copy (the repository before the change), with
    the repository's own interpreter (`python`: its `python.Interpreter`; the copy's folders first on sys.path),
    in the walls the configuration asks for (`confine`: a machine without a sandbox needs a person's `off`)."""
    from donegate.hidden import python as pyenv

    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8")
    (folder / runner.INI_NAME).write_text(runner.INI_TEXT, encoding="utf-8")
    launch = pyenv.launch(copy, copy, interp=python, pythonpath=pythonpath) if python is not None else None
    return runner.run(folder, copy, timeout=timeout, python=launch, confine=confine)


_n = plural


def summary(st: store.Store) -> str:
    m, w = st.manifest, st.manifest.get("writer", {})
    return (
        f"wrote and sealed {_n(m['count'], 'test')} for {m['repo']} at {m['base'][:12]}: "
        f"{len(m['baseline']['failing'])} new (failing now), {len(m['baseline']['passing'])} existing behaviour (passing now), "
        f"{len(m.get('held') or {})} held back; "
        f"${w.get('cost_usd', 0):.4f}, {w.get('duration', 0):.0f} s, {_n(w.get('turns', 0), 'turn')}, "
        f"{_n(w.get('attempts', 0), 'attempt')}, model {w.get('model') or 'default'}"
    )
