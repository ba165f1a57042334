"""The report's fast path (`report.read`: the kit's stop lines read from their bytes) and its fallback (`json.loads`)
give the same summary on any mix of lines: a seeded random mix of the kit's lines and lines in other shapes (keys
in another order, other spacing, escapes, other verdicts and times, braces in strings, odd figures, appeals, the
project's own suite, held-back tests, labels, junk, a torn last line), read whole, by two processes, from what an
earlier report kept, and a chain break still named at its line."""

from __future__ import annotations

import collections
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.support.repos import KIT
from donegate import report

sys.path.insert(0, str(KIT / "bench"))
import report_bench  # noqa: E402

Line = dict[str, Any]


def _kit(rec: Line) -> bytes:
    return json.dumps(rec, separators=(",", ":")).encode()


def _moved(rec: Line) -> Line:
    """The same keys, `verdict` after `gates`."""
    out = {k: v for k, v in rec.items() if k != "verdict"}
    return {**{k: out[k] for k in list(out)[:list(out).index("gates") + 1]}, "verdict": rec["verdict"],
            **{k: out[k] for k in list(out)[list(out).index("gates") + 1:]}}


def _before_blocks(rec: Line, **more: Any) -> Line:
    """`more` put just before "blocks", where the kit writes its client and the agent's figures."""
    keys = list(rec)
    at = keys.index("blocks") if "blocks" in keys else len(keys) - 1
    return {**{k: rec[k] for k in keys[:at]}, **more, **{k: rec[k] for k in keys[at:]}}


def _gates(rec: Line, **gates: Any) -> Line:
    return {**rec, "gates": {**rec["gates"], **gates}}


def _acceptance(rec: Line, **fields: Any) -> Line:
    return _gates(rec, acceptance={**rec["gates"]["acceptance"], **fields})


def _between(fields: Line, after: str, **more: Any) -> Line:
    """`fields` with `more` put just after key `after`."""
    keys = list(fields)
    at = keys.index(after) + 1
    return {**{k: fields[k] for k in keys[:at]}, **more, **{k: fields[k] for k in keys[at:]}}


def _repeated(key: str, value: Any) -> Callable[[Line], bytes]:
    """The kit's line with top-level `key` written a second time (`value`) after the gates: json.loads keeps the last."""
    return lambda rec: _kit(rec).replace(b',"blocks":', b',"%s":%s,"blocks":' % (key.encode(), _kit(value)), 1)


def _renamed(change: Callable[[Line], Line], key: bytes) -> Callable[[Line], bytes]:
    """The record changed by `change`, whose key "zz" is then written as `key`: a key inside the gates written again
    (json.loads keeps the last)."""
    return lambda rec: _kit(change(rec)).replace(b'"zz":', key, 1)


# Each: (name, a stop record -> (record, how it is written)). Most give a line the fast path refuses (json.loads reads
# it); some give one it takes with a field it must read right (the agent's figures, the client, a review's cost).
KIT_DUMPS: Callable[[Line], bytes] = _kit
MUTATIONS: list[tuple[str, Callable[[Line, random.Random], tuple[Line, Callable[[Line], bytes]]]]] = [
    ("keys in another order", lambda r, rnd: (_moved(r), _kit)),
    ("spaces after separators", lambda r, rnd: (r, lambda x: json.dumps(x).encode())),
    ("an escaped repo", lambda r, rnd: ({**r, "repo": r["repo"] + '/"q"'}, _kit)),
    ("a non-ASCII session, raw", lambda r, rnd: ({**r, "session": r["session"] + "é"},
                                                 lambda x: json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode())),
    ("a non-ASCII config, escaped", lambda r, rnd: ({**r, "config": "tests-é"}, _kit)),
    ("another verdict", lambda r, rnd: ({**r, "verdict": rnd.choice(["error", "unsealed", "maybe"])}, _kit)),
    ("an error let through", lambda r, rnd: (_gates({**r, "verdict": "error"}, counter_error="broken"), _kit)),
    ("a time in another form", lambda r, rnd: ({**r, "time": r["time"][:19] + rnd.choice(["Z", "+02:00", ".5-03:00"])}, _kit)),
    ("a brace in a scope string", lambda r, rnd: (_gates(r, scope={**r["gates"]["scope"], "problems": ["x{y}"]}), _kit)),
    ("an object in the scope", lambda r, rnd: (_gates(r, scope={**r["gates"]["scope"], "more": {"a": 1}}), _kit)),
    ("a leak gate", lambda r, rnd: ({**r, "gates": {"integrity": r["gates"]["integrity"], "leak": {"markers": 1},
                                                   **{k: v for k, v in r["gates"].items() if k != "integrity"}}}, _kit)),
    ("an implausible count", lambda r, rnd: (_acceptance(r, total=123456789), _kit)),
    ("no acceptance", lambda r, rnd: ({**r, "gates": {k: v for k, v in r["gates"].items() if k != "acceptance"}}, _kit)),
    ("the agent's figures", lambda r, rnd: (_before_blocks(r, agent_usd=rnd.choice([1.25, None, 0, 3e-05]),
                                                           agent_seconds=rnd.choice([61.5, None, 7])), _kit)),
    ("odd agent figures", lambda r, rnd: (_before_blocks(r, agent_usd="x", agent_seconds=-1), _kit)),
    ("a client", lambda r, rnd: (_before_blocks(r, client=rnd.choice(["codex", "gemini", "claude"])), _kit)),
    ("a review with a total", lambda r, rnd: (_gates(r, review={"mode": "pair", "reviewers": [{"cost_usd": 0.5}],
                                                                 "cost_usd": rnd.choice([0.75, 1, 2.5e-3]),
                                                                 "duration": 3.0, "diff_chars": 10}), _kit)),
    ("a review without a total", lambda r, rnd: (_gates(r, review={"mode": "pair", "reviewers": [{"cost_usd": 0.5},
                                                                                                    {"cost_usd": "x"}]}), _kit)),
    ("a review whose total is text", lambda r, rnd: (_gates(r, review={"reviewers": [{"cost_usd": 0.5}], "cost_usd": "1.0",
                                                                        "duration": 1}), _kit)),
    ("held-back tests", lambda r, rnd: (_acceptance(r, held_back={"shown_passed": rnd.random() < 0.5,
                                                                   "blocked": rnd.random() < 0.5}), _kit)),
    ("the project's own suite", lambda r, rnd: (_gates(r, own={"added": rnd.randint(0, 3), "failing": [{"contract": False}],
                                                                "weakened": [{"test": "t", "rule": "r"}]}), _kit)),
    # held-back tests and the own suite are read where the kit writes them, once (`shape._ACCEPTANCE_READ`): elsewhere
    # or twice, json.loads reads the line
    ("held-back tests among the counts", lambda r, rnd: (_gates(r, acceptance=_between(r["gates"]["acceptance"], "passed", held_back={
        "shown_passed": True, "blocked": rnd.random() < 0.5})), _kit)),
    ("held-back tests twice", lambda r, rnd: (r, _renamed(lambda x: _acceptance(x, held_back={"shown_passed": True, "blocked": True},
                                                                        zz={"shown_passed": rnd.random() < 0.5, "blocked": False}),
                                                          b'"held_back":'))),
    ("held-back tests in another gate", lambda r, rnd: (_gates(r, scope={**r["gates"]["scope"],
                                                                         "held_back": {"shown_passed": True, "blocked": True}}), _kit)),
    ("the own suite twice", lambda r, rnd: (r, _renamed(lambda x: _gates(x, own={"added": 1, "failing": []},
                                                                         zz={"added": rnd.randint(2, 5), "failing": []}), b'"own":'))),
    ("the own suite after another gate", lambda r, rnd: (_gates(r, cache={"hit": False}, own={"added": rnd.randint(0, 3)}), _kit)),
    ("the own suite inside a gate", lambda r, rnd: (_gates(r, scope={**r["gates"]["scope"], "own": {"added": 7}}), _kit)),
    ("an appeal", lambda r, rnd: (_gates({**r, "verdict": "appealed"}, appeal={"accepted": True, "reason": "the test is wrong",
                                                                              "failing": ["t::a"]}), _kit)),
    ("a cached stop", lambda r, rnd: (_before_blocks(r, cached=True), _kit)),
    ("a null duration", lambda r, rnd: ({**r, "duration": None}, _kit)),
    ("no session", lambda r, rnd: ({k: v for k, v in r.items() if k != "session"}, _kit)),
    ("a repeated verdict", lambda r, rnd: (r, _repeated("verdict", "block" if r["verdict"] == "pass" else "pass"))),
    ("a repeated session", lambda r, rnd: (r, _repeated("session", r["session"][::-1]))),
    ("a repeated time", lambda r, rnd: (r, _repeated("time", "2026-12-03T00:00:00.000+00:00"))),
    ("a repeated gates", lambda r, rnd: (r, _repeated("gates", {"acceptance": {"ok": True, "total": 9, "passed": 9}}))),
    ("a repeated schema version", lambda r, rnd: (r, _repeated("v", "1"))),
    ("a repeated acceptance count", lambda r, rnd: (r, _renamed(lambda x: _acceptance(x, zz=x["gates"]["acceptance"]["total"] + 5),
                                                                b'"total":'))),
    ("a repeated acceptance count, escaped", lambda r, rnd: (r, _renamed(lambda x: _acceptance(x, zz=0), b'"\\u0070assed":'))),
    ("a repeated acceptance gate", lambda r, rnd: (r, _renamed(lambda x: _gates(x, zz={"ok": True, "total": 99, "passed": 99}),
                                                               b'"acceptance":'))),
    ("a repeated review", lambda r, rnd: (r, _renamed(lambda x: _gates(x, review={"reviewers": [], "cost_usd": 0.5, "duration": 1.0,
                                                                              "diff_chars": 3}, zz=None), b'"review":'))),
    ("the agent's figures away from blocks", lambda r, rnd: (_before_blocks(r, agent_usd=1.5, agent_seconds=30, cached=True),
                                                             _kit)),
]
OTHER_LINES = [
    lambda rnd, ref, sid: {"event": "label", "time": "2026-12-02T10:00:00.000+00:00", "ref": ref,
                           "label": rnd.choice(["justified", "unjustified", "upheld", "rejected"]), "note": "n",
                           "session": sid, "stop": 1, "stop_time": "2026-12-01T10:00:00.000+00:00", "repo": "/r",
                           "config": "tests", "verdict": "block"},
    lambda rnd, ref, sid: {"event": "decision", "time": "2026-12-02T11:00:00.000+00:00", "ref": ref,
                           "decision": rnd.choice(["approve", "reject"]), "note": ""},
    lambda rnd, ref, sid: {"event": "write", "time": "2026-12-02T12:00:00.000+00:00", "repo": "/home/dev/work/task-1",
                           "config": "tests", "cost_usd": 0.25},
    lambda rnd, ref, sid: {"event": "vacuum"},
]
JUNK = [b"", b"not json", b"[1, 2]", b'{"v":2,"event":"stop"}', b"\xff\xfe", b'{"v":1,"event":"stop","time":"x"']


def _chain(raws: list[bytes]) -> list[bytes]:
    """Each JSON line's `prev` set to the hash of the line before it, as the kit appends (the chain stays intact)."""
    out, prev = [], "0" * 64
    for raw in raws:
        try:
            rec = json.loads(raw)
        except ValueError:
            rec = None
        if isinstance(rec, dict) and raw.endswith(b'"}') and raw[-75:-66] == b',"prev":"':
            raw = raw[:-66] + prev.encode() + b'"}'
        out.append(raw)
        prev = hashlib.sha256(raw).hexdigest()
    return out


def mixed_ledger(path: Path, seed: int, lines: int = 600, share: float = 0.2, torn: bool = True,
                 intact: bool = False) -> list[bytes]:
    """A ledger of the bench's lines (the kit's shape) with a `share` of them put in another shape, other events and
    junk among them, a torn last line; returns its lines. `intact`: no junk, every line compact (the chain holds)."""
    rnd = random.Random(seed)
    shapes = [m for m in MUTATIONS if not (intact and m[0] == "spaces after separators")]
    report_bench.generate(path, lines, seed=seed)
    raws = path.read_bytes().splitlines()
    out = []
    for raw in raws:
        rec = json.loads(raw)
        if rec.get("event") == "stop" and rnd.random() < share:
            _, mutate = rnd.choice(shapes)
            body, dumps = mutate({k: v for k, v in rec.items() if k != "prev"}, rnd)
            raw = dumps({**body, "prev": rec["prev"]})
        out.append(raw)
        if rnd.random() < share / 4:
            extra = rnd.choice(OTHER_LINES)(rnd, hashlib.sha256(raw).hexdigest()[:10], str(rec.get("session")))
            out.append(_kit({"v": 1, **extra, "prev": "0" * 64}))
        if rnd.random() < share / 10 and not intact:
            out.append(rnd.choice(JUNK))
    out = _chain(out)
    tail = rnd.choice(out[: len(out) // 2])[: rnd.randint(5, 200)] if torn else b""
    path.write_bytes(b"\n".join(out) + b"\n" + tail)
    return out + ([tail] if tail else [])


def _summaries(path: Path, jobs: int, **kw: Any) -> tuple[dict, dict]:
    return (report.summarize([path], jobs=jobs, fast=True, **kw), report.summarize([path], jobs=jobs, fast=False, **kw))


@pytest.mark.parametrize("seed", range(3))
def test_the_fast_path_and_json_loads_agree_on_a_mixed_ledger(kit_home, monkeypatch, seed):
    path = kit_home / "ledger.jsonl"
    mixed_ledger(path, seed, lines=400, share=0.1 + 0.1 * seed)
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)  # two processes, a range each, on a small file too
    since = report.parse_since("2026-11-30T12:00")
    for by in report.BY:
        for jobs, kw in ((1, {}), (2, {}), (1, {"since": since})):
            fast, slow = _summaries(path, jobs, by=by, **kw)
            assert fast == slow, (by, jobs, kw)
    whole = report.summarize([path])
    assert whole["total"]["stops"] > 250 and whole["skipped"]["count"] > 0  # both paths had lines to read


def test_every_mutation_is_read_alike_on_its_own(kit_home):
    """One line of each shape after a run of the kit's lines: a disagreement names the shape."""
    rnd = random.Random(11)
    base = kit_home / "base.jsonl"
    report_bench.generate(base, 40, seed=11)
    raws = base.read_bytes().splitlines()
    stop = next(json.loads(r) for r in raws if b'"event":"stop"' in r)
    stop.pop("prev")
    for name, mutate in MUTATIONS:
        body, dumps = mutate(dict(stop), rnd)
        path = kit_home / "one.jsonl"
        path.write_bytes(b"\n".join(_chain([*raws, dumps({**body, "prev": "0" * 64})])) + b"\n")
        for by in report.BY:
            fast = report.summarize([path], by=by)
            assert fast == report.summarize([path], by=by, fast=False), (name, by)
        assert fast["chain"]["intact"] or name == "spaces after separators", name


def test_what_an_earlier_report_kept_plus_a_mixed_part_is_a_cold_read(kit_home, monkeypatch):
    """Read, kept, then mixed lines appended (a torn line between them made whole): the kept reading goes on exactly
    as json.loads reads the whole file cold."""
    path = kit_home / "ledger.jsonl"
    first = mixed_ledger(path, 21, lines=400, torn=False)
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    for by in report.BY:
        report.summarize([path], by=by, jobs=2, keep=True)
    more = mixed_ledger(kit_home / "more.jsonl", 22, lines=300, torn=False)
    with open(path, "ab") as fh:  # the appended part chained onto the first
        fh.write(b"\n".join(_chain([*first, *more])[len(first):]) + b"\n")
    for by in report.BY:
        kept = report.summarize([path], by=by, jobs=2, keep=True)
        assert kept == report.summarize([path], by=by, jobs=1, fast=False), by


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_a_changed_line_in_a_mixed_ledger_is_named_at_its_line(kit_home, monkeypatch, where):
    path = kit_home / "ledger.jsonl"
    raws = mixed_ledger(path, 31, lines=500, torn=False, intact=True)
    assert report.summarize([path])["chain"]["intact"]
    n = int(len(raws) * where)
    while not raws[n].startswith(b'{"v":1,"event":"stop"'):
        n += 1
    raws[n] = raws[n].replace(b'"duration":', b'"duration":1', 1)  # edited in place: its hash is not the next prev
    path.write_bytes(b"\n".join(raws) + b"\n")
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    shutil.rmtree(kit_home / "state" / "report", ignore_errors=True)
    for jobs in (1, 2):
        fast, slow = _summaries(path, jobs)
        assert fast == slow
        assert not fast["chain"]["intact"] and fast["chain"]["why"].startswith(f"line {n + 1} was changed"), fast["chain"]


def test_the_fast_path_takes_every_key_the_gate_writes_after_the_gates_and_no_repeated_one(kit_home):
    """The look-alike of the repeated keys above: a stop line with every key `gate.record` writes between the gates and
    the tail (long texts with escapes and braces, the agent's tokens per model) is the fast path's; the same line with a
    head key written again after the gates is json.loads's."""
    base = kit_home / "base.jsonl"
    report_bench.generate(base, 40, seed=5)
    rec = next(r for r in map(json.loads, base.read_bytes().splitlines()) if r.get("gates", {}).get("review"))
    after = {"cached": True, "session_from": "s0", "feedback": 'donegate: 2 failing {"a": [1]}\n\t"quoted" \\ done',
             "env": ["CI"], "env_weakened": ["PYTEST_ADDOPTS"], "said": "All done } ] {", "cpu": {"hook": 0.08, "children": 1.5},
             "agent": {"usd": 0.5, "seconds": 61.5, "models": {"claude-x": {"input": 10, "output": 5, "usd": 0.5}},
                       "prices": "2026-12-01", "unknown": ["m"], "partial": True},
             "confine": "auto", "client": "codex", "agent_usd": 0.5, "agent_seconds": 61.5}
    line = _kit(_before_blocks(rec, **after))
    m = report.fast_line(line)
    assert m is not None and m["session"].decode() == rec["session"] and m["agent"] == b'"agent_usd":0.5,"agent_seconds":61.5'
    assert m["client"] == b"codex" and float(m["review"]) == rec["gates"]["review"]["cost_usd"]
    for key, value in (("verdict", "pass"), ("session", "s9"), ("repo", "/r"), ("event", "write")):
        assert report.fast_line(_repeated(key, value)(rec)) is None, key


def _tail_hidden_in_prev(raw: bytes) -> bytes:
    """The kit's line with its `prev` cut short and a `config` written after it, the two filling the 64 characters a
    hash takes: json.loads reads the later config (and the chain breaks there)."""
    hidden = b'x","config":"'
    return raw[:-66] + hidden + b"a" * (64 - len(hidden)) + b'"}'


def _kit_version_escaping(raw: bytes) -> bytes:
    """The kit's line with its kit_version ending in a backslash: the quote after it is escaped, the line is no JSON."""
    return raw.replace(b'"kit_version":"0.1.0"', b'"kit_version":"0.1.0\\"', 1)


@pytest.mark.parametrize("edit", [_tail_hidden_in_prev, _kit_version_escaping])
def test_the_tail_is_read_as_json_loads_reads_it(kit_home, edit):
    """A line whose tail only looks like the kit's (a key hidden in the 64 characters of `prev`, a kit_version ending in
    a backslash) is json.loads's: the fast path read the config before `prev`, or counted a line that is no JSON."""
    base = kit_home / "base.jsonl"
    report_bench.generate(base, 40, seed=7)
    raws = base.read_bytes().splitlines()
    at = max(k for k, r in enumerate(raws) if r.startswith(b'{"v":1,"event":"stop"'))
    raws[at] = edit(raws[at])
    assert report.fast_line(raws[at]) is None
    base.write_bytes(b"\n".join(raws) + b"\n")
    for by in report.BY:
        assert report.summarize([base], by=by) == report.summarize([base], by=by, fast=False), by


def test_a_tail_as_the_kit_writes_it_is_read_alike(kit_home):
    """The look-alikes: the kit's own tail is the fast path's, and a kit_version holding an escaped backslash (JSON)
    is read alike by both paths."""
    base = kit_home / "base.jsonl"
    report_bench.generate(base, 40, seed=7)
    raws = base.read_bytes().splitlines()
    at = max(k for k, r in enumerate(raws) if r.startswith(b'{"v":1,"event":"stop"'))
    assert report.fast_line(raws[at]) is not None
    raws[at] = raws[at].replace(b'"kit_version":"0.1.0"', b'"kit_version":"0.1.0\\\\"', 1)
    base.write_bytes(b"\n".join(raws) + b"\n")
    for by in report.BY:
        assert report.summarize([base], by=by) == report.summarize([base], by=by, fast=False), by


# The "verified fast" reading measured in `bench/report_floor.py` (head and tail read, the gates skipped, the chunk's
# key counts proving nothing was missed): each edit below is read wrongly by the head and the tail alone, and must make
# the chunk's counts refuse it; the look-alike must not. (The counts' cost is what rules the reading out: docs/bench.md.)
_MISREAD = [
    ("a repeated verdict", b',"blocks":', b',"verdict":"pass","blocks":'),
    ("a repeated event", b',"blocks":', b',"event":"write","blocks":'),
    ("a repeated repo", b',"blocks":', b',"repo":"/elsewhere","blocks":'),
    ("a repeated count, spaced", b',"failed":', b',"total" : 99,"failed":'),
    ("a repeated session, escaped", b',"blocks":', b',"\\u0073ession":"s9","blocks":'),
    ("the agent's figures away from the tail", b',"blocks":', b',"agent_usd":1.5,"agent_seconds":30,"cached":true,"blocks":'),
]
_LOOK_ALIKE = ("a key's name inside a failing message", b'"message":"', b'"message":"\\"verdict\\": \\"pass\\", \\"total\\": 9 ')


def _edited_block(path: Path, seed: int, old: bytes, new: bytes, name: str) -> tuple[list[bytes], int]:
    """The bench's lines (60, `seed`) with `old` made `new` in the first blocked stop: (lines, its index)."""
    report_bench.generate(path, 60, seed=seed)
    raws = path.read_bytes().splitlines()
    at = next(k for k, r in enumerate(raws) if r.startswith(b'{"v":1,"event":"stop"') and b'"verdict":"block"' in r)
    raws[at] = raws[at].replace(old, new, 1)
    assert new in raws[at], name
    return raws, at


@pytest.mark.parametrize("name,old,new", [*_MISREAD, _LOOK_ALIKE])
def test_the_verified_fast_reading_refuses_what_the_head_and_tail_misread(kit_home, name, old, new):
    import re

    import report_floor
    from donegate.report import shape

    quick = re.compile(report_floor._QUICK.replace(b"NUM", shape._NUM).replace(b"STR", shape._STR)).findall
    raws, at = _edited_block(kit_home / "base.jsonl", 3, old, new, name)
    data = b"\n".join(raws) + b"\n"
    rows = quick(data)
    # the fast path's fields the quick reading reads too (the quick reading's rows have no review total or client)
    fields = [shape.FIELDS.index(n) for n in ("time", "repo", "session", "verdict", "tests", "agent", "duration", "config")]
    misread = rows[at] != tuple(shape.rows(data, len(data), data.split(b"\n")[:-1])[at][k] for k in fields)
    assert misread == (name != _LOOK_ALIKE[0]), name
    assert report_floor._verified(data, len(data), rows) == (not misread), name


def test_the_floors_scan_times_its_parse_apart(kit_home, capsys):
    """`make bench`'s floor: the report's own scan, its parse's CPU printed apart (what a free parser would leave is
    the rest), the scan itself unchanged (the same lines) and the parse put back after."""
    import report_floor
    from donegate.report import count, read, shape

    path = kit_home / "floor.jsonl"
    report_bench.generate(path, 60, seed=4)
    size = path.stat().st_size
    assert report_floor._stage("scan", str(path), 0, size) == count.scan(str(path), 0, size, read.Options()).lines
    assert count.shape_rows is shape.rows
    printed = capsys.readouterr().out
    assert printed.startswith(report_floor.PARSE + " ") and float(printed.split()[1]) >= 0
    out = kit_home / "floor.out"
    out.write_text(f"{report_floor.PARSE} 1.5\n{report_floor.PARSE} 2.5\n")
    line = report_floor._apart(out, (4.0, 10.0), (0.2, 0.5))  # 10 CPU-s, 4 of them parsing; wc -l 0.2 s, 0.5 CPU-s
    assert "the parse (shape.rows)  4.00 CPU-s" in line and " 6.00 CPU-s, x wc -l CPU 12.0" in line
    assert "at least 3.00 s on two idle cores,  6.0x wc -l's 0.50 CPU-s" in line, line



# `--by client`: a stop's client is the line's top-level `client` as json.loads reads it (the last one written; none, or
# not a non-empty string: Claude Code's, as before the kit recorded it), never a `"client"` nested in a gate or a text.
CLIENTS = ("claude", "codex", "gemini", "copilot", "qwen")
_EVIL = {"client": "evil", "blocks": 1}


def _with(rec: Line, **more: Any) -> bytes:
    """The kit's line with `more` (its client, ...) where the kit writes them, just before "blocks"."""
    return _kit(_before_blocks(rec, **more))


def _agent_nested(rec: Line) -> bytes:
    """The agent's tokens holding `_EVIL`, written just before the top-level client, as the kit orders them."""
    return _with(rec, agent={"m": 1, **_EVIL}, confine="auto", client="codex", agent_usd=0.5, agent_seconds=9)


# Each: (name, the last stop of the bench's ledger without a client -> its line). The old code read each client unlike
# json.loads: a nested `,"client":"x"...,"blocks":` taken as the stop's, a top-level one it did not see.
_CLIENT_MISREAD: list[tuple[str, Callable[[Line], bytes]]] = [
    ("nested in a gate, no client", lambda r: _kit(_gates(r, scope={**r["gates"]["scope"], **_EVIL}))),
    ("nested in a gate, codex's line", lambda r: _with(_gates(r, scope={**r["gates"]["scope"], **_EVIL}), client="codex")),
    ("nested in a failing test's entry", lambda r: _with(_acceptance(r, failing=[{"id": "t::a", "message": "m", **_EVIL}]),
                                                         client="codex")),
    ("nested in the agent's tokens", _agent_nested),
    ("the key escaped", lambda r: _with(r, client="codex").replace(b'"client":', b'"\\u0063lient":', 1)),
    ("written twice, the last after the tail", lambda r: _with(r, client="codex")[:-1] + b',"client":"gemini"}'),
    ("written twice, the last away from the kit's place",
     lambda r: _with(r, client="codex", confine="auto").replace(b',"confine":', b',"client":"qwen","confine":', 1)),
    ("a client the kit does not name", lambda r: _with(r, client="my cli")),
]
# The look-alikes, read alike by the old code and the new.
_CLIENT_ALIKE: list[tuple[str, Callable[[Line], bytes]]] = [
    ("in a failing message, escaped", lambda r: _with(_acceptance(r, failing=[
        {"id": "t::a", "message": 'x,"client":"evil","blocks":1 \\ "client": "evil"'}]), client="gemini")),
    ("in what the agent said", lambda r: _with(r, said='done,"client":"evil","blocks":1', client="copilot")),
    ("written twice, the last where the kit writes it",
     lambda r: _with(r, confine="auto", client="codex").replace(b',"confine":', b',"client":"qwen","confine":', 1)),
    ("null", lambda r: _with(r, client=None)),
    ("the kit's line", lambda r: _with(r, confine="auto", client="qwen", agent_usd=None, agent_seconds=3)),
]


def _client_ledger(path: Path, edit: Callable[[Line], bytes]) -> bytes:
    """The bench's lines, each stop as the kit writes it for one of the five clients (half with the agent's figures,
    a few from before the kit recorded its client), the last stop's line `edit`ed; returns that line."""
    report_bench.generate(path, 60, seed=13)
    raws, out = path.read_bytes().splitlines(), []
    for k, raw in enumerate(raws):
        rec = json.loads(raw)
        if rec.get("event") == "stop":
            body = {key: v for key, v in rec.items() if key != "prev"}
            more = {"agent_usd": 0.25, "agent_seconds": 30.5} if k % 2 else {}
            raw = _kit(body) if k % 7 == 0 else _with(body, confine="auto", client=CLIENTS[k % 5], **more)
            raw = raw[:-1] + b',"prev":"' + b"0" * 64 + b'"}'
            assert report.fast_line(raw), k  # the kit's lines are the fast path's
        out.append(raw)
    at = max(k for k, r in enumerate(out) if r.startswith(b'{"v":1,"event":"stop"'))
    out[at] = edit({k: v for k, v in json.loads(raws[at]).items() if k != "prev"})[:-1] + b',"prev":"' + b"0" * 64 + b'"}'
    path.write_bytes(b"\n".join(_chain(out)) + b"\n")
    return out[at]


def _clients_by_json_loads(path: Path) -> dict[str, int]:
    """Stops per client as json.loads reads each stop line's top-level `client`."""
    counts: collections.Counter = collections.Counter()
    for raw in path.read_bytes().splitlines():
        rec = json.loads(raw)
        if rec.get("event") == "stop":
            client = rec.get("client")
            counts[client if isinstance(client, str) and client else "claude"] += 1
    return dict(counts)


@pytest.mark.parametrize("name,edit", [*_CLIENT_MISREAD, *_CLIENT_ALIKE], ids=lambda x: x if isinstance(x, str) else "")
def test_a_stop_is_grouped_by_the_client_json_loads_reads(kit_home, monkeypatch, name, edit):
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)  # two processes, a range each, on a small file too
    path = kit_home / "ledger.jsonl"
    line = _client_ledger(path, edit)
    # a client nested anywhere is the fast path's to read right; a top-level one not where the kit writes it, json.loads's
    assert (report.fast_line(line) is not None) == (name.startswith(("nested", "in ")) or name == "the kit's line"), name
    want = _clients_by_json_loads(path)
    for fast, jobs in ((True, 1), (False, 1), (True, 2)):
        got = report.summarize([path], by="client", fast=fast, jobs=jobs)
        assert {g["client"]: g["stops"] for g in got["groups"]} == want, (name, fast, jobs)
        assert got["chain"]["intact"] and not got["skipped"]["count"], name


@pytest.mark.parametrize("key", ["session", "repo", "config", "client"])
def test_a_lone_surrogate_in_a_stops_text_is_a_skipped_line_not_a_crash(kit_home, key):
    """json.loads reads `"\\ud800"` as a lone surrogate, which has no UTF-8: the line is skipped and named, the rest read."""
    path = kit_home / "ledger.jsonl"
    _client_ledger(path, lambda r: _with(r, client="codex").replace(b'"%s":"' % key.encode(), b'"%s":"\\ud800' % key.encode(), 1))
    for by in report.BY:
        got = report.summarize([path], by=by)
        assert got["skipped"]["count"] == 1 and "surrogate" in got["skipped"]["examples"][0]["why"], (key, by)


def _rechained(raws: list[bytes]) -> list[bytes]:
    """Each line ending in the kit's `,"prev":"<hash>"}` given the hash of the line before it, JSON or not (the chain
    stays intact around a hand-made line)."""
    out, prev = [], b"0" * 64
    for raw in raws:
        if raw[-75:-66] == b',"prev":"' and raw.endswith(b'"}'):
            raw = raw[:-66] + prev + b'"}'
        out.append(raw)
        prev = hashlib.sha256(raw).hexdigest().encode()
    return out


# A stop line as the kit writes it, with one edit in its gates that makes it no JSON: json.loads refuses it (a skipped
# line), and so must the fast path, which reads every token of a line as JSON's grammar reads it (its strings' escapes
# made plain first: `shape.neutral`). The fast path before read strings and brackets only, and counted each of these.
_NOT_JSON = {"a literal cut short": (b'"ok":true', b'"ok":tru'), "a number with a leading zero": (b'"tests":', b'"tests":0'),
             "a number with a letter": (b'"tests":', b'"tests":1x'), "no comma between members": (b'"ok":true,', b'"ok":true '),
             "a colon for a comma": (b'"ok":true,', b'"ok":true:'),
             "a comma before a closing bracket": (b'"protected":[]', b'"protected":[1,]')}
# The same, the edit inside the scope's list of problems: what the list holds instead of nothing
_NOT_JSON_PROBLEMS = {"a raw byte that is not UTF-8": b'"\xff"', "a raw control character in a text": b'"a\tb"',
                      "an escape JSON does not know": b'"\\q"', "a \\u escape cut short": b'"\\u12"',
                      "a text whose closing quote is escaped": b'"a\\"', "a backslash outside a text": b'\\\\'}
# The look-alikes, JSON in the list of problems, each read alike by both paths (True: by the fast path itself).
_JSON_PROBLEMS = {"escaped quotes and backslashes in a text": (b'"a \\"b\\" \\\\ c\\\\","\\\\\\""', True),
                  "escapes JSON knows": (b'"caf\\u00e9 \\n\\t\\r\\b\\f\\/"', True),
                  "numbers in every form JSON has": (b'0,-0.5,1e3,2E-2,-7.25e+01,true,false,null', True),
                  "objects and lists nested in the scope": (b'{"a":[{}],"b":"{[x"},[[]],{}', True),
                  "a raw UTF-8 character in a text": ('"café"'.encode(), False),
                  "spaces between tokens in the scope": (b' 1 , 2 ', False)}
_EDITS = [*((name, old, new, None) for name, (old, new) in _NOT_JSON.items()),
          *((name, b'"problems":[]', b'"problems":[%s]' % text, None) for name, text in _NOT_JSON_PROBLEMS.items()),
          *((name, b'"problems":[]', b'"problems":[%s]' % text, fast) for name, (text, fast) in _JSON_PROBLEMS.items())]


@pytest.mark.parametrize("name,old,new,fast", _EDITS)
def test_a_line_that_is_no_json_is_refused_by_both_paths(kit_home, monkeypatch, name, old, new, fast):
    base = kit_home / "base.jsonl"
    raws, at = _edited_block(base, 13, old, new, name)
    raws = _rechained(raws)
    base.write_bytes(b"\n".join(raws) + b"\n")
    valid = fast is not None
    assert (report.fast_line(raws[at]) is not None) == bool(fast), name
    monkeypatch.setattr(report.parallel, "PARALLEL_BYTES", 1)
    for by in report.BY:
        for jobs in (1, 2):
            got = report.summarize([base], by=by, jobs=jobs)
            assert got == report.summarize([base], by=by, jobs=jobs, fast=False), (name, by, jobs)
            assert got["skipped"]["count"] == (0 if valid else 1) and got["chain"]["intact"], (name, got["skipped"])
