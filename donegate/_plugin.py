"""The kit's own pytest plugin: results come from here as JSON, never from parsing pytest's output.

It runs inside the isolated test process. The report is written once, at the end of the session,
to a temporary name and renamed: a run that dies early leaves no report, which the gate treats as a
block, never as a pass.
"""

from __future__ import annotations

import json
import os


def _message(report) -> str:
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, line, reason)
        return str(longrepr[2])
    text = str(longrepr or "").strip()
    lines = text.splitlines()
    # Collection errors end with the exception line(s) starting with "E   ".
    errs = [line[1:].strip() for line in lines if line.startswith("E ")]
    return "\n".join(errs) if errs else (lines[-1] if lines else "")


class Reporter:
    def __init__(self, path: str, nonce: str) -> None:
        self.path = path
        self.nonce = nonce
        self.collected: list[str] = []
        self.errors: list[dict[str, str]] = []
        self.results: dict[str, dict[str, str]] = {}

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append({"nodeid": report.nodeid, "message": _message(report), "detail": str(report.longrepr)})

    def pytest_collection_finish(self, session) -> None:
        self.collected = [item.nodeid for item in session.items]

    def pytest_runtest_logreport(self, report) -> None:
        entry = self.results.setdefault(report.nodeid, {"outcome": "passed", "message": "", "when": ""})
        if report.failed and entry["outcome"] != "failed":
            # A failure in setup or teardown is an error; the first failure's message is the one shown.
            entry.update(
                outcome="failed" if report.when == "call" else "error",
                message=_message(report),
                when=report.when,
            )
        elif report.skipped and entry["outcome"] == "passed":
            xfail = hasattr(report, "wasxfail")
            message = report.wasxfail if xfail else _message(report)
            entry.update(outcome="xfailed" if xfail else "skipped", message=message, when=report.when)
        elif report.passed and report.when == "call" and hasattr(report, "wasxfail"):
            entry.update(outcome="xpassed", message=report.wasxfail or "", when=report.when)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        data = {
            "nonce": self.nonce,
            "complete": True,
            "exitstatus": int(exitstatus),
            "collected": self.collected,
            "errors": self.errors,
            "results": self.results,
        }
        tmp = self.path + ".part"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, self.path)
