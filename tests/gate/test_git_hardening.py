"""The kit's git calls run nothing of the repository's (issue 15, item 3).

Each attack plants a command-running setting that writes a marker file when git runs it. The same
question asked with plain `git` runs the planted command (the attack works), the kit's `git` module
runs nothing (the defence holds), and an honest repository's answers are unchanged.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from donegate.tree import git
from donegate.seal import store
from tests.support.repos import make_repo


def _marker_script(tmp_path: Path, name: str) -> tuple[Path, Path]:
    marker = tmp_path / f"ran-{name}"
    script = tmp_path / f"evil-{name}.sh"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, marker


def _plain_git(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def repo(tmp_path) -> Path:
    r = make_repo(tmp_path / "repo", {"app.py": "x = 1\n", "data.txt": "hello\n", "tests/test_app.py": "def test(): pass\n"})
    (r / "app.py").write_text("x = 2\n")  # a change in the working tree, so diffs and status look at files
    (r / "new.py").write_text("y = 1\n")
    return r


def _kit_calls(repo: Path, base: str) -> None:
    git.toplevel(repo)
    git.head(repo)
    git.ls_files(repo)
    git.changed_since(repo, base)
    git.diff(repo, base)
    store.snapshot(repo, ["*"])


def _plant(kind: str, repo: Path, script: Path) -> tuple[list[str], dict]:
    """Plant one attack; returns the plain-git command that shows it works, and its env."""
    cfg = lambda *kv: subprocess.run(["git", "-C", str(repo), "config", *kv], check=True)  # noqa: E731
    if kind == "fsmonitor":
        cfg("core.fsmonitor", str(script))
        return ["status", "--porcelain"], {}
    if kind == "filter-clean":
        cfg("filter.evil.clean", str(script))
        (repo / ".gitattributes").write_text("*.txt filter=evil\n")
        (repo / "data.txt").write_text("changed\n")
        return ["diff", "--name-only", "HEAD"], {}
    if kind == "filter-process-info-attributes":
        cfg("filter.sneaky.clean", str(script))
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("* filter=sneaky\n")
        (repo / "data.txt").write_text("changed again\n")
        return ["diff", "--name-only", "HEAD"], {}
    if kind == "textconv":
        cfg("diff.evil.textconv", str(script))
        (repo / ".gitattributes").write_text("*.py diff=evil\n")
        return ["diff", "HEAD"], {}
    if kind == "diff-driver-command":
        cfg("diff.evil.command", str(script))
        (repo / ".gitattributes").write_text("*.py diff=evil\n")
        return ["diff", "HEAD"], {}
    if kind == "diff-external":
        cfg("diff.external", str(script))
        return ["diff", "HEAD"], {}
    if kind == "include-path":
        inc = repo / ".git" / "extra.cfg"
        inc.write_text(f"[core]\n\tfsmonitor = {script}\n")
        cfg("include.path", str(inc))
        return ["status", "--porcelain"], {}
    if kind == "env-git-config":
        env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": str(script)}
        return ["status", "--porcelain"], env
    if kind == "env-external-diff":
        env = {"GIT_EXTERNAL_DIFF": str(script)}
        return ["diff", "HEAD"], env
    if kind == "global-config":
        (Path(os.environ["HOME"]) / ".gitconfig").write_text(f"[core]\n\tfsmonitor = {script}\n")
        return ["status", "--porcelain"], {}
    raise AssertionError(kind)


ATTACKS = ["fsmonitor", "filter-clean", "filter-process-info-attributes", "textconv", "diff-driver-command",
           "diff-external", "include-path", "env-git-config", "env-external-diff", "global-config"]


@pytest.mark.parametrize("kind", ATTACKS)
def test_a_planted_command_runs_under_plain_git_and_never_under_the_kits(kind, repo, tmp_path, monkeypatch):
    for k in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(k)
    script, marker = _marker_script(tmp_path, kind)
    base = git.head(repo)
    argv, env = _plant(kind, repo, script)
    for k in env:
        monkeypatch.setenv(k, env[k])
    git.use(None)  # forget per-repository overrides read before the attack

    _plain_git(repo, *argv)
    assert marker.exists(), f"the attack {kind} did not work with plain git: the test proves nothing"
    marker.unlink()

    _kit_calls(repo, base)
    assert not marker.exists(), f"{kind}: the kit's git ran the planted command: {marker.read_text()!r}"


def test_honest_answers_are_unchanged(repo):
    base = git.head(repo)
    assert git.toplevel(repo / "tests") == repo.resolve()
    assert git.changed_since(repo, base) == ["app.py", "new.py"]
    assert set(git.ls_files(repo)) == {"app.py", "data.txt", "tests/test_app.py", "new.py"}
    text = git.diff(repo, base)
    assert "-x = 1" in text and "+x = 2" in text and "+y = 1" in text


def test_an_lfs_like_honest_filter_does_not_break_the_diff(repo, tmp_path):
    # A real filter that the user set up: neutralised, the kit sees the file's raw bytes (and a
    # required filter does not fail the call).
    subprocess.run(["git", "-C", str(repo), "config", "filter.honest.clean", "tr a-z A-Z"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "filter.honest.required", "true"], check=True)
    (repo / ".gitattributes").write_text("*.txt filter=honest\n")
    (repo / "data.txt").write_text("changed\n")
    git.use(None)
    assert "data.txt" in git.changed_since(repo, git.head(repo))


def test_git_is_the_one_given_not_the_first_on_path(repo, tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    marker = tmp_path / "fake-git-ran"
    (fake / "git").write_text(f"#!/bin/sh\ntouch {marker}\necho /\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    real = git.executable()
    assert real != str(fake / "git")
    git.toplevel(repo)
    assert not marker.exists()
    git.use(str(fake / "git"))
    try:
        git.toplevel(repo)
        assert marker.exists()  # what `use` names is what runs
    finally:
        git.use(None)


def test_the_writers_clean_copy_runs_no_smudge_filter(tmp_path):
    from donegate.models import writer

    r = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    script, marker = _marker_script(tmp_path, "smudge")
    subprocess.run(["git", "-C", str(r), "config", "filter.evil.smudge", str(script)], check=True)
    (r / ".gitattributes").write_text("*.txt filter=evil\n")
    subprocess.run(["git", "-C", str(r), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(r), "commit", "-qm", "attrs"], check=True)
    marker.unlink(missing_ok=True)
    _plain_git(r, "archive", "--format=tar", "-o", str(tmp_path / "plain.tar"), "HEAD")
    assert marker.exists()
    marker.unlink()
    git.use(None)
    (tmp_path / "dest").mkdir()
    src = writer.clean_copy(r, tmp_path / "dest")
    assert (src / "a.txt").read_text() == "a\n"
    assert not marker.exists()
