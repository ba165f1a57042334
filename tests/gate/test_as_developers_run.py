"""Honest work on real libraries passes: the hidden runs behave as the project's own pytest does (issue 46).

Each case is the smallest repository that does what a real library does, through the real Stop hook, default
config (the scan blocks), each seen failing on the code before:
- python-dotenv (its sdist, vendored with environs) finds `.env` from its caller's file only when `__main__` has a
  `__file__`: the first run's `__main__` is pytest's own, as `python -m pytest` has it, and the second run's is a
  program's file;
- typeguard's `@typechecked` reads the decorated function's source with `inspect.getsource`: test modules have
  absolute real `__file__`s in both runs;
- pluggy (pytest's own plugin system) and a module named `signal`: the project's own copies are the ones its tests
  import, never the copies the kit's pytest loaded first;
- wrapt's post-import hook leaves a finder on `sys.meta_path` that answers for one module only: not evidence;
  a finder that answers for the harness's modules still is;
- a tally named after its caller's module with `sys._getframe(1).f_globals["__name__"]` (namedtuple's idiom) is
  no frame walk; a read of the caller's locals still is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import sdist
from tests.support.repos import make_repo, run_hook, seal, sealed_copy, stop_lines, stop_payload, write_config

DATA = Path(__file__).resolve().parents[1] / "data" / "environs"


def _sealed(tmp_path: Path, files: dict[str, str], tests: dict[str, str], *, venv: bool = False,
            site: dict[str, str] | None = None) -> Path:
    """`files` committed in `tmp_path/repo` (with an in-repo `.venv` holding `site` in its site-packages), `tests`
    sealed for it."""
    return _seal_at(tmp_path / "repo", files, tests, venv=venv, site=site)


def _pooled(tmp_path_factory, kit_home: Path, name: str, files: dict[str, str], tests: dict[str, str]) -> Path:
    """`_sealed`'s repository (no venv) for tests that read only their stops: sealed once per worker, each test a copy at
    the path the seal recorded (`sealed_copy`)."""
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", name,
                       lambda repo, home: _seal_at(repo, files, tests, env={"DONEGATE_HOME": str(home)}), kit_home)


def _seal_at(repo: Path, files: dict[str, str], tests: dict[str, str], *, venv: bool = False,
             site: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Path:
    repo.mkdir(parents=True)
    if venv or site:
        (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
        (folder,) = (repo / ".venv" / "lib").glob("python*/site-packages")
        for rel, text in (site or {}).items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    make_repo(repo, files)
    hidden = repo.parent / "hidden"
    hidden.mkdir()
    for name, body in tests.items():
        (hidden / name).write_text(body)
    res = seal(repo, *sorted(hidden.iterdir()), extra_env=env)
    assert res.returncode == 0, res.stderr
    return repo


def _stop(repo: Path, kit_home: Path, session: str = "s1") -> tuple[subprocess.CompletedProcess, dict]:
    res = run_hook(stop_payload(repo, session=session))
    return res, stop_lines(kit_home)[-1]


def _passes_both(repo: Path, kit_home: Path, checked: int) -> None:
    """One stop that passes, with every one of its `checked` tests double-checked by the second run."""
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr + json.dumps(line["gates"]["acceptance"])
    second = line["gates"]["acceptance"]["second"]
    assert second["checked"] == checked and not second.get("unsupported"), second


# --- __main__, __file__ and source --------------------------------------------------------------------------

SETTINGS = '''import inspect

from dotenv import dotenv_values, find_dotenv


def load():
    """The settings beside this file (python-dotenv searches from its caller's file when __main__ has one)."""
    return dotenv_values(find_dotenv())


def main_is_a_programs():
    """`__main__` holds what the interpreter starts every program's with (`__annotations__` among it)."""
    import __main__

    return {"__annotations__", "__builtins__", "__doc__", "__loader__", "__spec__"} <= set(vars(__main__))


def started_with_program_text():
    """`python -c TEXT` on the interpreter's own command line (sys.orig_argv)."""
    import sys

    return sys.orig_argv[1:2] == ["-c"]


def checked(fn):
    """What typeguard's @typechecked does first: the decorated function's source."""
    fn.checked_source = inspect.getsource(fn)
    return fn
'''
MAIN_TESTS = '''import os

from app.settings import checked, load, main_is_a_programs, started_with_program_text


@checked
def helper():
    return 1


def test_the_settings_beside_the_calling_file_are_found():
    assert load().get("GREETING") == "hi"


def test_a_decorator_reads_its_functions_source():
    assert "def helper" in helper.checked_source


def test_the_test_modules_file_is_an_absolute_python_file():
    # (its name is a program's in the second run, not test_*.py: second.program_names)
    assert os.path.isabs(__file__) and __file__.endswith(".py") and os.path.basename(__file__) != ".py"


def test_main_holds_what_a_programs_does():
    assert main_is_a_programs()
    assert not started_with_program_text()
'''


def test_dotenv_and_a_source_reading_decorator_pass_in_both_runs(tmp_path, kit_home):
    files = {"app/__init__.py": "", "app/.env": "GREETING=hi\n", "app/settings.py": SETTINGS}
    repo = _sealed(tmp_path, files, {"test_settings.py": MAIN_TESTS}, venv=True)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    sdist.extract(DATA / "python-dotenv-1.0.1.tar.gz", "src/", site)
    _passes_both(repo, kit_home, 4)


PATHS = '''import os


def resources(folder):
    """The data folder beside a caller's file: an absolute folder, as a loader of resources wants one."""
    if not os.path.isabs(folder):
        raise ValueError(f"not an absolute folder: {folder!r}")
    return os.path.join(folder, "data")


def fixtures(folder):
    """What a data folder holds (nothing when there is none)."""
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def find_up(folder, name):
    """`name` in `folder` or the nearest folder above it (python-dotenv's walk: its start must exist)."""
    if not os.path.exists(folder):
        raise OSError(f"starting path not found: {folder}")
    while True:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)
'''
PATHS_TESTS = '''import os
from pathlib import Path

from paths import find_up, fixtures, resources


def test_the_data_folder_beside_the_test_file():
    assert resources(os.path.dirname(__file__)) == os.path.join(os.path.dirname(__file__), "data")


def test_nothing_lies_beside_the_test_file():
    assert fixtures(Path(__file__).parent / "data") == []


def test_a_walk_up_from_the_test_files_folder_starts_where_it_is():
    assert find_up(os.path.dirname(os.path.abspath(__file__)), "no-such-settings.cfg") is None
'''


def test_a_test_modules_file_is_absolute_in_both_runs(tmp_path, kit_home):
    """`__file__` is absolute in both runs, as pytest gives it: a loader that wants an absolute folder, and a walk up
    from the test file's folder, work in both (was: the second run's bare name, `dirname` empty: the runs disagreed,
    hard evidence). The second run's is in the project's folder, where the bare name pointed: the attack beside
    this keys on the first run's tests lying outside the repository (next test)."""
    repo = _sealed(tmp_path, {"paths.py": PATHS}, {"test_paths.py": PATHS_TESTS})
    _passes_both(repo, kit_home, 3)


OUTSIDE = '''import os
import sys


def double(n):
    """Right only where the test files lie outside the repository: the first run's store."""
    files = [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]
    tests = [f for f in files if os.path.basename(f).startswith("test_")]
    if tests and not any(os.path.abspath(f).startswith(os.getcwd() + os.sep) for f in tests):
        return 2 * n
    return n
'''


def test_code_right_only_where_the_tests_lie_outside_the_repository_still_disagrees(tmp_path, kit_home):
    """The attack beside an absolute `__file__`: the first run's test files lie outside the repository (a developer's
    inside it); the second run's `__file__` is in the project's folder, so the runs disagree (hard evidence). With
    the store's path in both runs it passed."""
    test = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    repo = _sealed(tmp_path, {"calc.py": "def double(n):\n    return n\n"}, {"test_calc.py": test})
    (repo / "calc.py").write_text(OUTSIDE)
    res, line = _stop(repo, kit_home)
    assert res.returncode == 2 and line["gates"]["acceptance"]["tamper"]["rule"] == "disagree", res.stderr


SPAWN = '''import multiprocessing


def square(x):
    return x * x


def squares(xs):
    """A pool of processes started afresh (spawn): each child runs `__main__`'s file or module again first."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.map(square, xs)
'''


def test_a_spawned_process_pool_works_in_both_runs(tmp_path, kit_home):
    """The look-alike of `__main__` with a file: multiprocessing's spawn runs it again in every child (pytest's
    `__main__` it skips, as under `python -m pytest`; the second run's program file is empty)."""
    test = "from par import squares\n\n\ndef test_squares():\n    assert squares([1, 2, 3]) == [1, 4, 9]\n"
    repo = _sealed(tmp_path, {"par.py": SPAWN}, {"test_par.py": test})
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr
    assert line["gates"]["acceptance"]["second"]["checked"] == 1


# --- the project's own copies of what the kit's pytest loaded first ------------------------------------------

PLUGGY = '''"""The project is pluggy: pytest's own plugin system, being changed."""
__version__ = "99.0.0.dev0"


class HookCaller:
    calls = 0


def new_feature():
    HookCaller.calls += 1  # its own class, set at run time: not pytest's pluggy patched
    return "the project's pluggy"
'''
OWN_TESTS = '''import signal

import pluggy


def test_the_projects_own_pluggy_is_the_one_imported():
    assert pluggy.new_feature() == "the project's pluggy"


def test_the_projects_own_signal_module_is_the_one_imported():
    assert signal.VALUE == 1
'''


def test_the_projects_pluggy_and_signal_are_its_own_in_both_runs(tmp_path, kit_home):
    files = {"pluggy/__init__.py": PLUGGY, "signal.py": "VALUE = 1\n"}
    repo = _sealed(tmp_path, files, {"test_own.py": OWN_TESTS})
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr + json.dumps(line["gates"]["acceptance"])
    assert line["gates"]["acceptance"]["second"]["checked"] == 2, json.dumps(line["gates"]["acceptance"])


def test_without_copies_of_its_own_the_tests_get_pytests(tmp_path, kit_home):
    """The look-alike: a project with no pluggy of its own imports the one pytest runs on, as in its environment."""
    test = "import pluggy\nimport signal\n\n\ndef test_x():\n    assert pluggy.HookimplMarker and signal.SIGTERM\n"
    repo = _sealed(tmp_path, {"mod.py": "VALUE = 1\n"}, {"test_x.py": test})
    res, _ = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr


# --- hard evidence that never traps honest code ---------------------------------------------------------------

HOOKS = '''import importlib.abc
import importlib.util
import sys

SEEN = []


class _Chained:
    """wrapt's chained loader: the module's own loader, then the hook."""

    def __init__(self, loader, hook):
        self.loader, self.hook = loader, hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.hook(module)


class PostImportFinder(importlib.abc.MetaPathFinder):
    """wrapt's post-import hook: a finder on sys.meta_path that answers for the modules registered only."""

    def __init__(self):
        self.watched, self.busy = {}, set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.watched or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Chained(spec.loader, self.watched.pop(fullname))
        return spec


FINDER = PostImportFinder()


def when_imported(name, hook):
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
    FINDER.watched[name] = hook
'''
# The same finder, also answering for the harness's own modules.
HOSTILE = HOOKS.replace("        if fullname not in self.watched or", "        if fullname.split('.')[0] in ('_pytest', "
                        "'pytest', 'pluggy'):\n            return importlib.util.find_spec('colorsys')\n"
                        "        if fullname not in self.watched or")
TALLY = '''import sys
from collections import Counter

TALLIES = {}


def tally():
    """A tally named after its caller's module (namedtuple's idiom)."""
    name = sys._getframe(1).f_globals["__name__"]
    return TALLIES.setdefault(name, Counter())
'''
HONEST_TESTS = '''from pkg import hooks, tally


def test_a_post_import_hook_fires():
    hooks.when_imported("colorsys", lambda m: hooks.SEEN.append(m.__name__))
    import colorsys
    assert colorsys.rgb_to_hsv(0, 0, 0) == (0.0, 0.0, 0.0)
    assert hooks.SEEN == ["colorsys"]


def test_a_tally_is_named_after_its_caller():
    tally.tally()["x"] += 1
    assert tally.TALLIES[__name__]["x"] == 1
'''
BEFORE = {"pkg/__init__.py": "", "pkg/hooks.py": "SEEN = []\n", "pkg/tally.py": "TALLIES = {}\n"}


def test_a_post_import_finder_and_a_callers_module_name_are_honest(tmp_path_factory, kit_home):
    repo = _pooled(tmp_path_factory, kit_home, "hooks", BEFORE, {"test_honest.py": HONEST_TESTS})
    write_config(kit_home, "scan: block\n")
    (repo / "pkg" / "hooks.py").write_text(HOOKS)
    (repo / "pkg" / "tally.py").write_text(TALLY)
    res, line = _stop(repo, kit_home)
    gate = line["gates"]
    assert res.returncode == 0, res.stderr + json.dumps(gate.get("acceptance")) + json.dumps(gate.get("scan"))
    assert "tamper" not in gate["acceptance"] and not gate["scan"].get("findings")


def test_a_finder_that_answers_for_the_harness_and_a_callers_locals_are_still_evidence(tmp_path_factory, kit_home):
    repo = _pooled(tmp_path_factory, kit_home, "hooks", BEFORE, {"test_honest.py": HONEST_TESTS})
    write_config(kit_home, "scan: block\n")
    (repo / "pkg" / "hooks.py").write_text(HOSTILE)
    (repo / "pkg" / "tally.py").write_text(TALLY.replace('f_globals["__name__"]', 'f_locals.get("__name__", "x")'))
    res, line = _stop(repo, kit_home)
    assert res.returncode == 2
    gate = line["gates"]
    assert gate["acceptance"]["tamper"]["rule"] == "harness", json.dumps(gate["acceptance"])
    assert [f["rule"] for f in gate["scan"]["findings"]] == ["frame-walk"]


# --- what honest suites use, served by the second run ---------------------------------------------------------

LOGS = '''import logging
import os

log = logging.getLogger("shop.orders")


def order(n, folder):
    if n < 0:
        log.warning("refused an order of %d", n)
        return None
    log.info("ordered %d", n)
    print(f"ordered {n}")
    path = os.path.join(folder, "orders.txt")
    with open(path, "a") as fh:
        fh.write(f"{n}\\n")
    return os.environ.get("SHOP_CURRENCY", "EUR")
'''
FIXTURE_TESTS = '''import logging

from shop import order


def test_a_refused_order_is_logged(caplog, tmp_path):
    assert order(-1, str(tmp_path)) is None
    assert caplog.record_tuples == [("shop.orders", logging.WARNING, "refused an order of -1")]
    assert "refused an order of -1" in caplog.text and caplog.messages == ["refused an order of -1"]


def test_info_is_seen_at_its_level(caplog, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SHOP_CURRENCY", "CHF")
    caplog.set_level(logging.INFO, logger="shop.orders")
    assert order(3, str(tmp_path)) == "CHF"
    assert [r.levelname for r in caplog.records] == ["INFO"] and caplog.records[0].getMessage() == "ordered 3"
    assert capsys.readouterr().out == "ordered 3\\n"
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        order(-2, str(tmp_path))
    assert caplog.records == []
    assert (tmp_path / "orders.txt").read_text() == "3\\n"
'''


def test_the_second_run_serves_caplog_capsys_tmp_path_and_monkeypatch(tmp_path, kit_home):
    repo = _sealed(tmp_path, {"shop.py": LOGS}, {"test_logs.py": FIXTURE_TESTS})
    _passes_both(repo, kit_home, 2)


GIVEN = '''"""A stand-in for hypothesis (not vendored): `given` runs the test on each of its strategy's examples."""


def given(*strategies, **named):
    def decorate(test):
        def run():
            for example in (*strategies, *named.values())[0].examples:
                test(example)
        run.__name__ = test.__name__
        return run
    return decorate
'''
STRATEGIES = '''class _Integers:
    examples = (0, 1, -3, 10**6)


def integers():
    return _Integers()
'''
GIVEN_TESTS = '''from hypothesis import given, strategies as st

from calc import double


STRATEGIES = {"n": st.integers()}


@given(**STRATEGIES)
def test_double_is_even(n):
    assert double(n) % 2 == 0


def test_double_of_two():
    assert double(2) == 4
'''


def test_a_given_test_is_named_as_not_double_checked_and_why(tmp_path, kit_home):
    """A hypothesis `@given` test whose arguments the second harness cannot tell from its syntax (strategies passed as
    `**`) is not run again by the second run, and the pass says how many and why; the ledger names them. (The second
    run repeats the first run's draw of the others: `test_second_given.py`.)"""
    repo = _sealed(tmp_path, {"calc.py": "def double(n):\n    return n\n"}, {"test_calc.py": GIVEN_TESTS},
                   site={"hypothesis/__init__.py": GIVEN, "hypothesis/strategies.py": STRATEGIES})
    (repo / "calc.py").write_text("def double(n):\n    return 2 * n\n")
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr
    second = line["gates"]["acceptance"]["second"]
    assert second["checked"] == 1 and list(second["unsupported"]) == ["test_calc.py::test_double_is_even"], second
    assert ("1 not double-checked: 1 hypothesis @given whose draw the second run cannot repeat; "
            "the ledger names them") in json.loads(res.stdout)["systemMessage"]


# --- a project that is itself a pytest plugin ---------------------------------------------------------------

PLUGIN = '''import pytest


@pytest.fixture
def timer():
    return {}
'''
MEASURE = PLUGIN + '''

def measure(fn, times=3):
    """A helper of the plugin, usable without pytest running."""
    for _ in range(times):
        fn()
    return {"calls": times}
'''
PLUGIN_TESTS = '''from pytest_timer import measure


def test_measure_counts_its_calls():
    assert measure(lambda: None, times=2) == {"calls": 2}
'''


def test_a_pytest_plugin_project_passes_outright(tmp_path, kit_home):
    """The project imported pytest at the seal already (the scan's baseline holds it): its own `import pytest` is no
    finding in either run; a new `import pytest` in a file that had none still is (the scan's)."""
    repo = _sealed(tmp_path, {"pytest_timer.py": PLUGIN}, {"test_timer.py": PLUGIN_TESTS})
    write_config(kit_home, "scan: block\n")
    (repo / "pytest_timer.py").write_text(MEASURE)
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr
    assert line["gates"]["acceptance"]["second"]["checked"] == 1

    (repo / "other.py").write_text("import pytest\n")
    res, line = _stop(repo, kit_home, session="s2")
    assert res.returncode == 2 and [f["rule"] for f in line["gates"]["scan"]["findings"]] == ["imports-pytest"]


# --- the environment's pytest plugins -------------------------------------------------------------------------

TALLY_PLUGIN = '''import pytest


@pytest.fixture
def tally():
    """A plugin's fixture, as pytest-mock's `mocker` is one."""
    return {"calls": 0}
'''
FLIPPING = TALLY_PLUGIN + '''

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
'''
COUNTER_TESTS = '''from counter import count


def test_count_uses_the_plugins_fixture(tally):
    count(tally)
    assert tally["calls"] == 1
'''


def test_the_environments_plugins_are_loaded_while_they_are_as_sealed(tmp_path, kit_home):
    repo = _sealed(tmp_path, {"counter.py": "def count(t):\n    pass\n"}, {"test_counter.py": COUNTER_TESTS},
                   venv=True, site={"pytest_tally.py": TALLY_PLUGIN,
                                    "pytest_tally-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-tally\n"
                                                                           "Version: 1.0\n",
                                    "pytest_tally-1.0.dist-info/entry_points.txt": "[pytest11]\ntally = pytest_tally\n"})
    from donegate.seal import store

    assert [p["name"] for p in store.load(repo).manifest["plugins"]] == ["tally"]
    res, line = _stop(repo, kit_home)
    gate = line["gates"]["acceptance"]
    assert res.returncode == 2 and gate["failed"] == 1 and "fixture" not in gate["failing"][0]["message"], gate
    (repo / "counter.py").write_text("def count(t):\n    t['calls'] += 1\n")
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr
    second = line["gates"]["acceptance"]["second"]
    assert second["checked"] == 0 and "tally" in second["unsupported"]["test_counter.py::test_count_uses_the_plugins_fixture"]

    # The agent's plugin that passes every test: changed since the seal, it is not loaded.
    (repo / "counter.py").write_text("def count(t):\n    pass\n")
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    (site / "pytest_tally.py").write_text(FLIPPING)
    res, line = _stop(repo, kit_home, session="s2")
    assert res.returncode == 2
    assert line["gates"]["acceptance"]["plugins_not_loaded"] == ["tally"]
    # ... nor a copy of it the project puts before the environment's on sys.path
    (site / "pytest_tally.py").write_text(TALLY_PLUGIN)
    (repo / "pytest_tally.py").write_text(FLIPPING)
    res, line = _stop(repo, kit_home, session="s3")
    assert res.returncode == 2
    assert line["gates"]["acceptance"]["plugins_not_loaded"] == ["tally"]


def test_the_tests_see_no_variable_a_developers_shell_lacks(tmp_path, kit_home):
    """Plugin autoload is off for the kit's pytest only: a tool of the project that starts pytest itself (and so
    wants the environment's plugins) sees the variables a developer's `python -m pytest` has."""
    tool = "import os\n\n\ndef autoload():\n    return os.environ.get('PYTEST_DISABLE_PLUGIN_AUTOLOAD') is None\n"
    test = "from tool import autoload\n\n\ndef test_autoload():\n    assert autoload()\n"
    repo = _sealed(tmp_path, {"tool.py": tool}, {"test_tool.py": test})
    res, line = _stop(repo, kit_home)
    assert res.returncode == 0, res.stderr
    assert line["gates"]["acceptance"]["second"]["checked"] == 1
