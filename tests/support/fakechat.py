"""A scripted OpenAI Chat Completions API on 127.0.0.1 for driving GitHub Copilot CLI and Qwen Code offline.

Each `POST .../chat/completions` takes the next scripted turn and answers it, streamed as server-sent
events when the request asks for a stream (both clients do), else as one JSON object:

    "text"                 a final assistant message (the agent claims it is done)
    shell("cmd")           a call of the client's shell tool, whichever of the request's tools that is
                           (Copilot's `bash`, Qwen Code's `run_shell_command`), with {"command": cmd}

Every request is kept whole for the tests to read; past the script "done", counted (`scripted.ScriptedServer`).
"""

from __future__ import annotations

import json
from typing import Any

from .fakeresponses import shell
from .scripted import ScriptedServer

__all__ = ["FakeChat", "shell"]

SHELL_TOOLS = ("bash", "run_shell_command", "shell", "exec_command")


def _tool_name(body: dict[str, Any]) -> str:
    names = [((t.get("function") or {}).get("name") or t.get("name")) for t in body.get("tools") or []
             if isinstance(t, dict)]
    return next((n for n in SHELL_TOOLS if n in names), "bash")


def _chunks(turn: Any, i: int, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(the message's delta, its finish reason)."""
    if isinstance(turn, dict) and "exec" in turn:
        call = {"index": 0, "id": f"call_{i}", "type": "function",
                "function": {"name": _tool_name(body), "arguments": json.dumps({"command": turn["exec"],
                                                                               "description": "run it"})}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    return {"role": "assistant", "content": str(turn)}, "stop"


class FakeChat(ScriptedServer):
    def listing(self) -> bytes:
        return json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model", "created": 0,
                                                       "owned_by": "scripted"}]}).encode()

    def respond(self, path: str, body: Any) -> tuple[int, bytes, str]:
        if not path.split("?")[0].rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            return 404, b"{}", "application/json"
        turn, i = self.take()
        delta, finish = _chunks(turn, i, body)
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        head = {"id": f"chatcmpl-{i}", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model") or "scripted"}
        if not body.get("stream"):
            msg = {k: v for k, v in delta.items() if k != "tool_calls" or v}
            for c in msg.get("tool_calls") or []:
                c.pop("index", None)
            whole = {**head, "object": "chat.completion", "usage": usage,
                     "choices": [{"index": 0, "message": msg, "finish_reason": finish}]}
            return 200, json.dumps(whole).encode(), "application/json"
        events = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {**head, "choices": [], "usage": usage}]
        return 200, b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n", \
            "text/event-stream"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and "/chat/completions" in r["path"]]

    def messages(self) -> list[dict[str, Any]]:
        """The messages of the last model request (it carries the whole conversation)."""
        reqs = self.model_requests()
        body = reqs[-1]["body"] if reqs else {}
        return body.get("messages", []) if isinstance(body, dict) else []

    def user_texts(self) -> list[str]:
        """The text of every user message of the last request, in order (a block comes back as one)."""
        out = []
        for m in self.messages():
            if m.get("role") == "user":
                c = m.get("content")
                out.append(c if isinstance(c, str) else "\n".join(str(p.get("text", "")) for p in c or []
                                                                   if isinstance(p, dict)))
        return out

    def tool_outputs(self) -> list[str]:
        return [str(m.get("content")) for m in self.messages() if m.get("role") == "tool"]
