"""`donegate install` / `uninstall` on real repositories and real settings files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import config, paths
from donegate.install import guard, project as install
from donegate.tree import git as git_module
from donegate.errors import DonegateError
from donegate.claude import binary
from donegate.claude import settings as vocab
from tests.support.repos import write_config, KIT, make_repo, stop_payload
from tests.support.rules import resolved_all

USER_SETTINGS = """{
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "echo user-stop", "timeout": 5}]}],
        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "ruff format"}]}]
    },
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./secrets/**)"]},
    "unknownKey": {"nested": [1, 2, 3]},
    "statusLine": "caf\u00e9"
}"""  # four-space indent, no final newline, a non-ASCII character


def settings(repo: Path) -> dict:
    return json.loads((repo / ".claude" / "settings.json").read_text())


def claude_files(repo: Path) -> dict[str, bytes]:
    d = repo / ".claude"
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())} if d.exists() else {}


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": "x = 1\n", ".claude/settings.json": USER_SETTINGS})


@pytest.fixture
def bare_repo(tmp_path) -> Path:
    return make_repo(tmp_path / "bare", {"app.py": "x = 1\n"})


def test_install_keeps_user_settings_in_order(repo):
    install.install(repo, sandbox="off")
    data = settings(repo)
    assert list(data) == ["model", "hooks", "permissions", "unknownKey", "statusLine"]
    assert data["model"] == "opus" and data["unknownKey"] == {"nested": [1, 2, 3]} and data["statusLine"] == "caf\u00e9"
    assert list(data["hooks"]) == ["Stop", "PostToolUse", "PreToolUse"]
    assert data["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "echo user-stop", "timeout": 5}]}
    assert data["hooks"]["PostToolUse"] == [{"matcher": "Write", "hooks": [{"type": "command", "command": "ruff format"}]}]
    assert data["permissions"]["allow"] == ["Bash(ls:*)"]
    assert data["permissions"]["deny"][0] == "Read(./secrets/**)"
    assert "sandbox" not in data
    # The old file is backed up as it was.
    assert (repo / ".claude" / "settings.json.donegate-backup").read_text() == USER_SETTINGS
    # Written atomically: no temporary files left behind.
    assert not [p for p in (repo / ".claude").iterdir() if p.name.startswith(".")]


def test_stop_hook_command_and_timeout(repo, kit_home):
    install.install(repo, sandbox="off")
    [group] = [g for g in settings(repo)["hooks"]["Stop"] if "stop_gate.py" in json.dumps(vocab.hook_words(g["hooks"][0]))]
    hook = group["hooks"][0]
    assert hook["type"] == "command"
    assert isinstance(hook["timeout"], int) and hook["timeout"] > 120 + 30  # default timeout + hook_margin
    # Exec form with no arguments: the command is a stub at a neutral path (Claude Code 2.1.332 shows the
    # model this command line), and no shell reads it, so neither PATH, CLAUDE_CODE_SHELL_PREFIX nor quoting
    # can bend it. The stub runs the kit's interpreter with -I, the launcher and its arguments.
    assert hook["args"] == [] and hook["command"].startswith(str(Path.home() / ".claude" / "hooks" / "stop-"))
    for secret in (str(KIT), str(kit_home), str(repo.resolve()), "donegate"):
        assert secret not in hook["command"]
    assert os.access(hook["command"], os.X_OK)
    words = vocab.hook_words(hook)
    # -S: a checkout's launcher adds the site-packages itself once the first run is started (stop_gate._site)
    assert words[:10] == [os.path.abspath(sys.executable), "-I", "-S", str(KIT / "hooks" / "stop_gate.py"), "--home",
                          str(kit_home), "--repo", str(repo.resolve()), "--git", git_module.executable()]
    assert words[10:] in ([], ["--claude", binary.executable()])
    assert os.path.isabs(words[-1])


def test_the_stub_runs_the_launcher_and_uninstall_removes_it(repo, kit_home):
    install.install(repo, sandbox="off")
    hook = _kit_stop(settings(repo))
    res = subprocess.run([hook["command"]], input=json.dumps(stop_payload(repo)), capture_output=True, text=True,
                         timeout=120, env={k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"})
    assert res.returncode == 0, res.stderr
    assert "no acceptance tests are sealed" in res.stdout  # the launcher ran, with the state root from the stub
    made = sorted(p.name.split("-")[0] for p in (Path.home() / ".claude" / "hooks").iterdir())
    assert made == ["pretooluse", "ro", "ro", "stop"]  # the stubs, and the links to the checkout and the state root
    install.uninstall(repo)
    assert not any((Path.home() / ".claude" / "hooks").iterdir())


def _kit_stop(data: dict) -> dict:
    return [h for g in data["hooks"]["Stop"] for h in g["hooks"] if "stop_gate.py" in json.dumps(vocab.hook_words(h))][0]


def test_the_written_commands_run_as_argument_lists(repo, kit_home):
    install.install(repo, sandbox="off")
    data = settings(repo)
    stop = vocab.hook_words(_kit_stop(data))
    res = subprocess.run(stop, input=json.dumps(stop_payload(repo)), capture_output=True, text=True,
                         timeout=120, env={k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"})
    assert res.returncode == 0, res.stderr
    assert "no acceptance tests are sealed" in res.stdout  # the gate ran, with the state root install fixed
    guard_cmd = vocab.hook_words(data["hooks"]["PreToolUse"][-1]["hooks"][0])
    payload = {"tool_name": "Read", "cwd": str(repo), "tool_input": {"file_path": str(kit_home / "acceptance" / "x.py")}}
    res = subprocess.run(guard_cmd, input=json.dumps(payload), capture_output=True, text=True,
                         timeout=60, env={k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"})
    assert res.returncode == 2 and json.loads(res.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_timeout_covers_reviewers_when_on(repo, kit_home):
    write_config(kit_home, "timeout: 100\nreview: block\nreview_timeout: 200\nhook_margin: 30.5\n")
    install.install(repo, sandbox="off")
    hook = _kit_stop(settings(repo))
    assert hook["timeout"] == 331  # > 100 + 200 + 30.5
    cfg = config.load()
    assert vocab.hook_timeout({**cfg, "review": "off"}) == 131


def test_guard_hook_and_deny_rules(repo, kit_home):
    install.install(repo, sandbox="off")
    data = settings(repo)
    [group] = data["hooks"]["PreToolUse"]
    assert group["matcher"] == guard.MATCHER
    for tool in ("Bash", "Read", "Grep", "Glob", "Edit", "Write", "NotebookEdit", "MultiEdit"):
        assert tool in group["matcher"].split("|")
    assert str(KIT / "hooks" / "guard.py") in vocab.hook_words(group["hooks"][0])
    assert group["hooks"][0]["onFailure"] == "block"  # a guard that cannot start refuses the call (2.1.295)
    deny = resolved_all(data["permissions"]["deny"])
    assert not any(str(KIT) in r or str(kit_home) in r for r in data["permissions"]["deny"])  # named by links only
    for root in (KIT, kit_home):
        for tool in ("Read", "Edit", "Write", "Grep", "Glob", "NotebookEdit"):
            assert f"{tool}(/{root}/**)" in deny  # `//abs/path/**`: absolute
            assert f"{tool}(/{root}/**)".startswith(f"{tool}(//")
    assert "Edit(/.claude/settings*.json)" in deny and "Write(/.claude/settings*.json)" in deny
    assert not any(".claude/**" in r for r in deny)


def test_sandbox_block(repo, kit_home, monkeypatch):
    monkeypatch.setattr(vocab, "sandbox_available", lambda: (True, ""))
    install.install(repo, sandbox="auto")
    box = settings(repo)["sandbox"]
    assert box["enabled"] is True and box["failIfUnavailable"] is True
    assert box["allowUnsandboxedCommands"] is False and box["autoAllowBashIfSandboxed"] is True
    for name in ("denyRead", "denyWrite"):
        assert sorted(resolved_all(box["filesystem"][name])) == sorted(["/" + str(KIT), "/" + str(kit_home), "/" + str(Path.home() / ".claude" / "hooks")])
        assert not any(str(KIT) in p or str(kit_home) in p for p in box["filesystem"][name])
    # Never Edit(./.claude/**) with the sandbox on: it breaks every Bash command.
    assert not any(".claude/**" in r for r in settings(repo)["permissions"]["deny"])


def test_sandbox_modes_without_dependencies(repo, monkeypatch):
    monkeypatch.setattr(vocab.shutil, "which", lambda name: None)
    monkeypatch.setattr(vocab.sys, "platform", "linux")
    before = claude_files(repo)
    with pytest.raises(DonegateError) as err:
        install.install(repo, sandbox="on")
    assert "bubblewrap" in err.value.fix and claude_files(repo) == before
    install.install(repo, sandbox="auto")
    assert "sandbox" not in settings(repo)


def test_sandbox_keeps_and_restores_user_values(tmp_path, monkeypatch):
    monkeypatch.setattr(vocab, "sandbox_available", lambda: (True, ""))
    original = json.dumps({"sandbox": {"enabled": False, "filesystem": {"denyRead": ["~/.aws"]}, "network": {"allowLocalBinding": True}}}, indent=2) + "\n"
    repo = make_repo(tmp_path / "r", {".claude/settings.json": original})
    install.install(repo, sandbox="on")
    box = settings(repo)["sandbox"]
    assert box["enabled"] is True and box["filesystem"]["denyRead"][0] == "~/.aws" and box["network"] == {"allowLocalBinding": True}
    # A later edit by the user forces a structural uninstall: the user's values come back.
    data = settings(repo)
    data["permissions"]["allow"] = ["Bash(make:*)"]
    (repo / ".claude" / "settings.json").write_text(json.dumps(data, indent=2) + "\n")
    install.uninstall(repo)
    assert settings(repo) == {"sandbox": {"enabled": False, "filesystem": {"denyRead": ["~/.aws"]}, "network": {"allowLocalBinding": True}},
                              "permissions": {"allow": ["Bash(make:*)"]}}


def test_install_twice_is_byte_identical(repo):
    install.install(repo, sandbox="off")
    first = claude_files(repo)
    install.install(repo, sandbox="off")
    assert claude_files(repo) == first


def test_uninstall_restores_the_original_byte_for_byte(repo):
    before = claude_files(repo)
    install.install(repo, sandbox="off")
    install.install(repo, sandbox="off")
    install.uninstall(repo)
    assert claude_files(repo) == before


def test_uninstall_without_a_previous_file_leaves_no_trace(bare_repo):
    install.install(bare_repo, sandbox="off")
    assert (bare_repo / ".claude" / "settings.json").exists()
    install.uninstall(bare_repo)
    assert not (bare_repo / ".claude").exists()
    assert subprocess.run(["git", "-C", str(bare_repo), "status", "--porcelain"], capture_output=True, text=True).stdout == ""


def test_uninstall_keeps_an_existing_empty_claude_folder(bare_repo):
    (bare_repo / ".claude").mkdir()
    (bare_repo / ".claude" / "commands.md").write_text("x\n")
    install.install(bare_repo, sandbox="off")
    install.uninstall(bare_repo)
    assert claude_files(bare_repo) == {"commands.md": b"x\n"}


def test_uninstall_after_user_edits_removes_only_the_kit(repo):
    install.install(repo, sandbox="off")
    data = settings(repo)
    data["permissions"]["deny"].append("Read(./private/**)")
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "echo later"}]})
    data["env"] = {"FOO": "1"}
    (repo / ".claude" / "settings.json").write_text(json.dumps(data, indent=2) + "\n")
    install.uninstall(repo)
    after = settings(repo)
    original = json.loads(USER_SETTINGS)
    assert after["permissions"] == {"allow": ["Bash(ls:*)"], "deny": ["Read(./secrets/**)", "Read(./private/**)"]}
    assert after["hooks"] == {**original["hooks"], "Stop": original["hooks"]["Stop"] + [{"hooks": [{"type": "command", "command": "echo later"}]}]}
    assert after["env"] == {"FOO": "1"} and list(after)[:5] == list(original)
    assert (repo / ".claude" / "settings.json.donegate-backup").exists()  # kept: the file had changed
    assert not (repo / install.RECORD).exists()


def test_reinstall_after_user_edits_does_not_duplicate(repo):
    install.install(repo, sandbox="off")
    data = settings(repo)
    data["permissions"]["allow"].append("Bash(make:*)")
    (repo / ".claude" / "settings.json").write_text(json.dumps(data, indent=2) + "\n")
    install.install(repo, sandbox="off")
    again = settings(repo)
    assert again["permissions"]["allow"] == ["Bash(ls:*)", "Bash(make:*)"]
    kit_stops = [h for g in again["hooks"]["Stop"] for h in g["hooks"] if "stop_gate.py" in json.dumps(vocab.hook_words(h))]
    assert len(kit_stops) == 1 and len(again["hooks"]["PreToolUse"]) == 1
    assert len(again["permissions"]["deny"]) == len(set(again["permissions"]["deny"]))
    install.uninstall(repo)
    assert settings(repo)["permissions"]["allow"] == ["Bash(ls:*)", "Bash(make:*)"]
    assert "PreToolUse" not in settings(repo)["hooks"]


def test_uninstall_without_record_removes_the_kit_by_recognition(repo):
    install.install(repo, sandbox="off")
    (repo / install.RECORD).unlink()
    install.uninstall(repo)
    data = settings(repo)
    assert not any("stop_gate.py" in json.dumps(vocab.hook_words(h)) for g in data["hooks"]["Stop"] for h in g["hooks"])
    assert data["permissions"]["deny"] == ["Read(./secrets/**)"]


def test_uninstall_when_not_installed(bare_repo):
    path, done = install.uninstall(bare_repo)
    assert "not installed" in done and not path.exists()


def test_build_settings_is_what_install_writes(repo):
    existing = json.loads(USER_SETTINGS)
    built = install.build_settings(existing, sandbox=False, cfg=config.load(), repo=repo.resolve())
    install.install(repo, sandbox="off")
    assert built == settings(repo)
    assert existing == json.loads(USER_SETTINGS)  # not modified in place
    assert install.build_settings({}, sandbox=True)["sandbox"]["enabled"] is True


def test_refuses_a_state_root_inside_the_repository(repo, monkeypatch):
    monkeypatch.setenv("DONEGATE_HOME", str(repo / "kitstate"))
    before = claude_files(repo)
    with pytest.raises(DonegateError) as err:
        install.install(repo, sandbox="off")
    assert "inside the repository" in err.value.message and "outside" in err.value.fix
    assert claude_files(repo) == before


def test_refuses_a_repository_inside_the_kit(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "KIT_ROOT", tmp_path)
    (tmp_path / "hooks").mkdir()
    for name in ("stop_gate.py", "guard.py"):
        (tmp_path / "hooks" / name).write_text("")
    inner = make_repo(tmp_path / "inner", {"a.py": ""})
    with pytest.raises(DonegateError, match="inside the kit checkout"):
        install.install(inner, sandbox="off")


@pytest.mark.parametrize("broken", [
    '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "30"}]}]}}',
    '{"permissions": {"deny": "Read(x)"}}',
    '{"a": 1,}',
    '{"hooks": [1]}',
    "[]",
])
def test_refuses_a_file_claude_code_would_drop(tmp_path, broken):
    repo = make_repo(tmp_path / "r", {".claude/settings.json": broken})
    with pytest.raises(DonegateError):
        install.install(repo, sandbox="off")
    assert (repo / ".claude" / "settings.json").read_text() == broken
    assert not (repo / install.RECORD).exists()


def test_not_a_git_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(DonegateError, match="not inside a git repository"):
        install.install(tmp_path / "plain", sandbox="off")


def test_cli_install_and_uninstall(repo):
    before = claude_files(repo)
    env = {**os.environ}
    res = subprocess.run([sys.executable, "-m", "donegate", "install", str(repo), "--sandbox", "off"],
                         capture_output=True, text=True, timeout=120, cwd=KIT, env=env)
    assert res.returncode == 0, res.stderr
    assert "installed" in res.stdout and "sandbox off" in res.stdout
    res = subprocess.run([sys.executable, "-m", "donegate", "uninstall", str(repo)], capture_output=True, text=True,
                         timeout=120, cwd=KIT, env=env)
    assert res.returncode == 0, res.stderr
    assert claude_files(repo) == before
    res = subprocess.run([sys.executable, "-m", "donegate", "install", str(repo / "nope")], capture_output=True, text=True,
                         timeout=120, cwd=KIT, env=env)
    assert res.returncode == 1 and "no such folder" in res.stderr


def test_refuses_when_the_launchers_are_missing(repo, monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "KIT_ROOT", tmp_path / "site-packages")
    with pytest.raises(DonegateError, match="stop_gate.py does not exist") as err:
        install.install(repo, sandbox="off")
    assert "pip install --force-reinstall donegate" in err.value.fix  # worded for an installed wheel


def test_uninstall_removes_a_created_file_left_with_only_the_kit(bare_repo):
    install.install(bare_repo, sandbox="off")
    path = bare_repo / ".claude" / "settings.json"
    path.write_text(json.dumps(json.loads(path.read_text())))  # reformatted: no longer byte-identical
    _, done = install.uninstall(bare_repo)
    assert not (bare_repo / ".claude").exists() and "created" in done
