"""The plugin install as the kit sees it: `claude plugin install donegate@donegate --scope project` (the real
Claude Code) after the seal. doctor and status name the plugin instead of "no donegate Stop hook" and
"not installed", and the plugin's own entry in .claude/settings.json is not a protected file changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.repos import KIT, seal_example
from tests.support.session import _clean_env, find_claude

pytestmark = pytest.mark.e2e


def test_the_plugin_installed_after_the_seal_is_seen_and_is_not_the_agents_change(tmp_path, shop_repo):
    seal_example(shop_repo)
    env = _clean_env({"XDG_DATA_HOME": str(tmp_path / "xdg")}, home=tmp_path / "home")
    (tmp_path / "home").mkdir()
    for argv in (["plugin", "marketplace", "add", str(KIT)], ["plugin", "install", "donegate@donegate", "--scope", "project"]):
        res = subprocess.run([str(find_claude()), *argv], env=env, cwd=shop_repo, capture_output=True, text=True, timeout=180)
        assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((shop_repo / ".claude" / "settings.json").read_text())["enabledPlugins"] == {"donegate@donegate": True}

    def donegate(*args: str) -> str:
        res = subprocess.run([sys.executable, "-m", "donegate", *args], cwd=KIT, capture_output=True, text=True, timeout=180,
                             env=dict(os.environ))
        return res.stdout + res.stderr

    doctor = donegate("doctor", str(shop_repo), "-v")
    assert "no donegate Stop hook" not in doctor and "the donegate plugin enabled in the project settings" in doctor, doctor
    assert "protected files were changed" not in doctor, doctor
    status = donegate("status", str(shop_repo))
    assert "not installed" not in status and "the plugin in the project settings" in status, status
    # The look-alike: the same file with another key of the agent's is a protected file changed.
    path = shop_repo / ".claude" / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "disableAllHooks": False}, indent=2) + "\n")
    assert "protected files were changed" in donegate("doctor", str(shop_repo)), doctor
