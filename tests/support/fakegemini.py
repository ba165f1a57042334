"""A scripted Gemini API (generativelanguage v1beta) on 127.0.0.1 for driving Gemini CLI offline.

Gemini CLI reads `GOOGLE_GEMINI_BASE_URL` with an API key. Each `POST .../models/<m>:streamGenerateContent`
takes the next scripted turn, answered as server-sent events:

    "text"                 a final model message (the agent claims it is done)
    shell("cmd")           a call of Gemini CLI's shell tool, `run_shell_command` with {"command": cmd}

The CLI's own side requests (a non-streamed `generateContent`, `countTokens`) take nothing from the
script: they get a plain short answer. Every request is kept whole for the tests to read. Past the
script the server answers "done" and counts an overrun.
"""

from __future__ import annotations

import json
from typing import Any

from .fakeresponses import shell
from .scripted import ScriptedServer

__all__ = ["FakeGemini", "shell"]

USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _part(turn: Any) -> dict[str, Any]:
    if isinstance(turn, dict) and "exec" in turn:
        return {"functionCall": {"name": "run_shell_command", "args": {"command": turn["exec"]}}}
    return {"text": str(turn)}


def _answer(part: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": USAGE, "modelVersion": "scripted"}


class FakeGemini(ScriptedServer):
    def listing(self) -> bytes:
        return b'{"models": []}'

    def respond(self, path: str, body: Any) -> tuple[int, bytes, str]:
        path = path.split("?")[0]
        if path.endswith(":countTokens"):
            return 200, b'{"totalTokens": 10}', "application/json"
        if path.endswith(":generateContent"):  # the CLI's own side question: never the script's
            return 200, json.dumps(_answer({"text": "{}"})).encode(), "application/json"
        if not path.endswith(":streamGenerateContent"):
            return 404, b"{}", "application/json"
        turn, _ = self.take()
        return 200, f"data: {json.dumps(_answer(_part(turn)))}\r\n\r\n".encode(), "text/event-stream"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and ":streamGenerateContent" in r["path"]]

    def contents(self) -> list[dict[str, Any]]:
        """The contents of the last model request (it carries the whole conversation)."""
        reqs = self.model_requests()
        body = reqs[-1]["body"] if reqs else {}
        return body.get("contents", []) if isinstance(body, dict) else []

    def user_texts(self) -> list[str]:
        """The text parts of every user turn of the last request, in order (a block comes back as one)."""
        return ["\n".join(str(p["text"]) for p in c.get("parts") or [] if isinstance(p, dict) and "text" in p)
                for c in self.contents() if c.get("role") == "user"]

    def tool_outputs(self) -> list[str]:
        return [json.dumps(p["functionResponse"].get("response")) for c in self.contents()
                for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p]
