"""The map a stop selects the sealed own tests from (issue 44 item 5, `donegate.seal.reach`), played against: a change
that breaks what a sealed, passing project test covers while the map names no test the change reaches. Through the
real hook on one pooled seal (`pooled_calc`: sealed once per worker, each test a copy); each attack a stop that adds
the hidden test's `mul` and the regression, each beside an honest look-alike that runs no unrelated test file.
"""

from __future__ import annotations

from tests.gate.test_own_suite import CALC, MUL, pooled_calc
from tests.support.repos import run_hook, stop_lines, stop_payload

# A setting read only when its file exists (`os.path.exists`: no `open` at the seal, where it did not exist).
SETTINGS = ("import json\nimport os\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n\ndef rate():\n"
            "    path = os.path.join(HERE, 'rate.json')\n    if os.path.exists(path):\n"
            "        with open(path) as f:\n            return json.load(f)['rate']\n    return 2\n")
# A module of a package; a package folder of the same name, added, is imported in its place.
CORE = "from .util import factor\n\n\ndef price(x):\n    return x * factor()\n"
# An optional accelerator a module imports when it is there.
FAST = ("try:\n    from .accel import double\nexcept ImportError:\n    def double(x):\n        return 2 * x\n")
# A package whose __init__ sets what a module of it computes with; a test of the module never calls into __init__.
UNITS = "from . import conv\n\nconv.FACTOR = 10\n\n\ndef version():\n    return 1\n"
CONV = "FACTOR = 1\n\n\ndef to_mm(cm):\n    return cm * FACTOR\n"
# A module imported by name (importlib) that another test file imports first (at collection).
REGISTRY = ("import importlib\n\n\ndef tax(amount):\n    return amount * importlib.import_module('plugins.rates').RATE\n")
RATES = "RATE = 2\n\n\ndef describe():\n    return 'rates'\n"
FILES = {
    "settings.py": SETTINGS, "tests/test_settings.py": "from settings import rate\n\n\ndef test_rate():\n    assert rate() == 2\n",
    "pricing/__init__.py": "", "pricing/util.py": "def factor():\n    return 1\n", "pricing/core.py": CORE,
    "pricing/fast.py": FAST,
    "tests/test_pricing.py": "from pricing.core import price\nfrom pricing.fast import double\n\n\n"
                             "def test_price():\n    assert price(3) == 3\n\n\ndef test_double():\n    assert double(3) == 6\n",
    "units/__init__.py": UNITS, "units/conv.py": CONV,
    "tests/test_conv.py": "from units.conv import to_mm\n\n\ndef test_to_mm():\n    assert to_mm(2) == 20\n",
    "tests/test_units.py": "from units import version\n\n\ndef test_version():\n    assert version() == 1\n",
    "registry.py": REGISTRY, "plugins/__init__.py": "", "plugins/rates.py": RATES,
    "tests/test_describe.py": "from plugins.rates import describe\n\n\ndef test_describe():\n    assert describe() == 'rates'\n",
    "tests/test_tax.py": "from registry import tax\n\n\ndef test_tax():\n    assert tax(3) == 6\n",
}


def _stop(tmp_path_factory, kit_home, change: dict[str, str]):
    """A stop of the pooled project after `change` (and the hidden test's `mul`): (the hook's result, ran_sealed)."""
    repo = pooled_calc(tmp_path_factory, kit_home, FILES)
    (repo / "calc.py").write_text(CALC + MUL)
    for name, text in change.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    res = run_hook(stop_payload(repo))
    return res, stop_lines(kit_home)[-1]["gates"]["own"].get("ran_sealed")


def test_a_data_file_the_product_reads_only_when_it_exists_runs_the_tests_that_looked_for_it(tmp_path_factory, kit_home):
    """Was: `rate.json`, added, ran no sealed test (no test opened it at the seal: it was not there), and the stop
    passed with `test_rate` broken. Beside it: a data file nobody looks for runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"rate.json": '{"rate": 3}'})
    assert res.returncode == 2 and "tests/test_settings.py::test_rate" in res.stderr, (ran, res.stderr)
    res, ran = _stop(tmp_path_factory, kit_home, {"notes.json": '{"rate": 3}'})
    assert res.returncode == 0 and ran == ["tests/test_calc.py"], (ran, res.stderr)


def test_a_package_added_in_place_of_a_module_runs_the_tests_that_import_the_module(tmp_path_factory, kit_home):
    """Was: `pricing/util/__init__.py`, added, shadows `pricing/util.py` (a package folder is found first) and ran no
    sealed test (a new module inside a package was taken as reached only through a changed importer). Beside it: a
    new module nobody imports runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"pricing/util/__init__.py": "def factor():\n    return 2\n"})
    assert res.returncode == 2 and "tests/test_pricing.py::test_price" in res.stderr, (ran, res.stderr)
    res, ran = _stop(tmp_path_factory, kit_home, {"pricing/extra.py": "def factor():\n    return 2\n"})
    assert res.returncode == 0 and ran == ["tests/test_calc.py"], (ran, res.stderr)


def test_a_module_an_import_failed_to_find_at_the_seal_runs_its_importers_tests_when_added(tmp_path_factory, kit_home):
    """Was: `pricing/accel.py`, added, is what `pricing/fast.py`'s `try: from .accel import double` now imports,
    unchanged, and ran no sealed test."""
    res, ran = _stop(tmp_path_factory, kit_home, {"pricing/accel.py": "def double(x):\n    return 3 * x\n"})
    assert res.returncode == 2 and "tests/test_pricing.py::test_double" in res.stderr, (ran, res.stderr)


def test_a_packages_init_runs_the_tests_of_every_module_in_it(tmp_path_factory, kit_home):
    """Importing `units.conv` runs `units/__init__.py` first, which sets `conv.FACTOR`. Was: a change to it ran only
    `test_units.py` (the one test that calls into it), and `test_conv` broken passed. Beside it: the same file changed
    without effect runs the package's tests, no others."""
    res, ran = _stop(tmp_path_factory, kit_home, {"units/__init__.py": UNITS.replace("= 10", "= 1")})
    assert res.returncode == 2 and "tests/test_conv.py::test_to_mm" in res.stderr, (ran, res.stderr)
    res, ran = _stop(tmp_path_factory, kit_home, {"units/__init__.py": UNITS + "# the same\n"})
    assert res.returncode == 0 and ran == ["tests/test_calc.py", "tests/test_conv.py", "tests/test_units.py"], ran


def test_a_module_imported_by_name_runs_the_tests_that_imported_it_after_another(tmp_path_factory, kit_home):
    """`registry.tax` reads `plugins.rates.RATE` through `importlib.import_module`; `test_describe.py` imported the
    module first, at collection, so `test_tax` called nothing in it. Was: a change to `RATE` ran only
    `test_describe.py`. Beside it: `plugins/rates.py` is not reached by unrelated test files."""
    res, ran = _stop(tmp_path_factory, kit_home, {"plugins/rates.py": RATES.replace("= 2", "= 3")})
    assert res.returncode == 2 and "tests/test_tax.py::test_tax" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_calc.py", "tests/test_describe.py", "tests/test_tax.py"], ran
