"""Two installs reaching one session, against the real Claude Code: one verdict per stop.

A person installs the kit in a repository, then `--scope user` too (the advice for worktrees): every stop
then runs two donegate Stop hooks in parallel. One judges; the other reports its verdict, so the ledger
has one line per stop, the block counter counts the stop once, and an appeal is not accepted by one hook
and refused by the other.
"""

from __future__ import annotations

import json

import pytest

from donegate.sessions.counters import FileCounters
from tests.support.fakeapi import FakeAPI, tool, turn
from tests.support.gated import ASSERTION, BUG, CLAIM, GatedRepo

pytestmark = pytest.mark.e2e


def counter(g: GatedRepo, session: str) -> dict:
    return FileCounters(g.home / "state").peek(session)


def stop_hooks(g: GatedRepo) -> list[str]:
    """The donegate Stop hooks a session of `g.repo` runs: the project's and the user's."""
    files = [g.settings_path, g.user_home / ".claude" / "settings.json"]
    return [h["command"] for f in files if f.exists()
            for group in json.loads(f.read_text()).get("hooks", {}).get("Stop", []) for h in group["hooks"]]


def test_a_project_and_a_user_install_give_one_verdict_per_stop_and_an_appeal_is_decided_once(gated):
    """Both installs in front of one repository, two sessions in one Claude Code process (tests/support/one_process.py;
    they were two tests, each with its repository, its user install and its process): the first blocked, fixed and
    passed, one ledger line and one count per stop; the second, on the bug put back, blocked and then appealing, its
    appeal decided once."""
    g = gated(sandbox=False)
    out = g.donegate("install", "--scope", "user", "--sandbox", "off")
    assert "already" in out and str(g.repo) in out, out  # install says the project install covers the repository
    assert len(stop_hooks(g)) == 2
    assert all(h.startswith(str(g.user_home / ".claude" / "hooks")) for h in stop_hooks(g))  # never the person's home
    fix = [turn(tool("Read", {"file_path": str(g.pricing)})),
           turn(tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})), "Fixed."]
    fixing, appealing = FakeAPI(), FakeAPI()
    fixing.add(CLAIM, *fix)
    appealing.add(CLAIM, "I looked again.\nAPPEAL: the request says nothing about this threshold")
    fixed: list[bool] = []

    def before(k: int) -> None:  # the second session meets the bug again
        if k:
            fixed.append(BUG[1] in g.pricing.read_text())
            g.fix_bug(undo=True)

    s, t = g.run_many([fixing, appealing], before=before)

    assert s.res.returncode == 0 and s.res.result["result"] == "Fixed.", s.describe()
    assert fixed == [True]
    assert ASSERTION in "\n".join(s.feedback())
    assert s.verdicts == ["block", "pass"], s.describe()  # one line per stop, not two
    c = counter(g, s.res.session_id)
    assert c["stops"] == 2 and c["blocks"] == 0, c

    assert t.res.returncode == 0, t.describe()
    assert t.res.session_id != s.res.session_id
    assert t.verdicts == ["block", "appealed"], t.describe()
    assert not any("not been shown" in f for f in t.feedback()), t.feedback()
