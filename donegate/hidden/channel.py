"""The parent's side of the result channel: one JSON line per event, checked as it arrives.

The hidden run writes to an inherited pipe (never a file path it could guess): `hello` (with the
nonce), `collected` (the test ids) or `collecterror`, then per test `start`, one `report` per phase
(setup, call, teardown), `end`; `tamper` when a tripwire fired; `finish` (nonce, exit status);
`import` (a module not found, and the file importing it) beside a failure, at any point.

The code under test runs in the same process and can write to the pipe too, so the stream is held to
the order pytest really keeps: a result for a test that never started, a duplicate or conflicting
result, a test that starts while another is open, a test that never ends, anything after `finish`,
or a line that is not the kit's, is tampering (or an early exit) and blocks the stop.
"""

from __future__ import annotations

import json

from donegate.core.scrub import plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this module at every stop: typing stays off its path
    from typing import Callable

PHASES = ("setup", "call", "teardown")
# Evidence no honest code gives: the stream itself broken, pytest's machinery changed, an object equal to
# everything, the two runs disagreeing. Never appealable; every other tripwire rule is (`donegate.gate.appeal`).
HARD = frozenset({"stream", "harness", "probe", "disagree"})


class Stream:
    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.hello = False
        self.collected: list[str] | None = None
        self.known: set[str] = set()  # `collected`, looked up at each test's start (a list was O(n) each: 2,000 tests)
        self.errors: list[dict[str, str]] = []
        self.results: dict[str, dict[str, str]] = {}
        self.phases: dict[str, list[str]] = {}
        self.ended: set[str] = set()
        self.open = ""  # the test that started and has not ended
        self.finish: dict | None = None
        self.tamper = ""  # the first violation, in one plain line (hard evidence before a soft finding)
        self.rule = ""  # its rule: stream, harness, probe (hard) or one honest code may trip (settrace, gc-objects...)
        self.keys: list[str] = []  # what a tripwire saw change (for the ledger)
        self.alarms: list[tuple[str, str]] = []  # (rule, what) of every tripwire the run reported
        self.lines = 0
        self.imports: list[dict[str, str]] = []  # modules not found: {id, module, file}
        # Called once, from the reader thread, when a test first reports anything but a pass (or a test file does not
        # collect): the run will block, so the second run started beside it is cancelled then (`gate.acceptance`).
        self.on_fail: Callable[[], None] | None = None

    def violate(self, what: str, rule: str = "stream") -> None:
        if not self.tamper or (rule in HARD and self.rule not in HARD):
            self.tamper, self.rule = what, rule

    def feed(self, line: str) -> None:
        self.lines += 1
        if not line.strip():
            return
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or not isinstance(msg.get("ev"), str):
            return self.violate("the result channel carried a line the kit did not write")
        ev = msg["ev"]
        if self.finish is not None:
            return self.violate(f"the result channel carried '{ev}' after the run had finished")
        if ev == "hello":
            if self.hello or msg.get("nonce") != self.nonce:
                return self.violate("the result channel was opened twice or with the wrong nonce")
            self.hello = True
            return
        if not self.hello:
            return self.violate("the result channel carried results before the kit's plugin started")
        nodeid = msg.get("id")
        if ev == "collecterror":
            self.errors.append({"nodeid": str(nodeid or ""), "message": plain(str(msg.get("message") or "")),
                                "detail": plain(str(msg.get("detail") or ""))})
            self._failed()  # a sealed test file that does not collect: the run blocks, as a failed test makes it
        elif ev == "collected":
            if self.collected is not None or not isinstance(msg.get("ids"), list):
                return self.violate("the list of collected tests was sent twice")
            self.collected = [str(i) for i in msg["ids"]]
            self.known = set(self.collected)
        elif ev == "start":
            if not isinstance(nodeid, str) or nodeid not in self.known:
                return self.violate(f"a result came for a test that was never collected ({nodeid})")
            if self.open:
                return self.violate(f"{nodeid} started while {self.open} had not ended")
            if nodeid in self.phases:
                return self.violate(f"{nodeid} was reported as started twice")
            self.open = nodeid
            self.phases[nodeid] = []
        elif ev == "report":
            when = msg.get("when")
            if nodeid != self.open:
                return self.violate(f"a result came for a test that had not started ({nodeid})")
            done = self.phases[nodeid]
            if "sub" in msg:  # a subtest's, within the test's call (`failures.subtest_label`): it only adds a failure
                if when != "call" or done != ["setup"] or not isinstance(msg["sub"], str):
                    return self.violate(f"a subtest's result came outside the call of {nodeid}")
                if msg.get("outcome") == "failed":
                    self._merge(nodeid, when, "failed", plain(f"{msg['sub']}: {msg.get('message') or ''}"))
                return
            if when not in PHASES or when in done or (done and PHASES.index(when) < PHASES.index(done[-1])):
                return self.violate(f"duplicate or conflicting results for {nodeid} ({when})")
            done.append(when)
            self._merge(nodeid, when, str(msg.get("outcome")), plain(str(msg.get("message") or "")))
        elif ev == "end":
            if nodeid != self.open or "teardown" not in self.phases.get(nodeid, []):
                return self.violate(f"{nodeid} ended without its results")
            self.open = ""
            self.ended.add(nodeid)
        elif ev == "import":
            if len(self.imports) < 100:
                self.imports.append({"id": str(nodeid or ""), "module": str(msg.get("module") or ""),
                                     "file": str(msg.get("file") or "")})
        elif ev == "tamper":
            rule = str(msg.get("rule") or "harness")
            if len(self.alarms) < 20:  # every tripwire, for the seal's baseline (the first stays the run's finding)
                self.alarms.append((rule, str(msg.get("what") or "")))
            if not self.tamper or (rule in HARD and self.rule not in HARD):
                self.keys = [str(k) for k in msg.get("keys") or []][:20]
            self.violate(str(msg.get("what") or "the code under test changed the test harness"), rule)
        elif ev == "finish":
            if msg.get("nonce") != self.nonce:
                return self.violate("the run's end was reported with the wrong nonce")
            if self.open:
                return self.violate(f"the run finished while {self.open} had not ended")
            self.finish = msg
        else:
            self.violate(f"the result channel carried an unknown event {ev!r}")

    def _merge(self, nodeid: str, when: str, outcome: str, message: str) -> None:
        entry = self.results.setdefault(nodeid, {"outcome": "passed", "message": "", "when": ""})
        if outcome == "failed" and entry["outcome"] not in ("failed", "error"):
            # A failure in setup or teardown is an error; the first failure's message is the one shown.
            entry.update(outcome="failed" if when == "call" else "error", message=message, when=when)
        elif outcome in ("skipped", "xfailed") and entry["outcome"] == "passed":
            entry.update(outcome=outcome, message=message, when=when)
        elif outcome == "xpassed" and entry["outcome"] == "passed":
            entry.update(outcome="xpassed", message=message, when=when)
        elif outcome not in ("passed", "failed", "skipped", "xfailed", "xpassed"):
            self.violate(f"an unknown outcome {outcome!r} was reported for {nodeid}")
        if entry["outcome"] != "passed":
            self._failed()

    def _failed(self) -> None:
        if self.on_fail is not None:
            told, self.on_fail = self.on_fail, None
            told()

    def problem(self, returncode: int | None) -> tuple[str, str]:
        """(tamper, problem) once the process is gone: why the stream cannot be trusted or is incomplete."""
        if self.tamper:
            return self.tamper, self.tamper
        if self.open:
            what = (f"the test run ended during {self.open} without reporting its end (exit code {returncode}): "
                    "the code under test may exit the process early")
            return what, what
        if self.finish is None:
            return "", (f"the test run ended before reporting (exit code {returncode}): the code under test may exit "
                        "the process early")
        if returncode != self.finish.get("exitstatus"):
            what = (f"the test process exited with code {returncode} after pytest had finished with "
                    f"{self.finish.get('exitstatus')}: the code under test changed the exit")
            return what, what
        started = set(self.phases)
        if started - self.ended:
            what = f"{len(started - self.ended)} test(s) started and never ended"
            return what, what
        return "", ""
