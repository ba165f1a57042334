"""The scripted models of the bundled experiment (examples/experiment/shop.yaml): agents of three
habits, a writer and reviewers, answering from the conversation alone, so that any number of
concurrent Claude Code sessions share one FakeAPI (`FakeAPI(respond=respond)`).

- `coupon`, the agent that **fixes what the gate reports**: its first draft knows only SAVE10; when
  the Stop hook's feedback names a failing test (its id, or a held-back test's requirement) it writes the
  complete version.
- `shipping`, the agent that **ships its first draft**: good on what the request says, silent where it
  is silent (an empty cart pays shipping); the writer does not commit there either, so no gate helps.
- `bulk`, the agent that **never fixes**: its first draft is right, the scripted writer adds one
  mistaken test nobody asked for (float units must raise TypeError); the agent refuses to change
  working code for a test it cannot read, and the breaker hands the run to a person (the blocks are
  `likely unjustified` in the report).

Under the blind `retry` control ("keep working, verify your work", no test named) the fixer reads its
file again at the first such block and writes the complete version at the second (it re-reads the
request: FIVEOFF was asked for); the shipper and the never-fixer stand by their drafts until the cap.

Reviewers (and the critic) approve with no findings: they cost money and move nothing.
The grading tests (examples/experiment/shop/*/grading) are never read here.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.fakeapi import _instance, first_user_text, is_stop_feedback, system_text, text, tool, turn

WRITER_MARK = "You write the acceptance tests"

# Each version is a list of (old, new) replacements applied to the file as it is in the session's
# repository when the agent writes it (the agent reads the file first, as Claude Code requires).
CART_INIT = "        self.lines: list[tuple[str, int, int]] = []\n"
CART_UNITS = "    def units(self) -> int:\n"
CART_TOTAL = "        return subtotal - bulk_discount(subtotal, self.units())\n"
APPLY = '''    def apply_coupon(self, code: str) -> None:
        if code not in COUPONS:
            raise ValueError(f"unknown coupon code {code!r}")
        self.coupon = code

'''
COUPON_V1 = [
    ("\n\nclass Cart:", '\nCOUPONS = {"SAVE10": 10}  # percent off\n\n\nclass Cart:'),
    (CART_INIT, CART_INIT + "        self.coupon: str | None = None\n"),
    (CART_UNITS, APPLY + CART_UNITS),
    (CART_TOTAL, "        total = subtotal - bulk_discount(subtotal, self.units())\n"
                 "        if self.coupon:\n            total -= subtotal * COUPONS[self.coupon] // 100\n        return total\n"),
]
COUPON_V2 = [
    ('COUPONS = {"SAVE10": 10}  # percent off', '# code -> (kind, amount): "percent" off the total after the bulk discount, or "cents" off\n'
     'COUPONS = {"SAVE10": ("percent", 10), "FIVEOFF": ("cents", 500)}'),
    ("            total -= subtotal * COUPONS[self.coupon] // 100\n        return total\n",
     "            kind, amount = COUPONS[self.coupon]\n"
     "            total -= total * amount // 100 if kind == \"percent\" else amount\n        return max(0, total)\n"),
]
SHIPPING_V1 = [
    ("\n\nclass Cart:", "\nSHIPPING_CENTS = 499\nFREE_SHIPPING_FROM = 5000  # cents\n\n\nclass Cart:"),
    (CART_TOTAL, "        return subtotal - bulk_discount(subtotal, self.units()) + self.shipping()\n\n"
                 "    def shipping(self) -> int:\n        return 0 if self.subtotal() >= FREE_SHIPPING_FROM else SHIPPING_CENTS\n"),
]
BULK_V1 = [("if units > BULK_THRESHOLD:", "if units >= BULK_THRESHOLD:")]

# What the scripted writer answers for each task: acceptance tests from the request alone.
WRITER_TESTS = {
    "coupon": {"test_coupons.py": '''from shop.cart import Cart
import pytest


def make(price, qty):
    cart = Cart()
    cart.add("sku", price, qty)
    return cart


def test_save10_gives_ten_percent():
    cart = make(1000, 3)
    cart.apply_coupon("SAVE10")
    assert cart.total() == 2700, "SAVE10 on a 3000-cent cart should leave 2700"


def test_fiveoff_gives_five_dollars():
    cart = make(2500, 1)
    cart.apply_coupon("FIVEOFF")
    assert cart.total() == 2000, "FIVEOFF on a 2500-cent cart should leave 2000"


def test_unknown_coupon_is_refused():
    with pytest.raises(ValueError):
        make(1000, 1).apply_coupon("BOGUS")
'''},
    "shipping": {"test_shipping_rule.py": '''from shop.cart import Cart


def make(price, qty=1):
    cart = Cart()
    cart.add("sku", price, qty)
    return cart


def test_below_threshold_is_charged():
    assert make(2000).shipping() == 499


def test_threshold_itself_is_free():
    assert make(2500, 2).shipping() == 0


def test_total_includes_shipping():
    assert make(2000).total() == 2499
'''},
    "bulk": {"test_bulk_rule.py": '''from shop.cart import Cart
from shop.pricing import bulk_discount
import pytest


def make(qty):
    cart = Cart()
    cart.add("sku", 100, qty)
    return cart


def test_ten_units_discounted():
    assert make(10).total() == 900


def test_nine_units_not_discounted():
    assert make(9).total() == 900


def test_units_must_be_an_integer():
    with pytest.raises(TypeError):
        bulk_discount(1000, 10.0)
'''},
}

HABITS = {"coupon": "fixer", "shipping": "shipper", "bulk": "never"}
DRAFTS = {"coupon": ("shop/cart.py", COUPON_V1), "shipping": ("shop/cart.py", SHIPPING_V1), "bulk": ("shop/pricing.py", BULK_V1)}
FINALS = {"coupon": ("shop/cart.py", COUPON_V2)}
REQUESTS = {}  # task -> request text, filled from the spec by `load_requests`


def load_requests(spec_path) -> dict[str, str]:
    import yaml

    data = yaml.safe_load(open(spec_path, encoding="utf-8"))
    REQUESTS.update({t["name"]: t["request"] for t in data["tasks"]})
    return dict(REQUESTS)


def _write(cwd: str, path: str, edits: list[tuple[str, str]]) -> dict:
    """A Write of `path` with `edits` applied to the file as it is now."""
    content = Path(cwd, path).read_text(encoding="utf-8")
    for old, new in edits:
        if old not in content:
            raise ValueError(f"shop_agents: {old!r} is not in {path}")
        content = content.replace(old, new, 1)
    return tool("Write", {"file_path": f"{cwd}/{path}", "content": content})


def _task(prompt: str) -> str | None:
    for name, request in sorted(REQUESTS.items(), key=lambda kv: -len(kv[1])):
        if request in prompt:
            return name
    return None


def _cwd(body: dict) -> str:
    m = re.search(r"Primary working directory: (\S+)", system_text(body))
    return m.group(1) if m else "."


def _writes(body: dict) -> int:
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant" and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Write")


def _read(body: dict, path: str) -> bool:
    return any(b.get("name") == "Read" and str((b.get("input") or {}).get("file_path", "")).endswith(path)
               for m in body.get("messages") or [] if m.get("role") == "assistant" and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use")


def _last_user(body: dict) -> tuple[str, bool]:
    """(text of the last user message, whether it is a tool result)."""
    messages = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    if not messages:
        return "", False
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content, False
    parts = [b for b in content or [] if isinstance(b, dict)]
    if any(b.get("type") == "tool_result" for b in parts):
        return "", True
    return "\n".join(b.get("text", "") for b in parts if b.get("type") == "text"), False


BLIND = "keep working, verify your work"  # the words of donegate.gate.retry.MESSAGE


def _blind_blocks(body: dict) -> int:
    """How many of the retry control's blind blocks the conversation holds."""
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "user"
               and BLIND in (m["content"] if isinstance(m.get("content"), str) else
                             " ".join(b.get("text", "") for b in m.get("content") or [] if isinstance(b, dict))))


def _structured(body: dict) -> dict | None:
    for t in body.get("tools") or []:
        if isinstance(t, dict) and t.get("name") == "StructuredOutput":
            return t.get("input_schema") or {}
    return None


def respond(body: dict):
    prompt = first_user_text(body)
    task = _task(prompt)
    schema = _structured(body)
    if schema is not None:
        if WRITER_MARK in prompt and task in WRITER_TESTS:
            files = [{"path": k, "content": v} for k, v in WRITER_TESTS[task].items()]
            return turn(tool("StructuredOutput", {"files": files, "notes": "scripted writer"}))
        return turn(tool("StructuredOutput", _instance(schema, "OK")))  # reviewers, critic: approve, no findings
    if task is None:
        return text("I do not know this task.")
    cwd = _cwd(body)
    last, was_tool = _last_user(body)
    writes = _writes(body)
    if writes == 0:
        path, edits = DRAFTS[task]
        if not _read(body, path):  # Claude Code refuses to overwrite a file the session has not read
            return turn("Let me look at the code first.", tool("Read", {"file_path": f"{cwd}/{path}"}))
        return turn("Let me implement it.", _write(cwd, path, edits))
    if was_tool:
        return text(f"Implemented: {HABITS[task]} draft {writes} of {task} is in place. All done.")
    feedback = is_stop_feedback(last) or "verification disagrees" in last or "test_" in last
    # A failing test is named by its id, or (held back: the kit's default holds back a share of the writer's
    # tests) by its requirement: the fixer acts on either.
    named = "test_" in last or "held-back requirement:" in last
    if HABITS[task] == "fixer" and feedback and task in FINALS and writes < 2 and named:
        path, edits = FINALS[task]
        return turn("The gate names a failing test; I will complete the implementation.", _write(cwd, path, edits))
    if HABITS[task] == "fixer" and BLIND in last and task in FINALS and writes < 2:
        path = FINALS[task][0]
        if _blind_blocks(body) == 1:
            return turn("Told to verify my work: let me read it again.", tool("Read", {"file_path": f"{cwd}/{path}"}))
        return turn("Checking against the request again: FIVEOFF is missing. Completing it.", _write(cwd, path, FINALS[task][1]))
    if HABITS[task] == "never":
        return text("I will not change working code for a test I cannot read: the request is implemented as asked. Done.")
    return text("The work is complete as it stands. Done.")
