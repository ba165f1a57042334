"""The gate on GitHub Copilot CLI: the real binary (pinned in package.json, 1.0.102) offline (`COPILOT_OFFLINE=true`)
against the scripted Chat Completions API in tests/support/fakechat.py.

Copilot obeys only a JSON `{"decision": "block", "reason": ...}` on stdout (exit 2 with stderr alone is logged
as a warning and the agent ends); the kit's block carries it beside exit 2. Two installs reach a Copilot
session: `donegate install --client copilot` (the agentStop hook in $COPILOT_HOME/hooks/, the user level),
and a repository's Claude Code install (Copilot runs `.claude/settings.json`'s Stop hook in a trusted folder,
and silently skips it in one it does not trust: doctor says so).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from donegate.clients import homes
from tests.support import clientrun, secrecy
from tests.support.fakechat import FakeChat, shell
from tests.support.gated import ASSERTION, BUG, CLAIM, GatedRepo, pooled_example, kit_cmd, ledger

pytestmark = pytest.mark.e2e
FIX = shell(f"sed -i 's/{BUG[0]}/{BUG[1]}/' shop/pricing.py")


def _stops(g: GatedRepo) -> list[dict]:
    return [r for r in ledger(g.home) if r.get("event") == "stop"]


def _blocked_then_passed(g: GatedRepo, api: FakeChat, run: clientrun.ClientRun) -> None:
    stops = _stops(g)
    assert run.returncode == 0, run.describe()
    assert [s["verdict"] for s in stops] == ["block", "pass"], run.describe() + json.dumps(stops)[:2000]
    assert [s["client"] for s in stops] == ["copilot", "copilot"]
    # The claim was read from Copilot's transcript (its payload has no last message): the block says so.
    assert stops[0]["said"] == CLAIM and stops[0]["feedback"].startswith("You reported the work as complete")
    assert any(ASSERTION in t for t in api.user_texts()), api.user_texts()
    assert BUG[1] in g.pricing.read_text() and api.overrun == 0


def test_a_claim_of_done_with_the_bug_in_is_blocked_with_the_assertion_and_the_fix_passes(tmp_path_factory, kit_home):
    clientrun.find("copilot")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False, install=False)
    with FakeChat() as api:
        env = {**clientrun.install("copilot", g, api), **clientrun.copilot_cache(tmp_path_factory)}
        peek = f"cat {g.hidden_test}"
        api.add(shell(peek), CLAIM, FIX, "Fixed the boundary: 10 units get the discount.")
        run = clientrun.run("copilot", g.repo, g.user_home, "Implement the request: orders of 10 or more units get 10% off.",
                            env)
        refused = api.tool_outputs()[0]
    _blocked_then_passed(g, api, run)
    assert secrecy.leaks(api, g, typed=[peek]) == {}  # the agent's own command aside
    # The guard refused the agent's look at the store (a tripwire: recorded), in the form this client reads.
    assert "donegate" in refused and "import pytest" not in refused, refused
    assert [r["client"] for r in clientrun.guard_lines(g.home)] == ["copilot"]


def test_a_claude_code_install_blocks_under_copilot_in_a_trusted_folder_and_doctor_names_an_untrusted_one(tmp_path_factory, kit_home):
    clientrun.find("copilot")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False)  # `donegate install REPO`: Claude Code's project settings
    with FakeChat() as api:
        env = {**clientrun.provider("copilot", g.user_home, api), **clientrun.copilot_cache(tmp_path_factory)}
        api.add("Done.")
        run = clientrun.run("copilot", g.repo, g.user_home, "Implement the request.", env)
        assert run.returncode == 0 and _stops(g) == [], run.describe()  # untrusted: skipped silently, no ledger line
    doctor = kit_cmd(g.kit, g.home, "doctor", "--client", "copilot", str(g.repo), user_home=g.user_home)
    assert doctor.returncode == 1 and "is not a trusted folder" in doctor.stdout, doctor.stdout
    homes.trust("copilot", g.user_home / ".copilot", g.repo)  # as a person trusting it in Copilot would
    doctor = kit_cmd(g.kit, g.home, "doctor", "--client", "copilot", str(g.repo), user_home=g.user_home)
    assert doctor.returncode == 0, doctor.stdout
    with FakeChat() as api:
        env = {**clientrun.provider("copilot", g.user_home, api), **clientrun.copilot_cache(tmp_path_factory)}
        api.add(CLAIM, FIX, "Fixed.")
        run = clientrun.run("copilot", g.repo, g.user_home, "Implement the request.", env)
    _blocked_then_passed(g, api, run)
    assert secrecy.leaks(api, g) == {}  # the hook command Claude Code's settings hold is not passed on either


def test_copilot_obeys_only_a_json_decision_exit_2_with_stderr_alone_lets_the_agent_end(tmp_path, tmp_path_factory):
    """Why the kit's block always carries the JSON decision on stdout (`donegate.core.outcome.render`)."""
    clientrun.find("copilot")
    home, repo = tmp_path / "home", tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "hook.py"
    script.write_text("import json, sys\nif json.load(sys.stdin).get('stop_hook_active'):\n    sys.exit(0)\n"
                      "sys.stderr.write('not yet'); sys.exit(2)\n")
    homes.write_json(home / ".copilot" / "hooks" / "h.json", {"version": 1, "hooks": {"agentStop": [
        {"type": "command", "bash": f"{sys.executable} {script}", "timeoutSec": 30}]}})
    with FakeChat() as api:
        env = {**clientrun.provider("copilot", home, api), **clientrun.copilot_cache(tmp_path_factory)}
        api.add("Done.", "Done again.")
        run = clientrun.run("copilot", repo, home, "Do it.", env, timeout=120)
    assert run.returncode == 0, run.describe()
    assert len(api.model_requests()) == 1 and "not yet" in run.stdout + run.stderr, run.describe()
