"""Grading of the table rename request (tinydb 4.9.0): five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
import pytest

from tinydb import TinyDB
from tinydb.storages import MemoryStorage


def with_tables():
    db = TinyDB(storage=MemoryStorage)
    db.table("users").insert_multiple([{"n": 1}, {"n": 2}])
    db.table("orders").insert({"o": 9})
    return db


def test_the_documents_and_their_ids_move_to_the_new_name():
    db = with_tables()
    db.rename_table("users", "people")
    assert [(d.doc_id, d["n"]) for d in db.table("people").all()] == [(1, 1), (2, 2)]


def test_the_old_name_is_no_longer_a_table():
    db = with_tables()
    db.rename_table("users", "people")
    assert db.tables() == {"people", "orders"}


def test_the_rename_is_saved_to_the_json_file(tmp_path):
    path = tmp_path / "db.json"
    with TinyDB(path) as db:
        db.table("users").insert({"n": 1})
        db.rename_table("users", "people")
    with TinyDB(path) as db:
        assert db.tables() == {"people"} and db.table("people").all() == [{"n": 1}]


def test_renaming_onto_an_existing_table_is_refused_and_loses_nothing():
    db = with_tables()
    with pytest.raises((ValueError, KeyError)):
        db.rename_table("users", "orders")
    assert len(db.table("users")) == 2 and db.table("orders").all() == [{"o": 9}]


def test_renaming_a_table_that_does_not_exist_is_refused():
    db = with_tables()
    with pytest.raises((ValueError, KeyError)):
        db.rename_table("nosuch", "other")
    assert db.tables() == {"users", "orders"}
