"""Grading of the push/pull request (tinydb 4.9.0): five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
from tinydb import Query, TinyDB
from tinydb.storages import MemoryStorage


def memory_db(*docs):
    db = TinyDB(storage=MemoryStorage)
    db.insert_multiple(docs)
    return db


def test_push_appends_the_value_to_the_list():
    from tinydb.operations import push

    db = memory_db({"tags": ["a"]})
    db.update(push("tags", "b"), doc_ids=[1])
    assert db.get(doc_id=1)["tags"] == ["a", "b"]


def test_pull_removes_every_occurrence_of_the_value():
    from tinydb.operations import pull

    db = memory_db({"tags": ["a", "b", "a"]})
    db.update(pull("tags", "a"), doc_ids=[1])
    assert db.get(doc_id=1)["tags"] == ["b"]


def test_pulling_a_value_that_is_not_there_changes_nothing():
    from tinydb.operations import pull

    db = memory_db({"tags": ["a"]})
    db.update(pull("tags", "zzz"), doc_ids=[1])
    assert db.get(doc_id=1)["tags"] == ["a"]


def test_push_and_pull_are_saved_to_the_json_file(tmp_path):
    from tinydb.operations import pull, push

    path = tmp_path / "db.json"
    with TinyDB(path) as db:
        db.insert({"tags": ["x", "y"]})
        db.update(push("tags", "z"), doc_ids=[1])
        db.update(pull("tags", "x"), doc_ids=[1])
    with TinyDB(path) as db:
        assert db.get(doc_id=1)["tags"] == ["y", "z"]


def test_push_changes_only_the_documents_the_query_matches():
    from tinydb.operations import push

    db = memory_db({"name": "ann", "tags": []}, {"name": "bob", "tags": []})
    db.update(push("tags", "vip"), Query().name == "ann")
    assert [d["tags"] for d in db.all()] == [["vip"], []]
