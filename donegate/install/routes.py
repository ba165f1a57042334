"""Every route by which a donegate Stop hook reaches a session in a folder: a project, local, user or
managed settings file holding the kit's hook (written by `donegate install`), or the plugin enabled in one
of them (`claude plugin install donegate@donegate`: `enabledPlugins`). `install` says which other route
already covers a folder, `doctor` and `status` name them all, and the protected-file check never counts
the plugin's own entry as the agent's change (`unplugged`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLUGIN_PREFIX = "donegate@"  # the plugin's key in enabledPlugins: donegate@<marketplace>


@dataclass
class Route:
    scope: str  # project | local | user | managed
    path: Path  # the settings file
    plugin: bool = False  # the plugin enabled there, rather than the kit's hook written by install

    def describe(self) -> str:
        what = "the donegate plugin enabled" if self.plugin else "a donegate Stop hook"
        return f"{what} in the {self.scope} settings {self.path}"


def plugin_enabled(data: Any) -> bool:
    plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
    return isinstance(plugins, dict) and any(isinstance(k, str) and k.startswith(PLUGIN_PREFIX) and v is True
                                             for k, v in plugins.items())


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


def unplugged(text: str) -> str | None:
    """A settings file's text without the plugin's own entries (`enabledPlugins` donegate@..., the marketplace
    it came from), normalised; None when it is not JSON. Two texts that differ only there are one file to the
    protected-file check: `claude plugin install` after the seal is the person's install, not the agent."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    plugins = data.get("enabledPlugins")
    if isinstance(plugins, dict):
        plugins = {k: v for k, v in plugins.items() if not (isinstance(k, str) and k.startswith(PLUGIN_PREFIX))}
        data = {k: v for k, v in data.items() if k != "enabledPlugins"} | ({"enabledPlugins": plugins} if plugins else {})
    markets = data.get("extraKnownMarketplaces")
    if isinstance(markets, dict) and "donegate" in markets:
        rest = {k: v for k, v in markets.items() if k != "donegate"}
        data = {k: v for k, v in data.items() if k != "extraKnownMarketplaces"} | ({"extraKnownMarketplaces": rest} if rest else {})
    return json.dumps(data, sort_keys=True)


def plugin_only(repo: Path, name: str, before: str | None, base: str | None) -> bool:
    """Whether the protected settings file `name` differs from its sealed digest `before` only by the plugin's
    entries: created by `claude plugin install` with nothing else in it, or the file the sealed base commit
    holds (when that is what was sealed) plus the plugin."""
    if not name.startswith(".claude/settings") or not name.endswith(".json"):
        return False
    from donegate.core import fsafe

    try:
        text = fsafe.read_text(repo / name, limit=1 << 20)
    except (OSError, ValueError):
        return False
    try:
        if not plugin_enabled(json.loads(text)):
            return False
    except ValueError:
        return False
    now = unplugged(text)
    if before is None:
        return now == "{}"
    if not base:
        return False
    import hashlib

    from donegate.tree import git

    res = git.run(repo, "show", f"{base}:./{name}")
    if res.returncode != 0 or hashlib.sha256(res.stdout.encode()).hexdigest() != before:
        return False
    return unplugged(res.stdout) == now
