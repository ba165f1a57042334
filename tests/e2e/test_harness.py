"""Tests of the e2e harness itself, against the real Claude Code binary.

They pin down the behaviours every other e2e test relies on: a scripted turn
reaches the CLI's result, tool calls really run, Stop-hook feedback reaches
the (fake) model, side requests do not eat the script, and a script that runs
out ends the run at once instead of hanging.

Each session costs about 1-1.5 s of CLI start-up (~0.6 CPU-s): the claims that need no session of their own share one.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.support.fakeapi import FakeAPI, callable_tools, feedback_reason, feedback_texts, text, tool, tool_results, turn
from tests.support.session import claude_version, find_claude, make_repo, run_session

pytestmark = pytest.mark.e2e


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"README.md": "demo\n"})


def test_binary_is_the_pinned_native_cli() -> None:
    # The facts the harness is built on were measured on one version: a bump
    # of package.json without re-checking them should show up here.
    root = find_claude().parents[2]
    pinned = json.loads((root / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]
    assert claude_version() == f"{pinned} (Claude Code)"
    # npm's shim must point at the native binary (postinstall done), not a JS wrapper.
    with open(find_claude().resolve(), "rb") as binary:
        assert binary.read(4) == b"\x7fELF"


HOOK = textwrap.dedent(
    """\
    import json, pathlib, sys
    sys.stdin.read()  # the Stop event; unused here
    counter = pathlib.Path(sys.argv[1])
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    if n == 0:
        print("blocked: reason", file=sys.stderr)
        print(json.dumps({"decision": "block", "reason": "blocked: reason"}))
        sys.exit(2)
    sys.exit(0)
    """
)


def test_a_tool_call_a_blocked_stop_and_the_side_requests_of_a_prompt_hook_in_one_session(tmp_path: Path, repo: Path) -> None:
    """Four of the harness's claims in one `claude -p` (there were four sessions), each asserted on its own: a
    tool call really runs and its result is recorded; Stop-hook feedback reaches the (fake) model; a "type":
    "prompt" Stop hook's question to the model at each stop is a side request, answered off-script, which eats
    none of the script; the last scripted turn's text is the CLI's result (priced, streamed, transcribed under the
    fresh HOME). The command hook (outside the repo, as donegate's) blocks the first stop only, so the session
    runs: Write, claim, block, the answer to the feedback, pass; the prompt hook is asked at both stops."""
    target = repo / "made.txt"
    hook = tmp_path / "hooks" / "stop.py"
    hook.parent.mkdir()
    hook.write_text(HOOK)
    counter = tmp_path / "hooks" / "count"
    settings = {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": f"{sys.executable} {hook} {counter}", "timeout": 30},
        {"type": "prompt", "prompt": "Is the task done? $ARGUMENTS"}]}]}}

    def second(request: dict):
        # A callable turn sees what the model was shown: echo the feedback.
        return text("fixed after: " + feedback_reason(feedback_texts(request)[-1]))

    script = [turn("Writing the file.", tool("Write", {"file_path": str(target), "content": "made by the fake model\n"})),
              text("done (first try)"), second]
    with FakeAPI(script) as api:
        res = run_session(repo, api, "create made.txt", settings=settings, allowed_tools=["Write"])

    assert res.returncode == 0, (res.describe(), api.errors, [r.answer for r in api.requests])
    assert not api.overrun and api.remaining() == 0, api.overrun_message
    mains = api.main_requests()
    assert len(mains) == 3, [r.answer for r in api.requests]  # the tool's result, then the block, each bought one turn

    # The tool call ran, and its result came back to the model under the id we minted.
    assert target.read_text() == "made by the fake model\n"
    results = tool_results(mains[1])
    assert len(results) == 1 and not results[0]["is_error"], mains[1].body["messages"][-1]
    assert str(target) in results[0]["content"]
    assert results[0]["tool_use_id"].startswith("toolu_fake")

    # The command hook's block reached the model, once.
    assert counter.read_text() == "2"  # blocked once, then let through
    feedback = api.stop_hook_feedback()
    assert len(feedback) == 1 and "blocked: reason" in feedback[0], feedback

    # The prompt hook asked the model at each stop, off the script: no tools, its own question.
    side = api.side_requests()
    assert len(side) == 2, [r.body for r in side]
    assert all("Is the task done?" in r.body["messages"][-1]["content"][0]["text"] for r in side)

    # The last scripted text is the result; usage realistic enough for Claude Code to price the run.
    assert res.result is not None and res.result["subtype"] == "success", res.describe()
    assert res.result["result"] == "fixed after: blocked: reason"
    assert res.result["total_cost_usd"] > 0
    assert mains[0].body.get("stream") is True
    assert "create made.txt" in api.all_text_shown()
    # The transcript lands under the fresh HOME, not the real one.
    assert res.transcripts and all(p.is_relative_to(res.home) for p in res.transcripts)
    assert any(e.get("type") == "assistant" for e in res.read_transcript())


def test_overrun_ends_quickly_and_is_flagged(repo: Path) -> None:
    # Two model turns needed (tool call, then a final answer); one scripted.
    # A retry with backoff after the 400 would outlast the session's 60 s (run_session raises SessionTimeout);
    # the requests it made are counted below.
    with FakeAPI([turn(tool("Bash", {"command": "true"}))]) as api:
        res = run_session(repo, api, "run true", allowed_tools=["Bash"], timeout=60)

    assert api.overrun
    assert "overrun" in api.overrun_message
    assert res.returncode != 0
    assert res.result is not None and res.result["is_error"] is True
    assert "scenario overrun" in res.result["result"]
    # The 400 is not retried with backoff: 2.1.197 sent it once; 2.1.332 resends at once a few
    # times with the request reshaped (ToolSearch dropped), then gives up.
    answers = [r.answer for r in api.main_requests()]
    assert answers[0] == "turn" and set(answers[1:]) == {"overrun"} and len(answers) <= 10, answers


def test_concurrent_headless_runs_get_their_own_scripts(tmp_path: Path) -> None:
    # The writer/reviewer shape: -p with a few tools and a JSON schema; the
    # marker in each prompt routes its requests to its own script.
    schema = json.dumps({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]})
    args = ["--tools", "Read,Grep,Glob", "--json-schema", schema]
    scripts = {
        "[writer]": [turn(tool("Read", {"file_path": "README.md"})), turn(tool("StructuredOutput", {"who": "writer"}))],
        "[reviewer]": [turn(tool("StructuredOutput", {"who": "reviewer"}))],
    }
    repos = {k: make_repo(tmp_path, {"README.md": k}, name=k.strip("[]")) for k in scripts}
    results: dict[str, object] = {}

    with FakeAPI(scripts=scripts) as api:

        def run(key: str) -> None:
            try:
                results[key] = run_session(repos[key], api, f"{key} do your part", extra_args=args)
            except BaseException as exc:  # surface in the main thread
                results[key] = exc

        threads = [threading.Thread(target=run, args=(k,)) for k in scripts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)

    assert not api.overrun, api.overrun_message
    for key, who in (("[writer]", "writer"), ("[reviewer]", "reviewer")):
        res = results[key]
        assert not isinstance(res, BaseException), res
        assert res.returncode == 0, res.describe()
        assert res.result.get("structured_output") == {"who": who}, res.describe()
        assert all(r.key == key for r in res.main_requests)
        assert api.remaining(key) == 0
    # Only 4 tools were offered (2.1.332 adds a deferred placeholder, not callable), yet the requests
    # counted as main-loop.
    assert sorted(callable_tools(api.main_requests("[reviewer]")[0].body)) == [
        "Glob",
        "Grep",
        "Read",
        "StructuredOutput",
    ]


def test_pooled_runs_are_run_once_between_processes(tmp_path: Path) -> None:
    """tests/support/pool.py, which the escape and env-attack pools stand on: two processes (as two xdist
    workers) asking for every key get the same results, and each key ran once between them; a key's
    failure reaches whoever asks, with the runner's traceback."""
    import subprocess

    from tests.support.gated import KIT

    script = textwrap.dedent("""
        import json, sys, time
        from pathlib import Path
        from tests.support.pool import RunFailed, SharedRuns
        root = Path(sys.argv[1])
        def run(key, base):
            (root.parent / "ran" / f"{key}-{base.name}").touch()
            time.sleep(0.3)  # long enough for the other process to find the key held
            if key == "bad":
                raise ValueError("the run of bad broke")
            return {"key": key, "folder": str(base)}
        runs = SharedRuns(root, ["a", "b", "c", "d", "bad"], run, threads=2)
        out = {}
        for key in runs.keys:
            try:
                out[key] = runs[key]
            except RunFailed as exc:
                out[key] = str(exc).splitlines()[-1]
        runs.close()
        print(json.dumps(out))
        """)
    (tmp_path / "ran").mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "pool")], cwd=KIT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    one, two = (json.loads(o) for o, _ in outs)
    assert one == two and one["bad"] == "ValueError: the run of bad broke", one
    ran = sorted(p.name.split("-")[0] for p in (tmp_path / "ran").iterdir())
    assert ran == ["a", "b", "bad", "c", "d"]  # once each, whoever ran it


SESSION_HOOK = textwrap.dedent(
    """\
    import json, pathlib, sys
    event = json.load(sys.stdin)
    log = pathlib.Path(sys.argv[1])
    seen = [json.loads(line)["session_id"] for line in log.read_text().splitlines()] if log.exists() else []
    with log.open("a") as f:
        f.write(json.dumps({"session_id": event["session_id"], "transcript": event["transcript_path"]}) + "\\n")
    if event["session_id"] not in seen:  # the first stop of each session is blocked, as the kit counts by session id
        print("blocked: first stop of " + event["session_id"], file=sys.stderr)
        sys.exit(2)
    """
)


def test_sessions_in_one_process_are_sessions_of_their_own(tmp_path: Path, repo: Path) -> None:
    """tests/support/one_process.py, which the escapes' "apart" sessions stand on: cases sent one after the other to
    one `claude -p --input-format stream-json`, `/clear` between them, are each a session of its own to the Stop hook
    (its own session id and transcript, its first stop blocked again) and to the model (a conversation that starts
    afresh), each answered by its own FakeAPI (its requests, its script used up, no overrun); `before(k)` runs
    before case k."""
    from tests.support.one_process import run_sessions

    hook, log = tmp_path / "stop.py", tmp_path / "stops.jsonl"
    hook.write_text(SESSION_HOOK)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": f"{sys.executable} {hook} {log}", "timeout": 30}]}]}}))
    apis = [FakeAPI([turn(tool("Bash", {"command": f"echo case{k}"})), text(f"claim {k}"), text(f"answer {k}")])
            for k in range(2)]
    called: list[tuple[int, int]] = []
    results = run_sessions(repo, apis, ["the first task", "the second task"], allowed_tools=["Bash"], home=tmp_path / "home",
                           before=lambda k: called.append((k, len(log.read_text().splitlines()) if log.exists() else 0)))

    assert called == [(0, 0), (1, 2)]  # before each case, after the case before it had both its stops
    ids = [r.session_id for r in results]
    assert None not in ids and len(set(ids)) == 2, [r.describe() for r in results]
    stops = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["session_id"] for s in stops] == [ids[0], ids[0], ids[1], ids[1]]
    for k, (res, api) in enumerate(zip(results, apis, strict=True)):
        assert res.returncode == 0 and res.result["subtype"] == "success" and res.result["result"] == f"answer {k}", res.describe()
        assert not api.overrun and api.remaining() == 0 and not api.errors, api.overrun_message
        mains = api.main_requests()
        # Every request that names its session names this case's (2.1.197 names none in some side requests).
        assert len(mains) == 3 and {r.session_id for r in api.requests} - {None} == {ids[k]}
        # A conversation of its own: its prompt, none of the case before it, no answer yet.
        first = mains[0].body["messages"]
        own, other = ("the first task", "the second task")[::1 if k == 0 else -1]
        assert own in json.dumps(first) and other not in json.dumps(first) and "case0" not in json.dumps(first)
        assert not any(m["role"] == "assistant" for m in first), first
        assert f"case{k}" in tool_results(mains[1])[0]["content"]
        (feedback,) = api.stop_hook_feedback()
        assert feedback_reason(feedback) == "blocked: first stop of " + ids[k], feedback
        assert [p.stem for p in res.transcripts] == [ids[k]] and str(res.transcripts[0]) == stops[2 * k]["transcript"]


def test_an_error_in_one_case_is_that_cases_own(tmp_path: Path, repo: Path) -> None:
    """Each case's `returncode` is its own, as `claude -p` would give for it alone: 1 for a result that is an error,
    0 otherwise. The process exits with its last result's (measured on 2.1.197 and 2.1.332): given to every case, it
    hid an earlier case's error behind a later success, and blamed a later case's error on the cases before it.
    The process carries on after a case that ended in an error."""
    from tests.support.one_process import run_sessions

    apis = [FakeAPI([text("answer 0")]), FakeAPI([]), FakeAPI([text("answer 2")])]  # the second case overruns its script
    results = run_sessions(repo, apis, ["the first task", "the second task", "the third task"], home=tmp_path / "home")

    assert [r.result is not None and r.result["is_error"] for r in results] == [False, True, False], \
        [r.describe() for r in results]
    assert [api.overrun for api in apis] == [False, True, False]
    assert [r.returncode for r in results] == [0, 1, 0], [r.describe() for r in results]
    assert results[2].result["result"] == "answer 2"
