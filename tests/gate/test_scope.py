"""The `allowed` scope check compares the files on disk with the seal's snapshot (issue 16, items 4, 5),
by content, read through the stat cache (issue 27: a same-size edit with the mtime set back, a file
replaced by a hard link of the same size and mtime).

Each trick below hid a change outside `allowed` from the git-based check (the stop passed); each must
block now, naming the file. Beside them, the honest look-alikes that must pass: the allowed change,
committed or not, the caches running the code writes, and the files `donegate install` writes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.repos import write_config, KIT, git, stop_lines, run_hook, stop_payload
from tests.support.repos import fix_bug

ALLOWED = "allowed: ['shop/pricing.py']\n"


def _hide_with_exclude(repo, tmp_path):
    (repo / ".git" / "info" / "exclude").write_text("notes.txt\n")
    (repo / "notes.txt").write_text("scratch")
    return "notes.txt"


def _hide_with_excludes_file(repo, tmp_path):
    ignore = tmp_path / "global-ignore"
    ignore.write_text("notes.txt\n")
    git(repo, "config", "core.excludesFile", str(ignore))
    (repo / "notes.txt").write_text("scratch")
    return "notes.txt"


def _hide_with_a_self_ignoring_gitignore(repo, tmp_path):
    (repo / ".gitignore").write_text(".gitignore\nnotes.txt\n")
    (repo / "notes.txt").write_text("scratch")
    return "notes.txt"


def _hide_with_skip_worktree(repo, tmp_path):
    git(repo, "update-index", "--skip-worktree", "shop/cart.py")
    (repo / "shop" / "cart.py").write_text((repo / "shop" / "cart.py").read_text() + "\n# changed\n")
    return "shop/cart.py"


def _hide_with_assume_unchanged(repo, tmp_path):
    git(repo, "update-index", "--assume-unchanged", "shop/cart.py")
    (repo / "shop" / "cart.py").write_text((repo / "shop" / "cart.py").read_text() + "\n# changed\n")
    return "shop/cart.py"


def _hide_with_git_replace(repo, tmp_path):
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "shop" / "cart.py").write_text((repo / "shop" / "cart.py").read_text() + "\n# changed\n")
    git(repo, "commit", "-qam", "change")
    git(repo, "replace", base, git(repo, "rev-parse", "HEAD").strip())
    return "shop/cart.py"


def _hide_a_deletion_with_skip_worktree(repo, tmp_path):
    git(repo, "update-index", "--skip-worktree", "README.md")
    (repo / "README.md").unlink()
    return "README.md"


def _same_size_edit_with_the_mtime_set_back(repo, tmp_path):
    st = os.lstat(repo / "README.md")
    text = (repo / "README.md").read_text()
    (repo / "README.md").write_text(("X" if text[0] != "X" else "Y") + text[1:])
    os.utime(repo / "README.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    return "README.md"


def _replace_with_a_hard_link_of_the_same_stat(repo, tmp_path):
    st = os.lstat(repo / "README.md")
    other = tmp_path / "other.md"
    text = (repo / "README.md").read_text()
    other.write_text(("X" if text[0] != "X" else "Y") + text[1:])
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.link(other, repo / "README.tmp")
    os.replace(repo / "README.tmp", repo / "README.md")
    return "README.md"


TRICKS = [_same_size_edit_with_the_mtime_set_back, _replace_with_a_hard_link_of_the_same_stat, _hide_with_exclude, _hide_with_excludes_file, _hide_with_a_self_ignoring_gitignore, _hide_with_skip_worktree,
          _hide_with_assume_unchanged, _hide_with_git_replace, _hide_a_deletion_with_skip_worktree]


@pytest.mark.parametrize("trick", TRICKS, ids=lambda f: f.__name__.removeprefix("_"))
def test_a_change_hidden_from_git_outside_allowed_blocks(sealed_shop, kit_home, tmp_path, trick):
    write_config(kit_home, ALLOWED)
    fix_bug(sealed_shop)
    name = trick(sealed_shop, tmp_path)
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2, res.stderr
    assert "outside the allowed scope" in res.stderr and name in res.stderr
    assert name in stop_lines(kit_home)[-1]["gates"]["scope"]["outside"]


def test_an_allowed_change_passes_committed_or_not(sealed_shop, kit_home):
    write_config(kit_home, ALLOWED)
    fix_bug(sealed_shop)
    assert run_hook(stop_payload(sealed_shop)).returncode == 0
    git(sealed_shop, "commit", "-qam", "the fix")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 0, res.stderr


def test_caches_written_by_running_the_code_are_no_change(sealed_shop, kit_home):
    """The agent runs the repository's tests: __pycache__ and .pytest_cache appear (the hidden run reads
    neither: its bytecode lives under the state root)."""
    write_config(kit_home, ALLOWED)
    fix_bug(sealed_shop)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=sealed_shop, env=env,
                         capture_output=True, text=True, timeout=120)
    assert list(sealed_shop.rglob("__pycache__")) and (sealed_shop / ".pytest_cache").is_dir(), res.stdout
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 0, res.stderr


def test_an_ignored_build_file_outside_allowed_still_counts(sealed_shop, kit_home):
    """Not a cache: a file git ignores can still change what the code does (a config it reads)."""
    write_config(kit_home, ALLOWED)
    (sealed_shop / ".gitignore").write_text("*.local\n")
    git(sealed_shop, "add", ".gitignore")
    fix_bug(sealed_shop)
    (sealed_shop / "prices.local").write_text("discount = 0\n")
    res = run_hook(stop_payload(sealed_shop))
    assert res.returncode == 2 and "prices.local" in res.stderr and ".gitignore" in res.stderr


@pytest.mark.parametrize("order", ["install-then-seal", "seal-then-install"])
def test_the_files_install_writes_are_not_the_agents_change(shop_repo, kit_home, order):
    from tests.support.repos import seal
    from tests.support.repos import EXAMPLE_TESTS

    write_config(kit_home, "allowed: ['shop/pricing.py']\n")

    def install():
        res = subprocess.run([sys.executable, "-m", "donegate", "install", str(shop_repo), "--sandbox", "off"],
                             capture_output=True, text=True, timeout=120, cwd=KIT)
        assert res.returncode == 0, res.stderr

    steps = [install, lambda: seal(shop_repo, EXAMPLE_TESTS / "test_bulk_discount.py")]
    for step in steps if order == "install-then-seal" else steps[::-1]:
        step()
    install()  # a second install (the backup file appears)
    assert (shop_repo / ".claude" / "donegate-install.json").exists()
    fix_bug(shop_repo)
    res = run_hook(stop_payload(shop_repo))
    assert res.returncode == 0, res.stderr
    # ...while the agent changing what install wrote afterwards still blocks: each file named (test_gate.py's
    # install-after-seal case folded here).
    (shop_repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    settings = shop_repo / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"timeout"', '"timeout_"'))
    res = run_hook(stop_payload(shop_repo))
    assert res.returncode == 2 and ".claude/settings.local.json" in res.stderr and ".claude/settings.json" in res.stderr, res.stderr


def test_kit_files_are_the_ones_install_writes():
    from donegate.install import project as install
    from donegate.seal import store
    from donegate.claude import settings as vocab

    written = {name.as_posix() for name in (vocab.SETTINGS, install.LOCAL_SETTINGS)}
    assert set(store.KIT_FILES) == written | {n + install.BACKUP_SUFFIX for n in written} | {
        install.RECORD.as_posix(), install.LOCAL_RECORD.as_posix()}


def test_a_symlink_outside_allowed_is_named_as_one(sealed_shop, kit_home):
    write_config(kit_home, ALLOWED)
    fix_bug(sealed_shop)
    cart = sealed_shop / "shop" / "cart.py"
    cart.unlink()
    cart.symlink_to("/dev/zero")
    res = run_hook(stop_payload(sealed_shop), timeout=60)
    assert res.returncode == 2 and "shop/cart.py (now a symlink)" in res.stderr
