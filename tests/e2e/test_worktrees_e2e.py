"""Where people run Claude Code (issue 21), in the real client: git worktrees (with and without the fix,
under the user-scope install and under committed project settings), a session started in a monorepo's
subfolder project, a moved repository, and an agent that `cd`s into a worktree of its own holding a
change. Assertions are on the ledger (which tree was judged, against which seal) and on what the model
and the user were shown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.ledger import chain as kit_ledger
from tests.support.fakeapi import FakeAPI, tool, turn
from tests.support.gated import (ASSERTION, BUG, CLAIM, EXAMPLE_TESTS, REQUEST, UNATTENDED_TOOLS, GatedRepo, copy_kit,
                                 example_files)
from tests.support.repos import write_config
from tests.support.session import find_claude, git, make_repo, run_session

pytestmark = pytest.mark.e2e
TESTS = sorted(EXAMPLE_TESTS.glob("test_*.py"))
# Sealed with the example's own suite off, as the pooled seals are (tests/support/repos.py): these tests are about
# which tree is judged against which seal; the hidden tests decide every verdict they assert.
OWN_OFF = ("--own-tests", "off")


def kit(g_kit: Path, home: Path, user_home: Path, *args: str) -> str:
    env = {**os.environ, "DONEGATE_HOME": str(home), "HOME": str(user_home)}
    env.pop("DONEGATE_NESTED", None)
    res = subprocess.run([sys.executable, "-m", "donegate", *args], cwd=g_kit, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def stops(home: Path) -> list[dict]:
    return [r for r in kit_ledger.records(home / "ledger.jsonl") if r.get("event") == "stop"]


def session(folder: Path, user_home: Path, api: FakeAPI, wrap: list[str] | None = None):
    return run_session(folder, api, f"Implement the request: {REQUEST}.", allowed_tools=UNATTENDED_TOOLS, timeout=240,
                       home=user_home, extra_env={"DONEGATE_HOME": ""}, wrap=wrap or ())


def fix(folder: Path) -> list:
    pricing = folder / "shop" / "pricing.py"
    return [turn(tool("Read", {"file_path": str(pricing)})),
            turn(tool("Edit", {"file_path": str(pricing), "old_string": BUG[0], "new_string": BUG[1]})), "Fixed."]


@pytest.fixture
def layout(tmp_path):
    """A kit copy, a state root, a HOME for the sessions, and the example repository (not yet sealed)."""
    find_claude()
    base = tmp_path / "b"
    base.mkdir()
    g = GatedRepo(base, copy_kit(base), base / "donegate-home", make_repo(base, example_files(), name="shop"), False)
    g.home.mkdir()
    write_config(g.home, "")  # `confine: off` where there are no walls
    user_home = base / "home"
    user_home.mkdir()
    return g, user_home


@pytest.mark.parametrize("mode", ["user scope", "committed project settings", "managed"])
def test_worktrees_are_judged_on_their_own_tree(mode, layout, tmp_path):
    g, user_home = layout
    prefix: list[str] = []
    if mode == "managed":  # the drop-in in a folder mounted over /etc/claude-code, never the real /etc
        from tests.support.managed import wrap

        folder = tmp_path / "etc-claude-code"
        folder.mkdir()
        res = subprocess.run([*wrap(folder, writable=True), sys.executable, "-m", "donegate", "install", "--managed",
                              "--sandbox", "off"], cwd=g.kit, env={**os.environ, "DONEGATE_HOME": str(g.home)},
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        prefix = wrap(folder)
    elif mode == "user scope":
        kit(g.kit, g.home, user_home, "install", "--scope", "user", "--sandbox", "off")
    else:  # the team commits the project settings install wrote: every worktree has them
        kit(g.kit, g.home, user_home, "install", str(g.repo), "--sandbox", "off")
        git(g.repo, "add", ".claude/settings.json")
        git(g.repo, "commit", "-q", "-m", "gate settings")
    kit(g.kit, g.home, user_home, "seal", str(g.repo), *map(str, TESTS), "--request", REQUEST, *OWN_OFF)
    fixed, broken = tmp_path / "wt-fixed", tmp_path / "wt-broken"
    for wt, branch in ((fixed, "fixed"), (broken, "broken")):
        git(g.repo, "worktree", "add", "-q", "-b", branch, str(wt))
    fixed, broken = fixed.resolve(), broken.resolve()
    pricing = fixed / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text().replace(*BUG))

    # A worktree holding the fix passes at once (before: blocked against the main checkout under
    # --repo, or no hook at all with .claude/ untracked).
    with FakeAPI() as api:
        api.add(CLAIM)
        s = session(fixed, user_home, api, prefix)
    assert s.returncode == 0 and s.result["result"] == CLAIM and api.stop_hook_feedback() == [], s.describe()
    # A worktree without it is blocked with the failing assertion, then passes once fixed there
    # (before: a quiet pass under the managed/user hook, or judged on the main checkout).
    with FakeAPI() as api:
        api.add(CLAIM, *fix(broken))
        s = session(broken, user_home, api, prefix)
    assert s.returncode == 0 and s.result["result"] == "Fixed.", s.describe()
    (feedback,) = api.stop_hook_feedback()
    assert ASSERTION in feedback
    lines = stops(g.home)
    assert [(r["repo"], r["verdict"], r["gates"].get("sealed"), r["gates"].get("found")) for r in lines] == [
        (str(fixed), "pass", str(g.repo.resolve()), "project"),
        (str(broken), "block", str(g.repo.resolve()), "project"),
        (str(broken), "pass", str(g.repo.resolve()), "project")]
    # The main checkout never got the fix: its own stop is still blocked.
    assert BUG[0] in (g.repo / "shop" / "pricing.py").read_text()


def test_a_session_in_a_subfolder_project_is_gated(layout, tmp_path):
    g, user_home = layout
    mono = make_repo(tmp_path / "m", {**{f"pkg/{k}": v for k, v in example_files().items()}, "README.md": "mono\n"},
                     name="mono")
    pkg = (mono / "pkg").resolve()
    out = kit(g.kit, g.home, user_home, "install", str(pkg), "--sandbox", "off")
    assert str(pkg / ".claude" / "settings.json") in out and not (mono / ".claude").exists()
    kit(g.kit, g.home, user_home, "seal", str(pkg), *map(str, TESTS), "--request", REQUEST, *OWN_OFF)
    with FakeAPI() as api:
        api.add(CLAIM, *fix(pkg))
        s = session(pkg, user_home, api)
    assert s.returncode == 0 and s.result["result"] == "Fixed.", s.describe()
    assert ASSERTION in api.stop_hook_feedback()[0]
    assert [(r["repo"], r["verdict"]) for r in stops(g.home)] == [(str(pkg), "block"), (str(pkg), "pass")]


def test_a_moved_repository_is_handed_to_a_person_then_relocated(layout, tmp_path):
    g, user_home = layout
    kit(g.kit, g.home, user_home, "install", str(g.repo), "--sandbox", "off")
    kit(g.kit, g.home, user_home, "seal", str(g.repo), *map(str, TESTS), "--request", REQUEST, *OWN_OFF)
    old = g.repo.resolve()
    new = (tmp_path / "renamed").resolve()
    shutil.move(str(old), str(new))
    with FakeAPI() as api:
        api.add(CLAIM)
        s = session(new, user_home, api)
    # One stop, no block loop, no raw git error: handed to a person, saying what to run.
    assert s.returncode == 0 and s.result["result"] == CLAIM and api.stop_hook_feedback() == [], s.describe()
    (line,) = stops(g.home)
    assert line["verdict"] == "gave_up" and line["gates"]["moved"] == {"from": str(old), "to": str(new)}
    shown = [a.get("content", "") for a in (e.get("attachment") or {} for e in s.read_transcript())
             if a.get("type") == "hook_system_message"]
    assert any(f"donegate relocate {old} {new}" in m for m in shown), shown
    kit(g.kit, g.home, user_home, "relocate", str(old), str(new))
    kit(g.kit, g.home, user_home, "install", str(new), "--sandbox", "off")
    with FakeAPI() as api:
        api.add(CLAIM, *fix(new))
        s = session(new, user_home, api)
    assert s.returncode == 0 and ASSERTION in api.stop_hook_feedback()[0], s.describe()
    assert [r["verdict"] for r in stops(g.home)][1:] == ["block", "pass"]
    assert json.loads((g.home / "state" / "repos" / next(os.scandir(g.home / "state" / "repos")).name).read_text())["repo"] == str(new)


def test_the_user_scope_rules_hold_and_an_agent_cd_into_a_worktree_of_its_own_is_judged_on_the_session_folder(layout):
    """The user-scope install's rules in a project: the absolute deny rule over the state root, and the
    guard refusing a write of the project's settings (which would switch the hooks off). Then, in the same session
    (one user-scope install and seal, where there were two), the agent makes a worktree of its own, fixes the bug
    there and `cd`s into it: the stop is judged on the session's folder, still buggy."""
    g, user_home = layout
    kit(g.kit, g.home, user_home, "install", "--scope", "user", "--sandbox", "off")
    kit(g.kit, g.home, user_home, "seal", str(g.repo), *map(str, TESTS), "--request", REQUEST, *OWN_OFF)
    local = g.repo / ".claude" / "settings.local.json"
    side = g.base / "side"
    attempts = [tool("Read", {"file_path": str(g.hidden_test)}),
                tool("Write", {"file_path": str(local), "content": '{"disableAllHooks": true}'})]
    cd = tool("Bash", {"command": f"git worktree add -q -b side {side} && cd {side} && "
                                  f"sed -i 's/units > BULK/units >= BULK/' shop/pricing.py && pwd"})
    with FakeAPI() as api:
        api.add(*[turn(a) for a in attempts], turn(cd), CLAIM, *fix(g.repo))
        s = session(g.repo, user_home, api)
    assert s.returncode == 0 and s.result["result"] == "Fixed.", s.describe()
    results = [r for req in api.main_requests() for r in api.tool_results(req)]
    seen: dict = {}
    for r in results:
        seen.setdefault(r["tool_use_id"], r)
    first_two, went = list(seen.values())[:2], list(seen.values())[2]
    assert all(r["is_error"] for r in first_two), first_two
    assert "denied by your permission settings" in str(first_two[0]["content"])  # the user settings' absolute rule
    assert "donegate guard" in str(first_two[1]["content"])  # the user-scope guard (it runs before the permission check)
    assert not local.exists()
    assert not went["is_error"] and str(side) in str(went["content"]), went  # the agent is in its worktree, fixed there
    assert BUG[1] in (side / "shop" / "pricing.py").read_text()
    (feedback,) = api.stop_hook_feedback()
    assert ASSERTION in feedback, s.describe()
    assert [(r["repo"], r["verdict"], r["gates"]["found"]) for r in stops(g.home)] == [
        (str(g.repo.resolve()), "block", "project"), (str(g.repo.resolve()), "pass", "project")]
