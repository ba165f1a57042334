"""What the scripted reviewers and critic answer: their roles (how the fake API tells their requests
apart) and their structured verdicts."""

from __future__ import annotations

from tests.support.fakeapi import tool, turn

A, B, CRITIC = "Role: reviewer A", "Role: reviewer B", "Role: critic"
BUG = {"severity": "blocking", "file": "shop/pricing.py", "line": 15, "summary": "the threshold check excludes exactly 10 units",
       "evidence": "`units > BULK_THRESHOLD` should be `>=`"}
NIT = {"severity": "minor", "file": "shop/cart.py", "line": 20, "summary": "name the discount variable", "evidence": "readability"}


def verdict(approve: bool, *findings: dict) -> list:
    return [turn(tool("StructuredOutput", {"approve": approve, "findings": list(findings)}))]


def stamped(*stamps: tuple[int, str]) -> list:
    return [turn(tool("StructuredOutput", {"stamps": [{"index": i, "status": s, "reason": f"read line {i}"} for i, s in stamps]}))]
