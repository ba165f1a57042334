"""Grading of the write-cache size request (tinydb 4.9.0): five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
import json

import pytest

from tinydb import TinyDB
from tinydb.middlewares import CachingMiddleware
from tinydb.storages import JSONStorage


def on_disk(path):
    text = path.read_text()
    return json.loads(text).get("_default", {}) if text.strip() else {}


def test_the_cache_is_written_after_cache_size_writes(tmp_path):
    path = tmp_path / "db.json"
    db = TinyDB(path, storage=CachingMiddleware(JSONStorage, cache_size=2))
    db.insert({"a": 1})
    db.insert({"a": 2})
    assert len(on_disk(path)) == 2


def test_fewer_writes_than_cache_size_stay_in_memory(tmp_path):
    path = tmp_path / "db.json"
    db = TinyDB(path, storage=CachingMiddleware(JSONStorage, cache_size=3))
    db.insert({"a": 1})
    db.insert({"a": 2})
    assert on_disk(path) == {} and len(db) == 2


def test_the_default_stays_1000_writes(tmp_path):
    path = tmp_path / "db.json"
    db = TinyDB(path, storage=CachingMiddleware(JSONStorage))
    for i in range(999):
        db.insert({"i": i})
    assert on_disk(path) == {}
    db.insert({"i": 999})
    assert len(on_disk(path)) == 1000


def test_a_cache_size_below_one_is_refused():
    with pytest.raises(ValueError):
        CachingMiddleware(JSONStorage, cache_size=0)


def test_close_still_writes_what_is_cached(tmp_path):
    path = tmp_path / "db.json"
    db = TinyDB(path, storage=CachingMiddleware(JSONStorage, cache_size=50))
    db.insert({"a": 1})
    db.close()
    assert len(on_disk(path)) == 1
