"""The project's own suite runs as the project's own `python -m pytest` runs it (issue 44; docs/own-suite.md): with the
pytest plugins of its environment the seal recorded, and with its configuration's `pythonpath`. Through the real
hook, real git repositories; beside each honest project that passes, the regression that still blocks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from donegate.seal import store
from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload, write_config

HIDDEN = "import counter\n\n\ndef test_hidden():\n    assert counter.VERSION == 2\n"

TALLY_PLUGIN = '''import pytest


@pytest.fixture
def tally():
    """A plugin's fixture, as pytest-mock's `mocker` is one."""
    return {"calls": 0}
'''
COUNTER = "VERSION = 1\n\n\ndef count(t):\n    t['calls'] += 1\n"
COUNTER_TEST = "from counter import count\n\n\ndef test_count(tally):\n    count(tally)\n    assert tally['calls'] == 1\n"


def _sealed(tmp_path: Path, files: dict[str, str], site: dict[str, str] | None = None,
            hidden_test: str = HIDDEN) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    if site:
        (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
        (folder,) = (repo / ".venv" / "lib").glob("python*/site-packages")
        for rel, text in site.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    make_repo(repo, files)
    hidden = tmp_path / "hidden" / "test_hidden.py"
    hidden.parent.mkdir()
    hidden.write_text(hidden_test)
    res = seal(repo, hidden)
    assert res.returncode == 0, res.stderr
    return repo, res.stdout


def test_an_own_suite_using_a_plugin_of_the_environment_is_sealed_passing_and_a_regression_blocks(tmp_path, kit_home):
    """Was: the own runs loaded none of the environment's plugins, so a test using a plugin's fixture errored at the
    seal ("fixture 'tally' not found"), was sealed as failing, and never blocked: breaking `count` passed."""
    site = {"pytest_tally.py": TALLY_PLUGIN,
            "pytest_tally-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-tally\nVersion: 1.0\n",
            "pytest_tally-1.0.dist-info/entry_points.txt": "[pytest11]\ntally = pytest_tally\n"}
    repo, out = _sealed(tmp_path, {"counter.py": COUNTER, "tests/test_counter.py": COUNTER_TEST}, site)
    assert "the project's own tests: 1 of 1 pass at the seal" in out, out
    assert store.load(repo).manifest["own_suite"]["passing"] == 1
    # the regression: the project's own test (with the plugin's fixture) fails now and blocks
    (repo / "counter.py").write_text(COUNTER.replace("VERSION = 1", "VERSION = 2").replace("+= 1", "+= 2"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    assert "the project's own test tests/test_counter.py::test_count" in res.stderr, res.stderr
    # the honest change passes, the plugin's fixture served in the sealed run
    (repo / "counter.py").write_text(COUNTER.replace("VERSION = 1", "VERSION = 2"))
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 0, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["own"]["failing"] == []


LIB_HIDDEN = "def test_hidden():\n    assert open('lib/counter.py').read().startswith('VERSION = 2')\n"
PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["lib", "tests"]\n'
HELPERS = "def expected_version():\n    return 1\n"
LIB_TEST = ("from counter import VERSION, count\nfrom helpers import expected_version\n\n\n"
            "def test_version_at_least():\n    assert VERSION >= expected_version()\n\n\n"
            "def test_count():\n    t = {'calls': 0}\n    count(t)\n    assert t['calls'] == 1\n")


def test_the_configurations_pythonpath_is_applied_to_the_own_runs(tmp_path, kit_home):
    """Was: the seal refused ("the project's own tests do not collect: ... No module named 'counter'"): the own runs
    left pytest's `pythonpath` key off, so neither `lib/` nor the tests' helpers were importable."""
    repo, out = _sealed(tmp_path, {"pyproject.toml": PYPROJECT, "lib/counter.py": COUNTER, "tests/helpers.py": HELPERS,
                                   "tests/test_counter.py": LIB_TEST}, hidden_test=LIB_HIDDEN)
    assert "the project's own tests: 2 of 2 pass at the seal" in out, out
    (repo / "lib" / "counter.py").write_text(COUNTER.replace("VERSION = 1", "VERSION = 2").replace("+= 1", "+= 2"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2
    assert "the project's own test tests/test_counter.py::test_count" in res.stderr, res.stderr
    (repo / "lib" / "counter.py").write_text(COUNTER.replace("VERSION = 1", "VERSION = 2"))
    # the agent's own new test file, using the helpers through the current configuration's pythonpath, runs too
    (repo / "tests" / "test_more.py").write_text("from helpers import expected_version\n\n\n"
                                                "def test_more():\n    assert expected_version() == 1\n")
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 0, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert own["failing"] == [] and own["mine"] == [] and own["ran_now"] == ["tests/test_more.py"], own


CALC = "def add(a, b):\n    return a + b\n"
CHECK = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SKIPPED = "import pytest\nfrom calc import add\n\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    assert add(1, 1) == 2\n"
NOT_COLLECTED = "from calc import add\n\n\ndef test_other():\n    assert add(0, 0) == 0\n"
HIDDEN_ADD = "def test_hidden():\n    assert True\n"
# A developer's pytest holds no `doctest` module: nor does the own run of a suite with no sealed doctests (it was
# imported by the kit's doctest plugin, ~5-8 ms of every own run, and this test failed at the seal).
NO_DOCTEST = "import sys\nfrom calc import add\n\n\ndef test_env():\n    assert add(0, 0) == 0 and 'doctest' not in sys.modules\n"


def test_the_suite_is_found_by_testpaths_or_named_by_own_tests_and_a_skipped_test_never_blocks(tmp_path, kit_home):
    """Coverage of item 1 through the hook: the configuration's `testpaths` says what pytest collects (a folder of
    another name; `tests/` outside it is not the suite), `own_tests:` in donegate.yaml names it instead, and a test
    skipped at the seal never blocks."""
    files = {"pytest.ini": "[pytest]\ntestpaths = checks\n", "calc.py": CALC, "checks/test_calc.py": CHECK,
             "checks/test_later.py": SKIPPED, "tests/test_other.py": NOT_COLLECTED, "checks/test_env.py": NO_DOCTEST}
    repo, out = _sealed(tmp_path, files, hidden_test=HIDDEN_ADD)
    assert "the project's own tests: 2 of 3 pass at the seal and are kept (checks;" in out, out
    assert "1 skipped" in out, out
    own = store.load(repo).manifest["own_suite"]
    assert own["paths"] == ["checks"] and own["by"] == "testpaths" and own["skipped"] == 1, own
    (repo / "calc.py").write_text("def add(a, b):\n    return 0 if (a, b) == (1, 1) else a + b\n")  # breaks the skipped
    assert run_hook(stop_payload(repo)).returncode == 0
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "the project's own test checks/test_calc.py::test_add" in res.stderr, res.stderr
    assert "tests/test_other.py" not in res.stderr

    write_config(kit_home, "own_tests: [tests]\n")
    other = tmp_path / "named"
    other.mkdir()
    repo2, out = _sealed(other, {**files, "calc.py": CALC}, hidden_test=HIDDEN_ADD)
    assert "the project's own tests: 1 of 1 pass at the seal and are kept (tests;" in out, out
    assert store.load(repo2).manifest["own_suite"]["by"] == "named"


# The agent's product patches pytest's reports the first time it runs, so every later test reports a pass.
CHEAT = '''def add(a, b):
    import _pytest.reports as r
    if not getattr(r, "_done", False):
        made = r.TestReport.from_item_and_call.__func__

        def passed(cls, item, call):
            report = made(cls, item, call)
            report.outcome = "passed"
            return report

        r.TestReport.from_item_and_call = classmethod(passed)
        r._done = True
    return a - b
'''


def test_a_harness_patch_in_one_own_test_file_still_blocks_with_the_fingerprints_checked_per_file(tmp_path, kit_home):
    """The own runs check the tripwires' fingerprints as each test file's tests are done (not after every test): a
    patch of pytest's reports made in the first file, hiding the regressions of both files, still blocks."""
    files = {"calc.py": CALC, "tests/test_a.py": CHECK, "tests/test_b.py": CHECK.replace("test_add", "test_add_b")}
    repo, out = _sealed(tmp_path, files, hidden_test=HIDDEN_ADD)
    assert "the project's own tests: 2 of 2 pass at the seal" in out, out
    (repo / "calc.py").write_text(CHEAT)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    own = stop_lines(kit_home)[-1]["gates"]["own"]
    assert "the project's own tests (as sealed):" in own["problem"] and "test_a.py" in own["problem"], own


PRICES = "import json\nfrom pathlib import Path\n\n\ndef price(name):\n    return json.loads(Path('prices.json').read_text())[name]\n"
PRICE_TEST = "from shop import price\n\n\ndef test_price():\n    assert price('tea') == 3\n"
PLUGINS = ("import os\n\n\ndef found():\n    return sorted(n for n in os.listdir('plugins') if n.endswith('.txt'))\n")
PLUGINS_TEST = "from finder import found\n\n\ndef test_found():\n    assert found() == ['a.txt']\n"


def test_a_data_file_a_test_read_at_the_seal_runs_that_test_and_other_data_runs_none(tmp_path, kit_home):
    """Item 5: the map records the project's files each test opened and the folders it listed. Was: any change to a
    file that is not Python ran the whole suite; a data file no test read now runs no sealed test, one a test read
    runs that test's file (and its regression blocks), a file added to a folder a test lists runs that test's file."""
    files = {"shop.py": PRICES, "prices.json": '{"tea": 3}', "tests/test_shop.py": PRICE_TEST, "finder.py": PLUGINS,
             "plugins/a.txt": "a", "tests/test_finder.py": PLUGINS_TEST, "calc.py": CALC, "tests/test_calc.py": CHECK,
             "README.md": "# shop\n"}
    repo, out = _sealed(tmp_path, files, hidden_test=HIDDEN_ADD)
    assert "the project's own tests: 3 of 3 pass at the seal" in out, out
    (repo / "README.md").write_text("# the shop\n")
    assert run_hook(stop_payload(repo)).returncode == 0
    assert stop_lines(kit_home)[-1]["gates"]["own"]["ran_sealed"] == [], stop_lines(kit_home)[-1]["gates"]["own"]
    (repo / "prices.json").write_text('{"tea": 4}')
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2 and "the project's own test tests/test_shop.py::test_price" in res.stderr, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["own"]["ran_sealed"] == ["tests/test_shop.py"]
    (repo / "prices.json").write_text('{"tea": 3}')
    (repo / "plugins" / "b.txt").write_text("b")
    res = run_hook(stop_payload(repo, session="s3"))
    assert res.returncode == 2 and "the project's own test tests/test_finder.py::test_found" in res.stderr, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["own"]["ran_sealed"] == ["tests/test_finder.py"]


TABLE = "def make_table():\n    return {'a': 1, 'b': 2}\n"
CONFTEST = "import pytest\nfrom table import make_table\n\n\n@pytest.fixture(scope='session')\ndef table():\n    return make_table()\n"
USES_A = "def test_a(table):\n    assert table['a'] == 1\n"
USES_B = "def test_b(table):\n    assert table['b'] == 2\n"


def test_a_session_fixtures_reach_counts_for_every_test_that_uses_it(tmp_path, kit_home):
    """Item 5: a conftest's session fixture is set up in the first test's setup only. Was: what it reached was mapped
    to that test alone, so a change to `make_table` ran `tests/test_a.py` only and the regression of `test_b` passed."""
    files = {"table.py": TABLE, "tests/conftest.py": CONFTEST, "tests/test_a.py": USES_A, "tests/test_b.py": USES_B}
    repo, out = _sealed(tmp_path, files, hidden_test=HIDDEN_ADD)
    assert "the project's own tests: 2 of 2 pass at the seal" in out, out
    (repo / "table.py").write_text(TABLE.replace("'b': 2", "'b': 3"))
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and "the project's own test tests/test_b.py::test_b" in res.stderr, res.stderr
    assert stop_lines(kit_home)[-1]["gates"]["own"]["ran_sealed"] == ["tests/test_a.py", "tests/test_b.py"]



SUB_CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef base():\n    return 2\n"
SUB_TEST = "from counter import count\n\n\ndef test_b(base):\n    t = {'calls': base}\n    count(t)\n    assert t['calls'] == 3\n"
# A test module naming pytest's own pytester, as every pytest plugin's suite does (pytest-mock 3.17.0's was not kept)
PYTESTER = "pytest_plugins = 'pytester'\n\n\ndef test_p(pytester):\n    assert pytester.path.is_dir()\n"
A_TEST = "from counter import VERSION\n\n\ndef test_a():\n    assert VERSION >= 1\n"
FILE_HIDDEN = "def test_hidden():\n    assert open('counter.py').read().startswith('VERSION = 2')\n"  # imports no product code
# Product code that registers a pytest plugin while the suite collects: an object of its own, or a conftest.py of the
# working tree (not the sealed one) under its own path, as pytest registers a conftest.
_CONFIG = "import gc\nfrom _pytest.config import Config\n_c = [o for o in gc.get_objects() if isinstance(o, Config)][0]\n"
REGISTERS = {"own object": _CONFIG + "_c.pluginmanager.register(object(), 'helper')\n",
             "working tree's conftest": _CONFIG + "import importlib.util as u, os\n"
             "_s = u.spec_from_file_location('lib_conftest', os.path.abspath('lib/conftest.py'))\n"
             "_m = u.module_from_spec(_s)\n_s.loader.exec_module(_m)\n_c.pluginmanager.register(_m, _m.__file__)\n",
             # under the names pytest gives pytester and its helper, registered before the sealed test names them
             "a module named pytester": _CONFIG + "import types\n_m = types.ModuleType('_pytest.pytester')\n"
             "exec('def pytest_runtest_setup(item):\\n    pass\\n', vars(_m))\n_c.pluginmanager.register(_m, 'pytester')\n",
             "pytester's helper with a hook": _CONFIG + "import _pytest.pytester as _p, os, types\n"
             "_m = types.ModuleType('_pytest.pytester_assertions')\n"
             "_m.__file__ = os.path.join(os.path.dirname(_p.__file__), 'pytester_assertions.py')\n"
             "exec('def pytest_runtest_setup(item):\\n    pass\\n', vars(_m))\n_c.pluginmanager.register(_m, 'pytester_assertions')\n"}


def test_an_own_suite_with_a_conftest_in_a_subfolder_is_sealed_and_a_regression_there_blocks(tmp_path, kit_home):
    """Was: the seal kept no own suite ("not kept: they trip the run's tripwires ... a pytest plugin was registered or
    removed"): pytest registers each subfolder's conftest.py as a plugin while it collects, as it always does. So
    does a test module's `pytest_plugins = "pytester"` (pytest's own pytester, its helper and legacypath's `testdir`
    plugin: pytest-mock 3.17.0's suite was not kept). Beside them, product code registering a plugin (its own, a
    conftest.py that is not the sealed one, a module under pytester's name or its helper's with a hook) still blocks."""
    files = {"counter.py": COUNTER, "tests/test_a.py": A_TEST, "tests/sub/conftest.py": SUB_CONFTEST,
             "tests/sub/test_b.py": SUB_TEST, "lib/conftest.py": "def pytest_runtest_setup(item):\n    pass\n",
             "tests/sub/test_p.py": PYTESTER}
    repo, out = _sealed(tmp_path, files, hidden_test=FILE_HIDDEN)
    assert "the project's own tests: 3 of 3 pass at the seal" in out, out
    done = COUNTER.replace("VERSION = 1", "VERSION = 2")
    (repo / "counter.py").write_text(done)
    res = run_hook(stop_payload(repo))
    assert res.returncode == 0, res.stderr
    (repo / "counter.py").write_text(done.replace("+= 1", "+= 2"))
    res = run_hook(stop_payload(repo, session="s2"))
    assert res.returncode == 2, res.stderr
    assert "the project's own test tests/sub/test_b.py::test_b" in res.stderr, res.stderr
    for n, (what, code) in enumerate(REGISTERS.items()):
        (repo / "counter.py").write_text(code + done)
        res = run_hook(stop_payload(repo, session=f"a{n}"))
        assert res.returncode == 2, (what, res.stderr)
        own = stop_lines(kit_home)[-1]["gates"]["own"]
        assert "a pytest plugin was registered or removed during collection" in own["problem"], (what, own)
