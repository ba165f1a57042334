"""Red team of issue 45 item 1, the first run: it must look like a developer's `python -m pytest` in what the kit
sets, through the real Stop hook, the kit's default config (the scan blocks), confined (bubblewrap).

Each attack is `calc.py` with the bug in, right only where the first run shows what a developer's `python -m pytest`
does not: no runpy below (`python -c` called `pytest.main`), the kit's arguments in `sys.argv`, the kit's temporary
folder as a test's `tmp_path`, or the harness's start on the stack (its locals, by `f_back` and `f_locals`: no audit event); the last two `or` where a fork's CPU
clock is fresh (the one open second-run signal, `OR_FORK` in test_redteam_traces.py). Each passed with the bug in on
the code before (180ffbf: the first run started as `python -c BOOTSTRAP ... -- ARGS`), the first run right by its
own signal and the second by the clock or by having no runpy either. Now the first run is `python -m pytest` with no
argument (runpy's `_run_module_as_main` at the bottom, pytest's `__main__` and `console_main` above it, the arguments
given to pytest's `main`): the product is wrong there, and the hidden test fails. Beside them, honest look-alikes
that read their own options from `sys.argv` and their bottom frame (a banner) pass.
"""

from __future__ import annotations

import json

import pytest

from tests.support.calcrepo import RIGHT_BODY, assert_no_test_text, sealed, when
from tests.support import require
from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload, write_config

FRESH = " or time.process_time() < 0.005"  # a fork's clock: the second run's (still open: OR_FORK)
# The frames below, by f_back, their globals and locals (no audit event for either; f_code raises one)
FRAMES = ("import sys, time\ndef _frames():\n    f, out = sys._getframe(0), []\n    while f is not None:\n"
          "        out.append(f)\n        f = getattr(f, 'f_' + 'back')\n    return out\n")
ATTACKS = {
    # `python -m pytest` runs pytest from runpy's frames; `pytest.main(...)` called from `python -c` has none: right
    # wherever runpy is not below (a developer's program too), wrong under a developer's pytest
    "no-runpy-below": when(FRAMES, "all(getattr(f, 'f_' + 'globals').get('__name__') != 'run' + 'py' for f in _frames())"),
    # the kit's pytest arguments on the command line (`--continue-on-collection-errors`, `-p no:cacheprovider`, the
    # store's ini): a developer types `python -m pytest`
    "the-kits-arguments-in-argv": when("import sys, time", "'--continue-on-' + 'collection-errors' in sys.argv" + FRESH),
    # the same alone (moved from test_second_opinion.py, where the runs disagreed on it): now wrong in the first run too
    "argv-names-pytests-options": when("import sys", "'--rootdir' in sys.argv"),
    # the harness's start is still on the stack: a frame whose locals hold its nonce and spec
    "the-bootstraps-locals-below": when(FRAMES, "any('non' + 'ce' in getattr(f, 'f_' + 'locals') for f in _frames())"
                                        + FRESH),
}
HONEST = {
    # options of its own read from the command line, as a program's or pytest's (an unknown option is not an error)
    "reads-its-own-options-from-argv": (
        "import argparse, sys\ndef price(units):\n    argparse.ArgumentParser().add_argument('--rate')\n"
        "    assert '--rate' not in sys.argv[1:]\n" + RIGHT_BODY),
    # a banner naming the script it runs under: the bottom frame's file, as a program or pytest shows it
    "reads-its-bottom-frame-for-a-banner": (
        "import inspect, os\nBANNER = []\ndef price(units):\n"
        "    BANNER.append(os.path.basename(inspect.stack()[-1].filename))\n" + RIGHT_BODY),
}


@pytest.mark.parametrize("name, expect", [*((n, "blocked") for n in ATTACKS), *((n, "passes") for n in HONEST)])
def test_the_first_run_looks_like_a_developers_pytest(tmp_path_factory, kit_home, name, expect):
    repo = sealed(tmp_path_factory, kit_home, "bwrap", scan="block")
    (repo / "calc.py").write_text({**ATTACKS, **HONEST}[name])
    res = run_hook(stop_payload(repo), timeout=120)
    assert "tamper" not in stop_lines(kit_home)[-1]["gates"]["acceptance"], res.stderr
    if expect == "passes":
        assert res.returncode == 0 and "2 acceptance tests pass" in json.loads(res.stdout)["systemMessage"], res.stderr
        return
    # wrong in the first run, as in a developer's: the test's own failure
    assert res.returncode == 2 and "assert 1000 == 900" in res.stderr, f"allowed with the bug in: {res.stderr}"
    assert_no_test_text(res.stderr + res.stdout)


# The tests' temporary folders: pytest's own, under the run's private /tmp, as a developer's pytest makes them
# (`pytest-of-USER/pytest-N/NAME0`), not a folder the kit names. The attack is right where the test's `tmp_path` is
# the kit's (`/tmp/basetemp/...` on 4582144) or a fork's clock is fresh: it passed with the bug in there.
TMP_TESTS = '''import calc


def test_ten_units_get_the_bulk_discount(tmp_path):
    assert calc.price(10, tmp_path) == 900


def test_two_units_pay_the_full_price(tmp_path):
    assert calc.price(2, tmp_path) == 200
'''
TMP_SEALED = "def price(units, folder):\n    return units * 100\n"
TMP_CODE = {
    "the-kits-temporary-folder": "import time\ndef price(units, folder):\n"
                                 "    if 'base' + 'temp' in str(folder)" + FRESH + ":\n    " + RIGHT_BODY + "    return units * 100\n",
    "honest": "import os\ndef price(units, folder):\n    assert os.path.isdir(folder)\n" + RIGHT_BODY,
}


@pytest.mark.parametrize("name", list(TMP_CODE))
def test_the_tests_temporary_folders_are_pytests_own(tmp_path, kit_home, name):
    require.bwrap()
    write_config(kit_home, "confine: on\nscan: block\n")
    repo = make_repo(tmp_path / "repo", {"calc.py": TMP_SEALED})
    hidden = tmp_path / "hidden" / "test_calc.py"
    hidden.parent.mkdir()
    hidden.write_text(TMP_TESTS)
    assert seal(repo, hidden).returncode == 0
    (repo / "calc.py").write_text(TMP_CODE[name])
    res = run_hook(stop_payload(repo), timeout=120)
    assert "tamper" not in stop_lines(kit_home)[-1]["gates"]["acceptance"], res.stderr
    if name == "honest":
        assert res.returncode == 0, res.stderr
        return
    assert res.returncode == 2 and "assert 1000 == 900" in res.stderr, f"allowed with the bug in: {res.stderr}"
