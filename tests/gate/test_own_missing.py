"""An agent's test that does not collect for a module of the project said missing (docs/own-suite.md): the kit's log
holds what the own-now run's mirror and the repository held of it (`donegate.gate.own_missing`), to make a false
block of that kind (typeguard's `_checkers`, more-itertools' `peekable`) diagnosable. Through the real hook: the
verdict and what the agent reads are as before; a missing module of no concern to the project logs nothing."""

from __future__ import annotations

from donegate import paths
from tests.support.repos import run_hook, sealed_project, stop_payload

CALC = "def twice(n):\n    return n + n\n"
FILES = {"calc/__init__.py": CALC, "tests/test_calc.py": "import calc\n\n\ndef test_twice():\n    assert calc.twice(2) == 4\n"}
HIDDEN = "import calc\n\n\ndef test_twice():\n    assert calc.twice(3) == 6\n"
MARK = "own-now collection error naming a module of the project"


def _log(kit_home) -> str:
    path = paths.log_path(kit_home)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_missing_module_of_the_project_logs_the_mirrors_state_and_the_verdict_is_as_before(tmp_path_factory, kit_home):
    repo = sealed_project(tmp_path_factory, kit_home, "own-missing", FILES, HIDDEN, 1)
    # the look-alike first: a module of no concern to the project missing blocks as before, and logs nothing
    (repo / "tests" / "test_other.py").write_text("import nowhere_at_all\n\n\ndef test_x():\n    assert nowhere_at_all\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    assert "does not collect: ModuleNotFoundError: No module named 'nowhere_at_all'" in res.stderr, res.stderr
    assert MARK not in _log(kit_home)
    (repo / "tests" / "test_other.py").unlink()
    # the agent's test imports a module of the project that really is missing
    (repo / "tests" / "test_extra.py").write_text("from calc.extra import half\n\n\ndef test_half():\n    assert half(4) == 2\n")
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2, res.stderr
    told = ("your own test tests/test_extra.py (a test you added or changed) fails: does not collect: "
            "ModuleNotFoundError: No module named 'calc.extra'\n")
    assert told in res.stderr, res.stderr
    for word in ("mirror", "sha256", "mtime_ns", ".clean", MARK):
        assert word not in res.stderr, res.stderr
    log = _log(kit_home)
    assert f"{MARK}: calc.extra; mirror " in log and "-own-now (.clean " in log, log
    for rel in ("calc/extra.py", "calc/extra/__init__.py", "src/calc/extra.py", "src/calc/extra/__init__.py"):
        assert f"  calc.extra {rel}: mirror absent record=None; repository absent" in log, log
    # the honest stop: the module written, the test passes, and the log gains nothing
    (repo / "calc" / "extra.py").write_text("def half(n):\n    return n // 2\n")
    before = _log(kit_home).count(MARK)
    res = run_hook(stop_payload(repo, session="s3"))
    assert res.returncode == 0, res.stderr
    assert _log(kit_home).count(MARK) == before == 1


def test_the_log_names_each_place_a_module_is_with_its_bytes(tmp_path):
    """`note` on a module that is there in both places (what a false block would show): exists, size, sha256."""
    from types import SimpleNamespace

    from donegate.gate import own_missing

    repo, root = tmp_path / "repo", tmp_path / "home"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "__init__.py").write_text("X = 1\n")
    mirror = paths.state_dir(root) / "mirror" / "k-own-now"
    (mirror / "src" / "pkg").mkdir(parents=True)
    (mirror / "src" / "pkg" / "__init__.py").write_text("")  # empty in the mirror: the suspect
    mirror.with_suffix(".clean").write_text("look-1")
    run = SimpleNamespace(errors=[{"nodeid": "tests/test_a.py",
                                   "message": "E   AttributeError: module 'pkg' has no attribute 'peekable'"},
                                  {"nodeid": "tests/test_b.py", "message": "E   AssertionError: pkg"}],
                          faithful=True, copy_duration=0.01)
    own_missing.note(root, "k", repo, "", run)
    log = paths.log_path(root).read_text(encoding="utf-8")
    assert "mirror " + str(mirror) + " (.clean present 'look-1', .putback absent, record none)" in log, log
    line = next(x for x in log.splitlines() if x.startswith("  pkg src/pkg/__init__.py:"))
    assert "mirror exists size=0 " in line and "sha256=e3b0c44298fc1c14" in line, line
    assert "repository exists size=6 " in line, line
    assert "  pkg pkg.py: mirror absent record=None; repository absent" in log, log
