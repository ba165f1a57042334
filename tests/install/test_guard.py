"""The PreToolUse guard: it refuses what reaches the kit's folders and lets ordinary work through.

Each test builds a real layout: a git repository in tmp_path, the state root (DONEGATE_HOME) beside it
holding a hidden test, and runs the guard on the JSON Claude Code would send.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.install import guard
from donegate import paths
from tests.support.repos import KIT, ledger_lines, make_repo

LAUNCHER = KIT / "hooks" / "guard.py"


@pytest.fixture
def layout(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n", "tests/test_app.py": "def test_x(): pass\n",
                                         "README.md": "demo\n", ".claude/settings.json": "{}\n"})
    hidden = kit_home / "acceptance" / paths.repo_key(repo) / "test_hidden.py"
    hidden.parent.mkdir(parents=True)
    hidden.write_text("def test_secret(): assert True\n")
    return repo, hidden


def decide(repo: Path, tool: str, tool_input: dict, cwd: Path | None = None, env: dict | None = None):
    payload = {"session_id": "s1", "tool_name": tool, "tool_input": tool_input, "cwd": str(cwd or repo),
               "hook_event_name": "PreToolUse"}
    return guard.decide(payload, env)


def refused(*args, **kw) -> bool:
    return decide(*args, **kw) is not None


def bash(repo: Path, command: str, **kw) -> bool:
    return refused(repo, "Bash", {"command": command}, **kw)


def rel(path: Path, start: Path) -> str:
    return os.path.relpath(path, start)


# -- refusals -------------------------------------------------------------------------------------

def test_file_tools_refuse_the_store_by_any_spelling(layout):
    repo, hidden = layout
    for spelling in (str(hidden), rel(hidden, repo), str(repo / "src" / ".." / rel(hidden, repo)),
                     str(hidden.parent) + "/./test_hidden.py"):
        for tool in ("Read", "Edit", "Write"):
            assert refused(repo, tool, {"file_path": spelling}), (tool, spelling)
    assert refused(repo, "NotebookEdit", {"notebook_path": str(hidden.with_suffix(".ipynb"))})
    assert refused(repo, "Read", {"file_path": str(paths.KIT_ROOT / "hooks" / "stop_gate.py")})


def test_symlink_into_the_store_is_refused(layout):
    repo, hidden = layout
    (repo / "link").symlink_to(hidden.parent)
    assert refused(repo, "Read", {"file_path": str(repo / "link" / "test_hidden.py")})
    assert bash(repo, "cat link/test_hidden.py")


def test_home_relative_paths_are_refused(layout, tmp_path, monkeypatch):
    repo, _ = layout
    home = Path(os.environ["HOME"])
    state = home / "kit-state"
    (state / "acceptance").mkdir(parents=True)
    (state / "acceptance" / "test_h.py").write_text("x\n")
    env = {**os.environ, "DONEGATE_HOME": str(state)}
    assert refused(repo, "Read", {"file_path": "~/kit-state/acceptance/test_h.py"}, env=env)
    assert bash(repo, "cat ~/kit-state/acceptance/test_h.py", env=env)
    assert bash(repo, "cat $HOME/kit-state/acceptance/test_h.py", env=env)
    assert bash(repo, "grep -r assert ~", env=env)


def test_bash_reaching_the_store(layout, kit_home):
    repo, hidden = layout
    up = rel(kit_home, repo)  # ../../donegate-home0 or so
    parent = rel(kit_home.parent, repo)
    attempts = [
        f"cat {hidden}",
        f"cat {rel(hidden, repo)}",
        f"cat {up}/acceptance/*/test_*.py",  # glob
        f"cat {parent}/donegate-home*/acceptance/*/*.py",  # glob over the folder name
        f"head -50 {parent}/{{{kit_home.name},x}}/acceptance/*/test_hidden.py",  # braces
        f"cd {parent} && cat {kit_home.name}/acceptance/*/test_hidden.py",  # cd, then relative
        f"find {parent} -name 'test_*.py'",
        f"grep -rn secret {parent}",
        f"grep -R secret {parent}",
        f"rg secret {parent}",
        f"ls -R {parent}",
        "find / -name test_hidden.py",
        f"tar czf /tmp/x.tgz {parent}",
        f"python3 -c \"print(open('{rel(hidden, repo)}').read())\"",
        f"bash -c 'cat {up}/acceptance/*/*.py'",
        f"sh -c \"cd {parent}; grep -r secret .\"",
        f"eval cat {up}/acceptance/*/*.py",
        f"git -C {parent} grep --no-index secret",
        f"echo hi; cat {up}/ledger.jsonl",
        f"cat {paths.KIT_ROOT}/hooks/stop_gate.py",
        f"env X=1 timeout 5 cat {rel(hidden, repo)}",
        f"cat < {rel(hidden, repo)}",
        f"cp -r {up} /tmp/copy",
    ]
    for command in attempts:
        assert bash(repo, command), command


def test_search_tools_over_a_parent_folder_are_refused(layout, kit_home):
    repo, hidden = layout
    assert refused(repo, "Grep", {"pattern": "secret", "path": str(kit_home.parent)})
    assert refused(repo, "Grep", {"pattern": "secret", "path": "/"})
    assert refused(repo, "Grep", {"pattern": "secret", "path": str(hidden.parent)})
    assert refused(repo, "Grep", {"pattern": "secret", "path": rel(kit_home.parent, repo)})
    assert refused(repo, "Glob", {"pattern": "**/test_*.py", "path": str(kit_home.parent)})
    assert refused(repo, "Glob", {"pattern": f"{kit_home.parent}/*/acceptance/**"})
    assert refused(repo, "Glob", {"pattern": f"{rel(kit_home.parent, repo)}/**/*.py"})


def test_settings_files_cannot_be_written(layout):
    repo, _ = layout
    home = Path(os.environ["HOME"])
    for tool in ("Write", "Edit"):
        assert refused(repo, tool, {"file_path": str(repo / ".claude" / "settings.json")})
        assert refused(repo, tool, {"file_path": str(repo / ".claude" / "settings.local.json")})
        assert refused(repo, tool, {"file_path": str(home / ".claude" / "settings.json")})
    assert bash(repo, "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json")
    assert bash(repo, "sed -i s/Stop/Nope/ .claude/settings.json")
    assert bash(repo, "cp /tmp/x.json .claude/settings.json")
    assert bash(repo, "rm -rf .claude")
    assert bash(repo, "mv .claude /tmp/old")
    assert bash(repo, "cat /tmp/x > ~/.claude/settings.json")


def test_asking_to_leave_the_sandbox_is_refused(layout):
    repo, _ = layout
    assert refused(repo, "Bash", {"command": "ls", "dangerouslyDisableSandbox": True})


# -- ordinary work ----------------------------------------------------------------------------------

def test_ordinary_work_in_the_repository_is_allowed(layout):
    repo, _ = layout
    commands = [
        "pytest -q", "python -m pytest tests/test_app.py -x", "git status && git diff", "ls -la", "ls ..",
        "cat src/app.py", "grep -rn 'x = ' .", "grep -rn x src tests", "find . -name '*.py'", "rg x", "ls -R src",
        "cat .claude/settings.json", "echo done > notes.txt", "cd src && cat app.py", "sed -i s/1/2/ src/app.py",
        "python3 -c 'import sys; print(sys.version)'", "git log --oneline -5 | head", "cat *.md",
        "echo \"unbalanced quote", "",
    ]
    for command in commands:
        assert not bash(repo, command), command
    assert not refused(repo, "Read", {"file_path": str(repo / "src" / "app.py")})
    assert not refused(repo, "Edit", {"file_path": str(repo / "src" / "app.py"), "old_string": "1", "new_string": "2"})
    assert not refused(repo, "Write", {"file_path": str(repo / "src" / "new.py"), "content": ""})
    assert not refused(repo, "Read", {"file_path": str(repo / ".claude" / "settings.json")})
    assert not refused(repo, "Grep", {"pattern": "x"})
    assert not refused(repo, "Grep", {"pattern": "x", "path": str(repo / "src"), "glob": "*.py"})
    assert not refused(repo, "Glob", {"pattern": "**/*.py"})
    assert not refused(repo, "Glob", {"pattern": "src/*.py", "path": str(repo)})
    assert not refused(repo, "TodoWrite", {"todos": []})


def test_a_sibling_with_a_similar_name_is_not_protected(layout, kit_home):
    repo, _ = layout
    sibling = kit_home.parent / (kit_home.name + "-other")
    sibling.mkdir()
    (sibling / "a.txt").write_text("a\n")
    assert not bash(repo, f"cat {sibling}/a.txt")
    assert not refused(repo, "Read", {"file_path": str(sibling / "a.txt")})


# -- the hook process -------------------------------------------------------------------------------

def run_launcher(payload, launcher: Path = LAUNCHER, env: dict | None = None) -> subprocess.CompletedProcess:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-S", str(launcher)], input=text, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def test_launcher_denies_with_the_documented_json_and_exit_2(layout, kit_home):
    repo, hidden = layout
    res = run_launcher({"session_id": "s9", "tool_name": "Bash", "cwd": str(repo),
                        "tool_input": {"command": f"cat {rel(hidden, repo)}"}})
    assert res.returncode == 2, res.stderr
    decision = json.loads(res.stdout)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse"
    assert decision["permissionDecision"] == "deny"
    assert "donegate guard" in decision["permissionDecisionReason"]
    assert "donegate guard" in res.stderr
    # The agent is not told where the hidden tests are, nor their names.
    assert "test_hidden" not in res.stdout and str(kit_home) not in res.stdout
    # A person can see it in the ledger.
    [line] = [r for r in ledger_lines(kit_home) if r.get("event") == "guard"]
    assert line["session"] == "s9" and line["tool"] == "Bash" and "test_hidden" in line["path"]


def test_launcher_allows_with_exit_0_and_no_output(layout):
    repo, _ = layout
    res = run_launcher({"tool_name": "Read", "cwd": str(repo), "tool_input": {"file_path": str(repo / "README.md")}})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]"])
def test_launcher_refuses_what_it_cannot_read(stdin):
    res = run_launcher(stdin)
    assert res.returncode == 2
    assert json.loads(res.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_launcher_refuses_when_the_package_is_broken(tmp_path, layout):
    repo, _ = layout
    fake_kit = tmp_path / "brokenkit"
    (fake_kit / "hooks").mkdir(parents=True)
    (fake_kit / "hooks" / "guard.py").write_text(LAUNCHER.read_text())
    (fake_kit / "donegate").mkdir()
    (fake_kit / "donegate" / "__init__.py").write_text("raise ImportError('half-installed kit')\n")
    res = run_launcher({"tool_name": "Read", "cwd": str(repo), "tool_input": {"file_path": str(repo / "README.md")}},
                       launcher=fake_kit / "hooks" / "guard.py")
    assert res.returncode == 2
    decision = json.loads(res.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "guard itself failed (ImportError)" in decision["permissionDecisionReason"]


def test_a_guard_bug_refuses_instead_of_opening(layout, monkeypatch):
    repo, _ = layout

    def boom(*a, **k):
        raise RuntimeError("bug")

    monkeypatch.setattr(guard, "check_file_tool", boom)
    code, out, _ = guard.run_hook(json.dumps({"tool_name": "Read", "cwd": str(repo), "tool_input": {"file_path": "x"}}))
    assert code == 2 and "RuntimeError" in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]


def test_hot_path_imports_stay_small(layout):
    repo, _ = layout
    probe = ("import sys, json; sys.path.insert(0, sys.argv[1]); from donegate.install import guard; "
             "guard.run_hook(json.dumps({'tool_name': 'Bash', 'cwd': sys.argv[2], 'tool_input': {'command': 'ls'}})); "
             "print(json.dumps(sorted(sys.modules)))")
    res = subprocess.run([sys.executable, "-S", "-c", probe, str(KIT), str(repo)], capture_output=True, text=True, timeout=60)
    loaded = set(json.loads(res.stdout))
    for heavy in ("pytest", "yaml", "donegate.config", "donegate.gate", "donegate.seal.store", "subprocess", "pathlib", "dataclasses", "typing"):
        assert heavy not in loaded, heavy


# The launcher, run as install writes it (`python -I -S guard.py --home ROOT`), under a wrapper that records
# what it imported and every audit event of a process start or a folder read, then exits as the launcher does.
PROBE = """\
import json, os, sys
events = []
def audit(event, args):
    if event in ("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork", "os.forkpty",
                 "os.scandir", "os.listdir", "os.walk", "glob.glob", "open"):
        events.append([event, str(args[0]) if args else ""])
sys.addaudithook(audit)
launcher = sys.argv[1]
ns = {"__name__": "probe", "__file__": launcher}
exec(compile(open(launcher).read(), launcher, "exec"), ns)
sys.argv = sys.argv[1:]
code = ns["main"]()
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules), "events": events}), file=sys.stderr)
os._exit(0)
"""
# What a guard decision adds to a bare interpreter (`-I -S`, json imported as the launcher does): the guard and
# the stdlib it names, nothing else (no yaml, pathlib, subprocess, typing, dataclasses: each is milliseconds per tool call).
GUARD_MODULES = {"donegate", "donegate._layout", "donegate.clients", "donegate.clients.payloads", "donegate.install",
                 "donegate.install.guard", "donegate.install.guard_cli", "__future__", "contextlib", "fnmatch", "glob", "shlex"}


def test_guard_is_fast(layout, tmp_path):
    """What makes the guard fast, pinned (its speed is `make bench`'s guard row, against a bare interpreter):
    it imports only its own modules, starts no process, and reads the filesystem only where the command's
    globs point (one folder each), whatever the command's length."""
    repo, hidden = layout
    payload = {"tool_name": "Bash", "cwd": str(repo),
               "tool_input": {"command": "cd src && grep -rn x . | head -5; cat ../*.md; pytest -q tests/*.py"}}
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    res = subprocess.run([sys.executable, "-I", "-S", str(probe), str(LAUNCHER), "--home", str(paths.home())],
                         input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    seen = json.loads(res.stderr.strip().splitlines()[-1])
    assert seen["code"] == 0 and res.stdout == "", res.stderr
    bare = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys, json, os; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=60)
    added = set(seen["modules"]) - set(json.loads(bare.stdout)) - {"__main__"}
    assert added <= GUARD_MODULES, sorted(added - GUARD_MODULES)
    assert {m for m in added if m.startswith("donegate")} == {m for m in GUARD_MODULES if m.startswith("donegate")}
    events = seen["events"]
    assert not [e for e in events if e[0] not in ("open", "os.scandir", "os.listdir", "os.walk", "glob.glob")], events  # no process
    kit = str(KIT)
    read = [e for e in events if e[0] in ("os.scandir", "os.listdir", "os.walk") and not e[1].startswith(kit)]
    assert sorted(os.path.normpath(e[1]) for e in read) == sorted([str(repo), str(repo / "src" / "tests")]), read
    # A number is a descriptor already open (the kit's bytecode written on a first run), not a file read.
    opened = [e[1] for e in events if e[0] == "open" and not e[1].startswith((kit, sys.base_prefix, sys.prefix)) and not e[1].isdigit()]
    assert not opened, opened


def test_state_root_matches_paths(monkeypatch, tmp_path):
    assert guard.KIT_ROOT == str(paths.KIT_ROOT)
    assert guard.state_root() == str(paths.home())
    monkeypatch.delenv("DONEGATE_HOME")
    assert guard.state_root() == str(paths.home())


def test_braces_expand_like_bash():
    assert guard.expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert guard.expand_braces("{x}") == ["{x}"]
    assert guard.expand_braces("plain") == ["plain"]


def test_cli_guard_subcommand(layout):
    repo, hidden = layout
    payload = json.dumps({"tool_name": "Read", "cwd": str(repo), "tool_input": {"file_path": str(hidden)}})
    res = subprocess.run([sys.executable, "-m", "donegate", "guard"], input=payload, capture_output=True, text=True,
                         timeout=60, cwd=KIT)
    assert res.returncode == 2
    assert json.loads(res.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- the kit's own command line (issue 26) ----------------------------------------------------------

KIT_CLI = "donegate's own command line"


def reason(repo: Path, command: str) -> str:
    r = decide(repo, "Bash", {"command": command})
    return guard.render_denial("Bash", r.why, r.head)[2] if r else ""


def test_every_spelling_of_the_kit_cli_is_refused_with_the_persons_line(layout):
    repo, _ = layout
    (repo / "s.sh").write_text("#!/bin/sh\ncd . && donegate seal . t_ok.py\n")
    (repo / "p.py").write_text("import subprocess\nsubprocess.run(['python3', '-m', 'donegate', 'label', 'ab12', 'unjustified'])\n")
    (repo / "q.py").write_text("from donegate.cli import main\nmain(['unseal', '.'])\n")
    (repo / "s.sh").chmod(0o755)
    for command in (
        "donegate seal . t_ok.py", "python -m donegate seal . t_ok.py", "python3 -mdonegate seal . t.py",
        f"{sys.executable} -m donegate.cli label ab12 unjustified", "/usr/bin/env donegate uninstall .",
        "env -u CLAUDECODE donegate approve ab12", "sh -c 'donegate install . --sandbox off'",
        "bash -c \"bash -c 'donegate seal . t.py'\"", "bash s.sh", "./s.sh", ". ./s.sh", "python3 p.py", "python q.py",
        "pipx run donegate seal . t.py", "uvx donegate label x justified", "echo 'donegate seal . t.py' | sh",
        "sh <<EOF\ndonegate seal . t.py\nEOF", "python -c 'import donegate.cli as c; c.main()'",
        "nohup setsid donegate seal . t.py >/dev/null 2>&1 &", "ls | xargs donegate seal .",
        "timeout 5 donegate report", "out=$(donegate seal . t.py)",
    ):
        text = reason(repo, command)
        assert KIT_CLI in text and "are the person's" in text and "APPEAL" in text, command


def test_honest_commands_that_mention_the_kit_pass(layout):
    repo, _ = layout
    (repo / "run.sh").write_text("#!/bin/sh\npython -m pytest -q\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "donegate_notes.py").write_text("print('hello')\n")
    for command in ("cat README.md", "python -m pytest -q", "python3 -m http.server 0 &", "./run.sh", "bash run.sh",
                    "echo donegate", "pip list | grep donegate", "python donegate_notes.py", "git log --oneline",
                    "grep -rn 'donegate' src", "ls -la"):
        assert not bash(repo, command), command


def test_a_variable_spelling_passes_the_tripwire(layout):
    """What a string match cannot see, `donegate.person.ownership` refuses in the command itself (tests/test_person.py)."""
    repo, _ = layout
    assert not bash(repo, "D=done; ${D}gate seal . t.py")


def test_the_other_clients_hook_files_cannot_be_written(layout):
    """Gemini CLI's and Qwen Code's settings.json and Copilot CLI's hooks/*.json hold the gate's hooks there
    (`donegate install --client gemini|qwen|copilot`): the agent may not edit them, as Claude Code's."""
    repo, _ = layout
    home = Path(os.environ["HOME"])
    for file in (home / ".gemini" / "settings.json", home / ".qwen" / "settings.json",
                 home / ".copilot" / "hooks" / "gate.json", repo / ".gemini" / "settings.json",
                 repo / ".github" / "hooks" / "x.json"):
        assert refused(repo, "Write", {"file_path": str(file)}), file
        assert bash(repo, f"echo '{{}}' > {file}"), file
    assert bash(repo, "rm -rf ~/.copilot/hooks")
    assert refused(repo, "Write", {"file_path": str(home / "q" / "settings.json")},
                   env={**os.environ, "QWEN_HOME": str(home / "q")})
    assert not bash(repo, "cat ~/.gemini/settings.json")  # reading is no edit (the hook's command is a stub path)
    assert not refused(repo, "Write", {"file_path": str(home / ".copilot" / "hooks" / "notes.txt")})


def test_the_hook_stubs_cannot_be_read(layout, tmp_path, kit_home):
    """A stub holds the kit's interpreter and launcher and `--home STATE_ROOT` (donegate/claude/stubs.py). A plain
    `cat` of one was let through: where the hidden tests live, for any client without a sandbox (Gemini CLI, Qwen
    Code, Copilot CLI: their hook files name the stub; Claude Code's project install without it)."""
    from donegate.claude import stubs

    repo, _ = layout
    home = tmp_path / "user"
    env = {**os.environ, "HOME": str(home), "COPILOT_HOME": str(home / "cp"), "CODEX_HOME": str(home / "cx")}
    tag = stubs.tag(kit_home, repo)
    for folder in (home / ".claude" / "hooks", home / ".gemini" / "hooks", home / ".qwen" / "hooks",
                   home / "cp" / "hooks", home / "cx" / "hooks"):
        folder.mkdir(parents=True)
        for name in (f"stop-{tag}", f"pretooluse-{tag}", "stop-notify.sh", "pretooluse-lint"):
            (folder / name).write_text(f"#!/bin/sh\n# --home {kit_home}\n")
        for name in (f"stop-{tag}", f"pretooluse-{tag}"):
            assert bash(repo, f"cat {folder / name}", env=env), folder / name
            assert bash(repo, f"head -c 999 {folder}/stop-*", env=env), folder
            assert refused(repo, "Read", {"file_path": str(folder / name)}, env=env), folder / name
        # A person's own hook scripts beside them, and the folder's listing, stay the agent's to read.
        assert not bash(repo, f"cat {folder}/stop-notify.sh {folder}/pretooluse-lint", env=env), folder
        assert not bash(repo, f"ls -l {folder}", env=env), folder
    assert not bash(repo, f"cat {home}/.gemini/settings.json", env=env)


TAG = "5eed0123abcd"  # a stub's `<hook>-<tag>` (donegate.claude.stubs.tag: 12 hex)
STUB_FOLDERS = (".claude/hooks", ".gemini/hooks", ".qwen/hooks", "cp/hooks", "cx/hooks")  # COPILOT_HOME=cp, CODEX_HOME=cx


@pytest.fixture(scope="module")
def stub_homes(tmp_path_factory):
    """Two HOMEs: `kit` holds the kit's stubs in every client's hooks folder (beside a person's own scripts), `plain`
    only a person's own hook script. Built once: the guard only reads them."""
    base = tmp_path_factory.mktemp("stubs")
    for name, stubbed in (("kit", True), ("plain", False)):
        for folder in STUB_FOLDERS:
            hooks = base / name / folder
            hooks.mkdir(parents=True)
            (hooks / "stop-notify.sh").write_text("#!/bin/sh\necho done\n")
            if stubbed:
                for hook in ("stop", "pretooluse"):
                    (hooks / f"{hook}-{TAG}").write_text("#!/usr/bin/python3 -I\nARGV = ['--home', '/state']\n")
        (base / name / ".claude" / "settings.json").write_text("{}\n")
        (base / name / ".claude" / "projects").mkdir()
        (base / name / ".claude" / "projects" / "s.jsonl").write_text("{}\n")
    (base / "work").mkdir()
    (base / "work" / "app.py").write_text("ARGV = []\n")
    return base


def stub_decide(stub_homes, monkeypatch, home: str, tool: str, tool_input: dict, hooks: str = ".claude/hooks"):
    """The guard's decision with HOME (and COPILOT_HOME, CODEX_HOME) at one of `stub_homes`, `{hooks}` one stub folder."""
    root = stub_homes / home
    for key, value in (("HOME", root), ("COPILOT_HOME", root / "cp"), ("CODEX_HOME", root / "cx")):
        monkeypatch.setenv(key, str(value))
    filled = {k: v.format(hooks=root / hooks, tag=TAG) for k, v in tool_input.items()}
    return decide(stub_homes / "work", tool, filled)


# Walks that reach a folder holding the kit's stubs (each names the state root and the kit): all were let through.
@pytest.mark.parametrize("tool, tool_input", [
    ("Bash", {"command": "grep -r ARGV {hooks}"}),
    ("Bash", {"command": "grep -r ARGV ~/.claude"}),
    ("Bash", {"command": "rg ARGV {hooks}"}),
    ("Bash", {"command": "find {hooks} -type f -exec cat {{}} +"}),
    ("Bash", {"command": "cp -r {hooks} /tmp/x && cat /tmp/x/stop-{tag}"}),
    ("Bash", {"command": "tar cf - -C {hooks} . | tar xOf -"}),
    ("Bash", {"command": "cd ~ && grep -rl ARGV ."}),
    ("Grep", {"pattern": "ARGV", "path": "{hooks}"}),
    ("Grep", {"pattern": "ARGV", "path": "~/.claude"}),
    ("Glob", {"pattern": "*", "path": "{hooks}"}),
    ("Glob", {"pattern": "{hooks}/*"}),
], ids=["grep-r", "grep-r-home", "rg", "find", "cp-r", "tar", "cd-grep", "Grep", "Grep-home", "Glob", "Glob-pattern"])
def test_a_walk_reaching_the_hook_stubs_is_refused(stub_homes, monkeypatch, tool, tool_input):
    for hooks in STUB_FOLDERS if "{hooks}" in str(tool_input) else STUB_FOLDERS[:1]:
        assert stub_decide(stub_homes, monkeypatch, "kit", tool, tool_input, hooks), hooks


# Honest look-alikes: the repository, a person's own files beside the stubs, and ~/.claude where no stub is.
@pytest.mark.parametrize("home, tool, tool_input", [
    ("kit", "Bash", {"command": "grep -r ARGV . && rg ARGV ."}),
    ("kit", "Bash", {"command": "grep -r x ~/.claude/projects && cp -r ~/.claude/projects /tmp/x"}),
    ("kit", "Bash", {"command": "ls -l {hooks} && grep ARGV {hooks}/stop-notify.sh"}),
    ("kit", "Grep", {"pattern": "hooks", "path": "~/.claude/settings.json"}),
    ("kit", "Grep", {"pattern": "x", "path": "~/.claude/projects"}),
    ("plain", "Bash", {"command": "grep -r ARGV ~/.claude && tar cf - -C {hooks} ."}),
    ("plain", "Grep", {"pattern": "hooks", "path": "~/.claude"}),
    ("plain", "Glob", {"pattern": "**/*.json", "path": "~/.claude"}),
], ids=["repo", "projects", "own-script", "Grep-settings", "Grep-projects", "plain-grep-tar", "plain-Grep", "plain-Glob"])
def test_walks_where_no_stub_is_pass(stub_homes, monkeypatch, home, tool, tool_input):
    assert not stub_decide(stub_homes, monkeypatch, home, tool, tool_input)


def test_the_managed_installs_stubs_cannot_be_read(layout):
    """The managed install's stubs lie in `<managed folder>/hooks` (donegate.claude.stubs.folder): a name is enough."""
    repo, _ = layout
    managed = "/Library/Application Support/ClaudeCode" if sys.platform == "darwin" else "/etc/claude-code"
    assert bash(repo, f"cat '{managed}/hooks/stop-{TAG}'")
    assert refused(repo, "Read", {"file_path": f"{managed}/hooks/pretooluse-{TAG}"})
    assert not bash(repo, f"cat '{managed}/hooks/stop-notify.sh' '{managed}/managed-settings.json'")
