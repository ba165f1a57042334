"""`donegate install` as a person runs it: what it prints matches what it wrote, it names the other installs
already covering the folder, and it sweeps the hook stubs of repositories that are gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from donegate.claude import stubs
from tests.support.repos import KIT, make_repo, example_files, seal_example


def donegate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", *args], capture_output=True, text=True, timeout=180, cwd=KIT,
                          env=dict(os.environ))


def test_install_counts_the_rules_it_wrote_and_says_next_seal_only_when_unsealed(shop_repo):
    res = donegate("install", str(shop_repo), "--sandbox", "off")
    assert res.returncode == 0, res.stderr
    data = json.loads((shop_repo / ".claude" / "settings.json").read_text())
    written = len(data["permissions"]["deny"])
    assert f" {written} deny rules" in res.stdout, res.stdout
    assert "next: seal" in res.stdout
    seal_example(shop_repo)
    res = donegate("install", str(shop_repo), "--sandbox", "off")
    assert res.returncode == 0 and "next: seal" not in res.stdout and "sealed already" in res.stdout, res.stdout


def test_install_names_the_install_already_covering_the_folder(shop_repo):
    assert donegate("install", "--scope", "user", "--sandbox", "off").returncode == 0
    res = donegate("install", str(shop_repo), "--sandbox", "off")
    assert res.returncode == 0 and "already covered by a donegate Stop hook in the user settings" in res.stdout, res.stdout
    seal_example(shop_repo)
    res = donegate("install", "--scope", "user", "--sandbox", "off")  # the user install after the project's warns too
    assert f"{shop_repo} is already covered by a donegate Stop hook in the project settings" in res.stdout, res.stdout


def test_stubs_of_gone_repositories_are_swept(tmp_path, shop_repo):
    gone = make_repo(tmp_path / "gone", example_files())
    assert donegate("install", str(gone), "--sandbox", "off").returncode == 0
    folder = stubs.folder()
    assert folder.is_relative_to(Path(os.environ["HOME"]))  # the test's HOME, never the person's
    before = sorted(p.name for p in folder.iterdir())
    assert any(n.startswith("stop-") for n in before) and any(n.startswith("ro-") for n in before)
    shutil.rmtree(gone)
    res = donegate("install", str(shop_repo), "--sandbox", "off")
    assert res.returncode == 0 and "removed 2 hook stub(s)" in res.stdout, res.stdout
    after = sorted(p.name for p in folder.iterdir())
    assert not set(before) & set(after)  # the gone repository's stubs and links
    assert any(n.startswith("stop-") for n in after)  # the live install's stay
    assert stubs.sweep() == []


def test_doctor_in_a_worktree_suggests_the_user_scope_and_names_the_worktrees_paths(shop_repo, tmp_path):
    from tests.support.repos import git

    assert donegate("install", str(shop_repo), "--sandbox", "off").returncode == 0
    seal_example(shop_repo)
    worktree = tmp_path / "wt"
    git(shop_repo, "worktree", "add", "-q", str(worktree))
    out = donegate("doctor", str(worktree), "-v").stdout
    assert "fix: donegate install --scope user" in out and f"fix: donegate install {worktree}" not in out, out
    assert f"sys.path starts with {worktree.resolve()}" in out, out


def test_a_reader_that_goes_away_is_not_an_internal_error(tmp_path):
    """`donegate install . | head -2` printed "donegate: internal error (BrokenPipeError ...)" and a traceback to the log."""
    import os
    import subprocess
    import sys

    from tests.support.repos import KIT, make_repo

    repo = make_repo(tmp_path / "repo", {"calc.py": "x = 1\n"})
    home = tmp_path / "home"
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line is written
    try:
        res = subprocess.run([sys.executable, "-m", "donegate", "install", str(repo)], stdout=w, stderr=subprocess.PIPE,
                             text=True, cwd=KIT, timeout=60, env={**os.environ, "DONEGATE_HOME": str(home), "HOME": str(tmp_path)})
    finally:
        os.close(w)
    assert res.returncode == 141 and res.stderr == "", res.stderr
    assert not (home / "logs").exists()
