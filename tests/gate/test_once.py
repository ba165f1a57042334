"""One verdict per stop: the donegate hooks Claude Code starts together for one stop (a project install and
`--scope user`, the managed drop-in, the plugin) agree. One judges; the others give back its answer without
counting the stop or writing a ledger line. The look-alike: the same words at the session's next stop are
judged again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from donegate.sessions.counters import FileCounters
from tests.support.repos import HOOK, stop_lines, stop_payload


def together(payload: dict, n: int = 2) -> list[tuple[int, str, str]]:
    """`n` hooks started at once on one stop, as Claude Code starts the hooks of every settings file."""
    text = json.dumps(payload)
    procs = [subprocess.Popen([sys.executable, str(HOOK)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ)) for _ in range(n)]
    return _answers(procs, text)


def _answers(procs, text: str) -> list[tuple[int, str, str]]:
    for p in procs:  # every hook has its stop's JSON before any answers
        p.stdin.write(text)
        p.stdin.close()
    return [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]


def test_hooks_started_together_give_one_verdict_and_count_the_stop_once(sealed_shop, kit_home, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "user"}\n')
    payload = stop_payload(sealed_shop, session="s-two", transcript_path=str(transcript))
    first, second = together(payload)
    assert first == second and first[0] == 2 and "acceptance tests fail" in first[2]
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["block"]
    assert FileCounters(kit_home / "state").peek("s-two")["stops"] == 1
    # The look-alike: the agent stops again with the same words; that stop is judged and counted.
    third, fourth = together(payload)
    assert third[0] == fourth[0] == 2
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["block", "block"]
    assert FileCounters(kit_home / "state").peek("s-two")["stops"] == 2


def test_one_process_calling_the_hook_twice_is_two_stops(sealed_shop, kit_home, tmp_path):
    """A process answers one stop: `run_hook` called again in the same process (a program or a test; the
    process started before every answer) with the same words on an unchanged transcript is the session's
    next stop, judged and counted, never the first stop's answer given back (it was: [2, 2] on a fixed repo,
    one ledger line)."""
    from donegate import gate
    from tests.support.repos import fix_bug

    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "user"}\n')
    text = json.dumps(stop_payload(sealed_shop, session="s-one", transcript_path=str(transcript)))
    first = gate.run_hook(text, root=kit_home, watchdog=False)
    assert first[0] == 2 and "acceptance tests fail" in first[2]
    again = gate.run_hook(text, root=kit_home, watchdog=False)
    assert again[0] == 2
    fix_bug(sealed_shop)
    assert gate.run_hook(text, root=kit_home, watchdog=False)[0] == 0
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["block", "block", "pass"]
    assert FileCounters(kit_home / "state").peek("s-one")["stops"] == 3
