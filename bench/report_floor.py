r"""Where the first report's floor is: the report's own first pass over the bench's ledger taken apart, each stage run
as the report runs (two forked readers, each a byte range of whole lines, 1 MB reads), beside `wc -l` of the same
file. Each stage adds one thing to the one before: the reads; the split into lines; the hash chain (sha256 of each
line, as `read.Partial.link`); the head of each stop line by a regular expression (time, repo, session, verdict);
the report's whole fast-path expression (`shape._LINE`: the gates read to their end, so that a repeated top-level
key goes to json.loads); and the report's own scan (`read.scan`: all of it, the counting loop, the hand-over).

`strings` (before `line`) is the least any exact reading of a line by a regular expression does: each of its JSON
strings taken whole, nothing else checked or captured.

Two more stages, run by name (`python bench/report_floor.py verified FILE`; not in `make bench`, ~20 s), measure the
"verified fast" reading in place of `line`: `quick` reads `line`'s fields from the head and the tail alone (the gates
skipped by `[^\n]*`, the tail found backtracking from the line's end, so a line's agent figures are not seen: its
chunk's counts then refuse it); `verified` adds what would prove that reading exact without reading the gates: each
key the report reads (`VERIFY`) counted over the whole chunk in C (`bytes.count`), equal to what the matched lines
must hold (more: a key written again somewhere, and the chunk is read by `shape._LINE`), and no `\u` anywhere (it
could spell a key). Per 100 MB of the bench's ledger, one process:
`shape.ROWS` 0.68 CPU-s, `quick` 0.31, the twelve counts alone 0.71, `strings` 0.48 (`docs/bench.md`).

`scan` prints its parse (`shape.rows`) apart: the rest of it (the reads, the split, the chain, the counting) is the
floor a parser that cost nothing would leave. `msgspec` (run by name, with `pip install msgspec`: the kit does not
depend on it) puts a C JSON parser in the expression's place: the reads, the split, the chain's sha256, and each line
decoded into the fields the report reads, nothing counted."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FLOOR = ("read", "split", "sha256", "head", "strings", "line", "scan")  # what `make bench` prints
# and, by name (`python bench/report_floor.py verified FILE`), the verified-fast reading and a C parser's (a dependency)
STAGES = (*FLOOR, "quick", "verified", "msgspec")
_HEAD = (rb'\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00)","repo":"([^"\\\n]*)",'
         rb'"session":"([^"\\\n]+)","stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),"verdict":"(\w+)"')
# `quick`: `shape._LINE`'s groups from the head (to the acceptance counts) and the tail, the gates between not read.
_QUICK = (rb'\{"v":1,"event":"stop","time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00)","repo":"(STR*)","session":"(STR+)",'
          rb'"stop":(?:\d+|null),"stop_hook_active":(?:true|false|null),"verdict":"(pass|review_error|block|hint|gave_up|appealed)","gates":\{'
          rb'"integrity":\{[^{}\n]*\}(?:,"leak":\{[^{}\n]*\})?,"scope":\{[^{}\n]*\},"acceptance":\{"ok":(?:true|false|null),'
          rb'"total":(\d{1,7},"passed":\d{1,7})[^\n]*,(?:("agent_usd":(?:NUM|null),"agent_seconds":(?:NUM|null)),)?'
          rb'"blocks":(?:\d+|null),"duration":(NUM),"kit_version":"[^"\\\n]*","config":"(STR*)","prev":"[0-9a-f]{64}"\}\n'
          rb'|[^\n]*+\n')
# `verified`: the keys the report reads, each as many times in the chunk as the matched lines hold it (a review's own
# verdict besides the stop's: `_REVIEW_VERDICT`), and `\u` nowhere (it could spell one).
VERIFY = (b'"v"', b'"event"', b'"time"', b'"repo"', b'"session"', b'"verdict"', b'"gates"', b'"acceptance"', b'"total"',
          b'"passed"', b'"agent_')
_STRINGS = rb'(?:[^"\n]*+"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+")*+[^\n"]*+\n'
_REVIEW_VERDICT = rb'"review":\{"mode":"\w*","verdict":'


def _verified(data: bytes, cut: int, rows: list) -> bool:
    """Whether the quick rows of data[:cut] are what `shape._LINE` and json.loads read: every key counted is where the
    matched lines hold it and nowhere else (the other lines' own counts taken off)."""
    import re

    chunk = data[:cut]
    if b"\\u" in chunk:
        return False
    matched = sum(1 for r in rows if r[0])
    others = [line for line, r in zip(chunk.split(b"\n"), rows, strict=False) if not r[0]]
    reviews = len(re.findall(_REVIEW_VERDICT, chunk)) - sum(len(re.findall(_REVIEW_VERDICT, o)) for o in others)
    agents = 2 * sum(1 for r in rows if r[5])
    for key in VERIFY:
        want = matched + (reviews if key == b'"verdict"' else 0) if key != b'"agent_' else agents
        if chunk.count(key) - sum(o.count(key) for o in others) != want:
            return False
    return True


def _stage(stage: str, path: str, start: int, end: int) -> int:
    """One reader's range, up to `stage`; the lines seen (so nothing is optimised away)."""
    import hashlib
    import re
    from binascii import hexlify

    from donegate.report import count, read, shape

    if stage == "scan":
        return _scan_apart(path, start, end)
    if stage == "msgspec":
        return _msgspec(path, start, end)
    head, line_re, n = re.compile(_HEAD).finditer, shape._LINE, 0
    strings = re.compile(_STRINGS).findall
    quick = re.compile(_QUICK.replace(b"NUM", shape._NUM).replace(b"STR", shape._STR)).findall
    for _, data, cut in count._chunks(path, start, end):
        if stage == "read":
            n += cut
            continue
        lines = data[:cut].split(b"\n")
        n += len(lines)
        if stage in ("sha256", "head", "quick", "verified", "strings", "line"):
            list(map(hexlify, map(read._DIGEST, map(hashlib.sha256, lines))))
        if stage == "head":
            n += len(list(head(data, 0, cut)))
        elif stage in ("quick", "verified"):
            rows = quick(data, 0, cut)
            n += len(rows) if stage == "quick" or _verified(data, cut, rows) else len(shape.ROWS(data, 0, cut))
        elif stage == "strings":
            n += len(strings(data, 0, cut))
        elif stage == "line":
            n += len(list(line_re(data, 0, cut)))
    return n


def _scan_apart(path: str, start: int, end: int) -> int:
    """The report's own scan of one range, the CPU of its parse (`shape.rows`: `neutral` and the expression) timed
    apart and printed (`PARSE`): what is left is the floor of the pass with a parser that cost nothing (the reads, the
    split, the chain, the counting)."""
    import time

    from donegate.report import count, read

    spent, rows_of = [0.0], count.shape_rows

    def timed(data: bytes, cut: int, lines: list[bytes]) -> list:
        t = time.process_time()
        try:
            return rows_of(data, cut, lines)
        finally:
            spent[0] += time.process_time() - t

    count.shape_rows = timed
    try:
        lines = count.scan(path, start, end, read.Options()).lines
    finally:
        count.shape_rows = rows_of
    print(f"{PARSE} {spent[0]:.4f}", flush=True)
    return lines


def _msgspec(path: str, start: int, end: int) -> int:
    """A C JSON parser in place of the expression (not the kit's: a dependency, `pip install msgspec`): the reads, the
    split, the chain's sha256 and each line decoded by msgspec into the fields the report reads (nothing counted)."""
    import hashlib
    from binascii import hexlify

    import msgspec

    from donegate.report import count, read

    def struct(name: str, **fields: type) -> type:  # every field optional (a line without it still decodes)
        return msgspec.defstruct(name, [(k, t | None, None) for k, t in fields.items()])

    gates = struct("Gates", acceptance=struct("Acceptance", total=int, passed=int), review=struct("Review", cost_usd=float))
    line_type = struct("Line", event=str, time=str, repo=str, session=str, verdict=str, gates=gates, client=str,
                       duration=float, config=str)
    decode, n = msgspec.json.Decoder(line_type).decode, 0
    for _, data, cut in count._chunks(path, start, end):
        lines = data[:cut].split(b"\n")
        list(map(hexlify, map(read._DIGEST, map(hashlib.sha256, lines))))
        for line in lines:
            try:
                decode(line)
                n += 1
            except msgspec.DecodeError:
                continue
    return n


PARSE = "parse-cpu"  # a reader's line on the stage's output: the CPU its `scan` spent parsing (`_scan_apart`)


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
    for stage in FLOOR:
        m = measure([sys.executable, __file__, stage, str(ledger_file)], ledger_file.with_suffix(".floor"), env)
        w = measure(["wc", "-l", str(ledger_file)], ledger_file.with_suffix(".wc"), env)
        out.append(f"  + {stage:<7} {m[0]:6.2f} s, CPU {m[1]:6.2f} s ; x wc -l: time {m[0] / w[0]:5.1f}, "
                   f"CPU {m[1] / max(w[1], 1e-3):5.1f}")
        if stage == "scan":
            out.append(_apart(ledger_file.with_suffix(".floor"), m, w))
    return out


def _apart(output: Path, m: tuple, w: tuple) -> str:
    """The scan's parse apart from the rest of it (`_scan_apart`): the rest is what a parser that cost nothing leaves,
    against the 10x `wc -l` goal (two idle cores: the rest's CPU over two; `wc -l`'s CPU stands for its time on a quiet
    machine, as its time on a loaded one would flatter the ratio)."""
    from report_bench import TARGET_FIRST

    parse = sum(float(line.split()[1]) for line in output.read_text().splitlines() if line.startswith(PARSE))
    rest = m[1] - parse
    return (f"    of it the parse (shape.rows) {parse:5.2f} CPU-s; the rest (reads, split, chain, counting, start-up) "
            f"{rest:5.2f} CPU-s, x wc -l CPU {rest / max(w[1], 1e-3):4.1f}: with a free parser, at least {rest / 2:4.2f} s "
            f"on two idle cores, {rest / 2 / max(w[1], 1e-3):4.1f}x wc -l's {w[1]:.2f} CPU-s (about its time when "
            f"the machine is quiet; the goal {TARGET_FIRST}x)")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
