"""A project in a subfolder of its repository (`pkg/`): what changed outside the project is not the project's.

`own_changed.sealed_changed` reads a changed `conftest.py` as changing every sealed test file below its folder (a
helper they import from it). Given the repository's paths and the project's folder as `prefix`, a `conftest.py` at
the repository's root, above the project, matched every sealed file of the project (its folder "" is a prefix of
every path): the stop would read and parse the whole sealed suite as changed by the agent (time only: their texts
are the sealed ones, nothing named). pytest never loads a conftest.py above the project's rootdir (`confcutdir`),
and the sealed run's rootdir is the sealed copy.

Through the hook the stop's paths are the project's already (the store's look, `git diff --relative`) and the
prefix "" (the runs' first sys.path folder is the project): a conftest.py above it never reaches the function, as
the hook-level test shows (the real hook in this process, the real function wrapped to see what it returned); the
function itself is pinned on the repository's paths beside it."""

from __future__ import annotations

import json

from donegate import gate
from donegate.gate import own_changed
from tests.support.repos import make_repo, seal, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
FILES = {"pkg/calc.py": CALC, "other/x.py": "X = 1\n",
         "pkg/tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
         "pkg/tests/test_more.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"}


def _stop(repo, kit_home, monkeypatch) -> tuple[int, list[str]]:
    seen: list[list[str]] = []
    real = own_changed.sealed_changed

    def wrapped(changed, pack, prefix):
        seen.append(real(changed, pack, prefix))
        return seen[-1]

    monkeypatch.setattr(own_changed, "sealed_changed", wrapped)
    code, _, _ = gate.run_hook(json.dumps(stop_payload(repo / "pkg")), root=kit_home, watchdog=False)
    monkeypatch.setattr(own_changed, "sealed_changed", real)
    assert len(seen) == 1, seen
    return code, seen[0]


def test_a_conftest_above_the_project_changes_none_of_its_test_files(tmp_path, kit_home, monkeypatch):
    repo = make_repo(tmp_path / "mono", FILES)
    hidden = tmp_path / "hidden" / "test_mul.py"
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN)
    res = seal(repo / "pkg", hidden, extra_env={"DONEGATE_HOME": str(kit_home)})
    assert res.returncode == 0 and "the project's own tests: 2 of 2 pass" in res.stdout, res.stdout + res.stderr
    (repo / "pkg" / "calc.py").write_text(CALC + MUL)
    (repo / "conftest.py").write_text("def helper():\n    return 1\n")
    code, changed = _stop(repo, kit_home, monkeypatch)
    assert code == 0 and changed == [], changed  # was: both sealed test files
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert own["failing"] == [] and own["weakened"] == [], own
    # the look-alike: the project's own conftest.py above its tests marks them (their helpers may come from it)
    (repo / "pkg" / "tests" / "conftest.py").write_text("def helper():\n    return 1\n")
    code, changed = _stop(repo, kit_home, monkeypatch)
    assert code == 0 and changed == ["tests/test_calc.py", "tests/test_more.py"], changed


def test_a_conftest_above_the_project_in_the_repositorys_paths_marks_none_of_its_files():
    """The function given the repository's paths (`prefix` "pkg"). Was: both files for the root's conftest.py."""
    pack = {"shape": {"tests/test_calc.py": {}, "tests/test_more.py": {}, "tests/sub/test_deep.py": {}}}
    assert own_changed.sealed_changed(["conftest.py", "pkg/calc.py"], pack, "pkg") == []
    assert own_changed.sealed_changed(["other/conftest.py"], pack, "pkg") == []
    # the look-alikes: the project's own conftest.py files, at its top and below; a sealed file changed itself
    assert own_changed.sealed_changed(["pkg/conftest.py"], pack, "pkg") == sorted(pack["shape"])
    assert own_changed.sealed_changed(["pkg/tests/sub/conftest.py"], pack, "pkg") == ["tests/sub/test_deep.py"]
    assert own_changed.sealed_changed(["pkg/tests/test_more.py"], pack, "pkg") == ["tests/test_more.py"]
    assert own_changed.sealed_changed(["conftest.py"], pack, "") == sorted(pack["shape"])  # the project's own top
