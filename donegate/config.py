"""`donegate.yaml`: the schema is data, every key has a default, every error names the key path.

PyYAML is imported only when the file exists, its text is not the one last parsed (kept in the state
folder, `util.remembered`), and it is not a few lines of `key: value` that `_flat` reads as PyYAML does, so a
stop does not pay ~11 ms for it.

The file is read inside the stop's deadline, so reading it is bounded: at most `MAX_BYTES`, a regular
file only (a FIFO never blocks the read), UTF-8 text, no YAML aliases (an alias bomb expands without
bound), at most `MAX_DEPTH` levels of flow brackets (checked before PyYAML recurses through them), at most `MAX_GLOBS` globs of at most `MAX_GLOB_CHARS` each per list, and an error message
shows a short prefix of a bad value, never the whole of it.
"""

from __future__ import annotations

from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import paths
from donegate.errors import ConfigError

MAX_BYTES = 256 * 1024
MAX_GLOBS = 1000  # per list (protected, allowed): every file of the repository is matched against them
MAX_GLOB_CHARS = 1000
SHOW_CHARS = 60  # of a bad value, in an error message


class Key:
    """One leaf of the schema. (A plain class: dataclasses would add ~8 ms to every stop's start-up.)"""

    def __init__(self, types: tuple[type, ...], default: Any, doc: str, choices: tuple[str, ...] = (),
                 minimum: float | None = None, nullable: bool = False, items: type[str] | None = None) -> None:
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
    "own_tests": Key((str, list, bool), "auto", "the project's own tests sealed beside the hidden ones and run at every stop: "
                     "auto (as pytest finds them: testpaths, else tests/ or test/), off, or a list of paths (docs/own-suite.md)"),
    "own_run": Key((str,), "reach", "which sealed tests of the project's own suite a stop runs: reach (those the change "
                   "can reach, by the map the seal records) or all", choices=("reach", "all")),
    "allowed": Key((list,), None, "if set, globs of the only files the agent may change", items=str, nullable=True),
    "held_share": Key(NUM, 0.25, "share of each sealed test file's tests the kit holds back when `seal --held` names none "
                      "(0 to 1; never a whole file; 0 turns it off): their failures show the requirement's name and a "
                      "count, never inputs or values (docs/held-back.md)", minimum=0),
    "feedback_chars": Key((int,), 4000, "cap on the feedback text sent back to the agent", minimum=200),
    "hook_margin": Key(NUM, 30, "seconds the hook timeout in settings.json keeps above the kit's worst case", minimum=5),
    "confine": Key((str,), "auto", "the hidden run in a sandbox: auto and on block without one on Linux (no unconfined default); "
                   "off runs it unconfined (a person's choice, on every ledger line)",
                   choices=("auto", "on", "off")),
    "python": Key((str,), None, "the project's interpreter or environment folder for the hidden run (relative to the project "
                  "root); default: its .venv/venv, else the kit's own", nullable=True),
    "pythonpath": Key((list,), [], "folders put first on sys.path in the hidden run, relative to the project root "
                      "(like pytest's pythonpath)", items=str),
    "scan": Key((str,), "block", "scan the changed product files for test-harness tricks: block, hint (tell the agent) or off",
                choices=("block", "hint", "off")),
    "scan_allow": Key((list,), [], "rules the project allows: their scan findings and tripwires stay quiet (e.g. settrace, "
                      "imports-pytest; never stream, harness, probe, disagree)", items=str),
    "review": Key((str,), "off", "reviewers after the tests pass: off, hint (feedback once) or block", choices=("off", "hint", "block")),
    "review_mode": Key((str,), "pair", "two reviewers in parallel, or a reviewer and a critic", choices=("pair", "critic")),
    "review_timeout": Key(NUM, 300, "seconds the reviewers may take in one stop", minimum=1),
    "appeal": Key((str,), "on", "whether the agent may end a blocked stop with `APPEAL: <reason>` (a person decides)", choices=("on", "off")),
    "max_appeals": Key((int,), 2, "accepted appeals per session; one more is refused and the stop judged as usual", minimum=1),
    "prompts": Key((str,), None, "a folder of your own writer/ and reviewer/ prompts and schemas; each file there replaces the kit's "
                   "(relative: beside donegate.yaml)", nullable=True),
    "cache": Key((bool,), True, "reuse the last stop's test results when nothing the hidden run reads has changed"),
    "mode": Key((str,), "gate", "gate: the stop runs the sealed tests (and reviewers); retry: an experiment's blind control, the "
                "first max_blocks stops get a fixed `keep working, verify your work` and no test runs", choices=("gate", "retry")),
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
        name: defaults(key) if isinstance(key, dict) else _fresh(key.default)
        for name, key in schema.items()
    }


def _fresh(value: Any) -> Any:
    """A default's own copy (as `copy.deepcopy` gives it for the schema's values: lists, dicts, scalars), without
    the `copy` module's import at every stop."""
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def iter_keys(schema: dict[str, Any] = SCHEMA, prefix: str = ""):
    """(dotted path, Key) for every leaf, in schema order: docs/configuration.md's table is checked against this."""
    for name, key in schema.items():
        if isinstance(key, dict):
            yield from iter_keys(key, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", key


def show(value: Any) -> str:
    """A short, bounded rendering of a value for an error message."""
    if isinstance(value, (list, dict)):
        kind = "list" if isinstance(value, list) else "mapping"
        return f"a {kind} of {len(value)} item(s)"
    if isinstance(value, str):
        text = repr(value[:SHOW_CHARS])
        return text + f"... ({len(value)} characters)" if len(value) > SHOW_CHARS else text
    text = repr(value)
    return text[:SHOW_CHARS] + "..." if len(text) > SHOW_CHARS else text


def hook_timeout(cfg: dict[str, Any]) -> int:
    """Whole seconds strictly above the kit's worst case: tests, reviewers when on, and the margin."""
    worst = cfg["timeout"] + (cfg["review_timeout"] if cfg["review"] != "off" else 0) + cfg["hook_margin"]
    return int(worst) + 1


def minimal() -> dict[str, Any]:
    """The defaults with the shortest hook timeout a valid donegate.yaml can give (before one is read)."""
    return {**defaults(), "timeout": SCHEMA["timeout"].minimum, "hook_margin": SCHEMA["hook_margin"].minimum, "review": "off"}


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
            f"config key {path}: expected {key.type_name()}, got {type(value).__name__} {show(value)}",
            f"set {path} to a {key.type_name()} in donegate.yaml",
        )
    if key.choices and value not in key.choices:
        raise ConfigError(
            f"config key {path}: {show(value)} is not one of {', '.join(key.choices)}",
            f"set {path} to one of {', '.join(key.choices)}",
        )
    if key.minimum is not None and value < key.minimum:
        raise ConfigError(f"config key {path}: {show(value)} is below the minimum {key.minimum:g}")
    if key.items is not None:
        if len(value) > MAX_GLOBS:
            raise ConfigError(f"config key {path}: {len(value)} entries, more than the {MAX_GLOBS} the gate matches",
                              f"use fewer, broader globs in {path}")
        for i, item in enumerate(value):
            if not isinstance(item, key.items):
                raise ConfigError(
                    f"config key {path}[{i}]: expected string, got {type(item).__name__} {show(item)}",
                    f"quote the entry in {path}",
                )
            if len(item) > MAX_GLOB_CHARS:
                raise ConfigError(f"config key {path}[{i}]: {show(item)} is longer than {MAX_GLOB_CHARS} characters",
                                  f"shorten the entry in {path}")
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
        if not isinstance(name, str) or name not in schema:
            known = ", ".join(schema)
            shown = path if len(path) <= SHOW_CHARS else path[:SHOW_CHARS] + "..."
            raise ConfigError(f"config key {shown}: unknown key", f"use one of: {known}")
        key = schema[name]
        out[name] = validate(value, key, f"{path}.") if isinstance(key, dict) else _check(path, key, value)
    return out


def _read(path: Path) -> str | None:
    """The config's text, or None when there is none; ConfigError for anything but a small UTF-8 file."""
    import errno
    import os

    from donegate.core import fsafe

    try:
        raw = fsafe.read_bytes(os.path.realpath(path), limit=MAX_BYTES)  # a symlinked config is fine, a FIFO is not
    except FileNotFoundError:
        return None
    except fsafe.NotRegular as exc:
        raise ConfigError(f"{path} is a {exc.kind}, not a regular file", "make donegate.yaml a plain text file") from None
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ConfigError(f"{path} is larger than {MAX_BYTES // 1024} KiB", "a donegate.yaml is a few lines: shorten it") from None
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    if b"\0" in raw:
        raise ConfigError(f"{path} is a binary file, not YAML text", "write donegate.yaml as YAML text (or remove it)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (a bad byte at position {exc.start})",
                          "write donegate.yaml as UTF-8 YAML text") from None


def _loader():
    import yaml

    class Loader(yaml.SafeLoader):
        """The safe loader, refusing aliases: `*name` can expand a few lines into gigabytes."""

        def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise ConfigError(f"line {mark.line + 1}, column {mark.column + 1}: YAML aliases (*name) are not allowed",
                                  "write the value out in full")
            return super().compose_node(parent, index)

    return Loader


MAX_DEPTH = 100  # of [ and { (flow style); the schema's deepest value is a list in a mapping


def _depth(text: str) -> int:
    """The deepest nesting of flow brackets, counted without parsing (a bracket in a quoted glob counts
    too: a hundred of them unclosed is not a config)."""
    depth = top = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            top = max(top, depth)
        elif ch in "]}" and depth:
            depth -= 1
    return top


def load(path: Path | None = None) -> dict[str, Any]:
    path = path or paths.config_path()
    text = _read(path)
    if text is None:
        return defaults()
    # PyYAML costs every stop ~11 ms to import: the parse is kept in the state folder under the text's
    # sha256 (only a parse JSON holds exactly); validation runs at every load.
    from donegate.core.fsafe import sha256 as _sha256

    from donegate.core.util import remembered

    state = path.parent / "state"
    flat = _flat(text)
    if flat is not None:
        data = flat
    elif state.is_dir():
        data = remembered(state / "config-parsed.json", _sha256(text.encode("utf-8")).hexdigest(),
                          lambda: _parse(path, text), exact=True, limit=4 * MAX_BYTES)
    else:
        data = _parse(path, text)
    try:
        return validate(data)
    except ConfigError as exc:
        exc.message = f"{path}: {exc.message}"
        raise


# What `_flat` reads without PyYAML: a flat mapping, one `key: value` a line (blank and comment lines between), each value
# a plain word, a decimal number, a single-quoted string without a quote inside, or a flow list of those (the configs a
# person or a test writes: `confine: on`, `timeout: 30`, `allowed: ['shop/pricing.py']`). Read as PyYAML 1.1 resolves a
# plain scalar (its implicit resolvers: bool, null, int, float; a word starting with a letter is a string unless it is
# one of the bool or null words). Anything else (nesting, quotes with escapes, `#` after a value, anchors, tags,
# documents, non-ASCII, a key twice) is PyYAML's. A test holds `_flat` to PyYAML's reading (tests/test_units.py).
_BOOLS = {w: v for v, words in ((True, "yes Yes YES true True TRUE on On ON"), (False, "no No NO false False FALSE off Off OFF"))
          for w in words.split()}
_NULLS = ("", "~", "null", "Null", "NULL")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")
_KEY = frozenset("abcdefghijklmnopqrstuvwxyz_")
_NONE = object()


def _flat(text: str) -> "dict[str, Any] | None":
    """`text` read as PyYAML reads it when it is a flat mapping of simple values (above); None: PyYAML's to read. A text of
    blank and comment lines only is None for both (an empty document)."""
    if not all(c == "\n" or " " <= c <= "~" for c in text) or "\\" in text or "#" in ("\n" + text).replace("\n#", "\n"):
        return None  # PyYAML's printable ASCII only (no tab, CR or control character, in a comment or a blank line either)
    out: dict[str, Any] = {}
    for line in text.split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        key, colon, rest = line.partition(":")
        if (not colon or not key or not set(key) <= _KEY or key in out or key in _BOOLS or key in _NULLS
                or (rest and rest[0] != " ")):
            return None
        value = rest.strip(" ")
        if value.startswith("[") and value.endswith("]"):
            inner = value[1:-1].strip(" ")
            items = [_scalar(item.strip(" "), True) for item in inner.split(",")] if inner else []
            if any(item is _NONE for item in items):
                return None
            out[key] = items
            continue
        got = _scalar(value, False)
        if got is _NONE:
            return None
        out[key] = got
    return out or None


def _scalar(word: str, in_list: bool) -> Any:
    """One value as PyYAML resolves it, or `_NONE` for a value `_flat` leaves to PyYAML."""
    if len(word) > 1 and word[0] == word[-1] == "'":  # single-quoted, no quote inside: the text as it is
        inner = word[1:-1]
        return inner if "'" not in inner and inner.isprintable() else _NONE
    if not set(word) <= _WORD or (in_list and not word):
        return _NONE
    if word in _BOOLS:
        return _BOOLS[word]
    if word in _NULLS:
        return None
    if word[0].isalpha():
        return word
    digits = word[1:] if word[0] == "-" else word
    whole, dot, part = digits.partition(".")
    if whole.isdigit() and (whole == "0" or whole[0] != "0") and len(digits) <= 30:  # a longer number: PyYAML's
        if not dot:
            return int(word)
        if part.isdigit():
            return float(word)
    return _NONE


def _parse(path: Path, text: str) -> Any:
    if _depth(text) > MAX_DEPTH:  # PyYAML spends most of a second on it before its recursion limit
        raise ConfigError(f"{path}: nested too deeply", "a donegate.yaml is a flat mapping of keys")
    import yaml  # only when there is a file to read

    try:
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except ConfigError as exc:
        exc.message = f"{path}: {exc.message}"
        raise
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply", "a donegate.yaml is a flat mapping of keys") from None
    except ValueError as exc:  # an int past Python's 4300-digit conversion limit: PyYAML's int() refuses it
        if "digits" not in str(exc):
            raise
        raise ConfigError(f"{path}: a number of more than 4300 digits", "write a number the key can take") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"{path}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})",
            "fix the YAML syntax",
        ) from exc
