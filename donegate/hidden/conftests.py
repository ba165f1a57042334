"""The project's own sealed `conftest.py` files in a subfolder (issue 44): sent as source with the plugin (`runner`),
the standard library only. pytest registers each such file as a plugin while it collects (a root one before); the
tripwire on the registered plugins (`plugin.Tripwires`) takes one as the harness's own when it is a conftest.py that
lay in the sealed store (the run's rootdir, read-only in the walls) before any of the project's code ran, registered
under its own path, every hook of it defined in that file. Any other plugin registered or removed still trips it.
"""

import os
import types

# pytest's default `norecursedirs`: never collected, so never a conftest.py pytest registers
_SKIP = frozenset({"__pycache__", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"})


def conftests_init(wires, config) -> None:
    """The sealed conftest.py files under the rootdir, read before the project's code runs. A run of the working
    tree's own files (its rootdir the working folder: the agent's changed tests) has none sealed."""
    wires.held, wires.extra_hooks, wires.hook_names = [], 0, set(vars(config.pluginmanager.hook))
    root = str(config.rootpath)
    wires.sealed_conftests = set()
    if os.path.realpath(root) == os.path.realpath(os.getcwd()):
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".") and not d.endswith(".egg")]
        if "conftest.py" in files:
            wires.sealed_conftests.add(os.path.realpath(os.path.join(folder, "conftest.py")))


def _sealed_conftest(wires, pm, name, plugin) -> bool:
    if not isinstance(plugin, types.ModuleType) or not isinstance(name, str):
        return False
    real = os.path.realpath(name)
    if real not in wires.sealed_conftests or os.path.realpath(getattr(plugin, "__file__", None) or "") != real:
        return False
    for caller in pm.get_hookcallers(plugin) or ():
        for impl in caller.get_hookimpls():
            code = getattr(impl.function, "__code__", None)
            if impl.plugin is plugin and os.path.realpath(getattr(code, "co_filename", "") or "") != real:
                return False  # a hook put on the module before pytest registered it: not the sealed file's
    return True


def take_conftests(wires) -> bool:
    """Hold every sealed conftest.py registered since the fingerprints were taken (`conftests_init`); True when one
    was. Held ones leave the fingerprints (their plugin, their hooks, the hook callers only they made)."""
    pm = wires.config.pluginmanager
    before = wires.base[wires.labels.index("plugins")][:-1]
    taken = [p for name, p in list(getattr(pm, "_name2plugin", {}).items())
             if not any(p is q for q in before) and not any(p is h for h in wires.held) and _sealed_conftest(wires, pm, name, p)]
    if not taken:
        return False
    wires.held.extend(taken)
    specs = any(hasattr(h, "pytest_addhooks") for h in wires.held)
    wires.extra_hooks = 0
    for hname in set(vars(pm.hook)) - wires.hook_names:
        impls = getattr(pm.hook, hname).get_hookimpls()
        if (impls or specs) and all(any(i.plugin is h for h in wires.held) for i in impls):
            wires.extra_hooks += 1
    return True


def unheld(wires, impls) -> list:
    """The hook implementations `impls` without those of a held conftest."""
    held = wires.held
    return [i for i in impls if not any(i.plugin is h for h in held)]


def plugins_now(wires, pm) -> list:
    """The tripwire's fingerprint of the registered plugins: each plugin but a held conftest, and how many hook
    callers there are but those only held conftests made."""
    plugins = getattr(pm, "_name2plugin", {}).values()
    if wires.held:
        plugins = [p for p in plugins if not any(p is h for h in wires.held)]
    return [*plugins, len(vars(pm.hook)) - wires.extra_hooks]
