"""The product's bytecode kept between stops (`donegate.hidden.pyc`): compiled after the answer, confined,
read by the next stops' runs, and never run instead of a source that changed, however the change hides
from mtime and size."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from donegate.hidden import pyc
from tests.support import require
from tests.support.repos import kept_file, run_hook, seal_files, stop_lines, stop_payload, write_config

HIDDEN = "import calc\n\n\ndef test_ten_units_get_the_bulk_discount():\n    assert calc.price(10) == 900\n"
# The same test in a file of `pyc.REWRITE_FROM` bytes: its rewrite is kept (a file of a few lines is rewritten by the run).
LARGE = HIDDEN + "\n# " + "-" * pyc.REWRITE_FROM + "\n"
# The bug and its fix, the same size: with the mtime set back too, a pyc checked by (mtime, size), as
# Python's default ones are, would run the bug again.
BUG = "def price(u):\n    return u * 100 - u * (u >= 99) * 10\n"
# A module of `pyc.COMPILE_FROM` bytes beside calc.py: below it, the runs compile a project's sources and no job starts.
PADDING = {"padding.py": "# " + "-" * pyc.COMPILE_FROM + "\n"}
FIXED = "def price(u):\n    return u * 100 - u * (u >= 10) * 10\n"


def _compiled(root: Path, repo: Path, timeout: float = 60) -> Path:
    """calc.py's pyc in the store, once the put-back's child has written it."""
    return kept_file(pyc.folder(root, repo), "**/calc.*.pyc", timeout)


def _first_stop(tmp_path: Path, kit_home: Path, hidden_text: str, confine: str = "on") -> Path:
    """A confined repository (`confine: off`: unconfined) with the bug, sealed with `hidden_text`, after a stop that
    failed only the bulk-discount test (its put-back then compiles the store)."""
    if confine == "on":
        require.bwrap()
    write_config(kit_home, f"confine: {confine}\n")
    repo = seal_files(tmp_path, {"calc.py": BUG, **PADDING}, "test_calc.py", hidden_text)
    res = run_hook(stop_payload(repo, session="a"), timeout=120)
    assert res.returncode == 2, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["failed"] == 1, res.stderr
    assert "test_ten_units_get_the_bulk_discount" in res.stderr, res.stderr
    return repo


def test_bytecode_kept_between_stops_never_runs_instead_of_a_changed_source(tmp_path, kit_home):
    assert len(BUG) == len(FIXED)
    repo = _first_stop(tmp_path, kit_home, HIDDEN)
    kept = _compiled(kit_home, repo)
    head = kept.read_bytes()[:16]
    assert head[4:8] == b"\x03\x00\x00\x00", "not a checked hash-based pyc"
    # A sealed test file of a few lines is rewritten by the run (~3 ms): the job, which writes the tests' rewrite before
    # the sources, kept none and so never imported pytest's rewriter (~0.1 CPU-s a job).
    assert not list((pyc.folder(kit_home, repo) / pyc.TESTS).rglob("*.pyc"))
    st = os.stat(repo / "calc.py")
    (repo / "calc.py").write_text(FIXED)
    os.utime(repo / "calc.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(repo / "calc.py").st_size == st.st_size
    res = run_hook(stop_payload(repo, session="b"), timeout=120)
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["second"]["checked"] == 1
    # And the fix's bytecode replaces the bug's, for the stops after it.
    end = time.monotonic() + 60
    while kept.read_bytes()[:16] == head and time.monotonic() < end:
        time.sleep(0.05)
    assert kept.read_bytes()[:16] != head


def test_the_compile_job_reads_regular_files_only_and_ends(tmp_path):
    """A `.py` in the tree that never ends when read (a symlink to /dev/zero, a FIFO) is skipped by the job,
    not read: reading /dev/zero grew the job's memory until it failed, seconds of CPU after every stop
    (seen in the suite: 20-28 s a job), and a FIFO held it until its timeout. The files around it are
    compiled all the same."""
    import json
    import resource
    import subprocess
    import sys

    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink("/dev/zero", repo / "a_zero.py")
    os.mkfifo(repo / "b_pipe.py")
    (repo / "calc.py").write_text(BUG)
    store = tmp_path / "store"

    def limit() -> None:  # the bug shows as a MemoryError within a second, not as the machine's memory gone
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    job = {"prefix": str(store), "repo": str(repo), "files": ["a_zero.py", "b_pipe.py", "calc.py"],
           "max_bytes": pyc.MAX_BYTES}
    res = subprocess.run([sys.executable, "-I", "-S", "-c", pyc.COMPILE], input=json.dumps(job), text=True,
                         capture_output=True, timeout=60, preexec_fn=limit)
    assert res.returncode == 0, res.stderr[-800:]
    assert list(store.rglob("calc.*.pyc")), "the regular file next to them was not compiled"
    assert not list(store.rglob("a_zero.*.pyc")) and not list(store.rglob("b_pipe.*.pyc"))


WHERE = (HIDDEN + "\n\ndef test_the_standard_library_is_read_where_python_keeps_its_bytecode():\n"
         "    import colorsys  # imported by no harness: this test's import is the first\n"
         "    assert '/__pycache__/' in colorsys.__spec__.cached, colorsys.__spec__.cached\n")


def test_the_runs_read_the_products_bytecode_from_the_store_and_the_rest_where_python_keeps_it(tmp_path, kit_home):
    """The store serves the repository's modules only: pointing every import at it (`sys.pycache_prefix`)
    made both confined runs compile the standard library and the environment from source at every stop
    (370 ms a run of 40 tests against 266). The store's file is what runs: the test forges it (a checked
    pyc of the fix, under the hash of the bug's source) and the bug's source passes."""
    import importlib.util
    from importlib import _bootstrap_external as ext  # type: ignore[attr-defined]

    repo = _first_stop(tmp_path, kit_home, WHERE)
    kept = _compiled(kit_home, repo)
    forged = ext._code_to_hash_pyc(compile(FIXED, str(repo / "calc.py"), "exec"),
                                   importlib.util.source_hash(BUG.encode()), True)
    kept.write_bytes(forged)
    res = run_hook(stop_payload(repo, session="b"), timeout=120)
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["second"]["checked"] == 2


def _rewritten(root: Path, repo: Path) -> Path:
    """The sealed test file's kept rewrite, once the put-back's child has written it."""
    return kept_file(pyc.folder(root, repo) / pyc.TESTS, "**/test_calc.*-pytest-*.pyc")


@pytest.mark.parametrize("confine", ["on", "off"])
def test_the_sealed_tests_rewrite_is_kept_and_runs_only_for_the_source_it_was_made_from(tmp_path, kit_home, confine):
    """pytest's rewrite of the sealed tests (with the kit's probes) cost every run ~21 ms of its 220 where bare
    pytest reads its cache: the job keeps it (tests of `pyc.REWRITE_FROM` bytes or more), and the pytest run reads it,
    confined or not (`confine: off`: `pyc.Rewrite`, read at its real path). The test forges it: a test that
    passes, under the sealed source's hash, is what pytest runs (the second harness, which compiles the sealed
    source itself, still fails the stop); under another source's hash, pytest rewrites the sealed file, and writes
    nothing there (unconfined, the folder is writable: the run's pytest is told it is not)."""
    import marshal

    from donegate.seal import store

    repo = _first_stop(tmp_path, kit_home, LARGE, confine)
    kept = _rewritten(kit_home, repo)
    head = kept.read_bytes()[:16]
    assert head[4:8] == b"\x03\x00\x00\x00", "not a checked hash-based pyc"
    sealed = store.load(repo, kit_home).path / "test_calc.py"
    assert marshal.loads(kept.read_bytes()[16:]).co_filename == str(sealed.resolve())
    passing = compile("def test_ten_units_get_the_bulk_discount():\n    pass\n", str(sealed), "exec")
    kept.write_bytes(head + marshal.dumps(passing))
    res = run_hook(stop_payload(repo, session="b"), timeout=120)
    gate = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert gate["passed"] == 1, gate  # pytest ran the kept rewrite
    assert res.returncode == 2 and not gate["ok"], gate  # the second harness ran the sealed source
    forged = head[:8] + bytes(8) + marshal.dumps(passing)
    kept.write_bytes(forged)
    res = run_hook(stop_payload(repo, session="c"), timeout=120)
    assert res.returncode == 2, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["passed"] == 0
    assert "test_ten_units_get_the_bulk_discount" in res.stderr, res.stderr
    assert kept.read_bytes() == forged  # the run's pytest rewrote the sealed file for itself, and kept nothing


# The launcher's `main` run in-process with `os.fork` failing, so the put-backs and the bytecode job run in
# this process (`copy.after_answer`'s own fallback when a fork fails), where an audit hook sees what they start.
INLINE = """\
import json, os, sys
started = []
def audit(event, args):
    if event == "subprocess.Popen":
        started.append(os.path.basename(str(args[0])))
sys.addaudithook(audit)
def no_fork():
    raise OSError("no fork here")
os.fork = no_fork
hook = sys.argv[1]
ns = {"__name__": "probe", "__file__": hook}
exec(compile(open(hook).read(), hook, "exec"), ns)
sys.argv = sys.argv[1:]
code = ns["main"]()
sys.modules["donegate.hidden.copy"].after_answer()  # as the launcher does once the answer is out
with open(os.environ["PROBE_OUT"], "w") as fh:
    json.dump(started, fh)
os._exit(code)
"""


def _inline_stop(tmp_path: Path, kit_home: Path, repo: Path, session: str) -> tuple[int, list[str]]:
    import json
    import subprocess
    import sys

    from donegate.tree import git as kit_git
    from tests.support.repos import HOOK

    wrapper, out = tmp_path / "inline.py", tmp_path / f"started-{session}.json"
    wrapper.write_text(INLINE)
    argv = [sys.executable, "-I", str(wrapper), str(HOOK), "--home", str(kit_home), "--repo", str(repo),
            "--git", kit_git.executable()]
    res = subprocess.run(argv, input=json.dumps(stop_payload(repo, session=session)), capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PROBE_OUT": str(out)})
    return res.returncode, json.loads(out.read_text())


def test_no_bytecode_job_starts_when_every_source_is_compiled_already(tmp_path, kit_home):
    """The job after a stop is a bubblewrap and an interpreter (0.2-0.3 CPU-s): after a stop whose sources are
    all compiled already (a new session on the same tree, a change to a data file) none starts; a changed
    source starts one again, and its bytecode is kept. A project of less than `pyc.COMPILE_FROM` bytes of sources
    starts none at all (its runs compile it for less: was, a job after its every stop with a change, ~45 ms of CPU
    for one small module); sources past it, added later, start one."""
    require.bwrap()
    write_config(kit_home, "confine: on\n")
    repo = seal_files(tmp_path, {"calc.py": BUG}, "test_calc.py", HIDDEN)
    code, started = _inline_stop(tmp_path, kit_home, repo, "small")
    assert code == 2 and started == ["bwrap"] * 2, started  # the two runs only: a small project's
    assert not list(pyc.folder(kit_home, repo).rglob("*.pyc"))
    (repo / "padding.py").write_text(PADDING["padding.py"])
    code, started = _inline_stop(tmp_path, kit_home, repo, "a")
    assert code == 2 and started == ["bwrap"] * 3, started  # the two runs, then the job
    kept = _compiled(kit_home, repo, timeout=5)  # written already: the job ran in this process
    (repo / "notes.txt").write_text("not a source\n")
    code, started = _inline_stop(tmp_path, kit_home, repo, "b")
    assert code == 2 and started == ["bwrap"] * 2, started  # the two runs only
    (repo / "calc.py").write_text(FIXED)
    head = kept.read_bytes()[:16]
    code, started = _inline_stop(tmp_path, kit_home, repo, "c")
    assert code == 0 and started == ["bwrap"] * 3, started
    assert kept.read_bytes()[:16] != head


def test_a_run_that_ends_before_the_stop_has_its_look_still_leaves_the_bytecode_job(tmp_path, kit_home):
    """The hidden run can end before the stop has set its look (`statcache.Pending.set`, after the look's rest and the
    cache's lookup): on a loaded machine the run's interpreter was done first. Was: the run read the look at its end
    (`get(0)`: none yet), queued no job, and the next stop compiled every source again (seen once in CI, in
    test_own_suite_cost's wait for calc's pyc). The job now takes the look after the answer. Beside it, the stop
    whose verdict came from the cache (no run wanted): no job, as before."""
    from donegate.hidden import copy as throwaway, runner
    from donegate.seal import store as sealed
    from donegate.tree import statcache

    require.bwrap()
    write_config(kit_home, "confine: on\n")

    def ended_first(repo: Path, run_wanted: bool) -> None:
        store = sealed.folder_of(repo, kit_home, sealed.read_record(repo, kit_home) or {})  # the tests, the kit's ini
        look = statcache.look(repo)
        pending = statcache.Pending()
        pending.early(look)  # the part of the look the run's mirror is brought in step with: the run goes on
        run = runner.run(store, repo, timeout=60, confine="on", root=kit_home, tree=pending, later=True)
        assert run.ok, (run.problem, run.output)
        pending.set(look if run_wanted else None, run=run_wanted)  # the stop has its look only now
        throwaway.drain()  # the put-backs and jobs `after_answer` does in its child, done here

    repo = seal_files(tmp_path / "a", {"calc.py": FIXED, **PADDING}, "test_calc.py", HIDDEN)
    ended_first(repo, run_wanted=True)
    assert list(pyc.folder(kit_home, repo).glob("**/calc.*.pyc")), sorted(pyc.folder(kit_home, repo).rglob("*"))
    cached = seal_files(tmp_path / "b", {"calc.py": FIXED, **PADDING}, "test_calc.py", HIDDEN)
    ended_first(cached, run_wanted=False)
    assert not list(pyc.folder(kit_home, cached).glob("**/calc.*.pyc"))
