"""`donegate report --html` on a ledger of 100,000 stops: the page's size, the time to write it, and the
time until it is interactive in headless Chromium (when Chromium is installed).

The ledger is the report bench's generator (the gate's exact line format, sessions of one to seven stops,
give-ups, reviewers, labels) with each blocking stop's `feedback` as the gate writes it: the real
`feedback.block_text` of the stop's failures (no store to scrub). Targets: under 5 MB, interactive
within 2 s. The tests check the size; no test asserts a time.
"""

from __future__ import annotations


import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT / "bench"))
sys.path.insert(1, str(KIT))

import report_bench  # noqa: E402
from donegate.core import scrub as feedback  # noqa: E402

STOPS = 100_000
TARGET_MB, TARGET_MS = 5.0, 2000


class _Enough(Exception):
    """The stop after the last one wanted came: the ledger is complete."""


class _Sink:
    def write(self, data: bytes) -> None:
        pass


class _FeedbackWriter(report_bench.Writer):
    """The report bench's writer with each blocking stop's `feedback` put in as it is written, after `gates`
    (where the gate writes it), until `stops` stop lines: one pass, no line parsed again. A feedback text
    depends only on the stop's gates blob (one of a few hundred), its verdict and whether it is claimed.
    `stop` returns the line the bench's own writer would have written (a label's `ref` is its hash, as the
    ledgers this bench made before did)."""

    def __init__(self, fh, stops: int, scrub: feedback.Scrubber) -> None:
        super().__init__(fh)
        self.plain = report_bench.Writer(_Sink())
        self.stops, self.scrub, self.stop_lines = stops, scrub, 0
        self._texts: dict[tuple[str, str, bool], str] = {}

    def stop(self, when: str, repo: str, sid: str, stop: int, verdict: str, gates: str, blocks: int, dur: float, cfg: str) -> str:
        if self.stop_lines >= self.stops:
            raise _Enough
        self.stop_lines += 1
        plain = self.plain.stop(when, repo, sid, stop, verdict, gates, blocks, dur, cfg)
        if verdict in ("block", "hint"):
            key = (gates, verdict, stop % 2 == 1)
            if key not in self._texts:
                self._texts[key] = ',"feedback":' + json.dumps(_feedback(json.loads(gates), verdict, key[2], self.scrub))
            gates += self._texts[key]
        super().stop(when, repo, sid, stop, verdict, gates, blocks, dur, cfg)
        return plain

    def event(self, record: dict) -> str:
        self.plain.event(record)
        return super().event(record)


def _feedback(gates: dict, verdict: str, claimed: bool, scrub: feedback.Scrubber) -> str:
    acc = gates["acceptance"]
    if verdict == "hint":
        return "donegate: the acceptance tests pass; reviewers (a model's judgment, not a test) found:\n" + "\n".join(
            f"- {f['file']}:{f['line']}: {f['summary']}" for f in gates["review"]["findings"])
    failures = {f["id"]: f["message"] for f in acc["failing"]}
    return feedback.block_text([], failures, claimed=claimed, total=acc["total"], scrub=scrub, cap=4000)


def generate(path: Path, stops: int = STOPS, seed: int = 6) -> int:
    """A ledger of about `stops` stop lines (plus the writer and label lines among them), hash-chained;
    returns the number of stop lines. The report bench's generator (`int(stops * 1.02)` lines at most) cut
    before the stop after the `stops`th, each blocking stop with its feedback (`_FeedbackWriter`)."""
    with open(path, "wb") as fh:
        w = _FeedbackWriter(fh, stops, feedback.Scrubber([], []))
        try:
            report_bench.generate_into(w, lines=int(stops * 1.02), seed=seed)
        except _Enough:
            pass
    return w.stop_lines


def bench_html(tmpdir: Path) -> list[str]:
    ledger = tmpdir / "ledger.jsonl"
    n = generate(ledger)
    page = tmpdir / "report.html"
    env = {**os.environ, "DONEGATE_HOME": str(tmpdir)}
    walls = []
    for _ in range(2):  # the first with nothing kept, the second with nothing new (`donegate.report.resume`)
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "donegate", "report", str(ledger), "--html", str(page)], cwd=KIT,
                             capture_output=True, text=True, timeout=900, env=env)
        walls.append(time.monotonic() - t0)
        if res.returncode:
            return [f"report --html failed: {res.stderr.strip()}"]
    wc = min(report_bench.run_measured(["wc", "-l", str(ledger)], tmpdir / "wc.txt", env)[0] for _ in range(3))
    mb = page.stat().st_size / 1e6
    out = [f"ledger: {n:,} stops, {ledger.stat().st_size / 1e6:.0f} MB; page written in {walls[0]:.1f} s, again with "
           f"nothing new {walls[1]:.1f} s; wc -l {wc:.2f} s: ratios {walls[0] / wc:.1f} and {walls[1] / wc:.1f}",
           f"page: {mb:.2f} MB (target under {TARGET_MB:.0f} MB)"]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return out + ["Chromium is not installed (apt-get install chromium): time to interactive not measured"]
    from tests.support.browser import Chromium

    times = []
    with Chromium(chromium) as b:
        for _ in range(3):
            b.open(page)
            b.wait_for("window.donegateReady")
            times.append(b.js("window.donegateReady"))
    times.sort()
    out.append(f"interactive after {times[1]:.0f} ms (median of 3 loads in headless Chromium; target under {TARGET_MS} ms)")
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="donegate-html-bench-") as tmp:
        print("\n".join(bench_html(Path(tmp))))

