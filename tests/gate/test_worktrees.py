"""Which working tree a stop is judged on, and against which seal (issue 21): git worktrees, subfolder
projects of a monorepo, moved repositories. The hook is run as Claude Code runs it (the launcher in
exec form, JSON on stdin) on real git repositories; the nested-repository and `core.worktree`
attacks of tests/gate/test_hook_env.py stay refused beside these."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.claude import settings as vocab
from tests.support.repos import (write_config, EXAMPLE_TESTS, HOOK, REQUEST, example_files, fix_bug, git, stop_lines, make_repo,
                                 seal, sealed_copy, stop_payload)

PY = sys.executable
TESTS = sorted(EXAMPLE_TESTS.glob("test_*.py"))


def hook(kit_home: Path, payload: dict, repo: Path | None = None, managed: bool = False,
         project: Path | None = None) -> subprocess.CompletedProcess:
    argv = vocab.launch_words(HOOK, python=PY, home=kit_home, repo=repo, managed=managed)
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DONEGATE_HOME", "CLAUDE_PROJECT_DIR")}
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    return subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, timeout=300, env=env)


def worktree(repo: Path, where: Path, branch: str) -> Path:
    git(repo, "worktree", "add", "-q", "-b", branch, str(where))
    return where.resolve()


MODES = {"managed": {"managed": True}, "committed --repo": {"repo": "MAIN"}}


def _kw(mode: str, main: Path) -> dict:
    return {k: (main if v == "MAIN" else v) for k, v in MODES[mode].items()}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_worktree_is_judged_on_its_own_tree_against_the_seal(mode, sealed_shop, kit_home, tmp_path):
    main = sealed_shop.resolve()
    fixed = worktree(main, tmp_path / "wt-fixed", "fixed")
    fix_bug(fixed)
    broken = worktree(main, tmp_path / "wt-broken", "broken")
    # Before: under --repo the fixed worktree was blocked (the main checkout was judged), under the
    # managed hook the broken one passed quietly (no seal at its path).
    res = hook(kit_home, stop_payload(fixed, "s-fixed"), **_kw(mode, main))
    assert res.returncode == 0, res.stdout + res.stderr
    res = hook(kit_home, stop_payload(broken, "s-broken"), **_kw(mode, main))
    assert res.returncode == 2 and "test_ten_units_get_the_bulk_discount" in res.stderr
    lines = stop_lines(kit_home)
    assert [(x["repo"], x["verdict"], x["gates"].get("sealed")) for x in lines] == [
        (str(fixed), "pass", str(main)), (str(broken), "block", str(main))]
    # The main checkout (without the fix) is judged on itself, as before: blocked by its failing test (confined, it was
    # blocked by bubblewrap, refusing the worktrees' `.git` mount point left in the mirror they share).
    res = hook(kit_home, stop_payload(main, "s-main"), **_kw(mode, main))
    assert res.returncode == 2 and stop_lines(kit_home)[-1]["repo"] == str(main)
    assert "test_ten_units_get_the_bulk_discount" in res.stderr and "bubblewrap" not in res.stderr, res.stderr


def test_a_worktree_inside_the_sealed_checkout_is_its_own_tree(sealed_shop, kit_home):
    main = sealed_shop.resolve()
    (main / ".git" / "info" / "exclude").write_text(".claude/worktrees/\n")
    inner = worktree(main, main / ".claude" / "worktrees" / "agent-1", "agent-1")
    fix_bug(inner)
    res = hook(kit_home, stop_payload(inner), managed=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert stop_lines(kit_home)[-1]["repo"] == str(inner)


@pytest.mark.parametrize("how", ["git-init", "git-file"])
def test_a_nested_repository_inside_a_worktree_is_still_the_worktree(how, sealed_shop, kit_home, tmp_path):
    wt = worktree(sealed_shop, tmp_path / "wt", "wt")
    sub = wt / "shop" / "sub"
    sub.mkdir()
    if how == "git-init":
        subprocess.run(["git", "init", "-q", str(sub)], check=True)
    else:
        other = make_repo(tmp_path / "elsewhere", {"x.py": "X = 1\n"})
        (sub / ".git").write_text(f"gitdir: {other / '.git'}\n")
    res = hook(kit_home, stop_payload(sub), managed=True)
    assert res.returncode == 2, res.stdout + res.stderr
    assert stop_lines(kit_home)[-1]["repo"] == str(wt)


def test_core_worktree_in_the_shared_config_does_not_move_a_worktree(sealed_shop, kit_home, tmp_path):
    wt = worktree(sealed_shop, tmp_path / "wt", "wt")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(sealed_shop, "config", "core.worktree", str(empty))
    res = hook(kit_home, stop_payload(wt), managed=True)
    assert res.returncode == 2, res.stdout + res.stderr
    assert stop_lines(kit_home)[-1]["repo"] == str(wt)


def test_a_clone_is_not_the_sealed_repository(sealed_shop, kit_home, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(sealed_shop), str(clone)], check=True)
    res = hook(kit_home, stop_payload(clone), managed=True)
    assert res.returncode == 0 and res.stdout == "" and stop_lines(kit_home) == []


def test_the_session_folder_comes_before_the_cwd(sealed_shop, kit_home, tmp_path):
    other = make_repo(tmp_path / "other", example_files())
    assert seal(other, *TESTS, request=REQUEST).returncode == 0
    fix_bug(other)
    # The session started in the sealed (failing) shop, then cd'd into another sealed repository that passes.
    res = hook(kit_home, stop_payload(other), managed=True, project=sealed_shop)
    assert res.returncode == 2 and stop_lines(kit_home)[-1]["repo"] == str(sealed_shop.resolve())
    # A CLAUDE_PROJECT_DIR that disagrees with the transcript's project folder is not believed.
    transcript = tmp_path / ".claude" / "projects" / str(other.resolve()).replace("/", "-") / "s2.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    res = hook(kit_home, stop_payload(other, "s2", transcript_path=str(transcript)), managed=True, project=sealed_shop)
    assert res.returncode == 0 and stop_lines(kit_home)[-1]["repo"] == str(other.resolve())


# -- subfolder projects ----------------------------------------------------------------------------

@pytest.fixture
def mono(tmp_path_factory, kit_home) -> Path:
    """A monorepo whose `pkg/` is the example, `pkg/` sealed (once per run: `sealed_copy`, the seal's output kept beside
    it, `seal.out`)."""

    def build(repo: Path, home: Path) -> None:
        files = {f"pkg/{k}": v for k, v in example_files().items()}
        files["other/app.py"] = "print('hi')\n"
        files["README.md"] = "a monorepo\n"
        res = seal(make_repo(repo, files) / "pkg", *TESTS, request=REQUEST, extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr
        (repo.parent / "seal.out").write_text(res.stdout)

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "mono", build, kit_home).resolve()


def test_a_subfolder_project_is_sealed_and_judged_on_itself(mono, kit_home, tmp_path):
    pkg = (mono / "pkg").resolve()
    assert f"for {pkg} " in (mono.parent / "seal.out").read_text()  # the seal (`mono`'s) said so
    manifest = json.loads(next((kit_home / "acceptance").glob("pkg-*/manifest.json")).read_text())
    assert manifest["repo"] == str(pkg) and "shop/pricing.py" in manifest["protected"] | json.loads(
        next((kit_home / "acceptance").glob("pkg-*/tree.json")).read_text())
    res = hook(kit_home, stop_payload(pkg / "shop"), managed=True)
    assert res.returncode == 2 and stop_lines(kit_home)[-1]["repo"] == str(pkg)
    # The monorepo's top and its other packages are not the sealed project.
    for folder in (mono, mono / "other"):
        res = hook(kit_home, stop_payload(folder), managed=True)
        assert res.returncode == 0 and res.stdout == ""
    fix_bug(pkg)
    res = hook(kit_home, stop_payload(pkg), managed=True)
    assert res.returncode == 0, res.stdout + res.stderr
    # A worktree of the monorepo: its pkg/ is the project, judged on that tree.
    wt = worktree(mono, tmp_path / "mono-wt", "wt")
    res = hook(kit_home, stop_payload(wt / "pkg"), managed=True)
    assert res.returncode == 2 and stop_lines(kit_home)[-1]["repo"] == str(wt / "pkg")
    res = hook(kit_home, stop_payload(wt), managed=True)
    assert res.returncode == 0 and res.stdout == ""


def test_allowed_scope_in_a_subfolder_names_its_own_files(mono, kit_home):
    pkg = (mono / "pkg").resolve()
    write_config(kit_home, "allowed: ['shop/pricing.py']\n")
    fix_bug(pkg)
    (mono / "other" / "app.py").write_text("print('changed outside the project')\n")
    res = hook(kit_home, stop_payload(pkg), managed=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert [(x["repo"], x["verdict"]) for x in stop_lines(kit_home)] == [(str(pkg), "pass")]  # judged, not unsealed


# -- moves -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["managed", "old --repo"])
def test_a_moved_repository_is_handed_to_a_person_in_one_line(mode, sealed_shop, kit_home, tmp_path):
    old = sealed_shop.resolve()
    new = tmp_path / "renamed"
    shutil.move(str(old), str(new))
    kw = {"managed": True} if mode == "managed" else {"repo": old}
    for sid in ("a", "a", "b"):
        res = hook(kit_home, stop_payload(new, sid), **kw)
        # Before: a raw "git ... fatal: cannot change to <old>" block, three times, then "the same tests failed".
        assert res.returncode == 0, res.stdout + res.stderr
        msg = json.loads(res.stdout)["systemMessage"]
        assert f"sealed at {old} and is now at {new}" in msg and f"donegate relocate {old} {new}" in msg
        assert "fatal" not in msg and len(msg.splitlines()) == 1
    lines = stop_lines(kit_home)
    assert [x["verdict"] for x in lines] == ["gave_up"] * 3 and all(x["blocks"] == 0 for x in lines)
    assert lines[0]["gates"]["moved"] == {"from": str(old), "to": str(new)}
    report = subprocess.run([PY, "-m", "donegate", "report", "--json", "--by", "repo"], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    total = json.loads(report.stdout)["total"]  # the report reads the moved lines as sessions left for a person
    assert (total["stops"], total["gave_up"], total["left_for_person"], total["blocks"]) == (3, 2, 2, 0), total
    # The fix it names works: the seal follows, stops are judged again.
    res = subprocess.run([PY, "-m", "donegate", "relocate", str(old), str(new)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    res = hook(kit_home, stop_payload(new, "c"), managed=True)
    assert res.returncode == 2 and "test_ten_units_get_the_bulk_discount" in res.stderr


def test_relocate_refuses_a_copy_and_a_stranger(sealed_shop, kit_home, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sealed_shop, copy)
    stranger = make_repo(tmp_path / "stranger", {"a.py": "A = 1\n"})
    for target, why in ((copy, "is a copy, not a move"), (stranger, "share no root commit")):
        res = subprocess.run([PY, "-m", "donegate", "relocate", str(sealed_shop), str(target)], capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 1 and why in res.stderr, res.stderr
    # The copy is not judged as the sealed repository either (its git dir is its own, the original is there).
    res = hook(kit_home, stop_payload(copy), managed=True)
    assert res.returncode == 0 and res.stdout == ""


def test_git_honours_the_persons_own_safe_directory(monkeypatch, tmp_path):
    from donegate.tree import git as kit_git

    repo = make_repo(tmp_path / "theirs", {"a.py": "A = 1\n"})
    cfg = tmp_path / "gitconfig"
    cfg.write_text(f"[safe]\n\tdirectory = {repo}\n")
    monkeypatch.setattr(kit_git, "_person_configs", lambda: [cfg])
    kit_git.use(None)
    argv = kit_git.command(repo / "sub", "status")
    assert f"safe.directory={repo}" in argv
    # Only that key: nothing else of the person's config, and the repository's own config still neutralised.
    assert "core.fsmonitor=false" in argv and "GIT_CONFIG_GLOBAL" in kit_git.environment()


def test_the_checkout_and_its_worktree_stop_one_after_the_other(sealed_shop, kit_home, tmp_path):
    # The working trees of a sealed project share its mirrors (`hidden.forget`). bubblewrap leaves in a mirror the
    # mount point of the tree's `.git`: a folder for the checkout, a file for a worktree, and refused to bind over the
    # other kind: every confined stop in a worktree after one in the checkout blocked with "bwrap: Can't create file
    # at <worktree>/.git: Is a directory" (and the checkout's after the worktree's, "Not a directory").
    from tests.support import require

    require.bwrap()
    main = sealed_shop.resolve()
    fix_bug(main)
    wt = worktree(main, tmp_path / "wt", "wt")
    fix_bug(wt)
    for tree in (main, wt, main):  # the worktree after the checkout, and the checkout after the worktree
        res = hook(kit_home, stop_payload(tree), repo=main)
        assert res.returncode == 0, res.stdout + res.stderr
    assert [(x["repo"], x["verdict"]) for x in stop_lines(kit_home)] == [(str(t), "pass") for t in (main, wt, main)]
