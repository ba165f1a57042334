"""The project's own copies of what the kit's pytest imported first (issue 46): sent as source with the plugin
(`runner`) and run in the confined interpreter at collection, before any test module is imported; the standard
library only.

`python -m pytest` in the repository puts the project's folder first on `sys.path` before pytest is imported, so
a project that is pluggy (or has a module named `signal`) gets its own copy everywhere. The hidden run imports the
kit's pytest before any folder of the project is on `sys.path` (the project cannot shadow the harness); then, before
the first conftest.py is imported and again at collection, the kit's copies of what the project's own folders also
hold leave `sys.modules`, so the conftest files and the tests import the project's, as under its own run. The kit's
modules keep the objects they bound.
"""

import sys

# Never handed to the project's copy: the harness itself (a project that is pytest, as sealed, imports its own first:
# `bootstrap.BOOTSTRAP`, docs/project-environment.md).
_NEVER = frozenset({"pytest", "_pytest", "py", "__main__", "donegate_plugin"})


def own_copies(startup, path):
    """Drop from `sys.modules` every module the kit's pytest (or the bootstrap) imported that the project's own
    folders (`path`) hold: the project that is pluggy (or packaging, iniconfig), a module of its own named like one
    of the standard library's. Its tests then import the project's copy, as `python -m pytest` in the repository gives them;
    the kit's modules keep the objects they bound. What the interpreter held at start-up stays (a developer's run
    has those too). Returns what was dropped."""
    import os
    from importlib.machinery import PathFinder

    listed = set()
    for folder in path:
        try:
            listed.update(n[:-3] if n.endswith(".py") else n for n in os.listdir(folder))
        except OSError:
            continue
    tops = {}
    for name in list(sys.modules):
        top = name.partition(".")[0]
        if top in listed and top not in _NEVER and name not in startup:
            tops.setdefault(top, []).append(name)
    dropped = {}
    for top, names in tops.items():
        have = getattr(sys.modules.get(top), "__file__", None)
        try:
            spec = PathFinder.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.origin or spec.origin == have or top in startup:
            continue
        for name in names:
            dropped[name] = sys.modules.pop(name)
    return dropped


def drop_kit_copies(reporter):
    """`own_copies` for the plugin (`reporter`), at two moments: before pytest imports the first conftest.py (pluggy
    1.5.0's `testing/conftest.py` imports `PluginManager` for the fixture most of its tests use: imported at
    collection only, it got the kit's pluggy, and its suite tested that), and at collection (what pytest imported
    since). The kit's modules dropped are kept in `reporter.kit_copies`: the tripwires fingerprint those."""
    if reporter.startup is None:
        return
    dropped = own_copies(reporter.startup, reporter.path)
    reporter.kit_copies.update(dropped)
    wires = reporter.wires
    if dropped and wires is not None:
        wires.modules = [m for m in wires.modules if m not in dropped]
        wires.labels, wires.base = wires.snapshot()


def kit_module(reporter, name):
    """The kit's module `name` (what the tripwires fingerprint): the one the project's copy replaced, else the one
    in `sys.modules`, None where that is the project's own (its top-level package replaced the kit's)."""
    kept = reporter.kit_copies
    if name in kept:
        return kept[name]
    if name.partition(".")[0] in {n.partition(".")[0] for n in kept}:
        return None
    return sys.modules.get(name)
