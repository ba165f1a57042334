"""A session started at a monorepo's root that edits a sealed package: judged against the package's seal
(it passed ungated, with no ledger line). The look-alike: a root session that leaves the package alone passes
as any folder outside a seal does. Doctor at the root names the sealed package below it."""

from __future__ import annotations

import subprocess
import sys

from tests.support.repos import (EXAMPLE_TESTS, FIX, KIT, REQUEST, example_files, make_repo, run_hook, seal,
                                 stop_lines, stop_payload)


def monorepo(tmp_path):
    mono = make_repo(tmp_path / "mono", {**{f"packages/shop/{k}": v for k, v in example_files().items()},
                                         "packages/other/notes.md": "another package\n", "README.md": "mono\n"})
    res = seal(mono / "packages" / "shop", *sorted(EXAMPLE_TESTS.glob("test_*.py")), request=REQUEST)
    assert res.returncode == 0, res.stderr
    return mono


def test_a_root_session_that_edits_a_sealed_package_is_judged_on_it(tmp_path, kit_home):
    mono = monorepo(tmp_path)
    (mono / "packages" / "other" / "notes.md").write_text("edited\n")
    res = run_hook(stop_payload(mono, session="untouched"))
    assert res.returncode == 0  # the package untouched: outside every seal
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["unsealed"]
    pricing = mono / "packages" / "shop" / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text() + "\n# a change in the sealed package\n")
    res = run_hook(stop_payload(mono, session="root"))
    assert res.returncode == 2 and "acceptance tests fail" in res.stderr, res.stderr
    line = stop_lines(kit_home)[-1]
    assert line["verdict"] == "block" and line["repo"] == str((mono / "packages" / "shop").resolve())
    pricing.write_text(pricing.read_text().replace(*FIX))
    assert run_hook(stop_payload(mono, session="root")).returncode == 0
    assert [r["verdict"] for r in stop_lines(kit_home)] == ["unsealed", "block", "pass"]


def test_doctor_at_the_root_points_to_the_sealed_package(tmp_path):
    mono = monorepo(tmp_path)
    res = subprocess.run([sys.executable, "-m", "donegate", "doctor", str(mono)], cwd=KIT, capture_output=True, text=True,
                         timeout=180)
    package = str((mono / "packages" / "shop").resolve())
    assert f"sealed below this folder: {package}" in res.stdout, res.stdout
    assert "donegate install --scope user" in res.stdout, res.stdout
