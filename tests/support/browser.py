"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`): no
WebDriver package, no port, nothing but the standard library.

Chromium reads commands on fd 3 and writes answers and events on fd 4, each a JSON message ended by a
NUL byte. The network is blocked three ways: every host name resolves to nothing, every request goes
to a proxy that does not exist, and background services are off; `requests` lists every request the
page made (the DevTools Network domain sees each one, blocked or not).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
    # no request can leave: names resolve to nothing, and everything else would go to a dead proxy
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
)


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, exe: str, width: int = 1400, height: int = 900, timeout: float = 60) -> None:
        self.exe, self.width, self.height, self.timeout = exe, width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="donegate-chromium-")
        self.events: list[dict[str, Any]] = []
        self._id = 0
        self._buf = b""
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # fds 3 and 4 in the child, whatever numbers the pipes got here (bash: dash takes single-digit fds only)
        cmd = [shutil.which("bash") or "/bin/bash", "-c", f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}', exe, *FLAGS,
               f"--user-data-dir={self.profile}", "--remote-debugging-pipe", f"--window-size={width},{height}",
               "about:blank"]
        # Its home in the profile too: Chromium keeps its crash database and caches under $HOME/.config and
        # $HOME/.cache whatever --user-data-dir says, and the tests never write into the person's home.
        home = os.path.join(self.profile, "home")
        os.mkdir(home)
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
               "XDG_CACHE_HOME": os.path.join(home, ".cache")}
        self.proc = subprocess.Popen(cmd, pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL, env=env,
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.profile, "stderr.log"), "wb"), start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Network", "Runtime"):
                self.call(f"{domain}.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    # -- the protocol -----------------------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium gave no answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    log = Path(self.profile, "stderr.log")
                    raise BrowserError(f"Chromium closed the pipe: {log.read_text(errors='replace')[-2000:]}")
                self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def wait_event(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        while True:
            e = self._read(deadline)
            if e.get("method") == method:
                return e
            if "method" in e:
                self.events.append(e)

    # -- what the tests use -----------------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load a page from disk and wait for its load event."""
        self.url = path.resolve().as_uri()
        self.call("Page.navigate", session=True, url="about:blank")
        self.wait_event("Page.loadEventFired")
        self.events = []  # what the previous page did is not this page's
        res = self.call("Page.navigate", session=True, url=self.url)
        if res.get("errorText"):
            raise BrowserError(f"cannot open {path}: {res['errorText']}")
        self.wait_event("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        res = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression[:80]}: {res['exceptionDetails'].get('exception', {}).get('description') or res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        raise BrowserError(f"never true: {expression}")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the first element matching `selector`."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                      "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                      "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"nothing matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def requests(self) -> list[str]:
        """Every URL the page asked for since `open`, the page's own file included."""
        for _ in range(3):  # drain events already sent
            try:
                self.call("Runtime.evaluate", session=True, expression="1")
            except BrowserError:
                break
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def blocked(self) -> dict[str, str]:
        """URL -> why Chromium refused to send it (`csp`, ...), for the requests it never sent."""
        self.requests()
        urls = {e["params"]["requestId"]: e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"}
        return {urls.get(e["params"]["requestId"], "?"): e["params"]["blockedReason"] for e in self.events
                if e["method"] == "Network.loadingFailed" and e["params"].get("blockedReason")}

    def screenshot(self, path: Path, full: bool = True) -> None:
        if full:
            h = self.js("Math.ceil(document.documentElement.scrollHeight)")
            self.call("Emulation.setDeviceMetricsOverride", session=True, width=self.width, height=min(int(h), 8000),
                      deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=full)["data"]
        path.write_bytes(base64.b64decode(data))
        if full:
            self.call("Emulation.setDeviceMetricsOverride", session=True, width=self.width, height=self.height,
                      deviceScaleFactor=1, mobile=False)

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    os.write(self._to_chrome, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    os.killpg(self.proc.pid, 9)
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_chrome, self._from_chrome):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
