"""What trying the kit on real projects found, each the smallest repository that does what the project did, through
the real Stop hook, confined (each seen failing on the code before):
- pluggy 1.5.0 (pytest's own plugin system, its checkout installed editable): its `testing/conftest.py` imports
  `PluginManager` and hands it to most of its tests as a fixture. A conftest.py is imported before collection, when
  the kit's copy of pluggy was still the one in `sys.modules`, so those tests tested the kit's pluggy: 16 of its 109
  tests failed at the seal (they passed in the project's own `pytest`: they never blocked), and a regression of
  the project's pluggy that only they saw passed.
- inflect 7.4.0 (every project of jaraco's layout): `addopts = --doctest-modules`; the own suite's run left the doctest
  plugin off, pytest refused the option, and the seal said only "the test run ended before reporting (exit code 4):
  the code under test may exit the process early". Its doctests now run and block with what they expected and got;
  a configuration pytest refuses is named with pytest's own error line.
- async-lru 2.0.4: `addopts = ... --cache-clear ... --cov`, `junit_family = xunit2`: refused the same way, then (its
  plugins' options taken) coverage's tracer read as the tests' tracer; and its tests are bare `async def`s
  (`asyncio_mode = auto`): an acceptance test written alike was sealed, and blocked every stop with pytest's "async
  def functions are not natively supported".
- attrs 24.2.0: its 1,330 tests ran past the 120 s timeout at the seal, named as "the hidden tests"; a SyntaxError
  the product raised (hypothesis's example) was shown as `File "<string>", line 3` only.

A later round (sdists of the day, each in /tmp with an in-repo `.venv`, the project installed editable with its test
dependencies, one hidden test of existing behaviour; stops through the hook `install` writes: (a) the tree unchanged,
(b) a new function and a test for it in an existing test file, (c) a regression the project's own tests catch):
- typeguard 4.6.1 (551 tests): 26 failed at the seal, 0 in its developers' activated `pytest`. 24 because the runs
  left its own pytest plugin out (`pytest11`, installed editable; below): fixed, the plugin loaded while as sealed.
  The other 2 (`tests/mypy`) chdir to their own folder and run mypy, whose `.mypy_cache` cannot be written in the
  sealed suite's read-only folder: left (docs/own-suite.md, known limits). Then (a), (b) passed (b in ~19 s), and
  (c), `qualified_name` saying "type int", blocked naming the 5 tests its pytest fails.
- python-dotenv 1.2.4 (260 tests): 259 pass at the seal as in its activated `pytest` (one skips as root); (a), (b)
  (`has_key` beside `get_key`) passed, (c) (`get_key` no longer warns) blocked naming its two tests.
- pluggy 1.7.0 (219 tests): all pass at the seal; (a), (b) (`argnames` beside `varnames`) passed; (c) blocked naming
  8 tests, where the project's own pytest (which imports the project's pluggy) could not even start.
- wrapt 2.5.2 (1,418 tests, C extension not built): its whole own suite was refused at the seal (its conftest's mypy
  pairs, items without a test function, read as replaced above 200 tests), and 53 of its tests (`assertEqual` of an
  ObjectProxy) failed in the runs only: both fixed below. Now 1,404 pass at the seal; of the 2 failing, one mypy pair
  fails in its own pytest too, and `test_set_wrapped`'s `assertEqual(proxy_of_None, None)` is left: against None the
  probe asks identity, by decision (no value lies next to None, so a value latched onto it would pass the probe).
  (a), (b) (`restore_patch` beside `apply_patch`, ~40 s) passed; (c) blocked naming the 2 tests its pytest fails.
- more-itertools 11.2.1 (765 tests, 21,194 subtests; 88 s bare under a load of 12): the seal's run did not finish
  within `timeout: 900`, nor did it for `--own-tests tests/test_recipes.py` alone (145 tests, 9,876 subtests, ~13
  CPU-s bare). A call-only trace as the seal's reach map sets costs 3.3x CPU there (43 against 13 s; cProfile 33 s),
  so most of the cost is elsewhere in the run. Profiled (py-spy): not the subtests' own work (their reports, the
  checks after each test: under 10%), but `test_primes`' ~10^8 generator steps (9,592 subtests, each sieving again):
  the reach map's trace reads each step's `frame.f_code`, an audit event since Python 3.11, and the run's watch on
  the stack (`_watch`) walked to the reader's frame and read its code again for each. It now judges a frame's code
  read only for a frame of the harness (what it guards): the own run of a 1,229-subtest cut of `test_primes` 5.3 ->
  3.6 CPU-s (A/B twice, load 13-15; 0.6 bare); the whole of test_recipes.py now seals, 145 of 145 passing, its own
  run 274 -> 166 CPU-s (one run each, load 1-12; 12 bare). What is left (~14x bare) is the trace's own call and the
  audit hooks' dispatch per step: 3.11 has no unaudited way to a frame's code, and a cache of the frames seen would
  keep finished generators' locals alive (more-itertools' own tests count what islice_extended frees). Under a load
  of 12 on 2 cores that is still ~1,000 s of wall: raise `timeout:` for it; 3.12's sys.monitoring would be the way.

The next round (checkouts of the day, each with its own `.venv` and test dependencies; (a), (b), (c) as above):
- attrs 26.1.0 (1,412 tests): 1,400 pass at the seal as in its own pytest (1 fails there too, 11 skip or xfail);
  (a) blocked on the new requirement, (b) `field_names` passed, (c) `to_bool("on")` broken blocked naming its test.
- more-itertools 11.2.1, the whole suite (736 tests, 21,039 subtests): the reach map's trace now reads a frame's file
  from its globals (`frame.f_code` was an audit event at every generator step): sealed, 736 of 736, in 109 CPU-s
  (bare 23); (b) passed, (c) (`ilen` off by one) blocked naming the 6 tests its pytest fails. The "peekable" false
  block was not reproduced (4 stops, 3 of them with the next edit made while the last answer's put-back ran).
- inflect 7.5.0: 214 of 230 at the seal as its pytest (16 xfail); (c) blocked naming the 8 tests its pytest fails.
- toolz 1.1.0 (`testpaths = toolz`, tests in `toolz/tests/` and `toolz/sandbox/tests/`): refused at the seal (both
  test packages were pytest's top-level `tests`): fixed (test_own_product.py); then 185 of 186 as its pytest.
- boltons 26.1.1: 471 of 472: `wrap_trace(namedtuple) == (1, 2, 3)` is left (docs/verdict.md: the probe compares a
  tuple subclass as the tuple it holds, and `wrap_trace`'s is empty).

The round after (sdists of the day, a scratch HOME, `install`'s hook run as Claude Code runs it; (b), (c) as above):
pluggy 1.7.0 (219 of 219), python-dotenv 1.2.4 (259 of 260), wrapt 2.5.2 with its C extension built (1,406 of 1,418:
its failing mypy pair and `proxy_of_None`, both known), typeguard 4.6.1 (515 of 551: its two mypy tests, known) and
toolz 1.2.0 (192 of 193) sealed as their pytest; (b) passed and (c) blocked naming exactly the tests their pytest
fails. click 8.5.1 (src/ layout, 2,434 of 2,459 with `-m 'not stress'`) the same. simplejson 4.3.0 (no pytest
configuration, unittest tests in `simplejson/tests/`) was not sealed and its tests stayed protected: an honest test
added there blocked; fixed (test_own_product). pytest-mock 3.17.0 is left: its suite is not kept (its test module's
`pytest_plugins = "pytester"` registers pytester's hooks during collection, a tripwire), and any change of the plugin
(the product) unloads it, so a hidden test using `mocker` fails however honest the work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support import above_200
from tests.support.above_200 import CASES
from tests.support.repos import KIT, make_repo, run_hook, sealed_copy, sealed_project, stop_lines, stop_payload, write_config

PLUGGY = 'def origin():\n    return "the project\'s"\n'
CONFTEST = "import pluggy\nimport pytest\n\n\n@pytest.fixture\ndef where():\n    return pluggy.origin\n"
OWN = ("import pluggy\n\n\ndef test_the_fixture_gets_the_projects_pluggy(where):\n    assert where() == \"the project's\"\n\n\n"
       "def test_the_module_gets_the_projects_pluggy():\n    assert pluggy.origin() == \"the project's\"\n")
CALC = "def add(a, b):\n    return a + b\n"
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"


def _seal(repo, home, hidden: str = HIDDEN) -> subprocess.CompletedProcess:
    """`donegate seal` of `repo` with the acceptance test `hidden` (in a folder beside it), the kit's state in `home`."""
    test = repo.parent / "hidden" / "test_mul.py"
    test.parent.mkdir()
    test.write_text(hidden)
    return subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(test), "--request", "add mul"],
                          capture_output=True, text=True, cwd=KIT, timeout=180, env={**os.environ, "DONEGATE_HOME": str(home)})


def _pluggy(tmp_path_factory, kit_home):
    # was: "1 of 2 pass" at the seal (the fixture's test got the kit's pluggy, which has no `origin`)
    return sealed_project(tmp_path_factory, kit_home, "own-pluggy", {
        "pluggy/__init__.py": PLUGGY, "calc.py": CALC, "tests/conftest.py": CONFTEST, "tests/test_pluggy.py": OWN}, HIDDEN, 2)


@pytest.mark.own_suite
def test_a_conftest_of_a_project_that_is_pluggy_imports_the_projects_pluggy(tmp_path_factory, kit_home):
    repo = _pluggy(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # the look-alike: honest work passes, no tripwire on the project's pluggy

    (repo / "pluggy" / "__init__.py").write_text(PLUGGY.replace("the project's", "broken"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert sorted(f["id"] for f in own["failing"]) == [
        "tests/test_pluggy.py::test_the_fixture_gets_the_projects_pluggy",
        "tests/test_pluggy.py::test_the_module_gets_the_projects_pluggy"], own
    assert "tamper" not in res.stderr, res.stderr


DOCTESTED = ('def twice(n):\n    """The number doubled.\n\n    >>> twice(21)\n    42\n    """\n    return calc.add(n, n)\n\n\n'
             'def test_twice():\n    assert twice(2) == 4\n')


def _doctests(tmp_path_factory, kit_home):
    # was: refused at the seal, "the test run ended before reporting (exit code 4)" (`-p no:doctest` and the ini's option)
    return sealed_project(tmp_path_factory, kit_home, "own-doctests", {
        "calc.py": CALC, "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
        "tests/test_twice.py": "import calc\n\n\n" + DOCTESTED}, HIDDEN, 2)


@pytest.mark.own_suite
def test_a_suite_with_doctest_modules_in_its_addopts_is_sealed_and_its_doctests_block(tmp_path_factory, kit_home):
    """inflect 7.4.0 (and every project of jaraco's layout) has `addopts = --doctest-modules` in its pytest.ini."""
    repo = _doctests(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # the look-alike: honest work passes

    (repo / "calc.py").write_text("def add(a, b):\n    return a + b if a != 21 else 0\n\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "test_twice.twice" in res.stderr, res.stderr
    assert ">>> twice(21)\nExpected:\n    42\nGot:\n    0" in res.stderr, res.stderr  # was: only "<redacted>.py:7: DocTestFailure"
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert [f["id"] for f in own["failing"]] == ["tests/test_twice.py::test_twice.twice"], own


@pytest.mark.own_suite
def test_a_suite_whose_configuration_pytest_refuses_is_named_at_the_seal(tmp_path, kit_home):
    """async-lru 2.0.4's addopts name pytest-cov's and pytest-timeout's options: without them installed (or an option
    the run's pytest lacks), pytest refuses to start. The seal said only "the test run ended before reporting (exit
    code 4): the code under test may exit the process early"."""
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, "pytest.ini": "[pytest]\naddopts = --timeout=5\n",
                                         "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"})
    res = _seal(repo, kit_home)
    assert res.returncode == 1 and "pytest stopped before running any test (exit code 4)" in res.stderr, res.stderr
    assert "unrecognized arguments: --timeout=5" in res.stderr and "Traceback" not in res.stderr, res.stderr


@pytest.mark.own_suite
def test_a_suite_whose_addopts_name_a_plugin_the_runs_leave_off_is_kept(tmp_path_factory, kit_home):
    """async-lru 2.0.4's setup.cfg: `addopts = ... --cache-clear ...`, `junit_family = xunit2` (the look-alike of the
    refusal above: pytest's own plugins the runs leave off, their options taken and ignored). Was refused at the seal:
    "unrecognized arguments: --cache-clear"."""
    repo = sealed_project(tmp_path_factory, kit_home, "own-inert", {
        "calc.py": CALC, "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n",
        "pytest.ini": "[pytest]\naddopts = --strict-config --cache-clear --lf --sw --junitxml=out.xml\njunit_family = xunit2\n"},
        HIDDEN, 1)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "tests/test_calc.py::test_add" in res.stderr, res.stderr


def test_an_async_test_no_plugin_runs_is_refused_at_the_seal(tmp_path, kit_home):
    """async-lru 2.0.4's tests are bare `async def`s (its `asyncio_mode = auto`): an acceptance test written alike was
    sealed as "failing now" and blocked every stop with "async def functions are not natively supported"."""
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    res = _seal(repo, kit_home, HIDDEN + "\n\nasync def test_mul_async():\n    assert calc.mul(2, 3) == 6\n")
    assert res.returncode == 1 and "test_mul.py::test_mul_async: async def functions are not natively supported" in res.stderr, res.stderr
    assert "@pytest.mark.asyncio" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not list((kit_home / "acceptance").glob("*")) if (kit_home / "acceptance").is_dir() else True


@pytest.mark.own_suite
def test_an_own_suite_past_the_timeout_is_named_as_the_projects_with_the_key_to_raise(tmp_path, kit_home):
    """attrs 24.2.0's 1,330 tests (29 s bare) ran past 120 s in the seal's run, which records what each test reaches:
    the seal said "the hidden tests did not finish within 120 s", of the project's own, and not which key to raise."""
    # 10 s, not less: the hidden tests run first under the same timeout, and a loaded CI machine took over 3 s for them.
    write_config(kit_home, "timeout: 10\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"})
    res = _seal(repo, kit_home)
    assert res.returncode == 1 and "the project's own tests did not finish within 10 s (timeout)" in res.stderr, res.stderr
    assert "raise timeout: in donegate.yaml (seconds, now 10" in res.stderr and "hidden" not in res.stderr, res.stderr


def test_a_syntax_error_the_product_raises_is_shown_by_its_error_line(tmp_path_factory, kit_home):
    """attrs 24.2.0: `make_class` given a keyword as a field's name (the example hypothesis found) compiles code that
    does not parse; the block showed only `File "<string>", line 3` and "(6 more line(s) not shown)"."""
    def build(repo, home):
        make_repo(repo, {"calc.py": CALC})
        res = _seal(repo, home)
        assert res.returncode == 0, res.stdout + res.stderr

    repo = sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "syntax", build, kit_home)
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return eval(f'{a} * * {b}')\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "test_mul\n    SyntaxError: invalid syntax" in res.stderr, res.stderr
    # the look-alike: an assertion's first line is its own
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a + b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "test_mul\n    assert 5 == 6" in res.stderr, res.stderr


# pytest-asyncio<0.24 under the kit's pytest 9: its collection hook reads a FixtureManager attribute pytest dropped.
OLD_PLUGIN = ("def _preprocess(collector):\n    raise AttributeError(\"'FixtureManager' object has no attribute "
              "'_arg2fixturedefs'\")\n\n\ndef pytest_pycollect_makeitem(collector, name, obj):\n"
              "    if name.startswith('test_async'):\n        _preprocess(collector)\n")


@pytest.mark.own_suite
def test_a_plugin_of_the_environment_that_breaks_collection_is_named_with_its_version(tmp_path, kit_home):
    """A pytest plugin of the project's environment made for an older pytest (pytest-asyncio 0.23 in a real
    project) fails every test file's collection inside its own code. Was: "the test files do not collect:
    'FixtureManager' object has no attribute '_arg2fixturedefs'", with the hint to fix the tests' imports. Its
    look-alike: a test file that fails at its own top (an AttributeError of its own) keeps that hint. The fix given,
    `addopts = -p no:NAME`, is taken: the kit's runs leave the plugin out and the seal goes through."""
    repo = tmp_path / "repo"
    make_repo(repo, {"calc.py": CALC, ".gitignore": ".venv/\n__pycache__/\n"})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    (site / "pytest_oldplug").mkdir()
    (site / "pytest_oldplug" / "__init__.py").write_text("")
    (site / "pytest_oldplug" / "plugin.py").write_text(OLD_PLUGIN)
    (site / "pytest_oldplug-0.23.8.dist-info").mkdir()
    (site / "pytest_oldplug-0.23.8.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pytest-oldplug\nVersion: 0.23.8\n")
    (site / "pytest_oldplug-0.23.8.dist-info" / "entry_points.txt").write_text("[pytest11]\noldplug = pytest_oldplug.plugin\n")
    own_error = "import calc\n\ncalc.add.missing\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
    res = _seal(repo, kit_home, own_error)
    assert res.returncode != 0 and "do not collect" in res.stderr and "import" in res.stderr, res.stderr
    assert "oldplug" not in res.stderr, res.stderr
    shutil.rmtree(repo.parent / "hidden")
    res = _seal(repo, kit_home, HIDDEN.replace("def test_mul", "def test_async_mul"))
    assert res.returncode != 0 and "the pytest plugin pytest-oldplug 0.23.8 (oldplug) fails" in res.stderr, res.stderr
    assert "upgrade pytest-oldplug" in res.stderr and "-p no:oldplug" in res.stderr, res.stderr
    assert "fix the tests' imports" not in res.stderr and "make each test file import" not in res.stderr, res.stderr
    (repo / "tests").mkdir()  # the project's own tests broken by it alike
    (repo / "tests" / "test_calc.py").write_text("import calc\n\n\ndef test_async_add():\n    assert calc.add(1, 2) == 3\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "own tests"], cwd=repo, check=True)
    shutil.rmtree(repo.parent / "hidden")
    res = _seal(repo, kit_home)
    assert res.returncode != 0 and "the project's own tests do not collect: the pytest plugin pytest-oldplug 0.23.8 " \
        "(oldplug) fails" in res.stderr and "-p no:oldplug" in res.stderr, res.stderr
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -p no:oldplug\n")  # the fix it gave, taken
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "plugin off"], cwd=repo, check=True)
    shutil.rmtree(repo.parent / "hidden")
    res = _seal(repo, kit_home, HIDDEN.replace("def test_mul", "def test_async_mul"))
    assert res.returncode == 0 and "1 new requirements failing" in res.stdout, res.stdout + res.stderr
    assert "the project's own tests: 1 of 1 pass" in res.stdout, res.stdout


# wrapt 1.16.0's post-import hooks (`wrapt.when_imported('this')`): a finder on sys.meta_path answering for 'this' only,
# left there by the project's own tests, which import helpers of their folder (`from compat import PY2`) by plain import.
WRAPT_FINDER = ("import sys\n\n\nclass Finder:\n    def find_spec(self, fullname, path=None, target=None):\n"
                "        return None  # answers for the one module a hook waits for, none here\n\n\n"
                "def when_imported(name):\n    if not any(isinstance(f, Finder) for f in sys.meta_path):\n"
                "        sys.meta_path.insert(0, Finder())\n")
HOOKS_TEST = ("import hooks\nfrom compat import PY3\n\n\ndef test_when_imported():\n    hooks.when_imported('this')\n"
              "    assert PY3\n")


@pytest.mark.own_suite
def test_a_post_import_finder_left_by_tests_that_import_their_folders_helpers_keeps_the_suite(tmp_path_factory, kit_home):
    """wrapt 1.16.0: its tests import `compat.py` of their folder (plain import, not pytest's rewriter) and leave
    wrapt's post-import finder on sys.meta_path. Was: the whole own suite not kept ("they trip the run's tripwires at
    the seal (the code under test changed the test harness: sys.meta_path was changed ...)"): no regression of wrapt
    was ever seen. The look-alike, a finder that answers for a helper of the tests' folder, still trips them
    (tests/gate/test_as_developers_run.py holds the harness's)."""
    files = {"calc.py": CALC, "hooks.py": WRAPT_FINDER, "tests/compat.py": "PY3 = True\n", "tests/test_hooks.py": HOOKS_TEST,
             "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"}
    repo = sealed_project(tmp_path_factory, kit_home, "own-wrapt", files, HIDDEN, 2)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "tests/test_calc.py::test_add" in res.stderr and "tamper" not in res.stderr, res.stderr

    spy = tmp_path_factory.mktemp("spy") / "repo"  # the look-alike: a finder that answers for the tests' helper
    make_repo(spy, {**files, "hooks.py": WRAPT_FINDER.replace("return None  #", "return None if fullname != 'compat' else "
                                                                               "__import__('importlib.util').util.find_spec('json')  #")})
    res = _seal(spy, kit_home)
    assert "the project's own tests: not sealed (not kept: they trip the run's tripwires" in res.stdout, res.stdout + res.stderr


CLI = "#!{python}\nimport sys\n\nimport calc\n\nprint(getattr(calc, sys.argv[1])(*map(int, sys.argv[2:])))\n"
RUNS_CLI = ("import subprocess\n\n\ndef test_{name}_on_the_command_line():\n"
            "    out = subprocess.run(['calc-cli', '{name}', '2', '3'], capture_output=True, text=True, check=True).stdout\n"
            "    assert out == '{want}\\n'\n")


@pytest.mark.own_suite
def test_the_projects_console_script_is_on_the_runs_path_as_in_its_activated_environment(tmp_path, kit_home):
    """python-dotenv 1.0.1's CLI tests run its console script (`sh.dotenv("run", ...)`), as the developer's activated
    `.venv` finds it on PATH. Was: 6 of its tests failing at the seal (never blocking: a regression of `dotenv run`
    passed), and an acceptance test of a new subcommand written alike failing at every stop, however honest the
    work ("No such file or directory: 'calc-cli'")."""
    repo = tmp_path / "repo"
    make_repo(repo, {"calc.py": CALC, ".gitignore": ".venv/\n__pycache__/\n",
                     "tests/test_cli.py": RUNS_CLI.format(name="add", want=5)})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    (site / "calc.pth").write_text(str(repo) + "\n")  # the project installed editable, as `pip install -e .` does
    script = repo / ".venv" / "bin" / "calc-cli"
    script.write_text(CLI.format(python=repo / ".venv" / "bin" / "python"))
    script.chmod(0o755)
    res = _seal(repo, kit_home, RUNS_CLI.format(name="mul", want=6))
    assert res.returncode == 0 and "the project's own tests: 1 of 1 pass" in res.stdout, res.stdout + res.stderr
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo))  # the look-alike: a regression the script shows still blocks
    assert res.returncode == 2 and "tests/test_cli.py::test_add_on_the_command_line" in res.stderr, res.stderr


LEGACY_HOOK = "def pytest_pycollect_makemodule({arg}, parent):\n    return None\n"


@pytest.mark.own_suite
def test_a_conftest_hook_the_kits_pytest_refuses_is_named_at_the_seal(tmp_path, kit_home):
    """wrapt 1.16.0's tests/conftest.py declares `pytest_pycollect_makemodule(path, parent)`: its developers' pytest 7
    takes it, the kit's pytest 9 (which dropped the py.path arguments) refuses the conftest before any test runs. The
    seal said "the test run ended before reporting (exit code 1): the code under test may exit the process early".
    The look-alike, the hook as pytest 7+ spells it (`module_path`), is sealed."""
    files = {"calc.py": CALC, "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"}
    repo = make_repo(tmp_path / "repo", {**files, "tests/conftest.py": LEGACY_HOOK.format(arg="path")})
    res = _seal(repo, kit_home)
    assert res.returncode == 1 and "pytest stopped before running any test (exit code 1)" in res.stderr, res.stderr
    assert "the kit's pytest refuses the hook pytest_pycollect_makemodule(path, parent): " in res.stderr, res.stderr
    assert "Argument(s) {'path'} are declared in the hookimpl but can not be found in the hookspec" in res.stderr
    assert "may exit the process early" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    ok = make_repo(tmp_path / "ok" / "repo", {**files, "tests/conftest.py": LEGACY_HOOK.format(arg="module_path")})
    res = _seal(ok, kit_home)
    assert res.returncode == 0 and "the project's own tests: 1 of 1 pass" in res.stdout, res.stdout + res.stderr


RESOLVE = ("def resolve_path(module, name):\n    return getattr(__import__(module), name)\n\n\n"
           "def wrap_object(module, name, factory):\n    original = resolve_path(module, name)\n    return factory(original)\n")


def test_the_seal_names_the_projects_functions_a_new_call_into_is_blocked(tmp_path, kit_home):
    """wrapt 1.16.0's `resolve_path` holds `__import__(module)` (dynamic-code, the project's own) and the rest of
    `patches.py` calls it: an honest new `unwrap_function_wrapper` calling it as its siblings do was blocked ("calls
    resolve_path(), which holds the project's own dynamic-code finding"), while the seal had said only that a change
    adding such code (a copy of a line) is blocked. It now names the function, so the person who means it allows the
    rule at the seal. The look-alike: a finding in no function anyone calls names none. And (typeguard 4.6.1's honest
    test calling `check_type()` was blocked as its `frame-walk`) a new call from a test function of a test file is a
    test of the function, not a use of its finding: it passes; the same call from the product is still blocked."""
    write_config(kit_home, "scan: block\nmax_same_failure: 0\nmax_blocks: 7\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, "patches.py": RESOLVE})
    res = _seal(repo, kit_home)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "or a new call into a function holding it (resolve_path(), called from 1 place)" in res.stdout, res.stdout
    done = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
    (repo / "calc.py").write_text(done)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_patches.py").write_text("import os\n\nfrom patches import resolve_path\n\n\n"
                                                    "def test_resolve():\n    assert resolve_path('os', 'sep') == os.sep\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "calc.py").write_text("from patches import resolve_path\n\n\n" + done
                                  + "\n\ndef sep():\n    return resolve_path('os', 'sep')\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calc.py" in res.stderr and "calls resolve_path()" in res.stderr, res.stderr
    # only what pytest collects is a test (review A, trial): a `Test*` class's method not named `test_*`, a
    # `testing_*` function, a `test_*` method of a class not named `Test*`, a test-file name pytest does not collect,
    # or a collected test function the product imports, all called from the product, are the product's calls
    # One stop for the five, each in a file of its own (collected by pytest or not by its name alone, as before) and
    # each a finding at its own two lines in the stop's record (the block shows the first few, "and N more"): one that
    # stopped being the product's call would be missing.
    shim = "from patches import resolve_path\n\n\nclass {cls}:\n    @staticmethod\n    def {meth}(m, n):\n"
    shim += "        return resolve_path(m, n)\n\n\ndef {fn}(m, n):\n    return resolve_path(m, n)\n"
    cases = (("tests/shim1.py", "TestShim", "get", "testing_get"),
             ("tests/test_shim2.py", "TestShim", "get", "testing_get"),
             ("tests/test_shim3.py", "Shim", "test_get", "testing_get"),
             ("tests/shim4.py", "TestShim", "test_get", "test_fn"),
             ("tests/test_shim5.py", "TestShim", "test_get", "test_fn"))
    calls = []
    for k, (file, cls, meth, fn) in enumerate(cases):
        (repo / file).write_text(shim.format(cls=cls, meth=meth, fn=fn))
        calls.append((f"from {file[:-3].replace('/', '.')} import {cls} as C{k}, {fn} as f{k}\n",
                      f"C{k}.{meth}('os', 'sep') + f{k}('os', 'sep')"))
    (repo / "calc.py").write_text("".join(i for i, _ in calls) + "\n\n" + done
                                  + "\n\ndef sep():\n    return " + " + ".join(c for _, c in calls) + "\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "calls resolve_path()" in res.stderr and "tests/shim1.py:7" in res.stderr, res.stderr
    found = stop_lines(kit_home)[-1]["gates"]["scan"]["findings"]
    for file, *_ in cases:
        assert {(file, 7), (file, 11)} <= {(f["file"], f["line"]) for f in found}, (file, found)
        (repo / file).unlink()
    (repo / "calc.py").write_text(done)  # the look-alike: a `test_*` method of a `Test*` class pytest collects
    (repo / "tests" / "test_shim.py").write_text("import os\n\nfrom patches import resolve_path\n\n\nclass TestShim:\n"
                                                 "    def test_get(self):\n        assert resolve_path('os', 'sep') == os.sep\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    alone = make_repo(tmp_path / "alone" / "repo", {"calc.py": CALC, "patches.py": RESOLVE.split("\n\n\n")[0] + "\n"})
    res = _seal(alone, kit_home)
    assert res.returncode == 0 and "dynamic-code" in res.stdout and "a new call into" not in res.stdout, res.stdout


# typeguard 4.6.1: its own pytest plugin (`pytest11` entry point `typeguard = typeguard._pytest_plugin`, installed
# editable from src/), which its developers' pytest loads before any test, as every plugin project's suite relies on.
TALLY = "def count(t):\n    t['calls'] += 1\n\n\ndef add(a, b):\n    return a + b\n"
TALLY_PLUGIN = ("import pytest\n\nimport tally\n\nsettings = {'name': None}\n\n\n@pytest.fixture\ndef counter():\n"
                "    return {'calls': 0}\n\n\ndef pytest_addoption(parser):\n    parser.addoption('--tally-name')\n\n\n"
                "def pytest_configure(config):\n    settings['name'] = config.getoption('tally_name', None)\n")
FLIP = ("\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n    report = yield\n"
        "    report.outcome = 'passed'\n    return report\n")
# typeguard's tests/test_pytest_plugin.py: each patches the plugin's module by its dotted name, then has pytester's
# pytest load the plugin; the first pytester test dropped the plugin's module from sys.modules (pytester restores the
# modules it found), so the second patched a module no longer loaded, and the plugin set the real settings.
PYTESTER_TESTS = ("import pytest\n\n\n@pytest.fixture\ndef fresh(monkeypatch):\n"
                  "    mine = {'name': None}\n    monkeypatch.setattr('tally.plugin.settings', mine)\n    return mine\n\n\n"
                  "def test_first(pytester, fresh):\n    pytester.plugins = ['tally']\n"
                  "    pytester.parseconfigure('--tally-name=one')\n    assert fresh['name'] == 'one'\n\n\n"
                  "def test_second(pytester, fresh):\n    pytester.plugins = ['tally']\n"
                  "    pytester.parseconfigure('--tally-name=two')\n    assert fresh['name'] == 'two'\n")
USES_FIXTURE = "from tally import count\n\n\ndef test_count(counter):\n    count(counter)\n    assert counter['calls'] == 1\n"


def _plugin_project(repo, kit_home):
    """A src-layout project installed editable in its `.venv` whose distribution declares its own pytest plugin."""
    make_repo(repo, {".gitignore": ".venv/\n__pycache__/\n", "src/tally/__init__.py": TALLY,
                     "src/tally/plugin.py": TALLY_PLUGIN, "tests/test_count.py": USES_FIXTURE,
                     "tests/test_plugin.py": PYTESTER_TESTS,
                     "tests/conftest.py": "pytest_plugins = ['pytester']\n"})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    (site / "tally.pth").write_text(str(repo / "src") + "\n")
    info = site / "tally-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tally\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\ntally = tally.plugin\n")
    # the hidden tests' runs leave the project's own plugin out (what it imports would run before the tripwires)
    res = _seal(repo, kit_home, "import sys\n\nfrom tally import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                                "def test_plugin_left_out():\n    assert 'tally.plugin' not in sys.modules\n")
    assert res.returncode == 0, res.stdout + res.stderr
    return res, site


@pytest.mark.own_suite
def test_the_projects_own_pytest_plugin_is_loaded_while_it_is_as_sealed(tmp_path, kit_home):
    """typeguard 4.6.1: 24 of its tests failed only in the kit (never blocking): the runs left its own plugin out
    (the project's code), so `test_commandline_options` patched a module pytester had dropped, and the plugin then set
    the real global configuration, which 20 later tests of `@typechecked` read. A plugin project's tests that use its
    own fixtures (pytest-mock's `mocker` in its own suite) all failed at the seal alike."""
    res, site = _plugin_project(tmp_path / "repo", kit_home)
    assert "the project's own tests: 3 of 3 pass" in res.stdout, res.stdout  # was: 1 of 3 (fixture 'counter' not found)
    repo = tmp_path / "repo"
    (repo / "src" / "tally" / "__init__.py").write_text(TALLY + "\n\ndef mul(a, b):\n    return a * b\n")
    (repo / "tests" / "test_count.py").write_text(USES_FIXTURE + "\n\ndef test_mul():\n    from tally import mul\n\n"
                                                  "    assert mul(2, 3) == 6\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # honest: a new function and a test for it in an existing test file
    (repo / "src" / "tally" / "__init__.py").write_text(TALLY.replace("t['calls'] += 1", "pass"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "tests/test_count.py::test_count" in res.stderr, res.stderr  # was: passed

    # The agent's plugin that passes every test: the project's own plugin changed, it is not loaded ...
    (repo / "src" / "tally" / "plugin.py").write_text(TALLY_PLUGIN + FLIP)
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "tests/test_count.py::test_count" in res.stderr, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["plugins_not_loaded"] == ["tally"]
    # ... nor one it declares beside it (an entry point the seal did not record)
    (repo / "src" / "tally" / "plugin.py").write_text(TALLY_PLUGIN)
    (repo / "src" / "tally" / "flip.py").write_text("import pytest\n" + FLIP)
    (site / "tally-1.0.dist-info" / "entry_points.txt").write_text("[pytest11]\ntally = tally.plugin\nflip = tally.flip\n")
    res = run_hook(stop_payload(repo, session="s3"))
    assert res.returncode == 2 and "tests/test_count.py::test_count" in res.stderr, res.stderr


def test_the_seal_names_a_fixture_only_the_projects_own_plugin_would_serve():
    """pytest-mock 3.17.0: a hidden test asking for `mocker` failed at the seal ("new requirement failing") and at every
    stop ("fixture 'mocker' not found"), however honest the work: the hidden runs leave the project's own plugin out
    (its hooks would run where the verdict is made; the FLIP attack above). The seal now names the fixture with the
    way a plugin's tests take (pytester), as `seal` prints it (by hand on pytest-mock: the warning names 'mocker').
    The look-alikes: the same failure in a project with no plugin of its own (an environment plugin's fixture the
    project lacks, a typo) names nothing; a plugin of the environment's alone names nothing."""
    from donegate.seal import sealing

    failing = {"test_request.py::test_a": "fixture 'mocker' not found", "test_request.py::test_b": "assert 1 == 2",
               "test_request.py::test_c": "fixture 'mocker' not found\n fixture 'class_mocker' not found"}
    own = [{"name": "pytest_mock", "module": "pytest_mock", "own": True}]
    assert sealing._unserved(own, failing) == ["class_mocker", "mocker"]
    assert sealing._unserved([{"name": "asyncio", "module": "pytest_asyncio"}], failing) == []
    assert sealing._unserved(None, failing) == [] and sealing._unserved(own, {"t": "assert 1 == 2"}) == []


# wrapt 2.5.2's tests/conftest.py collects its mypy pairs as its own items: tests/support/above_200.py (CASES).


@pytest.mark.own_suite
def test_a_suite_with_a_conftests_own_items_is_kept_above_200_tests(tmp_path_factory, kit_home):
    """wrapt 2.5.2 (1,418 tests): its conftest's own items have no test function, and above 200 tests each test's
    function is checked as it starts: the whole own suite was not kept ("the test function tests/conftest.py::mypy_
    auto_object_proxy_t1 was replaced before it ran"), and no regression of wrapt was ever seen."""
    res = above_200.broken(tmp_path_factory, kit_home)  # its seal: all 205 own tests kept, the conftest's 2 items in
    assert res["returncode"] == 2 and "tests/add.case::add_1_2" in res["stderr"], res["stderr"]
    # (its stop is test_own_doctests.py's too: `twice` broken beside `add`, which only calc.twice's example sees)
    assert above_200.failing(res, "tests/add.case::") == ["tests/add.case::add_1_2", "tests/add.case::add_2_2"], \
        res["own"]


@pytest.mark.own_suite
def test_a_replaced_test_function_is_caught_beside_a_conftests_own_items(tmp_path, kit_home):
    """The look-alike, below 200 tests: one item of a conftest's own, without a function, left every test of the run
    unfingerprinted (the C loop raised: the whole section None at every check), so a product that replaced the
    collected tests' functions passed with the bug in. Now caught as tampering with the harness; the right product
    passes."""
    write_config(kit_home, "scan_allow: [gc-objects]\n")
    files = {"calc.py": CALC, "tests/conftest.py": CASES, "tests/add.case": "1 2 3\n",
             "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(2, 5) == 7\n"}
    repo = make_repo(tmp_path / "repo", files)
    res = _seal(repo, kit_home)
    assert res.returncode == 0 and "the project's own tests: 2 of 2 pass" in res.stdout, res.stdout + res.stderr
    (repo / "calc.py").write_text("import gc\n\n\ndef add(a, b):\n"
                                  "    for it in [o for o in gc.get_objects() if type(o).__name__ == 'Function']:\n"
                                  "        it._obj = lambda **kw: None\n    return a + b if b != 5 else 0\n\n\n"
                                  "def mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo), timeout=300)
    assert res.returncode == 2 and "was replaced" in res.stderr, res.stderr
    (repo / "calc.py").write_text(CALC + "\n\ndef mul(a, b):\n    return a * b\n")
    res = run_hook(stop_payload(repo, session="s2"), timeout=300)
    assert res.returncode == 0, res.stderr


# wrapt 2.5.2's ObjectProxy says it is of its wrapped value's class (`__class__` a property), as a transparent proxy does.
PROXY = ("class Proxy:\n    def __init__(self, wrapped):\n        self.__wrapped__ = wrapped\n\n    @property\n"
         "    def __class__(self):\n        return type(self.__wrapped__)\n\n    def __eq__(self, other):\n"
         "        return {eq}\n\n    def __ne__(self, other):\n        return not self == other\n\n    __hash__ = None\n")
HONEST_EQ = "self.__wrapped__ == other"
IADD = "\n    def __iadd__(self, other):\n        return Proxy(self.__wrapped__ + other)\n"


@pytest.mark.own_suite
def test_a_proxy_that_says_it_is_its_values_class_compares_as_the_value(tmp_path_factory, kit_home):
    """wrapt 2.5.2: 53 of its tests (`self.assertEqual(p1, 15)`, p1 an ObjectProxy of 15) failed only in the kit: the
    equality probe took the proxy for an int subclass (`isinstance` believes `__class__`) and `int.__int__` refused it,
    so the assert failed. A hidden test written alike blocked every honest stop. The look-alikes: a proxy equal to
    everything, or to the value and its neighbour, still fails."""
    repo = sealed_project(tmp_path_factory, kit_home, "own-proxy", {
        "proxy.py": PROXY.format(eq=HONEST_EQ),
        "tests/test_proxy.py": "from proxy import Proxy\n\n\ndef test_eq():\n    assert Proxy(15) == 15\n"},
        "from proxy import Proxy\n\n\ndef test_iadd():\n    p = Proxy(10)\n    p += 5\n    assert p == 15\n", 1)
    (repo / "proxy.py").write_text(PROXY.format(eq=HONEST_EQ) + IADD)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr  # was: blocked, "assert <proxy.Proxy object at 0x...> == 15"
    assert stop_lines(kit_home)[-1]["gates"]["acceptance"]["second"]["checked"] == 1  # the second run agrees
    (repo / "proxy.py").write_text(PROXY.format(eq="True") + IADD)
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "equal to everything" in res.stderr, res.stderr
    (repo / "proxy.py").write_text(PROXY.format(eq="other in (15, 16) or " + HONEST_EQ) + IADD.replace("+ other", "* 0 + 15"))
    res = run_hook(stop_payload(repo, session="s3"))
    assert res.returncode == 2 and "test_iadd" in res.stderr, res.stderr


# more-itertools 11.2.1's test_primes: 9,592 subtests, each stepping sieve's generators (~10^8 steps in all). The seal's
# reach map reads each step's frame's code (`frame.f_code`, an audit event in Python 3.11+); the run's watch on the
# stack (`_watch`) then walked to the reader's frame and read its code too: two audited reads more, a step.
STEPS = "def numbers(n):\n    yield from range(n)\n\n\ndef nth(i):\n    for k, n in enumerate(numbers(i + 1)):\n" \
        "        if k == i:\n            return n\n"
COUNTED = ("import sys\nimport unittest\n\nimport steps\n\nWALKS = []\n\n\ndef _count(event, args):\n"
           "    if WALKS and event == 'sys._getframe':\n        WALKS[-1] += 1\n\n\nsys.addaudithook(_count)\n\n\n"
           "class StepTests(unittest.TestCase):\n    def test_steps(self):\n        walks = 0\n"
           "        for i in range(0, 400, 10):\n            with self.subTest(i=i):\n                WALKS.append(0)\n"
           "                try:\n                    got = steps.nth(i)\n                finally:\n"
           "                    walks += WALKS.pop()\n                self.assertEqual(got, i)\n"
           "        self.assertLess(walks, 50)  # 40 subtests, 8,000 generator steps: was one walk or more a step\n")


@pytest.mark.own_suite
def test_a_suite_of_many_generator_steps_is_sealed_without_a_stack_walk_per_step(tmp_path_factory, kit_home):
    """more-itertools 11.2.1: its test_recipes.py (145 tests, 9,876 subtests, ~13 CPU-s bare) did not finish within
    `timeout: 900` at the seal. The project's own test counts the stack walks (`sys._getframe`) while the product's
    generators step, within its subtests: was one or more a step in the seal's run (0 of 1 pass, the cost of every
    step); none now. The attack beside it, code walking to pytest's frames and reading their code, is still named
    (test_redteam.py's frame-walk-to-the-harness, test_scan_baseline.py's walk in the agent's new code)."""
    _steps(tmp_path_factory, kit_home)  # its seal: tests/test_walks.py (COUNTED) passes


# The reach map's trace now takes a frame's file from its globals' `__file__` (no audit event); its code only where
# those hold none (code run by `exec`): a step read no code then, where it read one (and so called every audit hook).
READS = COUNTED.replace("event == 'sys._getframe'", "event == 'object.__getattr__' and args[1] == 'f_code'")


def _steps(tmp_path_factory, kit_home):
    """The project of both tests of the generator steps, sealed once in the run, all 3 of its own tests passing at
    the seal: tests/test_walks.py counts the stack walks, tests/test_steps.py the frames' code read, each with an audit
    hook of its own that counts only while its own test steps (the other's list is empty then)."""
    return sealed_project(tmp_path_factory, kit_home, "own-steps", {
        "calc.py": CALC, "steps.py": STEPS, "tests/test_walks.py": COUNTED, "tests/test_steps.py": READS,
        "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"}, HIDDEN, 3)


@pytest.mark.own_suite
def test_the_reach_maps_trace_reads_no_frames_code_at_a_generator_step(tmp_path_factory, kit_home):
    """more-itertools 11.2.1's whole suite (765 tests, 21,194 subtests) sealed at ~14x its bare pytest's CPU: each of
    its ~10^8 generator steps was a `frame.f_code` read in the trace, an audit event every hook of the run then saw.
    The project's own test counts those reads while the product's generators step: 8,000 in the seal's run (0 of 1
    pass); none now. The map is the same: the test beside it still reaches `steps.py` (a change there runs it)."""
    repo = _steps(tmp_path_factory, kit_home)  # its seal: tests/test_steps.py (READS) passes
    (repo / "steps.py").write_text(STEPS.replace("return n", "return n + 1"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "tests/test_steps.py::StepTests::test_steps" in res.stderr, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    # placed by the map: the two files that reach steps.py, never tests/test_calc.py
    assert own["ran_sealed"] != "all" and sorted(own["ran_sealed"]) == ["tests/test_steps.py", "tests/test_walks.py"], own
