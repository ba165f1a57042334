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


def _with_feedback(line: bytes, scrub: feedback.Scrubber) -> bytes:
    """A generated stop line with the `feedback` the gate would have written (blocks and hints)."""
    rec = json.loads(line)
    if rec.get("event") != "stop" or rec["verdict"] not in ("block", "hint"):
        return line
    acc = rec["gates"]["acceptance"]
    failures = {f["id"]: f["message"] for f in acc["failing"]}
    if rec["verdict"] == "hint":
        text = "donegate: the acceptance tests pass; reviewers (a model's judgment, not a test) found:\n" + "\n".join(
            f"- {f['file']}:{f['line']}: {f['summary']}" for f in rec["gates"]["review"]["findings"])
    else:
        text = feedback.block_text([], failures, claimed=rec["stop"] % 2 == 1, total=acc["total"], scrub=scrub, cap=4000)
    keys = list(rec)
    out = {k: rec[k] for k in keys[: keys.index("gates") + 1]}
    out["feedback"] = text
    out.update({k: rec[k] for k in keys[keys.index("gates") + 1:]})
    return json.dumps(out, separators=(",", ":")).encode()


def generate(path: Path, stops: int = STOPS, seed: int = 6) -> int:
    """A ledger of about `stops` stop lines (plus the writer and label lines among them), hash-chained;
    returns the number of stop lines."""
    raw = path.with_suffix(".raw")
    report_bench.generate(raw, lines=int(stops * 1.02), seed=seed)
    scrub = feedback.Scrubber([], [])
    count = 0
    with open(raw, "rb") as src, open(path, "wb") as fh:
        w = report_bench.Writer(fh)
        for line in src:
            rec = line.rstrip(b"\n")
            is_stop = b'"event":"stop"' in rec[:40]
            if is_stop and count >= stops:
                break
            count += is_stop
            body = json.loads(_with_feedback(rec, scrub))
            body["prev"] = w.prev
            w.raw(json.dumps(body, separators=(",", ":")))
    raw.unlink()
    return count


def bench_html(tmpdir: Path) -> list[str]:
    ledger = tmpdir / "ledger.jsonl"
    n = generate(ledger)
    page = tmpdir / "report.html"
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "donegate", "report", str(ledger), "--html", str(page)], cwd=KIT,
                         capture_output=True, text=True, timeout=900, env={**os.environ, "DONEGATE_HOME": str(tmpdir)})
    wrote = time.monotonic() - t0
    if res.returncode:
        return [f"report --html failed: {res.stderr.strip()}"]
    mb = page.stat().st_size / 1e6
    out = [f"ledger: {n:,} stops, {ledger.stat().st_size / 1e6:.0f} MB; page written in {wrote:.1f} s",
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

