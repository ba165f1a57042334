"""The launcher as install writes it (exec form) against an environment and a cwd the agent steers
(issue 15 items 1-2, issue 16 item 7 "a nested repository"). Each attack is first shown to work
against the launcher run the old way, then refused the new way; honest stops still pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.tree import git as kit_git
from donegate.claude import settings as vocab
from tests.support.repos import write_config, HOOK, git, stop_lines, stop_payload

PY = os.path.abspath(sys.executable)


def exec_argv(kit_home: Path, repo: Path | None = None, managed: bool = False) -> list[str]:
    return vocab.launch_words(HOOK, python=PY, home=kit_home, repo=repo, managed=managed)


def run(argv: list[str], payload: dict, env: dict | None = None, drop=("DONEGATE_HOME",)) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, timeout=300,
                          env={**base, **(env or {})})


@pytest.fixture
def sitecustomize(tmp_path) -> Path:
    d = tmp_path / "evil-site"
    d.mkdir()
    (d / "sitecustomize.py").write_text("import os\nos._exit(0)\n")
    return d


def test_pythonpath_sitecustomize_opens_a_launcher_without_dash_I_but_not_the_installed_one(sealed_shop, kit_home, sitecustomize):
    env = {"PYTHONPATH": str(sitecustomize)}
    old = run([PY, str(HOOK)], stop_payload(sealed_shop), {**env, "DONEGATE_HOME": str(kit_home)}, drop=())
    assert old.returncode == 0 and old.stdout == ""  # the attack: the gate never ran
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), env)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "block" and "PYTHONPATH" in line["env"] and "PYTHONPATH" in line["env_weakened"]


def test_donegate_home_from_the_environment_is_not_trusted(sealed_shop, kit_home, tmp_path):
    empty = tmp_path / "empty-home"
    empty.mkdir()
    old = run([PY, str(HOOK)], stop_payload(sealed_shop), {"DONEGATE_HOME": str(empty)}, drop=())
    assert old.returncode == 0 and "no acceptance tests are sealed" in old.stdout  # the attack, the old way
    (empty / "ledger.jsonl").unlink()
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), {"DONEGATE_HOME": str(empty), "DONEGATE_NESTED": "1"})
    assert res.returncode == 2
    assert not (empty / "ledger.jsonl").exists()
    (line,) = stop_lines(kit_home)
    assert {"DONEGATE_HOME", "DONEGATE_NESTED"} <= set(line["env"])


def test_a_fake_git_first_on_path_changes_nothing(sealed_shop, kit_home, tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    marker = tmp_path / "fake-git-ran"
    (bin_ / "git").write_text(f"#!/bin/sh\ntouch {marker}\necho {tmp_path}\n")
    (bin_ / "git").chmod(0o755)
    env = {"PATH": f"{bin_}:{os.environ['PATH']}"}
    res = run(exec_argv(kit_home), stop_payload(sealed_shop), env)  # no --repo: git is asked nothing here either
    assert res.returncode == 2 and not marker.exists()
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), env)
    assert res.returncode == 2 and not marker.exists()


def test_honest_stops_record_the_names_only(sealed_shop, kit_home):
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), {"LD_PRELOAD": "", "PYTHONDONTWRITEBYTECODE": "1"})
    assert res.returncode == 2
    (line,) = stop_lines(kit_home)
    assert "LD_PRELOAD" not in line["env"]  # pinned empty (the managed install does): not a weakening
    assert "PYTHONDONTWRITEBYTECODE" in line["env"] and "env_weakened" not in line
    assert 0 < line["cpu"]["hook"] < 60 and line["cpu"]["children"] >= 0  # CPU-s, what `make bench` compares


def test_a_block_cap_at_or_below_max_blocks_is_recorded_and_told(sealed_shop, kit_home):
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1"})
    assert res.returncode == 2
    assert "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1" in json.loads(res.stdout)["systemMessage"]
    (line,) = stop_lines(kit_home)
    assert line["env_weakened"] == ["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1"]


# -- which repository: never the one a steered cwd names --------------------------------------------

def _nested(repo: Path, how: str) -> Path:
    sub = repo / "shop" / "sub"
    sub.mkdir(parents=True, exist_ok=True)
    if how == "git-init":
        subprocess.run(["git", "init", "-q", str(sub)], check=True)
    elif how == "git-file":
        other = repo.parent / "elsewhere"
        subprocess.run(["git", "init", "-q", str(other)], check=True)
        (sub / ".git").write_text(f"gitdir: {other / '.git'}\n")
    return sub


@pytest.mark.parametrize("how", ["git-init", "git-file"])
@pytest.mark.parametrize("mode", ["repo-arg", "managed", "older-install"])
def test_a_stop_inside_a_sealed_tree_is_judged_by_that_seal(how, mode, sealed_shop, kit_home):
    sub = _nested(sealed_shop, how)
    payload = stop_payload(sub)
    assert subprocess.run(["git", "-C", str(sub), "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True).stdout.strip() == str(sub.resolve())  # what git says: the nested repository
    if mode == "older-install":
        res = run([PY, str(HOOK)], payload, {"DONEGATE_HOME": str(kit_home)}, drop=())
    else:
        res = run(exec_argv(kit_home, sealed_shop if mode == "repo-arg" else None, managed=mode == "managed"), payload)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = stop_lines(kit_home)
    assert line["verdict"] == "block" and line["repo"] == str(sealed_shop.resolve())


def test_core_worktree_does_not_move_the_repository(sealed_shop, kit_home, tmp_path):
    elsewhere = tmp_path / "wt"
    elsewhere.mkdir()
    git(sealed_shop, "config", "core.worktree", str(elsewhere))
    for argv in (exec_argv(kit_home, sealed_shop), exec_argv(kit_home, managed=True)):
        res = run(argv, stop_payload(sealed_shop))
        assert res.returncode == 2, res.stdout + res.stderr
    assert [r["repo"] for r in stop_lines(kit_home)] == [str(sealed_shop.resolve())] * 2


def test_with_the_repository_in_the_arguments_a_cd_anywhere_is_still_judged(sealed_shop, kit_home, tmp_path):
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(tmp_path))  # cd to a folder outside any repository
    assert res.returncode == 2
    assert stop_lines(kit_home)[0]["repo"] == str(sealed_shop.resolve())


def test_a_managed_hook_passes_quietly_where_nothing_is_sealed(kit_home, tmp_path, shop_repo):
    from donegate.sessions.counters import FileCounters

    for cwd in (tmp_path, shop_repo):  # no repository at all; a repository nobody sealed
        res = run(exec_argv(kit_home, managed=True), stop_payload(cwd))
        assert res.returncode == 0 and res.stdout == "" and res.stderr == ""
    assert stop_lines(kit_home) == []
    with FileCounters(kit_home / "state").transact("managed:unsealed") as counters:
        assert counters["stops"] == 2


def test_a_project_install_outside_a_seal_still_says_unsealed(shop_repo, kit_home):
    res = run(exec_argv(kit_home, shop_repo), stop_payload(shop_repo))
    assert res.returncode == 0 and "no acceptance tests are sealed" in res.stdout
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["unsealed"]


def test_honest_nested_folder_without_git_is_the_same_repository(sealed_shop, kit_home):
    kit_git.use(None)
    res = run(exec_argv(kit_home, managed=True), stop_payload(sealed_shop / "shop"))
    assert res.returncode == 2
    assert stop_lines(kit_home)[0]["repo"] == str(sealed_shop.resolve())


def test_the_reviewers_claude_comes_from_the_arguments_not_the_environment(sealed_shop, kit_home, tmp_path):
    from tests.support.repos import fix_bug

    fix_bug(sealed_shop)  # the tests pass, so the reviewers run
    write_config(kit_home, "review: hint\n")
    fakes = {}
    for name in ("agents", "installed"):
        marker = tmp_path / f"{name}-claude-ran"
        exe = tmp_path / f"{name}-claude"
        exe.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
        exe.chmod(0o755)
        fakes[name] = (exe, marker)
    env = {"DONEGATE_CLAUDE": str(fakes["agents"][0])}  # settings `env` puts it in the hook's environment
    # The kit without the launcher's distrust (`gate.run_hook` called directly) runs what it names: that
    # is the attack, had the variable reached the hook's kit. (`donegate hook` distrusts as the launcher does.)
    direct = "import sys; from donegate import gate; sys.exit(gate.run_hook(sys.stdin.read())[0])"
    old = run([PY, "-c", direct], stop_payload(sealed_shop), {**env, "DONEGATE_HOME": str(kit_home)}, drop=())
    assert old.returncode == 0 and fakes["agents"][1].exists()
    fakes["agents"][1].unlink()
    argv = vocab.launch_words(HOOK, python=PY, home=kit_home, repo=sealed_shop, claude=str(fakes["installed"][0]))
    res = run(argv, stop_payload(sealed_shop, "s2"), env)
    assert res.returncode == 0 and "review failed" in res.stdout  # the installed (fake) claude failed: allowed, told
    assert fakes["installed"][1].exists() and not fakes["agents"][1].exists()


@pytest.mark.parametrize("tool", ["bwrap", "cp"])
def test_a_fake_sandbox_or_copier_first_on_path_is_never_run(tool, sealed_shop, kit_home, tmp_path):
    # Settings `env` can set PATH for the hook. A `bwrap` found there would be handed the hidden run
    # (and its nonce on stdin: it could forge the result stream); a `cp` would copy the repository.
    real = f"/usr/bin/{tool}"
    if not os.access(real, os.X_OK):
        pytest.skip(f"no {real} on this machine")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    marker = tmp_path / f"fake-{tool}-ran"
    (bin_ / tool).write_text(f"#!/bin/sh\ntouch {marker}\nexec {real} \"$@\"\n")
    (bin_ / tool).chmod(0o755)
    if tool == "cp":  # cp copies only trees too big for the Python copy
        data = sealed_shop / "data"
        data.mkdir()
        for i in range(250):
            (data / f"f{i}.txt").write_text(str(i))
    res = run(exec_argv(kit_home, sealed_shop), stop_payload(sealed_shop), {"PATH": f"{bin_}:{os.environ['PATH']}"})
    assert res.returncode == 2 and "test_ten_units_get_the_bulk_discount" in res.stderr, res.stderr
    assert not marker.exists(), f"the hook ran the {tool} it found on the session's PATH"
    confinement = stop_lines(kit_home)[-1]["gates"]["acceptance"]["confinement"]
    assert confinement == ("bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else "none")


# -- `donegate hook` and the launcher are one code path (issue 11, item 7) ---------------------------

ENTRIES = {"launcher": [PY, "-I", str(HOOK)], "donegate hook": [PY, "-m", "donegate", "hook"]}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_donegate_hook_and_the_launcher_agree_on_a_nested_stop(sealed_shop, kit_home, tmp_path, entry):
    from donegate.sessions import kitruns

    empty = tmp_path / "empty-home"
    empty.mkdir()
    argv = [*ENTRIES[entry], "--home", str(kit_home), "--repo", str(sealed_shop), "--git", kit_git.executable()]
    # The agent's stop, dressed as a nested (kit) run through settings `env`: no variable opens the gate,
    # every one is recorded, and the state root comes from the arguments.
    agent_env = {"DONEGATE_NESTED": "1", "DONEGATE_HOME": str(empty), "DONEGATE_CLAUDE": "/nonexistent/claude"}
    res = run(argv, stop_payload(sealed_shop), agent_env, drop=())
    assert res.returncode == 2, res.stdout + res.stderr
    assert not (empty / "ledger.jsonl").exists()
    (line,) = stop_lines(kit_home)
    assert {"DONEGATE_NESTED", "DONEGATE_HOME", "DONEGATE_CLAUDE"} <= set(line["env"])
    assert "DONEGATE_NESTED" in line["env_weakened"]
    # The kit's own run (its session id recorded under the state root): allowed, counted, no ledger line.
    sid = kitruns.register(kit_home, timeout=60)
    res = run(argv, stop_payload(sealed_shop, session=sid), drop=())
    assert res.returncode == 0 and res.stdout == "" and len(stop_lines(kit_home)) == 1


def test_donegate_hook_without_its_launcher_blocks(monkeypatch, capsys):
    from donegate import _layout, cli

    monkeypatch.setattr(_layout, "STOP_LAUNCHER", "no_such_launcher.py")
    assert cli.main(["hook"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["decision"] == "block" and "launcher cannot be loaded" in err


# -- the kit's own bytecode: the session's environment does not turn it off or move it -----------------------

def _kit_copy(tmp_path: Path) -> Path:
    """The launcher and the package, without any bytecode (a fresh checkout)."""
    import shutil

    from tests.support.repos import KIT

    kit = tmp_path / "kit"
    shutil.copytree(KIT / "donegate", kit / "donegate", ignore=shutil.ignore_patterns("__pycache__"))
    (kit / "hooks").mkdir()
    shutil.copy(HOOK, kit / "hooks" / "stop_gate.py")
    return kit


@pytest.mark.parametrize("dash_i", [True, False], ids=["as-installed", "without-dash-I"])
def test_the_kit_keeps_its_bytecode_beside_its_modules_whatever_the_session_says(dash_i, kit_home, tmp_path):
    # Without -I the interpreter obeys PYTHONDONTWRITEBYTECODE and PYTHONPYCACHEPREFIX before the launcher can
    # drop them: the old launcher compiled every kit module from source at every stop (0.13 CPU-s), or kept and
    # read the kit's bytecode in a folder the session named. As installed (-I) the interpreter ignores both.
    kit, prefix = _kit_copy(tmp_path), tmp_path / "prefix"
    hook = kit / "hooks" / "stop_gate.py"
    argv = [PY, "-I", str(hook), "--home", str(kit_home)] if dash_i else [PY, str(hook), "--home", str(kit_home)]
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    res = run(argv, stop_payload(repo), {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(prefix)})
    assert res.returncode in (0, 2), res.stdout + res.stderr
    assert "failed to start" not in res.stdout  # the package was imported (no fallback)
    kept = sorted(p.name for p in (kit / "donegate" / "gate").glob("__pycache__/*.pyc"))
    assert "__init__." + sys.implementation.cache_tag + ".pyc" in kept
    assert not prefix.exists() or not any(prefix.rglob("*.pyc"))


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_either_entry_puts_the_runs_mirrors_back_once_it_has_answered(sealed_shop, kit_home, entry):
    """The confined runs' mirrors are put back by a child once the answer is out (`copy.after_answer`), marked clean
    for the next stop's step by what changed: `donegate hook` answered and left them for the next stop to walk."""
    from donegate import paths
    from tests.support import require
    from tests.support.repos import kept_file

    require.bwrap()
    argv = [*ENTRIES[entry], "--home", str(kit_home), "--repo", str(sealed_shop), "--git", kit_git.executable()]
    assert run(argv, stop_payload(sealed_shop)).returncode == 2
    folder = paths.state_dir(kit_home) / "mirror"
    kept_file(folder, paths.repo_key(sealed_shop) + ".clean", timeout=20)
