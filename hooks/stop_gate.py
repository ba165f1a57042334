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

The launcher's body is `donegate/launcher.py`, imported from the kit's bytecode (compiled from this file at every stop,
it cost ~2.3 ms before the stop's first run could start); this file keeps what must work without it: the fallback.
"""
import gc
import os
import sys

KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FALLBACK_MAX = 6
# No cyclic collection in a stop (`launcher.main`), from here on. Bytecode: the interpreter read PYTHONDONTWRITEBYTECODE
# and PYTHONPYCACHEPREFIX at its start, before `_distrust` drops them. Install runs the hook with -I, which ignores both;
# run any other way (`python stop_gate.py`, a test's subprocess), the kit compiled its ~60 modules from source at every
# stop (0.13 of the hook's 0.23 CPU-s, measured), or kept and read their bytecode in a folder the session named.
gc.disable()
sys.dont_write_bytecode = False
sys.pycache_prefix = None


def _body():
    """`donegate.launcher` from the kit (a checkout's, found beside this folder, or an installed package's, once `site`
    ran: a launcher run with -S runs it first); None when it cannot be imported (the stop then falls back)."""
    sys.path.insert(0, KIT)
    try:
        try:
            from donegate import launcher
        except ImportError:
            if not sys.flags.no_site or "site" in sys.modules:
                raise
            import site

            site.main()
            from donegate import launcher
        return launcher
    except BaseException as exc:
        _WHY.append(type(exc).__name__)
        return None
    finally:
        if sys.path[:1] == [KIT]:
            del sys.path[0]


_WHY: list = []  # why it could not be imported
_BODY = _body()


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
    if _BODY is None:
        try:
            stdin_text = sys.stdin.read()
        except Exception:
            stdin_text = ""
        words = sys.argv[1:] if argv is None else argv  # the state root as `_distrust` takes it
        home = words[words.index("--home") + 1] if "--home" in words[:-1] else os.environ.get("DONEGATE_HOME")
        return _fallback(stdin_text, (_WHY or ["ImportError"])[0], home)
    return _BODY.main(argv, KIT, _fallback)


def answered():
    if _BODY is not None:
        _BODY.answered()
    else:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass


if _BODY is not None:  # (`donegate hook` and the tests call these by name)
    _options, _distrust, _early, _site, _pathlib = (_BODY._options, _BODY._distrust, _BODY._early, _BODY._site,
                                                    _BODY._pathlib)


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException:
        rc = 2
    answered()
    os._exit(rc)
