"""`make demo` as a person reads it (issue 38 item 10): after its summary, no raw ledger JSON; each stop
in words, with the agent's session so far (cost, or why it is unknown, and time)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.repos import KIT
from tests.support.session import find_claude

pytestmark = pytest.mark.e2e


def test_the_demo_prints_no_raw_ledger_json(tmp_path):
    find_claude()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DONEGATE_", "CLAUDE", "ANTHROPIC_"))}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path))
    (tmp_path / "home").mkdir()
    res = subprocess.run([sys.executable, str(KIT / "examples" / "demo.py")], capture_output=True, text=True, env=env,
                         cwd=KIT, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert not [line for line in out.splitlines() if line.lstrip().startswith('{"v":')], out
    ledger = out.split("Ledger (", 1)[1]
    assert "stop 1: block" in ledger and "stop 2: pass" in ledger and "the session so far:" in ledger
    assert "-m donegate report" in " ".join(ledger.split())  # a long temporary path wraps the line
