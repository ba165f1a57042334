"""The shared primitives: a file replaced whole, a UTC timestamp, a counted noun."""

from __future__ import annotations

import datetime as dt
import os
import stat

import pytest

from donegate.core.util import atomic_write, plural, utc_now


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
