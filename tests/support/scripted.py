"""What the scripted model servers share (`fakeresponses`, `fakechat`, `fakegemini`): a thread serving HTTP on
127.0.0.1, every request kept whole (method, path, headers, JSON body) for the tests to read, and the
script: `add(...)` turns, `take()` the next one, "done" past the end counted as an overrun (a test that
ends with one got more requests than it meant). A subclass answers a POST in `respond`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.overrun = 0
        self._lock = threading.Lock()
        self._count = 0
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
                self._send(200, outer.listing(), "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                outer._keep(self, body)
                self._send(*outer.respond(self.path, body))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def listing(self) -> bytes:
        """The answer to a GET (a model list)."""
        return b'{"object": "list", "data": [], "models": []}'

    def respond(self, path: str, body: Any) -> tuple[int, bytes, str]:
        raise NotImplementedError

    def take(self) -> tuple[Any, int]:
        """(the next scripted turn, its number from 1)."""
        with self._lock:
            if self.turns:
                turn = self.turns.pop(0)
            else:
                turn, self.overrun = "done", self.overrun + 1
            self._count += 1
            return turn, self._count

    def _keep(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append({"method": handler.command, "path": handler.path,
                                  "headers": dict(handler.headers.items()), "body": body})

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, *turns: Any) -> None:
        self.turns.extend(turns)

    def all_request_text(self) -> str:
        """Every request whole (path, headers, body) as text: what could name something to the model."""
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.requests)
