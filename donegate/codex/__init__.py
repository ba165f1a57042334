"""The one boundary to OpenAI's Codex CLI (verified on 0.169.0; docs/codex.md lists every difference).

- `trust`: Codex runs a hook only once it is trusted: the `trusted_hash` of a handler, and its key;
- `userconfig`: the kit's block in the user's `$CODEX_HOME/config.toml`: the hooks, their trust, the
  permission profile; written, read back and removed;
- `installing`: what `donegate install --client codex` and `uninstall --client codex` do, and what
  `doctor --client codex` checks.

The Stop hook and the guard are the same launchers Claude Code runs (`hooks/stop_gate.py`,
`hooks/guard.py`) through the same stubs (`donegate.claude.stubs`), told `--client codex`.
"""
