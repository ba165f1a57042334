"""What the agent's session itself cost and how long it took, from Claude Code's transcript.

The transcript is JSONL; each assistant entry carries `message.model`, `message.id` and `message.usage`
(input, output, cache write and cache read tokens), and Claude Code writes one entry per content block of
a reply, repeating the reply's id and usage: a reply is counted once, by id, with the latest usage seen
for it. Tokens are priced with the dated table `prices.json` beside this module; a model it does not
know makes the session's cost unknown (None), never $0. The session's time is its first to its last
timestamp.

Read safely and cheaply: the transcript is opened only as a regular file (`core.fsafe`), at most
MAX_READ bytes a stop, from where the session's last stop left off (kept under the state root, with
the totals so far), so a stop reads only what is new; a transcript that shrank or moved is read again
from its start.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import json
import os
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import paths
from donegate.core import fsafe
from donegate.core.util import atomic_write, json_object

MAX_READ = 16 << 20  # bytes of transcript one stop reads at most (the rest at the next stop)
RECENT = 500  # replies remembered by id, for their repeated entries
KINDS = ("input", "output", "cache_write", "cache_read")
_USAGE = {"input": "input_tokens", "output": "output_tokens", "cache_write": "cache_creation_input_tokens",
          "cache_read": "cache_read_input_tokens"}


@lru_cache(maxsize=1)
def prices() -> dict[str, Any]:
    """The dated price table (USD per million tokens, by model id prefix)."""
    return json.loads((Path(__file__).with_name("prices.json")).read_text(encoding="utf-8"))


def price_of(model: str) -> dict[str, float] | None:
    """The prices of `model`: the table's longest prefix it starts with; None when none matches."""
    table = prices()["models"]
    best = max((p for p in table if model.startswith(p)), key=len, default=None)
    return table[best] if best else None


def cost(tokens: dict[str, int], model: str) -> float | None:
    price = price_of(model)
    if price is None:
        return None
    return sum(tokens.get(k, 0) * price[k] for k in KINDS) / 1e6


def _state_path(root: Path, session: str) -> Path:
    return paths.state_dir(root) / "usage" / (_sha256(session.encode()).hexdigest()[:32] + ".json")


def _fresh(transcript: str) -> dict[str, Any]:
    return {"transcript": transcript, "offset": 0, "first": None, "last": None, "models": {}, "recent": {}}


def _load(path: Path, transcript: str) -> dict[str, Any]:
    try:
        state = json.loads(fsafe.read_text(path, limit=1 << 20))
    except (OSError, ValueError):
        return _fresh(transcript)
    ok = isinstance(state, dict) and state.get("transcript") == transcript and isinstance(state.get("offset"), int) \
        and isinstance(state.get("models"), dict) and isinstance(state.get("recent"), dict)
    return state if ok else _fresh(transcript)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _add(models: dict[str, dict[str, int]], model: str, tokens: list[int], sign: int) -> None:
    totals = models.setdefault(model, dict.fromkeys(KINDS, 0))
    for k, n in zip(KINDS, tokens, strict=True):
        totals[k] = totals.get(k, 0) + sign * n


def fold(state: dict[str, Any], text: bytes) -> None:
    """Add the complete lines of `text` (read from the transcript at `state['offset']`) to `state`."""
    models, recent = state["models"], state["recent"]
    for raw in text.splitlines():
        entry = json_object(raw)
        if entry is None:
            continue
        when = entry.get("timestamp")
        if isinstance(when, str) and when:
            state["first"] = min(state["first"] or when, when)
            state["last"] = max(state["last"] or when, when)
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
            continue
        model, usage = str(message.get("model") or "unknown"), message["usage"]
        tokens = [_int(usage.get(_USAGE[k])) for k in KINDS]
        if not any(tokens):
            continue  # Claude Code's own synthetic messages (an API error shown as a reply) cost nothing
        mid = message.get("id")
        key = mid if isinstance(mid, str) and mid else None
        if key is not None and key in recent:
            old_model, *old = recent.pop(key)
            _add(models, old_model, old, -1)
        _add(models, model, tokens, 1)
        if key is not None:
            recent[key] = [model, *tokens]
            while len(recent) > RECENT:
                recent.pop(next(iter(recent)))


def summary(state: dict[str, Any], partial: bool = False) -> dict[str, Any]:
    """The ledger's `agent` field: the session's cost (None when a model is not in the price table),
    its time in seconds, and the tokens and cost per model. `usd` and `seconds` come first: the
    report's fast path reads them at the start of the object."""
    per_model, total, unknown = {}, 0.0, []
    for model, tokens in sorted(state["models"].items()):
        usd = cost(tokens, model)
        if usd is None:
            unknown.append(model)
        else:
            total += usd
        per_model[model] = {**{k: tokens.get(k, 0) for k in KINDS}, "usd": None if usd is None else round(usd, 6)}
    seconds = None
    if state["first"] and state["last"]:
        from donegate.core.util import epoch_ms

        a, b = epoch_ms(state["first"]), epoch_ms(state["last"])
        if a is not None and b is not None:
            seconds = round((b - a) / 1000, 3)
    out: dict[str, Any] = {"usd": None if unknown else round(total, 6), "seconds": seconds, "models": per_model,
                           "prices": prices()["date"]}
    if unknown:
        out["unknown"] = unknown
    if partial:
        out["partial"] = True  # the transcript grew by more than MAX_READ since the last stop: the rest next time
    return out


def session_usage(transcript: Any, session: str, root: Path) -> dict[str, Any] | None:
    """The session's `agent` figures so far, reading only what the transcript gained since its last stop;
    None without a readable transcript."""
    if not isinstance(transcript, str) or not transcript or not session:
        return None
    path = _state_path(root, session)
    state = _load(path, transcript)
    try:
        data, size = fsafe.read_from(transcript, state["offset"], MAX_READ)
    except OSError:
        return None
    if size < state["offset"]:  # rewritten shorter: start again
        state = _fresh(transcript)
        data, size = fsafe.read_from(transcript, 0, MAX_READ)
    end = data.rfind(b"\n") + 1  # only whole lines: a line being written is read at the next stop
    fold(state, data[:end])
    state["offset"] += end
    try:
        os.makedirs(path.parent, exist_ok=True)
        # Not synced (the stop's one fsync, 1-20 ms before its answer): a state lost or left empty by a crash is
        # read as none, and the next stop reads the transcript from its start again.
        atomic_write(path, json.dumps(state, separators=(",", ":")), durable=False)
    except OSError:
        pass
    return summary(state, partial=state["offset"] < size and len(data) >= MAX_READ)
