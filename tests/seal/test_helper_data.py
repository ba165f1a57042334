"""Which modules outside the test folders the seal takes for the tests' data (`donegate.seal.helper_data`): data
only, imported by the sealed tests, imported by no module of the product. The code under test is never one."""

from __future__ import annotations

from pathlib import Path

from donegate.seal.helper_data import data_only, found

TEST = "from calc import add\nfrom support.expected import SUM\n\n\ndef test_add():\n    assert add(2, 3) == SUM\n"


def _project(tmp_path: Path, files: dict[str, str]) -> dict[str, dict[str, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return {name: {"text": text} for name, text in files.items() if name.startswith("tests/")}


def test_a_data_module_only_the_tests_import_is_sealed_with_its_package(tmp_path):
    sealed = _project(tmp_path, {"calc.py": "def add(a, b):\n    return a + b\n", "support/__init__.py": "",
                                 "support/expected.py": '"""Expected."""\nSUM: int = 2 + 3\nNAMES = ("a", SUM)\n',
                                 "tests/test_calc.py": TEST})
    assert found(tmp_path, sealed, ["."]) == {"support/__init__.py": "", "support/expected.py":
                                              '"""Expected."""\nSUM: int = 2 + 3\nNAMES = ("a", SUM)\n'}


def test_the_code_under_test_and_what_the_product_imports_are_never_sealed(tmp_path):
    """`calc.py` (a function: the code under test, which only the tests import) is not; a data module the product
    imports (`from support.expected import SUM` in `calc.py`, relative in a package) is the product's; a data module in
    a package with a function beside it would shadow the package: not sealed."""
    sealed = _project(tmp_path, {"calc.py": "from support.expected import SUM\n\n\ndef add(a, b):\n    return SUM\n",
                                 "support/__init__.py": "", "support/expected.py": "SUM = 5\n",
                                 "tests/test_calc.py": TEST})
    assert found(tmp_path, sealed, ["."]) == {}
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "support" / "tools.py").write_text("from .expected import SUM\n")
    assert found(tmp_path, sealed, ["."]) == {}
    (tmp_path / "support" / "tools.py").write_text("def total():\n    return 5\n")
    assert found(tmp_path, sealed, ["."]) == {}
    (tmp_path / "support" / "tools.py").unlink()
    assert set(found(tmp_path, sealed, ["."])) == {"support/__init__.py", "support/expected.py"}


def test_data_only():
    import ast

    assert data_only(ast.parse('"""d."""\nfrom __future__ import annotations\nA = 1\nB = {"x": [A, -2]}\n'))
    for text in ("def f():\n    pass\n", "A = compute()\n", "import os\n", "A = os.sep\n", "class C:\n    pass\n"):
        assert not data_only(ast.parse(text)), text


def test_a_data_modules_values_changed_names_the_tests_importing_it():
    """Compared by value: written otherwise with the same values is no change; a value changed, a name gone or
    added, one not worked out that is written otherwise (`2 ** 10` for `1024`), or the module gone is."""
    from donegate.seal.helper_data import changed

    pack = {"config": "pytest.ini", "helpers": ["support/__init__.py", "support/expected.py"],
            "files": {"pytest.ini": {"text": "[pytest]\npythonpath = .\n"}, "support/__init__.py": {"text": ""},
                      "support/expected.py": {"text": "SUM = 5\nBIG = 2 ** 10\nT = (1, SUM)\n"},
                      "tests/test_calc.py": {"text": TEST}, "tests/test_other.py": {"text": "def test_x():\n    pass\n"}}}
    same = '"""Expected."""\nSUM: int = 2 + 3\nBIG = 2 ** 10\nT = (1, 5)\n'
    assert changed(pack, {"support/expected.py": same}, ["."]) == {}
    assert changed(pack, {"support/expected.py": "SUM = -1\nBIG = 2 ** 10\nT = (1, SUM)\n"}, ["."]) == \
        {"tests/test_calc.py": ["support/expected.py: SUM, T"]}
    assert changed(pack, {"support/expected.py": "SUM = 5\nBIG = 1024\nT = (1, SUM)\nNEW = 1\n"}, ["."]) == \
        {"tests/test_calc.py": ["support/expected.py: BIG, NEW"]}
    assert changed(pack, {"support/expected.py": None}, ["."]) == {"tests/test_calc.py": ["support/expected.py: gone"]}


def test_a_data_module_no_longer_data_only_counts_as_changed():
    """The agent's copy holding more than a docstring and literal assignments (`SUM += 1`, `globals()`, an `if`, a
    `del`, a tuple target) ships a value the comparison cannot see: changed. Look-alike: the same values written
    with a docstring, a `__future__` import and an annotation are no change."""
    from donegate.seal.helper_data import changed

    was = "SUM = 5\nPI = 3.14\n"
    pack = {"config": "pytest.ini", "helpers": ["support/expected.py"],
            "files": {"pytest.ini": {"text": "[pytest]\npythonpath = .\n"}, "support/expected.py": {"text": was},
                      "tests/test_calc.py": {"text": TEST}}}
    for extra in ("SUM += 1\n", "globals()['SUM'] = 3\n", "if 1:\n    SUM = 3\n", "del PI\nPI = 3.14\n",
                  "SUM, PI = 5, 3\n", "import os\n"):
        assert changed(pack, {"support/expected.py": was + extra}, ["."]) == \
            {"tests/test_calc.py": ["support/expected.py: not data only"]}, extra
    honest = '"""Expected."""\nfrom __future__ import annotations\nSUM: int = 5\nPI = 3.14\n'
    assert changed(pack, {"support/expected.py": honest}, ["."]) == {}


def test_a_data_module_too_deep_to_parse_is_unreadable_not_a_crash(tmp_path):
    """`SUM = 1+1+...` (3,000 terms) overflows the parser's recursion: read as unreadable (changed), never raised;
    the seal's search skips such a module or test as it skips one that does not parse."""
    from donegate.seal.helper_data import changed, parsed

    deep = "SUM = " + "+".join(["1"] * 3000) + "\n"
    pack = {"config": "pytest.ini", "helpers": ["support/expected.py"],
            "files": {"pytest.ini": {"text": "[pytest]\npythonpath = .\n"}, "support/expected.py": {"text": "SUM = 5\n"},
                      "tests/test_calc.py": {"text": TEST}}}
    assert changed(pack, {"support/expected.py": deep}, ["."]) == \
        {"tests/test_calc.py": ["support/expected.py: unreadable"]}
    assert changed(pack, {"support/expected.py": "SUM = " + "+".join(["1"] * 5) + "\n"}, ["."]) == {}
    assert parsed(deep) is None and parsed("A = 1\n") is not None
    sealed = _project(tmp_path, {"tests/test_calc.py": TEST + "X = " + "+".join(["1"] * 3000) + "\n",
                                 "tests/test_deep.py": TEST, "support/__init__.py": "", "support/expected.py": deep,
                                 "calc.py": "def add(a, b):\n    return a + b\n"})
    assert found(tmp_path, sealed, ["."]) == {}
