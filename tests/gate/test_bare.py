"""The second harness's parts, in-process: what it plans from a test file's syntax alone, the order of its
parameter sets against pytest's own collection, and the equality probe on honest and bent values.
(The whole second opinion, through the Stop hook, is tests/gate/test_second_opinion.py.)"""

from __future__ import annotations

import os
import ast
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

from donegate.hidden import bare, bare_fork, bare_plan, bare_served, bare_shim, probe, second

HERE = str(Path(__file__).parent)

PLANNED = textwrap.dedent('''
    import pytest
    from pytest import approx

    @pytest.fixture
    def unit():
        yield 100

    @pytest.fixture(params=[1, 2])
    def each(request):
        return request.param

    @pytest.fixture
    def derived(unit, tmp_path):
        return unit

    def test_plain():
        pass

    def test_served(tmp_path, monkeypatch, capsys, tmp_path_factory, derived):
        pass

    def test_request(request):
        pass

    def test_caplog(caplog, capfd):
        pass

    @given(st.integers())
    def test_given(n):
        pass

    def test_param_fixture(each):
        pass

    @pytest.mark.parametrize("x", [1], indirect=True)
    def test_indirect(x):
        pass

    @pytest.mark.usefixtures("unit")
    def test_usefixtures():
        pass

    async def test_async():
        pass

    class TestPlain:
        def test_m(self, unit):
            pass

    class TestWithSetup:
        def setup_method(self):
            pass

        def test_m(self):
            pass
''')


def test_the_plan_says_what_the_harness_cannot_serve_from_the_syntax_alone():
    why, tests = bare.plan(PLANNED)
    assert why == ""
    reasons = {q: r for q, (r, _) in tests.items()}
    assert reasons == {
        "test_plain": "", "test_served": "", "TestPlain::test_m": "",
        "test_request": "uses the fixture request, which the second harness does not serve",
        "test_caplog": "uses the fixture capfd, which the second harness does not serve",
        "test_given": "a hypothesis @given test (the second run has no draw of the first run's to repeat)",
        "test_param_fixture": "the fixture each has params",
        "test_indirect": "indirect or scoped parametrize",
        "test_usefixtures": "",  # served, in pytest's order (`bare_served.order`): it was not double-checked
        "test_async": "an async test",
        "TestWithSetup::test_m": "",  # served (`bare_served.xunit`): it was not double-checked
    }


GIVEN = textwrap.dedent('''
    from hypothesis import given, strategies as st

    @given(st.integers(), st.text())
    def test_positional(tmp_path, n, s):
        pass

    @given(n=st.integers())
    def test_keyword(n, capsys):
        pass

    STRATEGIES = {"n": st.integers()}

    @given(**STRATEGIES)
    def test_spread(n):
        pass

    class TestC:
        @given(st.integers())
        def test_m(self, n):
            pass
''')


def test_the_plan_serves_given_tests_with_the_first_runs_draws_and_the_arguments_hypothesis_does_not_fill():
    """With the tests' seeds (`dg_random` served), a `@given` test runs with the first run's draw
    (`seeded.given_draw`); the fixtures it needs are the arguments hypothesis does not fill (its positional strategies
    fill the rightmost ones)."""
    why, tests = bare.plan(GIVEN, served=(*bare.SERVED, bare.SEEDED))
    assert why == "" and tests == {
        "test_positional": ("", ["tmp_path"]), "test_keyword": ("", ["capsys"]), "TestC::test_m": ("", []),
        "test_spread": ("a hypothesis @given test whose arguments the second harness cannot tell from its syntax", [])}


@pytest.mark.parametrize("source, why", [
    ("import pytest\npytest.warns\n", "uses pytest.warns"),
    ("from pytest import MonkeyPatch\n", "uses pytest.MonkeyPatch"),
    ("import _pytest.python\n", "imports _pytest.python"),
    # a module's `pytest_generate_tests` the second run cannot serve (`bare_plan._generated`): its config read, the
    # metafunc handed on, names not written out, an indirect parametrize
    ("def pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', metafunc.config.getoption('x'))\n",
     "defines pytest_generate_tests"),
    ("def pytest_generate_tests(metafunc):\n    helper(metafunc)\n", "defines pytest_generate_tests"),
    ("def pytest_generate_tests(metafunc):\n    metafunc.parametrize(NAMES, [1])\n", "defines pytest_generate_tests"),
    ("def pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', [1], True)\n", "defines pytest_generate_tests"),

    # a module's `pytestmark` the second harness cannot serve as each test's marks (`bare_plan._module_marks`)
    ("import pytest\npytestmark = pytest.mark.usefixtures(DB)\n",
     "defines pytestmark with pytest.mark.usefixtures (pytest.mark.usefixtures with names that are not written out)"),
    ("import pytest\npytestmark = [pytest.mark.slow, pytest.mark.parametrize(NAMES, [1])]\n",
     "defines pytestmark with pytest.mark.parametrize (parametrize names that are not written out)"),
    ("import pytest\nslow = pytest.mark.slow\npytestmark = slow\n", "defines pytestmark with what is not written out as marks"),
    ("import pytest\npytestmark = [pytest.mark.slow]\npytestmark.append(pytest.mark.fast)\n",
     "defines pytestmark otherwise than once, at its top"),
    ("import pytest\npytestmark = pytest.mark.slow\ndef test_a():\n    assert pytestmark\n",
     "defines pytestmark otherwise than once, at its top"),
    ("from marks import pytestmark\n", "defines pytestmark otherwise than once, at its top"),
    ("pytestmark: list\n", "defines pytestmark otherwise than once, at its top"),  # annotated, not bound
    ("import pytest\n@pytest.fixture(autouse=FLAG)\ndef a():\n    pass\n", "the fixture a's autouse is not written out"),
    ("setup_function = print\n", "defines setup_function"),
    ("import pytest\n@pytest.fixture\ndef setup_function():\n    pass\n", "defines setup_function"),
])
def test_a_file_the_harness_cannot_run_faithfully_is_unsupported_as_a_whole(source, why):
    assert bare.plan(source)[0] == why


@pytest.mark.parametrize("source", [
    "import pytest\npytestmark = pytest.mark.slow\n",
    "import pytest as pt\npytestmark = (pt.mark.slow, pt.mark.skipif(False, reason='no'), pt.mark.filterwarnings('error'))\n",
    "from pytest import mark\npytestmark = [mark.slow, mark.xfail]\n",
    # annotated, or a list added to by `+=` (`bare_plan._marks_of`): its parameters from the addition too (below)
    "import pytest\npytestmark: list = [pytest.mark.slow]\npytestmark += (pytest.mark.parametrize('x', [1]),)\n",
    "import pytest\nclass TestA:\n    pytestmark = pytest.mark.usefixtures('db')\n",  # a class's: its own tests (below)
    "def setup_function(function):\n    pass\ndef teardown_function():\n    pass\n",  # each test function's (`XUNIT`)
    # `usefixtures` and `parametrize` there, a set-up beside an autouse fixture: in pytest's order (`bare_served.order`)
    "import pytest\n@pytest.fixture\ndef db():\n    pass\npytestmark = pytest.mark.usefixtures('db')\n",
    "import pytest\npytestmark = [pytest.mark.slow, pytest.mark.parametrize('x', [1])]\n",
    "import pytest\n@pytest.fixture(autouse=True)\ndef a():\n    pass\ndef setup_function(f):\n    pass\n",
    # a module's `pytest_generate_tests`, its parameters' names written out: served (`bare_served._Metafunc`)
    "def pytest_generate_tests(metafunc):\n    if 'x' in metafunc.fixturenames:\n        metafunc.parametrize('x', [1], ids=['one'])\n",
])
def test_a_modules_marks_written_out_are_served(source):
    """A module's `pytestmark` whose marks the second harness serves as each test's own: the file is planned (a
    product right only under pytest passed a stop with the bug in when it was not: test_second_opinion)."""
    why, tests = bare.plan(source + "def test_b():\n    pass\n")
    assert why == "" and tests["test_b"] == ("", [])
    if "parametrize" in source:  # the module's parameters are no fixtures of its tests
        assert bare.plan(source + "def test_c(x, tmp_path):\n    pass\n")[1]["test_c"] == ("", ["tmp_path"])


@pytest.mark.parametrize("source", [
    "import pytest\npytestmark = pytest.mark.slow\npytestmark += [pytest.mark.slow]\n",  # a mark added to: TypeError
    "import pytest\npytestmark = [pytest.mark.slow]\npytestmark += MORE\n",  # not written out
    "import pytest\npytestmark = [pytest.mark.slow]\npytestmark = pytestmark + [pytest.mark.slow]\n",
    "from common import pytestmark\n",  # another module's: its marks are not known from the file's syntax
])
def test_a_modules_marks_bound_otherwise_leave_the_file_out(source):
    assert bare.plan(source + "def test_b():\n    pass\n")[0] == "defines pytestmark otherwise than once, at its top"


@pytest.mark.parametrize("marks, why", [
    ("pytest.mark.slow", ""), ("[pytest.mark.slow, pytest.mark.skipif(False, reason='r')]", ""),
    ("pytest.mark.usefixtures('db')", "uses the fixture db, which the second harness does not serve"),
    ("SLOW", "a test class with pytestmark"),
])
def test_a_classs_marks_written_out_are_served(marks, why):
    """A test class's own `pytestmark` (`bare_plan._class_marks`), as the module's."""
    source = f"import pytest\nSLOW = pytest.mark.slow\n\nclass TestA:\n    pytestmark = {marks}\n\n    def test_a(self):\n        pass\n"
    assert bare.plan(source) == ("", {"TestA::test_a": (why, [])})
    # read by the file's code: it would find the name the program's text shows (`checksmark`), not the file's
    assert bare.plan(source + "\ndef test_b():\n    assert TestA.pytestmark\n")[0] == "defines pytestmark otherwise than once, at its top"


XUNIT_CLASS = ("class TestA:\n    @classmethod\n    def setup_class(cls):\n        pass\n\n    def teardown_class(cls):\n        pass\n\n"
               "    def setup_method(self, method):\n        pass\n\n    @staticmethod\n    def teardown_method():\n        pass\n\n"
               "    def test_a(self):\n        pass\n")


@pytest.mark.parametrize("source, why", [
    (XUNIT_CLASS, ""),  # a plain test class's xunit set-ups: served (`bare_served.xunit`)
    # a TestCase's: pytest calls them around unittest's own (`bare_served.xunit`), in its place whatever pytest's version;
    # beside its own `setUpClass` too where pytest sets that up first, as the second run does (`bare_plan.unit_first`)
    ("import unittest\n" + XUNIT_CLASS.replace("class TestA:", "class TestA(unittest.TestCase):"), ""),
    ("import unittest\n" + XUNIT_CLASS.replace("class TestA:", "class TestA(unittest.TestCase):\n    def setUpClass(cls):\n"
                                             "        pass\n"), ""),
    ("import unittest, pytest\n" + XUNIT_CLASS.replace("class TestA:", "class TestA(unittest.TestCase):\n    @pytest.fixture("
                                                     "autouse=True)\n    def own(self):\n        pass\n"),
     "a test class with setup_method beside its own autouse fixture"),
    # marks decorating it: its marks (`bare_shim._Mark`); another decorator: not served
    ("import pytest\n@pytest.mark.slow\n@pytest.mark.skipif(False, reason='r')\n" + XUNIT_CLASS, ""),
    ("import functools\n@functools.total_ordering\n" + XUNIT_CLASS, "a decorated test class"),
    ("import pytest\n@pytest.mark.usefixtures('db')\n" + XUNIT_CLASS, "uses the fixture db, which the second harness does not serve"),
    # a class's `pytest_generate_tests`: not served
    ("class TestA:\n    def pytest_generate_tests(self, metafunc):\n        pass\n    def test_a(self):\n        pass\n",
     "a test class with pytest_generate_tests"),
    # nose's set-ups, with a pytest that calls them (before 8.0): not served; else plain methods (`bare_plan.noses`)
    ("class TestA:\n    def setup(self):\n        pass\n    def test_a(self):\n        pass\n", "a test class with setup"),
    ("import pytest\n@pytest.fixture(autouse=True)\ndef a():\n    pass\n" + XUNIT_CLASS, ""),  # in pytest's order
    (XUNIT_CLASS.replace("    @classmethod\n", "    @pytest.fixture\n"), "a test class with setup_class"),
])
def test_a_plain_test_classs_xunit_set_ups_are_served(source, why):
    assert bare.plan(source)[1]["TestA::test_a"] == (why, [])
    if "def setup(" in source:
        assert bare.plan(source, nose=False)[1]["TestA::test_a"] == ("", [])
    if "def setUpClass(" in source:  # pytest 8.0 sets `setup_class` up first: not served
        assert bare.plan(source, first=False)[1]["TestA::test_a"] == ("a test class with setup_class", [])


def test_a_test_modules_own_hooks_pytest_never_calls_are_served():
    """nose's `setup`/`teardown` with a pytest that has no nose (8.0 on), and `pytest_collection_modifyitems` (pytest
    calls a conftest's, never a test module's): plain functions of the file's."""
    source = "def setup():\n    pass\ndef teardown():\n    pass\ndef pytest_collection_modifyitems(items):\n    pass\ndef test_a():\n    pass\n"
    assert bare.plan(source)[0] == "defines setup" and bare.plan(source, nose=False) == ("", {"test_a": ("", [])})
    # the kit's kept plans take nose's names as pytest before 8.0 does; the supervisor plans such a file again
    assert bare_plan.nosed(bare.plan(source)) and not bare_plan.nosed(bare.plan(source.replace("def setup", "def set_up").replace("def teardown", "def tear_down")))
    assert bare_plan.nosed(bare.plan("class TestA:\n    def teardown(self):\n        pass\n    def test_a(self):\n        pass\n"))
    assert bare.noses([]) is False


def test_which_class_set_up_pytest_sets_up_first_is_read_from_it(tmp_path):
    """pytest 8.1 on registers unittest's `setUpClass` fixture before `setup_class`'s (`_pytest/unittest.py`), 8.0 lists
    them by attribute name, `setup_class` first (`bare_plan.unit_first`); no pytest found: not first."""
    assert bare_plan.unit_first([os.path.dirname(os.path.dirname(pytest.__file__))]) is True
    (tmp_path / "_pytest").mkdir()
    (tmp_path / "_pytest" / "unittest.py").write_text("        self._inject_setup_teardown_fixtures(cls)\n"
                                                      "        self._inject_setup_class_fixture()\n")
    assert bare_plan.unit_first([str(tmp_path)]) is False
    (tmp_path / "_pytest" / "unittest.py").write_text("            self._register_setup_class_fixture()\n"
                                                      "            self._register_unittest_setup_class_fixture(cls)\n")
    assert bare_plan.unit_first([str(tmp_path)]) is False
    assert bare_plan.unit_first([]) is False


OVERRIDDEN = "import pytest\n@pytest.fixture\ndef units(request):\n    pass\n@pytest.fixture\ndef total(units):\n    pass\n"
SCOPED = "import pytest\n@pytest.fixture(scope='module')\ndef wide():\n    pass\n@pytest.fixture\ndef near(wide):\n    pass\n"
DYNAMIC = "the fixture wide's scope is not written out (pytest sets the fixtures up by scope)"


@pytest.mark.parametrize("source, test, why", [
    # pytest sets a fixture wider than a test up before the test's xunit set-ups (tears it down after): the second run
    # does so too (`bare_served.order`), so a test reaching one is double-checked (it was not)
    (SCOPED + "def setup_function(f):\n    pass\ndef test_a(wide):\n    pass\n", "test_a", ""),
    (SCOPED + "def teardown_function(f):\n    pass\ndef test_a(near):\n    pass\n", "test_a", ""),
    (SCOPED.replace("'module'", "'class'") + "class TestA:\n    def setup_method(self):\n        pass\n"
     "    def test_a(self, near):\n        pass\n", "TestA::test_a", ""),
    (SCOPED.replace("'module'", "'session'") + "def setup_module():\n    pass\ndef test_a(near):\n    pass\n", "test_a", ""),
    # ... but not where a scope is not written out: its place among them is not known
    (SCOPED.replace("'module'", "lambda **k: 'module'") + "def setup_function(f):\n    pass\ndef test_a(wide):\n    pass\n",
     "test_a", DYNAMIC),
    (SCOPED.replace("'module'", "lambda **k: 'module'") + "@pytest.fixture(autouse=True)\ndef a():\n    pass\n"
     "def test_a(near):\n    pass\n", "test_a", DYNAMIC),
    (SCOPED.replace("'module'", "lambda **k: 'module'") + "def test_a(near):\n    pass\n", "test_a", DYNAMIC),
    (SCOPED.replace("'module'", "lambda **k: 'module'") + "def test_a(wide, tmp_path):\n    pass\n", "test_a", ""),  # alone
    # a test class's own fixtures: served, bound to the test's instance as pytest binds a function-scoped one
    (SCOPED + "class TestA:\n    @pytest.fixture(autouse=True)\n    def own(self, near):\n        pass\n"
     "    def test_a(self):\n        pass\n", "TestA::test_a", ""),
    # ... a wider one too (an instance method's bound to an instance of its own, a classmethod's to the class), written
    # out; not a TestCase's, nor one whose scope is not written out, nor of another kind
    (SCOPED + "class TestA:\n    @pytest.fixture(scope='class')\n    def own(self):\n        pass\n"
     "    def test_a(self, own):\n        pass\n", "TestA::test_a", ""),
    (SCOPED + "class TestA:\n    @pytest.fixture(scope='module', autouse=True)\n    @classmethod\n    def own(cls):\n        pass\n"
     "    def test_a(self):\n        pass\n", "TestA::test_a", ""),
    (SCOPED + "import unittest\nclass TestA(unittest.TestCase):\n    @pytest.fixture(scope='class', autouse=True)\n"
     "    def own(self):\n        pass\n    def test_a(self):\n        pass\n", "TestA::test_a",
     "a test class with its own fixture own of another scope or kind"),
    (SCOPED + "class TestA:\n    @pytest.fixture(scope=lambda **k: 'class')\n    def own(self):\n        pass\n"
     "    def test_a(self, own):\n        pass\n", "TestA::test_a", "a test class with its own fixture own of another scope or kind"),
    (SCOPED + "class TestA:\n    @pytest.fixture\n    @classmethod\n    def own(cls):\n        pass\n"
     "    def test_a(self, own):\n        pass\n", "TestA::test_a", "a test class with its own fixture own of another scope or kind"),
    (SCOPED + "class TestA:\n    @pytest.fixture\n    def wide(self, wide):\n        pass\n"
     "    def test_a(self, wide):\n        pass\n", "TestA::test_a", "the fixture wide depends on itself"),
    # a parameter overrides the fixture of its name for the whole closure (pytest's direct parametrization): what only
    # that fixture asks for is never set up
    (OVERRIDDEN + "@pytest.mark.parametrize('units', [1])\ndef test_a(total):\n    pass\n", "test_a", ""),
    (OVERRIDDEN + "def test_a(total):\n    pass\n", "test_a", "uses the fixture request, which the second harness does not serve"),
])
def test_a_test_reaching_a_fixture_wider_than_its_xunit_set_ups_is_double_checked(source, test, why):
    assert bare.plan(source)[1][test][0] == why


def test_fixtures_come_in_the_order_the_first_runs_pytest_walks_them():
    """pytest 9 walks a test's fixtures depth first, pytest 8 breadth first, then both sort them by scope (a class-scoped
    fixture an autouse function fixture asks for comes before `setup_class` in 9, after it in 8: each seen in pytest's
    own log of such a file, 9.2 and 8.3.5); the second run walks them as the first run's pytest does (`closures`)."""
    ns: dict = {}
    exec("def f0x():\n    pass\ndef f1c(f0x):\n    pass\ndef f2x(f1c):\n    pass\ndef f3x(f0x):\n    pass\n"
         "def own(f3x):\n    pass\n", ns)
    for name, scope, auto in (("f0x", "module", True), ("f1c", "class", False), ("f2x", "function", True), ("f3x", "module", True),
                              ("own", "function", True)):
        ns[name]._bare_fixture = (name, auto, scope)
    defs = {n: ns[n] for n in ("f0x", "f1c", "f2x", "f3x", "own")}
    names = [" module", "f0x", "f2x", "f3x", " class", " method", "own"]
    try:
        assert bare_served.order(names, defs, {}) == [" module", "f0x", "f3x", "f1c", " class", "f2x", " method", "own"]
        bare_served.DFS[:] = [False]
        assert bare_served.order(names, defs, {}) == [" module", "f0x", "f3x", " class", "f1c", "f2x", " method", "own"]
    finally:
        bare_served.DFS[:] = [True]
    assert bare_plan.closures([os.path.dirname(os.path.dirname(pytest.__file__))]) is (pytest.version_tuple[0] >= 9)
    # a parameter `x` overrides the fixture x(dep): a mark's is never walked into (test(x, z, y), y(dep): z, dep, y); a
    # `pytest_generate_tests`' is walked, then pruned, what the rest asks for kept in place (dep, z, y), as pytest 9.2 does
    exec("def dep():\n    pass\ndef x(dep):\n    pass\ndef z():\n    pass\ndef y(dep):\n    pass\n", ns)
    defs = {n: ns[n] for n in ("dep", "x", "z", "y")}
    assert bare_served.order(["x", "z", "y"], defs, {"x": 1}) == ["z", "y", "dep"]  # (each set up with what it asks first)
    assert bare_served.order(["x", "z", "y"], defs, {"x": 1}, [bare_shim._Mark("parametrize", ("x", [1]))]) == ["dep", "z", "y"]


def test_xunit_set_ups_are_called_as_pytest_calls_them():
    """Each with its argument when it takes one; the tear-downs once their set-up returned."""
    calls = []
    source = ("def setup_function(f):\n    CALLS.append(('sf', f))\n\ndef teardown_function():\n    CALLS.append('tf')\n\n"
              "def test_f():\n    pass\n\n" + XUNIT_CLASS.replace("pass", "CALLS.append(({}, locals().get('cls') or locals().get('method')))"))
    for n in ("sc", "tc", "sm", "tm"):
        source = source.replace("({}, ", f"({n!r}, ", 1)
    ns: dict = {"CALLS": calls}
    exec(compile(source, "t.py", "exec"), ns)
    mod = SimpleNamespace(**ns)
    for klass, fn, kinds in ((None, ns["test_f"], [" module", " function"]), (ns["TestA"], ns["TestA"]().test_a, [" class", " method"])):
        downs: list = []
        for kind in kinds:
            for f, a, k in bare_served.xunit(mod, klass, fn, kind, downs):
                f(*a, **k)
        while downs:
            downs.pop()()
    assert calls == [("sf", ns["test_f"]), "tf", ("sc", ns["TestA"]), ("sm", fn), ("tm", None), ("tc", ns["TestA"])]


def test_a_modules_skip_marks_skip_each_of_its_tests_in_the_second_harness():
    source = ("import pytest\npytestmark = [pytest.mark.slow, pytest.mark.skipif(RUN, reason='r')]\n\ndef test_b():\n    pass\n"
              "\nclass TestC:\n    pytestmark = pytest.mark.skip\n")
    for run, skipped in ((False, False), (True, True)):
        ns = {"__name__": "t", "RUN": run}
        mod = SimpleNamespace()
        exec(bare.bind(bare.shim_compile(bare_shim._ToShim("\x00shim").visit(ast.parse(source)), "t.py"),
                       {"\x00shim": bare.make_shim()}), ns)
        mod.__dict__.update(ns)
        bare_fork.module_marks("t.py", mod, "checks")
        assert "pytestmark" not in vars(mod) and [m.name for m in vars(mod)["checksmark"]] == ["slow", "skipif"]
        assert list(vars(mod)).index("checksmark") == list(ns).index("pytestmark")  # its place, under the name shown
        assert mod.TestC.checksmark.name == "skip" and "pytestmark" not in vars(mod.TestC)
        assert [m.name for m in bare_shim.MODULE_MARKS[mod.TestC]] == ["skip"]
        try:
            bare_shim._skipping(ns["test_b"], bare_shim.MODULE_MARKS["t.py"])
        except bare_shim._Skipped:
            assert skipped
        else:
            assert not skipped


PARAMS = textwrap.dedent('''
    import pytest

    @pytest.mark.parametrize("x", [1, 2])
    @pytest.mark.parametrize("y", ["a b", None])
    def test_f(x, y):
        pass

    @pytest.mark.parametrize("x,y", [(1, 2), pytest.param(3, 4, id="z"), (1.5, True)])
    def test_g(x, y):
        pass

    @pytest.mark.parametrize(["x"], [[1], [1], [object()]])
    def test_h(x):
        pass
''')


def test_parameter_sets_come_in_pytests_order(tmp_path):
    # The second harness maps a test id to its parameter set by position: the order must be pytest's.
    (tmp_path / "test_p.py").write_text(PARAMS)
    res = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "test_p.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    ids = [line for line in res.stdout.splitlines() if "::" in line]
    ns: dict = {}
    code = bare.shim_compile(bare_shim._ToShim("\x00shim").visit(ast.parse(PARAMS)), "test_p.py")
    exec(bare.bind(code, {"\x00shim": bare.make_shim()}), ns)  # the tests' `import pytest`, as the zygote serves it
    for name in ("test_f", "test_g", "test_h"):
        cases = bare_shim._cases(ns[name])
        mine = [i for i in ids if bare.split_id(i)[1] == name]
        assert len(cases) == len(mine)
    assert [(c["x"], c["y"]) for c in bare_shim._cases(ns["test_f"])] == [(1, "a b"), (2, "a b"), (1, None), (2, None)]
    assert ids[:4] == ["test_p.py::test_f[a b-1]", "test_p.py::test_f[a b-2]", "test_p.py::test_f[None-1]",
                       "test_p.py::test_f[None-2]"]
    assert [c["x"] for c in bare_shim._cases(ns["test_g"])] == [1, 3, 1.5]


def _alarms(repo: str = "/nowhere/repo"):
    seen: list[str] = []
    return probe.make_probe(repo, seen.append), seen


class _Money(int):
    def __eq__(self, other):
        return int(self) == other

    __hash__ = int.__hash__


class _Always(int):
    def __eq__(self, other):
        return other is not None

    __hash__ = int.__hash__


@pytest.mark.parametrize("left, right", [
    (_Money(900), 900), (mock.ANY, 900), (900, 900), ("a", "a"), ([1, 2], [1, 2]), ({"a": 1}, {"a": 1}),
    (float("nan"), 1.0), (None, None), (pytest.approx(0.3), 0.1 + 0.2),
])
def test_the_probe_leaves_honest_equality_alone(left, right):
    # This file's classes count as the repository's here (the repo root is this folder).
    p, seen = _alarms(HERE)
    p(left, right, "==", left == right)
    assert seen == []


@pytest.mark.parametrize("value", [
    _Always(1000),
    type("Built", (int,), {"__eq__": lambda s, o: True, "__hash__": int.__hash__})(1000),
    type("Lying", (int,), {"__eq__": lambda s, o: 1, "__hash__": int.__hash__, "__module__": "builtins"})(1000),
    type("IntsOnly", (int,), {"__eq__": lambda s, o: isinstance(o, int), "__hash__": int.__hash__})(1000),
])
def test_the_probe_finds_an_object_equal_to_everything(value):
    p, seen = _alarms(HERE)
    p(value, 900, "==", value == 900)
    assert len(seen) == 1 and "equal to everything" in seen[0]


def test_a_ne_that_never_differs_is_probed_through_the_operator_the_test_used():
    bent = type("NeverDiffers", (int,), {"__ne__": lambda s, o: False, "__hash__": int.__hash__})(1000)
    p, seen = _alarms(HERE)
    p(900, bent, "!=", 900 != bent)  # `assert not (900 != price)`: a failing != is a passing equality
    assert len(seen) == 1


def test_the_second_runs_verdict_puts_hard_evidence_first():
    out = second.SecondRun()
    out.results = {"a": {"outcome": "imports-pytest", "why": "pytest"}, "b": {"outcome": "failed", "why": "AssertionError"},
                   "c": {"outcome": "unsupported", "why": "uses the fixture request"}}
    second._judge(out)
    assert out.rule == "disagree" and "b passed under pytest" in out.tamper
    assert out.summary()["unsupported"] == {"c": "uses the fixture request"}
    out = second.SecondRun()
    out.results = {"a": {"outcome": "imports-pytest", "why": "pytest"}}
    second._judge(out)
    assert out.rule == "imports-pytest"


def test_the_second_runs_report_is_one_line_per_test_in_order_and_the_supervisor_must_end_well(monkeypatch, tmp_path):
    # A child that reached the supervisor's report (e.g. through /proc) must write before it and is
    # then caught repeating or reordering lines; a supervisor it killed does not exit 0.
    from donegate.core import proc

    store = tmp_path / "store"
    store.mkdir()
    (store / "test_x.py").write_text("def test_a():\n    pass\n")
    tests = ["test_x.py::test_a", "test_x.py::test_b"]

    def fake(lines, code=0):
        def run(argv, **kw):
            nonce = __import__("json").loads(kw["input"].splitlines()[0])["nonce"]
            text = "".join(__import__("json").dumps({"n": nonce, **m}) + "\n" for m in lines)
            return proc.Result(argv, code, text, "", False, 0.1)
        return run

    ok = [{"id": "test_x.py::test_a", "outcome": "passed"}, {"id": "test_x.py::test_b", "outcome": "passed"}, {"done": True}]
    for lines, code, rule, problem in [
        (ok, 0, "", ""),
        ([ok[0], ok[0], ok[1], ok[2]], 0, "stream", "out of order or repeated"),
        ([ok[1], ok[0], ok[2]], 0, "stream", "out of order or repeated"),
        ([*ok, ok[2]], 0, "stream", "out of order or repeated"),
        (ok, -9, "", "supervisor ended with exit code -9"),
        (ok[:1], 0, "", "ended before reporting"),
    ]:
        monkeypatch.setattr(proc, "run", fake(lines, code))
        out = second.run(store, tmp_path, tests, timeout=10, kind="none")
        assert out.rule == rule and problem in out.problem, (lines, out.problem)


def test_a_test_file_is_entered_as_the_program_it_stands_for(tmp_path, monkeypatch):
    """In the second run a test file's module is `__main__` (`bare_fork.enter_program`): `python test_x.py` in the
    project's folder, its file there (made empty where the copy has none, one at a time, a file of the project's kept),
    its `if __name__ == "__main__":` block, which pytest never runs, left out (`bare_fork.as_main`)."""
    import ast
    import types

    from donegate.hidden import bare_fork

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "orig_argv", list(sys.orig_argv))
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    (tmp_path / "test_b.py").write_text("# the project's own\n")
    made: list[str] = []
    a, b = types.ModuleType("__main__"), types.ModuleType("__main__")
    a.__file__, b.__file__ = str(tmp_path / "test_a.py"), str(tmp_path / "test_b.py")
    bare_fork.enter_program(a, str(tmp_path), made)
    assert sys.modules["__main__"] is a and sys.argv == ["test_a.py"] and sys.orig_argv[1:] == ["test_a.py"]
    assert made == [a.__file__] and os.path.getsize(a.__file__) == 0
    bare_fork.enter_program(b, str(tmp_path), made)
    assert not os.path.exists(a.__file__) and made == [] and (tmp_path / "test_b.py").read_text() == "# the project's own\n"
    tree, names = bare_fork.as_main(ast.parse("import os.path\nfrom calc import x\nif __name__ == '__main__':\n"
                                              "    main()\nelse:\n    other()\nif '__main__' != __name__:\n    kept()\n"))
    assert ast.unparse(tree).split("\n") == ["import os.path", "from calc import x", "other()", "kept()"]
    assert names == {"os", "calc"}


def test_test_files_that_import_each_other_run_as_programs(tmp_path):
    """The look-alike of the test file as `__main__`: a sealed file that imports another by its name (at its top, and
    in a test) finds it as under pytest, the module it imports stays in `sys.modules` under that name (no other does),
    each test's `__main__` is its own file's, a program named as developers name one (`second.program_names`), and the
    program files the run made are gone after it. (test_a does not write its own names out: such a test is not
    double-checked, `bare_itself.names_itself`.)"""
    repo, store = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    store.mkdir()
    (repo / "calc.py").write_text("def twice(x):\n    return 2 * x\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (store / "test_a.py").write_text("import sys\n\nimport calc\n\n\ndef helper(x):\n    return calc.twice(x)\n\n\n"
                                     "def test_a():\n    assert sys.modules['__main__'].__file__ == __file__\n"
                                     "    assert not sys.argv[0].startswith('test') and sys.argv[0] == __file__.rpartition('/')[2]\n"
                                     "    assert len([m for m in sys.modules if m.startswith('test_')]) == 1\n    assert helper(2) == 4\n")
    (store / "test_b.py").write_text("import sys\n\nfrom test_a import helper\n\n\ndef test_b():\n    import test_a\n\n"
                                     "    assert test_a.helper is helper and helper(3) == 6\n"
                                     "    assert [m for m in sys.modules if m.startswith('test_')] == ['test_a']\n"
                                     "    assert sys.modules['__main__'].__file__ not in (test_a.__file__, None)\n")
    out = second.run(store, repo, ["test_a.py::test_a", "test_b.py::test_b"], timeout=60, kind="none")
    assert {i: r["outcome"] for i, r in out.results.items()} == {"test_a.py::test_a": "passed", "test_b.py::test_b": "passed"}, (
        out.problem, out.results)
    assert sorted(p.name for p in repo.iterdir()) == [".git", "calc.py"]


SERVED_PATH = '''import sys

import calc
from pathlib import Path
from types import SimpleNamespace


def test_by_importlib(tmp_path):
    assert calc.P is sys.modules["pathlib"] and isinstance(tmp_path, Path) and isinstance(tmp_path, calc.P.Path)


def test_built_by_hand():
    assert calc.OWN is not sys.modules.get("fractions") and calc.OWN.Fraction(1, 2) == 0.5


def test_held_before():
    assert calc.EARLY == {early}


def test_probed():
    expected = 2
    assert calc.Money(2) == expected
    assert "random" not in sys.modules
'''


def _project(tmp_path, calc: str):
    """(a git repository holding `calc.py`, an empty store for the sealed tests) under `tmp_path`."""
    repo, store = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    store.mkdir()
    (repo / "calc.py").write_text(calc)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    return repo, store


def test_a_served_tmp_path_is_a_path_of_the_pathlib_the_product_imported_by_importlib(tmp_path):
    """The product's `importlib.import_module('pathlib')` loaded a second copy of the module the zygote hid, and a
    test's `isinstance(tmp_path, Path)` was False in the second run only (an honest block: the served `tmp_path` is
    the hidden module's). The import returns the very module now (bare_shim.hide_harness). Beside it: a module built
    by hand (`module_from_spec`, `exec_module`) stays a copy, as in a program; `pathlib` is still not held before the
    product's import where a fresh interpreter does not hold it. And the equality probe's decoys no longer import
    `random` at a comparison (it came back into `sys.modules` there: a product's second call saw it, as under pytest)."""
    repo, store = _project(tmp_path, (
        "import sys\nEARLY = 'pathlib' in sys.modules\nimport importlib\nimport importlib.util\n"
        "P = importlib.import_module('pathlib')\nSPEC = importlib.util.find_spec('fractions')\n"
        "OWN = importlib.util.module_from_spec(SPEC)\nSPEC.loader.exec_module(OWN)\n"
        "class Money:\n    def __init__(self, c):\n        self.c = c\n    def __eq__(self, other):\n"
        "        return self.c == other\n    __hash__ = None\n"))
    early = subprocess.run([sys.executable, "-c", "import sys; print('pathlib' in sys.modules)"], capture_output=True,
                           text=True, timeout=30, cwd=repo).stdout.strip()
    (store / "test_p.py").write_text(SERVED_PATH.format(early=early))
    tests = [f"test_p.py::test_{n}" for n in ("by_importlib", "built_by_hand", "held_before", "probed")]
    out = second.run(store, repo, tests, timeout=60, kind="none")
    assert {i: r["outcome"] for i, r in out.results.items()} == dict.fromkeys(tests, "passed"), (out.problem, out.results)


def test_the_helper_beside_the_program_is_a_developers_own_checks():
    """The helper module bound beside the second run's program for its spawn children (`second._helper_text`) names no
    test framework (it was pytest under another name, read there by a product: test_redteam_traces), and serves what
    the tests may use of pytest (`bare_plan.SHIM`) as the shim does."""
    text = second._helper_text()
    assert "pytest" not in text.lower() and "donegate" not in text.lower()
    ns: dict = {}
    exec(compile(text, "checks.py", "exec"), ns)

    @ns["mark"].parametrize("x", [ns["param"](1, id="one")])
    @ns["fixture"]
    def f(x):
        return x
    assert f(2) == 2 and [m.name for m in f.marks] == ["parametrize"]
    with ns["raises"](ValueError, match="bad") as info:
        raise ValueError("a bad one")
    assert info.type is ValueError and ns["raises"](KeyError, {}.__getitem__, 1).type is KeyError
    for fn, kind in ((ns["fail"], AssertionError), (ns["skip"], Exception)):
        with pytest.raises(kind):
            fn("why")
    cases = [(0.1 + 0.2, 0.3, {}), (0.31, 0.3, {}), (1.0, 1.05, {"rel": 0.1}), (1.0, 1.05, {"abs": 0.01}), (True, 1, {}),
             ([0.1 + 0.2, 2], [0.3, 2], {}), ({"a": 0.30000001}, {"a": 0.3}, {}), (float("nan"), float("nan"), {"nan_ok": True}),
             (float("inf"), float("inf"), {}), ("0.3", 0.3, {}), (5, float("inf"), {}), ([1], (1,), {}), ([1, 2], [1], {})]
    for got, want, kw in cases:
        assert (got == ns["approx"](want, **kw)) is (got == bare_shim._Approx(want, **kw)), (got, want, kw)


# A test's served objects, as product code finds them (its caller's frame, the root logger's handlers, what its `==` is
# handed): their types were the harness's (`_Metafunc`, `_MonkeyPatch`, `_Approx`..., of a module the run's secret
# named), a name no developer's run holds. They read as pytest's own now (`bare_served._pytests`, `_as_pytests`); the
# same file passes under pytest.
NAMED = '''import logging

import pytest

import calc


def pytest_generate_tests(metafunc):
    if "kind" in metafunc.fixturenames:
        metafunc.parametrize("kind", [calc.callers("metafunc")])


def test_generated(kind):
    assert kind == "_pytest.python.Metafunc"


def test_served(monkeypatch, capsys, caplog, tmp_path_factory, subtests):
    assert calc.named(monkeypatch) == "_pytest.monkeypatch.MonkeyPatch"
    assert calc.named(capsys) == "_pytest.capture.CaptureFixture"
    assert calc.named(caplog) == "_pytest.logging.LogCaptureFixture"
    assert calc.named(tmp_path_factory) == "_pytest.tmpdir.TempPathFactory"
    assert calc.named(subtests) == "_pytest.subtests.Subtests"
    assert calc.named(subtests.test()) == "_pytest.subtests._SubTestContextManager"
    assert calc.named(capsys.readouterr()) == "_pytest.capture.CaptureResult"
    assert "LogCaptureHandler" in [type(h).__qualname__ for h in logging.getLogger().handlers]
    assert calc.method(monkeypatch.setattr) == "MonkeyPatch.setattr"
    try:
        pytest.skip("here")
    except BaseException as exc:
        assert calc.named(exc) == "builtins.Skipped"


def test_shim():
    seen = calc.Seen()
    seen == pytest.approx(3)  # noqa: B015 - what the product's `==` is handed
    assert seen.others[0] == "_pytest.approx.ApproxScalar"
    assert calc.half(0.6) == pytest.approx(0.3) and [calc.half(0.6)] == pytest.approx([0.3])  # the probe's wildcards
    assert calc.named(pytest.approx([1.5])) == "_pytest.approx.ApproxSequenceLike"
    assert calc.named(pytest.approx({"a": 1})) == "_pytest.approx.ApproxMapping"
    assert calc.named(pytest.raises(ValueError)) == "_pytest.raises.RaisesExc"
    with pytest.raises(ValueError) as info:
        int("x")
    assert calc.named(info) == "_pytest._code.code.ExceptionInfo"
    assert calc.named(pytest.mark.slow) == "_pytest.mark.structures.MarkDecorator"
    assert calc.named(pytest.mark) == "_pytest.mark.structures.MarkGenerator"
    assert calc.named(pytest.param(1)) == "pytest.ParameterSet"
'''


def test_served_objects_read_as_pytests_own(tmp_path):
    repo, store = _project(tmp_path, (
        "import sys\n\n\ndef named(x):\n    return f'{type(x).__module__}.{type(x).__qualname__}'\n\n\n"
        "def callers(name):\n    return named(sys._getframe(1).f_locals[name])\n\n\n"
        "def method(m):\n    return m.__func__.__code__.co_qualname\n\n\ndef half(x):\n    return x / 2\n\n\n"
        "class Seen:\n    def __init__(self):\n        self.others = []\n\n    def __eq__(self, other):\n        self.others.append(named(other))\n"
        "        return NotImplemented\n\n    __hash__ = None\n"))
    (store / "test_n.py").write_text(NAMED)
    tests = ["test_n.py::test_generated[_pytest.python.Metafunc]", "test_n.py::test_served", "test_n.py::test_shim"]
    under = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(store / "test_n.py")],
                           capture_output=True, text=True, timeout=120, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    assert under.returncode == 0, under.stdout[-3000:]
    out = second.run(store, repo, tests, timeout=60, kind="none")
    assert {i: (r["outcome"], r["why"]) for i, r in out.results.items()} == dict.fromkeys(tests, ("passed", "")), (
        out.problem, out.results)
