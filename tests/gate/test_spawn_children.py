"""A spawn or forkserver child of a test in the second run (issue 45: honest changes pass as often as before).

multiprocessing's spawn and forkserver start a fresh interpreter that runs the parent's `__main__` file again (as
`__mp_main__`) and unpickles a function by its module's name. Under pytest a test file's function is `test_x.f`, found
by import; in the second run the test file is the program `__main__`, and its file in the project's folder held
nothing: `__mp_main__.f` was missing in every child, the pool started workers for ever and the stop went to a person
after the second run's whole time ("checked 1 of 4"), an honest project blocked.
"""

from __future__ import annotations

import json

import pytest

from donegate.hidden.second import looked_up
from tests.support.calcrepo import RIGHT_BODY
from tests.support.repos import make_repo, pooled_files, run_hook, seal, sealed_copy, stop_lines, stop_payload, write_config
from tests.support.sdist import venv

CALC = "def price(units):\n" + RIGHT_BODY
BUG = "def price(units):\n    return units * 100\n"
HIDDEN = '''import multiprocessing

import pytest

import calc

RATE = 1


def priced(units):
    return calc.price(units) * RATE


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_pool_of_fresh_interpreters_prices_the_units(method):
    with multiprocessing.get_context(method).Pool(1) as pool:
        assert pool.map(priced, [10, 2]) == [900, 200]


def test_two_units_pay_the_full_price():
    assert calc.price(2) == 200
'''


@pytest.mark.parametrize("confine", ["on", "off"])
def test_a_spawn_pool_mapping_a_function_of_the_test_file_passes_both_runs(tmp_path_factory, kit_home, confine):
    """Confined, the program's file holds the test file's text (`second._programs`) and its children find the function;
    unconfined, the file stays empty (no sealed text on a disk) and such tests are not double-checked, said why."""
    write_config(kit_home, f"confine: {confine}\nscan: off\n")
    repo = pooled_files(tmp_path_factory, kit_home, {"calc.py": BUG}, "test_calc.py", HIDDEN)
    write_config(kit_home, f"confine: {confine}\nscan: off\ntimeout: 30\n")  # a hung second run (the old code) ends in 30 s, not 120
    (repo / "calc.py").write_text(CALC)
    res = run_hook(stop_payload(repo), timeout=120)
    acceptance = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert res.returncode == 0, (res.stderr, json.dumps(acceptance))
    second = acceptance.get("second") or {}
    if confine == "on":
        assert second.get("checked") == 3 and not second.get("unsupported"), json.dumps(acceptance)
        return
    assert second.get("checked") == 1 and sorted(second.get("unsupported") or ()) == [
        f"test_calc.py::test_a_pool_of_fresh_interpreters_prices_the_units[{m}]" for m in ("forkserver", "spawn")], second
    assert all(why.startswith("starts multiprocessing children in a fresh interpreter") for why in second["unsupported"].values())


# The look-alike the program's text must not break: a project whose interpreter has no pytest (the first run imports
# the kit's), a test file that imports pytest, a spawn pool of the product's own function. The child runs `__main__`'s
# file again: with the test file's text there, its `import pytest` would fail in every worker, and the pool would start
# workers until the time ran out. Such a file stays empty (`second._programs`), as a developer's spawn child would not
# run pytest's test file either.
NO_PYTEST = '''import multiprocessing

import pytest

import calc


@pytest.mark.parametrize("units, cost", [(10, 900)])
def test_a_spawn_pool_of_the_products_function(units, cost):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(calc.price, [units, 2]) == [cost, 200]
'''


def test_a_test_file_that_imports_pytest_where_the_project_has_none_keeps_its_spawn_children(tmp_path_factory, kit_home):
    def build(repo, home):
        make_repo(repo, {"calc.py": BUG, ".gitignore": ".venv/\n__pycache__/\n"})
        venv(repo)
        hidden = repo.parent / "hidden" / "test_calc.py"
        hidden.parent.mkdir()
        hidden.write_text(NO_PYTEST)
        res = seal(repo, hidden, extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr

    write_config(kit_home, "confine: on\nscan: off\n")
    repo = sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "no-pytest", build, kit_home)
    write_config(kit_home, "confine: on\nscan: off\ntimeout: 30\n")
    (repo / "calc.py").write_text(CALC)
    res = run_hook(stop_payload(repo), timeout=120)
    acceptance = stop_lines(kit_home)[-1]["gates"]["acceptance"]
    assert res.returncode == 0, (res.stderr, json.dumps(acceptance))
    assert (acceptance.get("second") or {}).get("checked") == 1, json.dumps(acceptance)


@pytest.mark.parametrize("text, found", [
    (HIDDEN, True),  # a helper a spawn child unpickles as `__mp_main__.priced`
    ("class TestCalc:\n    def test_a(self):\n        pass\n", True),  # a test class's instance goes with its methods
    ("def test_a():\n    pass\n\n\ndef test_b(pool):\n    pool.map(test_a, [1])\n", True),  # a test named again
    ("import calc\n\n\ndef test_a():\n    assert calc.price(2) == 200\n", False),
    ("async def test_a():\n    pass\n", False),
])
def test_a_file_past_the_mounts_cap_keeps_its_text_where_a_child_can_look_it_up(text, found):
    """Past `second.MOUNTS` program files (bubblewrap's cost of a mount grows with the mounts before it), only the files a
    spawn child can find something of by name keep their text (`second.looked_up`)."""
    assert looked_up(text) is found
