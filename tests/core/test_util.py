"""The shared primitives: a file replaced whole, a UTC timestamp, a counted noun."""

from __future__ import annotations

import datetime as dt
import os
import stat

import pytest

from donegate.core.util import atomic_write, epoch_ms, plural, utc_ms, utc_now


def test_a_write_replaces_the_file_whole_and_leaves_nothing_beside_it(tmp_path):
    target = tmp_path / "deep" / "state.json"
    atomic_write(target, "first")
    atomic_write(target, b"second", 0o600)
    assert target.read_bytes() == b"second"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(target.parent) == ["state.json"]


def test_a_write_that_fails_before_the_rename_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "record.json"
    atomic_write(target, "old")

    def crash() -> None:
        raise KeyboardInterrupt  # a kill between the write and the rename

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new", before_replace=crash)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["record.json"]


def test_a_write_never_follows_a_symlink_planted_as_its_temporary(tmp_path, monkeypatch):
    # The temporary's name is predictable (pid, clock); one planted there must not be written through.
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    monkeypatch.setattr(os, "getpid", lambda: 4242)
    monkeypatch.setattr("time.monotonic_ns", lambda: 7)
    import donegate.core.util as util

    monkeypatch.setattr(util, "_seq", 0)
    (tmp_path / ".out.4242.7.1.tmp").symlink_to(victim)
    with pytest.raises(FileExistsError):
        atomic_write(tmp_path / "out", "payload")
    assert victim.read_text() == "untouched" and (tmp_path / ".out.4242.7.1.tmp").is_symlink()


def test_utc_now_is_the_ledgers_iso_form():
    t = 1_796_000_000.25
    want = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    assert utc_now(t) == want.isoformat(timespec="milliseconds")
    assert utc_now(t, ms=False) == want.isoformat(timespec="seconds")
    assert dt.datetime.fromisoformat(utc_now()).tzinfo == dt.timezone.utc


@pytest.mark.parametrize("count, word, grouped, text", [
    (1, "test", False, "1 test"), (0, "test", False, "0 tests"), (2, "run line", False, "2 run lines"),
    (12_345, "stop", True, "12,345 stops"), (1, "stop", True, "1 stop"),
])
def test_plural(count, word, grouped, text):
    assert plural(count, word, grouped=grouped) == text


def _epoch_by_datetime(value):
    when = utc_ms(value)
    return None if when is None else (when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)


def test_epoch_ms_agrees_with_datetime_on_every_form():
    # The stop reads a session's time without `datetime` (issue 48 item 2): every form a transcript could hold, the
    # fast path's and the ones it leaves to `datetime`, gives what `datetime` gives (None where it refuses).
    import random

    values = ["2026-01-01T10:01:30.250Z", "2026-01-01T10:01:30Z", "2026-01-01T10:01:30", "2026-01-01 10:01:30.1+02:00",
              "2024-02-29T23:59:59.999999-05:30", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T12:00:00Z",
              "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z",
              "2026-01-01T10:01:30.Z", "2026-01-01T10:01:30+2:00", "2026-01-01T10:01:30+05:61", "2026-01-01T10:01:30+24:00",
              "2026-01-01T10:01:30.1234567Z", "\uff12026-01-01T10:01:30Z", "2026-01-01T10:01:30+05:30:00", "2026-01-01T10:01:3Z",
              "+026-01-01T10:01:30Z", "2026-01-01T10:01:30.5+01", "", "x", 5, None]
    rnd = random.Random(48)
    for _ in range(5000):
        values.append(f"{rnd.choice([1, 1969, 1970, 2000, 2024, 2100, rnd.randrange(1, 9999)]):04d}-{rnd.randrange(14):02d}-"
                      f"{rnd.randrange(33):02d}{rnd.choice('T ')}{rnd.randrange(25):02d}:{rnd.randrange(61):02d}:"
                      f"{rnd.randrange(61):02d}" + rnd.choice(["", ".25", "." + str(rnd.randrange(10 ** rnd.randrange(1, 8)))])
                      + rnd.choice(["", "Z", f"+{rnd.randrange(25):02d}:{rnd.randrange(70):02d}", f"-{rnd.randrange(24):02d}:30"]))
    wrong = [(v, epoch_ms(v), _epoch_by_datetime(v)) for v in values if epoch_ms(v) != _epoch_by_datetime(v)]
    assert wrong == []
    assert epoch_ms("2026-01-01T10:01:30.250Z") - epoch_ms("2026-01-01T10:00:00.000Z") == 90_250



def test_sha256_is_hashlibs_digest_and_loads_openssl_only_past_its_budget(tmp_path):
    # A stop with no file changed hashes some KB (its keys, the ledger's line, the store's manifest and tests): the
    # built-in SHA-256 does, where `hashlib` loaded OpenSSL (~2-3 ms of a stop's CPU; issue 48 item 2). Past the
    # process's budget, and for a file as large as the budget, OpenSSL's: the digests are the same either way.
    import subprocess
    import sys

    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(b"x" * 5000)
    large.write_bytes(b"z" * (1 << 17))
    code = ("import sys\nfrom donegate.core import fsafe\n"
            "got = [fsafe.sha256(bytes([i]) * 1000).hexdigest() for i in range(20)] + [fsafe.digest(sys.argv[1])]\n"
            "before = '_hashlib' in sys.modules\n"
            "got += [fsafe.digest(sys.argv[2]), fsafe.sha256(b'y' * (fsafe.LARGE + 1)).hexdigest()]\n"
            "after = '_hashlib' in sys.modules\n"
            "import hashlib\n"
            "want = [hashlib.sha256(bytes([i]) * 1000).hexdigest() for i in range(20)] + [hashlib.sha256(b'x' * 5000)"
            ".hexdigest(), hashlib.sha256(b'z' * (1 << 17)).hexdigest(), hashlib.sha256(b'y' * (fsafe.LARGE + 1)).hexdigest()]\n"
            "assert got == want, (got, want)\nprint(before, after)\n")
    res = subprocess.run([sys.executable, "-c", code, str(small), str(large)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]


def test_a_file_is_copied_as_shutil_copies_it_and_a_fifo_never_waited_on(tmp_path):
    # `fsafe.copy_file` stands in for `shutil.copy2(follow_symlinks=False)` in a stop's mirror (issue 48 item 2): the
    # same bytes, mode and modification time, a symlink copied as one; a FIFO swapped in raises at once.
    import shutil

    from donegate.core import fsafe

    src = tmp_path / "a.bin"
    src.write_bytes(os.urandom(3_000_001))
    os.chmod(src, 0o751)
    os.utime(src, ns=(1_000_000_000_000_000_000, 1_100_000_000_123_456_789))
    fsafe.copy_file(src, tmp_path / "ours")
    shutil.copy2(src, tmp_path / "theirs", follow_symlinks=False)
    for got in (tmp_path / "ours", tmp_path / "theirs"):
        st = got.stat()
        assert got.read_bytes() == src.read_bytes() and stat.S_IMODE(st.st_mode) == 0o751
        assert st.st_mtime_ns == 1_100_000_000_123_456_789
    (tmp_path / "link").symlink_to("a.bin")
    fsafe.copy_file(tmp_path / "link", tmp_path / "link2")
    assert os.readlink(tmp_path / "link2") == "a.bin"
    (tmp_path / "empty").write_bytes(b"")
    fsafe.copy_file(tmp_path / "empty", tmp_path / "empty2")
    assert (tmp_path / "empty2").read_bytes() == b""
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(fsafe.NotRegular):
        fsafe.copy_file(tmp_path / "fifo", tmp_path / "fifo2")


def test_temporary_folders_and_files_as_tempfile_makes_them(tmp_path, monkeypatch):
    # `util.make_temp_dir` and `temp_file` stand in for `tempfile.mkdtemp` and `TemporaryFile` at every stop.
    from donegate.core import util

    monkeypatch.setattr(util, "_TEMP", [])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    made = util.make_temp_dir("donegate-run-")
    assert os.path.dirname(made) == str(tmp_path) and os.path.basename(made).startswith("donegate-run-")
    assert os.stat(made).st_mode & 0o777 == 0o700
    with util.temp_file() as fh:
        fh.write(b"abc")
        fh.seek(0)
        assert fh.read() == b"abc"
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(made)]  # the file is unnamed: nothing left
    # A folder root may "access" but not write in (/proc) is passed over, as `tempfile` passes it (review C).
    monkeypatch.setattr(util, "_TEMP", [])
    monkeypatch.setenv("TMPDIR", "/proc")
    monkeypatch.setenv("TEMP", str(tmp_path))
    assert util.temp_dir() == str(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(made)]  # its trial file is gone
    # The descriptor is closed when `os.fdopen` raises.
    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    with pytest.raises(MemoryError):
        util.temp_file()
    assert len(os.listdir("/proc/self/fd")) == before


def test_remove_tree_removes_a_folder_whole_and_follows_no_link(tmp_path):
    # The after-answer child removes the runs' folders without `shutil` (issue 48 item 2): all of it goes, a link's
    # target stays, and a link named as the folder is left (as `shutil.rmtree(ignore_errors=True)` leaves it).
    from donegate.core import fsafe

    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "f").write_text("x")
    top = tmp_path / "run"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "f.py").write_text("x")
    (top / "g").write_text("y")
    (top / "a" / "dirlink").symlink_to(outside / "keep")
    (top / "filelink").symlink_to(outside / "keep" / "f")
    os.mkfifo(top / "fifo")
    (tmp_path / "toplink").symlink_to(outside)
    fsafe.remove_tree(str(tmp_path / "toplink"))
    assert (tmp_path / "toplink").is_symlink() and (outside / "keep" / "f").read_text() == "x"
    fsafe.remove_tree(str(top))
    assert not os.path.lexists(top) and (outside / "keep" / "f").read_text() == "x"
    fsafe.remove_tree(str(tmp_path / "missing"))  # nothing there: no error
