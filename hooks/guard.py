#!/usr/bin/env python3
"""donegate's PreToolUse guard for Claude Code: a tiny launcher for `donegate.install.guard`.

Claude Code lets a tool call through when its PreToolUse hook exits with anything but 0 or 2, crashes,
or prints something it cannot read. So this launcher never crashes open: when the package cannot be
imported or fails, it refuses the call, with the documented JSON decision on stdout and exit 2.

`donegate install` runs it in exec form: `PYTHON -I -S guard.py --home ROOT --git GIT`; the state root
comes from the argument, never from `DONEGATE_*` of the session's environment (settings `env` writes
there), and `PYTHON*`, `LD_*`, `GIT_*` are dropped before the package is imported.
"""
import json
import os
import sys

KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DISTRUSTED = ("DONEGATE_", "PYTHON", "LD_", "DYLD_", "GIT_")


def _distrust(argv):
    home = next((argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--home"), None) or os.environ.get("DONEGATE_HOME")
    for k in [k for k in os.environ if k.startswith(DISTRUSTED)]:
        del os.environ[k]
    if home:
        os.environ["DONEGATE_HOME"] = home


def _deny(why):
    reason = "donegate guard: this tool call was refused because the guard itself failed (" + why + "); a person must repair the kit"
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": reason}}))
    print(reason, file=sys.stderr)
    return 2


def main():
    _distrust(sys.argv[1:])
    try:
        stdin_text = sys.stdin.read()
    except Exception:
        stdin_text = ""
    try:
        sys.path.insert(0, KIT)
        from donegate.install import guard

        code, out, err = guard.run_hook(stdin_text)
    except BaseException as exc:  # noqa: BLE001 - the launcher must never exit with anything but 0 or 2
        return _deny(type(exc).__name__)
    try:
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.stdout.flush()
    except Exception:
        pass
    return code if code in (0, 2) else 2


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException:
        rc = 2
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(rc)
