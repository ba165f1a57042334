"""Where a hidden run reads bytecode: sent as source with the plugin (`runner`) and with the second harness
(`bare`), and run in the confined interpreter before any product code; the standard library only.

`sys.pycache_prefix` would point every import at the kit's store (`donegate.hidden.pyc`), the standard
library's and the environment's too: none of those are in the store, so each run compiled them from source
(measured: a confined run of 40 tests took 370 ms where an unconfined one took 272). `keep_bytecode`
points only the repository's own folders at the store, through the path finder's hook:

- under the repository, but for its shared environments (`.venv`, `node_modules`): bytecode is read from
  (and, when the store is the run's own temporary one, written to) the store, never from a `__pycache__`
  beside the source, and a lone `.pyc` is never imported (the copy has none; a planted one would run
  instead of the source the scan read). What an import compiles is also written beside the source, as a
  developer's import writes it (the copy is the run's; the mirror's put-back removes it);
- everywhere else (the standard library, the environment, the kit's pytest): each folder's `__pycache__`
  is read as Python reads it, and nothing is ever written there.
"""


def keep_bytecode(store, top, shared=(), writable=False):
    import os
    import sys
    from importlib import machinery

    top = top.rstrip("/")
    skip = tuple(top + "/" + s for s in shared)

    def within(path, folder):
        return path == folder or path.startswith(folder + "/")

    def moved(path):  # <dir>/__pycache__/<name>.pyc -> <store><dir>/<name>.pyc, pycache_prefix's layout
        head, _, name = path.rpartition("/__pycache__/")
        return store + head + "/" + name

    # The loaders are Python's own SourceFileLoader (its class, its names), with the two methods that read and
    # write bytecode set on each one: code that looks at its module's `__loader__`, or at `sys.path_hooks`, sees what
    # a developer's run shows (a class of this function's was a sign of the hidden run: tests/gate/test_catalogue.py).
    Source = machinery.SourceFileLoader

    def plain(fullname, path):
        loader = Source(fullname, path)

        def set_data(path, data, *, _mode=0o666):
            pass  # never beside a source

        loader.set_data = set_data
        return loader

    def kept(fullname, path):
        loader = Source(fullname, path)

        def get_data(path):
            return Source.get_data(loader, moved(path) if path.endswith(".pyc") else path)

        def set_data(path, data, *, _mode=0o666):
            if path.endswith(".pyc"):
                if writable:
                    Source.set_data(loader, moved(path), data, _mode=_mode)
                # and where a developer's import writes it (issue 45 item 1): in the run's copy, never read (`get_data`)
                Source.set_data(loader, path, data, _mode=_mode)

        loader.get_data, loader.set_data = get_data, set_data
        return loader

    ext = (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES)
    ours = machinery.FileFinder.path_hook((kept, machinery.SOURCE_SUFFIXES), ext)
    theirs = machinery.FileFinder.path_hook((plain, machinery.SOURCE_SUFFIXES), ext,
                                            (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES))

    def hook(path):
        full = os.path.abspath(path or ".")
        if within(full, top) and not any(within(full, s) for s in skip):
            return ours(path)
        return theirs(path)

    # In the place of Python's own file finder hook, under its names (it served every folder this one serves).
    at = [i for i, h in enumerate(sys.path_hooks) if getattr(h, "__qualname__", "").startswith("FileFinder.path_hook")]
    if at:
        hook.__name__, hook.__qualname__ = theirs.__name__, theirs.__qualname__
        hook.__module__ = theirs.__module__
        sys.path_hooks[at[0]] = hook
    else:
        sys.path_hooks.insert(0, hook)
    sys.path_importer_cache.clear()
    # The loaders read the repository's bytecode from the store only, whatever they write beside a source:
    # `sys.dont_write_bytecode` stays as a developer's run has it (False), not a sign of the hidden run.
    sys.dont_write_bytecode = False
