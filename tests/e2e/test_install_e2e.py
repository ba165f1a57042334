"""`donegate install`, `uninstall`, `doctor` and the guard against the real Claude Code.

Each session is a `claude -p` run against the scripted Messages API; assertions are on what the model
was shown (the server's recorded requests), what the gate recorded (the ledger) and the files.
The escape matrix (every way to reach the hidden tests, with and without the sandbox) lives in
test_gate_e2e.py; here: that an install over a user's own settings gates a session and uninstalls
cleanly, that refusals on a glob and a parent-folder search come from the guard itself, that the
sandbox leaves nothing for a program to read, and that the settings shapes doctor calls fatal really
switch the gate off in this Claude Code version.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from donegate.ledger import chain as kit_ledger
from donegate.claude import settings as vocab
from tests.support.fakeapi import FakeAPI, tool, turn
from tests.support import secrecy
from tests.support.gated import (BUG, EXAMPLE_TESTS, GatedRepo, copy_kit, example_files, kit_cmd, sandbox_available,
                                 stop_hook_ran_cleanly)
from tests.support.repos import write_config
from tests.support.session import find_claude, make_repo

pytestmark = pytest.mark.e2e

CLAIM = "All done: orders of 10 or more units now get the bulk discount."
ASSERTION = "assert 4300 == 3870"
GUARD = "donegate guard: this"


def ledger(home: Path) -> list[dict]:
    return kit_ledger.records(home / "ledger.jsonl")


def stops(home: Path) -> list[dict]:
    return [r for r in ledger(home) if r.get("event") == "stop"]


def fix_and_finish(g: GatedRepo) -> list:
    """Read the pricing (Claude Code edits only files the session has read), fix the bug, claim done."""
    return [turn(tool("Read", {"file_path": str(g.pricing)})),
            turn(tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})), "Fixed."]


# -- install over a user's settings, gate, uninstall ------------------------------------------------

@pytest.fixture
def user_gated(tmp_path, monkeypatch) -> tuple[GatedRepo, str, Path]:
    """The example repository with settings of its own (a Stop hook, a PostToolUse hook, rules, an
    unknown key), committed; then `donegate install` and `donegate seal`, as a user runs them."""
    find_claude()
    base = tmp_path / "u"
    base.mkdir()
    marker = base / "user-hook.log"
    user = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": f"echo stop >> {marker}", "timeout": 10}]}],
            "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": f"echo edit >> {marker}"}]}],
        },
        "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./secrets/**)"]},
        "teamNote": {"owner": "shop team"},
    }
    original = json.dumps(user, indent=2) + "\n"
    repo = make_repo(base, {**example_files(), ".claude/settings.json": original}, name="shop")
    g = GatedRepo(base, copy_kit(base), base / "donegate-home", repo, sandbox_available())
    g.home.mkdir()
    write_config(g.home, "")  # `confine: off` where there are no walls
    monkeypatch.setenv("DONEGATE_HOME", str(g.home))
    g.install()
    g.seal(sorted(EXAMPLE_TESTS.glob("test_*.py")))
    return g, original, marker


def test_installed_over_user_settings_the_gate_blocks_and_uninstall_restores(user_gated):
    g, original, marker = user_gated
    assert g.settings["teamNote"] == {"owner": "shop team"} and g.settings["permissions"]["allow"] == ["Bash(ls:*)"]

    with FakeAPI() as api:
        api.add(CLAIM, *fix_and_finish(g))
        s = g.run(api)
    assert s.res.returncode == 0 and s.res.result["result"] == "Fixed.", s.describe()
    (feedback,) = s.feedback()
    assert ASSERTION in feedback  # blocked by the gate, with the failing assertion
    assert [r["verdict"] for r in stops(g.home)] == ["block", "pass"]
    # The user's own hooks kept running beside the kit's.
    assert marker.read_text().split() == ["stop", "edit", "stop"]

    res = kit_cmd(g.kit, g.home, "uninstall", str(g.repo))
    assert res.returncode == 0, res.stderr
    assert g.settings_path.read_text() == original
    assert not (g.repo / ".claude" / "donegate-install.json").exists()
    g.fix_bug(undo=True)
    with FakeAPI() as api:
        api.add(CLAIM)
        s = g.run(api)
    assert s.res.returncode == 0 and s.res.result["result"] == CLAIM and s.feedback() == [], s.describe()
    assert len(stops(g.home)) == 2  # no gate any more: nothing new in the ledger
    assert marker.read_text().split()[-1] == "stop"


# -- the guard ----------------------------------------------------------------------------------------

def test_guard_refuses_a_glob_and_a_search_over_a_parent_folder(gated):
    """Without the sandbox only the guard stands in the way of these. The session first claims done twice (two blocks):
    it is also test_nothing_named_e2e.py's project install (no sandbox), on the same pooled repository: nothing any
    request carries names the kit, the state root or the store, the agent's own commands aside (a session each)."""
    g = gated(sandbox=False)
    hidden = g.hidden_test.read_text()
    attempts = [
        tool("Bash", {"command": f"cd {g.base} && cat d*/a*/*/test_*.py"}),
        tool("Grep", {"pattern": "cart_of", "path": str(g.base), "output_mode": "content"}),
        tool("Glob", {"pattern": "**/test_*.py", "path": str(g.base)}),
        tool("Bash", {"command": f"grep -rn cart_of {g.base}"}),
    ]
    with FakeAPI() as api:
        api.add(CLAIM, "Done, really.", *[turn(a) for a in attempts], *fix_and_finish(g))
        s = g.run(api)
    stop_hook_ran_cleanly(s)
    assert s.res.result["result"] == "Fixed.", s.describe()
    results = s.tool_results()[:len(attempts)]
    for attempt, result in zip(attempts, results, strict=True):
        assert result["is_error"] and GUARD in result["content"], (attempt, result)
    shown = s.shown()
    assert "def cart_of" not in shown and hidden[:200] not in shown and str(g.store) not in shown
    assert "test_bulk_discount.py" not in json.dumps(s.tool_results())  # the blocks name it, as the kit's feedback
    refusals = [r for r in ledger(g.home) if r.get("event") == "guard"]
    assert [r["tool"] for r in refusals] == ["Bash", "Grep", "Glob", "Bash"]
    assert [r["verdict"] for r in stops(g.home)] == ["block", "block", "pass"] and len(s.feedback()) == 2
    # Ordinary work went through: the Edit that fixed the bug.
    assert BUG[1] in g.pricing.read_text()
    typed = [str(a["input"].get("command") or a["input"].get("path")) for a in attempts]
    assert secrecy.leaks(api, g, typed=typed) == {}


# -- the sandbox --------------------------------------------------------------------------------------

@pytest.mark.skipif(not sandbox_available(), reason="Claude Code's sandbox needs bubblewrap and socat")
def test_with_the_sandbox_a_program_finds_nothing(gated):
    g = gated(sandbox=True)
    # The path is spelled in hex so that no path appears in the command: the guard (a tripwire) has
    # nothing to trip on, and the sandbox alone must hold.
    code = ("import os\n"
            "p = bytes.fromhex('{}').decode()\n"
            "root = bytes.fromhex('{}').decode()\n"
            "print('ROOT', sorted(os.listdir(root)))\n"
            "for name in ('open', 'listdir'):\n"
            "    try:\n"
            "        print(name, open(p).read() if name == 'open' else os.listdir(os.path.dirname(p)))\n"
            "    except OSError as exc:\n"
            "        print(name, type(exc).__name__)\n").format(str(g.hidden_test).encode().hex(), str(g.home).encode().hex())
    with FakeAPI() as api:
        api.add(turn(tool("Write", {"file_path": str(g.repo / "peek.py"), "content": code})),
                turn(tool("Bash", {"command": "python3 peek.py"})), *fix_and_finish(g))
        s = g.run(api)
    assert s.res.returncode == 0, s.describe()
    result = s.tool_results()[1]["content"]
    assert GUARD not in result, result  # the guard had nothing to see ...
    # ... and inside the sandbox the state root is an empty folder: no store, no test, no ledger.
    assert result.split("\n") == ["ROOT []", "open FileNotFoundError", "listdir FileNotFoundError"], result
    assert "def cart_of" not in s.shown()
    assert [r["verdict"] for r in stops(g.home)] == ["pass"]


# -- what doctor calls fatal really switches the gate off ---------------------------------------------

def _stop_hook(d: dict) -> dict:
    return next(h for grp in d["hooks"]["Stop"] for h in grp["hooks"] if "stop_gate.py" in json.dumps(vocab.hook_words(h)))


# The Stop hook's timeout as a string, its type unknown, and a trailing comma: test_gate_e2e.py's
# test_a_settings_file_claude_code_drops_silently_means_no_gate (doctor's words and the session without a gate).
BREAKAGES = {
    "zero timeout": (lambda d: _stop_hook(d).update(timeout=0), "timeout is the number 0"),
    "unknown hook type": (lambda d: d["hooks"]["PreToolUse"][0]["hooks"][0].update(type="script"), ".type is the string"),
    "deny as a string": (lambda d: d["permissions"].update(deny="Read(//nowhere/**)"), "permissions.deny is the string"),
    "hooks as a list": (lambda d: d.update(hooks=[d["hooks"]]), "hooks is a list"),
    "Stop as an object": (lambda d: d["hooks"].update(Stop=d["hooks"]["Stop"][0]), "hooks.Stop is an object"),
}


def test_each_shape_doctor_rejects_switches_the_gate_off(gated):
    g = gated(config={"max_blocks": 1})
    good = g.settings_path.read_text()
    cases = [("valid", None, None)] + [(name, change, words) for name, (change, words) in BREAKAGES.items()]
    cases.append(("disableAllHooks in settings.local.json", "local", "disableAllHooks is true"))
    seen = {}
    for name, change, words in cases:
        g.settings_path.write_text(good)
        local = g.repo / ".claude" / "settings.local.json"
        local.unlink(missing_ok=True)
        if change == "local":
            local.write_text('{"disableAllHooks": true}\n')
        elif change is not None:
            data = json.loads(good)
            change(data)
            g.settings_path.write_text(json.dumps(data, indent=2) + "\n")
        doc = kit_cmd(g.kit, g.home, "doctor", str(g.repo))
        before = len(stops(g.home))
        with FakeAPI() as api:
            api.add(CLAIM, "Still done.")
            s = g.run(api)
        gate_ran = len(stops(g.home)) > before
        seen[name] = gate_ran
        if change is None:
            assert gate_ran and s.feedback(), s.describe()
        else:
            assert doc.returncode == 1 and words in doc.stdout, (name, doc.stdout)
            assert not gate_ran and s.feedback() == [] and s.res.result["result"] == CLAIM, (name, s.describe())
    print("gate ran:", seen)
