"""`donegate` command line: one function per command, each returning an exit code.

`main` is the one error handler: the kit's own `DonegateError` becomes a one- or two-line message
and exit code 1; anything else is logged with its traceback and reported in one line. Command
modules are imported lazily so the hook does not pay for commands it does not run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Sequence

from donegate import __version__
from donegate.errors import DonegateError


def cmd_hook(argv: list[str]) -> int:
    """`donegate hook [--home H --repo R --git G --claude C | --managed]`: the launcher's own `main`
    (hooks/stop_gate.py), so a stop run this way reads its arguments, distrusts the environment and
    falls back exactly as the installed hook does."""
    from donegate import _layout, paths

    launcher = Path(_layout.hooks_dir(str(paths.KIT_ROOT))) / _layout.STOP_LAUNCHER
    try:
        spec = importlib.util.spec_from_file_location("donegate_stop_launcher", launcher)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # fail closed: exit 2, never a traceback
        from donegate.outcome import BLOCK, Outcome, render

        code, out, err = render(Outcome("error", BLOCK, f"donegate: the Stop hook's launcher cannot be loaded "
                                                         f"({type(exc).__name__}); reinstall the kit"))
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code
    return module.main(argv)


def cmd_seal(args: argparse.Namespace) -> int:
    from donegate import config, store

    cfg = config.load()
    st = store.seal(
        Path(args.repo), [Path(f) for f in args.tests], request=args.request or "", timeout=cfg["timeout"],
        protected=cfg["protected"], protect_repo_tests=cfg["protect_repo_tests"], allow_skip=args.allow_skip,
        confine=cfg["confine"],
    )
    m = st.manifest
    print(
        f"sealed {m['count']} tests for {m['repo']} at {m['base'][:12]}: "
        f"{len(m['baseline']['failing'])} new requirements failing, {len(m['baseline']['passing'])} already passing"
        + (f", {len(m['baseline']['skipped'])} skipped (sealed with --allow-skip)" if m["baseline"]["skipped"] else "")
    )
    return 0


# Modules that add their own subcommands: each has `register(subparsers)`, which adds its parsers
# with `set_defaults(func=cmd_...)`. Imported only when the parser is built (never for `hook`).
EXTERNAL = (
    "donegate.commands.install",  # install, uninstall
    "donegate.doctor",    # doctor
    "donegate.guard",     # guard (the PreToolUse hook)
    "donegate.writer",    # write
    "donegate.reviewer",  # review
    "donegate.commands.report",  # report, label
    "donegate.experiment",  # experiment
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="donegate", description="Keep a Claude Code session from declaring done until hidden acceptance tests pass.")
    parser.add_argument("--version", action="version", version=f"donegate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("hook", help="run the Stop hook (reads Claude Code's JSON on stdin; exits 0 or 2)")
    p.set_defaults(func=lambda args: cmd_hook([]))

    p = sub.add_parser("seal", help="copy acceptance tests into the store for REPO, outside its tree")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.add_argument("tests", metavar="TEST_FILE", nargs="+", help="pytest files holding the acceptance tests")
    p.add_argument("--request", help="the request the tests were written for (kept in the manifest)")
    p.add_argument("--allow-skip", action="store_true", help="seal tests that skip or xfail now (they fail at every stop until they run)")
    p.set_defaults(func=cmd_seal)

    for module in EXTERNAL:
        if importlib.util.find_spec(module) is None:  # TEMPORARY while the modules are being written
            continue
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # The hot path: skip argparse and every other command module.
        return cmd_hook(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except DonegateError as exc:
        print(f"donegate: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("donegate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from donegate import gate, paths

        log = gate._log_exception(paths.home())
        print(f"donegate: internal error ({type(exc).__name__}: {exc}); traceback in {log}", file=sys.stderr)
        return 3
