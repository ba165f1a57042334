"""A test file's own module name in the second run (issue 45: honest changes pass as often as before).

The second run runs each sealed test file as the program it stands for (`python test_x.py`: its module `__main__`), so
`__name__` there is `"__main__"` where pytest's is `"test_x"`. Tests that use `__name__` (a logger, a registry key, a
path, `sys.modules[__name__]`) get their own run's name on both sides of their comparisons and pass both runs. A test
that writes its module's name out (`caplog.records[0].name == "test_calc"`, a registry key `"test_calc.handler"`)
passed under pytest and failed in the second run however right the product was: the runs disagreed, a block of
honest code (and a step to the session's hand-over). Such a test is now not double-checked, decided by the kit from
the text as sealed (`bare_itself.names_itself`), as is a test that reads its own file (`Path(__file__).read_text()`: the
program's file on disk is empty, tests/gate/test_redteam_traces.py `OR_FILE`); every other test still is, so the
product that tells a caller that is not `__main__` (a trace closed in the last round) still makes the runs disagree.
"""

from __future__ import annotations

import json

import pytest

from donegate.hidden.bare_itself import names_itself, spawns
from tests.support.calcrepo import RIGHT_BODY
from tests.support.repos import pooled_files, run_hook, stop_lines, stop_payload, write_config

CALC = '''import logging
import sys

REG = {}
_log = logging.getLogger(__name__)


def price(units, log=None):
    (log or _log).info("priced %d", units)
''' + RIGHT_BODY + '''

def register(fn):
    REG[fn.__module__ + "." + fn.__qualname__] = fn
    return fn


def lookup(key):
    return REG[key]
'''
BUG = CALC.replace("units * 90 if units >= 10 else ", "")
HIDDEN = '''import logging
import pathlib
import sys

import calc

log = logging.getLogger(__name__)


def test_ten_units_log_on_the_modules_logger(caplog):
    caplog.set_level(logging.INFO)
    assert calc.price(10, log) == 900
    assert caplog.record_tuples == [(__name__, logging.INFO, "priced 10")]


def test_a_level_set_on_the_modules_logger(caplog):
    caplog.set_level(logging.INFO, logger=__name__)
    calc.price(10, log)
    assert [r.name for r in caplog.records] == [log.name]


def test_a_registry_keyed_by_the_modules_name(tmp_path):
    @calc.register
    def handler():
        return 1
    assert calc.lookup(__name__ + ".test_a_registry_keyed_by_the_modules_name.<locals>.handler") is handler
    assert sys.modules[__name__].test_a_registry_keyed_by_the_modules_name.__module__ == __name__
    path = tmp_path / (__name__ + ".txt")
    path.write_text(str(calc.price(10)))
    assert path.read_text() == "900"


def test_the_logger_name_written_out(caplog):
    caplog.set_level(logging.INFO)
    calc.price(10, log)
    assert caplog.records[0].name == "test_calc"


def test_a_registry_key_written_out():
    @calc.register
    def handler():
        return 1
    assert calc.lookup("test_calc.test_a_registry_key_written_out.<locals>.handler") is handler


def test_its_own_file_read():
    assert calc.price(10) == 900
    assert "def test_its_own_file_read" in pathlib.Path(__file__).read_text()
'''
PYTEST = "any(m.startswith('_py' + 'test') for m in sys.modules) or "
# Right only where the product's caller is not `__main__` (pytest's test module), the attack the program closed.
NOT_MAIN = CALC.replace("    (log or _log)", "    if not (" + PYTEST + "sys._getframe(1).f_globals.get('__name__') != '__main__'):\n"
                        "        return units * 100\n    (log or _log)")


@pytest.mark.parametrize("product", ["honest", "right-only-where-the-caller-is-not-main"])
def test_tests_that_name_their_module_are_not_double_checked_and_the_rest_are(tmp_path_factory, kit_home, product):
    write_config(kit_home, "confine: on\nscan: off\n")
    repo = pooled_files(tmp_path_factory, kit_home, {"calc.py": BUG}, "test_calc.py", HIDDEN)
    (repo / "calc.py").write_text(CALC if product == "honest" else NOT_MAIN)
    res = run_hook(stop_payload(repo), timeout=120)
    acceptance = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    second = acceptance.get("second") or {}
    if product == "honest":  # blocked before: the written-out names and the file read failed in the second run only
        assert res.returncode == 0, (res.stderr, json.dumps(acceptance))
        assert second["checked"] == 3 and sorted(second["unsupported"]) == [
            "test_calc.py::test_a_registry_key_written_out", "test_calc.py::test_its_own_file_read",
            "test_calc.py::test_the_logger_name_written_out"], second
        assert second["unsupported"]["test_calc.py::test_its_own_file_read"].startswith("reads its own file"), second
        assert second["unsupported"]["test_calc.py::test_a_registry_key_written_out"].startswith("names its own module")
        return
    assert res.returncode == 2, "the stop was allowed with the bug in"
    assert (acceptance.get("tamper") or {}).get("rule") == "disagree", json.dumps(acceptance)


@pytest.mark.parametrize("source, found", [
    ("def test_a():\n    assert name() == 'test_x'\n\ndef test_b():\n    pass\n", {"test_a"}),
    ("def test_a():\n    patch(f'test_x.{n}')\n", {"test_a"}),  # an f-string's text
    ("def test_a():\n    key('test_x:handler')\n", {"test_a"}),
    ("KEY = 'test_x.handler'\n\ndef test_a():\n    pass\n", {"*"}),  # module level: every test
    ("import pytest\n\n@pytest.fixture\ndef f():\n    return 'test_x'\n\ndef test_a(f):\n    pass\n", {"*"}),
    ("class TestA:\n    KEY = 'test_x'\n\n    def test_b(self):\n        pass\n\n    def test_c(self):\n        pass\n",
     {"TestA::test_b", "TestA::test_c"}),
    ("class TestA:\n    def test_b(self):\n        'test_x'\n\n    def test_c(self):\n        pass\n", {"TestA::test_b"}),
    # its file's own name (a program's is named otherwise) and its own function's name (a program's function's)
    ("def test_a():\n    assert __file__.endswith('test_x.py')\n", {"test_a"}),
    ("import sys\n\ndef test_a():\n    assert sys._getframe().f_code.co_name == 'test_a'\n", {"test_a"}),
    ("def test_a(caplog):\n    assert caplog.records[0].funcName == 'x'\n\ndef test_b():\n    pass\n", {"test_a"}),
    # not its name: `__name__`, a longer word, another module, a comment, a stack of its own
    ("def test_a():\n    stack = [1]\n    assert stack.pop() == 1\n", set()),
    ("import logging\nlog = logging.getLogger(__name__)\n\ndef test_a():\n    assert log.name == __name__\n", set()),
    ("def test_a():\n    assert f() == ('test_x2', 'my_test_x', 'pkg.test_x')\n", set()),
    ("def test_a():\n    pass  # test_x\n", set()),
    # its own file read: empty on disk in the second run (a file beside it, or its folder, is not)
    ("import pathlib\n\ndef test_a():\n    assert 'x' in pathlib.Path(__file__).read_text()\n", {"test_a"}),
    ("import os\n\ndef test_a():\n    with open(os.path.abspath(__file__)) as f:\n        f.read()\n", {"test_a"}),
    ("SOURCE = open(__file__).read()\n\ndef test_a():\n    pass\n", {"*"}),
    ("import pathlib\n\ndef test_a():\n    pathlib.Path(__file__).with_name('d.json').read_text()\n"
     "    open(pathlib.Path(__file__).parent / 'e.json')\n", set()),
])
def test_names_itself_is_decided_from_the_strings_of_the_text(source, found):
    assert set(names_itself(source.encode(), "test_x.py")) == found
    assert set(names_itself(source.replace("test_x", "sub.test_x").encode(), "sub/test_x.py")) == found


@pytest.mark.parametrize("source, default, found", [
    ("import multiprocessing\n\ndef test_a():\n    multiprocessing.get_context('spawn').Pool(2)\n\ndef test_b():\n    pass\n",
     False, {"test_a"}),
    ("import concurrent.futures as cf, multiprocessing as mp\n\ndef test_a():\n"
     "    cf.ProcessPoolExecutor(mp_context=mp.get_context('forkserver'))\n", False, {"test_a"}),
    ("import multiprocessing\nmultiprocessing.set_start_method('spawn')\n\ndef test_a():\n    pass\n", False, {"*"}),
    # a pool or process made where the project's Python starts them in a fresh interpreter by default (3.14 on)
    ("import multiprocessing\n\ndef test_a():\n    multiprocessing.Pool(2)\n", True, {"test_a"}),
    ("import multiprocessing\n\ndef test_a():\n    multiprocessing.Pool(2)\n", False, set()),
    # the word elsewhere: a docstring, a name, a comment, a thread pool
    ("def test_a():\n    '''Workers spawn here.'''\n    spawn = 1  # spawn\n", False, set()),
    ("import concurrent.futures\n\ndef test_a():\n    concurrent.futures.ThreadPoolExecutor(2)\n", True, set()),
])
def test_spawns_is_decided_from_the_text(source, default, found):
    assert set(spawns(source.encode(), default)) == found
