"""`donegate install --managed` / `uninstall --managed` (issue 15 item 4). The drop-in is written into a
temporary folder: as a function argument, or (the command itself) inside bubblewrap with that folder
mounted over /etc/claude-code. Nothing here writes the real /etc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import config
from donegate.install import machine as managed
from donegate.errors import DonegateError
from donegate.claude import managed as claude_managed
from donegate.claude import settings as vocab
from tests.support.repos import write_config, HOOK, KIT
from tests.support.managed import wrap
from tests.support.rules import resolved_all


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under `root`, by relative path."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = None if p.is_dir() else p.read_bytes()
    return out


def test_the_platform_folders():
    assert claude_managed.managed_root("linux") == Path("/etc/claude-code")
    assert claude_managed.managed_root("darwin") == Path("/Library/Application Support/ClaudeCode")
    assert claude_managed.drop_in_path(claude_managed.managed_root("darwin")) == Path(
        "/Library/Application Support/ClaudeCode/managed-settings.d/donegate.json")
    with pytest.raises(DonegateError, match="not supported on win32"):
        claude_managed.managed_root("win32")


def test_the_drop_in(tmp_path, kit_home):
    root = tmp_path / "claude-code"
    path = managed.install_managed(sandbox="on" if vocab.sandbox_available()[0] else "off", root=root, check_root=False)
    assert path == root / "managed-settings.d" / "donegate.json"
    data = json.loads(path.read_text())
    assert "sandbox" in data if vocab.sandbox_available()[0] else "sandbox" not in data
    (stop,) = data["hooks"]["Stop"][0]["hooks"]
    # exec form, no shell, no arguments: a stub in the managed folder, its path naming nothing of the kit
    assert stop["args"] == [] and stop["command"].startswith(str(root / "hooks" / "stop-"))
    words = vocab.hook_words(stop)
    assert words[:6] == [os.path.abspath(sys.executable), "-I", "-S", str(HOOK), "--home", str(kit_home)]
    assert "--managed" in words and "--repo" not in words
    assert os.path.isabs(words[words.index("--git") + 1])
    assert stop["timeout"] == vocab.hook_timeout(config.load())
    (guard,) = data["hooks"]["PreToolUse"][0]["hooks"]
    assert vocab.hook_words(guard)[1:4] == ["-I", "-S", str(KIT / "hooks" / "guard.py")]
    env = data["env"]
    assert env["CLAUDE_CODE_SIMPLE"] == "0" and env["LD_PRELOAD"] == ""
    assert int(env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"]) > config.load()["max_blocks"]
    deny = resolved_all(data["permissions"]["deny"])
    for folder in (KIT, kit_home, root):
        for tool in ("Read", "Edit", "Write"):
            assert f"{tool}(/{folder}/**)" in deny
    if "sandbox" in data:
        assert "/" + str(root) in data["sandbox"]["filesystem"]["denyWrite"]
        assert "/" + str(kit_home) in resolved_all(data["sandbox"]["filesystem"]["denyRead"])
    assert stat_mode(path) == 0o644


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_block_cap_is_pinned_above_max_blocks(kit_home):
    write_config(kit_home, "max_blocks: 30\n")
    assert claude_managed.pinned_env(config.load())["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] == "32"


@pytest.mark.parametrize("before", ["nothing", "empty folder", "other drop-ins", "a file of the same name"])
def test_uninstall_puts_back_the_folder_byte_for_byte(before, tmp_path, kit_home):
    root = tmp_path / "claude-code"
    if before != "nothing":
        (root / "managed-settings.d").mkdir(parents=True)
    if before in ("other drop-ins", "a file of the same name"):
        (root / "managed-settings.json").write_text('{"model": "x"}')
        (root / "managed-settings.d" / "10-site.json").write_bytes(b'{"env": {"A": "1"}}\n\xff')
    if before == "a file of the same name":
        (root / "managed-settings.d" / "donegate.json").write_bytes(b'{"someone": "else"}')
    was = tree(tmp_path)
    managed.install_managed(sandbox="off", root=root, check_root=False)
    managed.install_managed(sandbox="off", root=root, check_root=False)  # twice: still one install to undo
    assert json.loads((root / "managed-settings.d" / "donegate.json").read_text())["env"]["LD_PRELOAD"] == ""
    managed.uninstall_managed(root=root, check_root=False)
    assert tree(tmp_path) == was
    assert not (kit_home / "state" / "managed-install.json").exists()
    assert managed.uninstall_managed(root=root, check_root=False)[1].startswith("nothing to do")


def test_managed_needs_root(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(DonegateError, match="needs root"):
        managed.install_managed(sandbox="off", root=tmp_path / "cc")
    with pytest.raises(DonegateError, match="needs root"):
        managed.uninstall_managed(root=tmp_path / "cc")
    assert not (tmp_path / "cc").exists()


def test_the_command_writes_only_the_mounted_folder(tmp_path, kit_home):
    folder = tmp_path / "etc-claude-code"
    folder.mkdir()
    real = Path("/etc/claude-code")
    real_before = real.exists()
    env = {**os.environ, "DONEGATE_HOME": str(kit_home)}

    def cli(*args):
        return subprocess.run([*wrap(folder, writable=True), sys.executable, "-m", "donegate", *args], cwd=KIT, env=env,
                              capture_output=True, text=True, timeout=120)

    res = cli("install", "--managed", "--sandbox", "off")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "managed policy in /etc/claude-code/managed-settings.d/donegate.json" in res.stdout
    assert json.loads((folder / "managed-settings.d" / "donegate.json").read_text())["env"]["CLAUDE_CODE_SIMPLE"] == "0"
    assert real.exists() == real_before  # the real /etc was never touched
    res = cli("install", "--managed", str(tmp_path))
    assert res.returncode == 1 and "give no REPO" in res.stderr
    res = cli("uninstall", "--managed")
    assert res.returncode == 0, res.stdout + res.stderr
    assert tree(folder) == {}
