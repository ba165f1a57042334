"""Nothing Claude Code sends the model names the kit, the state root or the store, nor quotes the hidden tests.

Since 2.1.332 a blocking hook's whole command line reaches the model with every block, and with the
sandbox on the system prompt lists every folder the sandbox hides (and every Read deny rule's). The
test reads every request the client sent in a session with blocks, whole (system prompt, tools,
messages, headers), in the three ways the kit is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakeapi import FakeAPI, turn, tool
from tests.support import secrecy
from tests.support.gated import BUG, CLAIM, GatedRepo, pooled_example, sandbox_available, stop_hook_ran_cleanly
from tests.support.managed import wrap
from tests.support.session import claude_release, find_claude

pytestmark = pytest.mark.e2e


def _install_managed(g: GatedRepo, folder: Path, sandbox: bool) -> None:
    folder.mkdir()
    res = subprocess.run([*wrap(folder, writable=True), sys.executable, "-m", "donegate", "install", "--managed",
                          "--sandbox", "on" if sandbox else "off"],
                         cwd=g.kit, env={**os.environ, "DONEGATE_HOME": str(g.home)}, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


# The project install, with the sandbox and without: test_gate_e2e.py's blocked-then-fixed session and test_install_e2e.py's
# guard session hold this test's assertions (the same pooled repositories, two blocks, then the fix).
@pytest.mark.parametrize("mode", ["managed-sandbox"])
def test_no_request_names_the_kit_the_state_root_or_the_store(mode, tmp_path, tmp_path_factory, kit_home):
    find_claude()
    sandbox = mode.endswith("sandbox")
    if sandbox and not sandbox_available():
        pytest.skip("Claude Code's sandbox cannot run here (bubblewrap, socat)")
    managed = mode.startswith("managed")
    g = pooled_example(tmp_path_factory, kit_home, sandbox=sandbox and not managed, install=not managed)
    prefix: list[str] = []
    if managed:
        _install_managed(g, tmp_path / "etc-claude-code", sandbox)
        prefix = wrap(tmp_path / "etc-claude-code")
    with FakeAPI() as api:
        # Two blocks, then the fix, then the stop that passes.
        api.add(CLAIM, "Done, really.",
                turn(tool("Read", {"file_path": str(g.pricing)})),  # 2.1.197 edits only a file read first
                turn(tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})),
                "Fixed the boundary.")
        s = g.run(api, wrap=prefix)
        sent = api.all_request_text()

    stop_hook_ran_cleanly(s)
    assert s.verdicts == ["block", "block", "pass"], s.describe()
    assert len(s.feedback()) == 2
    if sandbox and claude_release() >= (2, 1, 332):
        assert "denyOnly" in sent, "the sandbox description is no longer sent: re-check what it names"
    # The rule every client's e2e holds its requests to (tests/support/secrecy.py): a path is named when it appears
    # whole, so a checkout at /tmp/cc is not named by Claude Code's own /tmp/cc-daemon-0 in the sandbox's description.
    assert secrecy.leaks(api, g) == {}
