"""The experiment spec (YAML): tasks x configurations x repetitions, validated like `donegate.yaml`.

The schema is data (`SCHEMA`, leaves are `config.Key`s); every error names the key path, e.g.
`spec.yaml: spec key tasks[1].grading: expected string, got int 3`. A configuration's `keys` are
`donegate.yaml` keys and are checked against `config.SCHEMA` under the same path.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from donegate import config
from donegate.config import Key
from donegate.errors import ConfigError

NUM = (int, float)
TOOLS = ["Bash", "Read", "Edit", "Write", "Grep", "Glob"]  # what an unattended session may use without asking
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


class ListOf:
    """A list whose items each match `item` (a mapping schema); `min_items` at least."""

    def __init__(self, item: Any, doc: str, min_items: int = 0) -> None:
        self.item = item
        self.doc = doc
        self.min_items = min_items


CONFIGURATION = {
    "name": Key((str,), None, "the configuration's name in the ledger and the table"),
    "gate": Key((str,), "on", "on: the kit installed with its Stop hook; off: the ungated baseline (same deny rules and sandbox, no Stop hook)", choices=("on", "off")),
    "tests": Key((bool,), True, "seal acceptance tests (the task's `acceptance`); false: reviewers only, one always-passing placeholder is sealed"),
    "keys": Key((dict,), {}, "donegate.yaml keys this configuration sets (checked against donegate.yaml's schema)"),
    "client": Key((str,), None, "the agent's CLI for this configuration: claude (Claude Code) or codex (OpenAI's Codex CLI; docs/codex.md); default agent.client", nullable=True, choices=("claude", "codex")),
}

REPO = {
    "path": Key((str,), None, "a local folder (relative to the spec file); copied, committed as one commit", nullable=True),
    "pypi": Key((str,), None, "an sdist from PyPI, `name==version` (fetched with `pip download`, cached)", nullable=True),
    "git": Key((str,), None, "a git URL to clone (with `commit`)", nullable=True),
    "commit": Key((str,), None, "the commit of `git` to check out", nullable=True),
}

TASK = {
    "name": Key((str,), None, "the task's name in the ledger and the table"),
    "repo": REPO,
    "request": Key((str,), None, "the request, exactly as a developer would type it to the agent"),
    "grading": Key((str,), None, "folder of pytest files that score the run afterwards (relative to the spec file); never shown to any model"),
    "acceptance": Key((str,), "writer", "where the gate's acceptance tests come from: `writer` (written afresh each run by `donegate write`) or a folder to seal"),
}

SCHEMA: dict[str, Any] = {
    "experiment": Key((str,), None, "the experiment's name (the key of its runs in the ledger)"),
    "repetitions": Key((int,), 2, "runs of each task x configuration", minimum=1),
    "configurations": ListOf(CONFIGURATION, "configurations: a predefined name, or a mapping", min_items=1),
    "keys": Key((dict,), {}, "donegate.yaml keys every configuration sets (its own keys win), e.g. confine: off on a machine without bubblewrap; the grading runs follow its confine"),
    "tasks": ListOf(TASK, "tasks", min_items=1),
    "agent": {
        "model": Key((str,), None, "model of the agent's session (default: Claude Code's)", nullable=True),
        "client": Key((str,), "claude", "the agent's CLI of every configuration that names none: claude or codex", choices=("claude", "codex")),
        "codex_config": Key((str,), None, "a Codex config.toml (relative to the spec file) each Codex run's CODEX_HOME starts from: its model provider (Codex authenticates from the environment)", nullable=True),
        "tools": Key((list,), TOOLS, "the tools the agent may use without asking", items=str),
        "setting_sources": Key((str,), "project", "Claude Code's --setting-sources for the agent (project: the repository's settings only)"),
    },
    "limits": {
        "turns": Key((int,), 60, "--max-turns of the agent's session", minimum=1),
        "time": Key(NUM, 900, "seconds one agent session may take before it is killed (the run is graded as it stands)", minimum=1),
        "grading_timeout": Key(NUM, 300, "seconds the grading tests may run", minimum=1),
        "jobs": Key((int,), 1, "runs at a time (the --jobs default)", minimum=1),
        "max_cost": Key(NUM, None, "US dollars: no new run starts once the spend so far plus an average run would pass it (the --max-cost default)", minimum=0, nullable=True),
    },
}

REQUIRED = {"experiment", "configurations", "tasks"}
TASK_REQUIRED = ("name", "repo", "request", "grading")

# The article's five configurations (shared/reference/the-kit.md): reviewers block, as they did there.
PREDEFINED: dict[str, dict[str, Any]] = {
    "none": {"gate": "off", "tests": False, "keys": {}},
    "tests": {"gate": "on", "tests": True, "keys": {"review": "off"}},
    "reviewers": {"gate": "on", "tests": False, "keys": {"review": "block", "review_mode": "pair"}},
    "tests+reviewers": {"gate": "on", "tests": True, "keys": {"review": "block", "review_mode": "pair"}},
    "tests+critic": {"gate": "on", "tests": True, "keys": {"review": "block", "review_mode": "critic"}},
    # The sceptic's control (issue 25): a Stop hook that blocks blind ("keep working, verify your work")
    # up to the same cap, runs no test: does the specific failure buy recovery, or only efficiency?
    "retry": {"gate": "on", "tests": False, "keys": {"mode": "retry", "review": "off"}},
}
ORDER = list(PREDEFINED)  # the table lists these first, in the article's order


class Spec:
    def __init__(self, data: dict[str, Any], path: Path) -> None:
        self.data = data
        self.path = path
        self.folder = path.parent
        self.name: str = data["experiment"]
        self.repetitions: int = data["repetitions"]
        self.tasks: list[dict[str, Any]] = data["tasks"]
        self.configurations: list[dict[str, Any]] = data["configurations"]
        self.agent: dict[str, Any] = data["agent"]
        self.limits: dict[str, Any] = data["limits"]
        self.confine: str = data["keys"].get("confine", "auto")  # the grading runs' walls

    def task(self, name: str) -> dict[str, Any]:
        return next(t for t in self.tasks if t["name"] == name)

    def configuration(self, name: str) -> dict[str, Any]:
        return next(c for c in self.configurations if c["name"] == name)

    def resolve(self, rel: str) -> Path:
        return (self.folder / rel).expanduser().resolve()

    def digest(self) -> str:
        """The hash of the whole spec as validated (every task, configuration, limit) and of every grading
        and acceptance file it names: run lines carry it, and the report says when runs of an experiment
        came from different versions of its spec (an arm added later, a grading test fixed)."""
        files = []
        for task in self.tasks:
            for folder in (task["grading"], task["acceptance"]):
                if folder != "writer":
                    files += [(task["name"], p.name, hashlib.sha256(p.read_bytes()).hexdigest())
                              for p in sorted(self.resolve(folder).glob("test_*.py"))]
        body = json.dumps([{**self.data, "agent": _stable(self.agent)}, files], sort_keys=True, default=str)
        return hashlib.sha256(body.encode()).hexdigest()[:12]

    def fingerprint(self, task: dict[str, Any], conf: dict[str, Any]) -> str:
        """What a run of (task, configuration) depends on: the spec's entries, the agent and its limits,
        and the test files of the grading (and acceptance) folder. A run recorded under another
        fingerprint is not the same run, and resuming refuses to mix the two."""
        files = []
        for folder in (task["grading"], task["acceptance"]):
            if folder != "writer":
                files += [(p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in sorted(self.resolve(folder).glob("test_*.py"))]
        body = json.dumps([task, conf, _stable(self.agent), {k: self.limits[k] for k in ("turns", "time")}, files], sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:12]


def _stable(agent: dict[str, Any]) -> dict[str, Any]:
    """The agent's keys as a spec written before the Codex keys had them: their defaults left out, so the
    fingerprints of runs recorded then still match (a resumed experiment does not redo them)."""
    return {k: v for k, v in agent.items() if not (k == "client" and v == "claude" or k == "codex_config" and v is None)}


def _fail(path: str, message: str, fix: str = "") -> ConfigError:
    return ConfigError(f"spec key {path}: {message}", fix)


def _check(path: str, key: Key, value: Any) -> Any:
    """One leaf, with config.py's checks and the spec's wording."""
    if key.types == (dict,):
        if not isinstance(value, dict):
            raise _fail(path, f"expected a mapping, got {type(value).__name__} {value!r}")
        return value
    try:
        return config._check(path, key, value)
    except ConfigError as exc:
        raise _fail(path, exc.message.split(": ", 1)[1], (exc.fix or "").replace("in donegate.yaml", "in the spec")) from None


def _mapping(data: Any, schema: dict[str, Any], prefix: str) -> dict[str, Any]:
    where = prefix.rstrip(".") or "the top level"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"spec {where}: expected a mapping of keys, got {type(data).__name__}")
    out: dict[str, Any] = {}
    for name, key in schema.items():
        if isinstance(key, dict):
            out[name] = {}
        elif isinstance(key, ListOf):
            out[name] = []
        else:
            out[name] = copy.deepcopy(key.default)
    for name, value in data.items():
        path = f"{prefix}{name}"
        if name not in schema:
            raise _fail(path, "unknown key", f"use one of: {', '.join(schema)}")
        key = schema[name]
        if isinstance(key, dict):
            out[name] = _mapping(value, key, f"{path}.")
        elif isinstance(key, ListOf):
            if not isinstance(value, list):
                raise _fail(path, f"expected a list, got {type(value).__name__}")
            out[name] = value  # items are checked by their owner (they may be shorthands)
        else:
            out[name] = _check(path, key, value)
    for name, key in schema.items():  # nested mappings given no value still get their defaults
        if isinstance(key, dict) and name not in data:
            out[name] = _mapping({}, key, f"{prefix}{name}.")
    return out


def _name(path: str, value: Any) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise _fail(path, f"{value!r} is not a name (letters, digits, and _ . + -, starting with a letter or digit)")
    return value


def _configuration(item: Any, path: str) -> dict[str, Any]:
    if isinstance(item, str):
        if item not in PREDEFINED:
            raise _fail(path, f"{item!r} is not a predefined configuration", f"use one of {', '.join(PREDEFINED)}, or a mapping with name/gate/tests/keys")
        return {"name": item, **copy.deepcopy(PREDEFINED[item])}
    conf = _mapping(item, CONFIGURATION, f"{path}.")
    if conf["name"] is None:
        raise _fail(f"{path}.name", "missing", "give every configuration a name")
    _name(f"{path}.name", conf["name"])
    if "config" in conf["keys"]:
        raise _fail(f"{path}.keys.config", "set by the harness (the configuration's name)", "remove it")
    try:
        config.validate(conf["keys"], prefix=f"{path}.keys.")
    except ConfigError as exc:
        raise ConfigError(exc.message.replace("config key ", "spec key ", 1), (exc.fix or "").replace("in donegate.yaml", "in the spec")) from None
    if conf["gate"] == "off" and conf["tests"] and isinstance(item, dict) and "tests" in item:
        raise _fail(f"{path}.tests", "a configuration with gate: off seals nothing", "remove tests, or set gate: on")
    if conf["gate"] == "off":
        conf["tests"] = False
    return conf


def _task(item: Any, path: str, folder: Path) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _fail(path, f"expected a mapping (name, repo, request, grading, acceptance), got {type(item).__name__}")
    if isinstance(item.get("repo"), str):  # shorthand: a local folder
        item = {**item, "repo": {"path": item["repo"]}}
    task = _mapping(item, TASK, f"{path}.")
    for key in TASK_REQUIRED:
        if key not in item or (task[key] is None if not isinstance(task[key], dict) else False):
            raise _fail(f"{path}.{key}", "missing", f"every task needs {', '.join(TASK_REQUIRED)}")
    _name(f"{path}.name", task["name"])
    repo = task["repo"]
    given = [k for k in ("path", "pypi", "git") if repo[k] is not None]
    if len(given) != 1:
        raise _fail(f"{path}.repo", f"give exactly one of path, pypi, git (got {', '.join(given) or 'none'})")
    if repo["git"] is not None and not repo["commit"]:
        raise _fail(f"{path}.repo.commit", "missing", "a git repository needs the commit to check out")
    if repo["git"] is None and repo["commit"] is not None:
        raise _fail(f"{path}.repo.commit", "only with repo.git")
    if repo["pypi"] is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+!-]+", repo["pypi"]):
        raise _fail(f"{path}.repo.pypi", f"{repo['pypi']!r} is not name==version", "pin the version, e.g. tinydb==4.9.0")
    if repo["path"] is not None and not (folder / repo["path"]).is_dir():
        raise _fail(f"{path}.repo.path", f"no folder {folder / repo['path']}")
    if not task["request"].strip():
        raise _fail(f"{path}.request", "empty", "write the request as a developer would type it")
    grading = folder / task["grading"]
    if not grading.is_dir() or not any(p.name.startswith("test_") and p.suffix == ".py" for p in grading.iterdir()):
        raise _fail(f"{path}.grading", f"no folder of test_*.py files at {grading}")
    if task["acceptance"] != "writer":
        acc = folder / task["acceptance"]
        if not acc.is_dir() or not any(p.name.startswith("test_") and p.suffix == ".py" for p in acc.iterdir()):
            raise _fail(f"{path}.acceptance", f"neither `writer` nor a folder of test_*.py files ({acc})")
        if acc.resolve() == grading.resolve():
            raise _fail(f"{path}.acceptance", "the same folder as grading: the gate would seal the grading tests", "give the gate its own tests, or use writer")
    return task


def validate(data: Any, path: Path) -> Spec:
    out = _mapping(data, SCHEMA, "")
    for key in sorted(REQUIRED):
        if not out.get(key):
            raise _fail(key, "missing", f"a spec needs {', '.join(sorted(REQUIRED))}")
    _name("experiment", out["experiment"])
    folder = path.parent
    out["configurations"] = [_configuration(c, f"configurations[{i}]") for i, c in enumerate(out["configurations"])]
    if "config" in out["keys"]:
        raise _fail("keys.config", "set by the harness (the configuration's name)", "remove it")
    try:
        config.validate(out["keys"], prefix="keys.")
    except ConfigError as exc:
        raise ConfigError(exc.message.replace("config key ", "spec key ", 1), (exc.fix or "").replace("in donegate.yaml", "in the spec")) from None
    for i, conf in enumerate(out["configurations"]):
        conf["keys"] = {**out["keys"], **conf["keys"]}
        if (conf.pop("client", None) or out["agent"]["client"]) == "codex":
            conf["client"] = "codex"  # Claude Code's configurations stay as they were: their runs' fingerprints too
            if out["agent"]["codex_config"] is None:
                raise _fail(f"configurations[{i}].client", "codex needs agent.codex_config", "give the Codex config.toml with the model provider")
    out["tasks"] = [_task(t, f"tasks[{i}]", folder) for i, t in enumerate(out["tasks"])]
    for kind in ("configurations", "tasks"):
        seen: set[str] = set()
        for i, item in enumerate(out[kind]):
            if item["name"] in seen:
                raise _fail(f"{kind}[{i}].name", f"{item['name']!r} is used twice", "give each a name of its own")
            seen.add(item["name"])
    return Spec(out, path)


def load(path: Path) -> Spec:
    path = Path(path).expanduser().resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the spec {path}: {exc.strerror}", "check the path") from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})", "fix the YAML syntax") from None
    try:
        return validate(data, path)
    except ConfigError as exc:
        exc.message = f"{path}: {exc.message}"
        raise
