"""A data file of the project's own tests (inflect 7.4.0's `tests/inflections.txt`, a row a line: what a word becomes)
changed since the seal (docs/own-suite.md, "Data files of the tests"). The sealed run reads the sealed copy, so no
change to it makes a sealed test pass; what was missing: a row changed to what the broken code returns was never
named (the block said only "a regression"), rows removed were never named, and a row the agent added was never run.
Through the real hook, pooled seals: the hidden test of one asks for a new word (`ox`, and mentions `mouses` without
asking for it); another's asks for a new value of a row (`fish`: the contract changes) and, on numeric rows (`2 -> 0`,
read as ints), tells a value the request asks for (`bonus(2) == 200`) from its digits elsewhere (`// 100`, `9990`) or
in a str (`'300'`), one row and one function a case."""

from __future__ import annotations

import pytest

from tests.support import own_batch
from tests.support.repos import run_hook, sealed_project, stop_lines, stop_payload

WORDS = ('IRREGULAR = {"child": "children", "mouse": "mice", "fish": "fishes"}\n\n\n'
         "def plural(word):\n    return IRREGULAR.get(word, word + 's')\n")
ROWS = "# word -> plural\ncat -> cats\nchild -> children\nfish -> fishes\nmouse -> mice\ncat -> cats\n"  # (a row twice)
READS = ("from pathlib import Path\n\nimport words\n\nROWS = Path(__file__).with_name('inflections.txt')\n\n\n"
         "def test_many():\n    for line in ROWS.read_text().splitlines():\n"
         "        if line.strip() and not line.startswith('#'):\n            word, want = line.split(' -> ')\n"
         "            assert words.plural(word) == want\n")
OTHER = "import words\n\n\ndef test_cat():\n    assert words.plural('cat') == 'cats'\n"
# Two more data files read the same way (no `mouse`, `fish` or `ox`: no case's change of `plural` reaches their rows),
# so that cases on different files share a stop (`_rows`, `_honest`).
ROWS_MORE = "# word -> plural\ncat -> cats\nchild -> children\ndog -> dogs\ncat -> cats\n"
FILES = {"words.py": WORDS, "tests/inflections.txt": ROWS, "tests/test_inflections.py": READS,
         "tests/test_words.py": OTHER,
         **{f"tests/inflections_{k}.txt": ROWS_MORE for k in (2, 3)},
         **{f"tests/test_inflections_{k}.py": READS.replace("inflections.txt", f"inflections_{k}.txt").replace(
             "def test_many", f"def test_many_{k}") for k in (2, 3)}}
FISH = "import words\n\n\ndef test_fish():\n    assert words.plural('fish') == 'fish'\n"
# 'mouses' only in a comment and a check that plural never gives it: the request does not ask for it
DODGE = ("import words\n\n\ndef test_ox():\n    assert words.plural('ox') == 'oxen'  # not 'mouses'\n"
         "    assert words.plural('ox') != 'mouses'\n    assert len('mouses') == 6\n")
OX = '"ox": "oxen", "child"'  # the request done
MANY = "tests/test_inflections.py::test_many"
MANY_2, READERS = "tests/test_inflections_2.py::test_many_2", [f"tests/test_inflections{k}.py" for k in ("", "_2", "_3")]
# numbers: rows `n -> value`, read as ints, one data file and one function a case (`discount`, `bonus`, `fee`), each
# case's value its own (100, 200, 300), the three cases in one stop on one seal (`_numbers`)
PRICES = "".join(f"{TABLE} = {{2: 0, 5: {five}}}\n" for TABLE, five in (("RATES", 10), ("BONUS", 20), ("FEES", 30))) + "".join(
    f"\n\ndef {name}(n):\n    return {TABLE}.get(n, 0)\n" for name, TABLE in (("discount", "RATES"), ("bonus", "BONUS"),
                                                                        ("fee", "FEES")))
CUTS = "# n -> discount\n2 -> 0\n5 -> 10\n"
READ_CUTS = ("from pathlib import Path\n\nimport prices\n\nROWS = Path(__file__).with_name('discounts.txt')\n\n\n"
             "def test_rows():\n    for line in ROWS.read_text().splitlines():\n"
             "        if line.strip() and not line.startswith('#'):\n            n, want = line.split(' -> ')\n"
             "            assert prices.discount(int(n)) == int(want)\n")
NUMBERS = {"prices.py": PRICES, "tests/test_prices.py": "import prices\n\n\ndef test_five():\n    assert prices.discount(5) == 10\n",
           **{f"tests/{rows}.txt": CUTS.replace("discount", name).replace("10", ten)
              for name, rows, ten in (("discount", "discounts", "10"), ("bonus", "bonuses", "20"), ("fee", "fees", "30"))},
           **{f"tests/test_{rows}.py": READ_CUTS.replace("discounts.txt", f"{rows}.txt").replace(".discount(", f".{name}(")
              for name, rows in (("discount", "discounts"), ("bonus", "bonuses"), ("fee", "fees"))}}
# The hidden test: `discount` holds 100 only as `// 100`, in an unrelated 9990 (asks for 99); `bonus(2) == 200` asks for
# 200; `fee(2) == '300'` asks for the str '300', not the int
NUMBERS_HIDDEN = ("import prices\n\n\ndef test_request():\n    assert prices.discount(9990) == 9990 // 100\n\n\n"
                  "def test_bonus():\n    assert prices.bonus(2) == 200\n\n\ndef test_fee():\n    assert prices.fee(2) == '300'\n"
                  + FISH.replace("import words\n", "\nimport words  # noqa: E402\n"))
# (and the words' rows beside them, `fish` asked as FISH asks it: the project of `_numbers`)
NUMBERS.update({"words.py": WORDS, "tests/inflections.txt": ROWS, "tests/test_inflections.py": READS})
# discount(9990) as the request asks, discount(2), bonus(2) and fee(2) broken, each row made what the code returns
BROKEN = PRICES.replace("RATES = {2: 0", "RATES = {9990: 99, 2: 100").replace("BONUS = {2: 0", "BONUS = {2: 200").replace(
    "FEES = {2: 0", "FEES = {2: 300")
ROWS_N, BONUS_N, FEES_N = (f"tests/test_{rows}.py::test_rows" for rows in ("discounts", "bonuses", "fees"))


def _project(tmp_path_factory, kit_home, hidden: str = DODGE):
    if hidden == NUMBERS_HIDDEN:
        return sealed_project(tmp_path_factory, kit_home, "own-data-numbers", NUMBERS, hidden, 5)
    return sealed_project(tmp_path_factory, kit_home, "own-data", FILES, hidden, 4)


def _stop(repo, kit_home, words: str, rows: str, paths: tuple[str, str] = ("words.py", "tests/inflections.txt")):
    (repo / paths[0]).write_text(words.replace('"child"', OX, 1))
    (repo / paths[1]).write_text(rows)
    res = run_hook(stop_payload(repo))
    return res, stop_lines(kit_home)[-1]["gates"]["own"]


def _mouses(tmp_path_factory, kit_home) -> tuple[dict, dict]:
    """`mouse` broken to `mouses` and its row made `mouse -> mouses`: one stop for the run (`own_batch.shared_stop`)."""
    def edit(repo):
        (repo / "words.py").write_text(WORDS.replace('"mice"', '"mouses"').replace('"child"', OX, 1))
        (repo / "tests" / "inflections.txt").write_text(ROWS.replace("mice", "mouses"))

    res = own_batch.shared_stop(tmp_path_factory, kit_home, "own-data-mouses", lambda home: _project(tmp_path_factory, home),
                                edit)
    return res, res["own"]


def test_an_expected_row_changed_to_what_the_code_returns_is_named(tmp_path_factory, kit_home):
    """`mouse` broken to `mouses` and its row made `mouse -> mouses`. Was: blocked as a regression, nothing named. (The
    pooled project's hidden test mentions 'mouses' without asking for it, `DODGE`: this stop is also the case's
    below, which proves this finding with the mentions beside it.)"""
    res, own = _mouses(tmp_path_factory, kit_home)
    assert res["returncode"] == 2 and f"the old contract changed: the project's own test {MANY}" in res["stderr"], \
        res["stderr"]
    assert f"{MANY}: a row of its data file tests/inflections.txt was changed from 'mouse -> mice' to " \
           "'mouse -> mouses', what the code returns now [expected-to-actual]" in res["stderr"], res["stderr"]
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [(MANY, "expected-to-actual")], own


def _fold(tmp_path_factory, kit_home, name: str, words: str, rows: dict[str, str]) -> dict:
    """One stop for the run (`own_batch.shared_stop`, on the pooled project) of cases on data files of their own
    (`rows`: {path: text}), the request done (`OX`) in `words`."""
    def edit(repo):
        (repo / "words.py").write_text(words.replace('"child"', OX, 1))
        for rel, text in rows.items():
            (repo / rel).write_text(text)

    return own_batch.shared_stop(tmp_path_factory, kit_home, f"own-data-{name}", lambda home: _project(tmp_path_factory, home),
                                 edit)


# Three weakenings or additions, each on its data file, in one stop: the `mouse` row deleted (inflections.txt), a row
# added that the code fails (inflections_2.txt), a distinct row deleted for a duplicate (inflections_3.txt).
ROWS_FOLD = {"tests/inflections.txt": ROWS.replace("mouse -> mice\n", ""),
             "tests/inflections_2.txt": ROWS_MORE + "goose -> geese\n",
             "tests/inflections_3.txt": ROWS_MORE.replace("dog -> dogs\n", "child -> children\n")}


def _rows(tmp_path_factory, kit_home) -> tuple[dict, dict]:
    res = _fold(tmp_path_factory, kit_home, "rows", WORDS, ROWS_FOLD)
    assert res["returncode"] == 2, res["stderr"]
    return res, res["own"]


def test_rows_removed_from_a_data_file_are_named(tmp_path_factory, kit_home):
    """The `mouse` row deleted, the code unchanged (the sealed rows still pass). Was: passed."""
    _, own = _rows(tmp_path_factory, kit_home)
    assert own_batch.of(own, "weakened", "tests/test_inflections.py") == [
        {"test": "tests/test_inflections.py", "rule": "fewer-cases",
         "what": "1 of the 4 rows of its data file tests/inflections.txt removed"}], own


def test_a_duplicate_row_removed_is_not_named(tmp_path_factory, kit_home):
    """The second `cat -> cats` deleted: the same cases are tested. Was: named `fewer-cases` (rows counted by line).
    (In one stop with the honest work on inflections_2.txt: `_honest`.)"""
    own = _honest(tmp_path_factory, kit_home, "duplicate")
    assert own["ok"] and own["weakened"] == [], own


def test_a_distinct_row_removed_for_a_duplicate_added_is_named(tmp_path_factory, kit_home):
    """The attack beside it: the `dog` row deleted and `child -> children` written twice, as many lines as sealed.
    Was: passed (one row gone, one added)."""
    _, own = _rows(tmp_path_factory, kit_home)
    assert own_batch.of(own, "weakened", "tests/test_inflections_3.py") == [
        {"test": "tests/test_inflections_3.py", "rule": "fewer-cases",
         "what": "1 of the 3 rows of its data file tests/inflections_3.txt removed"}], own


def test_a_row_the_agent_added_runs_as_its_own_test(tmp_path_factory, kit_home):
    """A row `goose -> geese` added, the code unchanged: the test reading the file runs with the agent's rows, and
    fails as the agent's own. Was: passed (only the sealed rows ran). (Its stop runs now the readers of the three
    data files its fold changed, and no other.)"""
    res, own = _rows(tmp_path_factory, kit_home)
    assert f"your own test {MANY_2} (a test you added or changed) fails" in res["stderr"], res["stderr"]
    assert sorted(own["ran_now"]) == READERS and own["failing"] == [], own
    assert own_batch.of(own, "weakened", "tests/test_inflections_2.py") == [], own


HONEST = {"tests/inflections.txt": ROWS.replace("mice\ncat -> cats\n", "mice\n"),  # (the duplicate removed)
          "tests/inflections_2.txt": "# each word, then its plural\ndog -> dogs\ncat -> cats\nchild -> children\n"
                                     "goose -> geese\n"}
GOOSE = WORDS.replace('"fish"', '"goose": "geese", "fish"')


def _honest(tmp_path_factory, kit_home, case: str) -> dict:
    """The two look-alikes in one stop; when it does not pass, `case` (duplicate, honest) alone."""
    res = _fold(tmp_path_factory, kit_home, "honest", GOOSE, HONEST)
    if res["returncode"] == 0 and res["own"]["ok"] and sorted(res["own"]["ran_now"]) == READERS[:2]:
        return res["own"]
    rel, words = ("tests/inflections.txt", WORDS) if case == "duplicate" else ("tests/inflections_2.txt", GOOSE)
    repo = _project(tmp_path_factory, kit_home)
    one, own = _stop(repo, kit_home, words, HONEST[rel], ("words.py", rel))
    assert one.returncode == 0, (case, one.stderr)
    return own


def test_honest_work_on_a_data_file_passes(tmp_path_factory, kit_home):
    """The look-alikes: rows added that the code handles, rows reordered, the comment reworded."""
    own = _honest(tmp_path_factory, kit_home, "honest")
    assert own["ok"] and own["weakened"] == [] and "tests/test_inflections_2.py" in own["ran_now"], own


def test_a_row_changed_to_what_the_request_asks_is_a_contract_change(tmp_path_factory, kit_home):
    """`fish` made `fish` as the hidden test asks, and its row with it: the old contract changed, the appeal offered,
    nothing named."""
    res, own = _numbers(tmp_path_factory, kit_home)  # (its project holds the words and their rows too: `NUMBERS`)
    entry = [x for x in res["stderr"].split("\n- ") if x.startswith(f"the old contract changed: the project's own test {MANY}")]
    assert entry and "say so with an appeal" in entry[0], res["stderr"]
    assert _weakened(own, MANY) == [] and [f["contract"] for f in own_batch.of(own, "failing", MANY)] == [True], own


def test_a_row_changed_to_a_value_the_hidden_test_only_mentions_is_named(tmp_path_factory, kit_home):
    """`mouse` broken to `mouses` and its row with it, where the hidden test holds `'mouses'` only in a comment, a `!=`
    check and an unrelated `len(...)`: no hidden test compares `plural` with it, so the request did not ask for it.
    Was: unnamed, the appeal offered (the value's text appeared somewhere in the hidden test)."""
    res, own = _mouses(tmp_path_factory, kit_home)
    assert res["returncode"] == 2, res["stderr"]
    assert [(w["test"], w["rule"]) for w in own["weakened"]] == [(MANY, "expected-to-actual")], own
    assert "not 'mouses'" not in res["stderr"] and "len(" not in res["stderr"], res["stderr"]  # (nothing of the hidden test shown)


def _numbers(tmp_path_factory, kit_home) -> tuple[dict, dict]:
    """`discount(2)`, `bonus(2)` and `fee(2)` broken to 100, 200 and 300 and each row `2 -> 0` made what the code returns,
    `fish` made `fish` and its row with it, with `NUMBERS_HIDDEN`: one stop for the run (`own_batch.shared_stop`); each
    case reads its own test's lines."""
    def edit(repo):
        (repo / "words.py").write_text(WORDS.replace('"fishes"', '"fish"'))
        (repo / "tests" / "inflections.txt").write_text(ROWS.replace("fishes", "fish"))
        (repo / "prices.py").write_text(BROKEN)
        for rows, value in (("discounts", 100), ("bonuses", 200), ("fees", 300)):
            (repo / "tests" / f"{rows}.txt").write_text(NUMBERS[f"tests/{rows}.txt"].replace("2 -> 0", f"2 -> {value}"))

    res = own_batch.shared_stop(tmp_path_factory, kit_home, "own-data-numbers",
                                lambda home: _project(tmp_path_factory, home, NUMBERS_HIDDEN), edit)
    assert res["returncode"] == 2, res["stderr"]
    return res, res["own"]


def _weakened(own: dict, test: str) -> list:
    return [(w["test"], w["rule"]) for w in own_batch.of(own, "weakened", test.split("::")[0])]


def test_a_number_row_changed_to_what_the_code_returns_is_named(tmp_path_factory, kit_home):
    """Numbers: the hidden test holds 100 only as `9990 // 100` (it asks `discount(9990) == 99`), no `==` of a
    `discount` call with 100. Was: unnamed, the appeal offered ('100' in its text)."""
    res, own = _numbers(tmp_path_factory, kit_home)
    assert f"{ROWS_N}: a row of its data file tests/discounts.txt was changed from '2 -> 0' to '2 -> 100', what the " \
           "code returns now [expected-to-actual]" in res["stderr"], res["stderr"]
    assert _weakened(own, ROWS_N) == [(ROWS_N, "expected-to-actual")], own
    assert "9990" not in res["stderr"], res["stderr"]  # (nothing of the hidden test shown)


def test_a_number_row_changed_to_what_the_request_asks_is_a_contract_change(tmp_path_factory, kit_home):
    """The look-alike: the hidden test asserts `bonus(2) == 200` (the request changed it): the row the int 200 is
    the new contract, the appeal offered on its line, nothing named."""
    res, own = _numbers(tmp_path_factory, kit_home)
    entry = [x for x in res["stderr"].split("\n- ") if x.startswith(f"the old contract changed: the project's own test {BONUS_N}")]
    assert entry and "say so with an appeal" in entry[0], res["stderr"]
    assert _weakened(own, BONUS_N) == [] and [f["contract"] for f in own_batch.of(own, "failing", BONUS_N)] == [True], own


def test_a_number_row_is_not_asked_by_the_same_digits_in_a_string(tmp_path_factory, kit_home):
    """The hidden test asserts `fee(2) == '300'`: it asks for the str, the code gives (and the row is read as) the
    int 300; own_expected compares typed values, so the request did not ask for it: named. Was: unnamed."""
    res, own = _numbers(tmp_path_factory, kit_home)
    assert _weakened(own, FEES_N) == [(FEES_N, "expected-to-actual")], own


@pytest.mark.parametrize("rows", [ROWS + "ox -> oxen\n", ROWS.replace("mice\ncat -> cats\n", "mice\n")],
                         ids=["row-added", "duplicate-removed"])
def test_a_regression_beside_a_row_added_is_a_regression(tmp_path_factory, kit_home, rows):
    """A row added (every sealed row kept), or the copy of a row removed (its text kept), and `mouse` broken: the block
    says a regression, not "the old contract changed" (which offers the appeal), and names nothing. Was, the copy
    removed: the old contract changed."""
    repo = _project(tmp_path_factory, kit_home)
    res, own = _stop(repo, kit_home, WORDS.replace('"mice"', '"mouses"'), rows)
    assert res.returncode == 2 and f"the project's own test {MANY} (tests/test_inflections.py:8), as it was when the " \
        "work began, fails now (a regression" in res.stderr, res.stderr
    assert [f["contract"] for f in own["failing"]] == [False] and own["weakened"] == [], own
