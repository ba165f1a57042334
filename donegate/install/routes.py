"""Every route by which a donegate Stop hook reaches a session in a folder: a project, local, user or
managed settings file holding the kit's hook (written by `donegate install`), or the plugin enabled in one
of them (`claude plugin install donegate@donegate`: `enabledPlugins`). `install` says which other route
already covers a folder, `doctor` and `status` name them all, and the protected-file check never counts
the plugin's own entry as the agent's change (`donegate.claude.marketplace`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from donegate.claude.marketplace import PLUGIN_PREFIX, plugin_enabled, unplugged  # noqa: F401 - the plugin's entries


@dataclass
class Route:
    scope: str  # project | local | user | managed
    path: Path  # the settings file
    plugin: bool = False  # the plugin enabled there, rather than the kit's hook written by install

    def describe(self) -> str:
        what = "the donegate plugin enabled" if self.plugin else "a donegate Stop hook"
        return f"{what} in the {self.scope} settings {self.path}"


def kit_stop_hook(data: Any) -> bool:
    """Whether the settings hold the kit's own Stop hook (exec form, a stub, or an older shell line)."""
    from donegate import _layout
    from donegate.claude.settings import hook_words

    hooks = data.get("hooks") if isinstance(data, dict) else None
    groups = hooks.get("Stop") if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        for hook in (group.get("hooks") if isinstance(group, dict) else None) or []:
            if any(_layout.STOP_LAUNCHER in w for w in hook_words(hook)):
                return True
    return False


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def found(files: list[tuple[str, Path]]) -> list[Route]:
    """The routes that put a donegate Stop hook in front of a session whose settings files are `files`
    ((scope, path), `donegate.install.diagnose.settings_files`)."""
    out = []
    for scope, path in files:
        data = _load(path) if path.is_file() else None
        if kit_stop_hook(data):
            out.append(Route(scope, path))
        if scope != "managed" and plugin_enabled(data):
            out.append(Route(scope, path, plugin=True))
    return out


def others(files: list[tuple[str, Path]], mine: Path) -> list[Route]:
    """The routes among `files` other than the settings file `mine` (the one being installed)."""
    return [r for r in found(files) if r.plugin or r.path.resolve() != mine.resolve()]
