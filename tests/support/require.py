"""Tools some tests need from the machine: skip where they are missing, fail in CI.

`.ci/run` sets DGTEST_REQUIRE_<NAME>=1 for each tool it installs, so a CI run where a sandbox or
browser test was skipped is red instead of quietly green.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _missing(env: str, why: str) -> None:
    if os.environ.get(env) == "1":
        pytest.fail(f"{why} ({env}=1: this run must not skip it)")
    pytest.skip(why)


_WORKS: list[bool] = []


def sandbox_works() -> bool:
    """Whether bubblewrap runs here (asked once per test session)."""
    if not _WORKS:
        path = shutil.which("bwrap")
        ok = path is not None and subprocess.run(
            [path, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent", "true"],
            capture_output=True, timeout=30).returncode == 0
        _WORKS.append(ok)
    return _WORKS[0]


_NS: list[bool] = []


def namespaces_work() -> bool:
    """Whether unprivileged user namespaces work here (asked once per test session): what any bubblewrap needs,
    the system's or the one Codex bundles. Codex 0.169.0 falls back to its own bubblewrap when none is on
    PATH, so its sandbox (and the kit's permission profile) works on a machine without the `bwrap` package."""
    if not _NS:
        path = shutil.which("unshare")
        _NS.append(path is not None and subprocess.run([path, "--user", "--map-root-user", "true"],
                                                       capture_output=True, timeout=30).returncode == 0)
    return _NS[0]


def namespaces() -> None:
    """Skip (fail in CI) where unprivileged user namespaces do not work: no bubblewrap can run."""
    if not namespaces_work():
        _missing("DGTEST_REQUIRE_SANDBOX", "unprivileged user namespaces do not work here (no bubblewrap can run)")


def unconfined() -> bool:
    """No walls here (bubblewrap missing or not running) and the run may do without them: the kit then
    needs `confine: off` from a person (there is no unconfined default), so tests that do not care about
    the walls say it (tests/support/repos.write_config, `confine()`); tests of the walls skip."""
    return not sandbox_works() and os.environ.get("DGTEST_REQUIRE_SANDBOX") != "1"


def confine() -> str:
    """The `confine` value for a test that does not care about the walls: `auto`, or `off` where there are none."""
    return "off" if unconfined() else "auto"


_BWRAP: list[tuple[str | None, str]] = []


def bwrap() -> str:
    """Path of a working bubblewrap (with user/PID/net namespaces), or skip/fail. Tried once per test process
    (a red-team file asks before each of its ~100 confined cases)."""
    if not _BWRAP:
        path, why = shutil.which("bwrap"), ""
        if path is None:
            why = "bubblewrap (bwrap) is not installed"
        else:
            res = subprocess.run([path, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent", "true"],
                                 capture_output=True, text=True, timeout=30)
            if res.returncode != 0:
                why = f"bubblewrap does not run here: {res.stderr.strip()[:200]}"
        _BWRAP.append((path, why))
    path, why = _BWRAP[0]
    if why:
        _missing("DGTEST_REQUIRE_SANDBOX", why)
    return path  # type: ignore[return-value]


def browser() -> str:
    """Path of Chromium (Debian's /usr/bin/chromium), or skip/fail."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    _missing("DGTEST_REQUIRE_BROWSER", "Chromium is not installed (Debian package chromium)")
    raise AssertionError("unreachable")
