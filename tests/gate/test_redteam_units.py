"""Red team of issue 45: hidden tests of the shapes the second run left to the first (`unsupported`), through the
real Stop hook (real runs, real repos, one pooled seal).

A test the second harness cannot run faithfully is not double-checked, so a product right only under pytest passed
every stop for exactly those tests. Each attack below is such a product, seen passing on the code before it, beside
an honest look-alike that passes with every test double-checked.

- pytest 9's `subtests` fixture: served by the second harness as pytest serves it (each `subtests.test(...)` block
  runs, an exception in it is that subtest's failure, the test goes on; any failed subtest fails the test).
- unittest TestCase tests (`setUpClass`, `setUp`/`tearDown`, cleanups, `self.subTest`, `self.assert*`): run as pytest
  runs them, each step called by the program itself (no frame of unittest's below the test: a product right only
  under unittest's `run` is caught too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.repos import pooled_files, pooled_hidden, run_hook, stop_lines, stop_payload, write_config

NEW_PYTEST = pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="the subtests fixture is pytest 9's")

ROWS = ("import calc\n\n\ndef test_mul_rows(subtests):\n    for a, b in [(2, 3), (0, 7), (3, 3)]:\n"
        "        with subtests.test(msg='row', a=a, b=b):\n            assert calc.mul(a, b) == a * b\n")
# unittest's TestCase as a project writes it: class fixtures, setUp/tearDown, a cleanup, subTest, self.assert*; one
# class named as pytest's rule has it (Test*) and one not (pytest collects a TestCase whatever its name).
CASES = ("import unittest\n\nimport calc\n\n\nclass HalfTests(unittest.TestCase):\n    @classmethod\n"
         "    def setUpClass(cls):\n        cls.base = 10\n\n    def setUp(self):\n        self.n = self.base\n"
         "        self.addCleanup(setattr, self, 'n', None)\n\n    def tearDown(self):\n        self.assertEqual(self.n, 10)\n\n"
         "    def test_half(self):\n        self.assertEqual(calc.half(self.n), 5)\n\n    def test_rows(self):\n"
         "        for n in (2, 4, 6):\n            with self.subTest(n=n):\n                self.assertEqual(calc.half(n), n // 2)\n\n\n"
         "class TestHalfOdd(unittest.TestCase):\n    def test_odd(self):\n        self.assertEqual(calc.half(7), 3)\n"
         "        self.assertTrue(calc.half(1) == 0)\n")
UNIT_IDS = ["test_cases.py::HalfTests::test_half", "test_cases.py::HalfTests::test_rows", "test_cases.py::TestHalfOdd::test_odd"]
HALF = "\n\ndef half(n):\n    return n // 2\n"
BUG = "def mul(a, b):\n    return a + b\n\n\ndef half(n):\n    return n\n"
RIGHT = "def mul(a, b):\n    return a * b\n" + HALF
# Right only where pytest runs it: `mul` is what only the subtests test calls, `half` what only the unittest tests call.
UNDER_PYTEST = "import sys\n\n\ndef mul(a, b):\n    return a * b if 'pytest' in sys.modules else a + b\n" + HALF
HALF_ATTACKS = {
    "pytest-loaded": "import sys\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef half(n):\n"
                     "    return n // 2 if 'pytest' in sys.modules else n\n",
    # right where a caller's frame is unittest's own (its run() calls the test): under pytest, and under a second run
    # that ran the test through unittest; never where a developer's program calls `half`
    "unittest-on-the-stack": "import sys\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef half(n):\n"
                             "    f = sys._getframe(1)\n    while f is not None and not f.f_code.co_filename.endswith('unittest/case.py'):\n"
                             "        f = f.f_back\n    return n // 2 if f is not None else n\n",
}


def _sealed(tmp_path_factory, kit_home) -> Path:
    """`calc.py` with the bug and the hidden tests sealed for it: once per worker, each test a copy (`sealed_copy`)."""
    write_config(kit_home, "scan: off\n")  # the runs are what is tested
    return pooled_hidden(tmp_path_factory, kit_home, "red2-units", {"calc.py": BUG},
                         {"test_rows.py": ROWS, "test_cases.py": CASES})


def _stop(repo: Path, kit_home: Path, product: str, session: str):
    (repo / "calc.py").write_text(product)
    res = run_hook(stop_payload(repo, session=session))
    return res, stop_lines(kit_home)[-1]["gates"]["acceptance"]


@NEW_PYTEST
def test_a_product_right_only_under_pytest_for_a_subtests_test_disagrees(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, UNDER_PYTEST, "attack")
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert accept["tamper"]["rule"] == "disagree", accept
    assert list(accept["second"]["disagree"]) == ["test_rows.py::test_mul_rows"], accept["second"]


@NEW_PYTEST
def test_an_honest_product_passes_its_subtests_in_both_runs(tmp_path_factory, kit_home):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, RIGHT, "honest")
    assert res.returncode == 0 and "tamper" not in accept, (res.stderr, accept)
    assert accept["second"]["checked"] == 4 and not accept["second"]["unsupported"], accept["second"]


@pytest.mark.parametrize("attack", list(HALF_ATTACKS))
def test_a_product_right_only_under_pytest_for_unittest_tests_disagrees(tmp_path_factory, kit_home, attack):
    repo = _sealed(tmp_path_factory, kit_home)
    res, accept = _stop(repo, kit_home, HALF_ATTACKS[attack], attack)
    assert res.returncode == 2, f"the stop was allowed: {res.stdout} {accept.get('second')}"
    assert accept["tamper"]["rule"] == "disagree", accept
    assert sorted(accept["second"]["disagree"]) == UNIT_IDS, accept["second"]


# The harness's `subtests`, run directly (`second.run`, unconfined): what pytest does with each block.
SUBTESTS = ("import pytest\n\n\ndef test_all_pass(subtests):\n    for i in range(3):\n        with subtests.test(msg='i', i=i):\n"
            "            assert i < 3\n\n\ndef test_one_fails(subtests):\n    for i in range(3):\n        with subtests.test(i=i):\n"
            "            assert i != 1\n\n\ndef test_goes_on_after_a_failed_one(subtests):\n    with subtests.test('first'):\n"
            "        assert False\n    raise KeyError('the test went on')\n\n\ndef test_a_skipped_one_fails_nothing(subtests):\n"
            "    with subtests.test('skipped'):\n        pytest.skip('not here')\n    with subtests.test('raises', kind=1):\n"
            "        with pytest.raises(ValueError):\n            int('x')\n")


def _second(tmp_path: Path, name: str, text: str, ids: list[str]):
    """`ids` of the test file `name` (`text`) run by the second harness itself, unconfined (`second.run`), and the store."""
    import subprocess

    from donegate.hidden import second

    repo, store = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    store.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (store / name).write_text(text)
    return second.run(store, repo, [f"{name}::{t}" for t in ids], timeout=60, kind="none"), store


@NEW_PYTEST
def test_the_second_harness_serves_subtests_as_pytest_does(tmp_path):
    out, _ = _second(tmp_path, "test_s.py", SUBTESTS, ["test_all_pass", "test_one_fails", "test_goes_on_after_a_failed_one",
                                                         "test_a_skipped_one_fails_nothing"])
    assert {i.partition("::")[2]: (r["outcome"], r["why"]) for i, r in out.results.items()} == {
        "test_all_pass": ("passed", ""), "test_one_fails": ("failed", "AssertionError"),
        "test_goes_on_after_a_failed_one": ("failed", "KeyError"), "test_a_skipped_one_fails_nothing": ("passed", "")}, out.problem


# unittest's ways a test ends, run by the second harness directly and by pytest: the same tests pass in both.
UNITS = '''import unittest

LOG = []


class Shapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ready = True
        cls.addClassCleanup(LOG.append, 'class cleanup')

    def setUp(self):
        assert self.ready
        self.addCleanup(LOG.append, 'cleanup')

    def test_plain(self):
        self.assertEqual(sum([1, 2]), 3)

    def test_subtests_go_on(self):
        seen = []
        for i in range(3):
            with self.subTest(i=i):
                seen.append(i)
                self.assertNotEqual(i, 1)
        self.assertEqual(seen, [0, 1, 2])

    def test_a_skipped_subtest(self):
        with self.subTest('skipped'):
            self.skipTest('not here')
        self.assertTrue(True)

    @unittest.expectedFailure
    def test_expected_to_fail_and_fails(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_expected_to_fail_and_passes(self):
        pass

    @unittest.skip('never')
    def test_skipped(self):
        pass

    def test_skips_itself(self):
        self.skipTest('no')

    def test_a_failing_cleanup(self):
        self.addCleanup(int, 'x')


class FailingSetUp(unittest.TestCase):
    def setUp(self):
        self.addCleanup(LOG.append, 'cleaned')
        raise RuntimeError('setUp')

    def test_m(self):
        pass


class FailingTearDown(unittest.TestCase):
    def tearDown(self):
        raise RuntimeError('tearDown')

    def test_m(self):
        pass


class BrokenClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError('setUpClass')

    def test_m(self):
        pass


@unittest.skip('the whole class')
class TestSkippedClass(unittest.TestCase):
    def test_m(self):
        pass
'''


def test_the_second_harness_runs_unittest_tests_as_pytest_does(tmp_path):
    import json
    import subprocess
    import sys

    from donegate.hidden import bare_plan

    planned = bare_plan.plan(UNITS)[1]
    assert len(planned) == 12 and all(not why for why, _ in planned.values())
    out, store = _second(tmp_path, "test_u.py", UNITS, list(planned))
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly", str(store)],
                         capture_output=True, text=True, cwd=store, timeout=120)
    # pytest 9.2 reports a unittest test whose subTest failed PASSED beside its SUBFAILED line and counts the failure
    # in its exit status; the kit's first run fails such a test (`failures.py`), and so does the second harness
    said = [line.split() for line in res.stdout.splitlines()]
    passed = sorted({w[1] for w in said if w[:1] == ["PASSED"]} - {w[1] for w in said if w[:1] and w[0].startswith("SUBFAILED")})
    assert sorted(i for i, r in out.results.items() if r["outcome"] == "passed") == passed, (res.stdout, json.dumps(out.results))
    assert passed == [f"test_u.py::Shapes::{t}" for t in ("test_a_skipped_subtest", "test_plain")], res.stdout


def test_the_plan_leaves_to_the_first_run_the_unittest_tests_it_cannot_run_as_pytest_does():
    from donegate.hidden import bare_plan

    src = ("import unittest\nfrom unittest import TestCase as Case, mock\n\n\nclass A(unittest.TestCase):\n"
           "    def run(self, result=None):\n        return super().run(result)\n\n    def test_m(self):\n        pass\n\n\n"
           "class B(unittest.IsolatedAsyncioTestCase):\n    async def test_m(self):\n        pass\n\n\n"
           "@mock.patch('os.getcwd')\nclass C(Case):\n    def test_m(self, cwd):\n        pass\n\n\n"
           "@unittest.skipIf(False, 'runs')\nclass D(Case):\n    def setup_method(self, m):\n        pass\n\n    def test_m(self):\n"
           "        pass\n\n\nclass TestE(Case):\n    @unittest.expectedFailure\n    def test_m(self):\n        pass\n\n"
           "    async def test_n(self):\n        pass\n")
    assert {q: why for q, (why, _) in bare_plan.plan(src)[1].items()} == {
        # D: pytest's `setup_method` around unittest's own, served (`bare_served.xunit`)
        "A::test_m": "a test class with run", "C::test_m": "a decorated test class", "D::test_m": "",
        "TestE::test_m": "", "TestE::test_n": "an async test", "B::test_m": ""}  # B: in its loop (test_redteam_unit_lineage)
    # a module's set-up and a base of the file's own are served (test_redteam_unit_shapes); a base from elsewhere is not
    assert bare_plan.plan(src + "\n\ndef setUpModule():\n    pass\n")[1]["TestE::test_m"] == ("", [])
    more = src + "\n\nclass F(D):\n    pass\n\n\nclass G(Case, mock.Mixin):\n    def test_g(self):\n        pass\n"
    planned = {q: why for q, (why, _) in bare_plan.plan(more)[1].items()}
    assert planned["F::test_m"] == "" and "G::test_g" not in planned, planned


# --- decoys: a latch on an expected set, frozenset, bytes or empty container ------------------------------------
# A value equal to the first set, frozenset or bytes it is compared with passed both runs and the probe where the test
# held the expected value in a constant, a local or a parametrize case (no decoy was drawn for those kinds), and one
# stop in two for a held literal set, or an empty one (`[]`, `{}`, `''`, `set()`: one decoy each).
KINDS = ("import pytest\n\nimport calc\n\nTAGS = {'crimson', 'cobalt'}\n\n\ndef test_set_constant():\n    assert calc.tags() == TAGS\n\n\n"
         "def test_frozenset_local():\n    expected = frozenset({1, 2, 3})\n    assert calc.frozen() == expected\n\n\n"
         "@pytest.mark.parametrize('word, raw', [('ok', b'ok')])\ndef test_bytes_case(word, raw):\n    assert calc.packed(word) == raw\n\n\n"
         "def test_empty_local():\n    expected = []\n    assert calc.listed() == expected\n\n\n"
         "def test_empty_literals():\n    assert calc.listed() == []\n    assert calc.table() == {}\n    assert calc.text() == ''\n"
         "    assert calc.none() == set()\n    assert calc.tags() == {'crimson', 'cobalt'}\n")
KINDS_BUG = ("def tags():\n    return set()\n\n\ndef frozen():\n    return frozenset()\n\n\ndef packed(n):\n    return b''\n\n\n"
             "def listed():\n    return [0]\n\n\ndef table():\n    return {0: 0}\n\n\ndef text():\n    return '?'\n\n\ndef none():\n    return {0}\n")
KINDS_LATCH = ("class Latch:\n    def __init__(self):\n        self.v = None\n\n    def __eq__(self, other):\n"
               "        if self.v is None and isinstance(other, (set, frozenset, bytes, list, dict, str)):\n            self.v = other\n"
               "        return self.v == other\n\n    __hash__ = object.__hash__\n\n\n"
               "def tags(*args):\n    return Latch()\n\n\nfrozen = packed = listed = table = text = none = tags\n")
KINDS_HONEST = ("import dataclasses\n\n\nclass Tags(set):\n    pass\n\n\nclass Raw(bytes):\n    pass\n\n\nclass Rows(list):\n    pass\n\n\n"
                "@dataclasses.dataclass(eq=False)\nclass Frozen:\n    items: tuple\n\n    def __eq__(self, other):\n"
                "        if isinstance(other, (set, frozenset)):\n            return frozenset(self.items) == other\n"
                "        return NotImplemented\n\n    __hash__ = object.__hash__\n\n\n"
                "@dataclasses.dataclass(eq=False)\nclass Table:\n    rows: tuple = ()\n\n    def __eq__(self, other):\n"
                "        return dict(self.rows) == other if isinstance(other, dict) else NotImplemented\n\n    __hash__ = object.__hash__\n\n\n"
                "def tags():\n    return Tags({'crimson', 'cobalt'})\n\n\ndef frozen():\n    return Frozen((3, 1, 2))\n\n\n"
                "def packed(word):\n    return Raw(word.encode())\n\n\ndef listed():\n    return Rows()\n\n\ndef table():\n    return Table()\n\n\n"
                "def text():\n    return ''\n\n\ndef none():\n    return Frozen(())\n")


@pytest.mark.parametrize("product", ["latch", "honest"])
def test_a_latch_on_a_set_bytes_or_empty_container_is_caught_and_honest_ones_pass(tmp_path_factory, kit_home, product):
    write_config(kit_home, "scan: off\n")
    repo = pooled_files(tmp_path_factory, kit_home, {"calc.py": KINDS_BUG}, "test_kinds.py", KINDS)
    res, accept = _stop(repo, kit_home, KINDS_LATCH if product == "latch" else KINDS_HONEST, product)
    if product != "latch":
        assert res.returncode == 0 and accept["second"]["checked"] == 5, (res.stderr, accept)
        return
    assert res.returncode == 2 and "tamper" in accept, (res.stdout, accept)
    disagree = accept["second"]["disagree"]
    assert {f"test_kinds.py::{t}" for t in ("test_set_constant", "test_frozenset_local", "test_bytes_case[ok-ok]",
                                            "test_empty_local")} <= set(disagree), disagree
    assert "crimson" not in res.stderr and "cobalt" not in res.stderr


def test_a_held_set_bytes_or_empty_literal_gets_as_many_decoys_as_a_number():
    """A held literal's object is right one time in 16 when it latches (`answers.answer_decoys`): a set, a frozenset,
    bytes and an empty container get 15 decoys too, each of its type, none equal to it."""
    import random

    from donegate.hidden import answers

    for e in ({"crimson", "cobalt"}, frozenset({1, 2, 3}), b"\x00\x02", "ab", "a", b"\x00", [], (), {}, "", b"", set(),
              frozenset(), {None}, {True}):
        ds = answers.answer_decoys(e, random.Random(7))
        assert len(ds) == answers.ANSWER_DECOYS and all(type(d) is type(e) and d != e for d in ds), (e, ds)
        assert len({answers._answer_dumps(answers.answer_encode(d)) for d in ds}) == len(ds), (e, ds)


@pytest.mark.parametrize("e", [(True, True, False), (True,) * 5, {"a": True, "b": False, "c": True}])
def test_a_container_of_bools_is_not_the_one_candidate_of_one_element_kind(e):
    """An element's decoys of other kinds alone made a container of bools nearly the only candidate all of one kind:
    an `__eq__` picking the candidate of fewest element kinds found (True, True, False) 81 times in 100 (the reviewer's
    Flags). A bool's pool is mostly its `not`, two thirds: now fewer than half, 15 decoys each (chance: 1 in 16)."""
    import random

    from donegate.hidden import answers

    def kinds(c):
        return len({type(x) for x in (c.values() if isinstance(c, dict) else c)})

    found = 0
    for seed in range(100):
        rnd = random.Random(seed)
        cands = [e, *answers.answer_decoys(e, rnd)]
        assert len(cands) == 16 and all(d != e for d in cands[1:]), cands
        fewest = [c for c in cands if kinds(c) == min(map(kinds, cands))]
        found += rnd.choice(fewest) is e
    assert found < 55, found


class _Latch:
    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def test_the_second_runs_decoys_of_a_set_bytes_or_empty_container(monkeypatch):
    """The decoys an object of the repository's is compared with first in the test's frame (`probe.make_probe`):
    of the expected value's type, unequal to it, a set's of its size with one element changed ({None}'s too: None's
    decoys are of other kinds); an empty one's one element more; 15 of each."""
    from donegate.hidden import answers, probe as probe_mod

    monkeypatch.setattr(probe_mod, "answer_decoys", answers.answer_decoys, raising=False)  # as the harness has it
    probe = probe_mod.make_probe(str(Path(__file__).parent), [].append)
    for e in ({"crimson", "cobalt"}, frozenset({1, (2, 3)}), {None}, b"ok", [], (), {}, "", b"", set(), frozenset()):
        drawn = probe.decoys(_Latch(), e)
        assert drawn and all(type(d) is type(e) and d != e for d in drawn), (e, drawn)
        size = len(e) + 1 if not e else len(e) if isinstance(e, (set, frozenset)) else None
        assert size is None or all(len(d) == size for d in drawn), (e, drawn)
        assert len(drawn) == answers.ANSWER_DECOYS, (e, drawn)  # an empty one's and {None}'s had one (red2)
