"""Deny rules and sandbox paths as the folders they reach: install names the kit and the state root
by neutral links (`donegate.claude.stubs`); Claude Code follows them, and so do these helpers."""

from __future__ import annotations

import os
import re


def resolved(rule: str) -> str:
    """`Tool(//link/**)` as `Tool(//folder/**)`; a sandbox entry `//link` as `//folder`; others unchanged."""
    m = re.fullmatch(r"(\w+\()?/(/[^)*]*?)(/\*\*)?(\))?", rule)
    if not m or not os.path.islink(m.group(2)):
        return rule
    return f"{m.group(1) or ''}/{os.path.realpath(m.group(2))}{m.group(3) or ''}{m.group(4) or ''}"


def resolved_all(rules: list[str]) -> list[str]:
    return [resolved(r) for r in rules]
