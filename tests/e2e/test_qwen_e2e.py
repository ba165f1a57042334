"""The gate on Qwen Code: the real binary (pinned in package.json, 0.15.10, the last release that runs on Node 20)
against the scripted Chat Completions API in tests/support/fakechat.py, installed with
`donegate install --client qwen REPO` (the Stop hook in ~/.qwen/settings.json).

Qwen Code sends Claude Code's Stop payload (with `stop_hook_active` true on every stop) and reads a block
from exit 2 with stderr: a claim of done with the bug in is blocked with the assertion, the fix passes,
every ledger line says `client: qwen` (install's `--client qwen`), nothing the model is sent names the
store or the kit or quotes a hidden test.
"""

from __future__ import annotations

import json

import pytest

from tests.support import clientrun, secrecy
from tests.support.fakechat import FakeChat, shell
from tests.support.gated import ASSERTION, BUG, CLAIM, pooled_example, ledger

pytestmark = pytest.mark.e2e
FIX = shell(f"sed -i 's/{BUG[0]}/{BUG[1]}/' shop/pricing.py")


def test_a_claim_of_done_with_the_bug_in_is_blocked_with_the_assertion_and_the_fix_passes(tmp_path_factory, kit_home):
    clientrun.find("qwen")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False, install=False)
    with FakeChat() as api:
        env = clientrun.install("qwen", g, api)
        peek = f"cat {g.hidden_test}"
        api.add(shell(peek), CLAIM, FIX, "Fixed the boundary: 10 units get the discount.")
        run = clientrun.run("qwen", g.repo, g.user_home, "Implement the request: orders of 10 or more units get 10% off.",
                            env)
        refused = api.tool_outputs()[0]
    stops = [r for r in ledger(g.home) if r.get("event") == "stop"]
    assert run.returncode == 0, run.describe()
    assert [s["verdict"] for s in stops] == ["block", "pass"], run.describe() + json.dumps(stops)[:2000]
    assert [s["client"] for s in stops] == ["qwen", "qwen"]
    assert [s["stop_hook_active"] for s in stops] == [True, True]  # Qwen Code's: the kit counts blocks itself
    assert any(ASSERTION in t for t in api.user_texts()), api.user_texts()
    assert BUG[1] in g.pricing.read_text() and api.overrun == 0
    assert secrecy.leaks(api, g, typed=[peek]) == {}  # the agent's own command aside
    # The guard refused the agent's look at the store (a tripwire: recorded), in the form this client reads.
    assert "donegate" in refused and "import pytest" not in refused, refused
    assert [r["client"] for r in clientrun.guard_lines(g.home)] == ["qwen"]
