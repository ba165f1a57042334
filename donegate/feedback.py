"""What the agent is told: the failing assertions, never the tests.

Every line shown passes through `Scrubber`: paths of the store and the kit become `<hidden>`, and a
line that appears in a hidden test's source is dropped. All failures of one stop go back together,
capped in length, so one attempt can fix everything.
"""

from __future__ import annotations

import re
from pathlib import Path

CLAIM = re.compile(
    r"\b(done|fixed|complete[ds]?|finished|implemented|resolved|ready|works( now)?|all (the )?tests pass(ing)?|passes)\b",
    re.IGNORECASE,
)
MAX_LINES_PER_FAILURE = 8
MAX_CHARS_PER_FAILURE = 600


class Scrubber:
    def __init__(self, secret_paths: list[Path], sources: list[str]) -> None:
        names = set()
        for p in secret_paths:
            names.add(str(p))
            try:
                names.add(str(p.resolve()))
            except OSError:
                pass
        # Longest first, so a store path is replaced before the kit root that contains it.
        self.paths = sorted((n for n in names if n and n != "/"), key=len, reverse=True)
        self.source_lines = {line.strip() for text in sources for line in text.splitlines() if len(line.strip()) >= 8}

    def __call__(self, text: str) -> str:
        for p in self.paths:
            text = text.replace(p, "<hidden>")
        kept = [line for line in text.splitlines() if line.strip() not in self.source_lines]
        return "\n".join(kept)


def claims_done(message: object) -> bool:
    return isinstance(message, str) and bool(CLAIM.search(message))


def _cap(text: str, lines: int, chars: int) -> str:
    parts = text.splitlines()
    out = "\n".join(parts[:lines])
    if len(parts) > lines:
        out += "\n..."
    if len(out) > chars:
        out = out[: chars - 3] + "..."
    return out


def indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def block_text(problems: list[str], failures: dict[str, str], *, claimed: bool, total: int, scrub: Scrubber, cap: int, note: str = "") -> str:
    """The one message a block sends back: problems of the kit's gates, then each failing test."""
    lines = []
    if claimed:
        lines.append("You reported the work as complete, but verification disagrees:")
    else:
        lines.append("donegate: the work is not done yet; verification disagrees:")
    for problem in problems:
        lines.append(f"- {scrub(problem)}")
    if failures:
        lines.append(f"{len(failures)} of {total} acceptance tests fail:")
        for nodeid, message in failures.items():
            msg = _cap(scrub(message or "(no message)"), MAX_LINES_PER_FAILURE, MAX_CHARS_PER_FAILURE)
            lines.append(f"- {scrub(nodeid)}")
            lines.append(indent(msg))
    lines.append("The acceptance tests are hidden on purpose: fix the code, not the tests, then stop again.")
    if note:
        lines.append(note)
    return capped("\n".join(lines), cap, "failures")


def capped(text: str, cap: int, what: str) -> str:
    """`text` cut to at most `cap` characters, saying that more `what` were left out."""
    return text if len(text) <= cap else text[: cap - 40].rstrip() + f"\n... (more {what} not shown)"
