"""donegate: keep a Claude Code session from declaring "done" until hidden acceptance tests pass."""

__version__ = "0.1.0"
