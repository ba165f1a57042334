"""A person's `seal` (new, --add, --replace), `unseal`, and the one-line errors they get."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from donegate.seal import store
from tests.support.repos import KIT, ledger_lines, make_repo, run_hook, stop_payload

ONE = "from mod import VALUE\n\n\ndef test_one():\n    assert VALUE == 1\n"
TWO = "from mod import VALUE\n\n\ndef test_two():\n    assert VALUE == 2\n"


def donegate(*argv: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "donegate", *argv], capture_output=True, text=True, cwd=KIT,
                          input=input, timeout=timeout)


def files(tmp_path: Path, **bodies: str) -> list[str]:
    (tmp_path / "t").mkdir(exist_ok=True)
    out = []
    for name, body in bodies.items():
        (tmp_path / "t" / f"{name}.py").write_text(body)
        out.append(str(tmp_path / "t" / f"{name}.py"))
    return out


def test_a_second_seal_neither_drops_nor_replaces_without_being_told(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    [one] = files(tmp_path, test_one=ONE)
    [two] = files(tmp_path, test_two=TWO)
    assert donegate("seal", str(repo), one, "--request", "keep VALUE").returncode == 0

    res = donegate("seal", str(repo), two)
    assert res.returncode == 1 and "already has sealed acceptance tests" in res.stderr and "--add" in res.stderr
    assert store.load(repo).tests() == ["test_one.py::test_one"]  # the earlier set is untouched

    res = donegate("seal", str(repo), two, "--add")
    assert res.returncode == 0, res.stderr
    assert "sealed 2 tests" in res.stdout and "1 new requirements failing, 1 already passing" in res.stdout
    st = store.load(repo)
    assert st.tests() == ["test_one.py::test_one", "test_two.py::test_two"] and st.manifest["request"] == "keep VALUE"

    res = donegate("seal", str(repo), one, "--add")  # the same name again: refused, nothing changed
    assert res.returncode == 1 and "test_one.py: already sealed" in res.stderr
    assert store.load(repo).manifest == st.manifest

    res = donegate("seal", str(repo), one, "--replace")
    assert res.returncode == 0 and store.load(repo).tests() == ["test_one.py::test_one"]


def test_add_with_nothing_sealed_is_refused(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    [one] = files(tmp_path, test_one=ONE)
    res = donegate("seal", str(repo), one, "--add")
    assert res.returncode == 1 and "nothing is sealed" in res.stderr and "seal without --add" in res.stderr


def test_a_syntax_error_is_one_line_with_file_and_line(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    [bad] = files(tmp_path, test_bad="def test_x():\n    pass\ndef test_y(:\n    pass\n")
    res = donegate("seal", str(repo), bad)
    assert res.returncode == 1
    first, fix = res.stderr.splitlines()
    assert first == f"donegate: {bad}:3: invalid syntax", res.stderr
    assert fix.strip() == "fix: fix the syntax, then seal again" and "Traceback" not in res.stderr
    assert store.load(repo) is None


def test_unseal_lets_the_repository_stop_ungated_and_says_so_in_the_ledger(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    [two] = files(tmp_path, test_two=TWO)
    assert donegate("seal", str(repo), two).returncode == 0
    assert run_hook(stop_payload(repo)).returncode == 2
    res = donegate("unseal", str(repo))
    assert res.returncode == 0 and "unsealed" in res.stdout and "1 acceptance tests removed" in res.stdout
    assert store.load(repo) is None and not any((kit_home / "acceptance").iterdir())
    assert run_hook(stop_payload(repo)).returncode == 0
    assert [r["event"] for r in ledger_lines(kit_home) if r["event"] == "unseal"] == ["unseal"]
    res = donegate("unseal", str(repo))
    assert res.returncode == 1 and "nothing is sealed" in res.stderr


def test_hook_help_prints_help_and_reads_nothing(tmp_path, kit_home):
    # stdin stays open: the old `hook --help` waited on it, then wrote an `error` stop into the ledger.
    proc = subprocess.Popen([sys.executable, "-m", "donegate", "hook", "--help"], cwd=KIT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "usage: donegate hook" in out and "--home ROOT" in out, err
    assert not (kit_home / "ledger.jsonl").exists() or not json.loads("[" + ",".join(
        (kit_home / "ledger.jsonl").read_text().splitlines()) + "]")


def test_a_test_file_the_agent_can_read_is_refused_in_one_line(tmp_path):
    """`seal --add REPO REPO/tests/test_x.py` sealed a "hidden" test the agent reads in its own tree; a file
    in a worktree of the repository too. The look-alike: the same file outside both is sealed."""
    from tests.support.repos import EXAMPLE_TESTS, example_files, git, make_repo, seal

    repo = make_repo(tmp_path / "shop", example_files())
    body = sorted(EXAMPLE_TESTS.glob("test_*.py"))[0].read_text()
    inside = repo / "tests" / "test_hidden.py"
    inside.parent.mkdir(exist_ok=True)
    inside.write_text(body)
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    in_worktree = tmp_path / "wt" / "test_hidden.py"
    in_worktree.write_text(body)
    for test in (inside, in_worktree):
        res = seal(repo, test)
        assert res.returncode != 0 and "where the agent can read it" in res.stderr and "move it outside" in res.stderr, res.stderr
        assert len([line for line in res.stderr.splitlines() if line.strip()]) <= 2
    outside = tmp_path / "hidden" / "test_hidden.py"
    outside.parent.mkdir()
    outside.write_text(body)
    assert seal(repo, outside).returncode == 0
