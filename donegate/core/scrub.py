"""What the agent is told: the failing assertions, never the tests.

Every line shown passes through `Scrubber`: paths of the store and the kit become `<hidden>`, and a
line that appears in a hidden test's source is dropped. All failures of one stop go back together,
capped in length, so one attempt can fix everything.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import json
import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

# The patterns are compiled where first used (`re`'s own cache keeps them): compiled at this module's import, which every
# stop makes, they were ~1 ms of a stop's CPU that a passing stop mostly did not use (issue 48 item 2).
CLAIM = r"\b(done|fixed|complete[ds]?|finished|implemented|resolved|ready|works( now)?|all (the )?tests pass(ing)?|passes)\b"
MAX_LINES_PER_FAILURE = 8
MAX_CHARS_PER_FAILURE = 600


_HEX = r"[0-9a-fA-F]+"
MIN_LINE = 8  # hidden-test lines shorter than this are too common to redact ("pass", "return x")
MIN_INSIDE = 24  # ... and lines at least this long are redacted where they appear inside a line too
MIN_ENCODED = 16  # a shorter token is checked against the hidden tests' own base64 and hex


# A terminal's control sequences (colour, cursor, title) and every other control character but tab and newline.
# pytest writes colour codes into an assertion's diff when the project's configuration says `--color=yes`: noise to
# the agent, and escape sequences on a person's terminal when the report prints the ledger's messages.
_CONTROL = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]"


def plain(text: str) -> str:
    """`text` without terminal control sequences or control characters (tab and newline kept)."""
    return text if text.isprintable() else re.sub(_CONTROL, "", text)


def normal(line: str) -> str:
    """A line with whitespace collapsed and quotes made alike: how a test line is recognised."""
    return " ".join(line.replace("'", '"').replace("`", '"').split())


def _encoded(token: str) -> bool:
    """An encoded run, not a name: it has base64 punctuation, or digits among its letters, or is hex.
    (A long snake_case test name is letters and underscores only: it stays.)"""
    if any(c in token for c in "+/="):
        return True
    return bool(re.fullmatch(_HEX, token)) or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))


class Scrubber:
    """Everything the agent reads passes through here:

    - paths of the store and the kit become `<hidden>`;
    - a line equal to a hidden-test line (whitespace and quotes normalised) is dropped, and a longer
      hidden-test line inside a line is cut out;
    - encoded runs (base64, base32, hex; more than 40 characters) are cut out, and shorter tokens
      that are part of a hidden test file's own base64 or hex are too: the code under test could
      otherwise carry the tests out in an exception message or a returned value.
    """

    def __init__(self, secret_paths: "list[Path] | Callable[[], list[Path]]", sources: list[str]) -> None:
        # Built when first used (`_build`): most stops pass and show the agent nothing to scrub, and building it
        # (the paths resolved, the sources' lines and encodings) cost every stop 2-4 ms. `secret_paths` may be a
        # function giving them, called then.
        self._secret_paths, self._sources = secret_paths, sources
        self._built = False

    def _build(self) -> None:
        if self._built:
            return
        secret_paths, sources = self._secret_paths, self._sources
        if callable(secret_paths):
            secret_paths = secret_paths()
        names = set()
        for p in secret_paths:
            names.add(str(p))
            try:
                names.add(str(p.resolve()))
            except OSError:
                pass
        # Longest first, so a store path is replaced before the kit root that contains it.
        self._paths = sorted((n for n in names if n and n != "/"), key=len, reverse=True)
        # What this scrubber hides, as one digest: a page kept with another scrubber is not shown again (`report.html`).
        self._key = _sha256(json.dumps([self._paths, sorted(sources)]).encode()).hexdigest()
        lines = {normal(line) for text in sources for line in text.splitlines()}
        self.source_lines = {n for n in lines if len(n) >= MIN_LINE}
        self.inside = sorted((n for n in lines if len(n) >= MIN_INSIDE), key=len, reverse=True)
        import binascii  # base64.b64encode's own encoder, without `base64`'s import (struct, re's patterns)

        self.encodings = []
        for text in sources:
            raw = text.encode("utf-8", "replace")
            for shift in range(3):  # base64 of the file at each alignment
                enc = binascii.b2a_base64(raw[shift:], newline=False).decode()
                self.encodings += [enc, enc.replace("+", "-").replace("/", "_")]
            self.encodings += [raw.hex(), raw.hex().upper()]
        self._built = True

    @property
    def paths(self) -> list[str]:
        self._build()
        return self._paths

    @property
    def key(self) -> str:
        self._build()
        return self._key

    def _token(self, match: re.Match) -> str:
        token = match.group(0)
        if len(token) > 40 and _encoded(token):
            return "<redacted>"
        if len(token) >= MIN_ENCODED and any(token.strip("=") in enc for enc in self.encodings):
            return "<redacted>"
        return token

    def line(self, line: str) -> str | None:
        self._build()
        n = normal(line)
        if n in self.source_lines:
            return None
        for src in self.inside:
            if src in n:
                line = "<hidden test line removed>"
                break
        return re.sub(r"[A-Za-z0-9+/=_-]{%d,}" % MIN_ENCODED, self._token, line)

    def __call__(self, text: str) -> str:
        for p in self.paths:
            text = text.replace(p, "<hidden>")
        kept = [out for out in map(self.line, text.splitlines()) if out is not None]
        return "\n".join(kept)


def claims_done(message: object) -> bool:
    return isinstance(message, str) and bool(re.search(CLAIM, message, re.IGNORECASE))


WHERE = r"^\s*((\+\s*)?(where|and)\b|assert\b)"
MAX_LINE_CHARS = 300


def _cap(text: str, lines: int, chars: int) -> str:
    """One test's message: its first line, the `assert ...` line and pytest's `where`/`and` lines,
    each line and the whole capped; everything else (diffs, dumps, long exception text, the lines of
    a custom message after its first) is dropped."""
    parts = text.splitlines()
    keep = parts[:1] + [p for p in parts[1:] if re.match(WHERE, p)]
    keep = [p if len(p) <= MAX_LINE_CHARS else p[: MAX_LINE_CHARS - 3] + "..." for p in keep[:lines]]
    out = "\n".join(keep)
    if len(parts) > len(keep):
        out += f"\n... ({len(parts) - len(keep)} more line(s) not shown)"
    if len(out) > chars:
        out = out[: chars - 3] + "..."
    return out


def indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def block_text(problems: list[str], failures: dict[str, str], *, claimed: bool, total: int, scrub: Scrubber, cap: int, note: str = "",
               held: dict[str, int] | None = None) -> str:
    """The one message a block sends back: problems of the kit's gates, then each failing test; `held`: the
    held-back requirements failing, {name: tests failing}, told by name and count only (`donegate.seal.held`)."""
    lines = []
    if claimed:
        lines.append("You reported the work as complete, but verification disagrees:")
    else:
        lines.append("donegate: the work is not done yet; verification disagrees:")
    for problem in problems:
        lines.append(f"- {scrub(problem)}")
    held = held or {}
    hidden = sum(held.values())
    if failures or hidden:
        lines.append(f"{len(failures) + hidden} of {total} acceptance tests fail"
                     + (f" ({hidden} of them held back)" if hidden else "") + ":")
        for nodeid, message in failures.items():
            msg = _cap(scrub(message or "(no message)"), MAX_LINES_PER_FAILURE, MAX_CHARS_PER_FAILURE)
            lines.append(f"- {scrub(nodeid)}")
            lines.append(indent(msg))
        for name, n in held.items():
            for p in scrub.paths:  # the name only: a line of the test's source, so not through the line filter
                name = name.replace(p, "<hidden>")
            lines.append(f"- held-back requirement: {name} ({n} test{'s' if n != 1 else ''} fail{'' if n != 1 else 's'}; "
                         f"{'their' if n != 1 else 'its'} inputs, expected values and assertion are not shown)")
        if hidden:
            lines.append("Held-back tests check the request on inputs you are not shown: "
                         "implement the behaviour the request asks for, not the values shown above.")
    lines.append("The acceptance tests are hidden on purpose: fix the code, not the tests, then stop again.")
    if note:
        lines.append(note)
    return capped("\n".join(lines), cap, "failures")


def capped(text: str, cap: int, what: str) -> str:
    """`text` cut to at most `cap` characters, saying that more `what` were left out."""
    return text if len(text) <= cap else text[: cap - 40].rstrip() + f"\n... (more {what} not shown)"
