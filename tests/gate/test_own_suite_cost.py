"""What a stop's run of the project's own suite costs, and what it leaves behind (issue 44 item 5;
docs/own-suite.md): each sealed test file collected once, the sealed tests' rewrite kept between stops. Through the
real hook, real git repositories; beside each, the regression that still blocks.
"""

from __future__ import annotations

import marshal
from pathlib import Path

from donegate.hidden import pyc
from tests.support import require
from tests.support.repos import (kept_file, make_repo, run_hook, seal, sealed_project, stop_lines, stop_payload,
                                  write_config)

HIDDEN = "def test_hidden():\n    assert True\n"


def _sealed(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = make_repo(tmp_path / "repo", files)
    hidden = tmp_path / "hidden" / "test_hidden.py"
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN)
    res = seal(repo, hidden)
    assert res.returncode == 0, res.stderr
    return repo


# Each test file collected once: a conftest of the project records every test file pytest was handed to collect, and
# its last test checks none was handed twice (as the project's own `pytest` does).
SEEN = "SEEN = []\n\n\ndef pytest_collect_file(file_path, parent):\n    if file_path.name.startswith('test_'):\n" \
       "        SEEN.append(file_path.name)\n"
ONCE = "from a import one\nfrom b import two\nfrom conftest import SEEN\n\n\ndef test_z():\n    assert one() + two() == 3\n" \
       "    assert sorted(SEEN) == sorted(set(SEEN)), SEEN\n"
ONCE_FILES = {"a.py": "def one():\n    return 1\n", "b.py": "def two():\n    return 2\n", "c.py": "def three():\n    return 3\n",
              "tests/conftest.py": SEEN, "tests/test_a.py": "from a import one\n\n\ndef test_a():\n    assert one() == 1\n",
              "tests/test_b.py": "from b import two\n\n\ndef test_b():\n    assert two() == 2\n",
              "tests/test_c.py": "from c import three\n\n\ndef test_c():\n    assert three() == 3\n", "tests/test_z.py": ONCE}


def test_the_sealed_test_files_a_change_reaches_are_each_collected_once(tmp_path, kit_home):
    """Named one by one, pytest collected the suite's folder once per file named: 200 files reached, 40,000 modules
    made (0.65 CPU-s of a stop after a change everywhere in `bench/own_bench.py`). Was: a change to `a.py` ran
    `test_a.py` and `test_z.py` named one by one, each collected twice, and the project's own check of that blocked.
    Beside it: a regression of `a.py` still blocks, and only the files the change reaches run."""
    repo = _sealed(tmp_path, ONCE_FILES)
    (repo / "a.py").write_text("def one():\n    return 1  # the same\n")
    res = run_hook(stop_payload(repo))
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert res.returncode == 0, res.stderr
    assert own["ran_sealed"] == ["tests/test_a.py", "tests/test_z.py"], own
    (repo / "a.py").write_text("def one():\n    return 0\n")
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "the project's own test tests/test_a.py::test_a" in res.stderr, res.stderr
    assert "tests/test_c.py" not in res.stderr and "tests/test_b.py" not in res.stderr, res.stderr


CALC = "def add(a, b):\n    return a + b\n"
OWN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PADDING = {"padding.py": "# " + "-" * pyc.COMPILE_FROM + "\n"}  # sources past `pyc.COMPILE_FROM`: the job compiles them
OWN_LARGE = OWN + "\n# " + "-" * pyc.REWRITE_FROM + "\n"  # a rewrite worth keeping (`pyc.REWRITE_FROM`)


def test_the_own_suites_rewrite_is_kept_and_runs_only_for_the_source_it_was_made_from(tmp_path, kit_home):
    """The sealed copies are laid out afresh at every stop, so pytest rewrote every sealed test file at every stop (1.2
    of the 1.3 CPU-s a bare pytest of 2,000 tests saves with its cache). The job after the answer keeps their rewrite
    as it keeps the hidden tests' (`hidden.pyc`), and the own run reads it: a forged rewrite that passes, under the
    sealed source's hash, is what runs. Under another source's hash, pytest rewrites the sealed file: the regression
    blocks."""
    require.bwrap()
    write_config(kit_home, "confine: on\n")
    repo = _sealed(tmp_path, {"calc.py": CALC, "tests/test_calc.py": OWN_LARGE})
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    res = run_hook(stop_payload(repo, session="a"))
    assert res.returncode == 2 and "tests/test_calc.py::test_add" in res.stderr, res.stderr
    kept = kept_file(pyc.folder(kit_home, repo) / pyc.TESTS, "*/own/tests/test_calc.*-pytest-*.pyc")
    head = kept.read_bytes()[:16]
    assert head[4:8] == b"\x03\x00\x00\x00", "not a checked hash-based pyc"
    passing = compile("def test_add():\n    pass\n", "tests/test_calc.py", "exec")
    kept.write_bytes(head + marshal.dumps(passing))
    res = run_hook(stop_payload(repo, session="b"))
    assert res.returncode == 0, res.stderr  # pytest ran the kept rewrite
    kept.write_bytes(head[:8] + bytes(8) + marshal.dumps(passing))
    res = run_hook(stop_payload(repo, session="c"))
    assert res.returncode == 2 and "tests/test_calc.py::test_add" in res.stderr, res.stderr


def _copies(root: Path, key: str) -> list[str]:
    """What the kit keeps outside the repository for it: the runs' mirrors (every slot), the bytecode store and the
    laid-out own suite."""
    mirror, kept = root / "state" / "mirror", root / "state" / "pyc" / key
    names = sorted(p.name for p in mirror.iterdir() if p.name.split(".")[0] in
                   (key, f"{key}-second", f"{key}-own", f"{key}-own-now")) if mirror.is_dir() else []
    laid = root / "state" / "own-suite" / key  # the own suite laid out for the seal (`hidden.own_laid`)
    return names + (["pyc"] if kept.exists() else []) + (["own-suite"] if laid.exists() else [])


def _put_back(root: Path, key: str, wait: float = 20) -> None:
    """Once every mirror of `key` is free again: the hook has answered, and the child that puts its mirrors back after
    the answer (`copy.after_answer`) holds their locks until it is done (a person's `unseal` comes later)."""
    import fcntl
    import os
    import time

    end = time.monotonic() + wait
    for lock in sorted((root / "state" / "mirror").glob(f"{key}*.lock")):
        fd = os.open(lock, os.O_RDWR)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    assert time.monotonic() < end, f"{lock.name} still held after {wait} s"
                    time.sleep(0.02)
        finally:
            os.close(fd)


def _looks(root: Path, key: str) -> list[str]:
    """The last look at a working tree's files (`statcache`: its stat file and the memos beside it), by the tree's key."""
    folder = root / "state" / "stat"
    return sorted(p.name for p in folder.iterdir() if p.name.split(".")[0] == key) if folder.is_dir() else []


def _pooled(tmp_path_factory, kit_home: Path) -> Path:
    """`calc.py` and its test sealed once for the run under the test's donegate.yaml (`repos.sealed_project`): a copy
    per test, at the path it was sealed at (what the two tests below do to it stays in their own kit folder)."""
    return sealed_project(tmp_path_factory, kit_home, "own-cost-calc",
                          {"calc.py": CALC, "tests/test_calc.py": OWN, **PADDING}, HIDDEN, 1)


def test_unseal_and_uninstall_remove_the_kits_copies_of_the_repository(tmp_path_factory, kit_home):
    """The runs keep a mirror of the tree per slot (the hidden run's, the second's, the own suite's `-own` and
    `-own-now`) and the product's bytecode in the kit's state. Was: `unseal` and `uninstall` left them all (a full
    copy of the project's sources per slot). Beside it: another repository's copies, whose name starts with this
    one's key, stay; a mirror in use is left and said so."""
    import fcntl
    import os
    import subprocess
    import sys

    from donegate import paths
    from tests.support.repos import KIT

    require.bwrap()
    write_config(kit_home, "confine: on\n")
    repo = _pooled(tmp_path_factory, kit_home)
    key = paths.repo_key(repo)
    other = kit_home / "state" / "mirror" / f"{key}-0123456789-own"  # a repository named like this one's key
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    (repo / "tests" / "test_mul.py").write_text("from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    assert run_hook(stop_payload(repo)).returncode == 0
    kept_file(pyc.folder(kit_home, repo), "**/calc.*.pyc")
    made = _copies(kit_home, key)
    assert {f"{key}-own", f"{key}-own-now", key, f"{key}-second", "pyc", "own-suite"} <= set(made), made
    assert f"{key}.json" in _looks(kit_home, key)
    (kit_home / "state" / "stat" / f"{key}-0123456789.json").write_text("{}")  # another repository's look
    other.mkdir()

    def donegate(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT,
                              timeout=120, env={**os.environ, "DONEGATE_HOME": str(kit_home)})

    assert donegate("install", str(repo)).returncode == 0
    res = donegate("uninstall", str(repo))
    assert res.returncode == 0 and "the kit's copies of the repository" in res.stdout, res.stdout + res.stderr
    assert _copies(kit_home, key) == [] and _looks(kit_home, key) == [], _copies(kit_home, key)
    assert other.is_dir() and _looks(kit_home, f"{key}-0123456789")  # another repository's
    assert run_hook(stop_payload(repo, session="s2")).returncode == 0  # still sealed: the copies are made again
    _put_back(kit_home, key)  # the stop's after-answer child holds its mirrors' locks while it puts them back
    lock = os.open(kit_home / "state" / "mirror" / f"{key}-own.lock", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a stop's run in the own suite's mirror
    try:
        res = donegate("unseal", str(repo))
    finally:
        os.close(lock)
    assert res.returncode == 0 and f"{key}-own" in res.stdout and "in use" in res.stdout, res.stdout + res.stderr
    left = _copies(kit_home, key)
    assert f"{key}-own" in left and all(n.startswith(f"{key}-own.") or n == f"{key}-own" for n in left), left
    assert _looks(kit_home, key) == [] and other.is_dir()  # was: the stat cache stayed after unseal


def test_a_bytecode_job_is_waited_for_and_a_worktrees_copies_go_with_the_sealed_project(tmp_path, tmp_path_factory,
                                                                                        kit_home):
    """A stop in a worktree of the sealed project keeps its copies under the sealed project's key (no copy keyed by
    the worktree) and its last look at its files under its own. `uninstall WORKTREE` removes both (was: "none were
    kept", the copies left under the project's key); the project's own look stays. `unseal` of the project removes
    its copies and the looks at all its working trees (was: every look stayed). The bytecode job after the answer
    writes in the kept bytecode under a lock (`pyc.hold`): was, `unseal` removed the folder under a job still writing,
    and the job's files came back (the folder made again). Now `unseal` waits for it, then removes what it wrote."""
    import fcntl
    import os
    import threading

    from donegate import paths
    from tests.support.repos import git

    require.bwrap()
    write_config(kit_home, "confine: on\n")
    repo = _pooled(tmp_path_factory, kit_home)
    key, tree = paths.repo_key(repo), tmp_path / "feature"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "feature")
    (tree / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    assert run_hook(stop_payload(tree)).returncode == 0
    kept_file(pyc.folder(kit_home, repo), "**/calc.*.pyc")
    assert {key, f"{key}-own", "pyc"} <= set(_copies(kit_home, key)) and _copies(kit_home, paths.repo_key(tree)) == []
    look = kit_home / "state" / "stat" / f"{paths.repo_key(tree)}.json"
    kept_look = look.read_bytes()
    res = _donegate(kit_home, "uninstall", str(tree))  # installed or not there, its stops' copies go
    assert res.returncode == 0 and "removed the kit's copies of the repository (" in res.stdout \
        and f"kept under its sealed project {repo}" in res.stdout, res.stdout + res.stderr
    assert _copies(kit_home, key) == [] and _looks(kit_home, paths.repo_key(tree)) == [], _copies(kit_home, key)
    assert _looks(kit_home, key) == [f"{key}.json"]  # the sealed project's own tree: not the worktree's to remove
    look.write_bytes(kept_look)  # as the worktree's next stop writes it again
    folder = pyc.folder(kit_home, repo)
    folder.mkdir(parents=True)  # as that stop's bytecode job makes it again
    job = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(job, fcntl.LOCK_EX)  # a job compiling into it, as `pyc.hold` has it

    def finish() -> None:  # what a job does before it lets go: it writes its files (the folder made if need be)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "late.pyc").write_bytes(b"")
        os.close(job)

    later = threading.Timer(1.0, finish)
    later.start()
    try:
        res = _donegate(kit_home, "unseal", str(repo))
    finally:
        later.join()
    assert res.returncode == 0 and "left:" not in res.stdout, res.stdout + res.stderr
    assert _copies(kit_home, key) == [], _copies(kit_home, key)
    assert _looks(kit_home, key) == _looks(kit_home, paths.repo_key(tree)) == []


def test_a_bytecode_job_after_the_copies_were_forgotten_writes_nothing(tmp_path):
    """`pyc.hold`: the job's mirror gone (`unseal` removes the mirrors first), no folder is made; the folder removed
    while the job waited for its lock, the job lets it be. Beside it: with its mirror there, the job has its folder."""
    mirror, store = tmp_path / "mirror", tmp_path / "pyc" / "key"
    assert pyc.hold(store, mirror) is None and not store.exists()
    mirror.mkdir()
    fd = pyc.hold(store, mirror)
    assert fd is not None and store.is_dir()
    import os

    os.close(fd)
    store.rmdir()
    mirror.rmdir()
    assert pyc.hold(store, mirror) is None and not store.exists()


def test_uninstall_at_the_user_level_removes_every_repositorys_copies(tmp_path, kit_home):
    """Was: `uninstall --scope user` (no repository) left the runs' copies of every repository it had gated."""
    mirror, kept = kit_home / "state" / "mirror", kit_home / "state" / "pyc"
    for name in ("one-0123456789", "one-0123456789-own", "two.x-9876543210-second"):
        (mirror / name).mkdir(parents=True)
        (mirror / f"{name}.lock").write_text("")
    (kept / "one-0123456789").mkdir(parents=True)
    laid = kit_home / "state" / "own-suite"  # the own suite laid out for a seal (`hidden.own_laid`)
    (laid / "two.x-9876543210" / "digest").mkdir(parents=True)
    assert _donegate(kit_home, "install", "--scope", "user", "--sandbox", "off").returncode == 0
    res = _donegate(kit_home, "uninstall", "--scope", "user")
    assert res.returncode == 0 and "removed the kit's copies of every repository (5 folders" in res.stdout, res.stdout
    assert list(mirror.iterdir()) == [] and list(kept.iterdir()) == [] and list(laid.iterdir()) == []


def _donegate(kit_home: Path, *argv: str):
    import os
    import subprocess
    import sys

    from tests.support.repos import KIT

    return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT,
                          timeout=120, env={**os.environ, "DONEGATE_HOME": str(kit_home)})


def _wait_for(path: Path, wait: float = 20) -> None:
    import time

    end = time.monotonic() + wait
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert path.exists(), path


def test_unseal_removes_the_looks_of_worktrees_already_removed_from_git(tmp_path, kit_home):
    """A stop in a worktree keeps its last look at its files under the worktree's own key; `git worktree remove`
    takes the worktree out of git's list, so `unseal`, which asked git for the project's worktrees, never found that
    look (was: it stayed, with the memos beside it). Now a stop's look names the sealed project it was judged against,
    and `unseal` removes every look that names it. Beside it: the look of a tree no stop of this project made (another
    folder, gone too) stays, and a live worktree's look still goes."""
    from donegate import paths
    from donegate.tree import statcache
    from tests.support.repos import git

    repo = _sealed(tmp_path, {"calc.py": CALC, "tests/test_calc.py": OWN})
    key, gone = paths.repo_key(repo), tmp_path / "gone"
    git(repo, "worktree", "add", "-q", str(gone), "-b", "gone")
    (gone / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    assert run_hook(stop_payload(gone)).returncode == 0
    look = kit_home / "state" / "stat" / f"{paths.repo_key(gone)}.json"
    _wait_for(look)  # kept by the stop's after-answer child
    _put_back(kit_home, key)
    git(repo, "worktree", "remove", "--force", str(gone))
    stranger = make_repo(tmp_path / "stranger", {"x.py": "X = 1\n"})
    statcache.look(stranger, kit_home)  # a look kept by no stop of this project
    import shutil

    shutil.rmtree(stranger)
    res = _donegate(kit_home, "unseal", str(repo))
    assert res.returncode == 0, res.stdout + res.stderr
    assert _looks(kit_home, paths.repo_key(gone)) == [], _looks(kit_home, paths.repo_key(gone))
    assert _looks(kit_home, paths.repo_key(stranger)) == [f"{paths.repo_key(stranger)}.json"]


def test_a_run_begun_before_the_look_is_sent_what_the_look_chose_with_its_go(tmp_path, kit_home):
    """The own suite's sealed run begins before the stop's look (its interpreter imports pytest meanwhile) and is
    told which sealed files the change cannot reach with its go (`runner.run`'s `chosen`, read by the bootstrap after
    the go byte). Was: the run began only after the look, its skip list in the spec on stdin (no `chosen`: TypeError).
    A file left out is not collected; nothing chosen (None) ends the run unrun; an empty skip list runs everything."""
    from donegate.hidden import runner
    from donegate.seal import own
    from donegate.tree import statcache

    repo = make_repo(tmp_path / "repo", {"a.py": "def one():\n    return 1\n", "b.py": "def two():\n    return 2\n"})
    pack = {"files": {"tests/test_a.py": {"text": "from a import one\n\n\ndef test_a():\n    assert one() == 1\n"},
                      "tests/test_b.py": {"text": "from b import two\n\n\ndef test_b():\n    assert two() == 2\n"}},
            "paths": ["tests"], "config": None}

    def begun(chosen) -> runner.TestRun:
        suite = tmp_path / f"suite-{len(list(tmp_path.iterdir()))}"
        suite.mkdir()
        layout = own.lay_out(pack, suite)
        pending = statcache.Pending()
        pending.set(statcache.look(repo), run=True)
        return runner.run(suite, repo, timeout=60, confine="off", layout=layout, tree=pending,
                          chosen=lambda: chosen(suite))

    run = begun(lambda suite: {"skip": [str(suite / "tests" / "test_b.py")]})
    assert run.ok and sorted(run.results) == ["tests/test_a.py::test_a"], (run.problem, run.results, run.output)
    run = begun(lambda suite: None)
    assert not run.results and not run.ok, (run.problem, run.results)
    run = begun(lambda suite: {"skip": []})  # the honest look-alike: nothing left out, both files run
    assert run.ok and sorted(run.passing()) == ["tests/test_a.py::test_a", "tests/test_b.py::test_b"], run.results
