#!/usr/bin/env python3
"""`make report-html`: the HTML report of an example ledger, and a screenshot of it.

The ledger is written by the real gate: in a temporary DONEGATE_HOME, the bundled example repository
(with its bug) is installed and sealed, and the real Stop hook (`hooks/stop_gate.py`, JSON on stdin,
as Claude Code runs it) is run for a handful of sessions under two configurations: one blocked on the
bug and passing after the fix, one that keeps failing the same tests until the breaker gives up, one
that changes a protected file, one whose transcript shows hidden-test content (a leak), one in a
repository with nothing sealed, one outside git (an error), and two with reviewers on (`review: hint`):
real `claude -p` reviewers against the scripted Messages API, one giving a hint, one failing (review
error). One block is labelled unjustified with `donegate label`. Only the hook's input and the
reviewers' model are scripted.

The experiment page is drawn from a generated fixture of `run` lines (the shape the experiment harness
writes, marked `"source": "generated"`), since no harness run is bundled: the page says so at its top.

Writes build/report-html/report.html, report.png, experiment.html and experiment.png (the screenshots
need Chromium: apt-get install chromium).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from donegate.ledger import chain as ledger  # noqa: E402
from tests.support.gated import GatedRepo, kit_cmd  # noqa: E402
from tests.support.session import make_repo  # noqa: E402

OUT = KIT / "build" / "report-html"


def hook(home: Path, repo: Path, session: str, message: str = "Done.", transcript: str = "", env: dict | None = None) -> int:
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": message, "transcript_path": transcript}
    env = {**(env or os.environ), "DONEGATE_HOME": str(home)}
    env.pop("DONEGATE_NESTED", None)
    res = subprocess.run([sys.executable, str(KIT / "hooks" / "stop_gate.py")], input=json.dumps(payload),
                         capture_output=True, text=True, timeout=300, env=env)
    return res.returncode


def set_config(home: Path, **keys) -> None:
    (home / "donegate.yaml").write_text(json.dumps(keys) + "\n")


def example_ledger(base: Path) -> GatedRepo:
    """A ledger written by the real gate (see the module's docstring); returns the gated repository."""
    g = GatedRepo.create(base, kit=KIT, sandbox=False)
    home, repo = g.home, g.repo
    set_config(home, config="tests")
    assert hook(home, repo, "a1c0ffee-first-try", "I added the bulk discount. All done.") == 2
    for _ in range(5):  # the same tests fail stop after stop: the breaker hands it over
        hook(home, repo, "b2decade-same-failure", "Fixed it, it works now.")
    protected = repo / "tests" / "test_cart.py"
    original = protected.read_text()
    protected.write_text(original + "\n\ndef test_nothing():\n    pass\n")
    assert hook(home, repo, "c3feed00-protected-file", "Done: tests pass.") == 2
    protected.write_text(original)
    transcript = base / "leaky-transcript.jsonl"
    secret = g.hidden_test.read_text().splitlines()
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "\n".join(secret[10:16])}}) + "\n")
    assert hook(home, repo, "d4beef11-leaky", "Done.", str(transcript)) == 2
    set_config(home, config="tests-strict", max_blocks=2)
    for _ in range(3):
        hook(home, repo, "e5aa0022-strict", "Done, please check.")
    g.fix_bug()
    set_config(home, config="tests")
    assert hook(home, repo, "a1c0ffee-first-try", "Fixed: units >= BULK_THRESHOLD. Done.") == 0
    assert hook(home, repo, "c3feed00-protected-file", "Restored the test file, done.") == 0
    assert hook(home, repo, "d4beef11-leaky", "Done.", str(transcript)) == 0
    set_config(home, config="tests-strict", max_blocks=2)
    assert hook(home, repo, "f6bb0033-strict-passes", "Done.") == 0
    reviewed(g, base)
    set_config(home, config="tests")
    loose = make_repo(base, {"notes.py": "X = 1\n"}, name="unsealed")
    hook(home, loose, "a7cc0044-unsealed", "Done.")
    outside = base / "not-a-repo"
    outside.mkdir()
    hook(home, outside, "b8dd0055-not-git", "Done.")
    ref = next(ledger.stop_ref(line) for _, line in ledger.read(home / "ledger.jsonl")
               if b'"b2decade-same-failure"' in line and b'"verdict":"block"' in line)
    res = kit_cmd(KIT, home, "label", ref, "unjustified", "--note", "the hidden test expects rounding the request never asked for")
    assert res.returncode == 0, res.stderr
    return g


CLAUDE = KIT / "node_modules" / ".bin" / "claude"
A, B = "Role: reviewer A", "Role: reviewer B"
NIT = {"severity": "minor", "file": "shop/cart.py", "line": 20, "summary": "name the discount variable",
       "evidence": "`d = total * 10 // 100` reads better as `discount`"}


def reviewed(g: GatedRepo, base: Path) -> None:
    """Two sessions with reviewers on (review: hint): real `claude -p` reviewers against the scripted
    Messages API. One gets a hint, then passes; in the other, reviewer B answers in prose (no verdict):
    review_error. Skipped without the pinned Claude Code (make setup installs it)."""
    if not CLAUDE.exists():
        print("Claude Code is not installed (make setup): the example has no reviewer stops")
        return
    from tests.support.fakeapi import FakeAPI, text, tool, turn
    from tests.support.session import _clean_env

    def verdict(approve: bool, *findings: dict) -> list:
        return [turn(tool("StructuredOutput", {"approve": approve, "findings": list(findings)}))]

    set_config(g.home, config="tests+review", review="hint")
    for session, scripts, message in (
            ("g7ee0066-reviewed", {A: verdict(True, NIT), B: verdict(True, NIT)}, "Done: 10 units now get the discount."),
            ("h8ff0077-review-error", {A: verdict(True), B: [text("Looks good to me."), text("Still good.")]}, "Done.")):
        with FakeAPI(scripts=scripts) as api:
            env = _clean_env({"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key",
                              "DONEGATE_CLAUDE": str(CLAUDE)}, home=base / "home")
            hook(g.home, g.repo, session, message, env=env)
            if session.startswith("g7"):  # the hint for this state of the code was given: no reviewers now
                hook(g.home, g.repo, session, "Renamed it. Done.", env=env)


def experiment_ledger(path: Path, name: str = "shop-example", seed: int = 3) -> None:
    """Generated `run` lines in the harness's shape (`"source": "generated"`: the report says so): six
    configurations x three tasks x two reps."""
    rnd = random.Random(seed)
    skill = {"none": 0.62, "tests": 0.86, "reviewers": 0.64, "tests+reviewers": 0.88, "tests+critic": 0.84, "retry": 0.82}
    price = {"none": 0.18, "tests": 0.27, "reviewers": 0.33, "tests+reviewers": 0.41, "tests+critic": 0.39, "retry": 0.62}
    for task in ("bulk-discount", "coupon-codes", "free-shipping"):
        for cfg, p in skill.items():
            for rep in (1, 2):
                met = sum(rnd.random() < p for _ in range(5))
                gave = cfg.startswith("tests") and met < 3 and rnd.random() < 0.5
                agent = round(price[cfg] * rnd.uniform(0.7, 1.3), 4)
                writer = 0.05 if cfg.startswith("tests") else 0.0
                reviewer = 0.08 if "review" in cfg or "critic" in cfg else 0.0
                turns, duration, stops = rnd.randint(6, 30), round(rnd.uniform(40, 160), 1), rnd.randint(1, 5)
                blocks = rnd.randint(0, 4) if cfg.startswith("tests") else 0
                if cfg == "retry":  # the blind control: blocked to the cap, twice the turns
                    turns, stops, blocks = turns * 2, 7, 6
                ledger.append({"event": "run", "experiment": name, "task": task, "config": cfg, "rep": rep,
                               "met": met, "of": 5, "requirements": {f"r{k}": k < met for k in range(5)},
                               "cost": {"agent": agent, "writer": writer, "reviewer": reviewer,
                                        "total": round(agent + writer + reviewer, 4)},
                               "turns": turns, "duration": duration, "stops": stops, "blocks": blocks,
                               "blocked_by": [{"ref": f"{task[:4]}{cfg[:4]}{rep}{k}", "stop": k + 1, "verdict": "block",
                                               "tests": [] if cfg == "retry" else [f"test_acc.py::test_{k}"], "review": False}
                                              for k in range(blocks)],
                               "gave_up": gave, "appeals": 0, "result": "Done: the change is in place.",
                               "key": f"{name}/{task}/{cfg}/{rep}", "subtype": "success", "source": "generated",
                               "agent_model": "generated", "claude_version": "generated", "kit_version": "generated",
                               "spec_hash": "generated",
                               "last_verdict": "gave_up" if gave or cfg == "retry" else "pass" if cfg.startswith("tests") else None},
                              path)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="donegate-report-html-") as tmp:
        g = example_ledger(Path(tmp))
        page = OUT / "report.html"
        res = kit_cmd(KIT, g.home, "report", "--html", str(page))
        print(res.stdout.strip() or res.stderr.strip())
        if res.returncode:
            return 1
        shutil.copy(g.home / "ledger.jsonl", OUT / "example-ledger.jsonl")
        exp_ledger = OUT / "experiment-ledger.jsonl"
        exp_ledger.unlink(missing_ok=True)
        experiment_ledger(exp_ledger)
        res = kit_cmd(KIT, g.home, "report", str(exp_ledger), "--experiment", "shop-example", "--html", str(OUT / "experiment.html"))
        print(res.stdout.strip() or res.stderr.strip())
        if res.returncode:
            return 1
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("Chromium is not installed (apt-get install chromium): no screenshots")
        return 0
    from tests.support.browser import Chromium

    with Chromium(chromium) as b:
        for name in ("report", "experiment"):
            b.open(OUT / f"{name}.html")
            if name == "report":
                b.wait_for("window.donegateReady")
                print(f"report.html interactive after {b.js('window.donegateReady'):.0f} ms")
                b.click('tr[data-session^="b2decade"] .mark[data-verdict="block"]')
            b.screenshot(OUT / f"{name}.png")
            print(f"wrote {OUT / (name + '.png')}")
        outside = [u for u in b.requests() if not u.startswith(("file://", "data:"))]
        if outside:
            print(f"the pages asked for {outside}")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
