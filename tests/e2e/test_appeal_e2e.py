"""Appeals and cached stops inside the real Claude Code, against a scripted model.

What is asserted is what the model was shown (the scripted server's requests), what Claude Code
recorded (its result and transcript) and what the gate wrote (the ledger)."""

from __future__ import annotations

import pytest

from donegate.gate import appeal
from tests.support.gated import ASSERTION, CLAIM, EXAMPLE_TESTS, stop_hook_ran_cleanly

pytestmark = pytest.mark.e2e

REASON = "the request says nothing about rounding, yet a hidden test insists on rounding down"
APPEALING = f"I will not special-case a test I cannot read.\n\nAPPEAL: {REASON}"


def test_an_appeal_ends_the_turn_for_a_person_and_an_unchanged_tree_is_not_tested_twice(gated, api, tmp_path):
    # A second hidden test file records every hidden run outside the repository (outside the key),
    # which only an unconfined run can do (a confined one writes nothing that outlives it).
    runs = tmp_path / "runs.log"
    marker = tmp_path / "test_marker.py"
    # Each harness says which it is: the second run starts beside the first and may get this far on a block.
    marker.write_text(f"import sys\n\ndef test_the_run_is_recorded():\n    with open({str(runs)!r}, 'a') as fh:\n"
                      "        fh.write(('pytest' if 'pytest' in sys.modules else 'bare') + '\\n')\n")
    g = gated(tests=[*sorted(EXAMPLE_TESTS.glob("test_*.py")), marker], config={"confine": "off"})
    runs.unlink()  # the seal's baseline run
    api.add(CLAIM, CLAIM, APPEALING)
    s = g.run(api)

    stop_hook_ran_cleanly(s)  # includes: the result's subtype is "success"
    assert s.res.result["result"] == APPEALING
    assert s.verdicts == ["block", "block", "appealed"], s.describe()
    first, second = s.feedback()
    assert ASSERTION in first and appeal.LINE in first and first.rstrip().endswith(appeal.LINE)
    assert second == first  # the run's failures word for word (object addresses included: not run again)
    # The user is told that the session needs a person, with the reason and the failing tests.
    (msg,) = s.system_messages()
    assert "APPEALED" in msg and REASON in msg and "NOT verified" in msg and "needs a person" in msg
    assert "test_ten_units_get_the_bulk_discount" in msg
    gate = s.stops[2]["gates"]["appeal"]
    assert gate["accepted"] and gate["reason"] == REASON and len(gate["diff_sha256"]) == 64
    # Nothing changed in the tree after the first stop: the tests ran once, the ledger says cached.
    ran = runs.read_text().splitlines()
    assert ran.count("pytest") == 1 and ran.count("bare") <= 1 and len(ran) <= 2, ran
    assert [r.get("cached", False) for r in s.stops] == [False, True, True]
    assert s.stops[1]["gates"]["acceptance"] == s.stops[0]["gates"]["acceptance"]


def test_an_appeal_before_any_feedback_is_refused_and_the_agent_told_why(gated, api):
    # An agent that ends every message with an appeal must still see the failures first.
    g = gated()
    api.add(APPEALING, APPEALING)
    s = g.run(api)

    stop_hook_ran_cleanly(s)
    assert s.verdicts == ["block", "appealed"], s.describe()
    (refusal,) = s.feedback()
    assert ASSERTION in refusal and "your appeal was not accepted" in refusal and "not been shown yet" in refusal
    first = s.stops[0]["gates"]["appeal"]
    assert first["accepted"] is False and first["reason"] == REASON
    assert any("APPEALED" in m for m in s.system_messages())
