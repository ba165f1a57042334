"""hypothesis's `@given` tests are double-checked with the draw the first run used (issue 46 item 4).

At each stop every `@given` test draws from its own seed (`seeded.seed_of`: the stop's secret and the test's id), set
as hypothesis's own `@seed` sets it (no example database: the seed alone decides the examples), in the first run by
the plugin and in the second by the harness; neither run times the examples (no deadline, no `too_slow` health
check: on a shared machine one run could fail by chance where the other passed). Before, the second run did not run
them: a pass said how many tests were not double-checked, and a product right under pytest only passed on them.

The project has hypothesis 6.139.3 (MPL-2.0) with its dependencies, sortedcontainers 2.4.0 (Apache-2.0) and attrs
26.1.0 (MIT), vendored as their wheels in tests/data/libs and unpacked into its in-repo `.venv`, as pip installs them:
hypothesis's pytest plugin with it, so the first run runs the tests as the project's own pytest does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from donegate.hidden import seeded
from tests.support import sdist
from tests.support.repos import KIT, make_repo, run_hook, seal, stop_lines, stop_payload, write_config

HYPOTHESIS = ("hypothesis", "sortedcontainers", "attrs")
HIDDEN = '''from hypothesis import given, strategies as st

from calc import add


@given(st.integers(), st.integers())
def test_add_is_the_sum(a, b):
    assert add(a, b) == a + b


@given(b=st.integers(min_value=0, max_value=10))
def test_adding_zero_changes_nothing(b):
    assert add(0, b) == b


def test_a_plain_test():
    assert add(2, 2) == 4
'''
WRONG = "def add(a, b):\n    return a\n"
RIGHT = "def add(a, b):\n    return a + b\n"
# Right under pytest only, and only on what hypothesis draws (the plain test's 2 + 2 is right everywhere).
UNDER_PYTEST = ("import sys\n\n\ndef add(a, b):\n    if (a, b) != (2, 2) and 'pytest' not in sys.modules:\n"
                "        return a\n    return a + b\n")


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """The project and its `.venv`'s site-packages, hypothesis unpacked into it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    site = sdist.venv(repo)
    sdist.wheels(site, *HYPOTHESIS)
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n.hypothesis/\n")
    return make_repo(repo, {"calc.py": WRONG}), site


def _stops(tmp_path_factory) -> dict:
    """One project (its .venv with hypothesis) sealed once in the whole run, a stop of RIGHT and one of UNDER_PYTEST, each
    a session of its own (`pool.SharedRuns`: building the venv and sealing cost what a stop does, twice over):
    {"right"|"under": {"returncode", "stderr", "line"}, "site": the project's site-packages, hypothesis in it}."""
    from tests.support.pool import SharedRuns, shared_root

    def run(key, base: Path) -> dict:
        home = base / "home"
        home.mkdir()
        write_config(home, "own_tests: off\n")
        env = {"DONEGATE_HOME": str(home)}
        repo, site = _project(base)
        hidden = base / "hidden" / "test_calc.py"
        hidden.parent.mkdir()
        hidden.write_text(HIDDEN)
        res = seal(repo, hidden, extra_env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        out: dict = {"site": str(site)}
        for name, product in (("right", RIGHT), ("under", UNDER_PYTEST)):
            (repo / "calc.py").write_text(product)
            hook = run_hook(stop_payload(repo, session=f"given-{name}"), env=env, timeout=300)
            out[name] = {"returncode": hook.returncode, "stderr": hook.stderr, "line": stop_lines(home)[-1]}
        return out

    return SharedRuns(shared_root(tmp_path_factory, "second-given"), ["stops"], run, threads=0)["stops"]


def test_given_tests_are_double_checked(tmp_path_factory):
    stop = _stops(tmp_path_factory)["right"]
    line = stop["line"]
    assert stop["returncode"] == 0 and line["verdict"] == "pass", stop["stderr"]
    second = line["gates"]["acceptance"]["second"]
    assert second["checked"] == 3 and second["unsupported"] == {} and "not_checked" not in second, second


def test_a_product_right_under_pytest_only_on_what_given_draws_is_a_disagreement(tmp_path_factory):
    """On the old code the `@given` tests were not double-checked, and this stop passed."""
    stop = _stops(tmp_path_factory)["under"]
    acceptance = stop["line"]["gates"]["acceptance"]
    assert stop["returncode"] == 2 and acceptance["tamper"]["rule"] == "disagree", stop["stderr"] + json.dumps(acceptance)
    assert "test_add_is_the_sum" in acceptance["tamper"]["what"], acceptance


# A test set as both runs set it (a process of its own each): what it is called with, in order.
DRAW = '''import json, sys
sys.path[:0] = [{site!r}, {kit!r}]
from hypothesis import given, strategies as st
from donegate.hidden import seeded

seen = []


@given(st.lists(st.integers()), st.text())
def test(xs, s):
    seen.append([xs, s])


seeded.given_draw(test, int(sys.argv[1]))
test()
print(json.dumps(seen))
'''


def test_the_second_run_draws_what_the_first_drew(tmp_path_factory, tmp_path):
    """The same test's seed gives the same examples in another process (the second run's), and another stop's seed
    other ones. hypothesis from the pooled project's site-packages (`_stops`: unpacked once in the whole run)."""
    site = _stops(tmp_path_factory)["site"]
    script = tmp_path / "draw.py"
    script.write_text(DRAW.format(site=site, kit=str(KIT)))

    def drawn(seed: int) -> list:
        out = subprocess.run([sys.executable, str(script), str(seed)], capture_output=True, text=True, timeout=120,
                             cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    one, two = seeded.seed_of("a", "test_x.py::test"), seeded.seed_of("b", "test_x.py::test")
    first = drawn(one)
    assert len(first) > 10 and drawn(one) == first
    assert drawn(two) != first
