"""The kit's plugin as Claude Code's settings name it: `enabledPlugins` `donegate@<marketplace>: true`, and the
marketplace it came from (`extraKnownMarketplaces`), what `claude plugin install donegate@donegate` writes.
`install`, `doctor` and `status` find the plugin's route by it (`donegate.install.routes`); the Stop hook's
protected-file check never counts those entries as the agent's change (`donegate.gate.scope`). Plain `json`."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

PLUGIN_PREFIX = "donegate@"  # the plugin's key in enabledPlugins: donegate@<marketplace>


def plugin_enabled(data: Any) -> bool:
    plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
    return isinstance(plugins, dict) and any(isinstance(k, str) and k.startswith(PLUGIN_PREFIX) and v is True
                                             for k, v in plugins.items())


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
