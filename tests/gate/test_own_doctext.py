"""Doctests in the project's text files (docs/own-suite.md, "Doctests of text files"): a configuration whose `addopts`
names `--doctest-glob` (`'*.md'`, `'*.rst'`) and no `testpaths` makes its pytest run the examples of every such file
of the project (a README, the docs), not only of its test folders. The seal kept the test folders only: a regression
only a README example saw passed, and an example deleted, skipped or changed to what the code returns was never named.
Through the real hook, one pooled seal: a README.md, a docs/guide.rst, a .md without examples, a plain test file."""

from __future__ import annotations

import json

from tests.support import own_batch
from tests.support.repos import run_hook, sealed_project, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n\n\ndef twice(n):\n    return add(n, n)\n"
README = ("# calc\n\nDouble a number:\n\n    >>> from calc import twice\n    >>> twice(21)\n    42\n    >>> twice(0)\n"
          "    0\n\nThat is all.\n")
GUIDE = "Guide\n=====\n\nAdd two numbers::\n\n    >>> from calc import add\n    >>> add(2, 3)\n    5\n"
FILES = {"calc.py": CALC, "README.md": README, "docs/guide.rst": GUIDE, "NOTES.md": "# Notes\n\nNo examples.\n",
         "pytest.ini": "[pytest]\naddopts = --doctest-glob='*.md' --doctest-glob='*.rst'\n",
         "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"}
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
BROKEN = CALC.replace("    return add(n, n)\n", "    return add(n, n) if n != 21 else 0\n") + MUL
READ, GUIDED = "README.md::README.md", "docs/guide.rst::guide.rst"


def _project(tmp_path_factory, kit_home):
    # was: "the project's own tests: 1 of 1 pass" (the test folder only)
    return sealed_project(tmp_path_factory, kit_home, "own-doctext", FILES, HIDDEN, 3)


def _stop(repo, kit_home, calc: str, **texts: str):
    (repo / "calc.py").write_text(calc)
    for rel, text in texts.items():
        (repo / rel.replace("__", "/").replace("_", ".")).write_text(text)
    res = run_hook(stop_payload(repo))
    return res, stop_lines(kit_home)[-1]["gates"]["own"]


def test_the_seal_keeps_the_text_files_examples(tmp_path_factory, kit_home):
    repo = _project(tmp_path_factory, kit_home)
    (pack,) = [json.loads(p.read_text()) for p in kit_home.rglob("own-suite.json")]
    assert sorted(pack["baseline"]["passing"]) == [READ, GUIDED, "tests/test_calc.py::test_add"], pack["baseline"]
    assert pack["files"]["README.md"]["text"] == README and pack["doctext"] == ["README.md", "docs/guide.rst"], pack
    assert "NOTES.md" not in pack["files"] and (repo / "NOTES.md").is_file()


def test_a_regression_only_a_readme_example_sees_blocks(tmp_path_factory, kit_home):
    """`twice(21)` broken: only the README's example sees it. Was: passed."""
    repo = _project(tmp_path_factory, kit_home)
    res, own = _stop(repo, kit_home, BROKEN)
    assert res.returncode == 2 and READ in res.stderr, res.stderr
    assert ">>> twice(21)\nExpected:\n    42\nGot:\n    0" in res.stderr, res.stderr
    assert [f["id"] for f in own["failing"]] == [READ] and own["weakened"] == [], own


def test_the_readme_runs_as_sealed_and_its_expected_output_changed_is_named(tmp_path_factory, kit_home):
    """The regression with the README's expected output changed to what the code returns: the sealed text still
    runs (it blocks), the change is named, and the block says the old contract changed. Was: passed."""
    repo = _project(tmp_path_factory, kit_home)
    res, own = _stop(repo, kit_home, BROKEN, README_md=README.replace("    42\n", "    0\n"))
    assert res.returncode == 2 and f"the old contract changed: the project's own test {READ}" in res.stderr, res.stderr
    assert f"{READ}: its expected output 42 was changed to 0, what the code returns now [expected-to-actual]" \
        in res.stderr, res.stderr
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [(READ, "expected-to-actual")], own


def test_a_text_files_examples_deleted_or_skipped_are_named(tmp_path_factory, kit_home):
    """The guide's examples deleted, one of the README's given `+SKIP` (the code unchanged: the sealed examples
    still pass): each named. Was: passed, nothing named."""
    repo = _project(tmp_path_factory, kit_home)
    res, own = _stop(repo, kit_home, CALC + MUL, README_md=README.replace(">>> twice(0)", ">>> twice(0)  # doctest: +SKIP"),
                     docs__guide_rst="Guide\n=====\n\nAdd two numbers with add.\n")
    assert res.returncode == 2, res.stderr
    found = sorted((w["test"], w["rule"]) for w in own["weakened"])
    assert found == [(READ, "skipped"), (GUIDED, "deleted")], found
    assert f"a test of the project was weakened: {GUIDED}: its examples were deleted [deleted]" in res.stderr, res.stderr


def test_honest_work_on_the_docs_passes(tmp_path_factory, kit_home):
    """The look-alikes: the README's prose reworded and an example added that the code passes, the code rewritten
    to the same behaviour, a new .md with examples of its own."""
    repo = _project(tmp_path_factory, kit_home)
    readme = README.replace("Double a number:", "Twice a number, as an int:").replace(
        "That is all.", "    >>> twice(-1)\n    -2\n\nThat is all.")
    res, own = _stop(repo, kit_home, CALC.replace("add(n, n)", "2 * n") + MUL, README_md=readme,
                     MUL_md="Multiply:\n\n    >>> from calc import mul\n    >>> mul(2, 3)\n    6\n")
    assert res.returncode == 0, res.stderr
    assert own["failing"] == [] and own["weakened"] == [], own


def test_an_example_the_agent_added_to_the_readme_runs_as_its_own(tmp_path_factory, kit_home):
    """An example added that the code fails (`twice(3)` said to give 7): the README as it is now runs as the agent's
    own test. Was: passed (nothing of the README ran)."""
    repo = _project(tmp_path_factory, kit_home)
    res, own = _stop(repo, kit_home, CALC + MUL, README_md=README.replace("That is all.", "    >>> twice(3)\n    7\n"))
    assert res.returncode == 2 and f"your own test {READ} (a test you added or changed) fails" in res.stderr, res.stderr
    assert own["failing"] == [] and own["weakened"] == [], own


# A text doctest inside the test folders (pytest's default `--doctest-glob`, `test*.txt`, no configuration): sealed
# and run from the sealed copy, but its changes were read as a data file's rows (by no test file: nothing named).
TWICE = (">>> from calc import twice, add\n\nDouble a number:\n\n>>> twice(21)\n42\n>>> twice(0)\n0\n\nAdd two:\n\n"
         ">>> add(2, 3)\n5\n")
IN_TESTS = {"calc.py": CALC, "tests/test_twice.txt": TWICE,
            "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"}
TXT = "tests/test_twice.txt::test_twice.txt"


def _in_tests(tmp_path_factory, kit_home, twice: str, calc: str = CALC + MUL):
    repo = sealed_project(tmp_path_factory, kit_home, "own-doctext-tests", IN_TESTS, HIDDEN, 2)
    (repo / "calc.py").write_text(calc)
    (repo / "tests/test_twice.txt").write_text(twice)
    res = run_hook(stop_payload(repo))
    return res, stop_lines(kit_home)[-1]["gates"]["own"]


def test_a_test_folders_text_doctest_changed_to_what_the_code_returns_is_named(tmp_path_factory, kit_home):
    """`twice(21)` broken and `tests/test_twice.txt` made to expect 0: the sealed copy blocks, the change is named and
    the block says the old contract changed. Was: a regression, nothing named."""
    res, own = _in_tests(tmp_path_factory, kit_home, TWICE.replace("42\n", "0\n"), BROKEN)
    assert res.returncode == 2 and f"the old contract changed: the project's own test {TXT}" in res.stderr, res.stderr
    assert f"{TXT}: its expected output 42 was changed to 0, what the code returns now [expected-to-actual]" \
        in res.stderr, res.stderr
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [(TXT, "expected-to-actual")], own


def test_a_test_folders_text_doctest_weakened_is_named(tmp_path_factory, kit_home):
    """One example deleted, one given `+SKIP`, one `+ELLIPSIS`, the code unchanged (the sealed examples pass): each
    named. Was: passed, nothing named."""
    twice = TWICE.replace(">>> twice(0)\n0\n", "").replace(">>> add(2, 3)", ">>> add(2, 3)  # doctest: +SKIP").replace(
        ">>> twice(21)", ">>> twice(21)  # doctest: +ELLIPSIS")
    res, own = _in_tests(tmp_path_factory, kit_home, twice)
    assert res.returncode == 2, res.stderr
    found = sorted((w["rule"], w["what"]) for w in own["weakened"] if w["test"] == TXT)
    assert found == [("assert-loosened", "+ELLIPSIS added (>>> twice(21))"),
                     ("assert-removed", "1 of its 4 examples deleted (>>> twice(0))"),
                     ("skipped", "+SKIP added to >>> add(2, 3)")], own["weakened"]


def _deleted_and_added(tmp_path_factory, kit_home) -> dict:
    """One stop for the run (`own_batch.shared_stop`, on the pooled seal) of two cases on files of their own: the
    sealed `tests/test_twice.txt` deleted, and a new `tests/test_more.txt` whose example the code fails."""
    def edit(repo):
        (repo / "calc.py").write_text(CALC + MUL)
        (repo / "tests/test_twice.txt").unlink()
        (repo / "tests/test_more.txt").write_text(">>> from calc import mul\n>>> mul(2, 3)\n7\n")

    return own_batch.shared_stop(tmp_path_factory, kit_home, "doctext-deleted-added",
                                 lambda home: sealed_project(tmp_path_factory, home, "own-doctext-tests", IN_TESTS, HIDDEN, 2),
                                 edit)


def test_a_test_folders_text_doctest_deleted_is_named(tmp_path_factory, kit_home):
    """(In one stop with the failing text doctest the agent added, below: `_deleted_and_added`.)"""
    res = _deleted_and_added(tmp_path_factory, kit_home)
    assert res["returncode"] == 2, res["stderr"]
    assert res["own"]["weakened"] == [{"test": TXT, "rule": "deleted", "what": "its file was deleted"}], res["own"]


def test_honest_work_on_a_test_folders_text_doctest_passes(tmp_path_factory, kit_home):
    """The look-alikes: the prose reworded, an example added that the code passes, the code rewritten to the same
    behaviour."""
    twice = TWICE.replace("Double a number:", "Twice a number, as an int:") + ">>> twice(-1)\n-2\n"
    res, own = _in_tests(tmp_path_factory, kit_home, twice, CALC.replace("add(n, n)", "2 * n") + MUL)
    assert res.returncode == 0, res.stderr
    assert own["failing"] == [] and own["weakened"] == [], own


def test_an_example_the_agent_added_to_a_test_folders_text_doctest_runs_as_its_own(tmp_path_factory, kit_home):
    """An example added that the code fails (`twice(3)` said to give 7): the file as it is now runs as the agent's own
    test. Was: passed (only the sealed copy ran)."""
    res, own = _in_tests(tmp_path_factory, kit_home, TWICE + ">>> twice(3)\n7\n")
    assert res.returncode == 2 and f"your own test {TXT} (a test you added or changed) fails" in res.stderr, res.stderr
    assert own["failing"] == [] and own["weakened"] == [], own


# A text doctest the agent adds inside the test folders (`tests/test_more.txt`, pytest's default `--doctest-glob`):
# its pytest collects it as the project's, so it is the agent's own test, as a new `tests/test_*.py` is. Was: never
# run (the agent's own tests were its `.py` files only), a failing one passed.
def test_a_text_doctest_the_agent_added_that_fails_blocks_as_its_own(tmp_path_factory, kit_home):
    """(In one stop with the sealed text doctest deleted, above: its finding is that file's alone.)"""
    res = _deleted_and_added(tmp_path_factory, kit_home)
    own, more = res["own"], "tests/test_more.txt::test_more.txt"
    assert res["returncode"] == 2 and f"your own test {more} (a test you added or changed) fails" in res["stderr"], \
        res["stderr"]
    assert ">>> mul(2, 3)\nExpected:\n    7\nGot:\n    6" in res["stderr"], res["stderr"]
    assert own["failing"] == [] and own_batch.of(own, "weakened", "tests/test_more.txt") == [] \
        and "tests/test_more.txt" in own["ran_now"], own


def test_a_text_doctest_the_agent_added_that_passes_passes(tmp_path_factory, kit_home):
    """The look-alikes, in one stop: a new text doctest the code passes runs and passes; a new text file pytest would
    not collect (not `test*.txt`, or in a `build/` folder pytest does not walk into) with a wrong example in it is not
    a test, and is not run (the stop passes, and runs the new doctest alone)."""
    repo = sealed_project(tmp_path_factory, kit_home, "own-doctext-tests", IN_TESTS, HIDDEN, 2)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests/test_more.txt").write_text(">>> from calc import mul\n>>> mul(2, 3)\n6\n")
    for rel in ("tests/notes.txt", "tests/build/test_out.txt"):  # (nor in a folder of pytest's `norecursedirs`)
        (repo / rel).parent.mkdir(exist_ok=True)
        (repo / rel).write_text(">>> from calc import mul\n>>> mul(2, 3)\n7\n")
    res = run_hook(stop_payload(repo))
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert res.returncode == 0, res.stderr
    assert own["mine"] == [] and own["ran_now"] == ["tests/test_more.txt"] and own["added"] == 1, own


def test_a_stop_reads_the_sealed_text_doctests_once(tmp_path_factory, kit_home, monkeypatch):
    """Which sealed files are text doctests (`own_changed.doctext`, a walk of the sealed ids and texts) is worked out
    once a stop and handed down. The real hook in this process (as `test_context` counts the key), the real function
    wrapped: a stop with a sealed text doctest changed and a new one added (each reader of it then runs). Was: 4."""
    from donegate import gate
    from donegate.gate import own_changed

    repo = sealed_project(tmp_path_factory, kit_home, "own-doctext-tests", IN_TESTS, HIDDEN, 2)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "tests/test_twice.txt").write_text(TWICE + ">>> twice(-1)\n-2\n")
    (repo / "tests/test_more.txt").write_text(">>> from calc import mul\n>>> mul(2, 3)\n6\n")
    calls, real = [], own_changed.doctext

    def counted(pack):
        calls.append(1)
        return real(pack)

    monkeypatch.setattr(own_changed, "doctext", counted)
    code, _, _ = gate.run_hook(json.dumps(stop_payload(repo)), root=kit_home, watchdog=False)
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert code == 0 and sorted(own["ran_now"]) == ["tests/test_more.txt", "tests/test_twice.txt"], own
    assert len(calls) == 1, len(calls)
