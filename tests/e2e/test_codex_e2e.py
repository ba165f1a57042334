"""The gate on OpenAI's Codex CLI: the real binary (pinned in package.json, 0.169.0) against the scripted
Responses API in tests/support/fakeresponses.py, installed with `donegate install --client codex`.

A claim of done with the bug in is blocked with the assertion, the fix passes, every stop's ledger line
says `client: codex`; the agent's attempts to read the store, the hook or the hooks' config are refused
(by the guard or by the permission profile); nothing any request carries names the kit, the state root
or the store, nor quotes a hidden test (the profile's deny list aside: Codex lists it, docs/codex.md);
the kit's own block counter ends a loop Codex would never end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.support import require, secrecy
from tests.support.codexrun import find_codex, run_codex, write_provider
from tests.support.fakeresponses import FakeResponses, shell
from tests.support.gated import ASSERTION, BUG, CLAIM, KIT, GatedRepo, pooled_example, ledger

pytestmark = pytest.mark.e2e


FIX = shell(f"sed -i 's/{BUG[0]}/{BUG[1]}/' shop/pricing.py")
PROFILE = secrecy.CODEX_LISTS[0]  # Codex lists the permission profile to the model


def _codex_gated(tmp_path, tmp_path_factory, kit_home, **kwargs):
    """(gated repository, CODEX_HOME, install) - install(api, *args) writes the provider, then the kit's block.
    `kwargs`: more of the pooled example's arguments (a config)."""
    find_codex()
    g = pooled_example(tmp_path_factory, kit_home, sandbox=False, install=False, **kwargs)
    codex_home = tmp_path / "codex-home"

    def install(api: FakeResponses, *args: str) -> str:
        write_provider(codex_home, api)
        # Codex's sandbox needs user namespaces, not the `bwrap` package (it bundles its own). Where there are
        # none, the guard alone, and the session runs unsandboxed (`codexrun.run_codex`): Codex's default
        # without a profile is its read-only sandbox, in which the agent's fix is never written.
        if not require.namespaces_work():
            args = ("--sandbox", "off", *args)
        res = subprocess.run([sys.executable, "-m", "donegate", "install", "--client", "codex", str(g.repo), *args],
                             cwd=g.kit, env={**os.environ, "DONEGATE_HOME": str(g.home), "CODEX_HOME": str(codex_home)},
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        return res.stdout

    return g, codex_home, install


@pytest.fixture
def codex_gated(tmp_path, tmp_path_factory, kit_home):
    return _codex_gated(tmp_path, tmp_path_factory, kit_home)


def _stops(g: GatedRepo) -> list[dict]:
    return [r for r in ledger(g.home) if r.get("event") == "stop"]


def test_the_agent_cannot_read_the_store_the_hook_or_its_config_and_the_kits_counter_ends_a_loop_codex_never_ends(
        tmp_path, tmp_path_factory, kit_home):
    """The agent's looks at the store, the hook and its config are refused (by the guard, or by the permission profile
    where the guard cannot see the path) and no request names them; then it claims done again and again. Codex
    0.169.0 has no block cap (a hook that always blocks keeps a turn going forever): the kit's own counter is the only
    one, and with `max_blocks: 2` the stop is handed to a person and Codex ends the turn. One session where there were
    two (the counter's had a repository, an install and a session of its own: ~2.2 CPU-s); the fix that passes is
    test_a_claim_of_done_with_the_bug_in_is_blocked_with_the_assertion_and_the_fix_passes's."""
    require.namespaces()  # the permission profile is Codex's (bundled) bubblewrap sandbox
    g, codex_home, install = _codex_gated(tmp_path, tmp_path_factory, kit_home, config={"max_blocks": 2})
    config = codex_home / "config.toml"
    with FakeResponses() as api:
        out = install(api)
        assert "permission profile on" in out, out
        stub = next((codex_home / "hooks").glob("stop-*"))
        typed = [f"cat {g.hidden_test}", f"cat {g.hook}", f"cat {config}", f"cat {stub}",
                 # What the guard cannot see (a path computed at run time) the profile refuses.
                 f"python3 -c \"import sys; print(open(sys.argv[1][::-1]).read())\" '{str(g.hidden_test)[::-1]}'"]
        api.add(*map(shell, typed), *[CLAIM] * 6)
        run = run_codex(codex_home, g.repo, "Implement the request.", env={"DONEGATE_HOME": ""})
        sent = api.all_request_text()
        outputs = api.tool_outputs()
    assert run.returncode == 0, run.describe()
    assert len(outputs) == 5, outputs
    for attempt in outputs:
        assert "Command blocked by PreToolUse hook" in attempt or "Permission denied" in attempt, attempt
    assert "Command blocked by PreToolUse hook" in outputs[0]  # the guard: a tripwire, recorded
    guarded = [r for r in ledger(g.home) if r.get("event") == "guard"]
    assert guarded and {r["client"] for r in guarded} == {"codex"}
    assert "Permission denied" in outputs[4]  # the profile: the wall behind it
    back = "\n".join(outputs)
    assert "trusted_hash" not in back and "ARGV" not in back, outputs
    # Codex lists the profile's denied folders to the model (0.169.0); nothing else names them.
    listed = "".join(PROFILE.findall(sent))
    assert str(g.home) in listed, "Codex no longer lists the denied folders to the model: re-check docs/codex.md"
    # The store's path reaches the model only in the commands the agent typed (Codex echoes a refused one), and in
    # Python's refusal of the path the agent computed.
    assert secrecy.leaks(api, g, typed=[*typed, f"Permission denied: '{g.hidden_test}'"], codex=True) == {}
    # The kit's counter, not Codex, ended the claims: blocked up to max_blocks, handed over, and Codex stopped asking.
    verdicts = [s["verdict"] for s in _stops(g)]
    assert verdicts[-1] == "gave_up" and verdicts.count("block") <= 3, verdicts
    assert len(api.model_requests()) == len(typed) + len(verdicts) and len(api.turns) > 0, (verdicts, api.turns)


def test_a_claim_of_done_with_the_bug_in_is_blocked_with_the_assertion_and_the_fix_passes(codex_gated):
    """Blocked with the assertion, the fix passes; in the same session the guard's entry edited after install: Codex
    skips an untrusted hook silently, which is why doctor checks trust (the two had a session each: ~2.5 CPU-s)."""
    g, codex_home, install = codex_gated
    with FakeResponses() as api:
        install(api)
        cfg = codex_home / "config.toml"
        cfg.write_text(cfg.read_text().replace("timeout = 10\n", "timeout = 11\n"))  # the guard's hash no longer fits
        peek = f"cat {g.hidden_test}"
        api.add(shell(peek), CLAIM, FIX, "Fixed the boundary: 10 units get the discount.")
        run = run_codex(codex_home, g.repo, "Implement the request: orders of 10 or more units get 10% off.",
                        env={"DONEGATE_HOME": ""})
    stops = _stops(g)
    assert run.returncode == 0, run.describe()
    assert [s["verdict"] for s in stops] == ["block", "pass"], run.describe() + json.dumps(stops)[:3000]
    assert [s["client"] for s in stops] == ["codex", "codex"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    (run_id, text), = api.hook_prompts()
    assert ASSERTION in text
    # What Codex shows of the hook: its place among the handlers and its config file, which names nothing of the kit.
    assert re.fullmatch(rf"stop:\d+:{re.escape(str(codex_home / 'config.toml'))}", run_id), run_id
    assert api.overrun == 0 and not api.turns
    assert BUG[1] in g.pricing.read_text()
    # The edited guard: no word of it, and the look it would have refused got through to the profile (or further).
    if require.namespaces_work():  # the profile refused the look the untrusted guard let through
        assert secrecy.leaks(api, g, typed=[peek, f"cat: {g.hidden_test}: Permission denied"], codex=True) == {}
    assert "PreToolUse" not in run.stderr and "Command blocked" not in api.tool_outputs()[0]
    assert not [r for r in ledger(g.home) if r.get("event") == "guard"]
    res = subprocess.run([sys.executable, "-m", "donegate", "doctor", "--client", "codex", str(g.repo)], cwd=g.kit,
                         env={**os.environ, "DONEGATE_HOME": str(g.home), "CODEX_HOME": str(codex_home)},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "PreToolUse hook is not trusted" in res.stdout, res.stdout


# Answers only the first stop of the turn (Codex has no block cap: a hook that always blocks loops forever).
HOOK_SCRIPT = "import json, sys\nif json.load(sys.stdin).get('stop_hook_active'):\n    sys.exit(0)\n{body}\n"


@pytest.mark.parametrize("body, blocks", [
    ("sys.stderr.write('not yet'); sys.exit(2)", True),
    ("sys.exit(2)", False),  # exit 2 with nothing on stderr: Codex lets the agent stop
    ("print('{\"decision\": \"block\"}')", False),  # a decision without a reason: the same
    ("sys.stderr.write('broken'); sys.exit(1)", False),  # any other failure: the same (Claude Code: the same)
])
def test_codex_reads_a_block_only_from_exit_2_with_stderr_or_a_decision_with_a_reason(tmp_path, body, blocks):
    """Codex 0.169.0's reading of a Stop hook's answer, the reason every block of the kit has words on stderr
    (`donegate.core.outcome.render`). A bare hook trusted with the kit's recipe (`donegate.codex.trust`)."""
    from donegate.codex import trust

    find_codex()
    codex_home, repo = tmp_path / "codex-home", tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "hook.py"
    script.write_text(HOOK_SCRIPT.format(body=body))
    handler = {"type": "command", "command": f"{sys.executable} {script}", "timeout": 30}
    with FakeResponses() as api:
        key = trust.key(str(codex_home / "config.toml"), "Stop", 0)
        write_provider(codex_home, api, extra=f'''
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = {json.dumps(handler["command"])}
timeout = 30

[hooks.state.{json.dumps(key)}]
trusted_hash = "{trust.trusted_hash("Stop", handler)}"
''')
        api.add("Done.", "Done again.")
        run = run_codex(codex_home, repo, "Do it.", timeout=60)
    assert run.returncode == 0, run.describe()
    assert len(api.model_requests()) == (2 if blocks else 1), run.describe()
    assert ("Stop Blocked" in run.stderr) == blocks, run.stderr[-1500:]


def test_an_experiment_configuration_runs_on_codex(tmp_path, kit_home):
    """`client: codex` in a configuration: the run's own CODEX_HOME from `agent.codex_config`, the kit installed
    in it, the session `codex exec --json`, its stops in the experiment's ledger, graded as Claude Code's runs."""
    import yaml

    find_codex()
    examples = KIT / "examples"
    with FakeResponses() as api:
        provider = tmp_path / "codex.toml"
        write_provider(tmp_path / "provider", api)
        provider.write_text((tmp_path / "provider" / "config.toml").read_text())
        spec = tmp_path / "spec.yaml"
        spec.write_text(yaml.safe_dump({
            "experiment": "on-codex", "repetitions": 1,
            "configurations": [{"name": "tests-codex", "gate": "on", "tests": True, "client": "codex"}],
            "keys": {"confine": require.confine()},
            "agent": {"codex_config": str(provider)},
            "tasks": [{"name": "bulk", "repo": {"path": str(examples / "shop")},
                       "request": "orders of 10 or more units get 10% off",
                       "grading": str(examples / "experiment" / "shop" / "bulk" / "grading"),
                       "acceptance": str(examples / "shop-acceptance")}],
        }))
        api.add(CLAIM, FIX, "Fixed the boundary.")
        tmp = tmp_path / "runs-tmp"
        tmp.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
        env.update(DONEGATE_HOME=str(kit_home), TMPDIR=str(tmp), SCRIPTED_API_KEY="dummy")
        res = subprocess.run([sys.executable, "-m", "donegate", "experiment", "run", str(spec)], cwd=KIT, env=env,
                             capture_output=True, text=True, timeout=600)
    lines = ledger(kit_home)
    assert res.returncode == 0, res.stdout + res.stderr + json.dumps([r for r in lines if r.get("event") == "run_failed"])
    (run,) = [r for r in lines if r.get("event") == "run"]
    stops = [r for r in lines if r.get("event") == "stop"]
    assert [s["verdict"] for s in stops] == ["block", "pass"] and {s["client"] for s in stops} == {"codex"}
    assert run["client"] == "codex" and run["codex_version"] == "0.169.0" and run["session"] == stops[0]["session"]
    assert (run["stops"], run["blocks"], run["cost"]["agent"]) == (2, 1, None)
    assert run["result"] == "Fixed the boundary." and run["of"] > 0
    assert "codex-cli 0.169.0" in res.stdout, res.stdout  # the table says what ran the runs
