"""The Codex boundary without the binary: the trust recipe, the config block, the ledger's client,
Codex's block semantics (exit 2 needs non-empty stderr) and the hook timeout above the kit's deadline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import config
from donegate.codex import installing, trust, userconfig
from donegate.core.outcome import BLOCK, Outcome, render
from donegate.errors import DonegateError
from donegate.gate import watchdog
from donegate.gate.inputs import client_of

CODEX_STOP = {"session_id": "s", "turn_id": "t", "transcript_path": "", "cwd": "/x", "hook_event_name": "Stop",
              "model": "gpt-5.1-codex", "permission_mode": "bypassPermissions", "stop_hook_active": False,
              "last_assistant_message": "done"}


def test_trusted_hash_is_codexs_recipe_and_moves_with_the_command_timeout_and_matcher():
    h = {"type": "command", "command": "python3 /x.py", "timeout": 120}
    # The value a hand-written hash made Codex 0.169.0 run (the prototype, /work/codex-proto/demo_gate.py recipe).
    ident = '{"event_name":"stop","hooks":[{"async":false,"command":"python3 /x.py","timeout":120,"type":"command"}]}'
    import hashlib

    assert trust.trusted_hash("Stop", h) == "sha256:" + hashlib.sha256(ident.encode()).hexdigest()
    assert trust.trusted_hash("Stop", {**h, "timeout": 121}) != trust.trusted_hash("Stop", h)
    assert trust.trusted_hash("PreToolUse", h, "Bash") != trust.trusted_hash("PreToolUse", h)
    assert trust.key("/c/config.toml", "PreToolUse", 2) == "/c/config.toml:pre_tool_use:2:0"


def test_install_appends_a_block_uninstall_takes_out_exactly_it(tmp_path):
    codex = tmp_path / "codex"
    codex.mkdir()
    mine = 'model = "o3"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "echo mine"\n'
    (codex / "config.toml").write_text(mine)
    p = installing.install(codex=codex, home=tmp_path / "state")
    text = (codex / "config.toml").read_text()
    assert text.startswith('default_permissions = "standard"') and mine in text
    # The user's own Stop group is group 0: the kit's is group 1, and its trust key says so.
    assert any(k.endswith(":stop:1:0") for k in p["trusted"]) and any(k.endswith(":pre_tool_use:0:0") for k in p["trusted"])
    assert installing.install(codex=codex, home=tmp_path / "state")["text"] == text  # twice: the same file
    assert not [f for f in installing.check(codex, tmp_path / "state") if f.level == "error"]
    installing.uninstall(codex)
    assert (codex / "config.toml").read_text() == mine
    assert not list((codex / "hooks").iterdir())


def test_an_edited_hook_is_reported_untrusted(tmp_path):
    codex = tmp_path / "codex"
    installing.install(codex=codex, home=tmp_path / "state")
    cfg = codex / "config.toml"
    cfg.write_text(cfg.read_text().replace("timeout = 10", "timeout = 11"))
    errors = [f.what for f in installing.check(codex, tmp_path / "state") if f.level == "error"]
    assert errors == ["the PreToolUse hook is not trusted as it stands (Codex skips it silently)"]


def test_no_profile_beside_sandbox_mode_and_on_refuses(tmp_path):
    codex = tmp_path / "codex"
    codex.mkdir()
    (codex / "config.toml").write_text('sandbox_mode = "workspace-write"\n')
    p = installing.plan(codex=codex, home=tmp_path / "state")
    assert not p["profile"] and "sandbox_mode" in p["why_no_profile"] and "[permissions." not in p["text"]
    with pytest.raises(DonegateError):
        installing.plan(codex=codex, home=tmp_path / "state", sandbox="on")


def test_a_user_file_the_block_cannot_join_is_refused(tmp_path):
    codex = tmp_path / "codex"
    codex.mkdir()
    (codex / "config.toml").write_text('hooks = { Stop = [] }\n')
    with pytest.raises(DonegateError, match="not valid TOML"):
        installing.plan(codex=codex, home=tmp_path / "state")


def test_the_hook_timeout_written_for_codex_is_longer_than_the_kits_deadline(tmp_path):
    cfg = config.defaults()
    p = installing.plan(codex=tmp_path / "codex", home=tmp_path / "state", cfg=cfg)
    assert p["timeout"] > watchdog.budget(cfg)
    assert f"timeout = {p['timeout']}" in p["text"]


def test_every_block_has_non_empty_stderr_codex_fails_open_without_it():
    for reason in ("", "  ", "assert 1 == 2"):
        code, out, err = render(Outcome("error", BLOCK, reason=reason))
        assert code == 2 and err.strip() and json.loads(out)["reason"].strip()


def test_the_launchers_own_block_has_stderr_when_the_package_cannot_load(tmp_path):
    from tests.support.repos import HOOK

    res = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.modules['donegate'] = None; "
                          f"sys.argv = ['x', '--home', {str(tmp_path)!r}]; "
                          f"exec(open({str(HOOK)!r}).read(), {{'__file__': {str(HOOK)!r}, '__name__': '__main__'}})"],
                         input=json.dumps(CODEX_STOP), capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.strip(), (res.returncode, res.stderr)


def test_the_client_comes_from_install_else_from_codexs_payload():
    assert client_of(CODEX_STOP) == "codex"
    claude = {k: v for k, v in CODEX_STOP.items() if k not in ("turn_id", "model")}
    assert client_of(claude) == "claude"
    assert client_of(claude, "codex") == "codex" and client_of(CODEX_STOP, "nonsense") == "codex"


def test_the_commands_install_check_show_and_uninstall_the_codex_hooks(tmp_path):
    from tests.support.repos import KIT

    def donegate(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT, timeout=120)

    codex_config = userconfig.config_path()
    assert codex_config == Path(os.environ["HOME"]).resolve() / ".codex" / "config.toml"  # the test's HOME (conftest)
    res = donegate("install", "--client", "codex")
    assert res.returncode == 0 and "permission profile on" in res.stdout, res.stdout + res.stderr
    assert userconfig.kit_block(codex_config.read_text())
    res = donegate("doctor", "--client", "codex", str(tmp_path))
    assert res.returncode == 0 and "0 error(s)" in res.stdout, res.stdout
    assert "Codex: hooks installed at the user level" in donegate("status").stdout
    res = donegate("uninstall", "--client", "codex")
    assert res.returncode == 0 and not userconfig.kit_block(codex_config.read_text())
    assert donegate("doctor", "--client", "codex", str(tmp_path)).returncode == 1


def test_the_profile_never_denies_the_folder_codex_runs_from(tmp_path):
    """Codex 0.169.0 cannot start a session whose profile denies its own binary (its sandbox helper is a
    link to it): a checkout holding Codex in node_modules is denied entry by entry, node_modules left out."""
    kit = tmp_path / "kit"
    (kit / "node_modules" / "@openai" / "codex").mkdir(parents=True)
    (kit / "donegate").mkdir()
    (kit / "hooks").mkdir()
    denied = installing.deny_paths(tmp_path / "codex", kit=kit, home=kit)
    assert kit not in denied and kit / "node_modules" not in denied
    assert {kit / "donegate", kit / "hooks", kit / "acceptance", kit / "state", kit / "logs"} <= set(denied)
    other = tmp_path / "other-kit"
    other.mkdir()
    assert other in installing.deny_paths(tmp_path / "codex", kit=other, home=tmp_path / "state")


def test_a_codex_configuration_needs_a_provider_config_and_leaves_claude_fingerprints_alone(tmp_path):
    from donegate.experiment import spec as specs
    from donegate.errors import ConfigError

    task = {"name": "t", "repo": {"path": "."}, "request": "r", "grading": "g", "acceptance": "a"}
    for folder in ("g", "a"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test_x.py").write_text("def test_x():\n    pass\n")
    base = {"experiment": "e", "configurations": ["tests"], "tasks": [task]}
    with pytest.raises(ConfigError, match="codex needs agent.codex_config"):
        specs.validate({**base, "configurations": [{"name": "c", "client": "codex"}]}, tmp_path / "s.yaml")
    both = specs.validate({**base, "agent": {"codex_config": "c.toml"},
                           "configurations": ["tests", {"name": "tests-codex", "client": "codex"}]}, tmp_path / "s.yaml")
    assert [c.get("client") for c in both.configurations] == [None, "codex"]
    plain = specs.validate(base, tmp_path / "s.yaml")
    # A Claude Code configuration's fingerprint is what it was before the client keys existed.
    assert "client" not in specs._stable(plain.agent) and "codex_config" not in specs._stable(plain.agent)
    with pytest.raises(ConfigError):
        specs.validate({**base, "configurations": [{"name": "c", "client": "copilot"}]}, tmp_path / "s.yaml")
