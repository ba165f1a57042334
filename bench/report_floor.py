"""Where the first report's floor is: the report's own first pass over the bench's ledger taken apart, each stage run
as the report runs (two forked readers, each a byte range of whole lines, 1 MB reads), beside `wc -l` of the same
file. Each stage adds one thing to the one before: the reads; the split into lines; the hash chain (sha256 of each
line, as `read.Partial.link`); the head of each stop line by a regular expression (time, repo, session, verdict);
the report's whole fast-path expression (`shape._LINE`: the gates read to their end, so that a repeated top-level
key goes to json.loads); and the report's own scan (`read.scan`: all of it, the counting loop, the hand-over)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STAGES = ("read", "split", "sha256", "head", "line", "scan")
_HEAD = (rb'\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00)","repo":"([^"\\\n]*)",'
         rb'"session":"([^"\\\n]+)","stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),"verdict":"(\w+)"')


def _stage(stage: str, path: str, start: int, end: int) -> int:
    """One reader's range, up to `stage`; the lines seen (so nothing is optimised away)."""
    import hashlib
    import re
    from binascii import hexlify

    from donegate.report import read, shape

    if stage == "scan":
        return read.scan(path, start, end, read.Options()).lines
    head, line_re, n = re.compile(_HEAD).finditer, shape._LINE, 0
    for _, data, cut in read._chunks(path, start, end):
        if stage == "read":
            n += cut
            continue
        lines = data[:cut].split(b"\n")
        n += len(lines)
        if stage in ("sha256", "head", "line"):
            list(map(hexlify, map(read._DIGEST, map(hashlib.sha256, lines))))
        if stage == "head":
            n += len(list(head(data, 0, cut)))
        elif stage == "line":
            n += len(list(line_re(data, 0, cut)))
    return n


def run(stage: str, path: str, jobs: int = 2) -> None:
    """`stage` over the whole file, `jobs` forked readers as the report forks them (`parallel.ranges`)."""
    from donegate.report import parallel

    pids = []
    for start, end in parallel.ranges(Path(path), jobs):
        pid = os.fork()
        if pid == 0:
            try:
                _stage(stage, path, start, end)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def floor(ledger_file: Path, measure, env: dict) -> list[str]:
    """Each stage's wall and CPU beside a `wc -l` run right after it (`measure`: `report_bench.run_measured`)."""
    out = []
    for stage in STAGES:
        m = measure([sys.executable, __file__, stage, str(ledger_file)], ledger_file.with_suffix(".floor"), env)
        w = measure(["wc", "-l", str(ledger_file)], ledger_file.with_suffix(".wc"), env)
        out.append(f"  + {stage:<7} {m[0]:6.2f} s, CPU {m[1]:6.2f} s ; x wc -l: time {m[0] / w[0]:5.1f}, "
                   f"CPU {m[1] / max(w[1], 1e-3):5.1f}")
    return out


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
