"""The one boundary to the other agent CLIs: Gemini CLI, GitHub Copilot CLI and Qwen Code (docs/gemini.md,
docs/copilot.md, docs/qwen.md list what was verified on which release).

- `payloads`: which client sent a stop, and its payload in Claude Code's words (the gate reads one shape);
- `homes`: where each client keeps its configuration, and its folder trust;
- `wiring`: what `donegate install --client gemini|copilot|qwen` and `uninstall --client ...` do, and
  what `doctor --client ...` checks.

The Stop hook is the same launcher Claude Code runs (`hooks/stop_gate.py`) through the same stubs
(`donegate.claude.stubs`), told `--client <name>`; its block (exit 2, the reason on stderr and as
`{"decision": "block", "reason": ...}` on stdout, `donegate.core.outcome.render`) is obeyed by all five.
"""
