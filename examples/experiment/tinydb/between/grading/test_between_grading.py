"""Grading of the between request (tinydb 4.9.0): five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
from tinydb import Query, TinyDB
from tinydb.storages import MemoryStorage


def people():
    db = TinyDB(storage=MemoryStorage)
    db.insert_multiple([{"name": n, "age": a} for n, a in (("kid", 17), ("low", 18), ("mid", 25), ("top", 30), ("old", 31))])
    db.insert({"name": "ageless"})
    return db


def names(docs):
    return sorted(d["name"] for d in docs)


def test_both_bounds_are_included():
    assert names(people().search(Query().age.between(18, 30))) == ["low", "mid", "top"]


def test_values_outside_the_bounds_do_not_match():
    found = names(people().search(Query().age.between(20, 29)))
    assert found == ["mid"]


def test_a_document_without_the_field_is_skipped_not_an_error():
    db = people()
    assert "ageless" not in names(db.search(Query().age.between(0, 200)))


def test_between_combines_with_and_and_not():
    db = people()
    q = Query()
    assert names(db.search(q.age.between(18, 30) & ~(q.name == "mid"))) == ["low", "top"]


def test_different_bounds_are_different_queries_for_the_query_cache():
    db = people()
    assert len(db.search(Query().age.between(18, 25))) == 2
    assert len(db.search(Query().age.between(18, 30))) == 3
