"""How the kit was installed, the fix lines worded for it, and where its prompts and schemas come from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from donegate.core import kit as installation
from donegate import paths
from donegate.models import reviewer
from donegate.models import writer
from donegate.errors import DonegateError
from tests.support.repos import KIT
from tests.support.installed import fake_install


def wheel(prefix: Path, marker: str | None = None) -> Path:
    """An installed wheel's tree with the kit's writer/ and reviewer/ as data files; returns site-packages."""
    kit = fake_install(prefix)
    for folder in ("writer", "reviewer"):
        shutil.copytree(KIT / folder, prefix / "share" / "donegate" / folder)
    if marker:
        (prefix / marker).write_text("{}\n" if marker.endswith(".json") else "home = /usr/bin\n")
    return kit


def test_a_checkout_is_told_make_setup_and_git_checkout():
    assert installation.kind() == installation.CHECKOUT
    assert "make setup" in installation.reinstall()
    assert "git checkout writer/schema.json" in installation.restore("writer/schema.json")
    assert "make setup" in installation.claude_install()
    assert installation.kit_dir("writer") == KIT / "writer"


@pytest.mark.parametrize("marker, kind", [("pipx_metadata.json", "pipx"), ("pyvenv.cfg", "venv"), (None, "system")])
def test_an_installed_wheel_is_told_the_command_of_its_kind(tmp_path, marker, kind):
    kit = wheel(tmp_path / "p", marker)
    assert installation.kind(kit) == kind
    fix = installation.reinstall(kit) + installation.restore("writer/schema.json", kit) + installation.claude_install(kit)
    assert "make setup" not in fix and "git checkout" not in fix
    if kind == "pipx":
        assert "pipx reinstall donegate" in fix
    else:
        assert "-m pip install --force-reinstall donegate" in fix
    if kind == "venv":
        assert str(tmp_path / "p" / "bin" / "python") in fix
    assert "npm install -g @anthropic-ai/claude-code" in fix
    # The prompts and schemas of the installed wheel, not of some checkout.
    assert installation.kit_dir("reviewer", kit) == tmp_path / "p" / "share" / "donegate" / "reviewer"
    assert installation.file("writer", "schema.json", kit=kit).is_file()


def test_the_command_names_the_installed_script(tmp_path, monkeypatch):
    kit = wheel(tmp_path / "p", "pyvenv.cfg")
    script = tmp_path / "p" / "bin" / "donegate"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert installation.command(kit) == str(script)
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert installation.command(kit) == "donegate"


def test_a_wheel_without_its_prompts_says_how_to_reinstall(tmp_path, monkeypatch):
    kit = fake_install(tmp_path / "p")  # the launchers but no writer/ (the wheel before this change)
    (tmp_path / "p" / "pipx_metadata.json").write_text("{}")
    monkeypatch.setattr(paths, "KIT_ROOT", kit)
    with pytest.raises(DonegateError) as exc:
        writer.load_schema()
    assert exc.value.fix.startswith("run `pipx reinstall donegate`") and "git checkout" not in str(exc.value)
    with pytest.raises(DonegateError) as exc:
        reviewer.load_assets()
    assert "pipx reinstall donegate" in exc.value.fix


def test_the_persons_prompts_folder_replaces_the_kits_file_by_file(tmp_path, kit_home):
    mine = kit_home / "my-prompts"
    (mine / "reviewer").mkdir(parents=True)
    (mine / "reviewer" / "prompt.md").write_text("My own review prompt. {{diff}}\n")
    (mine / "writer").mkdir()
    schema = json.loads((KIT / "writer" / "schema.json").read_text())
    schema["description"] = "mine"
    (mine / "writer" / "schema.json").write_text(json.dumps(schema))

    a = reviewer.load_assets(override="my-prompts")  # relative: beside donegate.yaml
    assert a.prompt.startswith("My own review prompt")
    assert a.critic == (KIT / "reviewer" / "critic.md").read_text()  # not in the folder: the kit's
    assert writer.load_schema(override=str(mine))["description"] == "mine"
    assert writer.load_prompt(override=str(mine)) == (KIT / "writer" / "prompt.md").read_text()
    assert reviewer.load_assets(override=None).prompt == (KIT / "reviewer" / "prompt.md").read_text()


def test_doctor_reports_reviewer_files_the_review_gate_cannot_read(tmp_path, monkeypatch):
    from donegate import config
    from donegate.install import diagnose as doctor
    from donegate.core.finding import ERROR, OK, WARNING

    cfg = {**config.defaults(), "review": "block"}
    found: list = []
    doctor._check_prompts(found, cfg)
    assert [f.level for f in found] == [OK, OK]
    monkeypatch.setattr(installation, "kit_dir", lambda folder, kit=None: tmp_path / "empty")
    found = []
    doctor._check_prompts(found, cfg)
    assert [f.level for f in found] == [WARNING, ERROR] and "cannot read the reviewer file" in found[1].what
    found = []
    doctor._check_prompts(found, {**cfg, "review": "off"})
    assert [f.level for f in found] == [WARNING, WARNING]


@pytest.mark.parametrize("version, level", [("2.1.400", "warning"), ("2.1.100", "error")])
def test_a_wheel_knows_its_claude_code_range_and_names_no_step_it_cannot_do(tmp_path, monkeypatch, version, level):
    """From a pipx install, doctor said "proven on 2.1.197 to 2.1.197", fix "npm ci in the kit (pins 2.1.197)": a
    wheel has neither the pin nor a kit to run npm in. It carries the range, and the fix is one it can run."""
    from donegate import config
    from donegate.claude import binary
    from donegate.install import diagnose

    kit = wheel(tmp_path / "p", "pipx_metadata.json")
    monkeypatch.setattr(paths, "KIT_ROOT", kit)
    claude = tmp_path / "claude"
    claude.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    claude.chmod(0o755)
    monkeypatch.setenv("DONEGATE_CLAUDE", str(claude))
    diagnose._run_cached.cache_clear()
    findings: list = []
    diagnose._check_claude(findings, config.defaults())
    (found,) = [f for f in findings if "claude is" in f.what]
    assert found.level == level and f"{binary.OLDEST} to {binary.NEWEST}" in found.what, found
    assert f"npm install -g @anthropic-ai/claude-code@{binary.NEWEST}" in found.fix, found.fix
    assert "npm ci" not in found.fix and "make " not in found.fix and "in the kit" not in found.fix, found.fix


def test_the_packaged_range_is_the_checkouts_pin():
    from donegate.claude import binary

    pin = json.loads((KIT / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]
    assert binary.NEWEST == pin == binary.pinned_version()
