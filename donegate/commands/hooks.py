"""`donegate hook` and `donegate guard`: the two hooks run by hand, exactly as the installed launchers run them
(the Stop hook; the PreToolUse guard)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


DESCRIPTION = ("The Stop hook, as Claude Code runs it: the stop's JSON on stdin; exit 0 lets the agent stop, exit 2 "
               "blocks it with the reason on stderr. Its arguments are the ones `donegate install` writes into the "
               "hook's command.")


def cmd_hook(argv: list[str]) -> int:
    """`donegate hook [--home H --repo R --git G --claude C | --managed]`: the launcher's own `main`
    (hooks/stop_gate.py), so a stop run this way reads its arguments, distrusts the environment and
    falls back exactly as the installed hook does. `--help` prints the help and reads nothing: a person
    trying the command must not wait on stdin nor leave a stop in the ledger."""
    if "-h" in argv or "--help" in argv:
        import argparse

        _arguments(argparse.ArgumentParser(prog="donegate hook", description=DESCRIPTION)).print_help()
        return 0
    from donegate import _layout, paths

    launcher = Path(_layout.hooks_dir(str(paths.KIT_ROOT))) / _layout.STOP_LAUNCHER
    try:
        spec = importlib.util.spec_from_file_location("donegate_stop_launcher", launcher)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # fail closed: exit 2, never a traceback
        from donegate.core.outcome import BLOCK, Outcome, render

        code, out, err = render(Outcome("error", BLOCK, f"donegate: the Stop hook's launcher cannot be loaded "
                                                         f"({type(exc).__name__}); reinstall the kit"))
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code
    code = module.main(argv)
    module.answered()  # as the launcher's own `__main__`: the next stop steps the mirrors instead of walking them
    return code


def cmd_guard(args) -> int:
    """`donegate guard`: the PreToolUse guard (Claude Code's JSON on stdin; exit 0 or 2)."""
    from donegate.install.guard import run_hook

    code, out, err = run_hook(sys.stdin.read())
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    return code


def register(subparsers) -> None:
    p = subparsers.add_parser("hook", help="run the Stop hook (reads Claude Code's JSON on stdin; exits 0 or 2)",
                              description=DESCRIPTION)
    _arguments(p).set_defaults(func=lambda args: cmd_hook([]))
    p = subparsers.add_parser("guard", help="run the PreToolUse guard (reads Claude Code's JSON on stdin; exits 0 or 2)")
    p.set_defaults(func=cmd_guard)


def _arguments(p):
    p.add_argument("--home", metavar="ROOT", help="the state root (store, ledger, donegate.yaml)")
    p.add_argument("--repo", metavar="REPO", help="the guarded repository")
    p.add_argument("--git", metavar="GIT", help="the git binary to run")
    p.add_argument("--claude", metavar="CLAUDE", help="the Claude Code binary the reviewers run")
    p.add_argument("--managed", action="store_true", help="the machine-wide install: the repository comes from the stop's cwd")
    return p
