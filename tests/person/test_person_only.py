"""The kit's own commands are the person's (issue 26): run from inside a Claude Code session working in a
sealed repository they refuse, unless the person confirms on a terminal the session did not make; what
they do is a ledger line naming who ran it; a seal made inside a session is handed to a person.

"Inside a Claude Code session" is made real here the two ways the real client shows it (seen on
2.1.197 with a scripted session running `env` and walking /proc): the variables it sets in its
tools' environment, and a process named `claude` above the command (a symlink named `claude` to
/bin/sh, which is what /proc shows for the native binary: comm `claude`).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from donegate import paths
from donegate.person import ownership as person
from tests.support.repos import EXAMPLE_TESTS, KIT, first_stop, ledger_lines, make_repo, run_hook, seal, stop_payload

SESSION_ENV = {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli", "CLAUDE_CODE_SESSION_ID": "agent-session-1",
               "AI_AGENT": "claude-code_2-1-197_agent"}
PERSONS = "are the person's"


def kit(*args: str, cwd: Path, env: dict | None = None, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    """`python -m donegate ARGS` from `cwd` (the agent's Bash folder), optionally under a fake `claude`."""
    base = {k: v for k, v in os.environ.items() if k not in SESSION_ENV}
    argv = [sys.executable, "-m", "donegate", *args]
    if prefix:
        argv = [*prefix, " ".join(map(repr, argv)) + "; exit $?"]  # not exec'd: `claude` stays the parent
    return subprocess.run(argv, cwd=cwd, env={**base, "PYTHONPATH": str(KIT), **(env or {})}, capture_output=True,
                          text=True, timeout=180, stdin=subprocess.DEVNULL)


@pytest.fixture
def claude(tmp_path) -> list[str]:
    """A program /proc calls `claude`: what Claude Code is in the process chain."""
    link = tmp_path / "bin" / "claude"
    link.parent.mkdir()
    link.symlink_to("/bin/sh")
    return [str(link), "-c"]


def record(kit_home: Path, repo: Path) -> str:
    return (kit_home / "state" / "seals" / f"{paths.repo_key(repo)}.json").read_text()


def cheat(tmp_path: Path, name: str = "ok") -> Path:
    """A test of the agent's own (or, with another name, the person's): `assert True`."""
    t = tmp_path / name / f"test_{name}.py"
    t.parent.mkdir()
    t.write_text(f"def test_{name}():\n    assert True\n")
    return t


# -- refused from inside a session ------------------------------------------------------------------

def test_a_seal_from_inside_a_session_is_refused_and_recorded(sealed_shop, kit_home, tmp_path):
    before = record(kit_home, sealed_shop)
    res = kit("seal", ".", str(cheat(tmp_path)), cwd=sealed_shop, env=SESSION_ENV)
    assert res.returncode == 1 and PERSONS in res.stderr and "CLAUDECODE" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.splitlines()) <= 2
    assert record(kit_home, sealed_shop) == before  # the hidden tests are the person's still
    (line,) = [r for r in ledger_lines(kit_home) if r["event"] == "refused"]
    assert line["command"] == "seal" and line["inside_session"] and line["by"]["session"] == "agent-session-1"


def test_a_seal_from_inside_a_codex_session_is_refused(sealed_shop, kit_home, tmp_path):
    """Codex CLI 0.169.0 puts CODEX_SESSION_ID, CODEX_THREAD_ID and CODEX_TOOL_CALL_ID in its commands' environment."""
    before = record(kit_home, sealed_shop)
    env = {"CODEX_SESSION_ID": "codex-1", "CODEX_THREAD_ID": "codex-1", "CODEX_TOOL_CALL_ID": "call_1"}
    res = kit("seal", ".", str(cheat(tmp_path)), cwd=sealed_shop, env=env)
    assert res.returncode == 1 and PERSONS in res.stderr and "CODEX_SESSION_ID" in res.stderr, res.stderr
    assert record(kit_home, sealed_shop) == before
    (line,) = [r for r in ledger_lines(kit_home) if r["event"] == "refused"]
    assert line["by"]["session"] == "codex-1"


@pytest.mark.parametrize("var", ["GEMINI_CLI", "QWEN_CODE", "COPILOT_CLI"])
def test_a_seal_from_inside_a_gemini_qwen_or_copilot_session_is_refused(var, sealed_shop, kit_home, tmp_path):
    """Gemini CLI 0.61.0, Qwen Code 0.15.10 and Copilot CLI 1.0.102 put `<VAR>=1` in their shell tool's environment
    (seen by an `env` the scripted agent ran)."""
    before = record(kit_home, sealed_shop)
    res = kit("seal", ".", str(cheat(tmp_path)), cwd=sealed_shop, env={var: "1"})
    assert res.returncode == 1 and PERSONS in res.stderr and var in res.stderr, res.stderr
    assert record(kit_home, sealed_shop) == before


def test_a_claude_process_above_is_enough_without_the_variables(sealed_shop, kit_home, tmp_path, claude):
    before = record(kit_home, sealed_shop)
    res = kit("seal", ".", str(cheat(tmp_path)), cwd=sealed_shop, prefix=claude)
    assert res.returncode == 1 and PERSONS in res.stderr and "claude process" in res.stderr, res.stderr
    assert record(kit_home, sealed_shop) == before


@pytest.mark.parametrize("args", [["uninstall", "."], ["install", ".", "--sandbox", "off"], ["label", "0123456789", "unjustified"],
                                  ["write", ".", "--request", "x"], ["approve", "0123456789"],
                                  ["reject", "0123456789", "--note", "no"], ["unseal", "."], ["seal", ".", "x.py", "--add"]])
def test_every_persons_command_is_refused_from_the_session(sealed_shop, kit_home, args):
    before = record(kit_home, sealed_shop)
    res = kit(*args, cwd=sealed_shop, env=SESSION_ENV)
    assert res.returncode == 1 and PERSONS in res.stderr, (args, res.stderr)
    assert record(kit_home, sealed_shop) == before


def test_the_session_is_found_from_another_folder_through_the_target(sealed_shop, kit_home, tmp_path):
    res = kit("seal", str(sealed_shop), str(cheat(tmp_path)), cwd=tmp_path, env=SESSION_ENV)
    assert res.returncode == 1 and PERSONS in res.stderr


# -- honest look-alikes -----------------------------------------------------------------------------

def test_a_person_outside_any_session_seals_as_before(sealed_shop, kit_home, tmp_path):
    res = kit("seal", ".", *map(str, sorted(EXAMPLE_TESTS.glob("test_*.py"))), "--replace", cwd=sealed_shop)
    assert res.returncode == 0, res.stderr
    (line,) = [r for r in ledger_lines(kit_home) if r["event"] == "seal"][-1:]
    assert line["inside_session"] is False and line["by"]["terminal"] is False and line["tests"] > 0
    assert line["repo"] == str(sealed_shop.resolve())


def test_a_session_elsewhere_does_not_stop_the_persons_commands(sealed_shop, kit_home, tmp_path):
    """A developer's Claude Code session in another project (the kit's own, say) is not the gated one."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    res = kit("report", cwd=other, env=SESSION_ENV)
    assert res.returncode == 0, res.stderr
    assert person.check("seal", kit_home, str(other), env=SESSION_ENV, procs=person.chain())["claude_env"]


def test_the_check_is_keyed_by_command_name():
    assert {"seal", "write", "install", "uninstall", "label", "approve", "reject", "unseal", "relocate"} == person.PERSON_COMMANDS
    assert set(person.CHANGES) == person.PERSON_COMMANDS


# -- the person's confirmation on a terminal ----------------------------------------------------------

def _drive(pid: int, fd: int, answer: bool) -> tuple[int, str]:
    """Read the pty; when the prompt asks for a word, type it back (as a person at that terminal would)."""
    out, deadline = b"", time.monotonic() + 180
    typed = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            text = out.decode("utf-8", "replace")
            if answer and not typed and "and Enter to go on" in text:
                word = text.rsplit("type ", 1)[1].split()[0]
                os.write(fd, word.encode() + b"\n")
                typed = True
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0) if not done else (done, status)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def test_the_person_confirms_on_the_terminal_claude_runs_in(sealed_shop, kit_home, claude):
    """The terminal's session started above Claude Code (the person's own): the word shown there, typed back."""
    argv = [sys.executable, "-m", "donegate", "seal", ".", *map(str, sorted(EXAMPLE_TESTS.glob("test_*.py"))), "--replace"]
    env = {**{k: v for k, v in os.environ.items() if k not in SESSION_ENV}, **SESSION_ENV, "PYTHONPATH": str(KIT)}
    pid, fd = pty.fork()
    if pid == 0:  # the session leader of the new terminal, which becomes `claude`
        os.chdir(sealed_shop)
        os.execve(claude[0], [claude[0], "-c", " ".join(map(repr, argv)) + "; exit $?"], env)
    code, out = _drive(pid, fd, answer=True)
    assert code == 0 and "sealed " in out, out
    line = [r for r in ledger_lines(kit_home) if r["event"] == "seal"][-1]
    assert line["by"]["confirmed"] == "terminal" and line["inside_session"]
    res = run_hook(stop_payload(sealed_shop))  # a confirmed seal is the person's: judged as usual
    assert "sealed again from inside" not in res.stderr + res.stdout


def test_a_terminal_the_agent_made_is_not_asked(sealed_shop, kit_home, tmp_path, claude):
    """`script`, `expect` or Python's pty below Claude Code: the agent could read and type there."""
    driver = tmp_path / "agent_pty.py"
    driver.write_text(
        "import os, pty, sys\n"
        f"argv = {[sys.executable, '-m', 'donegate', 'seal', '.', str(cheat(tmp_path))]!r}\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n    os.execv(argv[0], argv)\n"
        "out = b''\n"
        "while True:\n"
        "    try:\n        chunk = os.read(fd, 4096)\n    except OSError:\n        break\n"
        "    if not chunk:\n        break\n"
        "    out += chunk\n"
        "    if b'and Enter' in out:\n        os.write(fd, out.decode().rsplit('type ', 1)[1].split()[0].encode() + b'\\n')\n"
        "sys.stdout.write(out.decode())\n"
        "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    before = record(kit_home, sealed_shop)
    res = subprocess.run([*claude, f"{sys.executable!r} {str(driver)!r}; exit $?"], cwd=sealed_shop, capture_output=True,
                         text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(KIT)}, stdin=subprocess.DEVNULL)
    assert res.returncode == 1 and PERSONS in res.stdout and "and Enter" not in res.stdout, res.stdout + res.stderr
    assert record(kit_home, sealed_shop) == before


# -- who ran it, in the ledger and at the next stop ---------------------------------------------------

def test_a_seal_made_inside_a_session_is_handed_to_a_person_at_the_next_stop(shop_repo, kit_home, tmp_path):
    """A first seal is not refused (nothing is sealed yet), but a session made it: every stop blocks for a
    person until a person seals again."""
    res = kit("seal", ".", str(cheat(tmp_path)), cwd=shop_repo, env=SESSION_ENV)
    assert res.returncode == 0, res.stderr
    assert json.loads(record(kit_home, shop_repo))["by"]["claude_env"]
    hook = run_hook(stop_payload(shop_repo))
    assert hook.returncode == 2 and "sealed again from inside a Claude Code session" in hook.stderr, hook.stderr
    assert "a person" in hook.stderr
    stop = [r for r in ledger_lines(kit_home) if r["event"] == "stop"][-1]
    assert stop["verdict"] == "block" and stop["gates"]["integrity"]["sealed_by"]["session"] == "agent-session-1"
    # The person seals again from outside the session: judged as usual (the cheat test passes).
    assert seal(shop_repo, cheat(tmp_path, "person")).returncode == 0  # (--replace)
    assert run_hook(stop_payload(shop_repo, session="s2")).returncode == 0


def test_report_and_page_show_the_sessions_commands_first(blocked_shop, kit_home, tmp_path):
    assert first_stop(blocked_shop).returncode == 2
    kit("seal", ".", str(cheat(tmp_path)), cwd=blocked_shop, env=SESSION_ENV)
    kit("label", "0123456789", "unjustified", cwd=blocked_shop, env=SESSION_ENV)
    res = kit("report", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("WARNING: 2 commands of the kit") and "inside a Claude Code session" in first, res.stdout
    assert "seal (refused)" in res.stdout and "label (refused)" in res.stdout and "agent-session-1" in res.stdout
    js = json.loads(kit("report", "--json", cwd=tmp_path).stdout)
    assert js["inside_session"]["count"] == 2 and js["kit_commands"] == {"seal": 1} and not js["ignored_events"]
    page = tmp_path / "r.html"
    assert kit("report", "--html", str(page), cwd=tmp_path).returncode == 0
    text = page.read_text()
    assert 'id="inside"' in text and text.index('id="inside"') < text.index('id="tiles"')


def test_a_seal_during_a_session_without_a_terminal_is_handed_to_a_person(sealed_shop, kit_home, tmp_path):
    """The agent hid from the check (variables unset, detached from Claude Code): nothing on the seal
    shows a session, but it came after the session's first stop and from no terminal.

    Its look-alike first, in the same session: a session id seen at a stop in one repository (a client that reuses its
    ids, a person's script) and a first seal of another repository after it, from no terminal. Was: "sealed again during
    this session" at the other repository's first stop (the session's first stop was kept for the session only)."""
    assert run_hook(stop_payload(sealed_shop, session="s1")).returncode == 2  # the session's first stop, in the shop
    other = make_repo(tmp_path / "other", {"calc.py": "def add(a, b):\n    return a + b\n"})
    assert seal(other, cheat(tmp_path)).returncode == 0  # no session signs, no terminal: a first seal of `other`
    res = run_hook(stop_payload(other, session="s1"))
    assert res.returncode == 0 and "sealed again" not in res.stderr, res.stderr
    # The shop's seal made again in that session (no session signs, no terminal) is handed to a person.
    assert seal(sealed_shop, cheat(tmp_path, "again")).returncode == 0
    res = run_hook(stop_payload(sealed_shop, session="s1"))
    assert res.returncode == 2 and "sealed again during this session" in res.stderr and "a person" in res.stderr, res.stderr
    # A session that starts after the seal is judged on it as usual (the kit cannot tell whose it is).
    assert run_hook(stop_payload(sealed_shop, session="s2")).returncode == 0


def test_a_person_resealing_at_a_terminal_during_a_session_is_judged_as_usual(sealed_shop, kit_home, tmp_path):
    assert run_hook(stop_payload(sealed_shop, session="s1")).returncode == 2
    main, tty = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "donegate", "seal", str(sealed_shop), str(cheat(tmp_path)), "--replace"], stdin=tty,
                             capture_output=True, text=True, timeout=180, cwd=KIT,
                             env={k: v for k, v in os.environ.items() if k not in SESSION_ENV})
    finally:
        os.close(tty)
        os.close(main)
    assert res.returncode == 0, res.stderr
    assert [r for r in ledger_lines(kit_home) if r["event"] == "seal"][-1]["by"]["terminal"] is True
    assert run_hook(stop_payload(sealed_shop, session="s1")).returncode == 0


def test_status_names_a_seal_that_is_not_the_persons(shop_repo, kit_home, tmp_path):
    assert kit("seal", ".", str(cheat(tmp_path)), cwd=shop_repo, env=SESSION_ENV).returncode == 0  # a first seal, flagged
    res = kit("status", cwd=tmp_path)
    assert res.returncode == 0 and "WARNING: the acceptance tests were sealed again from inside a Claude Code session" in res.stdout
    assert "every stop blocks for a person" in res.stdout, res.stdout
