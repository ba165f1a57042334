"""`donegate doctor`: a healthy install passes; each broken case is named, with where and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.install import diagnose as doctor, project as install
from donegate import paths
from donegate.claude import binary
from donegate.claude import shapes
from donegate.claude import settings as vocab
from tests.support.repos import write_config, KIT, seal_example
from tests.support.rules import resolved




@pytest.fixture
def healthy(sealed_shop) -> Path:
    """Sealed (a copy of the worker's one seal: `sealed_shop`), then installed (sandbox as available): install takes
    its settings into the seal (`test_install_after_seal_is_taken_into_the_seal`). A seal of its own each (3 confined
    runs) was 17 of this file's 23.5 CPU-s; the order a user follows is `test_healthy_install_has_no_errors`'s."""
    install.install(sealed_shop, sandbox="auto")
    return sealed_shop


@pytest.fixture
def installed(shop_repo) -> Path:
    """Installed, not sealed: enough for the checks of the settings files."""
    install.install(shop_repo, sandbox="auto")
    return shop_repo


def errors(findings) -> list[str]:
    return [f.what for f in findings if f.level == doctor.ERROR]


def only_error(findings, *words) -> doctor.Finding:
    hits = [f for f in findings if f.level == doctor.ERROR and all(w in f.what for w in words)]
    assert hits, f"no error with {words}: {errors(findings)}"
    assert hits[0].where and hits[0].fix
    return hits[0]


def edit_settings(repo: Path, change, name: str = "settings.json") -> None:
    path = repo / ".claude" / name
    data = json.loads(path.read_text()) if path.exists() else {}
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


@pytest.mark.parametrize("order", ["install, then seal (a user's order)", "seal, then install"])
def test_healthy_install_has_no_errors(order, shop_repo, sealed_shop):
    if order.startswith("install"):
        install.install(shop_repo, sandbox="auto")
        healthy = seal_example(shop_repo)
    else:
        install.install(sealed_shop, sandbox="auto")
        healthy = sealed_shop
    findings = doctor.diagnose(healthy)
    assert errors(findings) == []
    oks = " | ".join(f.what for f in findings if f.level == doctor.OK)
    for expected in ("project settings: valid", "Stop hook timeout", "max_blocks 6", "deny rules cover", "acceptance tests sealed",
                     "the ledger is writable", "hook runs"):
        assert expected in oks, expected


def test_cli_exit_codes(healthy):
    res = subprocess.run([sys.executable, "-m", "donegate", "doctor", str(healthy), "-v"], capture_output=True, text=True,
                         timeout=180, cwd=KIT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 error(s)" in res.stdout
    edit_settings(healthy, lambda d: d.update(disableAllHooks=True), "settings.local.json")
    res = subprocess.run([sys.executable, "-m", "donegate", "doctor", str(healthy)], capture_output=True, text=True,
                         timeout=180, cwd=KIT)
    assert res.returncode == 1
    assert "ERROR   disableAllHooks is true in the local settings" in res.stdout
    assert "where: " + str(healthy / ".claude" / "settings.local.json") in res.stdout and "fix: remove disableAllHooks" in res.stdout


# Each shape Claude Code 2.1.197 was seen to reject (tests/e2e/test_install_e2e.py replays a few against the real binary).
def _hook(data):
    return data["hooks"]["Stop"][-1]["hooks"][0]


DROPPED = {
    "string timeout": (lambda d: _hook(d).update(timeout="151"), "timeout"),
    "zero timeout": (lambda d: _hook(d).update(timeout=0), "timeout"),
    "negative timeout": (lambda d: _hook(d).update(timeout=-1), "timeout"),
    "unknown hook type": (lambda d: _hook(d).update(type="script"), ".type"),
    "command not a string": (lambda d: _hook(d).update(command=["python", "x"]), ".command"),
    "matcher a number": (lambda d: d["hooks"]["PreToolUse"][0].update(matcher=5), ".matcher"),
    "inner hooks an object": (lambda d: d["hooks"]["Stop"][-1].update(hooks={"type": "command"}), ".hooks is an object"),

    "deny a string": (lambda d: d["permissions"].update(deny="Read(//x/**)"), "permissions.deny is the string"),
    "allow a string": (lambda d: d["permissions"].update(allow="Bash"), "permissions.allow"),
    "permissions a list": (lambda d: d.update(permissions=["Read"]), "permissions is a list"),
    "permissions null": (lambda d: d.update(permissions=None), "permissions is null"),
    "unknown defaultMode": (lambda d: d["permissions"].update(defaultMode="yolo"), "defaultMode"),
    "disableAllHooks a string": (lambda d: d.update(disableAllHooks="false"), "disableAllHooks is the string"),
    "sandbox a boolean": (lambda d: d.update(sandbox=True), "sandbox is the boolean"),
    "sandbox.enabled a string": (lambda d: d.update(sandbox={"enabled": "true"}), "sandbox.enabled"),
    "denyRead a string": (lambda d: d.update(sandbox={"filesystem": {"denyRead": "//x"}}), "denyRead"),
    "env null": (lambda d: d.update(env=None), "env is null"),
    "model a number": (lambda d: d.update(model=4), "model is the number"),
}


@pytest.mark.parametrize("case", sorted(DROPPED))
def test_each_dropped_shape_is_named(installed, case):
    healthy = installed
    change, words = DROPPED[case]
    edit_settings(healthy, change)
    findings = doctor.diagnose(healthy)
    hit = only_error(findings, words)
    assert "silently ignores" in hit.what and hit.where == str(healthy / ".claude" / "settings.json")
    # Claude Code drops the file, so doctor reads it as absent: the gate is reported missing too.
    assert any("no donegate Stop hook" in e or "no deny rule" in e for e in errors(findings))


@pytest.mark.parametrize("text, words", [
    ('{"hooks": {},}', "trailing comma at line 1"),
    ('{\n  "permissions": {"deny": ["Read(x)",]}\n}', "trailing comma at line 2"),
    ('{"hooks": {} // comment\n}', "not valid JSON"),
    ("", "not valid JSON"),
    ("[1, 2]", "the top level is a list"),
])
def test_json_errors_are_named(installed, text, words):
    healthy = installed
    (healthy / ".claude" / "settings.local.json").write_text(text)
    only_error(doctor.diagnose(healthy), words)


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(hooks=[d["hooks"]]), "hooks is a list, expected an object keyed by event name: Claude Code silently ignores every hook in this file"),
    (lambda d: d.update(hooks=None), "hooks is null"),
    (lambda d: d["hooks"].update(Stop={"hooks": []}), "hooks.Stop is an object, expected a list of matcher groups: Claude Code silently ignores the hooks of this event"),
])
def test_wrong_hooks_containers_drop_only_hooks(installed, change, words):
    edit_settings(installed, change)
    findings = doctor.diagnose(installed)
    only_error(findings, words)
    only_error(findings, "no donegate Stop hook")
    assert not any("no deny rule" in e for e in errors(findings))  # the rest of the file still applies


def test_broken_user_settings_are_found(installed):
    healthy = installed
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)  # install made ~/.claude/hooks
    user.write_text('{"permissions": {"deny": "Bash"}}')
    hit = only_error(doctor.diagnose(healthy), "permissions.deny")
    assert hit.where == str(user)


def test_missing_hook_interpreter_and_script(installed):
    healthy = installed
    def swap(old, new):
        def change(d):
            h = [h for g in d["hooks"]["Stop"] for h in g["hooks"] if "stop_gate.py" in json.dumps(vocab.hook_words(h))][0]
            words = [w.replace(old, new) for w in vocab.hook_words(h)]
            h["command"], h["args"] = words[0], words[1:]  # the exec form written out, the stub's words changed
        return change

    edit_settings(healthy, swap(os.path.abspath(sys.executable), "/nonexistent/python3"))
    only_error(doctor.diagnose(healthy), "interpreter", "/nonexistent/python3")
    install.install(healthy, sandbox="auto")
    edit_settings(healthy, swap("stop_gate.py", "stop_gone.py"))
    assert any("no donegate Stop hook" in e for e in errors(doctor.diagnose(healthy)))
    install.install(healthy, sandbox="auto")
    edit_settings(healthy, swap(str(KIT / "hooks" / "stop_gate.py"), "/nowhere/hooks/stop_gate.py"))
    only_error(doctor.diagnose(healthy), "script", "does not exist")


def test_no_stop_hook(shop_repo):
    only_error(doctor.diagnose(shop_repo), "no donegate Stop hook")


def test_timeout_too_low(healthy, kit_home):
    edit_settings(healthy, lambda d: [h.update(timeout=120) for g in d["hooks"]["Stop"] for h in g["hooks"] if "stop_gate" in json.dumps(vocab.hook_words(h))])
    hit = only_error(doctor.diagnose(healthy), "timeout (120 s) is not above")
    assert "151" in hit.fix
    # Turning the reviewers on raises the worst case: the installed timeout no longer covers it.
    install.install(healthy, sandbox="auto")
    write_config(kit_home, "review: hint\n")
    assert "reviewers 300" in only_error(doctor.diagnose(healthy), "timeout (151 s)").what


def test_block_cap(healthy, kit_home):
    env = {**os.environ, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "5"}
    hit = only_error(doctor.diagnose(healthy, env), "max_blocks is 6", "after 5 blocks")
    assert "below 5" in hit.fix
    assert errors(doctor.diagnose(healthy, {**env, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "0"})) == []
    write_config(kit_home, "max_blocks: 8\n")
    only_error(doctor.diagnose(healthy, {k: v for k, v in env.items() if k != "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"}), "after 8 blocks")
    # The settings' env reaches Claude Code too.
    write_config(kit_home, "max_blocks: 4\n")
    edit_settings(healthy, lambda d: d.update(env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "3"}), "settings.local.json")
    only_error(doctor.diagnose(healthy), "after 3 blocks")


def test_missing_deny_rule(healthy, kit_home):
    edit_settings(healthy, lambda d: d["permissions"].update(deny=[r for r in d["permissions"]["deny"] if resolved(r) != f"Grep(/{kit_home}/**)"]))
    hit = only_error(doctor.diagnose(healthy), "no deny rule keeps Grep out of", str(kit_home))
    assert "donegate install" in hit.fix


def test_a_broader_deny_rule_counts(healthy, kit_home):
    parent = kit_home.parent
    def change(d):
        d["permissions"]["deny"] = [r for r in d["permissions"]["deny"] if str(kit_home) not in resolved(r)]
        d["permissions"]["deny"] += [f"{t}(/{parent}/**)" for t in vocab.DENY_TOOLS]
    edit_settings(healthy, change)
    assert not any("no deny rule" in e for e in errors(doctor.diagnose(healthy)))


def test_deny_rules_in_a_local_file_count(healthy, kit_home):
    rules = [r for r in json.loads((healthy / ".claude" / "settings.json").read_text())["permissions"]["deny"] if str(kit_home) in resolved(r)]
    edit_settings(healthy, lambda d: d["permissions"].update(deny=[r for r in d["permissions"]["deny"] if r not in rules]))
    edit_settings(healthy, lambda d: d.update(permissions={"deny": rules}), "settings.local.json")
    assert not any("no deny rule" in e for e in errors(doctor.diagnose(healthy)))


def test_sandbox_checks(healthy, kit_home, monkeypatch):
    if "sandbox" not in json.loads((healthy / ".claude" / "settings.json").read_text()):
        pytest.skip("bubblewrap/socat not installed: install wrote no sandbox")
    with monkeypatch.context() as m:  # never monkeypatch.undo(): it would put the real HOME back for the install below
        m.setattr(vocab, "sandbox_available", lambda: (False, "missing on PATH: bwrap"))
        hit = only_error(doctor.diagnose(healthy), "sandbox is on but cannot run here")
    assert "bubblewrap" in hit.fix
    edit_settings(healthy, lambda d: d["sandbox"]["filesystem"].update(denyRead=[]))
    only_error(doctor.diagnose(healthy), "denyRead leaves", str(paths.KIT_ROOT))
    install.install(healthy, sandbox="auto")
    edit_settings(healthy, lambda d: d.update(permissions={"deny": ["Edit(./.claude/**)"]}), "settings.local.json")
    only_error(doctor.diagnose(healthy), "Edit(./.claude/**)", "every Bash command fail")


def test_sandbox_off_is_a_warning(sealed_shop):
    install.install(sealed_shop, sandbox="off")  # (the seal before the install: both orders, test_healthy_install_has_no_errors)
    findings = doctor.diagnose(sealed_shop)
    assert errors(findings) == []
    assert any(f.level == doctor.WARNING and "the sandbox is off" in f.what for f in findings)


def test_store_not_sealed_or_tampered(shop_repo, kit_home):
    install.install(shop_repo, sandbox="auto")
    only_error(doctor.diagnose(shop_repo), "no acceptance tests are sealed")
    seal_example(shop_repo)
    (test_file,) = (kit_home / "acceptance").glob("shop-*/test_*.py")
    test_file.write_text(test_file.read_text() + "\n# edited\n")
    only_error(doctor.diagnose(shop_repo), "acceptance store", "modified")


def test_install_after_seal_is_taken_into_the_seal(sealed_shop):
    install.install(sealed_shop, sandbox="auto")
    assert not [f for f in doctor.diagnose(sealed_shop) if "protected files were changed" in f.what]


def test_protected_file_changed_after_install_is_caught(sealed_shop):
    install.install(sealed_shop, sandbox="auto")
    (sealed_shop / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    hit = only_error(doctor.diagnose(sealed_shop), "since the seal, protected files were changed",
                     ".claude/settings.local.json")
    assert "seal again" in hit.fix


def test_ledger_not_writable(healthy, kit_home):
    ledger = paths.ledger_path(kit_home)
    if ledger.exists():
        ledger.unlink()
    ledger.mkdir()
    only_error(doctor.diagnose(healthy), "the ledger cannot be written")


def test_claude_binary_missing(healthy, monkeypatch):
    monkeypatch.setenv("DONEGATE_CLAUDE", "/nonexistent/claude")
    findings = doctor.diagnose(healthy)
    assert errors(findings) == []
    assert any(f.level == doctor.WARNING and "DONEGATE_CLAUDE" in f.what for f in findings)


def test_claude_version_is_reported(healthy):
    if not (KIT / "node_modules" / ".bin" / "claude").exists():
        pytest.skip("the pinned claude is not installed (make setup)")
    oks = [f.what for f in doctor.diagnose(healthy) if f.level == doctor.OK]
    assert f"claude {binary.pinned_version()} (the kit is proven on {binary.OLDEST} to {binary.pinned_version()})" in oks


@pytest.mark.parametrize("version, level", [("2.1.100", doctor.ERROR), ("2.1.250", doctor.OK), ("9.0.0", doctor.WARNING)])
def test_claude_version_is_checked_against_the_supported_range(healthy, tmp_path, monkeypatch, version, level):
    fake = tmp_path / f"claude-{version}"
    fake.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("DONEGATE_CLAUDE", str(fake))
    doctor._run_cached.cache_clear()
    hits = [f for f in doctor.diagnose(healthy) if f.what.startswith(("claude ", f"claude is {version}"))]
    assert [f.level for f in hits] == [level], [f.what for f in hits]
    assert hits[0].where == str(fake)
    if level != doctor.OK:
        assert binary.OLDEST in hits[0].what and hits[0].fix


def test_state_root_inside_the_repo(shop_repo, monkeypatch):
    monkeypatch.setenv("DONEGATE_HOME", str(shop_repo / "state"))
    only_error(doctor.diagnose(shop_repo), "inside the repository")


def test_not_a_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    only_error(doctor.diagnose(tmp_path / "plain"), "not inside a git repository")


def test_check_shapes_accepts_what_claude_code_accepts():
    ok = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 30.5}]}],
                    "PostToolUse": [{"hooks": [{"type": "http", "url": "http://x"}, {"type": "agent", "prompt": "p"}]}],
                    "Unknown": [{"hooks": []}], "Notification": None},
          "permissions": {"defaultMode": "acceptEdits", "deny": [], "allow": ["Bash"]},
          "sandbox": {"enabled": False, "filesystem": {"bogus": 1}}, "env": {"X": 5}, "donegate": {"x": 1}}
    assert shapes.check_shapes(ok, "f") == []
    warn = shapes.check_shapes({"permissions": {"deny": [5]}}, "f")
    assert [f.level for f in warn] == [doctor.WARNING]


def test_state_root_mismatch_is_a_warning(healthy, kit_home, monkeypatch, tmp_path):
    monkeypatch.setenv("DONEGATE_HOME", str(tmp_path / "elsewhere"))
    findings = doctor.diagnose(healthy)
    assert errors(findings) == []  # doctor checks the store where the hook looks
    assert any(f.level == doctor.WARNING and f"uses the state root {kit_home}" in f.what for f in findings)


# -- doctor and the Stop hook run one store check and one scope check (issue 11, item 1) --------------

def _plant_settings(repo, home):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')


def _plant_weakened_repo_test(repo, home):
    (repo / "tests" / "test_cart.py").write_text("def test_nothing():\n    pass\n")


def _plant_fifo_repo_test(repo, home):
    (repo / "tests" / "test_cart.py").unlink()
    os.mkfifo(repo / "tests" / "test_cart.py")


def _plant_outside_allowed_hidden_by_exclude(repo, home):
    write_config(home, "allowed: ['shop/pricing.py']\n")
    (repo / ".git" / "info" / "exclude").write_text("notes.txt\n")
    (repo / "notes.txt").write_text("scratch")


def _plant_edited_store(repo, home):
    (test_file,) = (home / "acceptance").glob("shop-*/test_*.py")
    test_file.write_text(test_file.read_text() + "\n# edited\n")


def _plant_deleted_store(repo, home):
    import shutil

    (store,) = (home / "acceptance").glob("shop-*")
    shutil.rmtree(store)


def _plant_edited_manifest(repo, home):
    (manifest,) = (home / "acceptance").glob("shop-*/manifest.json")
    manifest.write_text(manifest.read_text().replace('"count": ', '"count":  '))


def _plant_claude_hook(repo, home):
    (repo / ".claude" / "hooks").mkdir(parents=True, exist_ok=True)
    (repo / ".claude" / "hooks" / "stop.sh").write_text("exit 0\n")


def _plant_nothing(repo, home):
    pass


@pytest.mark.parametrize("plant", [_plant_nothing, _plant_settings, _plant_weakened_repo_test, _plant_fifo_repo_test,
                                   _plant_claude_hook, _plant_outside_allowed_hidden_by_exclude, _plant_edited_store,
                                   _plant_deleted_store, _plant_edited_manifest],
                         ids=lambda f: f.__name__.removeprefix("_plant_"))
@pytest.mark.own_suite
def test_doctor_and_the_hook_agree_on_each_kind_of_change(sealed_shop, kit_home, plant):
    from tests.support.repos import stop_lines, run_hook, stop_payload
    from donegate import config

    p = sealed_shop / "shop" / "pricing.py"
    p.write_text(p.read_text().replace("if units > BULK_THRESHOLD:", "if units >= BULK_THRESHOLD:"))  # the tests pass
    plant(sealed_shop, kit_home)
    findings: list[doctor.Finding] = []
    doctor._check_store(findings, sealed_shop, kit_home, config.load())
    doctor_errors = [f.what for f in findings if f.level == doctor.ERROR]
    res = run_hook(stop_payload(sealed_shop), timeout=120)
    assert res.returncode in (0, 2)
    blocked = res.returncode == 2
    assert blocked == bool(doctor_errors), (res.stderr, doctor_errors)
    intact = [f.what for f in findings if f.level == doctor.OK and "intact" in f.what]
    assert bool(intact) == (not blocked), (intact, doctor_errors)  # never "intact" beside the errors
    if plant is _plant_nothing:
        assert not blocked
    else:
        line = stop_lines(kit_home)[-1]
        from donegate.gate import own_suite

        weakened = own_suite.problems({"weakened": (line["gates"].get("own") or {}).get("weakened") or []})
        problems = (line["gates"].get("scope") or {}).get("problems") or weakened or [line["gates"]["integrity"].get("problem")]
        for problem in problems:  # the same words, from the same check
            assert any(problem in what for what in doctor_errors), (problem, doctor_errors)


@pytest.mark.own_suite
def test_doctor_never_says_intact_after_a_repository_test_is_weakened(sealed_shop):
    # issue 11: after an agent weakened a repository test, `doctor -v` said "acceptance tests sealed and
    # intact" (beside the error) while every stop blocked.
    install.install(sealed_shop, sandbox="auto")
    _plant_weakened_repo_test(sealed_shop, None)
    res = subprocess.run([sys.executable, "-m", "donegate", "doctor", "-v", str(sealed_shop)], capture_output=True,
                         text=True, timeout=180, cwd=KIT)
    assert res.returncode == 1
    assert "a test of the project was weakened: tests/test_cart.py::" in res.stdout  # the own suite's (docs/own-suite.md)
    assert "sealed and intact" not in res.stdout
