"""Several sessions in one Claude Code process: `claude -p --input-format stream-json --output-format stream-json`.

A session costs 0.60-0.65 CPU-s to start and answer at once, a further turn tens of milliseconds (tests/support/session.py).
Where the cases of some tests share a repository, its settings, the environment and the working folder, they can
share the process: each case's prompt is sent once the one before it ended, with `/clear` between them. `/clear` starts
a new session in the same process (measured on 2.1.197 and 2.1.332): a new session id, transcript and conversation, so
to every hook (the kit's counters, verdict cache and breaker, all kept by session id) it is a session of its own; the
settings, hooks and sandbox are the ones read at the process's start, as they are for any session.

Each case is answered by a FakeAPI of its own: the one server's handler is pointed at the case's FakeAPI before its
prompt is sent, so a case's requests, script, overrun and errors are its own, and a `SessionResult` per case reads as
one of `run_session`'s. `before(k)` runs before case k is sent (after the `/clear` that ended case k-1): a reset of
the repository, a donegate.yaml of the case's own.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .fakeapi import FakeAPI
from .session import SessionResult, SessionTimeout, _clean_env, _kill_group, find_claude


def _user(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def run_sessions(
    repo: Path,
    apis: list[FakeAPI],
    prompts: list[str],
    *,
    before: Callable[[int], None] | None = None,
    allowed_tools: Iterable[str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
    home: Path,
    wrap: Iterable[str] = (),
) -> list[SessionResult]:
    """`prompts[k]` answered by `apis[k]`, one case after the other, in one `claude -p` process in `repo` (see the
    module docstring); `timeout`: seconds for each case. The first FakeAPI's server serves them all (started here
    when it is not)."""
    assert len(apis) == len(prompts) >= 1
    claude = find_claude()
    home.mkdir(parents=True, exist_ok=True)
    if home.resolve() == Path(os.path.expanduser("~")).resolve():
        raise ValueError("run_sessions: refusing to use the real HOME")
    hub = apis[0]
    started = hub._httpd is None
    if started:
        hub.start()
    assert hub._httpd is not None
    handler = hub._httpd.RequestHandlerClass
    env = _clean_env({"ANTHROPIC_BASE_URL": hub.base_url, "ANTHROPIC_API_KEY": "test-key", **(extra_env or {})}, home=home)
    cmd = [*wrap, str(claude), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    if allowed_tools:
        cmd += ["--allowedTools", *allowed_tools]  # last: it takes a variable number of values
    lines: queue.Queue = queue.Queue()
    cases: list[tuple[dict | None, list[str], float]] = []
    transcripts = home / ".claude" / "projects"
    # stderr to a file (a process Claude Code leaves behind may hold it open); stdout read line by line as it comes.
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        out = proc.stdout
        reader = threading.Thread(target=lambda: [lines.put(line) for line in iter(out.readline, b"")] + [lines.put(None)],
                                  daemon=True)
        reader.start()

        def answer(text: str, what: str) -> tuple[dict | None, list[str]]:
            """Send `text`, read up to its result line."""
            assert proc.stdin is not None
            proc.stdin.write(_user(text).encode())
            proc.stdin.flush()
            got: list[str] = []
            deadline = time.monotonic() + timeout
            while True:
                try:
                    raw = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise SessionTimeout(f"{what}: no result within {timeout}s\nstdout: {''.join(got)[-1500:]}") from None
                if raw is None:
                    return None, got  # the process ended without a result
                got.append(raw.decode("utf-8", "replace"))
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict) and obj.get("type") == "result":
                    return obj, got

        try:
            for k, (api, prompt) in enumerate(zip(apis, prompts, strict=True)):
                if k:
                    cleared, said = answer("/clear", f"/clear before case {k}")
                    assert cleared is not None and not cleared.get("is_error"), said
                if before is not None:
                    before(k)
                handler.api = api  # from here on the case's own script answers, and keeps its requests
                t0 = time.monotonic()
                result, said = answer(prompt, f"case {k}")
                cases.append((result, said, time.monotonic() - t0))
                if result is None:
                    break
            proc.stdin.close()
            proc.wait(timeout=60)
        except BaseException:
            _kill_group(proc.pid)
            proc.wait(timeout=10)
            raise
        finally:
            handler.api = hub
            _kill_group(proc.pid)  # whatever the run left behind
            if started:
                hub.stop()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    results = []
    for k in range(len(apis)):
        result, said, duration = cases[k] if k < len(cases) else (None, [], 0.0)  # after a case with no result: none
        # The process exits with its last result's status (1 for an error: measured on 2.1.197 and 2.1.332); a case
        # with a result before that one gets its own, as `claude -p` gives it, never the process's, which would hide
        # its error behind a later case's success or blame it for a later case's error.
        rc = proc.returncode if result is None or k == len(cases) - 1 else int(bool(result.get("is_error")))
        sid = (result or {}).get("session_id")
        requests = [r for r in apis[k].requests if r.session_id in (None, sid)] if sid else list(apis[k].requests)
        # The case's own transcript (and its subagents'): the others' lie beside it, under the same HOME.
        own = sorted(p for p in transcripts.glob("**/*.jsonl") if sid and (p.stem == sid or sid in p.parts))
        results.append(SessionResult(returncode=rc, result=result, stdout="".join(said), stderr=stderr,
                                     requests=requests, transcripts=own, home=home, duration=duration, cmd=cmd))
    return results
