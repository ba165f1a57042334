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
import os
from pathlib import Path

from donegate.core.util import atomic_write, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Iterator, Sequence

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


def distinctive(sources: Sequence[str]) -> set[str]:
    out = set()
    for text in sources:
        for line in text.splitlines():
            line = line.strip()
            if len(line) >= MIN_LINE and not line.startswith(COMMON):
                out.add(line)
    return out


def shown_since(transcript: str | None, start: int = 0, why: list[str] | None = None) -> tuple[str, int]:
    """(everything the model was shown from byte `start` on (user-side entries), joined; the offset
    after the last complete line read). ('', start) if unreadable, and `why` gets the reason. Only a
    regular file is read: a FIFO, a device (`/dev/kmsg`) or a link to one is refused at once, never waited on."""
    if not transcript:
        return "", start
    from donegate.core import fsafe

    try:
        raw = fsafe.read_bytes(transcript, limit=MAX_BYTES)
    except OSError as exc:
        if why is not None:
            why.append(f"the transcript was not read: {exc.strerror or exc}" if not isinstance(exc, fsafe.NotRegular)
                       else f"the transcript was not read: a {exc.kind}, not a regular file")
        return "", start
    end = raw.rfind(b"\n") + 1
    if end <= start:
        return "", start
    parts: list[str] = []
    for row in raw[start:end].decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(row)
        except ValueError:
            continue
        # Only what the model was shown; its own tool calls are attempts, not leaks. Claude Code's and Qwen
        # Code's `user` entries hold it in `message`, Gemini CLI's in `content`; Copilot CLI's events.jsonl in the
        # `data` of `user.message` and `tool.execution_complete` events (verified on 0.15.10, 0.61.0, 1.0.102).
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "user":
            parts.extend(_strings(entry.get("message") or entry.get("content")))
        elif kind in ("user.message", "tool.execution_complete"):
            parts.extend(_strings(entry.get("data")))
    return "\n".join(parts), end


def shown_text(transcript: str | None) -> str:
    """Everything the model was shown in the session (user-side entries), joined; '' if unreadable."""
    return shown_since(transcript)[0]


def find(text: str, markers: list[str], sources: list[str], kit_sources: Sequence[str] = ()) -> dict[str, Any] | None:
    if not text:
        return None
    paths = [m for m in markers if m and m in text]
    lines = [line for line in distinctive(sources) if line in text]
    kit = [line for line in distinctive(kit_sources) if line in text]
    if not (paths or lines or kit):
        return None
    return {"paths": len(paths), "source_lines": len(lines), "kit_lines": len(kit)}


def scan(transcript: str | None, markers: list[str], sources: list[str], kit_sources: Sequence[str] = ()) -> dict[str, Any] | None:
    """{'paths': n, 'source_lines': n, 'kit_lines': n} when the model was shown a secret, else None.

    `markers`: strings that only a store path contains (absolute paths, `acceptance/<repo-key>`);
    `sources`: the hidden tests; `kit_sources`: the kit's hook code.
    """
    return find(shown_text(transcript), markers, sources, kit_sources)


# -- the second look ------------------------------------------------------------------------------
#
# Claude Code may write a tool result to the transcript after the Stop hook read it: a leak right
# before a stop that passes would never be seen. So a passing stop leaves a note (the transcript and
# how far it was read) in `state/rescan/`; the next stop of the session reads everything again, and
# `donegate report` reads each noted transcript from where the stop left off, records a leak found
# there as a `leak` line in the ledger, and moves the note on.

def _note_path(root: Path, session: str) -> Path:
    from donegate.core.fsafe import sha256 as _sha256

    from donegate import paths

    return paths.state_dir(root) / "rescan" / (_sha256(session.encode("utf-8", "replace")).hexdigest()[:24] + ".json")


def note_pass(root: Path, session: str, repo: str, transcript: str | None, offset: int) -> None:
    """After a stop that let the session end: remember where its transcript scan stopped."""
    if not transcript:
        return
    path = _note_path(root, session)
    # a note lost in a crash only means the next scan starts again at the transcript's beginning
    atomic_write(path, json.dumps({"session": session, "repo": repo, "transcript": transcript, "offset": offset}),
                 durable=False)


def secrets(st: Any) -> tuple[list[str], list[str], list[str]]:
    """(markers, sources, kit sources) of a loaded store: what the scan looks for."""
    from donegate import paths
    from donegate.seal.store import test_files

    markers = [str(st.path), str(st.path.resolve()), f"{st.path.parent.name}/{st.path.name}"]
    sources = [p.read_text(encoding="utf-8", errors="replace") for p in test_files(st.path)]
    kit = []  # the hook launchers: an agent shown these has read what the deny rules protect
    for p in (paths.hooks_dir() / name for name in ("stop_gate.py", "guard.py")):
        try:
            kit.append(p.read_text(encoding="utf-8"))
        except OSError:
            pass
    return markers, sources, kit


def _secrets_of(repo: Path, root: Path) -> tuple[list[str], list[str], list[str]] | None:
    from donegate.seal import store

    try:
        st = store.load(repo, root)
    except Exception:
        return None
    return secrets(st) if st is not None else None


def rescan(root: Path) -> list[dict[str, Any]]:
    """Read each noted transcript past where its last stop read it; append a `leak` line to the
    ledger for each leak found late. Returns those lines. Notes whose transcript is gone are dropped."""
    from donegate.ledger import chain as ledger
    from donegate import paths

    found = []
    for note_file, note in ledger.json_files(paths.state_dir(root) / "rescan"):
        try:
            transcript, offset = note["transcript"], int(note["offset"])
        except (KeyError, TypeError, ValueError):
            note_file.unlink(missing_ok=True)
            continue
        if not os.path.exists(transcript):
            note_file.unlink(missing_ok=True)
            continue
        text, end = shown_since(transcript, offset)
        if end == offset:
            continue
        found_in = _secrets_of(Path(note["repo"]), root)
        leak = find(text, *found_in) if found_in else None
        if leak:
            record = {"event": "leak", "time": utc_now(ms=False),
                      "session": note["session"], "repo": note["repo"], "transcript": transcript,
                      "found": "late", "leak": leak}
            found.append(ledger.append(record, paths.ledger_path(root)))
        note_file.write_text(json.dumps({**note, "offset": end}), encoding="utf-8")
    return found
