"""doctor reads every layer (managed drop-ins too) and names each env key and git setting that weakens
the gate, and the install mode that protects it (issue 15 item 5)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from donegate import config
from donegate.install import diagnose as doctor, project as install
from donegate.claude import stubs
from donegate.claude import managed as claude_managed
from donegate.claude import settings as vocab


@pytest.fixture
def managed_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "claude-code"
    monkeypatch.setattr(doctor, "MANAGED_DIR", folder)
    return folder


@pytest.fixture
def installed(sealed_shop, managed_dir) -> Path:
    """The worker's one seal of the example (`sealed_shop`), then the project install: install takes its settings into
    the seal (tests/install/test_doctor.py shows both orders healthy). A seal each was ~21 of this file's 28 CPU-s."""
    install.install(sealed_shop, sandbox="off")
    return sealed_shop


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def write_drop_in(managed_dir: Path) -> None:
    """What `donegate install --managed` writes into `managed_dir`: the drop-in and the stubs its hooks run."""
    data, files, links = claude_managed.drop_in(config.load(), sandbox=False, root=managed_dir, with_stubs=True)
    stubs.write(files, links)
    write(managed_dir / "managed-settings.d" / "donegate.json", data)


def layer(repo: Path, scope: str, managed_dir: Path) -> Path:
    return {"user": Path(os.environ["HOME"]) / ".claude" / "settings.json",
            "project": repo / ".claude" / "settings.json",
            "local": repo / ".claude" / "settings.local.json",
            "managed": managed_dir / "managed-settings.d" / "50-site.json"}[scope]


def add_env(repo: Path, scope: str, managed_dir: Path, env: dict) -> None:
    path = layer(repo, scope, managed_dir)
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("env", {}).update(env)
    write(path, data)


def findings_with(findings, level, *words):
    return [f for f in findings if f.level == level and all(w in f.what for w in words)]


CASES = [  # (key, value, level with the exec-form hook)
    ("CLAUDE_CODE_SIMPLE", "1", doctor.ERROR),
    ("LD_PRELOAD", "/tmp/x.so", doctor.ERROR),
    ("PYTHONPATH", "/tmp/evil", doctor.WARNING),
    ("PATH", "/tmp/evil:/usr/bin", doctor.WARNING),
    ("CLAUDE_CODE_SHELL_PREFIX", "/tmp/wrap", doctor.WARNING),
    ("DONEGATE_NESTED", "1", doctor.WARNING),
    ("GIT_CONFIG_COUNT", "1", doctor.WARNING),
]


@pytest.mark.parametrize("scope", ["user", "project", "local"])
@pytest.mark.parametrize("key, value, level", CASES)
def test_each_weakening_env_key_is_named_where_it_is(key, value, level, scope, installed, managed_dir):
    add_env(installed, scope, managed_dir, {key: value})
    hits = findings_with(doctor.diagnose(installed), level, key)
    assert hits, [f.what for f in doctor.diagnose(installed) if f.level != doctor.OK]
    assert hits[0].where == str(layer(installed, scope, managed_dir)) and hits[0].fix


def test_a_block_cap_from_settings_env_below_max_blocks(installed, managed_dir):
    add_env(installed, "local", managed_dir, {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1"})
    assert findings_with(doctor.diagnose(installed), doctor.ERROR, "max_blocks is 6", "after 1 blocks")


def test_honest_env_is_not_reported(installed, managed_dir):
    add_env(installed, "project", managed_dir, {"ANTHROPIC_MODEL": "x", "CLAUDE_CODE_SIMPLE": "0", "LD_PRELOAD": ""})
    found = doctor.diagnose(installed)
    assert findings_with(found, doctor.OK, "no settings layer sets an env key")
    assert not [f for f in found if "env " in f.what and f.level != doctor.OK]


def test_a_shell_form_hook_makes_path_and_pythonpath_errors(installed, managed_dir):
    path = installed / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    hook = data["hooks"]["Stop"][-1]["hooks"][0]
    hook["command"] = " ".join(vocab.quote(w) for w in vocab.hook_words(hook))
    hook.pop("args", None)
    write(path, data)
    add_env(installed, "user", managed_dir, {"PYTHONPATH": "/tmp/evil"})
    found = doctor.diagnose(installed)
    assert findings_with(found, doctor.ERROR, "runs through a shell")
    assert findings_with(found, doctor.ERROR, "PYTHONPATH")


def test_managed_env_wins_over_the_layers_below(installed, managed_dir):
    add_env(installed, "local", managed_dir, {"CLAUDE_CODE_SIMPLE": "1", "LD_PRELOAD": "/tmp/x.so"})
    assert findings_with(doctor.diagnose(installed), doctor.ERROR, "CLAUDE_CODE_SIMPLE")
    write_drop_in(managed_dir)
    found = doctor.diagnose(installed)
    assert not findings_with(found, doctor.ERROR, "CLAUDE_CODE_SIMPLE") and not findings_with(found, doctor.ERROR, "LD_PRELOAD")


@pytest.mark.parametrize("setting", [("core.fsmonitor", "/tmp/evil"), ("filter.x.clean", "/tmp/evil"),
                                     ("diff.x.textconv", "/tmp/evil"), ("core.hooksPath", "/tmp/hooks")])
def test_command_running_git_config_is_reported(setting, installed):
    subprocess.run(["git", "-C", str(installed), "config", *setting], check=True)
    hits = findings_with(doctor.diagnose(installed), doctor.WARNING, "git config runs programs", setting[0].lower())
    assert hits and hits[0].fix.startswith("remove")


def test_honest_git_config_is_not_reported(installed):
    assert findings_with(doctor.diagnose(installed), doctor.OK, "git config runs no program")


def test_the_mode(installed, managed_dir):
    assert findings_with(doctor.diagnose(installed), doctor.WARNING, "protected by the project install alone")
    if vocab.sandbox_available()[0]:
        install.install(installed, sandbox="on")
        assert findings_with(doctor.diagnose(installed), doctor.OK, "project install with the sandbox")
    install.uninstall(installed)
    write_drop_in(managed_dir)
    found = doctor.diagnose(installed)
    assert findings_with(found, doctor.OK, "protected by a managed install")
    assert not [f.what for f in found if f.level == doctor.ERROR]  # the managed drop-in alone is a whole install


def test_stops_that_saw_a_weakening_environment_are_reported(installed, kit_home):
    from tests.support.repos import stop_payload

    hook = vocab.hook_words(json.loads((installed / ".claude" / "settings.json").read_text())["hooks"]["Stop"][-1]["hooks"][0])
    env = {k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"}
    for extra in ({}, {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "2"}):
        subprocess.run(hook, input=json.dumps(stop_payload(installed)), env={**env, **extra}, capture_output=True, text=True, timeout=300)
    hits = findings_with(doctor.diagnose(installed), doctor.WARNING, "1 recent stop(s)", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2")
    assert hits and hits[0].where == str(kit_home / "ledger.jsonl")
