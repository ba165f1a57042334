"""What a check found: doctor's findings, and the shape checks of `donegate.claude.shapes`."""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, OK = "error", "warning", "ok"


@dataclass
class Finding:
    level: str  # error | warning | ok
    what: str
    where: str = ""
    fix: str = ""
