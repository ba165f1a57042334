"""Small shared tools every subsystem uses: the one subprocess starter (`proc`), safe reads of files the
agent can reach (`fsafe`), whole-file writes and timestamps (`util`), the stop's deadline and locks
(`deadline`), what a stop decided (`outcome`), doctor's findings (`finding`), intervals (`stats`), the
scrubbing of everything the agent is shown (`scrub`) and how this copy of the kit was installed (`kit`)."""
