"""`donegate report` on a 1,000,000-line ledger, against `jq` doing the same per-configuration counts.

The ledger is generated in the gate's exact line format (checked against `json.dumps` on a sample)
with a realistic mix: sessions of one to seven stops (blocks, then a pass or a give-up after six
blocks), assertion messages on failing stops, reviewer results on the configurations that review,
writer events and a few hundred labels. Both tools read the same file, one after the other, in this
run; their numbers are compared. The report runs first with nothing kept, then again with nothing new (it
reads only what was added since: `donegate.report.resume`, or nothing but what it finished), each run followed
at once by `wc -l` of the same file; `--html` the same (the page starts from what the report kept). Time and CPU
are shown as ratios to the `wc -l` beside each run (medians, and the spread over the runs) and to jq (CPU: other
work on the machine does not move it). Targets, for both: the first at most
10x `wc -l`, one with nothing new at most 3x, at most 100 MB (the report's whole process tree, summed).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
LINES = 1_000_000
TARGET_FIRST, TARGET_AGAIN, TARGET_MB = 10, 3, 100  # x `wc -l` of the ledger; MB
TIMEOUT = 900  # seconds for one tool on the whole ledger

CONFIGS = {"tests": None, "tests+pair": "pair", "tests+critic": "critic", "default": None}
BLOCKS_BEFORE_END = [0] * 40 + [1] * 25 + [2] * 15 + [3] * 8 + [4] * 4 + [5] * 2 + [6] * 6  # 6: gives up
MESSAGES = [
    "assert 4300 == 3870\n +  where 4300 = order_total([Line(price=430, qty=10)])",
    "AssertionError: expected KeyError for a missing document id, nothing was raised",
    "assert [{'a': 1}, {'a': 3}] == [{'a': 1}, {'a': 2}, {'a': 3}]\n  At index 1 diff: {'a': 3} != {'a': 2}\n"
    "  Right contains one more item: {'a': 3}",
    "TypeError: rename_table() missing 1 required positional argument: 'new_name'",
    "assert None == 'users'\n +  where None = <Table 'people'>.name",
    "Failed: DID NOT RAISE <class 'ValueError'>",
]

# jq 1.6 copies a nested object on every update of it (a per-session map under each configuration
# made the run quadratic: 10 s for 20,000 lines), so sessions live in one flat map, keyed "s<TAB>id",
# and the counts per configuration are built from it at the end: linear, the fastest jq we found.
JQ_PROGRAM = r"""
reduce (inputs | select(.event == "stop")) as $s ({};
  ("s\t" + $s.session) as $k | ("n\t" + $s.config) as $n | ("b\t" + $s.config) as $b
  | .[$k] = [$s.config, $s.verdict, ($s.gates.acceptance.passed // 0), ($s.gates.acceptance.total // 0),
             ((.[$k][4] // false) or $s.verdict == "gave_up")]
  | .[$n] = (.[$n] + 1)
  | .[$b] = (.[$b] + (if $s.verdict == "block" or $s.verdict == "hint" then 1 else 0 end)))
| reduce to_entries[] as $e ({};
    ($e.key | split("\t")) as [$kind, $name]
    | if $kind == "s" then
        $e.value as [$c, $v, $p, $t, $g]
        | .[$c] = ((.[$c] // {}) as $o | $o
            | .sessions = ($o.sessions + 1)
            | .ended_passing = ($o.ended_passing + (if $v == "pass" or $v == "review_error" then 1 else 0 end))
            | .requirements_passed = ($o.requirements_passed + $p) | .requirements_sealed = ($o.requirements_sealed + $t)
            | .gave_up = ($o.gave_up + (if $g then 1 else 0 end)))
      elif $kind == "n" then .[$name].stops = $e.value
      else .[$name].blocks = $e.value end)
"""
COMPARED = ("stops", "blocks", "sessions", "ended_passing", "requirements_passed", "requirements_sealed", "gave_up")


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps(value, separators=...) without a new encoder a call
_STRINGS: dict[str, str] = {}  # a line's repository, session and configuration: each written again at every stop


def _dumps(value) -> str:
    if type(value) is str:
        text = _STRINGS.get(value)
        if text is None:
            if len(_STRINGS) > 4096:  # a session's id is not written again after its session
                _STRINGS.clear()
            text = _STRINGS[value] = _ENCODE(value)
        return text
    return _ENCODE(value)


def _review(rnd: random.Random, mode: str, blocking: bool) -> dict:
    findings = [{"severity": "blocking" if blocking and k == 0 else "minor", "file": "tinydb/table.py",
                 "line": rnd.randint(10, 700), "summary": "rename() leaves the old table's cache behind",
                 "evidence": "table.py: self._tables.pop(old) without clearing _query_cache", "reviewers": ["A", "B"]}
                for k in range(rnd.randint(0, 2) + blocking)]
    entry = lambda role: {"role": role, "approve": not blocking, "findings": findings, "turns": rnd.randint(3, 15),
                          "cost_usd": round(rnd.uniform(0.01, 0.03), 6), "duration": round(rnd.uniform(8, 40), 3),
                          "error": "", "subtype": "success", "model": "claude-sonnet"}
    entries = [entry("A"), entry("B" if mode == "pair" else "critic")]
    return {"mode": mode, "verdict": "block" if blocking else "approve", "findings": findings, "reviewers": entries,
            "errors": [], "cost_usd": round(sum(e["cost_usd"] for e in entries), 6),
            "duration": round(rnd.uniform(10, 45), 3), "diff_chars": rnd.randint(400, 9000), "diff_cut": False,
            "state": "%032x" % rnd.getrandbits(128)}


def _gates(rnd: random.Random, sealed: int, failing: int, review: dict | None, gave_up: bool) -> str:
    failed = [{"id": f"test_acceptance.py::test_requirement_{k}", "message": rnd.choice(MESSAGES)} for k in range(failing)]
    gates = {"integrity": {"ok": True, "tests": sealed},
             "scope": {"ok": True, "protected": [], "outside": [], "problems": [], "duration": round(rnd.uniform(0.002, 0.02), 4)},
             "acceptance": {"ok": not failing, "total": sealed, "passed": sealed - failing, "failed": failing,
                            "failing": failed, "problem": "", "duration": round(rnd.uniform(0.4, 3.0), 4)}}
    if review:
        gates["review"] = review
    if gave_up:
        gates["breaker"] = {"gave_up": "6 blocks in this session (max_blocks)", "was": "block"}
    return _dumps(gates)


class Writer:
    """Appends lines with the ledger's hash chain, as `ledger.append` would, but in one pass."""

    def __init__(self, fh) -> None:
        self.fh, self.prev, self.count = fh, "0" * 64, 0

    def stop(self, when: str, repo: str, sid: str, stop: int, verdict: str, gates: str, blocks: int, dur: float, cfg: str) -> str:
        line = (f'{{"v":1,"event":"stop","time":"{when}","repo":{_dumps(repo)},"session":{_dumps(sid)},"stop":{stop},'
                f'"stop_hook_active":{"true" if stop > 1 else "false"},"verdict":"{verdict}","gates":{gates},'
                f'"blocks":{blocks},"duration":{dur!r},"kit_version":"0.1.0","config":{_dumps(cfg)},"prev":"{self.prev}"}}')
        return self.raw(line)

    def event(self, record: dict) -> str:
        return self.raw(_dumps({"v": 1, **record, "prev": self.prev}))

    def raw(self, line: str) -> str:
        data = line.encode()
        self.fh.write(data + b"\n")
        self.prev = hashlib.sha256(data).hexdigest()
        self.count += 1
        return line


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}+00:00"


def generate(path: Path, lines: int = LINES, seed: int = 6) -> None:
    """A ledger of `lines` lines (give or take the last session), in the gate's format."""
    with open(path, "wb") as fh:
        generate_into(Writer(fh), lines, seed)


def generate_into(w: Writer, lines: int = LINES, seed: int = 6) -> None:
    """`generate`'s lines, given to `w`."""
    rnd = random.Random(seed)
    repos = [f"/home/dev/work/task-{k}" for k in range(20)]
    t = 1_796_000_000.0
    pools: dict[tuple, list[str]] = {}

    def gates(sealed: int, failing: int, mode: str | None, blocking: bool, gave_up: bool) -> str:
        # Four gate blobs per kind (a few hundred in all): json.dumps per line would make the set-up slow.
        pool = pools.setdefault((sealed, failing, mode, blocking, gave_up), [])
        if len(pool) < 4:
            pool.append(_gates(rnd, sealed, failing, _review(rnd, mode, blocking) if mode else None, gave_up))
        return rnd.choice(pool)

    written: set[tuple[str, str]] = set()
    labels = 0
    while w.count < lines:
        sid = "%08x-%04x-4%03x-a%03x-%012x" % (rnd.getrandbits(32), rnd.getrandbits(16), rnd.getrandbits(12),
                                               rnd.getrandbits(12), rnd.getrandbits(48))
        cfg = rnd.choice(list(CONFIGS))
        mode, repo, sealed = CONFIGS[cfg], rnd.choice(repos), rnd.choice(range(23, 54, 3))
        if (repo, cfg) not in written or rnd.random() < 0.005:
            written.add((repo, cfg))
            w.event({"event": "write", "time": _stamp(t), "repo": repo, "config": cfg, "tests": sealed,
                     "new": sealed - 5, "existing": 5, "model": "claude-sonnet", "turns": rnd.randint(8, 30),
                     "cost_usd": round(rnd.uniform(0.2, 0.6), 6), "duration": round(rnd.uniform(25, 60), 1), "attempts": 1})
        n_blocks = rnd.choice(BLOCKS_BEFORE_END)
        hint = mode is not None and n_blocks < 6 and rnd.random() < 0.1
        failing = rnd.randint(1, 3)
        for stop in range(1, n_blocks + 2 + hint):
            t += rnd.uniform(20, 120)
            dur = round(rnd.uniform(0.5, 4.0), 4)
            if stop <= n_blocks:
                line = w.stop(_stamp(t), repo, sid, stop, "block", gates(sealed, failing, None, False, False), stop, dur, cfg)
                failing = max(1, failing - (rnd.random() < 0.3))
                if rnd.random() < 0.002 and labels < 500:
                    labels += 1
                    w.event({"event": "label", "time": _stamp(t + 1), "ref": hashlib.sha256(line.encode()).hexdigest()[:10],
                             "label": rnd.choice(["justified", "justified", "unjustified"]), "note": "",
                             "session": sid, "stop": stop, "stop_time": _stamp(t), "repo": repo, "config": cfg,
                             "verdict": "block"})
            elif n_blocks == 6:
                w.stop(_stamp(t), repo, sid, stop, "gave_up", gates(sealed, failing, None, False, True), 0, dur, cfg)
            elif hint and stop == n_blocks + 1:
                w.stop(_stamp(t), repo, sid, stop, "hint", gates(sealed, 0, mode, True, False), stop, dur + 20, cfg)
            else:
                w.stop(_stamp(t), repo, sid, stop, "pass", gates(sealed, 0, mode, False, False), 0,
                       dur + (20 if mode else 0), cfg)


def check_format(path: Path, sample: int = 2000) -> None:
    """The generated lines must be exactly what `json.dumps` of the record gives (as the kit writes)."""
    with open(path, "rb") as fh:
        for k, line in zip(range(sample), fh, strict=False):
            raw = line.rstrip(b"\n")
            if _dumps(json.loads(raw)).encode() != raw:
                raise SystemExit(f"bench: generated line {k + 1} is not in the kit's format")


def _tree_rss(root: int) -> int:
    """The resident bytes of `root` and every process under it, summed (shared pages counted in each, as RSS counts
    them; 0 for a process already gone)."""
    total, todo, page = 0, [root], os.sysconf("SC_PAGE_SIZE")
    while todo:
        pid = todo.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
            for task in os.listdir(f"/proc/{pid}/task"):
                todo += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_measured(argv: list[str], out: Path, env: dict | None = None) -> tuple[float, float, float, int, float]:
    """(wall seconds, CPU seconds of the process tree, peak RSS in MB of its largest process, exit code, peak RSS in MB
    of the whole process tree, summed: sampled every 5 ms, on Linux; 0 elsewhere)."""
    t0 = time.perf_counter()
    tree = 0
    with open(out, "wb") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.PIPE, cwd=KIT, env=env)
        deadline = t0 + TIMEOUT
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            tree = max(tree, _tree_rss(proc.pid))
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        took = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        proc.stderr.close()
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, max(tree / 2**20, usage.ru_maxrss / 1024)


def _agreement(report: dict, jq: dict) -> list[str]:
    ours = {g["config"]: g for g in report["groups"]}
    diffs = [f"{cfg} {name}: donegate {ours.get(cfg, {}).get(name)} jq {counts.get(name)}"
             for cfg, counts in jq.items() for name in COMPARED if ours.get(cfg, {}).get(name) != counts.get(name)]
    if set(ours) != set(jq):
        diffs.append(f"configurations differ: {sorted(ours)} vs {sorted(jq)}")
    return diffs


def _side_by_side(argv: list[str], out: Path, env: dict, runs: int, floor: list[str], before=None) -> list[tuple]:
    """`runs` runs of `argv` (each after `before()`), each followed at once by `floor` (`wc -l`): (wall, CPU, peak
    RSS MB, exit code, the floor's wall, the floor's CPU) per run. A ratio is taken within one pair: the machine is
    shared, and what it does to one run it does to the floor beside it. Last: the run's process tree's peak RSS, MB."""
    measured = []
    for _ in range(runs):
        if before:
            before()
        m = run_measured(argv, out, env)
        w = run_measured(floor, out.with_suffix(".wc"), env)
        measured.append((*m[:4], w[0], w[1], m[4]))
    return measured


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}" if len(values) > 1 else "one run"


def bench_report(tmpdir: Path, repeat: int = 5) -> list[str]:
    tmpdir = Path(tmpdir)
    ledger_file = tmpdir / "ledger.jsonl"
    t0 = time.perf_counter()
    generate(ledger_file)
    check_format(ledger_file)
    n_lines = sum(1 for _ in open(ledger_file, "rb"))
    size_mb = ledger_file.stat().st_size / 1e6
    out = [f"ledger: {n_lines:,} lines, {size_mb:,.0f} MB, generated in {time.perf_counter() - t0:.1f} s"]
    env = {**os.environ, "DONEGATE_HOME": str(tmpdir)}
    base = [sys.executable, "-m", "donegate", "report", "--json", str(ledger_file)]
    page = [sys.executable, "-m", "donegate", "report", str(ledger_file), "--html", str(tmpdir / "page.html")]
    kept = tmpdir / "state" / "report"
    cold = lambda: shutil.rmtree(kept, ignore_errors=True)  # noqa: E731 - nothing kept: the first report
    wc = ["wc", "-l", str(ledger_file)]
    for _ in range(2):
        run_measured(wc, tmpdir / "wc.txt", env)  # the page cache warm
    results: dict[str, list[tuple]] = {}
    # Each run is followed by `wc -l` of the same file, and each ratio taken within its pair: medians and the spread.
    for name, argv, runs, before in (
            ("report first (nothing kept), 2 processes", base, 3, cold),
            ("report first (nothing kept), --jobs 1", base + ["--jobs", "1"], 1, cold),
            ("report, nothing new", base, repeat, None),
            ("--html first (nothing kept)", page, 2, cold),
            ("--html, nothing new", page, repeat, None)):
        if "nothing new" in name:
            run_measured(argv, tmpdir / "warm.out", env)  # what the next ones start from
        measured = _side_by_side(argv, tmpdir / ("page.txt" if "--html" in name else "report.json"), env, runs, wc, before)
        if any(m[3] != 0 for m in measured):
            return out + [f"donegate {name} failed (exit {[m[3] for m in measured]})"]
        results[name] = measured
        t = [m[0] / m[4] for m in measured]
        c = [m[1] / max(m[5], 1e-3) for m in measured]
        out.append(f"{name}: {_median([m[0] for m in measured]):.2f} s, CPU {_median([m[1] for m in measured]):.2f} s, "
                   f"peak RSS {max(m[6] for m in measured):.0f} MB (the process tree summed; largest process "
                   f"{max(m[2] for m in measured):.0f}); x wc -l: time {_median(t):.1f} "
                   f"({_spread(t)}), CPU {_median(c):.1f} ({_spread(c)}), {runs} run(s)")
    floor = [m[4] for ms in results.values() for m in ms]
    floor_cpu = [m[5] for ms in results.values() for m in ms]
    out.append(f"wc -l (reading the file once), beside each run: {_median(floor):.2f} s ({min(floor):.2f}-{max(floor):.2f}), "
               f"CPU {_median(floor_cpu):.2f} s; load {os.getloadavg()[0]:.1f}")
    ratio = {name: _median([m[0] / m[4] for m in ms]) for name, ms in results.items()}
    first, again = results["report first (nothing kept), 2 processes"], results["report, nothing new"]
    hfirst, hagain = results["--html first (nothing kept)"], results["--html, nothing new"]
    report = json.loads((tmpdir / "report.json").read_text())
    jq = shutil.which("jq") or ("/usr/bin/jq" if Path("/usr/bin/jq").exists() else None)
    if jq:
        (tmpdir / "counts.jq").write_text(JQ_PROGRAM)
        jq_took, jq_cpu, jq_mb, code, _ = run_measured([jq, "-n", "-c", "-f", str(tmpdir / "counts.jq"), str(ledger_file)], tmpdir / "jq.json")
        if code != 0:
            out.append(f"jq failed (exit {code})")
        else:
            diffs = _agreement(report, json.loads((tmpdir / "jq.json").read_text()))
            med = lambda ms, k: _median([m[k] for m in ms])  # noqa: E731
            out.append(f"jq, the same per-configuration counts: {jq_took:.2f} s, CPU {jq_cpu:.1f} s, peak RSS {jq_mb:.0f} MB")
            out.append(f"x jq, time (CPU):       report first {med(first, 0) / jq_took:.3f} ({med(first, 1) / jq_cpu:.3f}), "
                       f"nothing new {med(again, 0) / jq_took:.3f} ({med(again, 1) / jq_cpu:.3f}) | --html first "
                       f"{med(hfirst, 0) / jq_took:.3f} ({med(hfirst, 1) / jq_cpu:.3f}), nothing new "
                       f"{med(hagain, 0) / jq_took:.3f} ({med(hagain, 1) / jq_cpu:.3f})")
            out.append("numbers: donegate and jq agree on " + (f"{len(COMPARED)} counts for each of {len(report['groups'])} configurations"
                                                                if not diffs else f"NOTHING: {'; '.join(diffs[:5])}"))
    else:
        out.append("jq is not installed (apt-get install jq): no comparison")
    from report_floor import floor

    out.append("the first report's floor, its first pass taken apart (2 readers, each stage adds one thing; wc -l beside):")
    out += floor(ledger_file, run_measured, env)
    verdict = lambda ok: "met" if ok else "MISSED"  # noqa: E731
    for what, a, b in (("report", "report first (nothing kept), 2 processes", "report, nothing new"),
                       ("--html", "--html first (nothing kept)", "--html, nothing new")):
        mb = max(m[6] for m in results[a] + results[b])  # the whole process tree's
        out.append(f"targets, {what} (median x wc -l): first at most {TARGET_FIRST:g}x {verdict(ratio[a] <= TARGET_FIRST)}, "
                   f"nothing new at most {TARGET_AGAIN:g}x {verdict(ratio[b] <= TARGET_AGAIN)}, at most {TARGET_MB} MB "
                   f"{verdict(mb <= TARGET_MB)}")
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="donegate-report-bench-") as tmp:
        print("\n".join(bench_report(Path(tmp))))
