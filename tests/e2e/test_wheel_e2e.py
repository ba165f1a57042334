"""The built wheel is the whole kit: installed into a fresh venv outside the checkout, its `donegate write`
and `donegate review` run the real Claude Code binary against the scripted Messages API, with the
prompts and schemas the wheel carries (before, both failed: the files were not in the wheel)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.fakeapi import FakeAPI, first_user_text, tool, turn
from tests.support.installed import run
from tests.support.repos import EXAMPLE_TESTS, KIT, fix_bug, write_config
from tests.support.reviewers import A, B, verdict
from tests.support.session import _clean_env, find_claude

pytestmark = pytest.mark.e2e

REQUEST = "orders of 10 or more units get 10% off"


def test_the_installed_wheel_writes_and_reviews(tmp_path, shop_repo, wheel_installed):
    claude = find_claude()  # skips without `make setup`
    venv, _, _ = wheel_installed
    donegate = str(venv / "bin" / "donegate")
    state = tmp_path / "xdg" / "donegate"
    state.mkdir(parents=True)
    write_config(state, "writer:\n  attempts: 1\n  max_turns: 6\n  timeout: 60\n")
    good = (EXAMPLE_TESTS / "test_bulk_discount.py").read_text()
    writer = [turn(tool("StructuredOutput", {"files": [{"path": "test_bulk.py", "content": good}]}))]
    with FakeAPI(scripts={A: verdict(True), B: verdict(True)}) as api:
        api.add(*writer)
        env = _clean_env({"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key", "DONEGATE_CLAUDE": str(claude),
                          "XDG_DATA_HOME": str(tmp_path / "xdg")}, home=tmp_path / "home")
        for name in ("DONEGATE_HOME", "PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(name, None)
        (tmp_path / "home").mkdir()

        res = run([donegate, "write", str(shop_repo), "--request", REQUEST], env=env, cwd=tmp_path, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "sealed" in res.stdout and "missing" not in res.stderr
        [store] = (state / "acceptance").iterdir()
        assert (store / "test_bulk.py").read_text() == good
        # The writer was given the wheel's prompt (the checkout's writer/prompt.md, carried as data).
        [prompt] = {first_user_text(r.body) for r in api.main_requests() if r.session_id == api.main_requests()[0].session_id}
        assert REQUEST in prompt and "test" in prompt

        fix_bug(shop_repo)
        res = run([donegate, "review", str(shop_repo), "--json"], env=env, cwd=tmp_path, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        result = json.loads(res.stdout)
        assert result["verdict"] == "approve" and [r["error"] for r in result["reviewers"]] == ["", ""]
        assert api.remaining(A) == api.remaining(B) == 0

        # The same command, asked about a repository with no seal: an error of the review, exit 2 as its help says.
        bare = tmp_path / "bare"
        bare.mkdir()
        run(["git", "init", "-q", str(bare)], env=env, cwd=tmp_path)
        res = run([donegate, "review", str(bare)], env=env, cwd=tmp_path)
        assert res.returncode == 2 and "no acceptance tests are sealed" in res.stderr, res.stdout + res.stderr
    # Nothing of the checkout was used: the installed package and its share/ folder only.
    assert str(KIT) not in res.stdout + res.stderr
    assert (venv / "share" / "donegate" / "writer" / "prompt.md").read_text() == (KIT / "writer" / "prompt.md").read_text()
    assert not os.environ.get("DONEGATE_HOME", "").startswith(str(state))
    assert Path(env["HOME"]).is_dir()
