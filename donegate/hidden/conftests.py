"""The project's own sealed `conftest.py` files in a subfolder (issue 44): sent as source with the plugin (`runner`),
the standard library only. pytest registers each such file as a plugin while it collects (a root one before); the
tripwire on the registered plugins (`plugin.Tripwires`) takes one as the harness's own when it is a conftest.py that
lay in the sealed store (the run's rootdir, read-only in the walls) before any of the project's code ran, registered
under its own path, every hook of it defined in that file. So is pytest's own `pytester` (a test module's
`pytest_plugins = "pytester"`, as every pytest plugin's suite has it: pytest-mock 3.17.0's was not kept) with the
plugin its registration brings (`legacypath-pytester`): the very objects of the harness's pytest, taken before any of
the project's code ran, under the names pytest gives them, every hook defined in their own file. Any other plugin
registered or removed still trips it.
"""

import importlib.machinery
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
    # pytest's own plugins a test module may name (`pytest_plugins`), as the harness loaded them: {name: (module, class)}
    kit = globals()["kit_module"]
    wires.pytests_own = {name: (m, cls) for name, (mod, cls) in _PYTESTS_OWN.items()
                         if (m := kit(wires.reporter, mod)) is not None}
    if os.path.realpath(root) == os.path.realpath(os.getcwd()):
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".") and not d.endswith(".egg")]
        if "conftest.py" in files:
            wires.sealed_conftests.add(os.path.realpath(os.path.join(folder, "conftest.py")))


# A warning whose frame is the harness's (stacklevel) adds this to the namespace it runs in: pytester's registration
# warns that `_pytest.pytester_assertions` was imported before it could be rewritten, and the fingerprint of the
# kit's globals (`plugin.Tripwires`, "the kit's reporter") read a key added as the harness changed. Made here, before
# the fingerprints, `warnings` fills it in place.
__warningregistry__: dict = {}
# pytester (with the helper plugin it names) and the plugin `_pytest.legacypath` registers for it (`testdir`)
_PYTESTS_OWN = {"pytester": ("_pytest.pytester", ""), "legacypath-pytester": ("_pytest.legacypath", "LegacyTestdirPlugin")}


def _pytests_own(wires, pm, name, plugin) -> bool:
    """`plugin` is the harness's pytester (or legacypath's plugin for it), under the name pytest registers it with;
    or the helper pytester names (`pytester_assertions`, first imported then): a module beside it holding no hook
    and no fixture, inert as a plugin."""
    if name == "pytester_assertions" and "pytester" in wires.pytests_own:
        beside = os.path.join(os.path.dirname(os.path.realpath(wires.pytests_own["pytester"][0].__file__ or "")),
                              "pytester_assertions.py")
        try:
            return (isinstance(plugin, types.ModuleType) and os.path.realpath(str(getattr(plugin, "__file__", ""))) == beside
                    and not any(i.plugin is plugin for c in pm.get_hookcallers(plugin) or () for i in c.get_hookimpls())
                    and not any(hasattr(v, "_fixture_function_marker") or hasattr(v, "_pytestfixturefunction")
                                for v in list(vars(plugin).values())))
        except Exception:  # noqa: BLE001 - a value that fails to be asked is no helper of pytest's
            return False
    module, cls = wires.pytests_own.get(name, (None, ""))
    if module is None or not (plugin is module if not cls else type(plugin) is getattr(module, cls, None)):
        return False
    real = os.path.realpath(getattr(module, "__file__", None) or "")
    return all(impl.plugin is not plugin or os.path.realpath(getattr(getattr(impl.function, "__code__", None),
                                                                     "co_filename", "") or "") == real
               for caller in pm.get_hookcallers(plugin) or () for impl in caller.get_hookimpls())


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
             if not any(p is q for q in before) and not any(p is h for h in wires.held)
             and (_sealed_conftest(wires, pm, name, p) or _pytests_own(wires, pm, name, p))]
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


def finder_alone(wires, finder) -> bool:
    """A finder the code under test put on `sys.meta_path` (wrapt's post-import hooks, an import hook of the
    project's own) that leaves the sealed tests and the kit alone: it answers for none of the harness's modules nor
    the store's, and every module of the store came from its sealed file: a test module through pytest's own loader,
    a helper of the tests' folder (wrapt's `compat.py`, imported by a test) through the standard library's."""
    import sys

    find = getattr(finder, "find_spec", None)
    if find is None:
        return False
    store = str(wires.config.rootpath).rstrip("/") + "/"
    modules = [m for m in list(sys.modules.values()) if str(getattr(m, "__file__", None) or "").startswith(store)]
    names = [*wires.harness_names, *(m.__name__ for m in modules)]
    try:
        if any(find(name, None) is not None for name in names):
            return False
    except Exception:  # noqa: BLE001 - a finder that fails on the harness's names does not leave them alone
        return False
    return wires.rewriter is None or all(isinstance(getattr(m, "__loader__", None), wires.rewriter) or _from_file(m)
                                         for m in modules)


def _from_file(module) -> bool:
    """`module` was loaded by the standard library's source loader from its own file."""
    loader = getattr(module, "__loader__", None)
    return type(loader) is importlib.machinery.SourceFileLoader and loader.path == module.__file__
