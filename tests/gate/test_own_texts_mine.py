"""Which text doctests the agent added run as its own tests (`own_changed.texts_mine`): only those the project's
pytest collects now. One its configuration switches the doctest plugin off for (`-p no:doctest`), or leaves out
(`--ignore`), is not a test: given to pytest by name it errors "not found" and the run stops before any test."""

from __future__ import annotations

from pathlib import Path

from donegate.gate.own_changed import texts_mine

EXAMPLE = ">>> 1 + 1\n2\n"
PACK = {"config": "pytest.ini", "paths": ["tests"], "by": "testpaths", "files": {"tests/test_calc.py": {"text": ""}}}


def _repo(tmp_path: Path, addopts: str) -> Path:
    (tmp_path / "tests" / "old").mkdir(parents=True)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\ntestpaths = tests\naddopts = {addopts}\n")
    for rel in ("tests/test_more.txt", "tests/old/test_old.txt"):
        (tmp_path / rel).write_text(EXAMPLE)
    return tmp_path


def test_a_text_doctest_added_runs_unless_the_configuration_leaves_doctests_or_its_folder_out(tmp_path):
    added = ["tests/test_more.txt", "tests/old/test_old.txt"]
    assert texts_mine(_repo(tmp_path / "a", "-q"), added, PACK, "") == sorted(added)  # the look-alike: collected
    assert texts_mine(_repo(tmp_path / "b", "-p no:doctest"), added, PACK, "") == []
    assert texts_mine(_repo(tmp_path / "c", "-pno:doctest -q"), added, PACK, "") == []
    assert texts_mine(_repo(tmp_path / "d", "--ignore=tests/old"), added, PACK, "") == ["tests/test_more.txt"]
    assert texts_mine(_repo(tmp_path / "e", "--ignore tests/old/test_old.txt"), added, PACK, "") == ["tests/test_more.txt"]
    assert texts_mine(_repo(tmp_path / "f", "--ignore=tests/ol"), added, PACK, "") == sorted(added)  # (a path, no prefix)
