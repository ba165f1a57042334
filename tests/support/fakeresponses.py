"""A scripted OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI offline (no key, no network).

Each `POST /v1/responses` takes the next scripted turn and answers it as a server-sent event stream
(the four events Codex 0.169.0 needs: created, output_item.added, output_item.done, completed):

    "text"                 a final assistant message (the agent claims it is done)
    shell("cmd")           a call of Codex's shell tool, `exec_command` with {"cmd": ...}

Every request is kept whole (path, headers, JSON body) for the tests to read. Past the script the
server answers "done" and counts an overrun: a test that ends with one got more requests than it meant.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOOK_PROMPT = re.compile(r'<hook_prompt hook_run_id="([^"]*)">(.*?)</hook_prompt>', re.S)


def shell(cmd: str) -> dict[str, str]:
    return {"exec": cmd}


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(dict(payload, type=kind))}\n\n".encode()


def _item(turn: Any, i: int) -> dict[str, Any]:
    if isinstance(turn, dict) and "exec" in turn:
        return {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "exec_command",
                "arguments": json.dumps({"cmd": turn["exec"]}), "status": "completed"}
    return {"type": "message", "id": f"msg_{i}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": str(turn), "annotations": []}]}


class FakeResponses:
    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.overrun = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                outer._keep(self, None)
                self._send(200, b'{"object": "list", "data": [], "models": []}', "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                outer._keep(self, body)
                if not self.path.rstrip("/").endswith("/responses"):
                    self._send(404, b"", "text/plain")
                    return
                with outer._lock:
                    if outer.turns:
                        turn = outer.turns.pop(0)
                    else:
                        turn, outer.overrun = "done", outer.overrun + 1
                    i = next(outer._ids)
                item = _item(turn, i)
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
                rid = f"resp_{i}"
                out = b"".join([
                    _sse("response.created", {"response": {"id": rid, "status": "in_progress"}}),
                    _sse("response.output_item.added", {"output_index": 0, "item": item}),
                    _sse("response.output_item.done", {"output_index": 0, "item": item}),
                    _sse("response.completed", {"response": {"id": rid, "status": "completed", "output": [item],
                                                             "usage": usage}}),
                ])
                self._send(200, out, "text/event-stream")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _keep(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append({"method": handler.command, "path": handler.path,
                                  "headers": dict(handler.headers.items()), "body": body})

    def __enter__(self) -> "FakeResponses":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, *turns: Any) -> None:
        self.turns.extend(turns)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"].rstrip("/").endswith("/responses")]

    def all_request_text(self) -> str:
        """Every request whole (path, headers, body) as text: what could name something to the model."""
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.requests)

    def inputs(self) -> list[dict[str, Any]]:
        """The input items of the last model request (it carries the whole conversation)."""
        reqs = self.model_requests()
        body = reqs[-1]["body"] if reqs else {}
        return body.get("input", []) if isinstance(body, dict) else []

    def hook_prompts(self) -> list[tuple[str, str]]:
        """(hook_run_id, text) of every block Codex handed the model, in order."""
        out = []
        for item in self.inputs():
            if item.get("type") == "message" and item.get("role") == "user":
                for part in item.get("content") or []:
                    out += HOOK_PROMPT.findall(part.get("text") or "")
        return out

    def tool_outputs(self) -> list[str]:
        return [str(i.get("output")) for i in self.inputs() if i.get("type") == "function_call_output"]
