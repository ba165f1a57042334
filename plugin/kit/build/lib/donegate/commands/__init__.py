"""The `donegate` commands: one module per command (or pair, like install/uninstall), each command a
function taking the parsed arguments and returning an exit code, each module a `register(subparsers)`
that adds its parsers. The domain modules they call neither parse arguments nor print.
"""
