"""Putting the gate in front of a session, and checking it is there: the repository's settings
(`project`), the machine-wide drop-in (`machine`), the hook stubs (`stubs`), the PreToolUse guard
(`guard`), doctor's checks (`diagnose`, `weakening`) and how this copy of the kit was installed (`kit`)."""
