"""The stat cache (`donegate.tree.statcache`): a look reads only files whose stat moved, and no trick with
mtime, size or inode hides a change from it (issue 27).

Each attack edits a file so that a cache trusting less than (mode, size, mtime, ctime, inode, device)
would keep the old digest; `_naive_look` is such a cache (mtime and size, as many build tools keep),
run on the same edit to show the attack is real. Beside them, the honest look-alikes: a touch, a copy
with the same content, a look with nothing changed, which must read (almost) nothing and report no change.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from donegate import paths
from donegate.tree import statcache
from donegate.seal import store


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return repo


def _age(repo: Path, seconds: float = 60) -> None:
    """Set every file's mtime `seconds` back and wait out the slack (the ctime that sets is now): a tree
    written a while ago, no entry racy."""
    then = time.time_ns() - int(seconds * 1e9)
    for top, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            os.utime(os.path.join(top, f), ns=(then, then))
    time.sleep(statcache.SLACK_NS / 1e9 + 0.05)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _settled(repo: Path, root: Path) -> None:
    """A look that trusts every entry (none racy after `_age`): the state an attacker edits against."""
    assert statcache.look(repo, root).hashed > 0 and statcache.look(repo, root).hashed == 0


def _naive_look(repo: Path, before: dict[str, tuple[int, int, str]]) -> dict[str, str]:
    """A cache keyed on (mtime, size) only: what the attacks below get through."""
    out = {}
    for name, (mtime, size, digest) in before.items():
        st = os.lstat(repo / name)
        out[name] = digest if (st.st_mtime_ns, st.st_size) == (mtime, size) else _sha((repo / name).read_text())
    return out


def _naive_record(repo: Path, names: list[str]) -> dict[str, tuple[int, int, str]]:
    return {n: (os.lstat(repo / n).st_mtime_ns, os.lstat(repo / n).st_size, _sha((repo / n).read_text())) for n in names}


def test_a_look_with_nothing_changed_reads_nothing(tmp_path, kit_home):
    repo = _repo(tmp_path, {f"pkg/m{i}.py": f"X = {i}\n" for i in range(50)})
    _age(repo)
    first = statcache.look(repo, kit_home)
    assert first.hashed == 50 and first.digest("pkg/m7.py") == _sha("X = 7\n")
    again = statcache.look(repo, kit_home)
    assert again.hashed == 0 and again.entries == first.entries
    (repo / "pkg" / "m7.py").write_text("X = 70\n")
    third = statcache.look(repo, kit_home)
    # The edited file is read; so is nothing else (it is racy now, read again next time: git's rule).
    assert third.hashed == 1 and third.digest("pkg/m7.py") == _sha("X = 70\n")
    assert ".git/HEAD" not in third.entries and "pkg/m0.py" in third.entries


def test_a_look_says_what_changed_since_the_look_it_started_from(tmp_path, kit_home):
    """`since`: the kept look's id and every name whose entry differs from it (new, edited, gone), so what was
    worked out from that look (the mirrors, the changes since the seal) is brought in step by those alone."""
    repo = _repo(tmp_path, {"a.py": "a\n", "pkg/b.py": "b\n", "pkg/c.py": "c\n", ".venv/lib/d.py": "d\n"})
    _age(repo)
    first = statcache.look(repo, kit_home, later=(".venv",))
    assert first.since is None and first.id
    parts: list[statcache.Tree] = []
    same = statcache.look(repo, kit_home, later=(".venv",), early=parts.append)
    assert same.since == (first.id, set()) and same.id == first.id and same.kept
    assert parts[0].since == (first.id, set()) and parts[0].id == first.id
    (repo / "pkg" / "b.py").write_text("B\n")
    (repo / "pkg" / "new.py").write_text("n\n")
    (repo / ".venv" / "lib" / "d.py").unlink()
    parts.clear()
    edited = statcache.look(repo, kit_home, later=(".venv",), early=parts.append)
    assert edited.since == (first.id, {"pkg/b.py", "pkg/new.py", ".venv/lib/d.py"}) and edited.id not in (None, first.id)
    assert edited.kept is None
    # The early part saw the edit and the new file, and knows nothing of it is gone: it was all walked.
    assert parts[0].since == (first.id, {"pkg/b.py", "pkg/new.py"}) and parts[0].id == edited.id
    (repo / "pkg" / "c.py").unlink()
    parts.clear()
    gone = statcache.look(repo, kit_home, later=(".venv",), early=parts.append)
    assert gone.since is not None and "pkg/c.py" in gone.since[1]
    # A name of the early part is gone: which, only the whole look tells (a set difference), so the part says nothing.
    assert parts[0].since is None


def test_a_file_gone_and_a_folder_made_unreadable_at_once_is_not_the_kept_look(tmp_path, kit_home, monkeypatch):
    """The attack on a count: one name gone and one new entry that is never kept (an unreadable folder) leave the
    number of entries as the kept look had it. The look read nothing, yet the tree is not the kept one: its verdict
    cache key must not be the kept look's."""
    repo = _repo(tmp_path, {"a.py": "a\n", "b.py": "b\n"})
    (repo / "locked").mkdir()
    _age(repo)
    first = statcache.look(repo, kit_home)
    key = first.remember("key", lambda: "for the tree with b.py")
    (repo / "b.py").unlink()
    (repo / "locked" / "x").write_text("x")
    locked, real_open = str(repo / "locked"), os.open

    def open_(path, flags, *a, **k):  # the system refusing the folder, as it does an unprivileged user (mode 000)
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(statcache.os, "open", open_)
    now = statcache.look(repo, kit_home)
    assert now.hashed == 0 and "locked/" in now.entries and "b.py" not in now.entries
    assert now.kept is None and now.since == (first.id, {"b.py", "locked/"})
    assert now.remember("key", lambda: "for the tree now") == "for the tree now" != key


def test_same_size_edit_with_the_mtime_set_back_is_seen(tmp_path, kit_home):
    repo = _repo(tmp_path, {"mod.py": "VALUE = 1\n"})
    _age(repo)
    _settled(repo, kit_home)
    naive = _naive_record(repo, ["mod.py"])
    st = os.lstat(repo / "mod.py")
    (repo / "mod.py").write_text("VALUE = 2\n")  # same size
    os.utime(repo / "mod.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime set back
    assert _naive_look(repo, naive)["mod.py"] == _sha("VALUE = 1\n")  # the attack gets past (mtime, size)
    now = statcache.look(repo, kit_home)
    assert now.digest("mod.py") == _sha("VALUE = 2\n") and now.hashed == 1  # the ctime moved


def test_a_file_replaced_by_a_hard_link_is_seen(tmp_path, kit_home):
    repo = _repo(tmp_path, {"mod.py": "VALUE = 1\n", "other/evil.py": "VALUE = 2\n"})
    _age(repo)
    st = os.lstat(repo / "mod.py")
    assert os.lstat(repo / "other" / "evil.py").st_mtime_ns == st.st_mtime_ns  # the same mtime and size
    _settled(repo, kit_home)
    naive = _naive_record(repo, ["mod.py"])
    os.link(repo / "other" / "evil.py", repo / "tmp.py")
    os.replace(repo / "tmp.py", repo / "mod.py")
    assert os.lstat(repo / "mod.py").st_mtime_ns == st.st_mtime_ns
    assert _naive_look(repo, naive)["mod.py"] == _sha("VALUE = 1\n")
    assert statcache.look(repo, kit_home).digest("mod.py") == _sha("VALUE = 2\n")


def test_a_file_deleted_and_written_again_with_its_old_stat_is_seen(tmp_path, kit_home):
    """A new file may get the old inode back; its ctime is still new."""
    repo = _repo(tmp_path, {"mod.py": "VALUE = 1\n"})
    _age(repo)
    _settled(repo, kit_home)
    st = os.lstat(repo / "mod.py")
    (repo / "mod.py").unlink()
    (repo / "mod.py").write_text("VALUE = 3\n")
    os.chmod(repo / "mod.py", st.st_mode & 0o777)
    os.utime(repo / "mod.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert statcache.look(repo, kit_home).digest("mod.py") == _sha("VALUE = 3\n")


def test_racy_entries_are_kept_without_their_digest(tmp_path, kit_home):
    """git's rule: a file written within the slack of the look that read it can be written again in
    the same tick without its stat moving, so the next look reads it again."""
    repo = _repo(tmp_path, {"old.py": "A = 1\n", "new.py": "B = 1\n"})
    _age(repo)
    (repo / "new.py").write_text("B = 2\n")  # now: racy
    statcache.look(repo, kit_home)
    kept = json.loads((paths.state_dir(kit_home) / "stat" / f"{paths.repo_key(repo)}.json").read_text())
    digests = dict(zip(kept["names"], kept["digest"], strict=True))
    assert digests["old.py"] == _sha("A = 1\n") and digests["new.py"] == ""
    assert statcache.look(repo, kit_home).hashed == 1  # new.py, read again though its stat did not move


def test_honest_look_alikes_are_no_change(tmp_path, kit_home):
    """A touch, and a file copied back with the same bytes: read again (their stat moved), the same digest."""
    repo = _repo(tmp_path, {"mod.py": "VALUE = 1\n", "data.txt": "x" * 1000})
    _age(repo)
    sealed = {name: entry[0] for name, entry in statcache.look(repo, kit_home).snapshot().items()}
    os.utime(repo / "mod.py")
    text = (repo / "data.txt").read_text()
    (repo / "data.txt").unlink()
    (repo / "data.txt").write_text(text)
    now = statcache.look(repo, kit_home)
    assert now.hashed == 2
    assert store.tree_changes(repo, sealed, now) == ([], {})


def test_a_lost_or_corrupt_stat_file_costs_a_full_read_never_a_wrong_digest(tmp_path, kit_home):
    repo = _repo(tmp_path, {"a.py": "A = 1\n", "b.py": "B = 1\n"})
    _age(repo)
    statcache.look(repo, kit_home)
    kept = paths.state_dir(kit_home) / "stat" / f"{paths.repo_key(repo)}.json"
    for broken in ("{", json.dumps({"version": 1, "repo": str(repo), "names": ["a.py"], "stat": [], "digest": []}), ""):
        kept.write_text(broken)
        now = statcache.look(repo, kit_home)
        assert now.hashed == 2 and now.digest("a.py") == _sha("A = 1\n")


def test_symlinks_and_fifos_are_named_never_followed_or_opened(tmp_path, kit_home):
    repo = _repo(tmp_path, {"a.py": "A = 1\n"})
    (repo / "link.py").symlink_to("a.py")
    os.mkfifo(repo / "pipe")
    now = statcache.look(repo, kit_home)
    assert now.digest("link.py").startswith("symlink:") and now.digest("pipe") == "FIFO"


def test_the_cache_key_of_an_unchanged_tree_is_kept_and_any_change_makes_it_again(tmp_path, kit_home):
    """A look that finds the tree exactly as the last one kept it reuses the key that tree was given (a
    sort and a string a file, 15,000 files a stop); after any change, even one the mtime hides, and with
    a kept key that does not name the kept look, the key is worked out again and is the tree's."""
    from donegate.tree import verdict_cache as cache

    repo = _repo(tmp_path, {"a.py": "A = 1\n", "pkg/b.py": "B = 2\n"})
    _age(repo)
    _settled(repo, kit_home)
    first = statcache.look(repo, kit_home)
    assert first.kept is not None
    key = cache.tree_digest(repo, first)
    assert key == cache._digest(repo, first)
    memo = first.kept[0].with_suffix(".tree-key.json")
    assert json.loads(memo.read_text())["value"] == list(key)
    again = statcache.look(repo, kit_home)
    assert cache.tree_digest(repo, again) == key  # what was kept
    # A same-size edit with the mtime set back: the ctime moved, the look hashes it, the key is made again.
    st = os.stat(repo / "a.py")
    (repo / "a.py").write_text("A = 9\n")
    os.utime(repo / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    changed = statcache.look(repo, kit_home)
    assert changed.kept is None and cache.tree_digest(repo, changed) == cache._digest(repo, changed) != key
    # A kept key whose id is not the kept look's is not used (a look written since, by another stop).
    _age(repo)
    _settled(repo, kit_home)
    settled = statcache.look(repo, kit_home)
    memo.write_text(json.dumps({"id": "not-this-look", "value": list(key)}))
    assert cache.tree_digest(repo, settled) == cache._digest(repo, settled) != key


def test_files_leaves_out_the_caches_and_unreadable_folders_as_the_walk_found_them(tmp_path, kit_home):
    """`files` (what the seal's snapshot keeps, what the scan and the scope check compare) leaves out what lies
    in a bytecode or pytest cache folder at any depth, told by the folder as the walk enters it; a file or a
    folder named only like one stays. The same answer as the pattern matched on every name."""
    repo = _repo(tmp_path, {"app.py": "x\n", "__pycache__/app.cpython-311.pyc": "b", "pkg/__pycache__/m.pyc": "b",
                            "pkg/__pycache__/deep/x.txt": "b", ".pytest_cache/v/cache/nodeids": "[]",
                            "pkg/x__pycache__/kept.py": "k", "pkg/__pycache__.py": "k", ".venv/lib/__pycache__/s.pyc": "b",
                            "locked/inner.py": "i"})
    os.mkfifo(repo / "pkg" / "__pycache__" / "fifo")
    os.chmod(repo / "locked", 0o000)
    try:
        tree = statcache.look(repo, kit_home, later=(".venv",))
        unreadable = os.geteuid() != 0  # root reads a folder whatever its mode
        expected = {"app.py", "pkg/x__pycache__/kept.py", "pkg/__pycache__.py"} | (set() if unreadable else {"locked/inner.py"})
        assert set(tree.files()) == expected
        assert ("locked/" in tree.entries) is unreadable
        tree.left_out = None  # the pattern, name by name: what a tree built elsewhere gets
        assert set(tree.files()) == expected
    finally:
        os.chmod(repo / "locked", 0o700)


def test_the_early_part_of_a_look_leaves_out_the_folders_named_and_the_runs_take_it_only_when_they_leave_them_out(tmp_path):
    """The runs' mirrors leave out the shared environments (bound as they are), so a look gives them its part
    without those first (`early`), then walks them: the whole look has every entry, the part all but those."""
    import threading

    repo = _repo(tmp_path, {"app.py": "x = 1\n", ".venv/lib/site.py": "y = 2\n", "node_modules/m.js": "z\n",
                            "src/.venv/not_top.py": "w\n"})
    parts: list[statcache.Tree] = []
    tree = statcache.look(repo, tmp_path / "home", (".venv", "node_modules"), parts.append)
    assert set(tree.entries) == {"app.py", ".venv/lib/site.py", "node_modules/m.js", "src/.venv/not_top.py"}
    [part] = parts
    assert set(part.entries) == {"app.py", "src/.venv/not_top.py"} and part.later == (".venv", "node_modules")
    assert part.entries["app.py"] == tree.entries["app.py"]
    pending = statcache.Pending()
    pending.early(part)
    assert pending.for_mirror([".venv", "node_modules"]) is part
    # A mirror that copies node_modules needs the whole look: it waits for it.
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(pending.for_mirror([".venv"])))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive() and not got
    pending.set(tree, run=True)
    waiter.join(5)
    assert got == [tree]
    # The stop wants no run after all: nobody waits, nobody gets a look.
    cancelled = statcache.Pending()
    cancelled.set(tree, run=False)
    assert cancelled.for_mirror([".venv", "node_modules"]) is None and cancelled.get() is None


def test_the_look_waits_for_the_mirrors_it_gave_its_early_part_to_and_never_for_one_that_waits_for_it(tmp_path):
    """The mirrors' syncs and the rest of the look are Python in one interpreter: the look pauses (bounded) until
    the mirrors that take its early part are in step, since the runs wait for those; a mirror that needs the
    whole look releases the look first, or the two would wait for each other until the pause ran out."""
    import threading

    repo = _repo(tmp_path, {"app.py": "x = 1\n", ".venv/lib/site.py": "y = 2\n"})
    part = statcache.look(repo)
    part.later = (".venv",)
    pending = statcache.Pending()
    pending.PAUSE = 30  # the test ends it: were a ticket never done, the join below would run out
    ticket = pending.expect()
    looking = threading.Thread(target=pending.early, args=(part,))
    looking.start()
    looking.join(0.2)
    assert looking.is_alive()
    assert pending.for_mirror([".venv"], ticket) is part
    ticket.done()
    ticket.done()  # once only
    looking.join(5)
    assert not looking.is_alive()
    # A mirror that copies the shared environment waits for the whole look, and lets the look go on first.
    other = statcache.Pending()
    other.PAUSE = 30
    wants_all = other.expect()
    got: list[object] = []
    mirror = threading.Thread(target=lambda: got.append(other.for_mirror([], wants_all)))
    mirror.start()
    other.early(part)  # returns: the mirror's ticket was done as it chose to wait
    other.set(part, run=True)
    mirror.join(5)
    assert got == [part]


def test_the_seals_snapshot_digests_are_kept_under_its_hash_and_a_broken_memo_is_read_past(tmp_path, kit_home):
    """What the scan and the scope check compare with (`Store.digests`) is kept with marshal beside the state,
    under the sha256 the manifest gives the snapshot (a 15,000-file tree.json: 13 ms of JSON at every stop)."""
    from tests.support.repos import seal_files

    repo = seal_files(tmp_path, {"mod.py": "VALUE = 1\n"}, "test_mod.py", "import mod\n\ndef test_v():\n    assert mod.VALUE == 1\n")
    st = store.load(repo, kit_home)
    want = {name: entry[0] for name, entry in st.tree().items()}
    assert st.digests() == want and "mod.py" in want
    memo = paths.state_dir(kit_home) / "tree" / f"{st.manifest['files'][store.TREE]}.marshal"
    assert memo.is_file()
    memo.write_bytes(b"\x00broken")
    assert store.load(repo, kit_home).digests() == want
    assert store.load(repo, kit_home).digests() == want  # written again, whole


def test_the_changes_since_the_seal_brought_in_step_by_what_each_look_found_changed_are_those_worked_out_whole(tmp_path, kit_home):
    """`Store.changes` keeps its last answer under the look's id and, at the next stop, compares again only the
    names that look found changed (`Tree.since`). Over a run of edits (new files, edits put back as sealed,
    deletions, a file made a link, a folder made a file, a cache written), each answer is the one worked out
    whole from the seal's digests, and a look that found nothing changed reads no digest at all."""
    from tests.support.repos import seal_files

    files = {"mod.py": "VALUE = 1\n", "pkg/a.py": "A = 1\n", "pkg/b.py": "B = 1\n", "data/x.txt": "x\n"}
    repo = seal_files(tmp_path, files, "test_mod.py", "import mod\n\ndef test_v():\n    assert mod.VALUE == 1\n")
    steps = [
        lambda: (repo / "mod.py").write_text("VALUE = 2\n"),
        lambda: (repo / "new.py").write_text("N = 1\n"),
        lambda: (repo / "mod.py").write_text("VALUE = 1\n"),  # back as sealed: no longer a change
        lambda: (repo / "pkg" / "b.py").unlink(),
        lambda: ((repo / "pkg" / "a.py").unlink(), (repo / "pkg" / "a.py").symlink_to("../mod.py")),
        lambda: ((repo / "pkg" / "__pycache__").mkdir(), (repo / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"c")),
        lambda: ((repo / "data" / "x.txt").unlink(), (repo / "data").rmdir(), (repo / "data").write_text("now a file\n")),
        lambda: time.sleep(statcache.SLACK_NS / 1e9 + 0.05),  # nothing racy any more: read once more, then kept
        lambda: None,
    ]
    memo = None
    for i, step in enumerate(steps):
        step()
        st = store.load(repo, kit_home)
        now = statcache.look(repo, kit_home)
        read: list[int] = []
        real = st.digests
        st.digests = lambda read=read, real=real: (read.append(1), real())[1]  # type: ignore[method-assign]  # counts
        got = st.changes(now)
        whole = store.tree_changes(repo, store.load(repo, kit_home).digests() or {}, statcache.look(repo))
        assert got == whole, f"step {i}"
        if i > 0:
            assert memo is not None and now.since is not None and now.since[0] == memo
            assert bool(read) == bool(now.since[1]), f"step {i}: the seal's digests read only for a change"
        memo = now.id
    assert now.since == (memo, set()) and not read  # the last look changed nothing: the kept answer, no digest read
    assert got[0] == ["data", "data/x.txt", "new.py", "pkg/a.py", "pkg/b.py"] and list(got[1]) == ["pkg/a.py"]
    assert got[1]["pkg/a.py"].startswith("a symlink")


def test_the_trees_cache_key_brought_in_step_folder_by_folder_is_the_one_worked_out_whole(tmp_path, kit_home):
    """The verdict cache's key of a tree hashes each folder's entries, then the folders: kept with the look's id, a
    look that started from it hashes again only the folders holding a name it found changed. Over a run of edits,
    each key is the one worked out whole from a look of its own; an edit put back gives the first key again (the
    content decides, not the way there); a look that found nothing changed reads its kept key."""
    from donegate.tree import verdict_cache as cache

    repo = _repo(tmp_path, {"a.py": "a\n", "pkg/b.py": "b\n", "pkg/sub/c.py": "c\n", "data/x.bin": "x" * 100})
    steps = [
        lambda: None,
        lambda: (repo / "pkg" / "b.py").write_text("B\n"),
        lambda: (repo / "pkg" / "sub" / "d.py").write_text("d\n"),  # a new file
        lambda: ((repo / "data" / "x.bin").unlink(), (repo / "data").rmdir()),  # a folder gone
        lambda: (repo / "data").write_text("a file where the folder was\n"),
        lambda: os.chmod(repo / "a.py", 0o755),  # the mode only
        lambda: ((repo / "pkg" / "b.py").write_text("b\n"), (repo / "pkg" / "sub" / "d.py").unlink(),
                 (repo / "data").unlink(), (repo / "data").mkdir(), (repo / "data" / "x.bin").write_text("x" * 100),
                 os.chmod(repo / "a.py", 0o644)),  # everything as at first
    ]
    keys = []
    for i, step in enumerate(steps):
        step()
        now = statcache.look(repo, kit_home)
        got = cache.tree_digest(repo, now)
        assert got == cache._digest(repo, statcache.look(repo)), f"step {i}"
        if i:
            assert now.since is not None and now.since[1], f"step {i}: brought in step from the last look"
        keys.append(got[0])
    assert len(set(keys[:-1])) == len(keys) - 1 and keys[-1] == keys[0]
    assert cache.tree_digest(repo, statcache.look(repo, kit_home))[0] == keys[0]
