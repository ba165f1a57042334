"""Detect, after the fact, that the agent saw what it must not: hidden-test source or store paths.

Refusal is the job of the deny rules, the guard and the sandbox; where refusal cannot be guaranteed
(no sandbox on this platform) this scan of the session transcript is the fallback: it looks at what
the model was shown (tool results and other user-side content) and reports a leak to the user and the
ledger. The gate's own feedback is scrubbed, so it never counts.
"""

from __future__ import annotations

import json
from pathlib import Path
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


def scan(transcript: str | None, secret_paths: list[str], sources: list[str]) -> dict[str, Any] | None:
    """{'paths': n, 'source_lines': n, 'sample': ...} when the model was shown a secret, else None."""
    if not transcript:
        return None
    path = Path(transcript)
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = {line.strip() for text in sources for line in text.splitlines() if len(line.strip()) >= MIN_LINE}
    seen_paths: set[str] = set()
    seen_lines: set[str] = set()
    for row in raw.splitlines():
        try:
            entry = json.loads(row)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue  # only what the model was shown; its own tool calls are attempts, not leaks
        for text in _strings(entry.get("message")):
            seen_paths.update(p for p in secret_paths if p in text)
            if lines:
                seen_lines.update(line.strip() for line in text.splitlines() if line.strip() in lines)
    if not seen_paths and not seen_lines:
        return None
    sample = sorted(seen_lines)[:1] or ["(a store path)"]
    return {"paths": len(seen_paths), "source_lines": len(seen_lines), "sample": sample[0][:80]}
