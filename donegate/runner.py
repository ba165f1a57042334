"""Run the hidden tests against a repository in a process the repository cannot subvert.

- `python -I`, bytecode in a cache under the state root (never in the store or the repository):
  no current folder on sys.path, no PYTHON* variables, no user site, so a planted
  `sitecustomize.py` or `pytest.py` in the repository is never imported at start-up;
- pytest is imported first, then the repository goes on sys.path (so it cannot shadow pytest);
- `-c <store>/pytest.ini`, rootdir and confcutdir in the store: no `conftest.py` or ini file of the
  repository is read; plugin autoload off, PYTEST_ADDOPTS dropped, no cache provider;
- its own process group with a timeout (proc.run);
- results from the kit's plugin as JSON, stamped with a nonce handed over on stdin, so text a test
  prints can never pose as a result.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

from donegate import paths, proc

INI_NAME = "pytest.ini"
INI_TEXT = "[pytest]\n# Written by donegate: keeps pytest from reading any ini file of the repository.\naddopts =\n"

# Runs as `python -I -c BOOTSTRAP kit repo report pycache -- pytest-args`; the nonce arrives on stdin.
BOOTSTRAP = """\
import sys
kit, repo, report, pycache = sys.argv[1:5]
args = sys.argv[6:]
nonce = sys.stdin.readline().strip()
sys.path.insert(0, kit)
import pytest
from donegate._plugin import Reporter
sys.path.remove(kit)
sys.pycache_prefix = pycache
sys.path.insert(0, repo)
sys.exit(pytest.main(args, plugins=[Reporter(report, nonce)]))
"""

# Variables pytest reads that would let the environment add options or plugins to the hidden run.
_DROP = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER")


class TestRun:
    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, ok: bool, problem: str = "", collected: list[str] | None = None,
                 results: dict[str, dict[str, str]] | None = None, errors: list[dict[str, str]] | None = None,
                 duration: float = 0.0, output: str = "") -> None:
        self.ok = ok  # the run reported on every test it had to
        self.problem = problem  # why it is not ok: a timeout, an early exit, a collection error, missing tests
        self.collected = collected or []
        self.results = results or {}
        self.errors = errors or []
        self.duration = duration
        self.output = output  # pytest's own text, for the log only: it may quote test source

    def failing(self) -> dict[str, str]:
        """Every test that did not pass: only `passed` counts. A test that skipped, xfailed or xpassed
        at run time fails, with the reason shown (code under test can call `pytest.skip` itself)."""
        return {nodeid: _shown(r) for nodeid, r in self.results.items() if r["outcome"] != "passed"}

    def passing(self) -> list[str]:
        return [nodeid for nodeid, r in self.results.items() if r["outcome"] == "passed"]

    def skipped(self) -> dict[str, str]:
        """Tests that skipped, xfailed or xpassed, with the reason shown: a seal refuses them."""
        return {nodeid: _shown(r) for nodeid, r in self.results.items() if r["outcome"] in NOT_RUN}


NOT_RUN = ("skipped", "xfailed", "xpassed")


def _shown(result: dict[str, str]) -> str:
    outcome, message = result["outcome"], result.get("message") or ""
    if outcome in NOT_RUN:
        reason = message.removeprefix("Skipped: ").strip() or "no reason given"
        return f"{outcome} at run time: {reason}"
    return message


def test_files(store: Path) -> list[Path]:
    return sorted(p for p in store.iterdir() if p.suffix == ".py" and p.is_file())


def _bytecode_cache(files: list[Path], repo: Path) -> Path:
    """Where the hidden run writes bytecode of what it imports after pytest.

    Under the state root, beside the store and under the same protection: never into the store,
    whose files are hashed, nor into the repository. Caching the rewritten tests rather than running
    with `-B` saves ~40 ms a stop on a 40-test file. Python trusts a .pyc whose source has the same
    size and mtime (whole seconds), so: the folder is named by the tests' content (a re-seal never
    meets old bytecode), and the repository's part is wiped before every run (an agent's edit made
    within the second of the last run, at the same size, must never run as the old code).
    """
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    cache = paths.state_dir() / "pycache" / digest
    shutil.rmtree(cache / str(repo.resolve()).lstrip("/"), ignore_errors=True)
    return cache


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in _DROP}
    out["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    out["DONEGATE_NESTED"] = "1"  # a test that starts Claude Code must not fire the gate again
    return out


def run(store: Path, repo: Path, *, timeout: float, collect_only: bool = False, expected: list[str] | None = None) -> TestRun:
    """Run (or collect) the store's tests against `repo`; `expected` is the sealed list of test ids."""
    files = test_files(store)
    pycache = _bytecode_cache(files, repo)
    with tempfile.TemporaryDirectory(prefix="donegate-run-") as tmp:
        report = Path(tmp) / "report.json"
        nonce = secrets.token_hex(16)
        args = [
            "-c", str(store / INI_NAME), "--rootdir", str(store), "--confcutdir", str(store),
            "--basetemp", str(Path(tmp) / "basetemp"),
            # Plugins the hidden run has no use for; not loading them is what lets the gate keep
            # up with a bare `pytest -q` of the same tests (measured: the last six save 50-70 ms on
            # a 40-test file). None decides an outcome: they add options the run does not pass
            # (--setup-only, --setup-plan, the `pythonpath` ini key), warnings about exceptions
            # nobody raised in a test, or traceback dumps on a crash, which the timeout handles.
            # The terminal plugin stays: assertion explanations need its options.
            "-p", "no:cacheprovider", "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest",
            "-p", "no:stepwise", "-p", "no:setuponly", "-p", "no:setupplan", "-p", "no:unraisableexception",
            "-p", "no:threadexception", "-p", "no:python_path", "-p", "no:faulthandler",
            "-q", "--no-header", "-rN", "--tb=line",
        ]
        if collect_only:
            args.append("--collect-only")
        args += [str(f) for f in files]
        argv = [sys.executable, "-I", "-c", BOOTSTRAP, str(paths.KIT_ROOT), str(repo), str(report), str(pycache), "--", *args]
        res = proc.run(argv, timeout=timeout, cwd=repo, env=env(), input=nonce + "\n")
        output = res.stdout + res.stderr
        if res.timed_out:
            return TestRun(False, f"the hidden tests did not finish within {timeout:g} s (timeout); the run was killed", duration=res.duration, output=output)
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return TestRun(False, f"the test run ended before reporting (exit code {res.returncode}): the code under test may exit the process early", duration=res.duration, output=output)
    if data.get("nonce") != nonce or not data.get("complete"):
        return TestRun(False, "the test report is not the one the kit asked for", duration=res.duration, output=output)
    out = TestRun(True, collected=data["collected"], results=data["results"], errors=data["errors"], duration=res.duration, output=output)
    if out.errors:
        out.ok = False
        out.problem = "the hidden tests failed to collect: " + "; ".join(e["message"].splitlines()[0] if e["message"] else e["nodeid"] for e in out.errors)
    elif expected is not None:
        seen = set(out.collected) if collect_only else set(out.results)
        missing = [t for t in expected if t not in seen]
        if missing:
            out.ok = False
            out.problem = f"{len(missing)} of {len(expected)} sealed tests did not run: " + ", ".join(missing[:5])
    return out
