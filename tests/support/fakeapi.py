"""A scripted, local stand-in for the Anthropic Messages API.

The end-to-end tests drive the real Claude Code binary; this server plays the
model.  A test writes a *scenario* (a list of model turns), points Claude Code
at ``server.base_url`` and afterwards inspects ``server.requests`` to see what
the model was shown (tool results, Stop-hook feedback, ...).

Stdlib only, so the harness works wherever the kit's tests run.

Example::

    with FakeAPI([turn(tool("Bash", {"command": "ls"})), text("done")]) as api:
        run_session(repo, api, "list files")
        assert api.tool_results(api.main_requests()[-1])

What Claude Code sends (measured on 2.1.197 and 2.1.332, see tests/e2e/test_harness.py):
``POST /v1/messages?beta=true`` with ``"stream": true``; it parses Server-Sent
Events and merges responses that share a message id, so every response here
gets a fresh id.  2.1.332 moved the environment block ("Primary working
directory: ...") out of the system prompt into a ``"role": "system"`` message of
``messages``; `system_text` reads both.

Anything the server cannot answer gets a 400 ``invalid_request_error`` whose
message starts ``fakeapi: cannot answer`` and names the request (method, path,
the tools it offers) and what is missing; it is also kept in ``api.unanswered``.
400 is what Claude Code does not retry for minutes, so a client release that
asks for something new fails its tests at once, with the cause in the result.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Union
from urllib.parse import urlsplit

# --------------------------------------------------------------------------
# Scenario builders
# --------------------------------------------------------------------------

Block = dict[str, Any]


@dataclass
class Turn:
    """One scripted model response: content blocks, answered in one message.

    ``stop_reason`` defaults to ``tool_use`` when the turn calls a tool (that is
    what makes Claude Code run the tools and call back) and ``end_turn``
    otherwise.
    """

    blocks: list[Block]
    stop_reason: str | None = None

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        if any(b.get("type") == "tool_use" for b in self.blocks):
            return "tool_use"
        return "end_turn"


@dataclass
class ApiError:
    """A scripted API error answer (e.g. to test what happens on a 400/529)."""

    status: int = 400
    type: str = "invalid_request_error"
    message: str = "scripted error"


# A scenario step: a Turn, a bare block, a string (short for text), a list of
# blocks, an ApiError, or a callable ``fn(request_body)`` returning one of
# those -- called when its turn comes, so it can react to what the model was
# shown (tool results, Stop-hook feedback).
Step = Union[Turn, Block, str, ApiError, Callable[[dict], Any]]


def text(s: str) -> Block:
    """A text content block."""
    return {"type": "text", "text": s}


def tool(name: str, input: dict | None = None, id: str | None = None) -> Block:
    """A tool_use block.  Leave ``id`` unset: a unique one is minted each time
    the block is served, so a scenario can be reused across runs without two
    tool calls ever sharing an id."""
    block: Block = {"type": "tool_use", "name": name, "input": dict(input or {})}
    if id is not None:
        block["id"] = id
    return block


def turn(*blocks: Block | str, stop_reason: str | None = None) -> Turn:
    """A model turn made of text and/or tool_use blocks (strings become text)."""
    return Turn([text(b) if isinstance(b, str) else b for b in blocks], stop_reason)


def error(status: int = 400, type: str = "invalid_request_error", message: str = "scripted error") -> ApiError:
    """A scripted API error instead of a model turn."""
    return ApiError(status, type, message)


def _to_turn(step: Any) -> Turn | ApiError:
    if isinstance(step, (Turn, ApiError)):
        return step
    if isinstance(step, str):
        return turn(step)
    if isinstance(step, dict):
        return turn(step)
    if isinstance(step, (list, tuple)):
        return turn(*step)
    raise TypeError(f"fakeapi: cannot use {step!r} as a model turn")


# --------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------


def _flatten(content: Any) -> str:
    """Tool-result / message content as plain text (text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, dict):
            if part.get("type") == "text":
                parts.append(part.get("text", ""))
            elif part.get("type") == "tool_result":
                parts.append(_flatten(part.get("content")))
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def _blocks(message: dict) -> list[Block]:
    content = message.get("content")
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)]


def _body(req: "Request | dict") -> dict:
    return req.body if isinstance(req, Request) else req


def tool_results(req: "Request | dict") -> list[dict]:
    """tool_result blocks of the request's last user message, content as text:
    ``[{"tool_use_id", "content", "is_error"}]``."""
    messages = _body(req).get("messages") or []
    for message in reversed(messages):
        if message.get("role") == "user":
            return [
                {
                    "tool_use_id": b.get("tool_use_id"),
                    "content": _flatten(b.get("content")),
                    "is_error": bool(b.get("is_error", False)),
                }
                for b in _blocks(message)
                if b.get("type") == "tool_result"
            ]
    return []


def _last_text(body: dict) -> str:
    messages = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    return _flatten(_blocks(messages[-1])) if messages else ""


def first_user_text(body: dict) -> str:
    """Text of the first user message (where Claude Code puts the prompt)."""
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            return _flatten(_blocks(message))
    return ""


def system_text(body: dict) -> str:
    """The system prompt and every ``"role": "system"`` message (2.1.332 sends the environment block,
    working directory included, as such a message)."""
    system = body.get("system")
    parts = [system] if isinstance(system, str) else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    parts += [_flatten(_blocks(m)) for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "system"]
    return "\n".join(parts)


def tool_names(body: dict) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


def callable_tools(body: dict) -> list[str]:
    """Tools the model may call as offered: deferred ones (``defer_loading``, loaded through ToolSearch
    first) and the placeholder are not callable directly."""
    return [t.get("name", "") for t in body.get("tools") or []
            if isinstance(t, dict) and not t.get("defer_loading")]


def describe_request(method: str, path: str, body: dict) -> str:
    """One line naming a request: method, path, and the shape that routes it (tools, format)."""
    tools = tool_names(body)
    deferred = sorted(set(tools) - set(callable_tools(body)))
    fmt = ((body.get("output_config") or {}).get("format") or {}).get("type")
    bits = [f"{method} {path}", f"tools={callable_tools(body)}" if tools else "no tools"]
    if deferred:
        bits.append(f"deferred={deferred}")
    if fmt:
        bits.append(f"format={fmt}")
    if body.get("tool_choice"):
        bits.append(f"tool_choice={json.dumps(body['tool_choice'])}")
    return ", ".join(bits)


# How a blocking Stop hook's output reaches the model:
#   2.1.197: a user text ``Stop hook feedback:\n[<command>]: <stderr>`` (or ``...:\n<reason>`` for JSON);
#   2.1.332: inside a ``<system-reminder>`` that first says the text is a hook's output, then either
#            ``Stop hook feedback:\n[<command>]: <stderr>`` or, for a JSON ``decision: block``,
#            ``Stop hook blocking error from command: "<command line>": <reason>``.
_FEEDBACK_MARKS = ("Stop hook feedback", "Stop hook blocking error")
_FEEDBACK_HEADS = (
    re.compile(r'Stop hook blocking error from command: "(?:[^"\\]|\\.)*": ?'),
    re.compile(r"Stop hook feedback:\n(?:\[[^\n]*?\]: )?"),
)


def is_stop_feedback(text: str) -> bool:
    return any(mark in text for mark in _FEEDBACK_MARKS)


def feedback_texts(req: "Request | dict") -> list[str]:
    """Stop-hook feedback texts in a request's user messages, in order (the command-line copy 2.1.332
    adds as a system message is left out: `feedback_reason` of either gives the same reason)."""
    return [b.get("text", "") for m in _body(req).get("messages") or [] if m.get("role") == "user"
            for b in _blocks(m) if b.get("type") == "text" and is_stop_feedback(b.get("text", ""))]


def feedback_reason(text: str) -> str:
    """The hook's own words in a Stop-hook feedback text, without the client's wrapping."""
    for head in _FEEDBACK_HEADS:
        m = head.search(text)
        if m:
            text = text[m.end():]
            break
    return text.replace("</system-reminder>", "").strip()


# --------------------------------------------------------------------------
# Side-request rule
# --------------------------------------------------------------------------

# Measured against 2.1.197 (-p mode):
#   main loop  -- the agent's own requests: a non-empty ``tools`` list (24 tools
#                 by default; with ``--tools Read,Grep,Glob --json-schema S``
#                 just those plus ``StructuredOutput``, so the tool *count* is
#                 no rule), ``thinking: adaptive``.
#   side       -- session-title generation (sent unless
#                 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set) and the
#                 evaluator of ``"type": "prompt"`` hooks: ``tools`` absent,
#                 ``thinking: disabled``, and an ``output_config.format``
#                 JSON schema for the answer.
# ``max_tokens`` (64000 for both) and the system prompt's first lines (the
# same SDK identity line for both) do NOT tell them apart.  So the rule is:
# a request that offers the model at least one tool is main-loop.  Note that
# ``"type": "agent"`` hooks and Agent-tool subagents run their own tool loop
# and so count as main-loop (they consume the script; route them with a
# keyed script or pass ``is_main=``).
def default_is_main(body: dict) -> bool:
    """True when ``body`` is a main agent-loop request (see comment above)."""
    return bool(tool_names(body))


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


@dataclass
class Request:
    """One recorded HTTP request."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: dict
    main: bool = False
    key: str | None = None  # script key it was routed to (None: default script)
    answer: str = ""  # "turn", "side", "overrun", "error", "count_tokens", "404" (HEAD probe), "unanswered"
    time: float = field(default_factory=time.time)

    @property
    def session_id(self) -> str | None:
        for k, v in self.headers.items():
            if k.lower() == "x-claude-code-session-id":
                return v
        return None


_ANY = object()  # "no filter" sentinel (None means the default script)


class _Script:
    """A list of steps consumed in order, shared by whoever is routed to it."""

    def __init__(self, steps: Iterable[Step]):
        self.steps = list(steps)
        self.pos = 0

    @property
    def remaining(self) -> int:
        return len(self.steps) - self.pos


class FakeAPI:
    """Scripted Messages API server on 127.0.0.1 (a free port).

    :param script: steps for the main loop, consumed in order (shared by every
        run not routed to a keyed script).
    :param scripts: ``{marker: steps}``; a main request whose first user
        message or system prompt contains ``marker`` uses that script instead,
        so concurrent ``claude -p`` runs can each have their own script.
    :param is_main: override the side-request rule: ``fn(body) -> bool``.
    :param delay: seconds to wait before each main-loop answer.
    :param respond: ``fn(body) -> step`` answering every main request not routed
        to a keyed script, instead of the default script: it decides from the
        conversation alone, so concurrent sessions can share it (the experiment's
        scripted agents, tests/support/shop_agents.py).
    :param strict_tools: a scripted tool call naming a tool the request does not offer (or offers
        only deferred) is refused with a 400 naming both, instead of being sent for the client to
        reject in its own words.
    :param side_text: what side requests are told: a string, or
        ``fn(body) -> str``.  When the request asks for JSON output
        (``output_config.format``), a minimal instance of its schema is sent
        instead, with strings set to this text -- a title request gets
        ``{"title": "OK"}``, a prompt hook ``{"ok": true, "reason": "OK"}``.
    """

    def __init__(
        self,
        script: Iterable[Step] | None = None,
        *,
        scripts: dict[str, Iterable[Step]] | None = None,
        is_main: Callable[[dict], bool] | None = None,
        delay: float = 0.0,
        side_text: str | Callable[[dict], str] = "OK",
        respond: Callable[[dict], Any] | None = None,
        strict_tools: bool = True,
    ):
        self._default = _Script(script or [])
        self._keyed = {k: _Script(v) for k, v in (scripts or {}).items()}
        self.is_main = is_main or default_is_main
        self.delay = delay
        self.side_text = side_text
        self.respond = respond
        self.strict_tools = strict_tools
        self.requests: list[Request] = []
        # Requests the server could not answer, each named (see module docstring).
        self.unanswered: list[str] = []
        self.overrun = False
        self.overrun_messages: list[str] = []
        # Failures inside the server itself (e.g. a scripted callable raised).
        self.errors: list[str] = []
        # RLock: scripted callables may call back into the helpers below.
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> "FakeAPI":
        handler = type("_BoundHandler", (_Handler,), {"api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # Daemon handler threads: a client that hangs up mid-stream must never
        # keep the test process alive.
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fakeapi", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __getstate__(self) -> dict:
        """A stopped server pickles as what it recorded (tests/support/pool.py hands a pooled session's
        results to another worker): the requests, errors and how much of each script was used. The
        scripted steps and callables stay behind, so the copy answers the inspection helpers only."""
        assert self._httpd is None, "pickle a FakeAPI only once it is stopped"
        state = dict(self.__dict__, _lock=None, _ids=None, _thread=None, is_main=None, side_text="", respond=None)
        state["_default"] = self._spent(self._default)
        state["_keyed"] = {k: self._spent(v) for k, v in self._keyed.items()}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.RLock(), _ids=itertools.count(1))

    @staticmethod
    def _spent(script: _Script) -> _Script:
        """`script` with its steps left out: only its length and position (what `remaining` reads)."""
        out = _Script([None] * len(script.steps))
        out.pos = script.pos
        return out

    def __enter__(self) -> "FakeAPI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "FakeAPI not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting ---------------------------------------------------------

    def add(self, *steps: Step, key: str | None = None) -> None:
        """Append steps to the default script (or to the keyed one)."""
        with self._lock:
            if key is None:
                self._default.steps.extend(steps)
            else:
                self._keyed.setdefault(key, _Script([])).steps.extend(steps)

    def remaining(self, key: str | None = None) -> int:
        """Steps not yet consumed."""
        with self._lock:
            return (self._default if key is None else self._keyed[key]).remaining

    @property
    def overrun_message(self) -> str:
        return "\n".join(self.overrun_messages)

    def _route(self, body: dict) -> str | None:
        if not self._keyed:
            return None
        haystack = first_user_text(body) + "\n" + system_text(body)
        for key in self._keyed:
            if key in haystack:
                return key
        return None

    def _next_step(self, req: Request) -> Turn | ApiError | None:
        """Consume the next step for ``req`` (None: the script is exhausted)."""
        if self.respond is not None and req.key is None:
            # A stateless responder reads the whole conversation (Claude Code resends it every
            # request), so any number of concurrent sessions can share it.
            return _to_turn(self.respond(req.body))
        with self._lock:
            script = self._default if req.key is None else self._keyed[req.key]
            if script.remaining <= 0:
                return None
            step = script.steps[script.pos]
            script.pos += 1
            if callable(step) and not isinstance(step, (Turn, ApiError)):
                step = step(req.body)
            return _to_turn(step)

    def _record(self, req: Request) -> None:
        with self._lock:  # index under the lock: concurrent runs share a server
            req.index = len(self.requests)
            self.requests.append(req)

    def _new_id(self, prefix: str) -> str:
        # Unique across servers and runs, and readable in transcripts.
        return f"{prefix}_fake{next(self._ids):04d}_{uuid.uuid4().hex[:12]}"

    # -- inspection --------------------------------------------------------

    def main_requests(self, key: Any = _ANY) -> list[Request]:
        """Main-loop requests; given ``key``, only those routed to that script
        (``None``: the default script)."""
        with self._lock:
            return [r for r in self.requests if r.main and (key is _ANY or r.key == key)]

    def side_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if not r.main and r.path.startswith("/v1/messages") and "count_tokens" not in r.path]

    tool_results = staticmethod(tool_results)

    def _shown_blocks(self, roles: tuple[str, ...] = ("user",)) -> list[tuple[str, Block]]:
        """Each content block sent in main requests, once.

        Claude Code resends the whole conversation every request, and the
        conversation only grows, so a block is identified by (session, message
        index, block index, content): a resent block counts once, a repeated
        feedback text twice, and a block that changed in place is never missed.
        """
        seen: set[tuple] = set()
        out: list[tuple[str, Block]] = []
        for req in self.main_requests():
            sid = req.session_id or f"req{req.index}"
            for i, message in enumerate(req.body.get("messages") or []):
                if message.get("role") not in roles:
                    continue
                for j, block in enumerate(_blocks(message)):
                    # cache_control markers move between requests: not content.
                    content = {k: v for k, v in block.items() if k != "cache_control"}
                    ident = (sid, i, j, json.dumps(content, sort_keys=True, default=str))
                    if ident in seen:
                        continue
                    seen.add(ident)
                    out.append((message.get("role"), block))
        return out

    def all_text_shown(self, include_system: bool = False) -> list[str]:
        """Every text and tool_result string the model was sent (user side of
        main requests; with ``include_system`` also system prompts and
        mid-conversation system messages)."""
        roles = ("user", "system") if include_system else ("user",)
        out: list[str] = []
        if include_system:
            prompts = dict.fromkeys(system_text(r.body) for r in self.main_requests())
            out.extend(p for p in prompts if p)
        for _role, block in self._shown_blocks(roles):
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                out.append(_flatten(block.get("content")))
        return out

    def stop_hook_feedback(self) -> list[str]:
        """Texts of the Stop-hook feedback messages, in order (both wordings, see `is_stop_feedback`)."""
        return [
            b.get("text", "")
            for _role, b in self._shown_blocks()
            if b.get("type") == "text" and is_stop_feedback(b.get("text", ""))
        ]

    def all_request_text(self) -> str:
        """Every request this server received, whole (system prompt, tools, messages, headers), as one
        string: what a test searches for anything the model must never be sent."""
        with self._lock:
            return "\n".join(f"{r.method} {r.path}\n{json.dumps(r.headers)}\n{json.dumps(r.body)}" for r in self.requests)

    # -- answering ---------------------------------------------------------

    def _side_reply(self, body: dict) -> Turn:
        said = self.side_text(body) if callable(self.side_text) else self.side_text
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            return turn(json.dumps(_instance(fmt["schema"], said)))
        return turn(said)

    def _unoffered(self, body: dict, reply: Turn) -> list[str]:
        """Tool names the reply calls that the request does not offer as callable (strict_tools)."""
        if not self.strict_tools:
            return []
        offered = set(callable_tools(body))
        return [b.get("name", "") for b in reply.blocks if b.get("type") == "tool_use" and b.get("name") not in offered]

    def _usage(self, body: dict, out_chars: int) -> dict:
        # Rough 4-chars-per-token estimate: enough for Claude Code to compute a
        # non-zero cost, and it grows with the conversation like the real thing.
        return {
            "input_tokens": max(1, len(json.dumps(body.get("messages", ""))) // 4),
            "output_tokens": max(1, out_chars // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def _message(self, body: dict, t: Turn) -> dict:
        blocks = []
        for b in t.blocks:
            b = dict(b)
            if b.get("type") == "tool_use" and not b.get("id"):
                b["id"] = self._new_id("toolu")
            blocks.append(b)
        out_chars = len(json.dumps(blocks))
        return {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-fake",
            "content": blocks,
            "stop_reason": t.resolved_stop_reason(),
            "stop_sequence": None,
            "usage": self._usage(body, out_chars),
        }


def _instance(schema: dict, said: str) -> Any:
    """A small value satisfying a (simple) JSON schema."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: _instance(v, said) for k, v in props.items() if k in (schema.get("required") or props)}
    if kind == "array":
        return []
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "null":
        return None
    return said


def _sse_events(message: dict) -> list[tuple[str, dict]]:
    """The SSE event sequence that streams ``message``."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            payload = json.dumps(block.get("input", {}))
            # Split the JSON like the real API does, so partial-JSON assembly
            # in the client is exercised.
            chunks = [payload[k : k + 64] for k in range(0, len(payload), 64)] or ["{}"]
            deltas = [{"type": "input_json_delta", "partial_json": c} for c in chunks]
        elif block["type"] == "text":
            head = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block.get("text", "")}]
        else:  # anything else (e.g. thinking) is sent whole
            head, deltas = block, []
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": head}))
        for d in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class _Handler(BaseHTTPRequestHandler):
    api: FakeAPI  # set on the per-server subclass
    protocol_version = "HTTP/1.1"
    # Never let a stuck client pin a handler thread forever.
    timeout = 60

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    # -- plumbing ----------------------------------------------------------

    def _read_body(self) -> dict:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            return {"_unparsed": raw.decode("utf-8", "replace")}
        return body if isinstance(body, dict) else {"_json": body}

    def _send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.api._new_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, type_: str, message: str) -> None:
        self._send_json(status, {"type": "error", "error": {"type": type_, "message": message}})

    def _send_stream(self, message: dict) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self.api._new_id("req"))
        # No content-length on a stream: close the connection to end it.
        self.send_header("connection", "close")
        self.close_connection = True
        self.end_headers()
        for name, data in _sse_events(message):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _record(self, method: str, body: dict) -> Request:
        req = Request(
            index=-1,  # set by FakeAPI._record
            method=method,
            path=self.path,
            headers=dict(self.headers.items()),
            body=body,
        )
        self.api._record(req)
        return req

    # -- verbs -------------------------------------------------------------

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        body = self._read_body()
        req = self._record("POST", body)
        path = urlsplit(self.path).path.rstrip("/")
        api = self.api
        try:
            if path.endswith("/messages/count_tokens"):
                req.answer = "count_tokens"
                return self._send_json(200, {"input_tokens": api._usage(body, 0)["input_tokens"]})
            if not path.endswith("/v1/messages"):
                return self._cannot_answer(req, "no route for this path (the server answers /v1/messages and "
                                                "/v1/messages/count_tokens)")

            req.main = bool(api.is_main(body))
            if not req.main:
                req.answer = "side"
                reply: Turn | ApiError | None = api._side_reply(body)
            else:
                req.key = api._route(body)
                reply = api._next_step(req)
                if api.delay:
                    time.sleep(api.delay)

            if reply is None:
                # Past the end of the script.  400 invalid_request_error is not
                # retried by Claude Code (5xx/429/529 are, with backoff, for
                # minutes), so the run ends at once with the message visible.
                req.answer = "overrun"
                where = "default script" if req.key is None else f"script {req.key!r}"
                with api._lock:
                    used = len((api._default if req.key is None else api._keyed[req.key]).steps)
                msg = (
                    f"fakeapi: scenario overrun: the {where} has {used} turns, all used; "
                    f"nothing left to answer request #{req.index} (last message: {_last_text(body)[:200]!r})"
                )
                with api._lock:
                    api.overrun = True
                    api.overrun_messages.append(msg)
                return self._send_error(400, "invalid_request_error", msg)
            if isinstance(reply, ApiError):
                req.answer = "error"
                return self._send_error(reply.status, reply.type, reply.message)
            missing = api._unoffered(body, reply)
            if missing:
                return self._cannot_answer(req, f"the script calls {missing}, which this request does not "
                                                f"offer as a callable tool")

            req.answer = req.answer or "turn"
            message = api._message(body, reply)
            if body.get("stream"):
                self._send_stream(message)
            else:
                self._send_json(200, message)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (e.g. killed on timeout)
        except Exception as exc:  # a bug in a scripted callable: say so, don't hang
            try:
                self._cannot_answer(req, f"the scripted step raised {exc!r}")
            except OSError:
                pass

    def _not_found(self) -> None:
        # Claude Code opens every run with ``HEAD /`` (a connectivity probe; a
        # 404 satisfies it) and may probe other endpoints: answer at once,
        # never hang.
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        req = self._record(self.command, {})
        if self.command == "HEAD":
            req.answer = "404"
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self._cannot_answer(req, "no route for this method and path")

    def _cannot_answer(self, req: Request, why: str) -> None:
        """A 400 naming the request and why it has no answer; kept in api.unanswered and api.errors."""
        req.answer = "unanswered"
        msg = f"fakeapi: cannot answer request #{req.index} ({describe_request(req.method, req.path, req.body)}): {why}"
        with self.api._lock:
            self.api.unanswered.append(msg)
            self.api.errors.append(msg)
        self._send_error(400, "invalid_request_error", msg)

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _not_found
