"""Putting the gate in front of a session, and checking it is there: the repository's settings
(`project`), the machine-wide drop-in (`machine`), the PreToolUse guard (`guard`), doctor's checks
(`diagnose`, `weakening`). The hook stubs are `donegate.claude.stubs`, how this copy of the kit was installed
`donegate.core.kit`: a stop's review stage needs both, and a stop never imports this package."""
