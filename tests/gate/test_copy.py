"""The copy the hidden run works in (`donegate.hidden.copy`): per working tree a mirror brought in step by
what changed, and put back after the run, so nothing the run writes outlives it (issue 27).

What the run does inside the mirror is done here by hand, inside `working_copy` (the run's place); the
hook-level tests (tests/gate/test_redteam.py, test_confine.py) drive the real confined run through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path

import pytest

from donegate.tree import statcache
from donegate.hidden import copy as throwaway


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    files = {"pkg/__init__.py": "", "pkg/mod.py": "VALUE = 1\n", "data/big.bin": "x" * 5000, "README.md": "hi\n",
             "pkg/__pycache__/mod.cpython-312.pyc": "planted", "lone.pyc": "planted"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "link.py").symlink_to("pkg/mod.py")
    return repo


def _content(top: Path) -> dict[str, str]:
    digests = statcache.look(top).digests()
    keep = throwaway._copied(digests, (".git",))
    return {n: d for n, d in digests.items() if n in keep}


def _run_in(repo: Path, tmp_path: Path, root: Path, act=None) -> tuple[Path, int]:
    tree = statcache.look(repo, root)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    with throwaway.working_copy(repo, tmp, [], root=root, tree=tree) as copy:
        assert _content(copy) == _content(repo)  # the run sees the working tree
        if act is not None:
            act(copy)
    return copy, int((copy.with_suffix(".json")).exists())


def test_the_mirror_copies_only_what_changed(tmp_path, kit_home):
    repo = _repo(tmp_path)
    path = tmp_path / "mirror" / "m"
    copied = []
    for change in (None, None, "edit"):
        if change == "edit":
            (repo / "pkg" / "mod.py").write_text("VALUE = 22\n")
        mirror = throwaway.Mirror(path, repo, (".git",))
        mirror.load()
        mirror.sync(statcache.look(repo, kit_home))
        mirror.save()
        copied.append(mirror.copied)
    assert copied == [5, 0, 1]  # pkg/__init__.py, pkg/mod.py, data/big.bin, README.md, link.py; then the edit
    assert (path / "pkg" / "mod.py").read_text() == "VALUE = 22\n"
    assert not (path / "lone.pyc").exists() and not (path / "pkg" / "__pycache__").exists()
    assert (path / "link.py").is_symlink() and os.readlink(path / "link.py") == "pkg/mod.py"


def test_nothing_the_run_writes_outlives_it(tmp_path, kit_home):
    repo = _repo(tmp_path)

    def vandal(copy: Path) -> None:
        (copy / "pkg" / "mod.py").write_text("VALUE = 2\n")  # same size
        st = os.lstat(copy / "README.md")
        (copy / "README.md").write_text("yo\n")
        os.utime(copy / "README.md", ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime set back
        (copy / "planted.py").write_text("import os\n")
        (copy / "newdir" / "deep").mkdir(parents=True)
        (copy / "newdir" / "deep" / "x.py").write_text("")
        (copy / "data" / "big.bin").unlink()
        (copy / "pkg" / "__init__.py").unlink()
        (copy / "pkg" / "__init__.py").symlink_to("/etc/passwd")
        os.link(copy / "pkg" / "mod.py", copy / "alias.py")
        (copy / "pkg" / "mod.pyc").write_text("planted")
        os.chmod(copy / "newdir" / "deep", stat.S_IRUSR | stat.S_IXUSR)  # read-only: its file resists removal
        os.chmod(copy / "pkg" / "mod.py", 0o777)

    copy, _ = _run_in(repo, tmp_path, kit_home, vandal)
    assert _content(copy) == _content(repo)  # put back at once, not at the next stop
    assert not (copy / "newdir").exists() and not (copy / "pkg" / "mod.pyc").exists()
    assert stat.S_IMODE(os.lstat(copy / "pkg" / "mod.py").st_mode) == stat.S_IMODE(os.lstat(repo / "pkg" / "mod.py").st_mode)
    _run_in(repo, tmp_path, kit_home)  # and the next run finds the working tree, nothing else


@contextlib.contextmanager
def _two_at_once(repo: Path, tmp_path: Path, root: Path, slot: str):
    """Two runs' copies of one look at `repo` at the same time, the second in mirror `slot`."""
    tree = statcache.look(repo, root)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with throwaway.working_copy(repo, tmp_path / "a", [], root=root, tree=tree) as first:
        with throwaway.working_copy(repo, tmp_path / "b", [], root=root, tree=tree, slot=slot) as second:
            yield first, second


def test_a_mirror_in_use_gives_the_second_run_a_copy_of_its_own(tmp_path, kit_home):
    repo = _repo(tmp_path)
    with _two_at_once(repo, tmp_path, kit_home, "") as (first, second):
        assert first != second and second == tmp_path / "b" / "repo"
        assert _content(second) == _content(repo)


def test_each_harness_has_a_mirror_of_its_own(tmp_path, kit_home):
    """The pytest run and the second run go at once: each in its own slot, what one writes the other never sees."""
    repo = _repo(tmp_path)
    with _two_at_once(repo, tmp_path, kit_home, "second") as (first, second):
        assert first.parent == second.parent and first != second  # both mirrors, under the state root
        (first / "pkg" / "mod.py").write_text("VALUE = 2\n")
        (first / "made.txt").write_text("x")
        assert _content(second) == _content(repo)


def test_without_a_look_the_copy_is_a_throwaway_one(tmp_path, kit_home):
    repo = _repo(tmp_path)
    (tmp_path / "t").mkdir()
    with throwaway.working_copy(repo, tmp_path / "t", [], root=kit_home, tree=None) as copy:
        assert copy == tmp_path / "t" / "repo" and _content(copy) == _content(repo)


def test_the_mirror_says_whether_the_run_sees_the_tree_as_looked_at(tmp_path, kit_home):
    """A file edited between the look and the copy: the run sees bytes the cache key does not describe,
    so the verdict cache must look again after the run (`faithful` False); otherwise it need not."""
    repo = _repo(tmp_path)
    (tmp_path / "t").mkdir()
    told: dict[str, bool] = {}
    tree = statcache.look(repo, kit_home)
    with throwaway.working_copy(repo, tmp_path / "t", [], root=kit_home, tree=tree, told=told):
        pass
    assert told["faithful"] is True
    (repo / "pkg" / "mod.py").write_text("VALUE = 3\n")
    tree = statcache.look(repo, kit_home)
    (repo / "pkg" / "mod.py").write_text("VALUE = 4\n")  # after the look, before the copy
    with throwaway.working_copy(repo, tmp_path / "t", [], root=kit_home, tree=tree, told=told):
        pass
    assert told["faithful"] is False


def test_a_run_that_never_put_the_mirror_back_is_undone_at_the_next_stop(tmp_path, kit_home):
    """The sync after a run marks the mirror clean; a stop killed mid-run leaves no mark, so the next
    stop walks the mirror and undoes what that run wrote. With the mark, the repository's own changes
    (a file and a folder removed, a file added) still reach the mirror."""
    repo = _repo(tmp_path)
    copy, _ = _run_in(repo, tmp_path, kit_home)
    assert copy.with_suffix(".clean").exists()
    (repo / "data" / "big.bin").unlink()
    (repo / "data").rmdir()
    (repo / "pkg" / "new.py").write_text("NEW = 1\n")
    _run_in(repo, tmp_path, kit_home)  # asserts the run sees the working tree
    assert not (copy / "data").exists()
    copy.with_suffix(".clean").unlink()  # a run killed before its sync
    (copy / "pkg" / "mod.py").write_text("VALUE = 9\n")
    (copy / "planted.py").write_text("")
    _run_in(repo, tmp_path, kit_home)
    assert _content(copy) == _content(repo)


def _wait_for(path: Path, there: bool = True) -> None:
    for _ in range(1000):
        if path.exists() == there:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} {'never appeared' if there else 'never went'}")


def test_the_put_back_after_the_answer_undoes_the_run_in_a_child(tmp_path, kit_home):
    """The hook answers first; a child of its own puts the mirror back. Until then the mirror is the run's
    (locked, no `.clean` mark); after it, nothing the run wrote is left."""
    repo = _repo(tmp_path)
    tree = statcache.look(repo, kit_home)
    (tmp_path / "t").mkdir()
    with throwaway.working_copy(repo, tmp_path / "t", [], root=kit_home, tree=tree, later=True) as copy:
        (copy / "planted.py").write_text("")
        (copy / "pkg" / "mod.py").write_text("VALUE = 9\n")
    assert (copy / "planted.py").exists() and not copy.with_suffix(".clean").exists()
    throwaway.after_answer()
    assert not throwaway._PENDING
    _wait_for(copy.with_suffix(".clean"))
    _wait_for(copy.with_suffix(".putback"), there=False)
    assert _content(copy) == _content(repo) and not (copy / "planted.py").exists()


def test_a_stop_that_comes_during_the_put_back_waits_for_the_mirror(tmp_path, kit_home):
    """The last stop's put-back holds the lock (and says so): the next stop waits, then works in the mirror;
    a lock held by a run (no mark) gets a copy at once; this process's own put-backs are done first."""
    import subprocess
    import sys

    repo = _repo(tmp_path)
    copy, _ = _run_in(repo, tmp_path, kit_home)
    lock = copy.with_suffix(".lock")
    # The holder lets the lock go before it takes its mark away: the other order left the lock held
    # without a mark while the interpreter shut down, and a stop that looked then (a loaded machine)
    # rightly took it for a run and copied.
    holder = ("import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDWR)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
              "mark = sys.argv[1][:-5] + '.putback'\nif sys.argv[2] == 'mark':\n    open(mark, 'w').close()\n"
              "print('held', flush=True)\ntime.sleep(float(sys.argv[3]))\nos.close(fd)\nif os.path.exists(mark):\n    os.unlink(mark)\n")
    for mark, expect in (("mark", copy), ("run", tmp_path / "t2" / "repo")):
        (tmp_path / "t2").mkdir()
        p = subprocess.Popen([sys.executable, "-c", holder, str(lock), mark, "0.5" if mark == "mark" else "3"],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "held"
        with throwaway.working_copy(repo, tmp_path / "t2", [], root=kit_home, tree=statcache.look(repo, kit_home)) as got:
            assert got == expect
        p.wait(timeout=30)
        import shutil

        shutil.rmtree(tmp_path / "t2")
    with throwaway.working_copy(repo, tmp_path, [], root=kit_home, tree=statcache.look(repo, kit_home), later=True):
        pass
    assert throwaway._PENDING
    with throwaway.working_copy(repo, tmp_path, [], root=kit_home, tree=statcache.look(repo, kit_home)) as got:
        assert got == copy and not throwaway._PENDING


def test_a_put_back_that_ends_between_the_try_and_the_look_at_its_mark_is_still_waited_for(tmp_path):
    """The put-back lets its lock go, then takes its mark away. A stop that found the lock held and only
    then looked at the mark (a loaded machine, run 1 of the speed work: it copied) must try the lock once
    more: it is free. The look-alike: a lock held with no mark (another stop's run) is not waited for."""
    import fcntl

    from donegate.core import deadline

    lock, mark = tmp_path / "m.lock", tmp_path / "m.putback"
    holder = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    mark.touch()
    asked = []

    def put_back_ends_then_look() -> bool:  # the holder's last two steps, in its order, then the stop's look
        if not asked:
            os.close(holder)
            mark.unlink()
        asked.append(1)
        return mark.exists()

    fd = os.open(lock, os.O_RDWR)
    try:
        deadline.flock(fd, 5.0, worth_waiting=put_back_ends_then_look)
        assert asked == [1]
    finally:
        os.close(fd)

    run = os.open(lock, os.O_RDWR)  # another stop's run: held, no mark
    fcntl.flock(run, fcntl.LOCK_EX)
    fd = os.open(lock, os.O_RDWR)
    looks = []
    try:
        with pytest.raises(deadline.Busy):
            deadline.flock(fd, 5.0, worth_waiting=lambda: looks.append(1) or mark.exists())
        assert looks == [1]  # given up at the first look, not waited for
    finally:
        os.close(fd)
        os.close(run)


def test_a_mirror_in_step_with_the_last_look_is_brought_in_step_by_what_the_look_found_changed(tmp_path, kit_home):
    """The put-back's `.clean` mark names the look the mirror is in step with; a stop whose look started from that
    one copies and removes only the names it found changed (`Mirror.step`), no walk of the mirror. Over a run of
    stops with every kind of change between them, and a run that vandalises the mirror each time, what the next
    run sees is the working tree, each time."""
    repo = _repo(tmp_path)
    changes = [
        lambda: None,
        lambda: (repo / "pkg" / "mod.py").write_text("VALUE = 2\n"),
        lambda: ((repo / "pkg" / "new.py").write_text("N = 1\n"), (repo / "deep" / "er").mkdir(parents=True),
                 (repo / "deep" / "er" / "x.py").write_text("X = 1\n")),
        lambda: ((repo / "deep" / "er" / "x.py").unlink(), (repo / "deep" / "er").rmdir()),  # a folder left empty
        lambda: ((repo / "data" / "big.bin").unlink(), (repo / "data").rmdir(), (repo / "data").write_text("a file\n")),
        lambda: ((repo / "README.md").unlink(), (repo / "README.md").mkdir(), (repo / "README.md" / "x").write_text("")),
        lambda: ((repo / "link.py").unlink(), (repo / "link.py").symlink_to("pkg/new.py")),
        lambda: ((repo / "pkg" / "__pycache__" / "new.cpython-312.pyc").write_text("planted")),
        lambda: None,
    ]

    def vandal(copy: Path) -> None:
        (copy / "pkg" / "mod.py").write_text("VALUE = 666\n")
        (copy / "written.py").write_text("")

    stepped = []
    for i, change in enumerate(changes):
        change()
        tree = statcache.look(repo, kit_home)
        (tmp_path / "tmp").mkdir(exist_ok=True)
        told: dict = {}
        with throwaway.working_copy(repo, tmp_path / "tmp", [], root=kit_home, tree=tree, told=told) as copy:
            assert _content(copy) == _content(repo), f"stop {i}"
            assert not (copy / "deep" / "er").exists() or (repo / "deep" / "er").exists()
            vandal(copy)
        stepped.append(bool(told.get("stepped")))
    assert stepped == [False] + [True] * (len(changes) - 1)
    assert _content(copy) == _content(repo)  # and put back
    # A mark that names another look is a walk of the mirror, as before.
    copy.with_suffix(".clean").write_text("another look")
    (repo / "pkg" / "mod.py").write_text("VALUE = 3\n")
    told = {}
    with throwaway.working_copy(repo, tmp_path / "tmp", [], root=kit_home, tree=statcache.look(repo, kit_home), told=told) as copy:
        assert _content(copy) == _content(repo) and not told.get("stepped")
    # The step never reads the record: a lost one is written whole again by the put-back, which reads the mirror.
    copy.with_suffix(".json").unlink()
    (repo / "pkg" / "mod.py").write_text("VALUE = 4\n")
    told = {}
    with throwaway.working_copy(repo, tmp_path / "tmp", [], root=kit_home, tree=statcache.look(repo, kit_home), told=told) as copy:
        assert _content(copy) == _content(repo) and told.get("stepped")
        (copy / "written.py").write_text("")
    assert _content(copy) == _content(repo)
    record = json.loads(copy.with_suffix(".json").read_text())
    assert sorted(record["names"]) == sorted(_content(repo))


def test_a_file_the_look_read_again_with_its_stat_unchanged_is_copied_again(tmp_path, kit_home):
    """git's racy case: a file written again within the file clock's tick keeps its stat, so the look reads it
    again (`statcache`: it was kept without its digest). The mirror copies it again too, brought in step by the
    look's names (`step`) or by its record (`sync`): the run sees the bytes the look hashed. The kernel's coarse
    clock is what cannot be made to tick on demand here: the new look is given the old stat by hand."""
    repo = _repo(tmp_path)
    first = statcache.look(repo, kit_home)
    mirrors = [throwaway.Mirror(tmp_path / "mirrors" / how, repo, (".git",)) for how in ("step", "sync")]
    for m in mirrors:
        m.sync(first)
        m.save()
    (repo / "pkg" / "mod.py").write_text("VALUE = 9\n")  # the same size
    now = statcache.look(repo, kit_home)
    now.entries["pkg/mod.py"] = (first.entries["pkg/mod.py"][0], now.entries["pkg/mod.py"][1])
    assert now.since is not None and now.since[0] == first.id and "pkg/mod.py" in now.since[1]
    mirrors[0].step(now, now.since[1])
    mirrors[1].sync(now, trusted=True)
    for m in mirrors:
        assert (m.path / "pkg" / "mod.py").read_text() == "VALUE = 9\n" and m.faithful
