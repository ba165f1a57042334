"""`donegate.yaml`: the schema is data, every key has a default, every error names the key path.

PyYAML is imported only when the file exists, so the common hook run (no config) does not pay for it.
"""

from __future__ import annotations

import copy
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import paths
from donegate.errors import ConfigError


class Key:
    """One leaf of the schema. (A plain class: dataclasses would add ~8 ms to every stop's start-up.)"""

    def __init__(self, types: tuple[type, ...], default: Any, doc: str, choices: tuple[str, ...] = (),
                 minimum: float | None = None, nullable: bool = False, items: type | None = None) -> None:
        self.types = types
        self.default = default
        self.doc = doc
        self.choices = choices
        self.minimum = minimum
        self.nullable = nullable
        self.items = items  # element type for lists

    def type_name(self) -> str:
        if self.choices:
            return " / ".join(self.choices)
        names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}
        types = [t for t in self.types if not (t is int and float in self.types)]  # int or float: a number
        name = " or ".join(names[t] for t in types)
        if self.items is not None:
            name += f" of {names[self.items]}s"
        return name + (" or null" if self.nullable else "")


NUM = (int, float)

SCHEMA: dict[str, Any] = {
    "config": Key((str,), "default", "label of this configuration in the ledger, to compare runs in the report"),
    "timeout": Key(NUM, 120, "seconds the hidden tests may run before the stop is blocked", minimum=1),
    "max_blocks": Key((int,), 6, "blocks in one session before the next stop is handed to a person (keep below 8)", minimum=1),
    "max_same_failure": Key((int,), 3, "stops in a row failing the same tests before handing over; 0 turns it off", minimum=0),
    "protected": Key((list,), [".claude/**"], "globs of repository files the agent must not change", items=str),
    "protect_repo_tests": Key((bool,), True, "also protect the repository's own test files that existed at seal time"),
    "allowed": Key((list,), None, "if set, globs of the only files the agent may change", items=str, nullable=True),
    "feedback_chars": Key((int,), 4000, "cap on the feedback text sent back to the agent", minimum=200),
    "hook_margin": Key(NUM, 30, "seconds the hook timeout in settings.json keeps above the kit's worst case", minimum=5),
    "review": Key((str,), "off", "reviewers after the tests pass: off, hint (feedback once) or block", choices=("off", "hint", "block")),
    "review_mode": Key((str,), "pair", "two reviewers in parallel, or a reviewer and a critic", choices=("pair", "critic")),
    "review_timeout": Key(NUM, 300, "seconds the reviewers may take in one stop", minimum=1),
    "appeal": Key((str,), "on", "whether the agent may end a blocked stop with `APPEAL: <reason>` (a person decides)", choices=("on", "off")),
    "max_appeals": Key((int,), 2, "accepted appeals per session; one more is refused and the stop judged as usual", minimum=1),
    "cache": Key((bool,), True, "reuse the last stop's test results when nothing the hidden run reads has changed"),
    "writer": {
        "attempts": Key((int,), 3, "times the writer is asked before `donegate write` gives up", minimum=1),
        "max_turns": Key((int,), 30, "turn bound of one writer run", minimum=1),
        "timeout": Key(NUM, 600, "seconds one writer run may take", minimum=1),
        "model": Key((str,), None, "model for the writer (default: Claude Code's)", nullable=True),
    },
    "reviewer": {
        "max_turns": Key((int,), 15, "turn bound of one reviewer run", minimum=1),
        "model": Key((str,), None, "model for the reviewers (default: Claude Code's)", nullable=True),
    },
}


def defaults(schema: dict[str, Any] = SCHEMA) -> dict[str, Any]:
    return {
        name: defaults(key) if isinstance(key, dict) else copy.deepcopy(key.default)
        for name, key in schema.items()
    }


def iter_keys(schema: dict[str, Any] = SCHEMA, prefix: str = ""):
    """(dotted path, Key) for every leaf, in schema order: the README's table is checked against this."""
    for name, key in schema.items():
        if isinstance(key, dict):
            yield from iter_keys(key, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", key


def _check(path: str, key: Key, value: Any) -> Any:
    # YAML 1.1 reads a bare `off` as false; accept it where "off" is a choice.
    if key.choices and value is False and "off" in key.choices:
        value = "off"
    if key.choices and value is True and "on" in key.choices:  # ... and a bare `on` as true
        value = "on"
    if value is None and key.nullable:
        return None
    ok = isinstance(value, key.types) and not (isinstance(value, bool) and bool not in key.types)
    if not ok:
        raise ConfigError(
            f"config key {path}: expected {key.type_name()}, got {type(value).__name__} {value!r}",
            f"set {path} to a {key.type_name()} in donegate.yaml",
        )
    if key.choices and value not in key.choices:
        raise ConfigError(
            f"config key {path}: {value!r} is not one of {', '.join(key.choices)}",
            f"set {path} to one of {', '.join(key.choices)}",
        )
    if key.minimum is not None and value < key.minimum:
        raise ConfigError(f"config key {path}: {value!r} is below the minimum {key.minimum:g}")
    if key.items is not None:
        for i, item in enumerate(value):
            if not isinstance(item, key.items):
                raise ConfigError(
                    f"config key {path}[{i}]: expected string, got {type(item).__name__} {item!r}",
                    f"quote the entry in {path}",
                )
    return value


def validate(data: Any, schema: dict[str, Any] = SCHEMA, prefix: str = "") -> dict[str, Any]:
    """Defaults overlaid with `data`, or ConfigError naming the first bad key path."""
    where = prefix.rstrip(".") or "the top level"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {where}: expected a mapping of keys, got {type(data).__name__}")
    out = defaults(schema)
    for name, value in data.items():
        path = f"{prefix}{name}"
        if name not in schema:
            known = ", ".join(schema)
            raise ConfigError(f"config key {path}: unknown key", f"use one of: {known}")
        key = schema[name]
        out[name] = validate(value, key, f"{path}.") if isinstance(key, dict) else _check(path, key, value)
    return out


def load(path: Path | None = None) -> dict[str, Any]:
    path = path or paths.config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return defaults()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    import yaml  # only when there is a file to read

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"{path}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})",
            "fix the YAML syntax",
        ) from exc
    try:
        return validate(data)
    except ConfigError as exc:
        exc.message = f"{path}: {exc.message}"
        raise
