"""The gate on Gemini CLI: the real binary (pinned in package.json, 0.61.0) against the scripted Gemini API in
tests/support/fakegemini.py, installed with `donegate install --client gemini REPO` (the AfterAgent hook in
~/.gemini/settings.json, REPO trusted: no --skip-trust, no GEMINI_CLI_TRUST_WORKSPACE).

A claim of done with the bug in is blocked with the assertion, the fix passes, every stop's ledger line says
`client: gemini`, nothing the model is sent names the store or the kit or quotes a hidden test; Gemini CLI
has no block cap of its own: the kit's counter ends the loop.
"""

from __future__ import annotations

import json

import pytest

from tests.support import clientrun, secrecy
from tests.support.fakegemini import FakeGemini, shell
from tests.support.gated import ASSERTION, BUG, CLAIM, GatedRepo, pooled_example, ledger

pytestmark = pytest.mark.e2e
FIX = shell(f"sed -i 's/{BUG[0]}/{BUG[1]}/' shop/pricing.py")


def _stops(g: GatedRepo) -> list[dict]:
    return [r for r in ledger(g.home) if r.get("event") == "stop"]


def test_a_claim_of_done_with_the_bug_in_is_blocked_with_the_assertion_and_the_fix_passes(tmp_path_factory, kit_home):
    clientrun.find("gemini")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False, install=False)
    with FakeGemini() as api:
        env = clientrun.install("gemini", g, api)
        peek = f"cat {g.hidden_test}"
        api.add(shell(peek), CLAIM, FIX, "Fixed the boundary: 10 units get the discount.")
        run = clientrun.run("gemini", g.repo, g.user_home, "Implement the request: orders of 10 or more units get 10% off.",
                            env)
        refused = api.tool_outputs()[0]
        told = api.user_texts()
    stops = _stops(g)
    assert run.returncode == 0, run.describe()
    assert [s["verdict"] for s in stops] == ["block", "pass"], run.describe() + json.dumps(stops)[:2000]
    assert [s["client"] for s in stops] == ["gemini", "gemini"]
    assert ASSERTION in told[-1] or any(ASSERTION in t for t in told), told
    assert BUG[1] in g.pricing.read_text() and api.overrun == 0
    assert secrecy.leaks(api, g, typed=[peek]) == {}  # the agent's own command aside
    # The guard refused the agent's look at the store (a tripwire: recorded), in the form this client reads.
    assert "donegate" in refused and "import pytest" not in refused, refused
    assert [r["client"] for r in clientrun.guard_lines(g.home)] == ["gemini"]


def test_the_kits_counter_ends_a_loop_gemini_never_ends(tmp_path_factory, kit_home):
    """A hook that always blocks ran 853 times in 90 s under Gemini CLI 0.61.0 (no cap): after `max_blocks` the
    kit hands the stop to a person (`gave_up`, allowed) and the session ends. One block is enough to show it (the
    counting itself, over many blocks and whatever `stop_hook_active` says, is tests/clients/test_client_stops.py's):
    Gemini CLI goes on after the block, and ends at the hand-over with the script's last turn unused."""
    clientrun.find("gemini")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False, install=False, config={"max_blocks": 1})
    with FakeGemini() as api:
        env = clientrun.install("gemini", g, api)
        api.add(CLAIM, "Done, really.", "Done, truly.")
        run = clientrun.run("gemini", g.repo, g.user_home, "Implement the request.", env)
    assert run.returncode == 0, run.describe()
    stops = _stops(g)
    assert [s["verdict"] for s in stops] == ["block", "gave_up"], run.describe()
    assert api.overrun == 0 and len(api.model_requests()) == 2 and api.turns == ["Done, truly."]
    assert secrecy.leaks(api, g) == {}
