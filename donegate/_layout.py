"""Where the kit's parts are, as plain `os.path` strings.

One answer for `donegate.paths` (which wraps it in `Path`) and for the guard, which runs before every
tool call and so avoids importing pathlib. Two layouts:

- a checkout (git clone, or `pip install -e .`): `hooks/stop_gate.py` lies beside the package; the
  launchers are in `KIT_ROOT/hooks/` and the state root defaults to the checkout;
- an installed wheel (`pipx install`, `pip install`): the package sits in a site-packages folder, the
  launchers are data files under the environment's prefix (`share/donegate/hooks/`), and the state root
  defaults to `$XDG_DATA_HOME/donegate` (`~/.local/share/donegate`).

`DONEGATE_HOME` overrides the state root in both.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # the guard imports this module at every tool call: typing stays off it
    from typing import Mapping

# The package's parent: the checkout, or the site-packages folder of an installed wheel.
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
STOP_LAUNCHER = "stop_gate.py"
GUARD_LAUNCHER = "guard.py"
SHARED = os.path.join("share", "donegate")
SHARED_HOOKS = os.path.join(SHARED, "hooks")
# How far above the package's parent the installation prefix may lie: 0 for `pip install --target DIR`
# (DIR/share/...), 2 for Windows (`Lib/site-packages`), 3 for POSIX (`lib/pythonX.Y/site-packages`),
# the same for --user, --prefix, venvs and Debian's /usr/local.
PREFIX_DEPTH = 3
# Tools the PreToolUse guard is registered for: the matcher install writes (claude.settings) and the guard
# checks (install.guard). Here, below both, because a stop's review stage writes its headless runs' settings.
GUARD_TOOLS = ("Bash", "Read", "Grep", "Glob", "Edit", "MultiEdit", "Write", "NotebookEdit", "Monitor")


def is_checkout(kit: str) -> bool:
    return os.path.isfile(os.path.join(kit, "hooks", STOP_LAUNCHER))


def hooks_dir(kit: str) -> str:
    """The launchers' folder: the checkout's `hooks/`, else `share/donegate/hooks` of the installation
    the package belongs to (searched upward from it, never in another environment). When neither holds
    the Stop launcher, the checkout's `hooks/`, so that whoever checks it reports where it should be."""
    return kit_folder(kit, "hooks", STOP_LAUNCHER)


def kit_folder(kit: str, name: str, marker: str) -> str:
    """A folder of the kit's own files (`hooks`, `writer`, `reviewer`): the checkout's `name/`, else
    `share/donegate/name` of the installation holding `marker` (a wheel carries them as data files);
    when neither, the checkout's, so that a missing file is reported where it belongs."""
    checkout = os.path.join(kit, name)
    if is_checkout(kit):
        return checkout
    base = kit
    for _ in range(PREFIX_DEPTH + 1):
        shared = os.path.join(base, SHARED, name)
        if os.path.isfile(os.path.join(shared, marker)):
            return shared
        base = os.path.dirname(base)
    return checkout


def state_root(kit: str, env: "Mapping[str, str]") -> str:
    value = env.get("DONEGATE_HOME")
    if value:
        return os.path.realpath(os.path.expanduser(value))
    if is_checkout(kit):
        return kit
    data = env.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(data):  # the XDG spec: a relative value is ignored
        data = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return os.path.realpath(os.path.join(data, "donegate"))


def protected(kit: str, home: str) -> "list[str]":
    """What the agent may not reach: the package's parent (the checkout, or the site-packages folder
    holding the package and the pytest that judges it), the launchers' folder and the state root.
    In a checkout the launchers lie inside it; callers drop a root that lies inside another."""
    return [kit, hooks_dir(kit), home]
