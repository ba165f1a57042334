"""`seal` accepts what a person naturally writes (issue 46 item 5): a hidden test file whose top-level import of a
name the work will add (`from calc import mul`) fails at collection is sealed, its tests named from the file's
syntax and all failing at the seal; a stop shows the import error as each test's failure, and passes once the work
is done. What the kit cannot seal that way is refused with a fix, as is every refusal of `seal`."""

from __future__ import annotations

import json

from donegate.seal import store
from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n"
MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
HIDDEN_MUL = '''from calc import add, mul


def test_mul_small():
    assert mul(2, 3) == 6


class TestMul:
    def test_mul_zero(self):
        assert mul(0, 5) == 0

    class TestNested:
        def test_mul_negative(self):
            assert mul(-2, 3) == -6


def helper():
    return add(1, 1)
'''
HIDDEN_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
MUL_IDS = ["test_mul.py::test_mul_small", "test_mul.py::TestMul::test_mul_zero",
           "test_mul.py::TestMul::TestNested::test_mul_negative"]


def _hidden(tmp_path, **bodies):
    folder = tmp_path / "hidden"
    folder.mkdir(exist_ok=True)
    for name, body in bodies.items():
        (folder / f"{name}.py").write_text(body)
    return [folder / f"{name}.py" for name in bodies]


def test_a_top_level_import_of_the_new_name_is_sealed_and_its_tests_fail_until_the_work_is_done(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    res = seal(repo, *_hidden(tmp_path, test_add=HIDDEN_ADD, test_mul=HIDDEN_MUL))
    assert res.returncode == 0, res.stderr
    assert "sealed 4 tests" in res.stdout and "3 new requirements failing, 1 already passing" in res.stdout
    m = store.load(repo).manifest
    assert m["tests"] == ["test_add.py::test_add", *MUL_IDS]  # pytest's order: the files, then each file's syntax
    assert m["baseline"]["failing"] == sorted(MUL_IDS) and m["baseline"]["passing"] == ["test_add.py::test_add"]

    res = run_hook(stop_payload(repo))  # the work not done: each test of the file fails on the import
    assert res.returncode == 2, res.stderr
    assert "failed to collect" not in res.stderr
    assert "test_mul_small" in res.stderr and "cannot import name 'mul'" in res.stderr
    gate = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert gate["failed"] == 3 and gate["passed"] == 1 and not gate["problem"]
    assert {f["id"] for f in gate["failing"]} == set(MUL_IDS)

    (repo / "calc.py").write_text(MUL)  # the work done: the file collects with the ids it was sealed with
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["passed"] == 4


def test_a_file_whose_other_import_breaks_at_a_stop_fails_its_tests_and_the_rest_still_run(tmp_path, kit_home):
    """The honest look-alike of a stop: the agent's change breaks an import every test file has (here `add`):
    each sealed test of that file fails with the import error, the other files' tests still run."""
    repo = make_repo(tmp_path / "repo", {"calc.py": MUL, "other.py": "X = 1\n"})
    res = seal(repo, *_hidden(tmp_path, test_mul=HIDDEN_MUL, test_other="from other import X\n\n\ndef test_x():\n"
                                                                         "    assert X == 1\n"))
    assert res.returncode == 0, res.stderr
    (repo / "calc.py").write_text("def mul(a, b):\n    return a * b\n")  # add is gone
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "cannot import name 'add'" in res.stderr
    gate = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert gate["failed"] == 3 and gate["passed"] == 1, json.dumps(gate)


def test_what_cannot_be_named_from_its_syntax_is_refused_with_a_fix(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    param = ("import pytest\nfrom calc import mul\n\n\n@pytest.mark.parametrize('a', [1, 2])\ndef test_mul(a):\n"
             "    assert mul(a, 1) == a\n")
    res = seal(repo, *_hidden(tmp_path, test_param=param))
    assert res.returncode == 1 and "test_param.py" in res.stderr and "cannot import name 'mul'" in res.stderr
    assert "parametrize" in res.stderr and "\n  fix: " in res.stderr and "Traceback" not in res.stderr

    boom = "raise RuntimeError('the tests are not ready')\n\n\ndef test_x():\n    pass\n"
    res = seal(repo, *_hidden(tmp_path, test_boom=boom))
    assert res.returncode == 1 and "do not collect" in res.stderr and "not ready" in res.stderr
    assert "\n  fix: " in res.stderr


def test_every_refusal_of_seal_ends_with_a_fix(tmp_path, kit_home):
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    res = seal(repo, tmp_path / "test_nowhere.py")
    assert res.returncode == 1 and "no such test file" in res.stderr and "\n  fix: " in res.stderr
    res = seal(tmp_path / "nowhere", *_hidden(tmp_path, test_ok=HIDDEN_ADD))
    assert res.returncode == 1 and "no such folder" in res.stderr and "\n  fix: " in res.stderr
    res = seal(repo, *_hidden(tmp_path, conftest="import pytest\n"))
    assert res.returncode == 1 and "conftest.py is not sealed" in res.stderr and "\n  fix: " in res.stderr
    # a baseline that fails to finish: a test that exits the process
    res = seal(repo, *_hidden(tmp_path, test_exit="import os\n\n\ndef test_x():\n    os._exit(3)\n"))
    assert res.returncode == 1 and "baseline run" in res.stderr and "\n  fix: " in res.stderr


TRICKY = '''import pytest


def test_a():
    pass


async def test_async():
    pass


def test_b():
    pass


def test_a():  # redefined: its first place, once
    pass


test_b = None  # no longer a test


class TestC:
    def test_m(self):
        pass

    @staticmethod
    def test_s():
        pass

    @pytest.mark.slow
    def test_marked(self):
        pass

    class TestInner:
        def test_n(self):
            pass

    class Helper:
        def test_hidden(self):
            pass


class TestWithInit:
    def __init__(self):
        pass

    def test_never(self):
        pass


class Other:
    def test_not_collected(self):
        pass


def helper_test():
    pass
'''


def test_the_ids_named_from_the_syntax_are_pytests(tmp_path):
    """The ids the seal names from a file's syntax are the ids pytest collects from it once it imports."""
    import subprocess
    import sys

    from donegate.seal import unwritten

    path = tmp_path / "test_tricky.py"
    path.write_text(TRICKY)
    res = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-W", "ignore", path.name], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    collected = [line for line in res.stdout.splitlines() if "::" in line]
    assert collected and unwritten.ids(path, path.name) == collected
