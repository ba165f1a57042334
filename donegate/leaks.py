"""Detect, after the fact, that the agent saw what it must not: hidden-test source, store paths, or the
kit's own hook code.

Refusal is the job of the deny rules, the guard and the sandbox; where refusal cannot be guaranteed
(no sandbox on this platform) this scan of the session transcript is the fallback: it looks at what
the model was shown (tool results and other user-side content) and reports a leak to the user and the
ledger. The gate's own feedback is scrubbed, so it never counts.

Matching is by substring, not by whole line: `grep -rn` prints `path:15:    assert ...`, `cat -n`
numbers lines, and a store path may be shown relative (`./acceptance/<repo-key>/...`).
"""

from __future__ import annotations

import json
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator

MIN_LINE = 20  # shorter source lines are too common to call a leak
MAX_BYTES = 64 * 1024 * 1024


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# Lines any Python file may hold (an import the repository's own tests share, a comment): not evidence.
COMMON = ("import ", "from ", "#", "@", "if __name__")


def distinctive(sources: list[str]) -> set[str]:
    out = set()
    for text in sources:
        for line in text.splitlines():
            line = line.strip()
            if len(line) >= MIN_LINE and not line.startswith(COMMON):
                out.add(line)
    return out


def shown_text(transcript: str | None) -> str:
    """Everything the model was shown in the session (user-side entries), joined; '' if unreadable."""
    if not transcript:
        return ""
    path = Path(transcript)
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return ""
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    parts = []
    for row in raw.splitlines():
        try:
            entry = json.loads(row)
        except ValueError:
            continue
        # Only what the model was shown; its own tool calls are attempts, not leaks.
        if isinstance(entry, dict) and entry.get("type") == "user":
            parts.extend(_strings(entry.get("message")))
    return "\n".join(parts)


def scan(transcript: str | None, markers: list[str], sources: list[str], kit_sources: list[str] = ()) -> dict[str, Any] | None:
    """{'paths': n, 'source_lines': n, 'kit_lines': n} when the model was shown a secret, else None.

    `markers`: strings that only a store path contains (absolute paths, `acceptance/<repo-key>`);
    `sources`: the hidden tests; `kit_sources`: the kit's hook code.
    """
    text = shown_text(transcript)
    if not text:
        return None
    paths = [m for m in markers if m and m in text]
    lines = [line for line in distinctive(sources) if line in text]
    kit = [line for line in distinctive(kit_sources) if line in text]
    if not (paths or lines or kit):
        return None
    return {"paths": len(paths), "source_lines": len(lines), "kit_lines": len(kit)}
