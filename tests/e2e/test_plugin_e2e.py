"""donegate as a Claude Code plugin, installed the way users install plugins: the real `claude plugin
marketplace add` of this repository and `claude plugin install donegate@donegate`, then a sealed repository
and a real session against the scripted model: blocked on the hidden tests, then passing after the fix.
The plugin's Python environment is made by its own SessionStart hook in its data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakeapi import FakeAPI, turn, tool
from tests.support.gated import BUG
from tests.support.repos import EXAMPLE_TESTS, KIT, REQUEST, write_config
from tests.support.session import _clean_env, find_claude, run_session

pytestmark = pytest.mark.e2e


def claude(*argv: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(find_claude()), *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def test_the_manifests_validate_strictly(tmp_path):
    env = _clean_env({}, home=tmp_path)
    for where in (KIT, KIT / "plugin"):
        res = claude("plugin", "validate", "--strict", str(where), env=env, cwd=tmp_path)
        # 2.1.332 prints the plugin directory's (catalog's) advice first, an icon among it, and says it does not
        # change the result: the strict validation is what follows it.
        result = res.stdout.split("do not change the result below.")[-1]
        assert res.returncode == 0 and "Validation passed" in result and "warning" not in result, res.stdout + res.stderr
    plugin = json.loads((KIT / "plugin" / ".claude-plugin" / "plugin.json").read_text())
    from donegate import __version__

    assert plugin["version"] == __version__  # a new version is a new cache folder: the venv is made again
    assert not (KIT / "plugin" / "bin").exists()  # a plugin's bin/ is on the agent's PATH


def test_installed_plugin_blocks_then_passes(tmp_path, shop_repo):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    env = _clean_env({"XDG_DATA_HOME": str(xdg)}, home=home)
    env.pop("DONEGATE_HOME", None)
    res = claude("plugin", "marketplace", "add", str(KIT), env=env, cwd=shop_repo)
    assert res.returncode == 0, res.stdout + res.stderr
    res = claude("plugin", "install", "donegate@donegate", "--scope", "project", env=env, cwd=shop_repo)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((shop_repo / ".claude" / "settings.json").read_text())["enabledPlugins"] == {"donegate@donegate": True}
    [installed] = (home / ".claude" / "plugins" / "cache" / "donegate" / "donegate").iterdir()
    assert (installed / "kit" / "donegate" / "gate" / "__init__.py").is_file()  # the kit, copied (symlinks followed)
    assert not (installed / "bin").exists()

    # The person seals, into the state root the plugin's hooks read (the installed kit's default).
    state = xdg / "donegate"
    state.mkdir(parents=True)
    write_config(state, "")  # `confine: off` where there are no walls
    sealed = subprocess.run([sys.executable, "-m", "donegate", "seal", str(shop_repo), *map(str, sorted(EXAMPLE_TESTS.glob("test_*.py"))),
                             "--request", REQUEST], cwd=KIT, capture_output=True, text=True, timeout=180,
                            env={**os.environ, "DONEGATE_HOME": str(state)})
    assert sealed.returncode == 0, sealed.stderr

    pricing = shop_repo / "shop" / "pricing.py"
    [hidden] = (state / "acceptance").glob("*/test_bulk_discount.py")
    with FakeAPI() as api:
        api.add("Done: orders of 10 or more units get the discount.",
                turn(tool("Read", {"file_path": str(hidden)})),  # the plugin's guard refuses it
                turn(tool("Read", {"file_path": str(pricing)})),  # Claude Code edits only a file it has read
                turn(tool("Edit", {"file_path": str(pricing), "old_string": BUG[0], "new_string": BUG[1]})),
                "Fixed: exactly 10 units now get the discount.")
        s = run_session(shop_repo, api, REQUEST, home=home, timeout=600, extra_env={"XDG_DATA_HOME": str(xdg)},
                        extra_args=["--permission-mode", "acceptEdits"])
        assert s.returncode == 0 and not api.overrun, (s.result, s.stderr[-2000:])
        feedback = api.stop_hook_feedback()
    assert len(feedback) == 1 and "test_ten_units_get_the_bulk_discount" in feedback[0], feedback
    refused = api.tool_results(api.main_requests()[2])[0]
    assert refused["is_error"] and "donegate guard: this Read call was refused" in json.dumps(refused), refused
    assert "def test_" not in json.dumps(refused)
    assert str(state) not in feedback[0]
    lines = [json.loads(line) for line in (state / "ledger.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in lines if r["event"] == "stop"] == ["block", "pass"]
    assert BUG[1] in pricing.read_text()
    # The environment was made once, in the plugin's data folder, not on any PATH.
    [venv] = (home / ".claude" / "plugins" / "data").glob("*/venv")
    assert (venv / "share" / "donegate" / "hooks" / "stop_gate.py").is_file()
    # ... built from a copy: nothing written into the plugin (for a local marketplace, this repository).
    assert sorted(p.name for p in (KIT / "plugin" / "kit").iterdir()) == ["README.md", "donegate", "hooks", "pyproject.toml",
                                                                          "reviewer", "writer"]
