"""An expected value changed to what the code returns now (`expected-to-actual`, `donegate.gate.own_expected`) where
the test holds it outside its own body, and its look-alike, a new value the request asked for: through the real hook,
one pooled seal (the calc project with a conftest.py fixture, and a hidden test that changes `label`'s contract)."""

from __future__ import annotations

import pytest

from tests.support import own_batch
from tests.support.repos import run_hook, sealed_project, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n\n\ndef label(n):\n    return 'one'\n"
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef want():\n    return 5\n"
OWN = ("from calc import add, label\n\n\ndef test_add(want):\n    assert add(2, 3) == want\n\n\n"
       "def test_label():\n    assert label(1) == 'one'\n")
# The request: `mul`, and `label` in capitals.
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n\n\ndef test_label():\n    assert calc.label(1) == 'ONE'\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
# async-lru's tests: a helper the test calls with the expected counts as keywords, comparing named tuples.
LRU = "from collections import namedtuple\n\nInfo = namedtuple('Info', 'hits misses')\n\n\ndef info():\n    return Info(99, 1)\n"
OWN_LRU = ("from lru import Info, info\n\n\ndef check_lru(got, *, hits, misses):\n    assert got == Info(hits, misses)\n\n\n"
           "def test_info():\n    check_lru(info(), hits=99, misses=1)\n")


def _project(tmp_path_factory, kit_home):
    files = {"calc.py": CALC, "tests/conftest.py": CONFTEST, "tests/test_calc.py": OWN, "lru.py": LRU,
             "tests/test_lru.py": OWN_LRU}
    return sealed_project(tmp_path_factory, kit_home, "expected", files, HIDDEN, 3)


BROKEN_ADD = CALC.replace("a + b", "a - b").replace("'one'", "'ONE'") + MUL
# Two folds of independent cases, each one stop for the run (`own_batch.shared_stop`, on the pooled seal): each case
# changes files of its own (test_calc.py, conftest.py and calc.py's `add`; test_lru.py and lru.py) and reads its own
# tests' findings. The contract change (`test_label` in capitals, NAMED's) reads its own entry's appeal (the block's
# standing last line names APPEAL on any block).
NAMED = {"calc.py": BROKEN_ADD, "tests/conftest.py": CONFTEST.replace("return 5", "return -1"),
         "tests/test_calc.py": OWN.replace("== 'one'", "== 'ONE'"), "lru.py": LRU.replace("Info(99, 1)", "Info(0, 1)"),
         "tests/test_lru.py": OWN_LRU.replace("hits=99", "hits=0")}
LOOSENED = {"calc.py": CALC.replace("'one'", "'ONE'") + MUL,
            "tests/test_calc.py": OWN.replace("label(1) == 'one'", "label(1).lower() == 'one'.lower()"),
            "lru.py": LRU.replace("Info(99, 1)", "Info(0, 1)"), "tests/test_lru.py": OWN_LRU.replace("hits=99", "hits=7")}


def _fold(tmp_path_factory, kit_home, name: str, files: dict[str, str]) -> dict:
    def edit(repo):
        for path, text in files.items():
            (repo / path).write_text(text)

    return own_batch.shared_stop(tmp_path_factory, kit_home, f"expected-{name}",
                                 lambda home: _project(tmp_path_factory, home), edit)


def test_a_fixtures_expected_value_changed_to_what_the_code_returns_is_named(tmp_path_factory, kit_home):
    """`add` broken to return -1 and the conftest.py fixture `want` the test compares with made to return -1. Was:
    blocked as a regression, the weakening unnamed (only a literal of the test's own file was compared). (Folded
    with the helper's keyword below: `NAMED`.)"""
    res = _fold(tmp_path_factory, kit_home, "named", NAMED)
    assert res["returncode"] == 2 and "tests/test_calc.py::test_add" in res["stderr"], res["stderr"]
    assert "tests/test_calc.py::test_add: its expected value 5 was changed to -1, what the code returns now " \
           "[expected-to-actual]" in res["stderr"], res["stderr"]
    weakened = own_batch.of(res["own"], "weakened", "tests/test_calc.py")
    assert [(w["test"], w["rule"]) for w in weakened] == [("tests/test_calc.py::test_add", "expected-to-actual")], weakened


def test_a_new_value_the_request_asked_for_is_a_contract_change_with_the_appeal_offered(tmp_path_factory, kit_home):
    """`label` made to return capitals as the request asks (its hidden test compares `label(1)` with 'ONE') and the
    project's test of it changed to 'ONE': the old contract changed, the appeal offered, no weakening named. Was:
    named "its expected value 'one' was changed to 'ONE' [expected-to-actual]", as if the agent had faked it. (A case
    of the fold `NAMED`, whose calc.py and test_calc.py make that change: it reads test_label's own lines.)"""
    res = _fold(tmp_path_factory, kit_home, "named", NAMED)
    label = "tests/test_calc.py::test_label"
    entry = [e for e in res["stderr"].split("\n- ") if e.startswith(f"the old contract changed: the project's own test {label}")]
    assert res["returncode"] == 2 and entry and "say so with an appeal" in entry[0], res["stderr"]
    assert not [e for e in res["stderr"].split("\n- ") if label in e and "weakened" in e], res["stderr"]
    assert "test_request" not in res["stderr"], res["stderr"]  # (nor the hidden test named)
    assert own_batch.of(res["own"], "weakened", label) == [], res["own"]
    assert [f["contract"] for f in own_batch.of(res["own"], "failing", label)] == [True], res["own"]


def test_both_sides_of_a_sealed_equality_normalised_is_named(tmp_path_factory, kit_home):
    """`test_label`'s `label(1) == 'one'` made `label(1).lower() == 'one'.lower()` (what a real project's agent did to
    humanize's `test_naturalsize`: `.replace(' ', '')` on both sides). Was: blocked as "the old contract changed" only,
    nothing named. (Folded with the helper keyword's look-alike: `LOOSENED`.)"""
    res = _fold(tmp_path_factory, kit_home, "loosened", LOOSENED)
    assert res["returncode"] == 2 and "a test of the project was weakened: tests/test_calc.py::test_label: both sides " \
        "of `label(1) == 'one'` now pass through .lower() [assert-loosened]" in res["stderr"], res["stderr"]
    weakened = own_batch.of(res["own"], "weakened", "tests/test_calc.py")
    assert [(w["test"], w["rule"]) for w in weakened] == [("tests/test_calc.py::test_label", "assert-loosened")], weakened


def test_a_helpers_keyword_changed_to_what_the_code_returns_is_named(tmp_path_factory, kit_home):
    """`info()` broken to give 0 hits and the test's `check_lru(info(), hits=99, ...)` made `hits=0` (a real agent on
    async-lru): pytest shows named tuples (`Info(hits=0, misses=1) == Info(hits=99, misses=1)`), no literal on
    either side. Was: "the old contract changed" only, the weakening unnamed. Its look-alike: `hits=7`, a value the
    product does not give, is no weakening named (the stop blocks on the changed test all the same). Each a case of
    a fold above (`LOOSENED`, `NAMED`): test_lru.py and lru.py are theirs alone."""
    res = _fold(tmp_path_factory, kit_home, "loosened", LOOSENED)
    assert res["returncode"] == 2 and "tests/test_lru.py::test_info" in res["stderr"], res["stderr"]
    assert own_batch.of(res["own"], "weakened", "tests/test_lru.py") == [], res["stderr"]
    res = _fold(tmp_path_factory, kit_home, "named", NAMED)
    assert res["returncode"] == 2 and "tests/test_lru.py::test_info: its expected value 99 was changed to 0, what the " \
        "code returns now [expected-to-actual]" in res["stderr"], res["stderr"]
    weakened = own_batch.of(res["own"], "weakened", "tests/test_lru.py")
    assert [(w["test"], w["rule"]) for w in weakened] == [("tests/test_lru.py::test_info", "expected-to-actual")], weakened


# The expected values held in a helper module of the test folders (`tests/expected.py`, not a test file), imported
# as pytest's `prepend` import mode lets a test import it: its folder first on sys.path (`from expected import SUM`),
# or as a module of the `tests` package (`from tests.helpers import SUM`). The agent breaks `add` and changes the
# constant to what it returns now. A second test (`test_more`, its own constant `SIX` in the same module) carries the
# look-alike in the same stop: its constant changed to a value the code does not give, or left as it was.
HELPED = "from calc import add\n\nfrom {mod} import SUM\n\n\ndef test_add():\n    assert add(2, 3) == SUM\n"
MORE = "from calc import add\n\nfrom {mod} import SIX\n\n\ndef test_more():\n    assert add(2, 4) == SIX\n"
ADD, MORE_ID = "tests/test_calc.py::test_add", "tests/test_more.py::test_more"


def _helped(tmp_path_factory, kit_home, mod: str):
    helper = "tests/expected.py" if mod == "expected" else "tests/helpers.py"
    files = {"calc.py": CALC, helper: "SUM = 5\nSIX = 6\n", "tests/test_calc.py": HELPED.format(mod=mod),
             "tests/test_more.py": MORE.format(mod=mod)}
    if mod != "expected":
        files["tests/__init__.py"] = ""
    return sealed_project(tmp_path_factory, kit_home, f"expected-helper-{mod}", files, HIDDEN, 2), helper


# The package layout (`tests/__init__.py`, `tests/helpers.py`) imported both ways in one project: by the package's
# name (`tests/test_calc.py`, `tests/test_more.py`) and relatively (`tests/test_calc_rel.py`, `tests/test_more_rel.py`).
# One helper feeds both pairs, so the two cases share their seal and stops; each reads its own files' findings.
PAIRED = {"tests.helpers": "", ".helpers": "_rel"}
BROKEN_CALC, RIGHT_CALC = CALC.replace("a + b", "a - b").replace("'one'", "'ONE'") + MUL, CALC.replace("'one'", "'ONE'") + MUL


def _paired_project(tmp_path_factory, kit_home):
    files = {"calc.py": CALC, "tests/__init__.py": "", "tests/helpers.py": "SUM = 5\nSIX = 6\n"}
    for mod, sfx in PAIRED.items():
        files.update({f"tests/test_calc{sfx}.py": HELPED.format(mod=mod), f"tests/test_more{sfx}.py": MORE.format(mod=mod)})
    return sealed_project(tmp_path_factory, kit_home, "expected-helper-paired", files, HIDDEN, 4)


def _paired(tmp_path_factory, kit_home, calc: str, helper: str) -> dict:
    """The paired project's stop with `calc` and `helper` (tests/helpers.py), once in the run (`own_batch.shared_stop`)."""
    def edit(repo):
        (repo / "calc.py").write_text(calc)
        (repo / "tests" / "helpers.py").write_text(helper)

    return own_batch.shared_stop(tmp_path_factory, kit_home, f"expected-paired-{calc == BROKEN_CALC}-{helper.split()[2]}",
                                 lambda home: _paired_project(tmp_path_factory, home), edit)


def _blocked_as_regression_and_named(stderr: str, failing: list[str], weakened: list, sfx: str = "") -> None:
    """The stop of `add` broken, `SUM` made -1 (named) and `SIX` 7 (a value the code does not give: not named), read
    on the pair of files `test_calc{sfx}.py` and `test_more{sfx}.py` (their failing ids, their weakenings)."""
    add, more = (f"tests/test_{name}{sfx}.py::test_{test}" for name, test in (("calc", "add"), ("more", "more")))
    assert f"the project's own test {add} (tests/test_calc{sfx}.py:6)" in stderr, stderr
    assert "assert -1 == 5" in stderr, stderr
    assert f"{add}: its expected value 5 was changed to -1, what the code returns now [expected-to-actual]" in stderr, \
        stderr
    assert failing == [add, more], failing
    assert weakened == [(add, "expected-to-actual")], weakened
    assert f"the project's own test {more} (tests/test_more{sfx}.py:6)" in stderr and "assert -2 == 6" in stderr
    assert f"weakened: {more}" not in stderr, stderr


@pytest.mark.parametrize("mod", ["expected", "tests.helpers", ".helpers"], ids=["folder", "package", "relative"])
def test_a_helper_modules_expected_value_changed_to_what_the_code_returns_blocks(tmp_path_factory, kit_home, mod):
    """The helper is sealed with the suite (every file under the test folders) and the sealed run imports it from the
    sealed copy, in both layouts (`SUM` still 5): the regression blocks as the project's own test as it was when the
    work began (that much passed on main: the agent's constant is never what the sealed test reads), and the change
    is named `expected-to-actual` (was: unnamed, the rule read the test's file, its conftest.py files and the helpers
    it defines, never a module it imports). Its look-alikes: the constant changed to a value the code does not give
    (`SIX`, in the same stop: a regression, nothing named); the constants written `SUM = 2 + 3` with the code right
    (passes). (package and relative: one project, `PAIRED`.)"""
    if mod in PAIRED:
        sfx = PAIRED[mod]
        res = _paired(tmp_path_factory, kit_home, BROKEN_CALC, "SUM = -1\nSIX = 7\n")
        assert res["returncode"] == 2, res["stderr"]
        mine = [f"tests/test_calc{sfx}.py", f"tests/test_more{sfx}.py"]
        _blocked_as_regression_and_named(
            res["stderr"], [f["id"] for path in mine for f in own_batch.of(res["own"], "failing", path)],
            [(w["test"], w["rule"]) for path in mine for w in own_batch.of(res["own"], "weakened", path)], sfx)
        res = _paired(tmp_path_factory, kit_home, RIGHT_CALC, "SUM = 2 + 3\nSIX = 2 * 3\n")
        assert res["returncode"] == 0, res["stderr"]
        if mod == "tests.helpers":
            _renamed(_paired_project(tmp_path_factory, kit_home))
        return
    repo, helper = _helped(tmp_path_factory, kit_home, mod)
    (repo / "calc.py").write_text(BROKEN_CALC)
    (repo / helper).write_text("SUM = -1\nSIX = 7\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    _blocked_as_regression_and_named(res.stderr, [f["id"] for f in own["failing"]],
                                     [(w["test"], w["rule"]) for w in own["weakened"]])
    (repo / "calc.py").write_text(RIGHT_CALC)
    (repo / helper).write_text("SUM = 2 + 3\nSIX = 2 * 3\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def _renamed(repo) -> None:
    """The helper module renamed, its importers updated (review A, trial), on the paired project with the work done:
    the run without it reads the sealed tests, which import the old name; the agent changed those tests, so it is the
    old contract changed (the appeal offered), not a regression; the same rename with the code broken is the
    regression still (the sealed run)."""
    (repo / "calc.py").write_text(RIGHT_CALC)
    (repo / "tests" / "helpers.py").rename(repo / "tests" / "checks.py")
    for mod, sfx in PAIRED.items():
        renamed = mod.replace("helpers", "checks")
        (repo / "tests" / f"test_calc{sfx}.py").write_text(HELPED.format(mod=renamed))
        (repo / "tests" / f"test_more{sfx}.py").write_text(MORE.format(mod=renamed))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "the old contract changed: the project's own test tests/test_calc.py::test_add" \
        in res.stderr and "with the project's tests/helpers.py as it is now: no longer collects" in res.stderr, res.stderr
    assert "a regression of what the project already did" not in res.stderr, res.stderr
    (repo / "calc.py").write_text(BROKEN_CALC)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "a regression of what the project already did): assert -1 == 5" in res.stderr, \
        res.stderr


CONSTS = {"consts.py": "PI = 3.14159\n", "tests/test_consts.py": "from consts import PI\n\n\ndef test_pi():\n    assert PI == 3.14159\n"}


def _outside_files(layout: str) -> dict[str, str]:
    files = {"calc.py": CALC, "support/__init__.py": "", "support/expected.py": "SUM = 5\nSIX = 6\n",
             "tests/test_calc.py": HELPED.format(mod="support.expected"), "tests/test_more.py": MORE.format(mod="support.expected")}
    if layout == "package":
        return {**files, "tests/__init__.py": ""}
    # (`pythonpath = .`: the constants module's case too, `CONSTS`, on modules of its own: `_outside_stop`)
    return {**files, "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n", **CONSTS}


def _outside_stop(tmp_path_factory, kit_home, broken: bool) -> dict:
    """The `pythonpath = .` project's stop, once in the run (`own_batch.shared_stop`): `add` broken, `SUM` made what
    it returns and `PI` made 3 (`broken`), or the code right and both modules edited keeping their values."""
    def edit(repo):
        (repo / "calc.py").write_text(BROKEN_CALC if broken else RIGHT_CALC)
        (repo / "support" / "expected.py").write_text(
            "SUM = -1\nSIX = 6\n" if broken else '"""What the tests expect."""\n\nSUM = 2 + 3\nSIX = 6\n')
        (repo / "consts.py").write_text("PI = 3\n" if broken else '"""The constants."""\n\nPI: float = 3.14159\n')

    return own_batch.shared_stop(tmp_path_factory, kit_home, f"expected-outside-{broken}", lambda home: sealed_project(
        tmp_path_factory, home, "expected-helper-outside-pythonpath", _outside_files("pythonpath"), HIDDEN, 3), edit)


@pytest.mark.parametrize("layout", ["pythonpath", "package"])
def test_a_helper_module_outside_the_test_folders_changed_to_what_the_code_returns_blocks(tmp_path_factory, kit_home,
                                                                                          layout):
    """`support/expected.py` at the project's top, on sys.path by the configuration's `pythonpath = .`, its `SUM`
    changed to what the broken `add` returns. Was: the sealed test read the agent's constant and passed (rc 0). Now
    the module (data only, imported by the tests and by no module of the product: `seal.helper_data`) is sealed with
    the suite and the sealed run reads it first: the regression blocks. Its look-alikes: the helper edited keeping its
    values (`SUM = 2 + 3`, a docstring) with the code right passes; `calc.py`, the code under test the tests import
    too, is never pinned: changed as the request asks it passes, broken where the helper's value is untouched (`SIX`,
    `test_more`, in the same stop) it blocks. Both ways the test imports it: by `pythonpath = .`, and as pytest's
    `prepend` puts the project's folder first for a test folder that is a package (`tests/__init__.py`; was rc 0
    too). (`pythonpath = .`: its stops are the constants module's case's too.)"""
    if layout == "pythonpath":
        res = _outside_stop(tmp_path_factory, kit_home, True)
        stderr, code, own = res["stderr"], res["returncode"], res["own"]
    else:
        repo = sealed_project(tmp_path_factory, kit_home, f"expected-helper-outside-{layout}", _outside_files(layout),
                              HIDDEN, 2)
        (repo / "calc.py").write_text(BROKEN_CALC)
        (repo / "support" / "expected.py").write_text("SUM = -1\nSIX = 6\n")
        one = run_hook(stop_payload(repo))
        stderr, code, own = one.stderr, one.returncode, stop_lines(kit_home)[-1]["gates"]["own"]
    assert code == 2 and "tests/test_calc.py::test_add" in stderr and "assert -1 == 5" in stderr, stderr
    assert "tests/test_calc.py::test_add: its expected value 5 was changed to -1, what the code returns now " \
        "[expected-to-actual]" in stderr, stderr
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [(ADD, "expected-to-actual")], own
    assert MORE_ID in [f["id"] for f in own["failing"]] and "assert -2 == 6" in stderr, stderr
    if layout == "pythonpath":
        assert _outside_stop(tmp_path_factory, kit_home, False)["returncode"] == 0
        return
    (repo / "calc.py").write_text(RIGHT_CALC)
    (repo / "support" / "expected.py").write_text('"""What the tests expect."""\n\nSUM = 2 + 3\nSIX = 6\n')
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr


def test_a_constants_module_only_the_tests_read_changed_blocks_as_the_old_contract(tmp_path_factory, kit_home):
    """The other side of sealing the tests' data modules: `consts.py` (data only, imported by the tests alone) may be
    the product's own (its public constants). `PI` broken to 3: the sealed copy the sealed test reads still says
    3.14159, so it passed (with the module sealed and nothing more, rc 0); now a sealed test importing a data module
    whose values changed is the old contract changed, the appeal offered (it blocked before the module was sealed,
    the agent's copy failing the test). Its look-alike: the module edited keeping its values passes. (Both in the
    stops of the `pythonpath = .` project above: `CONSTS`, `_outside_stop`.)"""
    res = _outside_stop(tmp_path_factory, kit_home, True)
    pi = "tests/test_consts.py::test_pi"
    entry = [e for e in res["stderr"].split("\n- ") if e.startswith(f"the old contract changed: the project's own test {pi}")]
    assert res["returncode"] == 2 and entry and "say so with an appeal" in entry[0], res["stderr"]
    assert "consts.py: PI" in entry[0], res["stderr"]
    assert [f["contract"] for f in own_batch.of(res["own"], "failing", pi)] == [True], res["own"]
    assert _outside_stop(tmp_path_factory, kit_home, False)["returncode"] == 0


TOOL = "def double(x):\n    return x * 2\n"
CHECK = "def same(got, want):\n    assert got == want\n"
TEST_TOOL = "from scripts.check import same\nfrom scripts.tool import double\n\n\ndef test_double():\n    same(double(2), 4)\n"


def test_a_sealed_module_beside_its_tests_regressed_blocks(tmp_path_factory, kit_home):
    """Shadowing (note7, review A): `scripts/tool.py` beside `scripts/test_tool.py` under the collected path `scripts`
    is sealed as part of the suite, as its helper `scripts/check.py` is, and the sealed run reads their sealed copies.
    Was (strict xfail, ab5b852): `double` broken passed (rc 0): `reach.select` skipped the suite's own files and the
    laid-out folder comes first on sys.path. Now each non-test file of the suite the agent changed also runs the
    sealed tests reaching it with the project's copy of that file alone (`gate.own_mixed`), either way failing
    blocks: `double` broken with the helper weakened to check nothing (the run of tool.py alone reads the sealed
    helper, so it is the run of `double` broken beside the helper kept: one stop proves both); broken with the
    test's expected value moved to what it returns. The look-alike first: a function added to the
    tool and a helper added for the agent's new test pass."""
    files = {"calc.py": CALC, "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
             "scripts/tool.py": TOOL, "scripts/check.py": CHECK, "scripts/test_tool.py": TEST_TOOL,
             "pytest.ini": "[pytest]\ntestpaths = tests scripts\npythonpath = .\n"}
    repo = sealed_project(tmp_path_factory, kit_home, "expected-shadowing", files, HIDDEN, 2)
    (repo / "calc.py").write_text(CALC.replace("'one'", "'ONE'") + MUL)
    triple = "\n\ndef triple(x):\n    return x * 3\n"
    (repo / "scripts" / "tool.py").write_text(TOOL + triple)
    (repo / "scripts" / "check.py").write_text(CHECK + "\n\ndef near(got, want):\n    assert abs(got - want) < 1e-9\n")
    (repo / "scripts" / "test_triple.py").write_text("from scripts.check import near\nfrom scripts.tool import triple\n\n\n"
                                                     "def test_triple():\n    near(triple(2), 6)\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    # `double` broken with the helper weakened to check nothing: the run of tool.py alone reads the sealed helper
    # (as it would beside the helper kept: one stop for both, the run the same)
    (repo / "scripts" / "tool.py").write_text(TOOL.replace("x * 2", "x * 3") + triple)
    (repo / "scripts" / "check.py").write_text("def same(got, want):\n    pass\n\n\ndef near(got, want):\n    pass\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "the project's own test scripts/test_tool.py::test_double" in res.stderr, res.stderr
    assert "your own test" not in res.stderr, res.stderr
    assert "with the project's scripts/tool.py as it is now: AssertionError" in res.stderr, res.stderr
    (repo / "scripts" / "check.py").write_text(CHECK + "\n\ndef near(got, want):\n    assert abs(got - want) < 1e-9\n")
    (repo / "scripts" / "test_tool.py").write_text(TEST_TOOL.replace(", 4)", ", 6)"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "scripts/test_tool.py::test_double" in res.stderr, res.stderr
    # a regression spread over two changed files, each harmless alone with the other sealed (review A, trial):
    # one more run holds every changed file as the project holds it now
    (repo / "scripts" / "test_tool.py").write_text(TEST_TOOL)
    (repo / "scripts" / "tool.py").write_text("from scripts import check\n\n\ndef double(x):\n"
                                              "    return x * 2 + getattr(check, 'DELTA', 0)\n" + triple)
    (repo / "scripts" / "check.py").write_text(CHECK + "\n\ndef near(got, want):\n    assert abs(got - want) < 1e-9\n"
                                               "\n\nDELTA = 1\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "the project's own test scripts/test_tool.py::test_double" in res.stderr, res.stderr
    assert "with the project's scripts/check.py, scripts/tool.py as they are now: AssertionError" in res.stderr, res.stderr
