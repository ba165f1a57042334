"""The kit installed from a wheel (`pipx install` / `pip install`), not run from a checkout.

The wheel carries the package in site-packages and the two hook launchers as data files in
`<prefix>/share/donegate/hooks/`; the state root then defaults to `$XDG_DATA_HOME/donegate`.
The layout tests fake that tree; the last test builds a real wheel from the working tree, installs it
into a fresh venv and drives the installed Stop hook and guard the way Claude Code runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from donegate import config, paths
from donegate.install import guard, project as install
from donegate.errors import DonegateError
from donegate.claude import settings as vocab
from tests.support.installed import SHARED, SITE, fake_install, run
from tests.support.repos import KIT, make_repo, stop_payload, write_config
from tests.support.rules import resolved_all

@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """paths and the guard see a wheel installed under tmp_path/prefix; no DONEGATE_HOME."""
    kit = fake_install(tmp_path / "prefix")
    monkeypatch.setattr(paths, "KIT_ROOT", kit)
    monkeypatch.setattr(guard, "KIT_ROOT", str(kit))
    monkeypatch.delenv("DONEGATE_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "prefix"


# -- the layout -------------------------------------------------------------------------------------

def test_a_checkout_keeps_its_layout():
    assert paths.is_checkout()
    assert paths.hooks_dir() == KIT / "hooks"
    assert vocab.stop_script() == KIT / "hooks" / "stop_gate.py"
    assert vocab.guard_script() == KIT / "hooks" / "guard.py"
    assert paths.protected_roots() == [KIT, paths.home()]


def test_an_installed_wheel_finds_its_launchers_and_keeps_state_in_xdg(installed, tmp_path):
    assert not paths.is_checkout()
    assert paths.hooks_dir() == installed / SHARED
    assert vocab.stop_script() == installed / SHARED / "stop_gate.py"
    assert paths.home() == tmp_path / "xdg" / "donegate"
    assert paths.protected_roots() == [installed / SITE, installed / SHARED, tmp_path / "xdg" / "donegate"]
    vocab.check_scripts()


@pytest.mark.parametrize("site", [Path("."), Path("Lib") / "site-packages", SITE], ids=["target", "windows", "posix"])
def test_the_launchers_are_found_at_each_prefix_depth(tmp_path, site):
    kit = fake_install(tmp_path / "p", site=site)
    assert paths.hooks_dir(kit) == (tmp_path / "p" / SHARED)


def test_launchers_of_another_environment_are_not_taken(tmp_path):
    fake_install(tmp_path / "p", site=Path("a") / "b" / "c" / "d")  # deeper than any install scheme
    kit = tmp_path / "p" / "a" / "b" / "c" / "d"
    assert paths.hooks_dir(kit) == kit / "hooks"  # reported missing by check_scripts
    with pytest.raises(DonegateError, match="stop_gate.py does not exist"):
        vocab.check_scripts(kit)


def test_a_missing_guard_launcher_is_refused(tmp_path):
    kit = fake_install(tmp_path / "p", launchers=("stop_gate.py",))
    with pytest.raises(DonegateError, match="guard.py does not exist"):
        vocab.check_scripts(kit)


@pytest.mark.parametrize("layout", ["checkout", "installed"])
@pytest.mark.parametrize("env", [
    {"DONEGATE_HOME": "{tmp}/state"},
    {"DONEGATE_HOME": "~/relative-to-home"},
    {"XDG_DATA_HOME": "{tmp}/xdg"},
    {"XDG_DATA_HOME": "relative/ignored"},
    {},
], ids=["home", "home-tilde", "xdg", "xdg-relative", "none"])
def test_the_guard_and_paths_agree_on_the_state_root_and_the_protected_folders(layout, env, tmp_path, monkeypatch):
    if layout == "installed":
        kit = fake_install(tmp_path / "prefix")
        monkeypatch.setattr(paths, "KIT_ROOT", kit)
        monkeypatch.setattr(guard, "KIT_ROOT", str(kit))
    for var in ("DONEGATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value.format(tmp=tmp_path))
    assert guard.KIT_ROOT == str(paths.KIT_ROOT)
    assert guard.state_root() == str(paths.home())
    assert guard.state_root(dict(os.environ)) == str(paths.home())
    if layout == "installed" and "DONEGATE_HOME" not in env:
        base = tmp_path / "xdg" if env.get("XDG_DATA_HOME", "").startswith("{tmp}") else Path(os.environ["HOME"]) / ".local" / "share"
        assert paths.home() == base / "donegate"
    policy = guard.Policy.current(str(tmp_path))
    for root in paths.protected_roots():
        assert str(root) in policy.roots
    assert set(policy.roots) <= {str(r) for r in paths.protected_roots()}


def test_install_entries_point_at_the_installed_launchers(installed, tmp_path):
    entries = vocab.kit_entries(config.defaults(), python="/venv/bin/python")
    state = tmp_path / "xdg" / "donegate"
    stop = vocab.entry_words(entries, "Stop")
    assert stop[:5] == ["/venv/bin/python", "-I", str(installed / SHARED / "stop_gate.py"), "--home", str(state)]
    # No -S: an installed launcher imports the package from the interpreter's site-packages.
    guard_cmd = vocab.entry_words(entries, "PreToolUse")
    assert guard_cmd[:5] == ["/venv/bin/python", "-I", str(installed / SHARED / "guard.py"), "--home", str(state)]
    roots = [installed / SITE, installed / SHARED, state]
    # Named by neutral links beside the stubs (Claude Code shows the model the sandbox's folders).
    assert list(entries["links"].values()) == [str(r) for r in roots]
    assert entries["sandbox_paths"] == ["/" + link for link in entries["links"]] + ["/" + str(Path.home() / ".claude" / "hooks")]
    for link in entries["links"]:
        assert f"Read(/{link}/**)" in entries["deny"] and f"Edit(/{link}/**)" in entries["deny"]


def test_a_checkout_guard_still_runs_without_site():
    entries = vocab.kit_entries(config.defaults(), python="/x/python")
    assert vocab.entry_words(entries, "PreToolUse")[:3] == ["/x/python", "-I", "-S"]


def test_the_guard_of_an_installed_kit_protects_its_folders(installed, tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    state = tmp_path / "xdg" / "donegate"

    def refused(tool_input, tool="Read"):
        return guard.decide({"tool_name": tool, "cwd": str(repo), "tool_input": tool_input}) is not None

    assert refused({"file_path": str(installed / SHARED / "stop_gate.py")})
    assert refused({"file_path": str(installed / SITE / "donegate" / "gate.py")}, tool="Edit")
    assert refused({"file_path": str(state / "acceptance" / "x" / "test_x.py")})
    assert refused({"command": f"cat {state}/ledger.jsonl"}, tool="Bash")
    assert not refused({"file_path": str(repo / "a.py")})
    assert not refused({"file_path": str(installed / "share" / "other.txt")})


def test_install_refuses_an_installed_kit_inside_the_repository(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    kit = fake_install(repo / ".venv")
    monkeypatch.setattr(paths, "KIT_ROOT", kit)
    with pytest.raises(DonegateError, match="the kit's installed package folder .* lies inside the repository"):
        install.install(repo, sandbox="off")


# -- a real wheel -----------------------------------------------------------------------------------

def hook_command(settings: dict, event: str) -> list[str]:
    """The hook's argv: install writes exec form (Claude Code runs it without a shell)."""
    [group] = [g for g in settings["hooks"][event] if "donegate" in json.dumps(vocab.hook_words(g["hooks"][0]))]
    return vocab.hook_words(group["hooks"][0])


def test_wheel_install_gates_a_session(tmp_path, wheel_installed):
    t0 = time.monotonic()
    venv, py, site = wheel_installed
    built = time.monotonic() - t0

    env = {k: v for k, v in os.environ.items() if k not in ("DONEGATE_HOME", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    state = tmp_path / "xdg" / "donegate"
    state.mkdir(parents=True)
    write_config(state, "")  # `confine: off` where there are no walls
    res = run([str(py), "-c", "import donegate, sys; print(donegate.__file__)"], env=env, cwd=tmp_path)
    assert Path(res.stdout.strip()).is_relative_to(site), res.stdout + res.stderr

    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})
    accept = tmp_path / "accept" / "test_x.py"
    accept.parent.mkdir()
    accept.write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    donegate = str(venv / "bin" / "donegate")
    res = run([donegate, "install", str(repo), "--sandbox", "off"], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    res = run([donegate, "seal", str(repo), str(accept)], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr

    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    stop_cmd, guard_cmd = hook_command(settings, "Stop"), hook_command(settings, "PreToolUse")
    hooks = venv / SHARED
    assert str(hooks / "stop_gate.py") in stop_cmd and str(hooks / "guard.py") in guard_cmd
    assert stop_cmd[stop_cmd.index("--home") + 1] == str(state) and stop_cmd[0] == str(py)
    assert f"Read(/{state}/**)" in resolved_all(settings["permissions"]["deny"])
    assert f"Read(/{hooks}/**)" in resolved_all(settings["permissions"]["deny"])

    def stop() -> subprocess.CompletedProcess:  # as Claude Code runs an exec-form hook: argv, JSON on stdin
        return run(stop_cmd, env=env, cwd=repo, input=json.dumps(stop_payload(repo)))

    res = stop()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "assert -1 == 5" in res.stderr and str(state) not in res.stdout + res.stderr
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    res = stop()
    assert res.returncode == 0, res.stdout + res.stderr

    # The state landed in the XDG data folder, not in the venv.
    [store] = (state / "acceptance").iterdir()
    assert (store / "test_x.py").is_file() and (state / "ledger.jsonl").is_file()
    assert sorted(p.name for p in (venv / "share" / "donegate").iterdir()) == ["hooks", "reviewer", "writer"]

    # The HTML report finds its stylesheet and script in the installed package.
    res = run([donegate, "report", "--html", str(tmp_path / "report.html")], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    page = (tmp_path / "report.html").read_text()
    assert ".mark {" in page and "donegateReady" in page and "assert -1 == 5" in page and str(state) not in page

    # The installed guard (run without -S) imports the package from site-packages.
    def guard_call(tool_input, tool="Read", extra=None) -> subprocess.CompletedProcess:
        payload = {"session_id": "g", "tool_name": tool, "cwd": str(repo), "tool_input": tool_input}
        return run(guard_cmd, env={**env, **(extra or {})}, cwd=repo, input=json.dumps(payload))

    assert guard_call({"file_path": str(repo / "calc.py")}).returncode == 0
    res = guard_call({"file_path": str(store / "test_x.py")})
    assert res.returncode == 2 and json.loads(res.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"

    # A package of the session's own on PYTHONPATH (settings `env` can set it) is never imported:
    # the launchers run with -I. (Without -I this shadowed the installed kit.)
    broken = tmp_path / "broken" / "donegate"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('a package of the agent')\n")
    extra = {"PYTHONPATH": str(broken.parent)}
    res = run([str(py), *stop_cmd[2:]], env={**env, **extra}, cwd=repo, input=json.dumps(stop_payload(repo)))
    assert res.returncode == 2 and "the kit failed to start (ImportError)" in res.stdout  # the attack, without -I
    res = guard_call({"file_path": str(repo / "calc.py")}, extra=extra)
    assert res.returncode == 0, res.stdout + res.stderr
    res = run(stop_cmd, env={**env, **extra}, cwd=repo, input=json.dumps(stop_payload(repo)))
    assert res.returncode == 0 and "the kit failed" not in res.stdout, res.stdout + res.stderr

    # doctor, from the installed command, finds the same launchers and an interpreter that imports the kit.
    res = run([donegate, "doctor", "-v", str(repo)], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr  # warnings only: sandbox off, no `claude` here
    assert f"hook runs {hooks / 'stop_gate.py'} with {py}" in res.stdout, res.stdout + res.stderr
    assert f"hook runs {hooks / 'guard.py'} with {py}" in res.stdout
    assert "does not exist" not in res.stdout and "cannot import" not in res.stdout
    print(f"\nwheel installed (or the run's venv found) in {built:.1f} s; whole test {time.monotonic() - t0:.1f} s")
