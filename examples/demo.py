#!/usr/bin/env python3
"""`make demo`: donegate inside a real Claude Code session, on the bundled example.

In a fresh temporary folder: the example repository (with its off-by-one bug), its own DONEGATE_HOME,
the hidden acceptance tests sealed there, donegate installed into `.claude/settings.json`. Then the
real Claude Code binary (node_modules/.bin/claude) runs one headless session. By default the model is
scripted (a local stand-in for the Messages API: no API key, no network): it claims it is done, the
gate blocks with the failing assertion, it edits shop/pricing.py, the gate lets it stop. With
ANTHROPIC_API_KEY set and DEMO_MODEL=real, a real model gets the same task instead of the script.

The account printed is read back from Claude Code's own session transcript, and the ledger lines are
the gate's. Exit status 0 when the gate blocked the false claim and passed the fix (scripted), or
passed at the end (real model).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from tests.support.fakeapi import FakeAPI, text, tool, turn  # noqa: E402
from tests.support.gated import BUG, REQUEST, GatedRepo, Session  # noqa: E402
from tests.support.session import claude_version, find_claude  # noqa: E402
from donegate.report.read import agent_of  # noqa: E402

WIDTH = 110
TASK = f"Implement the request: {REQUEST}. The code is in shop/. Say when you are done."


def say(line: str = "", indent: int = 0) -> None:
    pad = " " * indent
    for part in (line.splitlines() or [""]):
        print(textwrap.fill(part, WIDTH, initial_indent=pad, subsequent_indent=pad + "  ") if part else "")


def block(body: str, indent: int) -> None:
    for line in body.splitlines():
        print(" " * indent + line)


def script(g: GatedRepo) -> list:
    """The scripted agent: claims done with the bug in place, then fixes what the gate reports."""

    def after_feedback(request: dict):
        shown = json.dumps(request["messages"][-1])
        # Every failing test at the seal orders 10 units; the kit holds one back (held_share), and at least one
        # stays shown whichever it draws: its assertion is what the agent reads.
        if not re.search(r"assert \d+ == ", shown):
            return text("I was not told what fails, so I stop here.")
        return turn("The gate shows an order of 10 units paying full price: the threshold check is off by one. "
                    "Let me look.", tool("Read", {"file_path": str(g.pricing)}))

    return [
        "I added the bulk discount to shop/pricing.py: orders of 10 or more units get 10% off. All done.",
        after_feedback,
        turn(tool("Edit", {"file_path": str(g.pricing), "old_string": BUG[0], "new_string": BUG[1]})),
        "Fixed: `units >= BULK_THRESHOLD`, so exactly 10 units now get the discount. Done.",
    ]


def rel(g: GatedRepo, path: str) -> str:
    try:
        return str(Path(path).relative_to(g.repo))
    except ValueError:
        return path


def describe_call(g: GatedRepo, call: dict) -> str:
    args = call.get("input") or {}
    name = call.get("name", "?")
    if name == "Edit":
        return f"Edit {rel(g, args.get('file_path', ''))}: `{args.get('old_string')}` -> `{args.get('new_string')}`"
    if name in ("Read", "Write"):
        return f"{name} {rel(g, args.get('file_path', ''))}"
    if name == "Bash":
        return f"Bash: {args.get('command')}"
    return f"{name} {json.dumps(args)[:200]}"


def account(g: GatedRepo, s: Session) -> None:
    """What happened, from Claude Code's transcript: what the agent said and did, what the gate said."""
    for entry in s.res.read_transcript():
        kind, message = entry.get("type"), entry.get("message") or {}
        content = message.get("content")
        if kind == "assistant":
            for b in content or []:
                if b.get("type") == "text" and b.get("text", "").strip():
                    say(f"agent : {b['text'].strip()}")
                elif b.get("type") == "tool_use":
                    say(f"agent : [{describe_call(g, b)}]")
        elif kind == "user" and isinstance(content, str) and content.startswith("Stop hook feedback:"):
            say("gate  : BLOCKED the stop; Claude Code hands the agent this feedback:")
            block(content.split("\n", 1)[1], 10)
        elif kind == "user" and isinstance(content, list):
            for b in content:
                if b.get("type") == "tool_result" and b.get("is_error"):
                    say(f"        (refused: {str(b.get('content'))[:160]})")
        elif kind == "attachment" and entry["attachment"].get("type") == "hook_system_message":
            say(f"gate  : to the user: {entry['attachment'].get('content')}")


def agent_text(agent: dict) -> str:
    """The agent's session so far, as the stop line records it: its model cost (or why it is unknown) and time."""
    if not agent:
        return ""
    cost = f"${agent['usd']:.4f}" if agent.get("usd") is not None else \
        f"cost unknown ({', '.join(agent.get('unknown') or [])} not in the price table of {agent.get('prices')})"
    return f"; the session so far: {cost}, {agent.get('seconds') or 0:.1f} s"


def ledger_summary(s: Session) -> None:
    """One line per ledger line, in words: the raw JSON stays in the file (`donegate report` reads it)."""
    for r in s.ledger:
        if r.get("event") != "stop":
            say(f"{r.get('time', '')[11:23]}  {r.get('event')}: {r.get('verdict', '')}", 2)
            continue
        acc = (r.get("gates") or {}).get("acceptance") or {}
        say(f"{r['time'][11:23]}  stop {r['stop']}: {r['verdict']:<7} acceptance {acc.get('passed', '?')}/{acc.get('total', '?')} "
            f"passing, hook took {r['duration']:.2f} s" + agent_text(agent_of(r)), 2)


def main() -> int:
    real = os.environ.get("DEMO_MODEL") == "real"
    if real and not os.environ.get("ANTHROPIC_API_KEY"):
        print("DEMO_MODEL=real needs ANTHROPIC_API_KEY", file=sys.stderr)
        return 2
    try:
        find_claude()
    except BaseException as exc:  # pytest's skip outside pytest: the binary is missing or broken
        print(f"donegate demo: {exc}\nRun `make setup` first (npm ci installs the pinned Claude Code).", file=sys.stderr)
        return 2

    base = Path(tempfile.mkdtemp(prefix="donegate-demo-"))
    version = claude_version().split()[0]
    say(f"donegate demo: the gate in a real Claude Code {version} session, "
        + ("with a REAL model." if real else "with a scripted model (no API key, no network)."))
    say()
    g = GatedRepo.create(base, kit=KIT, kit_held_share=True)  # the kit's default config, as a person's first seal
    manifest = json.loads((g.store / "manifest.json").read_text())
    deny = g.settings.get("permissions", {}).get("deny", [])
    sandbox = "on" if g.settings.get("sandbox", {}).get("enabled") else "off"
    store = f"donegate-home/acceptance/{g.store.name}/"
    print(f"Setup, in {base}:")
    print(f"  {'shop/':<{len(store)}}  the bundled example repository, committed, with its bug in shop/pricing.py:")
    print(f"  {'':<{len(store)}}  `{BUG[0]}`")
    print(f"  {store}  {manifest['count']} hidden tests, sealed outside the repository "
          f"({len(manifest['baseline']['failing'])} failing now; {len(manifest.get('held') or {})} held back: a block "
          "names its requirement, never its values)")
    print(f"  {'shop/.claude/settings.json':<{len(store)}}  from `donegate install`: Stop hook, guard, "
          f"{len(deny)} deny rules, sandbox {sandbox}")
    print(f"The agent's task: {TASK}")
    say()

    with FakeAPI() if real else FakeAPI(script(g)) as api:
        extra = {}
        if real:  # the idle FakeAPI is never asked: Claude Code talks to the real API
            extra = {"ANTHROPIC_BASE_URL": os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
                     "ANTHROPIC_API_KEY": os.environ["ANTHROPIC_API_KEY"]}
        s = g.run(api, TASK, timeout=900 if real else 180, extra_env=extra)

    say("The session, as Claude Code recorded it:")
    account(g, s)
    say()
    result = s.res.result or {}
    stops = s.verdicts
    say(f"Result: Claude Code ended with `{result.get('subtype', 'no result')}` after {len(stops)} stop(s): "
        + ", ".join(stops) + (f"; cost ${result.get('total_cost_usd', 0):.4f}" if real else ""))
    diff = subprocess.run(["git", "diff", "--", "shop"], cwd=g.repo, capture_output=True, text=True).stdout
    if diff:
        say("The change the agent made:")
        block(diff.rstrip(), 2)
    say()
    say(f"Ledger ({g.home / 'ledger.jsonl'}):")
    ledger_summary(s)
    say(f"Read it as a person would: DONEGATE_HOME={g.home} {sys.executable} -m donegate report  (or --html report.html)", 2)
    say()
    ok = stops[-1:] == ["pass"] if real else (stops == ["block", "pass"] and BUG[1] in g.pricing.read_text())
    if ok:
        say("The gate refused the false claim of done and let the session end only once the hidden tests passed."
            if "block" in stops else "The hidden tests passed at the first stop.")
    elif real:
        say(f"The session ended without a passing stop (the gate's verdicts: {stops}): the work is not verified.")
    else:
        say(f"UNEXPECTED: the gate's verdicts were {stops}, expected block then pass. Details:")
        print(s.describe())
    say(f"Everything is left in {base} to look at.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
