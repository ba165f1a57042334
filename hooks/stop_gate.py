#!/usr/bin/env python3
"""donegate's Stop hook for Claude Code: a tiny launcher for the package.

It may only exit 0 (stop allowed) or 2 (blocked): Claude Code lets the agent stop on any other exit
code or a crash. If the package itself cannot be imported, this launcher still blocks, counting its
own blocks per session so a broken kit cannot trap a session forever.

`donegate install` runs it in exec form (no shell): `PYTHON -I [-S] stop_gate.py --home ROOT --repo REPO
--git GIT [--claude CLAUDE] [--client NAME]` (`-S` for a checkout's launcher, `_site`; `--managed` instead of `--repo` for the machine-wide install;
`--client codex|gemini|copilot|qwen` from `donegate install --client NAME`: the client is recorded on the stop's
ledger line; without it the payload's shape tells, `donegate.clients.payloads`). Its environment is the
session's, and settings `env` writes into it, so nothing of it is trusted: `DONEGATE_*`, `PYTHON*`,
`LD_*` and `GIT_*` are dropped before the package is imported (their names go to the ledger), the state
root, the repository and git come from the arguments. No variable opens the gate: the kit's own
headless runs are recognised by the session ids the kit recorded for them (`donegate.sessions.kitruns`).

`donegate hook [ARGS]` runs this same `main` (the one code path of a stop): the same arguments, the
same distrust of the environment, the same fallback.
"""
import gc
import os
import sys

KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FALLBACK_MAX = 6
DISTRUSTED = ("DONEGATE_", "PYTHON", "LD_", "DYLD_", "GIT_")
OPTIONS = ("--home", "--repo", "--git", "--claude", "--client")


def _options(argv):
    """{"home": ..., "repo": ..., "git": ..., "managed": bool} from the arguments install wrote."""
    out = {"managed": "--managed" in argv}
    for i, word in enumerate(argv[:-1]):
        if word in OPTIONS:
            out[word[2:]] = argv[i + 1]
    return out


def _distrust(opts):
    """Drop what the session's environment could bend; returns the names that were set."""
    seen = sorted(k for k, v in os.environ.items() if k.startswith(DISTRUSTED) and v)
    home = opts.get("home") or os.environ.get("DONEGATE_HOME")  # an older install set it on the command line
    for k in [k for k in os.environ if k.startswith(DISTRUSTED)]:
        del os.environ[k]
    if home:
        os.environ["DONEGATE_HOME"] = home
    if opts.get("claude"):
        os.environ["DONEGATE_CLAUDE"] = opts["claude"]  # the reviewers' Claude Code, fixed at install
    return seen


def _early(opts):
    """The stop's first run started now, before the kit is imported, from the recipe the last stop of this repository
    kept (`donegate.hidden.early`): the stop adopts it only if it is exactly the run it would start, else kills it.
    Returns the module (None: nothing started), or None on any error: the stop then starts its run itself."""
    if not opts.get("repo"):
        return None
    try:
        from donegate import _layout
        from donegate.hidden import early

        early.start(_layout.state_root(_layout.KIT_ROOT, os.environ), opts["repo"])
        return early
    except BaseException:
        return None


def _site():
    """What `-S` left out, now: `site.main()` adds the environment's site-packages (PyYAML, pytest) as a start
    without `-S` would have (under `-I`: no user site), after the first run's process was started (~2-3 ms of
    the interpreter's start no longer before it). A launcher run without `-S` has them already."""
    try:
        import site

        site.main()
    except BaseException:
        pass  # the kit's imports then fail and the stop blocks (`_fallback`), as without site-packages


def _pathlib():
    """`pathlib` imported without `urllib.parse`, which it imports for `Path.as_uri` alone and which brings `ipaddress`
    with it: ~11.5 M instructions, ~4% of a stop's CPU (issue 48 item 2). While pathlib is imported, `urllib.parse`
    is a stand-in whose one name pathlib takes imports the real module at its first call; then the stand-in is gone,
    so any later `import urllib.parse` gets the real one. Any error: pathlib as it is."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    try:
        import types

        def quote_from_bytes(*args, **kwargs):
            from urllib.parse import quote_from_bytes as real

            return real(*args, **kwargs)

        stand_in = types.ModuleType("urllib.parse")
        stand_in.quote_from_bytes = quote_from_bytes
        sys.modules["urllib.parse"] = stand_in
        try:
            import pathlib  # noqa: F401
        finally:
            if sys.modules.get("urllib.parse") is stand_in:
                del sys.modules["urllib.parse"]
    except BaseException:
        pass


def _fallback(stdin_text, why, home=None):
    import json

    try:
        data = json.loads(stdin_text)
        session = str(data.get("session_id") or data.get("sessionId") or data.get("transcript_path")
                      or data.get("transcriptPath") or "unknown")  # never share "" ids (sessionId: Copilot's)
    except Exception:
        session = "unknown"
    home = home or os.environ.get("DONEGATE_HOME") or KIT
    count = 0
    try:
        import hashlib

        name = hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:24]
        os.makedirs(os.path.join(home, "state"), exist_ok=True)
        path = os.path.join(home, "state", "launcher-" + name + ".count")
        try:
            with open(path) as fh:
                count = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            count = 0
        with open(path, "w") as fh:
            fh.write(str(0 if count >= FALLBACK_MAX else count + 1))
    except Exception:
        count = FALLBACK_MAX  # cannot count: do not trap the session
    if count >= FALLBACK_MAX:
        print(json.dumps({"systemMessage": "donegate is broken (" + why + "); the stop was allowed unverified"}))
        return 0
    reason = "donegate: the kit failed to start (" + why + "); a person must repair it"
    # Codex reads a block from exit 2 with non-empty stderr (and ignores the JSON then): both go out.
    print(json.dumps({"decision": "block", "reason": reason}))
    print(reason, file=sys.stderr)
    return 2


def main(argv=None):
    # No cyclic collection in a stop: its ~140 modules' imports made ~20 collections (one of the older generation)
    # that found under 50 objects to free, ~3.5 ms of the hook's CPU at every stop (issue 48 item 2). A stop's
    # garbage is freed by reference counting; the process ends at its answer (`answered` turns collection back on
    # for the after-answer child).
    gc.disable()
    opts = _options(sys.argv[1:] if argv is None else argv)
    seen = _distrust(opts)
    # Bytecode: the interpreter read PYTHONDONTWRITEBYTECODE and PYTHONPYCACHEPREFIX at its start, before
    # `_distrust` dropped them. Install runs the hook with -I, which ignores both; run any other way (`python
    # stop_gate.py`, a test's subprocess), the kit compiled its ~60 modules from source at every stop (0.13 of
    # the hook's 0.23 CPU-s, measured), or kept and read their bytecode in a folder the session named.
    sys.dont_write_bytecode = False
    sys.pycache_prefix = None
    sys.path.insert(0, KIT)
    early = _early(opts)  # first: nothing of what follows (stdin, the kit's imports) is the first run's business
    if sys.flags.no_site:  # install runs a checkout's launcher with -S: the site-packages come after the early start
        _site()
    try:
        stdin_text = sys.stdin.read()
    except Exception:
        stdin_text = ""
    _pathlib()
    try:
        from donegate import gate

        code, out, err = gate.run_hook(stdin_text, repo=opts.get("repo"), git_path=opts.get("git"),
                                       managed=opts["managed"], env_seen=seen,
                                       client=opts.get("client"))
    except BaseException as exc:  # noqa: BLE001 - the launcher must never exit with anything but 0 or 2
        return _fallback(stdin_text, type(exc).__name__, os.environ.get("DONEGATE_HOME"))
    finally:
        if early is not None:
            try:
                early.discard()  # a run started early that the stop did not take: killed, its folder removed
            except BaseException:
                pass
    try:
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.stdout.flush()
    except Exception:
        pass
    return code if code in (0, 2) else 2


def answered() -> None:
    """The answer is out (flushed): the runs' copies are put back by a child while the client reads it
    (`donegate.hidden.copy.after_answer`). Here and in `donegate hook`, which runs `main` the same way."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    gc.enable()  # off for the stop (`main`); the after-answer child collects as any process does
    try:
        copies = sys.modules.get("donegate.hidden.copy")
        if copies is not None:
            copies.after_answer()
    except BaseException:
        pass


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException:
        rc = 2
    answered()
    os._exit(rc)
