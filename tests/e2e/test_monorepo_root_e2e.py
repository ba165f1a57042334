"""A monorepo with a sealed package, the kit installed for the account (`--scope user`, the advice for a
session that does not start in the package), and a real Claude Code session started at the repository's
root that edits the package: the stop is judged on the package's seal (it passed ungated, no ledger line)."""

from __future__ import annotations

import pytest

from tests.support.fakeapi import FakeAPI, tool, turn
from tests.support.gated import BUG, CLAIM, EXAMPLE_TESTS, REQUEST, copy_kit, example_files, kit_cmd, ledger
from tests.support.repos import write_config
from tests.support.session import find_claude, make_repo, run_session

pytestmark = pytest.mark.e2e


def test_a_session_at_the_root_that_edits_the_sealed_package_is_gated(tmp_path):
    find_claude()
    kit, home, user = copy_kit(tmp_path), tmp_path / "donegate-home", tmp_path / "home"
    home.mkdir()
    write_config(home, "")
    mono = make_repo(tmp_path, {**{f"packages/shop/{k}": v for k, v in example_files().items()}, "README.md": "mono\n"},
                     name="mono")
    package = mono / "packages" / "shop"
    for args in (["seal", str(package), *map(str, sorted(EXAMPLE_TESTS.glob("test_*.py"))), "--request", REQUEST],
                 ["install", "--scope", "user", "--sandbox", "off"]):
        res = kit_cmd(kit, home, *args, user_home=user)
        assert res.returncode == 0, res.stdout + res.stderr
    pricing = package / "shop" / "pricing.py"
    with FakeAPI() as api:
        api.add(turn(tool("Read", {"file_path": str(pricing)})),
                turn(tool("Edit", {"file_path": str(pricing), "old_string": BUG[0], "new_string": BUG[0] + "  # units over the threshold"})),
                CLAIM,
                turn(tool("Edit", {"file_path": str(pricing), "old_string": BUG[0], "new_string": BUG[1]})),
                "Fixed.")
        s = run_session(mono, api, f"Implement the request: {REQUEST}.", allowed_tools=("Bash", "Read", "Edit", "Write"),
                        home=user, extra_env={"DONEGATE_HOME": ""}, timeout=180)
    assert s.returncode == 0 and s.result["result"] == "Fixed.", s.describe()
    stops = [r for r in ledger(home) if r.get("event") == "stop"]
    assert [r["verdict"] for r in stops] == ["block", "pass"], stops
    assert {r["repo"] for r in stops} == {str(package.resolve())}
