"""A scripted OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI offline (no key, no network).

Each `POST /v1/responses` takes the next scripted turn and answers it as a server-sent event stream
(the four events Codex 0.169.0 needs: created, output_item.added, output_item.done, completed):

    "text"                 a final assistant message (the agent claims it is done)
    shell("cmd")           a call of Codex's shell tool, `exec_command` with {"cmd": ...}

Every request is kept whole (path, headers, JSON body) for the tests to read. Past the script the
server answers "done" and counts an overrun: a test that ends with one got more requests than it meant.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .scripted import ScriptedServer

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


class FakeResponses(ScriptedServer):
    def respond(self, path: str, body: Any) -> tuple[int, bytes, str]:
        if not path.rstrip("/").endswith("/responses"):
            return 404, b"", "text/plain"
        turn, i = self.take()
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
        return 200, out, "text/event-stream"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"].rstrip("/").endswith("/responses")]

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
