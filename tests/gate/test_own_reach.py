"""The map a stop selects the sealed own tests from (issue 44 item 5, `donegate.seal.reach`), played against: a change
that breaks what a sealed, passing project test covers while the map names no test the change reaches. Through the
real hook on one pooled seal (`_project`: sealed once per worker, each test a copy); each attack a stop that adds
the hidden test's `mul` and the regression, each beside an honest look-alike that runs no unrelated test file.
"""

from __future__ import annotations

import json

from donegate.seal import imported, reach
from tests.support import own_batch
from tests.support.repos import git, make_repo, run_hook, seal, sealed_copy, sealed_project, stop_lines, stop_payload

CALC = "def add(a, b):\n    return a + b\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
OWN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"

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
# A stdlib module a product module imports; a data folder reached through a link.
SHADE = "import colorsys\n\n\ndef hue(r, g, b):\n    return colorsys.rgb_to_hsv(r, g, b)[0]\n"
LABEL = "from pathlib import Path\n\n\ndef label():\n    return Path('data/label.txt').read_text()\n"
# A folder the product puts on the path itself, before the project's: a module added there shadows one at the top.
VENDORED = ("import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "
            "'vendor'))\nimport tint  # noqa: E402\n\n\ndef tone():\n    return tint.shade()\n")
# A setting read at import when its file is there; a conftest importing a module for what its import does; a module
# imported through the builtin __import__ after another test imported it.
DOTENV = ("import os\n\nGREETING = open('.greeting').read() if os.path.exists('.greeting') else 'hi'\n\n\n"
          "def greet():\n    return GREETING\n")
ENVSETUP = "import os\n\nos.environ['TONE'] = 'calm'\n\n\ndef reset():\n    return 'reset'\n"
BUILTIN = "def level():\n    return __import__('plugins.levels', fromlist=['x']).LEVEL\n"
# A flag checked with `os.access` (neither an audit event nor `os.stat`); modules found by listing their package's
# folder (`os.listdir`: the import system's own listings of package folders are left out of the map); a
# flag that exists at the seal, checked at import.
ACCESS = ("import os\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n\ndef mode():\n"
          "    return 'fast' if os.access(os.path.join(HERE, 'fast.flag'), os.R_OK) else 'slow'\n")
KINDS = ("import os\n\n\ndef names():\n    here = os.path.dirname(os.path.abspath(__file__))\n"
         "    return sorted(f[:-3] for f in os.listdir(here) if f.endswith('.py') and not f.startswith('_'))\n")
FEATURE = ("import os\n\nON = os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'feature.flag'))"
           "\n\n\ndef enabled():\n    return ON\n")
FILES = {
    "dotenv_greet.py": DOTENV,
    "tests/test_greet.py": "from dotenv_greet import greet\n\n\ndef test_greet():\n    assert greet() == 'hi'\n",
    "envsetup.py": ENVSETUP, "tests/conftest.py": "import envsetup  # noqa: F401\n",
    "mood.py": "import os\n\n\ndef mood():\n    return os.environ['TONE']\n",
    "tests/test_mood.py": "from mood import mood\n\n\ndef test_mood():\n    assert mood() == 'calm'\n",
    "tests/test_reset.py": "from envsetup import reset\n\n\ndef test_reset():\n    assert reset() == 'reset'\n",
    "levels_by_name.py": BUILTIN, "plugins/levels.py": "LEVEL = 1\n\n\ndef name():\n    return 'levels'\n",
    "tests/test_a_levels.py": "from plugins.levels import name\n\n\ndef test_name():\n    assert name() == 'levels'\n",
    "tests/test_level.py": "from levels_by_name import level\n\n\ndef test_level():\n    assert level() == 1\n",
    "vendored.py": VENDORED, "vendor/tint.py": "import palette\n\n\ndef shade():\n    return palette.BASE\n",
    "palette.py": "BASE = 'red'\n",
    "tests/test_tone.py": "from vendored import tone\n\n\ndef test_tone():\n    assert tone() == 'red'\n",
    "shade.py": SHADE, "tests/test_shade.py": "from shade import hue\n\n\ndef test_hue():\n    assert hue(1, 0, 0) == 0.0\n",
    "label.py": LABEL, "data_v1/label.txt": "one", "data_v2/label.txt": "two",
    "tests/test_label.py": "from label import label\n\n\ndef test_label():\n    assert label() == 'one'\n",
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
    "access_mode.py": ACCESS, "tests/test_mode.py": "from access_mode import mode\n\n\ndef test_mode():\n    assert mode() == 'slow'\n",
    "kinds/__init__.py": KINDS, "kinds/circle.py": "SIDES = 0\n",
    "tests/test_kinds.py": "from kinds import names\n\n\ndef test_names():\n    assert names() == ['circle']\n",
    "feature.py": FEATURE, "feature.flag": "", "README.txt": "read by nobody\n",
    "tests/test_feature.py": "from feature import enabled\n\n\ndef test_enabled():\n    assert enabled() is True\n",
}


def _project(tmp_path_factory, kit_home):
    """The pooled project, sealed with `data` a link to `data_v1` (a copy per test)."""
    def build(repo, home):
        make_repo(repo, {"calc.py": CALC, "tests/test_calc.py": OWN, **FILES})
        (repo / "data").symlink_to("data_v1")
        git(repo, "add", "data")
        git(repo, "commit", "-qm", "data")
        hidden = repo.parent / "hidden" / "test_mul.py"
        hidden.parent.mkdir()
        hidden.write_text(HIDDEN)
        res = seal(repo, hidden, extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0 and "the project's own tests: 19 of 19 pass" in res.stdout, res.stdout + res.stderr

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "reach", build, kit_home)


def _stop(tmp_path_factory, kit_home, change: dict[str, str | None], project=None):
    """A stop of the pooled project after `change` (None: the file removed; and the hidden test's `mul`): (the hook's
    result, ran_sealed)."""
    repo = (project or _project)(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    for name, text in change.items():
        if text is None:
            (repo / name).unlink()
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    res = run_hook(stop_payload(repo))
    return res, stop_lines(kit_home)[-1]["gates"]["own"].get("ran_sealed")


# The look-alikes that reach no sealed test, each a change of a file of its own, in one stop for the run
# (`own_batch.shared_stop`, on the pooled project): the stop passes and runs `test_calc.py` alone (what `mul` reaches),
# so any one of them reaching a test shows in its exact `ran_sealed` (an empty reach adds nothing to another's).
NONE = {"notes.json": '{"rate": 3}', "pricing/extra.py": "def factor():\n    return 2\n", "docs/notes.txt": "two",
        "scripts/palette.py": "BASE = 'blue'\n", "README.txt": None}


def _reaches_none(tmp_path_factory, kit_home, name: str) -> None:
    """`name`'s look-alike (a key of NONE) reaches no sealed test: the pooled stop of them all passes, running only
    what `mul` reaches (else this one is stopped alone, so the one that reaches fails its own test id)."""
    def edit(repo):
        (repo / "calc.py").write_text(CALC + MUL)
        for rel, text in NONE.items():
            if text is None:
                (repo / rel).unlink()
            else:
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / rel).write_text(text)

    res = own_batch.shared_stop(tmp_path_factory, kit_home, "reach-none", lambda home: _project(tmp_path_factory, home),
                                edit)
    if res["returncode"] == 0 and res["own"].get("ran_sealed") == ["tests/test_calc.py"]:
        return  # one stop that runs nothing more than `mul`'s reach: none of them reaches a test
    res, ran = _stop(tmp_path_factory, kit_home, {name: NONE[name]})  # which one reaches a test: each alone
    assert res.returncode == 0 and ran == ["tests/test_calc.py"], (name, ran, res.stderr)


def test_a_data_file_the_product_reads_only_when_it_exists_runs_the_tests_that_looked_for_it(tmp_path_factory, kit_home):
    """Was: `rate.json`, added, ran no sealed test (no test opened it at the seal: it was not there), and the stop
    passed with `test_rate` broken. Beside it: a data file nobody looks for runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"rate.json": '{"rate": 3}'})
    assert res.returncode == 2 and "tests/test_settings.py::test_rate" in res.stderr, (ran, res.stderr)
    _reaches_none(tmp_path_factory, kit_home, "notes.json")


def test_a_package_added_in_place_of_a_module_runs_the_tests_that_import_the_module(tmp_path_factory, kit_home):
    """Was: `pricing/util/__init__.py`, added, shadows `pricing/util.py` (a package folder is found first) and ran no
    sealed test (a new module inside a package was taken as reached only through a changed importer). Beside it: a
    new module nobody imports runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"pricing/util/__init__.py": "def factor():\n    return 2\n"})
    assert res.returncode == 2 and "tests/test_pricing.py::test_price" in res.stderr, (ran, res.stderr)
    _reaches_none(tmp_path_factory, kit_home, "pricing/extra.py")


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


def test_a_top_level_package_added_that_shadows_a_stdlib_module_runs_the_whole_suite(tmp_path_factory, kit_home):
    """`colorsys/__init__.py`, added at the top, is what `shade.py`'s `import colorsys` now finds (the project's folder
    comes first on the path). Was: taken as a new module inside a package, it ran no sealed test. A new top-level
    module (`colorsys.py`) already ran the whole suite."""
    res, ran = _stop(tmp_path_factory, kit_home, {"colorsys/__init__.py": "def rgb_to_hsv(r, g, b):\n    return (0.5, 0, 0)\n"})
    assert res.returncode == 2 and "tests/test_shade.py::test_hue" in res.stderr, (ran, res.stderr)
    assert ran == "all", ran


def test_a_link_to_a_folder_swapped_runs_the_tests_that_read_through_it(tmp_path_factory, kit_home):
    """`data`, a link to `data_v1`, pointed at `data_v2` (both unchanged): a test read `data/label.txt`, and the change
    is named `data`. Was: no sealed test ran. Beside it: a file added in a folder no test read runs none."""
    repo = _project(tmp_path_factory, kit_home)
    (repo / "calc.py").write_text(CALC + MUL)
    (repo / "data").unlink()
    (repo / "data").symlink_to("data_v2")
    res = run_hook(stop_payload(repo))
    ran = stop_lines(kit_home)[-1]["gates"]["own"].get("ran_sealed")
    assert res.returncode == 2 and "tests/test_label.py::test_label" in res.stderr, (ran, res.stderr)
    _reaches_none(tmp_path_factory, kit_home, "docs/notes.txt")


def test_a_module_added_in_a_folder_the_product_puts_on_the_path_runs_the_whole_suite(tmp_path_factory, kit_home):
    """`vendored.py` puts `vendor/` first on the path; `vendor/palette.py`, added, is what `vendor/tint.py`'s `import
    palette` now finds in place of the top-level `palette.py`. Was: taken as a new module inside a package, it ran no
    sealed test. Beside it: a module added in a folder that is on no path (`scripts/`) runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"vendor/palette.py": "BASE = 'blue'\n"})
    assert res.returncode == 2 and "tests/test_tone.py::test_tone" in res.stderr, (ran, res.stderr)
    assert ran == "all", ran
    _reaches_none(tmp_path_factory, kit_home, "scripts/palette.py")


def test_a_setting_read_at_import_only_when_its_file_exists_runs_the_whole_suite(tmp_path_factory, kit_home):
    """`dotenv_greet.py` reads `.greeting` at import when it exists (outside any test: the map cannot say which test
    depends on it). Was: `.greeting`, added, ran no sealed test."""
    res, ran = _stop(tmp_path_factory, kit_home, {".greeting": "yo"})
    assert res.returncode == 2 and "tests/test_greet.py::test_greet" in res.stderr, (ran, res.stderr)
    assert ran == "all", ran


def test_a_module_a_conftest_imports_runs_the_tests_under_that_conftest(tmp_path_factory, kit_home, tmp_path):
    """`tests/conftest.py` imports `envsetup`, whose import sets what `mood()` reads; only `test_reset` calls into it.
    Was: a change to it ran `test_reset.py` alone, and `test_mood` broken passed. Beside it (the map alone): a
    conftest's imports reach the tests under its folder, no others."""
    res, ran = _stop(tmp_path_factory, kit_home, {"envsetup.py": ENVSETUP.replace("calm", "loud")})
    assert res.returncode == 2 and "tests/test_mood.py::test_mood" in res.stderr, (ran, res.stderr)
    make_repo(tmp_path / "p", {"a/conftest.py": "import envsetup\n", "envsetup.py": "", "a/test_a.py": "", "b/test_b.py": ""})
    closed = imported.close(tmp_path / "p", {"a/test_a.py::test_a": [], "b/test_b.py::test_b": []})
    assert closed == {"a/test_a.py::test_a": ["a/conftest.py", "a/test_a.py", "envsetup.py"],
                      "b/test_b.py::test_b": ["b/test_b.py"]}, closed


def test_a_module_imported_through_the_builtin_import_by_name_runs_its_tests(tmp_path_factory, kit_home):
    """`levels_by_name.level` reads `LEVEL` through the builtin `__import__('plugins.levels')`, which makes no frame for
    a module imported before (`test_a_levels.py` did, at collection). Was: a change to `LEVEL` ran only
    `test_a_levels.py`. Now the name written out is read as an import (`ast`); a name computed at run time is not
    (docs/own-suite.md)."""
    res, ran = _stop(tmp_path_factory, kit_home, {"plugins/levels.py": "LEVEL = 2\n\n\ndef name():\n    return 'levels'\n"})
    assert res.returncode == 2 and "tests/test_level.py::test_level" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_a_levels.py", "tests/test_calc.py", "tests/test_level.py"], ran


def test_a_file_checked_with_os_access_runs_the_tests_that_checked_it(tmp_path_factory, kit_home):
    """`access_mode.mode` asks `os.access` whether `fast.flag` is there (no audit event, no `os.stat`). Was: the flag
    added ran no sealed test, and the stop passed with `test_mode` broken."""
    res, ran = _stop(tmp_path_factory, kit_home, {"fast.flag": ""})
    assert res.returncode == 2 and "tests/test_mode.py::test_mode" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_calc.py", "tests/test_mode.py"], ran


def test_a_module_added_to_a_package_its_code_lists_runs_the_tests_that_listed_it(tmp_path_factory, kit_home):
    """`kinds.names` lists its package's folder (`os.listdir`). Was: the map left out every listing of a
    package folder (the import system's), so `kinds/square.py` added ran no sealed test and `test_names` broken
    passed."""
    res, ran = _stop(tmp_path_factory, kit_home, {"kinds/square.py": "SIDES = 4\n"})
    assert res.returncode == 2 and "tests/test_kinds.py::test_names" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_calc.py", "tests/test_kinds.py"], ran  # (a module added to `pricing/`, which no test
    # lists, runs none: test_a_package_added_in_place_of_a_module_runs_the_tests_that_import_the_module)


def test_a_file_found_at_import_and_removed_runs_the_whole_suite(tmp_path_factory, kit_home):
    """`feature.py` sets `ON` at import from whether `feature.flag` exists; it did at the seal. Was: a file looked
    for and found outside any test was not recorded, and removing it ran no sealed test. Beside it: a file nobody
    looked for (`README.txt`) removed runs none."""
    res, ran = _stop(tmp_path_factory, kit_home, {"feature.flag": None})
    assert res.returncode == 2 and "tests/test_feature.py::test_enabled" in res.stderr, (ran, res.stderr)
    assert ran == "all", ran
    _reaches_none(tmp_path_factory, kit_home, "README.txt")


def test_a_weakening_in_a_test_file_the_change_does_not_reach_is_named(tmp_path_factory, kit_home):
    """`test_rate` skipped while the change (`mul`) reaches only `test_calc.py`. Was: the stop passed and the skip was
    not named (the weakening rules read only the tests of the files the change reached). The sealed copy is not run
    (it cannot fail: nothing it reaches changed), and the skip is named all the same."""
    skipped = "import pytest\nfrom settings import rate\n\n\n@pytest.mark.skip\ndef test_rate():\n    assert rate() == 2\n"
    res, ran = _stop(tmp_path_factory, kit_home, {"tests/test_settings.py": skipped})
    assert res.returncode == 2 and "tests/test_settings.py::test_rate: skip added [skipped]" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_calc.py"], ran


# A second pooled project: a module read by a name built at run time after another test imported it (no import
# event, no frame of the module's), or read without an import (`sys.modules`, its package's attribute).
LEVELS = "LEVEL = 1\n\n\ndef name():\n    return 'levels'\n"
DYNAMIC = {
    "by_builtin.py": "PKG = 'plugins'\n\n\ndef level():\n    return __import__(PKG + '.levels', fromlist=['x']).LEVEL\n",
    "by_dunder.py": "import importlib\n\n\ndef level():\n    return importlib.__import__('plugins.' + 'levels', "
                    "fromlist=['x']).LEVEL\n",
    "at_import.py": "import importlib\n\nLEVEL = importlib.import_module('.'.join(['plugins', 'levels'])).LEVEL\n\n\n"
                    "def level():\n    return LEVEL\n",
    # read without an import of their own: they pass only after another test imported `plugins.levels`
    "by_literal.py": "import sys\n\n\ndef level():\n    return sys.modules.get('plugins.levels').LEVEL\n",
    "by_attr.py": "import plugins\n\n\ndef level():\n    return getattr(plugins, 'lev' + 'els').LEVEL\n",
    "by_chain.py": "import plugins\n\n\ndef level():\n    return plugins.levels.LEVEL\n",
    "plugins/__init__.py": "", "plugins/levels.py": LEVELS,
    "tests/test_a_levels.py": "from plugins.levels import name\n\n\ndef test_name():\n    assert name() == 'levels'\n",
}
RECORDED = ["by_builtin", "by_dunder", "at_import"]
WITH_ALL = ["by_literal", "by_attr", "by_chain"]
for _name in RECORDED + WITH_ALL:
    DYNAMIC[f"tests/test_{_name}.py"] = f"from {_name} import level\n\n\ndef test_{_name}():\n    assert level() == 1\n"


# A test that runs the product in a child process (what the child imports is not traced).
TOOL = "WORD = 'hi'\n\n\ndef word():\n    return WORD\n\n\ndef main():\n    print(word().upper())\n"
SPAWN = ("import os\nimport subprocess\nimport sys\n\n\ndef test_cli():\n"
         "    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(p for p in sys.path if p)}\n"
         "    out = subprocess.run([sys.executable, '-c', 'import tool; tool.main()'], env=env, capture_output=True,\n"
         "                         text=True, check=True).stdout\n    assert out == 'HI\\n'\n")
SPAWNED = {"tool.py": TOOL, "tests/test_cli.py": SPAWN,
           "tests/test_word.py": "from tool import word\n\n\ndef test_word():\n    assert word() == 'hi'\n"}


def _dynamic(tmp_path_factory, kit_home):
    return sealed_project(tmp_path_factory, kit_home, "reach-dynamic", {"calc.py": CALC, "tests/test_calc.py": OWN, **DYNAMIC, **SPAWNED}, HIDDEN, 10)


def test_a_module_found_by_a_name_built_at_run_time_runs_the_tests_that_read_it(tmp_path_factory, kit_home):
    """Each reader takes `plugins.levels`, which `test_a_levels.py` imported first (at collection), by a name built at
    run time or without an import: no import event, no frame of the module's. Was: `LEVEL` changed ran
    `test_a_levels.py` alone and the stop passed with all six broken. Now the seal records what `__import__`,
    `importlib.__import__` and `importlib.import_module` give (at import too): those tests reach the module, no
    other; `sys.modules['a.b']` and `pkg.mod` are read as imports, and a test reading a module its own imports do not
    give it runs only with the whole suite (alone, it would fail where it passed at the seal). Beside it: a change to
    one reader runs its tests alone (and `test_cli`, which starts a process: every Python change runs it)."""
    res, ran = _stop(tmp_path_factory, kit_home, {"plugins/levels.py": LEVELS.replace("= 1", "= 2")}, _dynamic)
    assert res.returncode == 2 and ran == "all", (ran, res.stderr)
    unseen = [n for n in RECORDED + WITH_ALL if f"tests/test_{n}.py::test_{n}" not in res.stderr]
    assert not unseen, (unseen, res.stderr)
    (kept,) = kit_home.glob("acceptance/*/own-suite.json")
    mapped = json.loads(kept.read_text())["reach"]
    files = {t.split("::")[0][len("tests/test_"):-3]: {mapped["files"][i] for i in idx} for t, idx in mapped["tests"].items()}
    assert all("plugins/levels.py" in files[n] and imported.WITH_ALL not in files[n] for n in RECORDED), files
    assert all(imported.WITH_ALL in files[n] for n in WITH_ALL), files
    res, ran = _stop(tmp_path_factory, kit_home, {"by_dunder.py": DYNAMIC["by_dunder.py"] + "# the same\n"}, _dynamic)
    assert res.returncode == 0 and ran == ["tests/test_by_dunder.py", "tests/test_calc.py", "tests/test_cli.py"], ran


def test_a_module_read_from_sys_modules_or_its_package_is_reached_as_imported(tmp_path):
    """The map alone (`imported.close`): `sys.modules` by a name built at run time reaches any module and runs only
    with the whole suite; by a name written out, that module; the module itself (`__name__`, an object's
    `__module__`) nothing more. `pkg.sub` read as the package's attribute reaches `pkg/sub.py`, alone when the package
    imports it itself, with the whole suite when only another test's import put it there."""
    make_repo(tmp_path / "p", {
        "pkg/__init__.py": "from . import sub\n", "pkg/sub.py": "", "loose/__init__.py": "", "loose/sub.py": "",
        "any.py": "import sys\n\n\ndef f(n):\n    return sys.modules[n]\n",
        "named.py": "import sys\n\n\ndef f():\n    return sys.modules.get('loose.sub')\n",
        "own.py": "import sys\n\n\ndef f(c):\n    return sys.modules[__name__], sys.modules[c.__module__]\n",
        "kept.py": "import pkg\n\n\ndef f():\n    return pkg.sub\n",
        "lent.py": "import loose\n\n\ndef f():\n    return loose.sub\n",
    })
    tests = {f"tests/test_{n}.py::t": [f"{n}.py"] for n in ("any", "named", "own", "kept", "lent")}
    closed = {t.split("::")[0][len("tests/test_"):-3]: set(f) - {t.split("::")[0]}
              for t, f in imported.close(tmp_path / "p", tests).items()}
    assert closed == {"any": {"any.py", ".", imported.WITH_ALL}, "named": {"named.py", "loose/__init__.py", "loose/sub.py", imported.WITH_ALL},
                      "own": {"own.py"}, "kept": {"kept.py", "pkg/__init__.py", "pkg/sub.py", "pkg/sub/__init__.py"},
                      "lent": {"lent.py", "loose/__init__.py", "loose/sub.py", imported.WITH_ALL}}, closed
    narrow = {t: f for t, f in tests.items() if "any" not in t}
    kept = {**reach.pack(imported.close(tmp_path / "p", narrow)), "loose": [], "project_files": []}
    assert reach.select(kept, list(narrow), ["pkg/sub.py"], set()) == {"tests/test_kept.py"}
    assert reach.select(kept, list(narrow), ["pkg/other.py"], set()) == set()
    assert reach.select(kept, list(narrow), ["loose/sub.py"], set()) is None
    kept = {**reach.pack(imported.close(tmp_path / "p", tests)), "loose": [], "project_files": []}
    assert reach.select(kept, list(tests), ["pkg/other.py"], set()) is None  # `any` reads any module


def test_an_extension_module_beside_a_source_runs_the_tests_of_the_source():
    """A compiled module (`calc.abi3.so`, `colorsys.cpython-311-x86_64-linux-gnu.so`) is imported before a `.py` of the
    same name. Was: read as data no test opened, it ran none; now as the module it is (the map alone: building one
    needs a compiler)."""
    kept = {"files": ["calc.py", "pricing/__init__.py", "pricing/util.py"], "rules": reach.RULES, "loose": [],
            "tests": {"tests/test_calc.py::test_add": [0], "tests/test_util.py::test_f": [1, 2]},
            "project_files": ["calc.py", "pricing/__init__.py", "pricing/util.py"]}
    tests = list(kept["tests"])
    assert reach.select(kept, tests, ["calc.abi3.so"], set()) == {"tests/test_calc.py"}
    assert reach.select(kept, tests, ["pricing/util.cpython-311-x86_64-linux-gnu.so"], set()) == {"tests/test_util.py"}
    assert reach.select(kept, tests, ["colorsys.abi3.so"], set()) is None
    assert reach.select(kept, tests, ["pricing/data.so.txt"], set()) == set()
    assert reach.select({**kept, "rules": 2}, tests, ["pricing/data.so.txt"], set()) is None  # a map of older rules


def test_a_module_a_tests_child_process_imports_runs_that_test(tmp_path_factory, kit_home):
    """`test_cli` runs `tool.main()` in a child process, importing nothing of the product itself; `test_word` imports
    `tool`. Was: `tool.main` broken ran `test_word.py` alone (the only test the map saw reach `tool.py`) and the stop
    passed. Now a test that started a process runs at every change of a Python file too, as at every data change."""
    res, ran = _stop(tmp_path_factory, kit_home, {"tool.py": TOOL.replace(".upper()", "")}, _dynamic)
    assert res.returncode == 2 and "tests/test_cli.py::test_cli" in res.stderr, (ran, res.stderr)
    assert ran == ["tests/test_calc.py", "tests/test_cli.py", "tests/test_word.py"], ran
