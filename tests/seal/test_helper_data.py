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
