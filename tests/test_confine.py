"""The hidden run's own rules: only `passed` counts, seal refuses skips, the confinement and its channel."""

from __future__ import annotations

import json

import pytest

from conftest import ledger_lines, make_repo, run_hook, stop_payload
from test_gate import seal


def _hidden(tmp_path, body: str):
    test = tmp_path / "hidden" / "test_mod.py"
    test.parent.mkdir(exist_ok=True)
    test.write_text(body)
    return test


@pytest.mark.parametrize("body, word", [
    ("import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n", "skipped"),
    ("import pytest\n\n@pytest.mark.xfail(reason='known bug')\ndef test_a():\n    assert 0\n", "xfailed"),
    ("import pytest\n\n@pytest.mark.xfail(reason='known bug')\ndef test_a():\n    pass\n", "xpassed"),
    ("import pytest\n\ndef test_a():\n    pytest.skip('not today')\n", "skipped"),
])
def test_seal_refuses_tests_that_do_not_run_unless_told(tmp_path, kit_home, body, word):
    repo = make_repo(tmp_path / "repo", {"mod.py": "VALUE = 1\n"})
    test = _hidden(tmp_path, body)
    res = seal(repo, test)
    assert res.returncode == 1, res.stderr
    assert "skip or xfail at seal time" in res.stderr and f"test_mod.py::test_a ({word} at run time" in res.stderr
    assert "--allow-skip" in res.stderr
    assert not (kit_home / "acceptance").exists() or not any((kit_home / "acceptance").glob("*/manifest.json"))
    res = seal(repo, test, "--allow-skip")
    assert res.returncode == 0, res.stderr
    (manifest,) = (kit_home / "acceptance").glob("*/manifest.json")
    assert json.loads(manifest.read_text())["baseline"]["skipped"] == ["test_mod.py::test_a"]
    # ... and at the gate it fails like any test that did not pass, with the reason shown.
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2 and f"{word} at run time" in res.stderr


@pytest.mark.parametrize("call", ["pytest.skip('environment not ready')", "pytest.xfail('flaky upstream')"])
def test_a_skip_or_xfail_from_the_code_under_test_is_a_failure_with_its_reason(tmp_path, kit_home, call):
    repo = make_repo(tmp_path / "repo", {"mod.py": "def value():\n    return 1\n"})
    test = _hidden(tmp_path, "import mod\n\ndef test_value():\n    assert mod.value() == 2\n")
    assert seal(repo, test).returncode == 0
    (repo / "mod.py").write_text(f"import os\n\ndef value():\n    if 'PYTEST_CURRENT_TEST' in os.environ:\n"
                                 f"        import pytest\n        {call}\n    return 1\n")
    res = run_hook(stop_payload(repo))
    assert res.returncode == 2, res.stderr
    reason = call.split("'")[1]
    assert f"at run time: {reason}" in res.stderr
    assert ledger_lines(kit_home)[-1]["gates"]["acceptance"]["passed"] == 0
