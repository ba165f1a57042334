"""`donegate` command line: the parser, and the one error handler. The commands are in `commands/`.

`main` is the one error handler: the kit's own `DonegateError` becomes a one- or two-line message
and exit code 1; anything else is logged with its traceback and reported in one line. Command
modules are imported lazily so the hook does not pay for commands it does not run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from donegate import __version__
from donegate.errors import DonegateError


# One module per command (or pair), each with `register(subparsers)` adding its parsers with
# `set_defaults(func=cmd_...)`, in the order `--help` lists them, with the commands each registers. Imported
# only when the parser is built: `donegate hook` never builds it, and a known command builds the parser of its
# own module alone (the others cost ~0.05 CPU-s of imports at every `donegate seal`, `install`, ...).
COMMANDS = {
    "donegate.commands.hooks": ("hook", "guard"),          # the Stop hook, the PreToolUse hook
    "donegate.commands.seal": ("seal", "relocate", "unseal"),
    "donegate.commands.status": ("status",),
    "donegate.commands.write": ("write",),
    "donegate.commands.install": ("install", "uninstall"),
    "donegate.commands.doctor": ("doctor",),
    "donegate.commands.review": ("review",),
    "donegate.commands.report": ("report", "label"),
    "donegate.commands.decide": ("approve", "reject"),
    "donegate.commands.experiment": ("experiment",),       # experiment run | check
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `command` (one of `COMMANDS`' names), of its module's commands only:
    the same parser for that command (its help, its errors), without importing the others."""
    parser = argparse.ArgumentParser(prog="donegate", description="Keep a Claude Code session from declaring done until hidden acceptance tests pass.")
    parser.add_argument("--version", action="version", version=f"donegate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module, names in COMMANDS.items():
        if command is None or command in names:
            importlib.import_module(module).register(sub)
    return parser


def _person(args: argparse.Namespace) -> None:
    """The one check that the kit's own commands are the person's (`donegate.person.ownership`): a command of
    `person.PERSON_COMMANDS` run from inside a gated Claude Code session refuses here, before it acts;
    the others go on. `args.by` (who ran it) goes into the command's ledger line."""
    from donegate import paths
    from donegate.person import ownership as person

    if args.command in person.PERSON_COMMANDS:
        args.by = person.check(args.command, paths.home(), getattr(args, "repo", None))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # The hot path: skip argparse and every other command module.
        from donegate.commands.hooks import cmd_hook

        return cmd_hook(argv[1:])
    known = {name for names in COMMANDS.values() for name in names}
    parser = build_parser(argv[0] if argv[:1] and argv[0] in known else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        _person(args)
        return args.func(args)
    except DonegateError as exc:
        print(f"donegate: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("donegate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`donegate report | head`): what it read was all it wanted, as for any Unix tool.
        # stdout points at /dev/null so the interpreter's last flush does not raise again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a tool that SIGPIPE ended
    except Exception as exc:
        from donegate import gate, paths

        log = gate._log_exception(paths.home())
        print(f"donegate: internal error ({type(exc).__name__}: {exc}); traceback in {log}", file=sys.stderr)
        return 3
