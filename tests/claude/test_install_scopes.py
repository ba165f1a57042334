"""Install where Claude Code will look (issue 21): the project, local and user scopes, subfolder
projects, and `doctor FOLDER` judging that folder as a session started there would be judged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from donegate.install import diagnose as doctor, project as install
from donegate.claude import stubs
from donegate import paths
from donegate.claude import settings as vocab
from tests.support.repos import EXAMPLE_TESTS, REQUEST, example_files, git, make_repo, seal, seal_example

TESTS = sorted(EXAMPLE_TESTS.glob("test_*.py"))


def errors(findings) -> list[str]:
    return [f.what for f in findings if f.level == doctor.ERROR]


def oks(findings) -> str:
    return " | ".join(f.what for f in findings if f.level == doctor.OK)


def machine_paths(text: str) -> list[str]:
    # the kit, the state root, and the stubs' folder the hooks run from (donegate.claude.stubs)
    return [p for p in (str(paths.KIT_ROOT), str(paths.home()), str(stubs.folder())) if p in text]


def test_local_scope_leaves_the_project_settings_safe_to_commit(shop_repo):
    shared = shop_repo / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text('{"permissions": {"allow": ["Bash(make test)"]}}\n')
    git(shop_repo, "add", ".claude/settings.json")
    git(shop_repo, "commit", "-q", "-m", "team settings")
    before = shared.read_bytes()
    path = install.install(shop_repo, sandbox="off", scope="local")
    assert path == shop_repo.resolve() / ".claude" / "settings.local.json"
    assert shared.read_bytes() == before and machine_paths(before.decode()) == []
    assert machine_paths(path.read_text())  # the machine's paths live here
    assert git(shop_repo, "status", "--porcelain") == ""  # nothing of the install can be committed
    seal_example(shop_repo)
    findings = doctor.diagnose(shop_repo)
    assert errors(findings) == [] and "local settings: valid" in oks(findings)
    _, done = install.uninstall(shop_repo, scope="local")
    assert not path.exists() and shared.read_bytes() == before, done


def test_user_scope_gates_every_worktree_and_subfolder_project(sealed_shop, tmp_path):
    path = install.install(None, sandbox="off", scope="user")
    assert path == Path.home() / ".claude" / "settings.json"
    words = json.dumps([vocab.hook_words(h) for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]])
    assert "--managed" in words and "--repo" not in words
    wt = tmp_path / "wt"
    git(sealed_shop, "worktree", "add", "-q", "-b", "wt", str(wt))
    findings = doctor.diagnose(wt)
    assert errors(findings) == [], errors(findings)
    assert f"judged on the working tree {wt.resolve()} against the seal of {sealed_shop.resolve()}" in oks(findings)
    assert "acceptance tests sealed and intact" in oks(findings)
    install.uninstall(None, scope="user")
    assert not path.exists()


def test_a_worktree_without_any_install_is_named_by_doctor(sealed_shop, tmp_path):
    install.install(sealed_shop, sandbox="off")  # the project install, left untracked as install leaves it
    wt = tmp_path / "wt"
    git(sealed_shop, "worktree", "add", "-q", "-b", "wt", str(wt))
    hits = [e for e in errors(doctor.diagnose(wt)) if "no donegate Stop hook" in e]
    assert hits  # before: doctor said only "no acceptance tests are sealed"
    assert not any("no acceptance tests are sealed" in e for e in errors(doctor.diagnose(wt)))


@pytest.fixture
def mono(tmp_path) -> Path:
    files = {f"pkg/{k}": v for k, v in example_files().items()}
    files["README.md"] = "a monorepo\n"
    return make_repo(tmp_path / "mono", files)


def test_install_seal_and_doctor_of_a_subfolder_act_on_that_subfolder(mono):
    pkg = (mono / "pkg").resolve()
    path = install.install(pkg, sandbox="off")
    assert path == pkg / ".claude" / "settings.json" and not (mono / ".claude").exists()
    assert seal(pkg, *TESTS, request=REQUEST).returncode == 0
    findings = doctor.diagnose(pkg)
    assert errors(findings) == [], errors(findings)
    # The monorepo's top: Claude Code started there loads no hook of the kit, and no seal holds it.
    found = doctor.diagnose(mono)
    top = errors(found)
    assert any("no donegate Stop hook" in e for e in top)
    # ... and doctor there points to the sealed package below it, with the install that reaches a root session
    (below,) = [f for f in found if "sealed below this folder" in f.what]
    assert str(pkg) in below.what and below.fix.startswith("donegate install --scope user")


def test_doctor_names_a_moved_repository_and_the_hook_that_names_the_old_path(sealed_shop, tmp_path):
    install.install(sealed_shop, sandbox="off")  # (the worker's pooled seal, then the install: either order is healthy)
    old = sealed_shop.resolve()
    new = tmp_path / "moved"
    shutil.move(str(old), str(new))
    found = errors(doctor.diagnose(new))
    assert any(f"sealed at {old} and is now at {new}" in e for e in found), found
    assert any(f"the Stop hook judges {old} (it no longer exists)" in e for e in found), found
    moved = [f for f in doctor.diagnose(new) if "is now at" in f.what][0]
    assert moved.fix == f"donegate relocate {old} {new}"


def test_a_project_install_in_a_worktree_judges_it_against_the_seal(sealed_shop, tmp_path):
    import subprocess
    import sys

    from tests.support.repos import HOOK, ledger_lines, stop_payload

    wt = tmp_path / "wt"
    git(sealed_shop, "worktree", "add", "-q", "-b", "wt", str(wt))
    path = install.install(wt, sandbox="off")  # its hook names the worktree (--repo WT)
    assert errors(doctor.diagnose(wt)) == [], errors(doctor.diagnose(wt))
    hook = json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"][0]
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("DONEGATE_HOME", "CLAUDE_PROJECT_DIR")}
    res = subprocess.run([hook["command"], *hook["args"]], input=json.dumps(stop_payload(wt)), capture_output=True,
                         text=True, timeout=300, env=env)
    # Before: "no acceptance tests are sealed for WT", allowed unchecked.
    assert res.returncode == 2 and "test_ten_units_get_the_bulk_discount" in res.stderr, res.stdout + res.stderr
    assert ledger_lines(paths.home())[-1]["gates"]["sealed"] == str(sealed_shop.resolve())
    assert str(HOOK) in vocab.hook_words(hook) and vocab.hook_words(hook)[0] == sys.executable
