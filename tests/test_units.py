"""Unit tests of the small seams: config schema, counters, ledger chain, subprocess wrapper."""

from __future__ import annotations

import os
import signal
import json
import subprocess
import sys
import threading
import time

import pytest

from donegate import config
from donegate.ledger import chain as ledger
from donegate.core import proc
from donegate.errors import ConfigError
from donegate.sessions.counters import FileCounters, MemoryCounters


# -- config -----------------------------------------------------------------------------------

def test_defaults_cover_every_key():
    cfg = config.validate({})
    assert cfg["timeout"] == 120 and cfg["max_blocks"] == 6 and cfg["writer"]["attempts"] == 3
    assert [p for p, _ in config.iter_keys()][:3] == ["config", "timeout", "max_blocks"]


@pytest.mark.parametrize("data, path, expected", [
    ({"timeout": "fast"}, "timeout", "number"),
    ({"max_blocks": True}, "max_blocks", "integer"),
    ({"writer": {"attempts": 1.5}}, "writer.attempts", "integer"),
    ({"protected": [".claude/**", 3]}, "protected[1]", "string"),
    ({"review": "sometimes"}, "review", "off, hint, block"),
    ({"max_blocks": 0}, "max_blocks", "minimum"),
    ({"writer": "yes"}, "writer", "mapping"),
    ({"colour": 1}, "colour", "unknown key"),
])
def test_bad_values_name_the_key_path(data, path, expected):
    with pytest.raises(ConfigError) as exc:
        config.validate(data)
    assert f"config key {path}" in str(exc.value) or f"config {path}" in str(exc.value)
    assert expected in str(exc.value)


def test_yaml_off_means_off(tmp_path):
    p = tmp_path / "donegate.yaml"
    p.write_text("review: off\nallowed: null\n")
    assert config.load(p)["review"] == "off"


def test_yaml_syntax_error_names_the_line(tmp_path):
    p = tmp_path / "donegate.yaml"
    p.write_text("timeout: 3\nprotected: [a\n")
    with pytest.raises(ConfigError) as exc:
        config.load(p)
    assert "line" in str(exc.value) and str(p) in str(exc.value)


def _load_apart(p) -> tuple[str, bool]:
    """config.load(p) in a fresh interpreter: (the config or the error, whether PyYAML was imported)."""
    code = ("import json, sys\nfrom donegate import config\nfrom donegate.errors import ConfigError\n"
            f"try:\n    out = json.dumps(config.load(__import__('pathlib').Path({str(p)!r})), sort_keys=True)\n"
            "except ConfigError as exc:\n    out = 'error: ' + str(exc)\n"
            "print(json.dumps([out, 'yaml' in sys.modules]))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    out, imported = json.loads(res.stdout)
    return out, imported


def test_a_config_parsed_once_is_not_parsed_again_until_its_text_changes(tmp_path):
    """PyYAML costs every stop ~11 ms to import: the parse is kept in the state folder under the text's
    digest, so an unchanged donegate.yaml is read as JSON. Any change of the text parses it again, however
    its size and mtime hide it; a value JSON cannot hold as it is (a date) is never kept; a broken
    cache file, or a FIFO in its place, is parsed past."""
    import os

    (tmp_path / "state").mkdir()
    p = tmp_path / "donegate.yaml"
    p.write_text("timeout: 30\nwriter:\n  attempts: 2\n")  # nested: PyYAML's to read (a flat one is `_flat`'s)
    first, imported = _load_apart(p)
    assert imported and json.loads(first)["timeout"] == 30
    assert _load_apart(p) == (first, False)
    st = os.stat(p)
    p.write_text("timeout: 40\nwriter:\n  attempts: 2\n")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    changed, imported = _load_apart(p)
    assert imported and json.loads(changed)["timeout"] == 40
    for cache in (tmp_path / "state").glob("config*"):
        cache.write_text("{not json")
    assert _load_apart(p) == (changed, True)
    assert _load_apart(p) == (changed, False)
    for cache in (tmp_path / "state").glob("config*"):  # a FIFO is never waited on
        cache.unlink()
        os.mkfifo(cache)
    assert _load_apart(p) == (changed, True)
    p.write_text("config: 2024-01-01\n")  # a date: the same error each time, parsed each time
    err, imported = _load_apart(p)
    assert imported and err.startswith("error: ") and "config" in err
    assert _load_apart(p) == (err, True)


# What a person or a test writes most: read without PyYAML (~11 ms of a stop's CPU to import), as PyYAML reads it.
FLAT = ["confine: on\nscan: off\n", "held_share: 0\nown_tests: off\nconfine: on\n", "allowed: ['shop/pricing.py']\n",
        "scan_allow: [gc-objects, threads]\n", "protected:\n", "timeout: 100\nreview: block\nhook_margin: 30.5\n",
        "pythonpath: [lib, 'src']\n# a comment\n\nmax_blocks: 4\n", "timeout: fast\n", "allowed: []\n"]
# Values around the edges of PyYAML 1.1's implicit resolvers: each either left to PyYAML or read as it reads it.
EDGES = ["on", "On", "ON", "oN", "y", "n", "yes", "No", "true", "False", "null", "Null", "nULL", "~", "", "0", "-0", "00",
         "010", "0o7", "0x1f", "0b1", "1_000", "+1", "-1", "1e3", "1.5e+3", "1.", ".5", "-1.5", "1.5.3", "12:30", "2024-01-01",
         ".inf", ".nan", "x", "x-y", "x/y.py", "-x", "/x", ".", "_x", "v1.2", "'it''s'", "'a b'", "''", "' '", "'x'y'",
         '"x"', "'#'", "x # c", "x#c", "[a, 1, on, ~]", "[a,]", "[]", "[ ]", "['a,b']", "[[a]]", "[a", "{a: 1}", "&a x", "*a",
         "!!str 1", "|", ">", "@x", "`x`", "%x", "x: y", "é"]


def test_a_flat_config_is_read_as_pyyaml_reads_it_without_importing_it(tmp_path):
    import yaml

    def pyyaml(text):
        try:
            return yaml.load(text, Loader=config._loader())  # noqa: S506 - the kit's SafeLoader
        except Exception as exc:  # noqa: BLE001 - an error: `_flat` must leave the text to PyYAML
            return exc

    def same(a, b):
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, dict) and isinstance(b, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        return type(a) is type(b) and a == b

    texts = [*FLAT, *(f"timeout: {v}\n" for v in EDGES), *(f"allowed: [{v}]\n" for v in EDGES),
             *(f"{k}: 1\n" for k in ("on", "no", "null", "Timeout", "time out", "a-b", " timeout", "timeout ")),
             "timeout:1\n", "timeout: 1\ntimeout: 2\n", "writer:\n  attempts: 2\n", "- a\n", "---\ntimeout: 1\n",
             "timeout: 1\r\n", "timeout:\t1\n", "# only a comment\n", "#a: 1\n", "",
             # PyYAML refuses a control character anywhere, a comment or a blank line too (revA); a number past int()'s
             # digits is its to read (and fail on) as before
             "timeout: 30\n# note \x7f\nconfine: on\n", "timeout: 30\n\x0c\nconfine: on\n", "timeout: 30\x1f\n",
             "timeout: 1" + "0" * 5000 + "\n", "timeout: 1" + "0" * 29 + "\n"]
    read = 0
    for text in texts:
        got = config._flat(text)
        if got is not None:
            read += 1
            assert same(got, pyyaml(text)), (text, got, pyyaml(text))
    for text in FLAT:
        assert config._flat(text) is not None, text
    assert read > 50
    p = tmp_path / "donegate.yaml"
    p.write_text(FLAT[0] + FLAT[2])
    assert _load_apart(p) == (json.dumps(config.validate(pyyaml(p.read_text())), sort_keys=True), False)


# -- counters: one parametrised fixture over both storages ------------------------------------

@pytest.fixture(params=["file", "memory"])
def counters(request, tmp_path):
    return FileCounters(tmp_path / "state") if request.param == "file" else MemoryCounters()


def test_counters_start_fresh_and_persist(counters):
    with counters.transact("s") as c:
        assert c["blocks"] == 0
        c["blocks"] = 2
    with counters.transact("s") as c:
        assert c["blocks"] == 2
    with counters.transact("other") as c:
        assert c["blocks"] == 0


def test_counters_peek_reads_what_was_written_without_the_lock(counters, tmp_path):
    assert counters.peek("s")["blocks"] == 0
    with counters.transact("s") as c:
        c["blocks"] = 3
    assert counters.peek("s")["blocks"] == 3
    if isinstance(counters, FileCounters):  # an agent's flock on the lock file does not stall a reader
        import fcntl
        import os

        fd = os.open(str(counters._path("s")) + ".lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            assert counters.peek("s")["blocks"] == 3
        finally:
            os.close(fd)


def test_counters_are_atomic_under_threads(counters):
    def bump():
        for _ in range(25):
            with counters.transact("s") as c:
                c["stops"] += 1

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with counters.transact("s") as c:
        assert c["stops"] == 200


def test_file_counters_survive_corruption_and_hostile_ids(tmp_path):
    store = FileCounters(tmp_path / "state")
    with store.transact("../../etc/passwd") as c:
        c["blocks"] = 1
    assert all(p.parent == tmp_path / "state" for p in (tmp_path / "state").iterdir())
    for p in (tmp_path / "state").glob("*.json"):
        p.write_text("{torn")
    with store.transact("../../etc/passwd") as c:
        assert c["blocks"] == 0 and c["corrupt"]


# -- ledger -------------------------------------------------------------------------------------

def test_ledger_chain_detects_edits(tmp_path):
    path = tmp_path / "ledger.jsonl"
    for i in range(5):
        ledger.append({"event": "stop", "i": i}, path)
    v = ledger.verify(path)
    assert (v["lines"], v["intact"], v["line"], v["why"]) == (5, True, None, "the hash chain is intact")
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"i":2', '"i":9')
    path.write_text("\n".join(lines) + "\n")
    v = ledger.verify(path)
    assert v["line"] == 4 and "line 3 was changed" in v["why"]  # line 4's prev no longer matches


def test_ledger_append_after_a_torn_line_starts_a_new_line(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger.append({"event": "stop"}, path)
    with open(path, "a") as fh:
        fh.write('{"event": "sto')
    ledger.append({"event": "stop", "after": True}, path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["after"] is True and lines[1] == '{"event": "sto'


def test_ledger_concurrent_processes_lose_nothing(tmp_path):
    path = tmp_path / "ledger.jsonl"
    code = ("import sys; from pathlib import Path; from donegate.ledger import chain as ledger\n"
            "for i in range(50): ledger.append({'w': sys.argv[1], 'i': i, 'pad': 'x' * 5000}, Path(sys.argv[2]))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w), str(path)]) for w in range(6)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 300
    assert ledger.verify(path)["intact"]


# -- proc ---------------------------------------------------------------------------------------

@pytest.fixture(params=["pidfd", "polling"])
def waits(request, monkeypatch):
    """Both ways `proc.run` waits for its child: a pidfd where the system has one, `Popen.wait`'s polling else."""
    if request.param == "polling":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    elif not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd on this system")
    return request.param


def test_proc_timeout_kills_the_whole_group(tmp_path, waits):
    marker = tmp_path / "alive"
    script = f"import subprocess, time\nsubprocess.Popen(['sh', '-c', 'sleep 2; touch {marker}'])\ntime.sleep(60)\n"
    t0 = time.monotonic()
    res = proc.run([sys.executable, "-c", script], timeout=1)
    assert res.timed_out and res.returncode is None and time.monotonic() - t0 < 30
    time.sleep(2.5)
    assert not marker.exists()


def test_proc_output_and_input(waits):
    res = proc.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper()); sys.exit(3)"], timeout=30, input="hi")
    assert res.returncode == 3 and res.stdout.strip() == "HI" and not res.timed_out


def test_proc_does_not_wait_for_an_escaped_grandchild(tmp_path):
    # A grandchild in its own session keeps stdout open; we must not wait for its end-of-file. It outlives
    # the timeout, so a run that waited for it would time out; and it is still there when the run returns.
    pid = tmp_path / "pid"
    script = ("import subprocess; p = subprocess.Popen(['setsid', 'sleep', '300']); "
              f"open({str(pid)!r}, 'w').write(str(p.pid)); print('done')")
    res = proc.run([sys.executable, "-c", script], timeout=30)
    grandchild = int(pid.read_text())
    try:
        os.kill(grandchild, 0)  # raises if it had ended: the run waited for it
    finally:
        os.kill(grandchild, signal.SIGKILL)
    assert res.stdout.strip() == "done" and not res.timed_out and res.returncode == 0


def test_wilson_interval_known_values():
    from donegate.core.stats import overlap, wilson

    lo, hi = wilson(42, 50)  # the article's "acceptance tests" row
    assert round(lo, 3) == 0.715 and round(hi, 3) == 0.917
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    assert overlap(wilson(35, 50), wilson(42, 50)) and not overlap(wilson(0, 50), wilson(50, 50))
