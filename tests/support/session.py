"""Run the real Claude Code CLI (``claude -p``) against a FakeAPI server.

The binary is the one npm pins in the project's package.json
(``node_modules/.bin/claude``).  Each run gets a fresh HOME, so nothing is read
from or written to the real home, and an environment stripped of inherited
``ANTHROPIC_*`` / ``CLAUDE*`` variables, so a developer's own Claude Code
session (which sets ``CLAUDECODE`` etc.) cannot leak into the test.

Timing (measured, 2.1.197, native linux-x64): a one-turn ``claude -p`` session
takes about 1.2 s wall time, nearly all of it CLI start-up; each further model
turn adds only tens of milliseconds against the local server.

CPU (2.1.332, rusage of the run, medians of 3-5 interleaved, load 13-19): a session that answers at once
0.60-0.65 CPU-s, the same with a HOME of an earlier session's; each Bash tool turn +0.065 (+0.09 in the
sandbox, whose start adds 0.06); waiting costs ~0.02 CPU-s a second (a Stop hook sleeping 5 s: +0.11).
Across tests/e2e (`-n 2`, every process sampled from /proc every 20 ms: 285 of the cgroup's 325 CPU-s seen, the
rest short-lived processes), by process: 138 Claude Code sessions 114 CPU-s (median 0.73); the pytest runs of
stops, seals and grading 59, their bwrap 13; the hooks' own Python 17; the kit's commands (seal, install,
experiment, doctor) 19; the other clients' own processes 25 (Qwen Code's first shell command alone ~4:
docs/qwen.md; Copilot's unpacking of its package 1.3 a HOME: clientrun.copilot_cache); pip (the plugin's
venv, the wheel) 14; the test processes themselves 9.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import pytest

from .fakeapi import FakeAPI, Request

#: Env var that turns "claude binary missing" from a skip into a failure (CI sets it).
REQUIRE_ENV = "DGTEST_REQUIRE_CLAUDE"

# Every subprocess the harness starts has a timeout; these bound the small ones.
_GIT_TIMEOUT = 30
_VERSION_TIMEOUT = 30


class SessionTimeout(AssertionError):
    """A claude run did not finish in time (raised as a test failure)."""


def _project_root() -> Path | None:
    """The nearest ancestor of this file holding node_modules/.bin/claude."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "node_modules" / ".bin" / "claude").exists():
            return parent
    return None


def _missing(reason: str):
    # Locally a missing CLI is a skip (not everyone runs npm install); in CI,
    # where DGTEST_REQUIRE_CLAUDE=1, a silently skipped e2e suite would hide
    # breakage, so it is a failure there.
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} (and {REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(reason)


def _version(path: str) -> subprocess.CompletedProcess:
    # A throwaway HOME even here: nothing of a test run touches the real one.
    with tempfile.TemporaryDirectory(prefix="claude-home-") as home:
        return subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=_VERSION_TIMEOUT,
            env=_clean_env({}, home=Path(home)),
            stdin=subprocess.DEVNULL,
        )


@functools.lru_cache(maxsize=None)
def _check_binary(path: str) -> str | None:
    """Run ``claude --version`` once; return an error text, or None when fine.

    Catches the classic broken install: npm skipped the postinstall script and
    ``bin/claude.exe`` is still the placeholder, not the native binary.
    """
    try:
        proc = _version(path)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} --version failed: {exc!r}"
    if proc.returncode != 0 or "Claude Code" not in proc.stdout:
        return f"{path} --version gave rc={proc.returncode}: {(proc.stdout + proc.stderr).strip()[-500:]}"
    return None


#: Env var naming another Claude Code to drive (`make e2e CLAUDE_VERSION=...` installs one in
#: .claude-versions/VERSION/ and sets it): the compatibility runs against the oldest supported release.
OTHER_ENV = "DGTEST_CLAUDE"


def find_claude() -> Path:
    """Path of the project's ``node_modules/.bin/claude`` (or of ``$DGTEST_CLAUDE``), or skip the test.

    Skips (fails under ``DGTEST_REQUIRE_CLAUDE=1``) when it is missing or
    does not run.
    """
    other = os.environ.get(OTHER_ENV)
    if other:
        path = Path(other)
        problem = _check_binary(str(path))
        if problem:
            pytest.fail(f"{OTHER_ENV}={other}: {problem}", pytrace=False)
        return path
    root = _project_root()
    if root is None:
        _missing("Claude Code CLI not installed: run `npm install` in the project root (node_modules/.bin/claude)")
    path = root / "node_modules" / ".bin" / "claude"
    problem = _check_binary(str(path))
    if problem:
        _missing(f"Claude Code CLI unusable: {problem}")
    return path


def claude_version() -> str:
    """``claude --version`` output, e.g. ``2.1.197 (Claude Code)``."""
    return _version(str(find_claude())).stdout.strip()


@functools.lru_cache(maxsize=None)
def claude_release() -> tuple[int, ...]:
    """The release the tests drive, e.g. ``(2, 1, 332)``: for the few facts that differ between the
    supported releases."""
    return tuple(int(p) for p in claude_version().split()[0].split("."))


# --------------------------------------------------------------------------
# Repositories
# --------------------------------------------------------------------------


def _git_env() -> dict[str, str]:
    # Hermetic git: no global/system config (hooks, signing, templates) from
    # the machine running the tests.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_SSL_CAINFO"}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; return stdout (raises on failure)."""
    proc = subprocess.run(
        ["git", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=_GIT_TIMEOUT,
        env=_git_env(),
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def make_repo(tmp_path: Path, files: Mapping[str, str] | None = None, *, name: str = "repo") -> Path:
    """A real git repository at ``tmp_path/name`` holding ``files``, committed
    on branch ``main``."""
    repo = Path(tmp_path) / name
    repo.mkdir(parents=True)
    for rel, content in (files or {}).items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    git(repo, "-c", "init.defaultBranch=main", "init", "-q")
    # What three `git config` calls write, without three processes.
    with open(repo / ".git" / "config", "a") as config:
        config.write("[user]\n\tname = donegate tests\n\temail = tests@donegate.invalid\n[commit]\n\tgpgsign = false\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
    return repo


# --------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _npm_shim() -> str | None:
    """A folder (this process's, removed at exit) holding an `npm` that answers `npm root -g` with what the
    real npm answered once, and hands every other command to the real npm; None without npm on PATH.

    Why: a sandboxed Claude Code session runs `sh -c "npm root -g"` at start to look for a globally
    installed apply-seccomp helper (measured on 2.1.332); that one node start cost ~0.16 CPU-s per session,
    about a tenth of a gated session's CPU. The answer is the same text, asked with the same HOME-free
    configuration, so the sandbox finds exactly what it found before (here: no helper)."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    with tempfile.TemporaryDirectory(prefix="npm-home-") as home:
        try:
            proc = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT,
                                  cwd="/", env=_clean_env({}, home=Path(home), shim=False), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
    root = proc.stdout.strip()
    if proc.returncode != 0 or not root or "\n" in root:
        return None
    folder = tempfile.mkdtemp(prefix="dgtest-npm-shim-")
    atexit.register(shutil.rmtree, folder, True)
    script = Path(folder) / "npm"
    script.write_text(
        "#!/bin/sh\n"
        "# tests/support/session.py: `npm root -g` answered from one real run; all else is the real npm.\n"
        f'if [ "$#" -eq 2 ] && [ "$1" = root ] && [ "$2" = -g ]; then printf \'%s\\n\' {shlex.quote(root)}; exit 0; fi\n'
        f'exec {shlex.quote(npm)} "$@"\n'
    )
    script.chmod(0o755)
    return folder


def _clean_env(extra: Mapping[str, str], home: Path, shim: bool = True) -> dict[str, str]:
    """The environment for a claude run (see module docstring); `shim`: the `npm` of `_npm_shim` first on PATH."""
    drop_prefixes = ("ANTHROPIC_", "CLAUDE", "XDG_")
    # Proxies would route 127.0.0.1 traffic away from the fake server.
    drop_names = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(drop_prefixes) and k.lower() not in drop_names
    }
    env.update(
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        NO_PROXY="127.0.0.1,localhost",
        # The native CLI is a Bun executable: this switches off Bun's own GC scheduler (a timer that adds
        # collections on top of JavaScriptCore's, which still run). Its cost is paid while the CLI waits (for
        # a hook, a tool): measured on 2.1.332, ~0.1 CPU-s per second of waiting (a session whose Bash tool
        # sleeps 4 s: 1.78 -> 1.32 CPU-s; one that sleeps 0 s: 1.01 -> 0.98), a gated session 2.15 -> 1.87
        # CPU-s; ~15 MB more RSS. No hook, sandbox, permission or settings behaviour depends on it.
        BUN_GC_TIMER_DISABLE="1",
        # JavaScriptCore's optimising DFG tier off (its baseline JIT stays): a `claude -p` lives a few seconds, too
        # short for the DFG's compiles, done on JIT threads, to pay back. Measured on 2.1.332 (cgroup, interleaved,
        # load 15-26): a one-tool session 0.74-0.90 -> 0.67-0.79 CPU-s (median of 4-6 each, four runs), ~0.07-0.1
        # CPU-s a start. The runtime's tiers only: no hook, sandbox, permission or settings behaviour depends on it.
        BUN_JSC_useDFGJIT="0",
    )
    env["HOME"] = str(home)
    folder = _npm_shim() if shim else None
    if folder:
        env["PATH"] = os.pathsep.join([folder, env.get("PATH") or os.defpath])
    env.update(extra)
    return env


@dataclass
class SessionResult:
    """What one ``claude -p`` run produced."""

    returncode: int
    result: dict | None  # the --output-format json object, None if stdout was not JSON
    stdout: str
    stderr: str
    requests: list[Request]  # FakeAPI requests made by this run
    transcripts: list[Path]  # ~/.claude/projects/**/*.jsonl under the fresh HOME
    home: Path
    duration: float  # wall seconds
    cmd: list[str] = field(default_factory=list)

    @property
    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if r.main]

    @property
    def session_id(self) -> str | None:
        return (self.result or {}).get("session_id")

    def read_transcript(self, path: Path | None = None) -> list[dict]:
        """Entries of a transcript (default: this session's own file, else the
        first one found).  Lines that are not JSON are skipped."""
        if path is None:
            if not self.transcripts:
                return []
            own = [p for p in self.transcripts if self.session_id and p.stem == self.session_id]
            path = (own or self.transcripts)[0]
        entries = []
        for line in Path(path).read_text().splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue
        return entries

    def describe(self) -> str:
        """A compact dump for assertion messages."""
        return (
            f"rc={self.returncode} duration={self.duration:.1f}s\n"
            f"result={json.dumps(self.result)[:2000]}\n"
            f"stderr tail: {self.stderr[-2000:]}"
        )


def _parse_result(stdout: str) -> dict | None:
    text = stdout.strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
        return obj if isinstance(obj, dict) else None
    except ValueError:
        pass
    # Tolerate stray lines before the result object.
    for line in reversed(text.splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_session(
    repo: Path,
    server: FakeAPI,
    prompt: str,
    *,
    settings: dict | None = None,
    allowed_tools: Iterable[str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
    home: Path | None = None,
    extra_args: Iterable[str] = (),
    wrap: Iterable[str] = (),
) -> SessionResult:
    """Run ``claude -p PROMPT --output-format json`` in ``repo`` against ``server``.

    ``settings`` is written to ``repo/.claude/settings.json``.  ``home``
    defaults to a fresh directory next to the repo (so under pytest's
    tmp_path when the repo came from make_repo).  Raises SessionTimeout, with
    the tail of stderr, when the run takes longer than ``timeout`` seconds.
    """
    claude = find_claude()
    repo = Path(repo)
    if settings is not None:
        (repo / ".claude").mkdir(exist_ok=True)
        (repo / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="home-", dir=repo.parent))
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    if home.resolve() == Path(os.path.expanduser("~")).resolve():
        raise ValueError("run_session: refusing to use the real HOME")

    env = _clean_env(
        {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key", **(extra_env or {})},
        home=home,
    )
    # `wrap`: a command prefix (e.g. bubblewrap mounting a test folder over /etc/claude-code).
    cmd = [*wrap, str(claude), "-p", prompt, "--output-format", "json", *extra_args]
    if allowed_tools:
        # Last on the line: --allowedTools takes a variable number of values.
        cmd += ["--allowedTools", *allowed_tools]

    first_request = len(server.requests)
    started = time.monotonic()
    # Output goes to files, not pipes: a background process Claude Code leaves
    # behind (a hook, a `&` Bash command) would hold a pipe open and make us
    # wait for it even after claude itself has exited.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd,
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # own process group, so we can kill it all
        )
        try:
            proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        # Kill the whole group either way: on timeout it is the run; after a
        # normal exit it is whatever the run left behind.
        _kill_group(proc.pid)
        if timed_out:
            proc.wait(timeout=10)
        duration = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")

    if timed_out:
        raise SessionTimeout(
            f"claude -p did not finish within {timeout}s (killed).\n"
            f"server: {len(server.requests) - first_request} requests, overrun={server.overrun}\n"
            f"stdout tail: {stdout[-1500:]}\nstderr tail: {stderr[-3000:]}"
        )

    result = _parse_result(stdout)
    requests = server.requests[first_request:]
    # Concurrent runs share a server: keep only this session's requests when
    # Claude Code told us its session id (it sends X-Claude-Code-Session-Id).
    sid = (result or {}).get("session_id")
    if sid:
        requests = [r for r in requests if r.session_id in (None, sid)]
    transcripts = sorted((home / ".claude" / "projects").glob("**/*.jsonl"))
    return SessionResult(
        returncode=proc.returncode,
        result=result,
        stdout=stdout,
        stderr=stderr,
        requests=requests,
        transcripts=transcripts,
        home=home,
        duration=duration,
        cmd=cmd,
    )
