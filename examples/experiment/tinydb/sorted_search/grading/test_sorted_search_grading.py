"""Grading of the sorted search request (tinydb 4.9.0): five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
from tinydb import Query, TinyDB
from tinydb.storages import MemoryStorage


def scores():
    db = TinyDB(storage=MemoryStorage)
    db.insert_multiple([{"who": "b", "pts": 20}, {"who": "a", "pts": 30}, {"who": "c", "pts": 10}])
    return db


def test_results_come_sorted_by_the_field_ascending():
    found = scores().search(Query().pts > 0, sort_by="pts")
    assert [d["pts"] for d in found] == [10, 20, 30]


def test_reverse_gives_descending_order():
    found = scores().search(Query().pts > 0, sort_by="pts", reverse=True)
    assert [d["pts"] for d in found] == [30, 20, 10]


def test_without_sort_by_the_order_is_unchanged():
    assert [d["who"] for d in scores().search(Query().pts > 0)] == ["b", "a", "c"]


def test_a_cached_unsorted_search_does_not_leak_into_a_sorted_one():
    db = scores()
    q = Query().pts > 0
    db.search(q)
    assert [d["who"] for d in db.search(q, sort_by="who")] == ["a", "b", "c"]
    assert [d["who"] for d in db.search(q)] == ["b", "a", "c"]


def test_sorted_results_are_still_documents_with_their_ids():
    found = scores().table("_default").search(Query().pts > 0, sort_by="pts")
    assert [d.doc_id for d in found] == [3, 1, 2]
