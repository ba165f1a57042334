"""The model boundary: the one place the kit runs `claude -p`.

A run is headless and isolated: read-only tools named by the caller, a turn bound, no settings files
of any repository (`--setting-sources ""`, so no project hooks fire), no saved session, and a session
id the kit picks and records under the state root before the run (`kitruns`), so that a donegate gate
that still fires (a managed hook fires in every session) recognises its own run and stands aside.
No environment variable does that: the agent can set any of them through settings `env`. The answer
comes back through `--json-schema` as `structured_output`.

What Claude Code 2.1.197 does (measured against the scripted server in tests/support/fakeapi.py):
- the answer is required: a model that answers in text twice ends with `subtype:"success"` and
  no `structured_output` key;
- an API error or a missing login ends the run with `is_error: true` but `subtype:"success"`,
  the reason in `result` ("Not logged in · Please run /login", "API Error: 400 ...");
- `--max-turns` exceeded: `subtype:"error_max_turns"`; five answers that do not match the schema:
  `subtype:"error_max_structured_output_retries"`, each rejection a tool result
  "Output does not match required schema: ...";
- `num_turns` is not the number of model answers (it counts the structured-output call as one
  more); progress counts the `assistant` messages of the stream instead;
- the model's name is in the `system/init` message and the `modelUsage` keys, not in the result.

The prompt goes on stdin, not the command line: a reviewer's prompt holds a whole diff, and one
argument may not exceed 128 KiB on Linux; nor can a prompt starting with `-` pass for an option.

`run` never raises for what the model or the API did: it returns `ok=False` with one line in
`error` saying what happened and what to do. Only a missing binary (or a missing `cwd`) raises
`DonegateError`.
Every call appends one line to `$DONEGATE_HOME/logs/model.jsonl` with its cost.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from donegate import paths
from donegate.core import proc
from donegate.claude.binary import CLAUDE_ENV, find_claude
from donegate.claude.settings import guard_settings
from donegate.errors import DonegateError
from donegate.core.util import json_object, utc_now

# Seconds between progress calls while the model is quiet (a turn can take a minute).
TICK = 1.0
SCHEMA_REJECTED = "Output does not match required schema"


@dataclass
class ModelRun:
    ok: bool  # structured_output present and the run did not error
    subtype: str  # Claude Code's subtype, or "timeout" / "missing" (no result) / "bad_output" (no structured_output)
    structured: dict | None  # structured_output
    text: str  # result text, if any
    turns: int  # model answers (assistant messages; Claude Code's num_turns counts one more)
    cost_usd: float
    duration: float
    error: str  # one clear line (what happened + what to do) when not ok
    model: str | None
    raw: dict | None  # the final `type:"result"` object


def command(claude: str, *, schema: dict, tools: list[str], max_turns: int, model: str | None,
            session_id: str | None = None) -> list[str]:
    """The `claude -p` argument list (the prompt itself goes on stdin)."""
    names = ",".join(tools)
    argv = [
        claude, "-p",
        "--output-format", "stream-json", "--verbose",
        "--json-schema", json.dumps(schema, separators=(",", ":")),
        "--tools", names,
        "--max-turns", str(max_turns),
        "--setting-sources", "",
        "--settings", json.dumps(guard_settings(), separators=(",", ":")),
        "--no-session-persistence",
    ]
    if session_id:
        argv += ["--session-id", session_id]
    if model:
        argv += ["--model", model]
    # Last: --allowedTools takes a variable number of values.
    return argv + ["--allowedTools", names]


def environment() -> dict[str, str]:
    """The caller's environment, without the git variables the model's tools would inherit."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_CONFIG")}


class _Stream:
    """Reads the stream-json lines as they come: turns, model, schema rejections, the result."""

    def __init__(self, on_progress: Callable[[float, int], None] | None, start: float) -> None:
        self.on_progress = on_progress
        self.start = start
        self.turns = 0
        self.model: str | None = None
        self.result: dict | None = None
        self.rejections: list[str] = []
        self.retries: list[str] = []
        self.lock = threading.Lock()

    def progress(self) -> None:
        if self.on_progress is not None:
            with self.lock:
                self.on_progress(time.monotonic() - self.start, self.turns)

    def line(self, text: str) -> None:
        obj = json_object(text)
        if obj is None:
            return
        kind = obj.get("type")
        if kind == "assistant":
            self.turns += 1
            self.progress()
        elif kind == "user":
            for block in (obj.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error"):
                    content = block.get("content")
                    if isinstance(content, str) and content.startswith(SCHEMA_REJECTED):
                        self.rejections.append(content)
        elif kind == "system" and obj.get("subtype") == "init":
            self.model = obj.get("model") or self.model
        elif kind == "system" and obj.get("subtype") == "api_retry":
            self.retries.append(f"{obj.get('error_status')} {obj.get('error')}")
        elif kind == "result":
            self.result = obj


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _model_of(result: dict, stream: _Stream) -> str | None:
    usage = result.get("modelUsage")
    if isinstance(usage, dict) and usage:
        return next(iter(usage))
    return stream.model


def _failure(result: dict, stream: _Stream, max_turns: int) -> tuple[str, str] | None:
    """(subtype, error line) when the result is not a usable answer; None when it is."""
    subtype = str(result.get("subtype") or "missing")
    text = str(result.get("result") or "")
    errors = "; ".join(str(e) for e in result.get("errors") or [])
    if subtype == "error_max_turns":
        return subtype, (
            f"the model used all {max_turns} turns without giving its answer; "
            "raise max_turns for this run in donegate.yaml or narrow the request"
        )
    if subtype == "error_max_structured_output_retries":
        last = stream.rejections[-1] if stream.rejections else "no detail"
        return subtype, f"the model's answer did not match the output schema, repeatedly ({_one_line(last)}); check the schema file or run again"
    if result.get("is_error") or subtype != "success":
        if "not logged in" in text.lower() or "/login" in text:
            return subtype, "Claude Code is not logged in; run `claude` once and log in, or set ANTHROPIC_API_KEY"
        if result.get("api_error_status") or text.startswith("API Error"):
            return subtype, f"the model API refused the request ({_one_line(text)}); check the API key, model name and network, then run again"
        detail = _one_line(text or errors or "no detail")
        return subtype, f"Claude Code ended with an error ({subtype}: {detail}); run again, or see logs/model.jsonl"
    if not isinstance(result.get("structured_output"), dict):
        said = f": {_one_line(text, 160)!r}" if text else ""
        return "bad_output", f"the model answered in text instead of the required structured output{said}"
    return None


def _log(entry: dict[str, Any]) -> None:
    path = paths.home() / "logs" / "model.jsonl"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(entry, default=str) + "\n").encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)  # one write on O_APPEND: concurrent runs never interleave a line
        finally:
            os.close(fd)
    except OSError:
        pass  # the log is a convenience; a run is never lost for it


def run(
    prompt: str,
    *,
    cwd: Path,
    schema: dict,
    tools: list[str],
    max_turns: int,
    timeout: float,
    model: str | None = None,
    on_progress: Callable[[float, int], None] | None = None,
    purpose: str = "",
) -> ModelRun:
    """One headless `claude -p` run in `cwd`, answering with an object that matches `schema`.

    `on_progress(elapsed_seconds, turns)` is called at each model turn and about once a second
    in between (from helper threads, never two at once). `purpose` labels the log line.
    """
    if not Path(cwd).is_dir():
        raise DonegateError(f"cannot run the model in {cwd}: no such folder")
    from donegate.sessions import kitruns

    root = paths.home()
    session_id = kitruns.register(root, timeout)  # before the run starts: its first stop may come at once
    argv = command(find_claude(), schema=schema, tools=tools, max_turns=max_turns, model=model, session_id=session_id)
    start = time.monotonic()
    stream = _Stream(on_progress, start)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(TICK):
            stream.progress()

    ticker = threading.Thread(target=tick, name="model-progress", daemon=True)
    if on_progress is not None:
        ticker.start()
    try:
        res = proc.run(argv, timeout=timeout, cwd=cwd, env=environment(), input=prompt, on_line=stream.line)
    except (FileNotFoundError, PermissionError) as exc:
        from donegate.core import kit as installation

        raise DonegateError(
            f"cannot run Claude Code at {argv[0]}: {exc.strerror}",
            f"{installation.claude_install()}, or set {CLAUDE_ENV} to a working `claude`",
        ) from None
    finally:
        kitruns.unregister(root, session_id)
        stop.set()
        if ticker.is_alive():
            ticker.join()
    result = stream.result
    if res.timed_out:
        subtype, error = "timeout", (
            f"the model run did not finish within {timeout:g} s and was killed after {stream.turns} turns; "
            "raise the timeout for this run in donegate.yaml or narrow the request"
        )
    elif result is None:
        last = _one_line((res.stderr.strip().splitlines() or res.stdout.strip().splitlines() or ["no output"])[-1])
        subtype, error = "missing", (
            f"Claude Code exited (code {res.returncode}) without a result: {last}; "
            f"check that `{argv[0]} --version` works, then run again"
        )
    else:
        subtype, error = _failure(result, stream, max_turns) or (str(result.get("subtype")), "")
    result = result or {}
    out = ModelRun(
        ok=not error,
        subtype=subtype,
        structured=result.get("structured_output") if not error else None,
        text=str(result.get("result") or ""),
        turns=stream.turns or int(result.get("num_turns") or 0),
        cost_usd=float(result.get("total_cost_usd") or 0.0),
        duration=res.duration,
        error=error,
        model=_model_of(result, stream),
        raw=result or None,
    )
    _log({
        "time": utc_now(),
        "purpose": purpose,
        "cwd": str(cwd),
        "model": out.model,
        "ok": out.ok,
        "subtype": out.subtype,
        "turns": out.turns,
        "cost_usd": out.cost_usd,
        "duration": round(out.duration, 3),
        "error": out.error,
        "schema_rejections": len(stream.rejections),
        "api_retries": stream.retries,
    })
    return out
