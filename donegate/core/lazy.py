"""A standard module the kit's side of a shipped module imports at its first use, not at the module's import.

`hidden/answers.py`, `bare_plan.py` and `probe_unit.py` are sent to the runs (one namespace, `hidden/ship.py`) and
imported by the kit. In a run they import `ast` at their top as they always did (the second run's record of the
harness's imports, `second.NOTE_IMPORTS`, is unchanged). Imported by the kit (`__package__` set), their `ast` is a
`Lazy` in its place: a stop whose sealed tests' rewrite is kept (`hidden/rewritten.py`) and whose tree has no change
to scan never imports `ast` (~16.7 M instructions, ~7% of the hook's; issue 48 item 2). At its first attribute the
real module is imported and bound to the module's global in the Lazy's place, so later lookups cost nothing more.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Lazy:
    """`module`, imported at the first attribute asked of it, and bound then as `names[name]` (a module's globals)."""

    __slots__ = ("_module", "_names", "_name")

    def __init__(self, module: str, names: dict[str, Any], name: str) -> None:
        self._module, self._names, self._name = module, names, name

    def __getattr__(self, attr: str) -> Any:
        real = __import__(self._module)
        if self._names.get(self._name) is self:
            self._names[self._name] = real
        return getattr(real, attr)
