"""The model boundary without a model: proc's line streaming, finding the binary, reading results.

`model.run` is driven here by a stand-in `claude` (a Python script printing recorded stream-json
lines) to pin the command line, environment, stdin and log; the e2e tests run the real binary.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from donegate import paths
from donegate.core import proc
from donegate.claude import headless as model
from donegate.errors import DonegateError
from donegate.claude import binary

# -- proc.run(on_line=...) -------------------------------------------------------------


def test_lines_arrive_while_the_process_runs(tmp_path):
    # The child goes on only once the parent has seen its first line (the callback leaves a file), and
    # says so if it never was: no clock, so a loaded machine cannot fail it.
    seen: list[str] = []
    flag = tmp_path / "one-seen"
    script = (f"import os, sys, time\nprint('one', flush=True)\nfor _ in range(600):\n    if os.path.exists({str(flag)!r}):\n"
              f"        break\n    time.sleep(0.05)\nelse:\n    print('one was not seen while the process ran')\n"
              f"sys.stdout.write('two\\nthree')\n")

    def on_line(line: str) -> None:
        seen.append(line)
        if line == "one":
            flag.touch()

    res = proc.run([sys.executable, "-c", script], timeout=60, on_line=on_line)
    assert seen == ["one", "two", "three"]  # the last line needs no newline
    assert res.stdout == "one\ntwo\nthree" and res.returncode == 0


def test_on_line_keeps_the_timeout_and_kills_the_group():
    seen: list[str] = []
    script = "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\nprint('up', flush=True)\ntime.sleep(60)\n"
    # 4 s: time for two interpreters to start on a loaded machine before "up"; the run sleeps 60.
    res = proc.run([sys.executable, "-c", script], timeout=4, on_line=seen.append)
    assert res.timed_out and res.returncode is None and seen == ["up"] and res.duration < 30


def test_an_on_line_error_is_raised_after_the_run():
    calls = []

    def boom(line: str) -> None:
        calls.append(line)
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        proc.run([sys.executable, "-c", "print('a'); print('b')"], timeout=30, on_line=boom)
    assert calls == ["a"]


# -- find_claude -------------------------------------------------------------------------


def _fake_exe(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


def test_find_claude_prefers_the_env_variable(tmp_path, monkeypatch):
    exe = _fake_exe(tmp_path / "claude", "")
    monkeypatch.setenv("DONEGATE_CLAUDE", str(exe))
    assert binary.find_claude() == str(exe)
    monkeypatch.setenv("DONEGATE_CLAUDE", str(tmp_path / "missing"))
    with pytest.raises(DonegateError, match="DONEGATE_CLAUDE=.* is not an executable") as exc:
        binary.find_claude()
    assert "unset it" in exc.value.fix


def test_find_claude_falls_back_to_the_kit_then_path(tmp_path, monkeypatch):
    monkeypatch.delenv("DONEGATE_CLAUDE", raising=False)
    kit = tmp_path / "kit"
    monkeypatch.setattr(paths, "KIT_ROOT", kit)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(DonegateError, match="Claude Code .* is not installed") as exc:
        binary.find_claude()
    assert "npm install -g @anthropic-ai/claude-code" in exc.value.fix and "DONEGATE_CLAUDE" in exc.value.fix  # not a checkout
    (tmp_path / "bin").mkdir()
    on_path = _fake_exe(tmp_path / "bin" / "claude", "")
    assert binary.find_claude() == str(on_path)
    (kit / "node_modules" / ".bin").mkdir(parents=True)
    pinned = _fake_exe(kit / "node_modules" / ".bin" / "claude", "")
    assert binary.find_claude() == str(pinned)


# -- reading results (objects as Claude Code 2.1.197 printed them) -----------------------------


def _result(**kw) -> dict:
    return {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "total_cost_usd": 0.01, **kw}


@pytest.mark.parametrize(
    "result, subtype, error",
    [
        (_result(is_error=True, result="Not logged in · Please run /login", total_cost_usd=0), "success", "Claude Code is not logged in"),
        (_result(is_error=True, api_error_status=400, result="API Error: 400 bad thing"), "success",
         "the model API refused the request (API Error: 400 bad thing)"),
        (_result(subtype="error_max_turns", is_error=True, errors=["Reached maximum number of turns (3)"]), "error_max_turns",
         "the model used all 3 turns without giving its answer"),
        (_result(subtype="error_max_structured_output_retries", is_error=True), "error_max_structured_output_retries",
         "the model's answer did not match the output schema, repeatedly (no detail)"),
        (_result(subtype="error_during_execution", is_error=True, errors=["boom"]), "error_during_execution",
         "Claude Code ended with an error (error_during_execution: boom)"),
        (_result(result="I wrote the tests above."), "bad_output",
         "the model answered in text instead of the required structured output: 'I wrote the tests above.'"),
        (_result(result="[]", structured_output=[]), "bad_output", "the model answered in text"),
    ],
)
def test_failures_are_one_line_with_what_to_do(result, subtype, error):
    got = model._failure(result, model._Stream(None, 0.0), max_turns=3)
    assert got is not None and got[0] == subtype and got[1].startswith(error), got
    assert "\n" not in got[1]


def test_a_structured_answer_is_no_failure():
    assert model._failure(_result(structured_output={"files": []}), model._Stream(None, 0.0), 3) is None


# -- run() against a stand-in binary ---------------------------------------------------------

FAKE = textwrap.dedent(
    """
    import json, os, sys, time
    record = {"argv": sys.argv[1:], "stdin": sys.stdin.read(), "nested": os.environ.get("DONEGATE_NESTED"),
              "kit_session": sorted(os.listdir(os.path.join(os.environ["DONEGATE_HOME"], "state", "kit-sessions"))), "cwd": os.getcwd()}
    with open(os.environ["FAKE_RECORD"], "w") as fh:
        json.dump(record, fh)
    mode = os.environ.get("FAKE_MODE", "good")
    if mode == "hang":
        time.sleep(60)
    if mode == "crash":
        print("segfault-ish", file=sys.stderr)
        sys.exit(3)
    def say(obj):
        print(json.dumps(obj), flush=True)
    say({"type": "system", "subtype": "init", "model": "claude-test"})
    say({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "StructuredOutput", "input": {}}]}})
    say({"type": "user", "message": {"content": [{"type": "tool_result", "is_error": True,
         "content": "Output does not match required schema: root: must have required property 'files'"}]}})
    time.sleep(0.3)
    say({"type": "assistant", "message": {"content": []}})
    say({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "total_cost_usd": 0.25,
         "result": "{}", "structured_output": {"files": []}, "modelUsage": {"claude-test": {}}})
    """
)


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    exe = _fake_exe(tmp_path / "claude", FAKE)
    monkeypatch.setenv("DONEGATE_CLAUDE", str(exe))
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.json"))
    return lambda: json.loads((tmp_path / "record.json").read_text())


def test_run_passes_the_isolation_flags_and_the_prompt_on_stdin(fake_claude, tmp_path, kit_home):
    progress: list[tuple[float, int]] = []
    schema = {"type": "object", "required": ["files"]}
    out = model.run("--looks like an option", cwd=tmp_path, schema=schema, tools=["Read", "Grep", "Glob"], max_turns=7,
                    timeout=30, model="m1", on_progress=lambda e, t: progress.append((e, t)), purpose="writer")
    rec = fake_claude()
    argv = rec["argv"]
    assert rec["stdin"] == "--looks like an option" and "--looks like an option" not in argv
    assert argv[0] == "-p" and argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv
    assert json.loads(argv[argv.index("--json-schema") + 1]) == schema
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob" and argv[-2:] == ["--allowedTools", "Read,Grep,Glob"]
    assert argv[argv.index("--max-turns") + 1] == "7" and argv[argv.index("--setting-sources") + 1] == ""
    assert "--no-session-persistence" in argv and argv[argv.index("--model") + 1] == "m1"
    # No environment variable marks the run as the kit's (the agent could set any); its session id,
    # recorded under the state root while it runs, does.
    assert rec["nested"] is None and Path(rec["cwd"]) == tmp_path.resolve()
    from donegate.sessions import kitruns

    session_id = argv[argv.index("--session-id") + 1]
    assert rec["kit_session"] == [kitruns._path(kit_home, session_id).name]  # recorded before the run started
    assert not kitruns.is_kit_session(kit_home, session_id)  # and gone once it is over
    assert not list((kit_home / "state" / "kit-sessions").iterdir())

    assert out.ok and out.error == "" and out.subtype == "success"
    assert out.structured == {"files": []} and out.turns == 2 and out.cost_usd == 0.25 and out.model == "claude-test"
    assert out.raw["num_turns"] == 3
    assert [t for _, t in progress][-1] == 2 and any(t == 1 for _, t in progress)

    (line,) = [json.loads(x) for x in (kit_home / "logs" / "model.jsonl").read_text().splitlines()]
    assert line["purpose"] == "writer" and line["cost_usd"] == 0.25 and line["turns"] == 2 and line["subtype"] == "success"
    assert line["schema_rejections"] == 1 and line["cwd"] == str(tmp_path)


def test_run_times_out_cleanly(fake_claude, tmp_path, monkeypatch, kit_home):
    monkeypatch.setenv("FAKE_MODE", "hang")
    out = model.run("p", cwd=tmp_path, schema={}, tools=[], max_turns=1, timeout=1)
    assert not out.ok and out.subtype == "timeout" and out.structured is None
    assert out.error.startswith("the model run did not finish within 1 s and was killed")
    assert "timeout" in (kit_home / "logs" / "model.jsonl").read_text()


def test_run_without_a_result_says_so(fake_claude, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "crash")
    out = model.run("p", cwd=tmp_path, schema={}, tools=[], max_turns=1, timeout=30)
    assert not out.ok and out.subtype == "missing" and out.raw is None
    assert out.error.startswith("Claude Code exited (code 3) without a result: segfault-ish")


def test_run_reports_a_binary_that_cannot_start(tmp_path, monkeypatch):
    exe = tmp_path / "claude"
    exe.write_text("#!/nonexistent/interpreter\n")
    exe.chmod(0o755)
    monkeypatch.setenv("DONEGATE_CLAUDE", str(exe))
    with pytest.raises(DonegateError, match="cannot run Claude Code"):
        model.run("p", cwd=tmp_path, schema={}, tools=[], max_turns=1, timeout=30)


def test_progress_calls_never_overlap(fake_claude, tmp_path, monkeypatch):
    monkeypatch.setattr(model, "TICK", 0.01)
    active, overlaps = [0], []
    lock = threading.Lock()

    def slow(elapsed: float, turns: int) -> None:
        with lock:
            active[0] += 1
            overlaps.append(active[0])
        time.sleep(0.005)
        with lock:
            active[0] -= 1

    model.run("p", cwd=tmp_path, schema={}, tools=[], max_turns=1, timeout=30, on_progress=slow)
    assert overlaps and max(overlaps) == 1
    assert os.environ.get("DONEGATE_NESTED") is None  # the child's env, not ours
