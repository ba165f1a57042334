"""The README's quick start, run as written (issue 38 item 8): its lines, taken from the README itself,
on a fresh git repository in a fresh home, with the kit installed from this checkout in an environment
of its own. Two substitutions, both said here: `pipx install /path/to/donegate` is done as pipx does it
but without an index (the wheel built from this checkout into a venv of its own: `installed.wheel_venv`, one for the run),
and the `claude` line is the Stop hook that `install` wrote, run as Claude Code runs it (the command from
the repository's `.claude/settings.json`, the stop's JSON on stdin): once with the bug, once fixed.
Nothing is written to the real home."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from tests.support import require
from tests.support.repos import EXAMPLE_TESTS, KIT, example_files, fix_bug, make_repo
from tests.support.session import find_claude

README = (KIT / "README.md").read_text()


def quick_start() -> list[str]:
    """The command lines of the README's quick start, in order."""
    section = README.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quick_start_names_the_kit_by_its_checkout_and_has_the_five_steps():
    lines = quick_start()
    assert lines[0] == "pipx install /path/to/donegate", "the kit is installed from a checkout: it is on no index"
    verbs = [shlex.split(line)[:2] for line in lines]
    assert [v for v in verbs if v[0] == "donegate"] == [["donegate", "seal"], ["donegate", "install"], ["donegate", "doctor"],
                                                        ["donegate", "report"], ["donegate", "status"]]
    assert any(v[0] == "claude" for v in verbs) and "pipx install donegate\n" not in README


def test_the_quick_start_works_as_written(tmp_path, wheel_installed):
    claude = find_claude()
    venv, _, _ = wheel_installed  # what `pipx install /path/to/donegate` makes, without an index (one for the run)
    home = tmp_path / "home"
    repo = make_repo(home / "src" / "myproject", example_files())
    (home / "acceptance").mkdir()
    shutil.copy(EXAMPLE_TESTS / "test_bulk_discount.py", home / "acceptance" / "test_feature.py")
    state = home / ".local" / "share" / "donegate"
    if require.unconfined():  # no bubblewrap here: a person's `confine: off` (there is no unconfined default)
        state.mkdir(parents=True)
        (state / "donegate.yaml").write_text("confine: off\n")
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME")}
    env = {**keep, "HOME": str(home), "PATH": os.pathsep.join([str(venv / "bin"), str(claude.parent), "/usr/local/bin", "/usr/bin", "/bin"])}
    cwd = tmp_path
    outputs: dict[str, str] = {}
    for line in quick_start():
        argv = shlex.split(line)
        if argv[:2] == ["pipx", "install"]:
            continue  # done above, from this checkout
        if argv[0] == "cd":
            cwd = Path(os.path.expanduser(argv[1]).replace(os.path.expanduser("~"), str(home), 1))
            assert cwd == repo
            continue
        if argv[0] == "claude":
            drive_the_stop_hook(repo, env)
            continue
        argv = [a.replace("~", str(home), 1) if a.startswith("~") else a for a in argv]
        res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, f"{line}\n{res.stdout}\n{res.stderr}"
        outputs[argv[1]] = res.stdout
    assert "1 session" in outputs["report"] and "orders of 10 or more units get 10% off" in outputs["status"]
    summary = json.loads(subprocess.run([str(venv / "bin" / "donegate"), "report", "--json"], cwd=cwd, env=env,
                                        capture_output=True, text=True, timeout=120).stdout)
    assert (summary["total"]["blocks"], summary["total"]["ended_passing"]) == (1, 1)
    assert (state / "ledger.jsonl").is_file()  # the state went to the fresh home


def drive_the_stop_hook(repo: Path, env: dict[str, str]) -> None:
    """The Stop hook from the repository's settings, run as Claude Code runs it: blocked on the bug, then let through."""
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    (hook,) = [h for entry in settings["hooks"]["Stop"] for h in entry["hooks"]]
    argv = [hook["command"], *hook.get("args", [])] if hook.get("args") is not None else shlex.split(hook["command"])
    payload = {"session_id": "quick-start", "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "Done.", "transcript_path": ""}
    for expected in (2, 0):
        res = subprocess.run(argv, input=json.dumps(payload), cwd=repo, env={**env, "CLAUDE_PROJECT_DIR": str(repo)},
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == expected, res.stdout + res.stderr
        if expected == 2:
            assert re.search(r"acceptance tests? fail", res.stderr), res.stderr
            fix_bug(repo)
