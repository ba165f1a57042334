"""`install --client gemini|copilot|qwen`, `uninstall`, `doctor` and `status` without the binaries: the hook where
each client reads it (its user configuration, outside every repository), its timeout above the kit's deadline,
the folder's trust written, exactly the kit's entries taken out again, and doctor's errors for a folder
the client would skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from donegate import config
from donegate.clients import homes, wiring
from donegate.gate import watchdog
from tests.support.repos import KIT, make_repo


def _errors(client, repo, home, state):
    return [f.what for f in wiring.check(client, repo, home=home, state=state) if f.level == "error"]


@pytest.mark.parametrize("client", ["gemini", "copilot", "qwen"])
def test_install_writes_the_hook_and_the_trust_uninstall_takes_out_exactly_the_hook(client, tmp_path):
    home, state = tmp_path / client, tmp_path / "state"
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    mine = {"gemini": {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}, "ui": {"theme": "x"}},
            "qwen": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}},
            "copilot": {"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}}}[client]
    file = home / ("hooks/mine.json" if client == "copilot" else "settings.json")
    homes.write_json(file, mine)
    assert _errors(client, repo, home, state)  # nothing of the kit's yet: an error
    cfg = config.defaults()
    p = wiring.install(client, repo=repo, home=home, state=state, cfg=cfg)
    assert p["timeout"] > watchdog.budget(cfg)
    data = homes.read_json(p["file"])
    event = wiring.EVENTS[client]
    entries = data["hooks"][event]
    if client == "copilot":
        assert p["file"] == home / "hooks" / "gate.json" and homes.read_json(file) == mine
        assert entries[0]["timeoutSec"] == p["timeout"] and entries[0]["bash"].startswith(str(home / "hooks" / "stop-"))
    else:
        assert entries[0] == mine["hooks"][event][0]  # the user's own hook first, kept
        assert entries[1]["hooks"][0]["timeout"] == p["timeout"] * 1000  # milliseconds
    assert homes.is_trusted(client, home, repo) and p["trusted_now"]
    assert wiring.install(client, repo=repo, home=home, state=state, cfg=cfg)["data"] == data  # twice: the same
    assert not _errors(client, repo, home, state)
    wiring.uninstall(client, home=home)
    assert homes.read_json(file) == mine and not list((home / "hooks").glob("stop-*"))
    assert homes.is_trusted(client, home, repo)  # the trust stays: the person's decision too


@pytest.mark.parametrize("client", ["gemini", "qwen", "copilot"])
def test_a_folder_the_client_would_skip_is_a_doctor_error_that_says_how_to_trust_it(client, tmp_path):
    home, state = tmp_path / client, tmp_path / "state"
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    other = make_repo(tmp_path / "other", {"a.py": "x = 1\n"})
    if client == "qwen":
        homes.write_json(home / "settings.json", {"security": {"folderTrust": {"enabled": True}}})
    if client == "copilot":  # Copilot runs the user's own hooks anyway: the error is for a Claude Code install it picks up
        from tests.support.repos import HOOK

        (other / ".claude").mkdir()
        (other / ".claude" / "settings.json").write_text(json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"python3 {HOOK}"}]}]}}))
    else:
        wiring.install(client, repo=repo, home=home, state=state)
    errors = _errors(client, other, home, state)
    assert any("is not a trusted folder" in e for e in errors), errors
    fixes = [f.fix for f in wiring.check(client, other, home=home, state=state) if "is not a trusted folder" in f.what]
    assert f"donegate install --client {client} {other}" in fixes[0]
    homes.trust(client, home, other)
    assert not _errors(client, other, home, state)


def test_hooks_switched_off_are_a_doctor_error(tmp_path):
    home, state = tmp_path / "g", tmp_path / "state"
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    wiring.install("gemini", repo=repo, home=home, state=state)
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text('// a comment Gemini allows\n{"hooksConfig": {"enabled": false}}\n')
    assert _errors("gemini", repo, home, state) == ["hooksConfig.enabled is false: Gemini CLI runs no hook at all"]
    qhome = tmp_path / "q"
    wiring.install("qwen", repo=repo, home=qhome, state=state)
    settings = homes.read_json(qhome / "settings.json")
    homes.write_json(qhome / "settings.json", {**settings, "disableAllHooks": True})
    assert _errors("qwen", repo, qhome, state) == ["disableAllHooks is true: Qwen Code runs no hook at all"]


def test_copilots_trust_is_kept_in_its_config_json_beside_its_comment_lines(tmp_path):
    home = tmp_path / "c"
    home.mkdir()
    (home / "config.json").write_text('// User settings belong in settings.json.\n{\n  "firstLaunchAt": "x"\n}\n')
    assert homes.trust("copilot", home, tmp_path / "repo")
    text = (home / "config.json").read_text()
    assert text.startswith("// User settings") and homes.read_json(home / "config.json")["trustedFolders"] == [str(tmp_path / "repo")]
    assert homes.is_trusted("copilot", home, tmp_path / "repo" / "sub") and not homes.is_trusted("copilot", home, tmp_path)


def test_the_commands_install_check_show_and_uninstall_each_client(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})

    def donegate(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT,
                              timeout=120)

    for client in ("gemini", "copilot", "qwen"):
        res = donegate("install", "--client", client, str(repo))
        assert res.returncode == 0 and "now trusted" in res.stdout, res.stdout + res.stderr
        folder = homes.folder(client)
        assert str(folder).startswith(os.environ["HOME"])  # the test's HOME (conftest), never the real one
        res = donegate("doctor", "--client", client, str(repo))
        assert res.returncode == 0 and "0 error(s)" in res.stdout, res.stdout
        assert f"{wiring.NAMES[client]}: Stop hook installed" in donegate("status").stdout
        assert donegate("uninstall", "--client", client).returncode == 0
        assert donegate("doctor", "--client", client, str(repo)).returncode == 1


def test_plain_doctor_warns_where_copilot_would_skip_a_claude_code_install(tmp_path):
    from donegate.clients.wiring import copilot_skips

    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    env = {"HOME": str(tmp_path / "h")}
    assert copilot_skips(repo, env) == []  # no Copilot on this account: nothing to say
    (tmp_path / "h" / ".copilot").mkdir(parents=True)
    (warning,) = copilot_skips(repo, env)
    assert warning.level == "warning" and "skips this Claude Code install's Stop hook" in warning.what
    homes.trust("copilot", tmp_path / "h" / ".copilot", repo)
    assert copilot_skips(repo, env) == []
