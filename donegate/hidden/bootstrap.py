"""The first run's start (issue 45 item 1): what makes it a developer's `python -m pytest` from the kit's starter
environment (`python.Launch.starter`), read by `runner` (`PTH`, the starter's one `.pth` line; its spec on stdin)."""

from __future__ import annotations

import os

from donegate.hidden import python as pyenv, ship

# The first run starts as a developer's `python -m pytest` (issue 45 item 1: `sys.argv`, `sys.orig_argv`, /proc/self/cmdline,
# runpy's frames at the bottom of the stack, pytest's `__main__` and `console_main` above them, the exit functions run), from
# the kit's starter environment (`python.Launch.starter`), whose one `.pth` line (`PTH`) runs BOOTSTRAP while `site`
# starts, before runpy: it sets the run up and returns, and the interpreter goes on to run pytest as `-m` does.
# The nonce, the path spec (JSON, with the rules the project allows and the result channel's descriptor), then the
# plugin's source arrive on stdin, one line each for the first two (so no kit path is on the command line inside the
# sandbox). Everything lives in a function's locals, gone from the stack before pytest starts.
# Only the base installation's `site` has run (`python.START`): the bootstrap adds the path lines `python.Launch` read,
# imports the kit's pytest before any folder of the project is on sys.path, then takes the kit's
# folders off again. ENV_EXIT (with one line on stderr) says the interpreter cannot run pytest at all; 96, the stop
# wanted no run. The kit's plugin and pytest's arguments reach pytest as `pytest.main(args, plugins)` takes them:
# `console_main` calls `main()` (pytest 9.1: `_main()`) with its defaults, which hold them until the first plugin is
# registered (then none again): `python -m pytest` is started with no argument, as a developer types it.
BOOTSTRAP = """\
def main():
""" + pyenv.START + """\
    startup = frozenset(sys.modules)  # what the interpreter itself holds before anything is imported
    import os, json, site
    # Autoload off for this pytest's start (the plugin's `pytest_configure` takes it away again), set here and not in
    # the environment the run is started with: /proc/self/environ keeps that one, and a variable there that
    # `os.environ` lacks told the first run from a developer's pytest (tests/gate/test_redteam_traits.py).
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    std = [p for p in std if not (p + os.sep).startswith(sys.prefix + os.sep)]  # `site` is at the starter's own
    nonce = sys.stdin.readline().strip()
    spec = json.loads(sys.stdin.readline())
    fd = spec["fd"]
    plugin = {"__name__": "donegate_plugin"}
    LABEL = "<donegate plugin>"
""" + ship.READ + """\
    def go():
        # Started before its copy was in step: nothing of the project runs until the hook says go.
        if spec.get("go") is None:
            return True
        ok = os.read(spec["go"], 1) == b"g"
        if ok and spec.get("chosen"):  # what the stop's look chose of the run, after the byte (`runner.Walls.go`)
            more = []
            while True:
                chunk = os.read(spec["go"], 65536)
                if not chunk:
                    break
                more.append(chunk)
            spec.update(json.loads(b"".join(more)))
        os.close(spec["go"])
        spec["go"] = None
        return ok
    # The kit's pytest, imported before any folder of the project is on sys.path; or, for a project that is pytest
    # (the seal said so), the project's own, imported as its `python -m pytest` does, once its copy is in step.
    own = spec.get("own_pytest")
    if own:
        if not go():
            return 96
        sys.dont_write_bytecode = True
    sys.path[:] = spec["front"] + std + spec["site"] if own else std + spec["pytest"]
    try:
        for code in codes:
            exec(code, plugin)
        if own and spec.get("pyc"):  # the project's pytest is the product's code: its kept bytecode (`pyc.py`)
            plugin["keep_bytecode"](spec["pyc"], spec["repo"], spec["shared"])
        import pytest, _pytest.config
        # The modules of the plugins the run leaves off (`runner.PYTEST_ARGS`), as a developer's pytest imports them:
        # without, `'xml' not in sys.modules` (junitxml's ElementTree) was right in both runs and wrong only under the
        # developer's pytest (tests/gate/test_redteam_traits.py). Imported, never registered: ~3 ms (xml.etree).
        # The same names as runner.PYTEST_ARGS's `-p no:` (runner imports this module: it cannot import runner), less
        # cacheprovider and doctest (`_pytest.config` imports them) and python_path (it imports nothing new).
        for name in ("junitxml", "pastebin", "stepwise", "setuponly", "setupplan"):
            try:
                __import__("_pytest." + name)
            except ImportError:
                pass
    except Exception as exc:
        if own:  # the project's own pytest does not import: the change broke it (the run ends: a block)
            raise
        sys.stderr.write("donegate-env: %s: %s\\n" % (type(exc).__name__, exc))
        return 97
    if not go():
        return 96
    os.set_inheritable(fd, False)
    # As in the second run (`bare`): the repository's bytecode read from the kit's kept store (confined, once
    # compiled) or a cache of this run's own, written there and beside the source as a developer's import writes it,
    # never read from beside it (`kept.py`); sys.dont_write_bytecode off, as a developer's (issue 45 item 1).
    # A project that is pytest: its pytest is already imported above, from its own kept bytecode; nothing more.
    if own:
        sys.dont_write_bytecode = True
    else:
        import tempfile
        plugin["keep_bytecode"](spec.get("pyc") or tempfile.mkdtemp(prefix="pyc"), spec["repo"], spec["shared"],
                                writable=not spec.get("pyc"))
    reporter = plugin["Reporter"](fd, nonce, spec["repo"], spec["theirs"], tuple(spec["allow"]), spec.get("tests_pyc"),
                                  spec.get("last"), kit=spec["pytest"], startup=startup, path=spec["front"],
                                  by_file=bool(spec.get("by_file")), skip=spec.get("skip"))
    real = getattr(_pytest.config, "_main", None) or _pytest.config.main  # what pytest's __main__ calls (9.1: _main)
    kw, kept = real.__kwdefaults__, real.__defaults__  # pytest 9.1's `plugins` is keyword-only
    def pytest_plugin_registered():
        # The first of the plugins is registered: `site` is done (it read sys.prefix to find more site-packages: the
        # starter's, none), `-m` has put the working folder first, and nothing of the project has run yet.
        if real.__kwdefaults__ is kw and real.__defaults__ is kept:
            return
        real.__kwdefaults__, real.__defaults__ = kw, kept
        front = [p for p in spec["front"] if p != sys.path[0]]  # the working folder, once, as a developer's has it
        sys.path[:] = sys.path[:1] + front + std + spec["site"]
        sys.executable = spec["executable"]
        # As a developer's run has them: the project's environment, or the base installation (not the starter's).
        sys.prefix, sys.exec_prefix = spec["prefix"] or sys.base_prefix, spec["prefix"] or sys.base_exec_prefix
    # The run ends without the interpreter's teardown (10-25 ms of freeing pytest's modules on every stop): once every
    # other exit function has run, the process leaves with pytest's status (the results are on the channel by then,
    # the copy is thrown away). An uncaught error's exit is the normal one.
    box = []
    def pytest_sessionstart(session):
        box.append(session)
    def pytest_unconfigure(config):
        import atexit
        # The results are on the channel (`finish`): pytest's collections of the whole heap at its end (`unraisable`-
        # exception's, twice, ~10 ms of a 40-test run on the path the stop waits for) are left out, as the teardown is
        # below; only warnings come of them here (the kit's ini makes none an error; the own suite's run keeps them).
        key = getattr(sys.modules.get("_pytest.unraisableexception"), "gc_collect_iterations_key", None)
        if key is not None and not spec.get("by_file"):
            config.stash[key] = 0
        def leave():
            atexit.unregister(leave)
            atexit._run_exitfuncs()
            if hasattr(sys, "last_value") or hasattr(sys, "last_exc") or not box:
                return
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(int(box[0].exitstatus))
        atexit.register(leave)  # the last registered: the first to run
    run = type("Run", (), {})()  # a plugin as pytest's are: hashable (`pluginmanager.get_plugins()` is a set)
    run.pytest_plugin_registered, run.pytest_sessionstart = pytest_plugin_registered, pytest_sessionstart
    run.pytest_unconfigure = pytest_unconfigure
    ours = [run, reporter, *plugin["seeded_plugins"](spec.get("seed")),
            *plugin["sealed_doctest_plugins"](spec.get("doctests"), spec.get("skip"), bool(spec.get("by_file")))]
    if kw and "plugins" in kw:
        real.__kwdefaults__ = dict(kw, args=spec["args"], plugins=ours)
    else:
        real.__defaults__ = (spec["args"], ours)
def start():
    import os, sys
    sys.argv[0] = ""  # once: `site` reads the starter's folder twice (runpy sets argv[0] to pytest's __main__.py)
    try:
        rc = main()
    except BaseException:
        import traceback
        traceback.print_exc()
        rc = 1
    if rc is not None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(int(rc))
start()
"""
# The starter's `.pth` line (`python.Launch.starter`): BOOTSTRAP for the first run (`-m`) only, in a namespace of its
# own; the second run (`-c`) starts from the same environment and runs nothing of it.
PTH = "import sys; sys.argv[0] == '-m' and exec(compile(%r, '<string>', 'exec'), {})\n" % BOOTSTRAP
# The same, with BOOTSTRAP's code compiled by the kit (`pth`): a run whose interpreter has the kit's magic number reads
# its marshal (~0.03 ms) instead of compiling it (~1.45 ms of every first run's start, on the path a stop waits for);
# any other compiles it, as PTH. `marshal` is the interpreter's own (its import system holds it from its start).
FAST = ("import sys; sys.argv[0] == '-m' and exec(sys.modules['marshal'].loads(bytes.fromhex(%r)) if getattr("
        "sys.modules.get('_frozen_importlib_external'), 'MAGIC_NUMBER', None) == %r and 'marshal' in sys.modules else "
        "compile(%r, '<string>', 'exec'), {})\n")


def pth(keep: str | None = None) -> str:
    """The starter's `.pth` line: FAST, kept in `keep` (a folder of the state root: `runner.ship_keep`) under this
    interpreter's magic number after the FAST and BOOTSTRAP it was built from (a kit changed: built again; the state
    root is the kit's, as for `ship` and `rewritten`, whose kept code runs too), so no
    stop compiles BOOTSTRAP (the kit's would at every stop); the line is the same text at every stop (the launcher's
    early run is adopted only when its files are as they would be written: `donegate.hidden.early`). Without `keep`, or
    on any error: PTH."""
    if not keep:
        return PTH
    try:
        import marshal
        from importlib._bootstrap_external import MAGIC_NUMBER  # type: ignore[import-not-found]

        path = os.path.join(keep, f"bootstrap.{MAGIC_NUMBER.hex()}.pth")
        try:
            with open(path, encoding="utf-8") as fh:
                built, nul, line = fh.read().rpartition("\0")  # (FAST and BOOTSTRAP hold no NUL)
            if nul and built == FAST + "\0" + BOOTSTRAP and line.startswith("import sys; ") and line.count("\n") == 1 \
                    and line[-1] == "\n":
                return line
        except (OSError, ValueError):
            pass
        # marshal's version 2: no references, the same bytes whatever else the process holds
        line = FAST % (marshal.dumps(compile(BOOTSTRAP, "<string>", "exec"), 2).hex(), MAGIC_NUMBER, BOOTSTRAP)
        from donegate.core.util import atomic_write

        os.makedirs(keep, mode=0o700, exist_ok=True)
        atomic_write(path, (FAST + "\0" + BOOTSTRAP + "\0" + line).encode("utf-8"), 0o600, durable=False)
        return line
    except Exception:  # noqa: BLE001 - a line not kept: the run compiles BOOTSTRAP, as before
        return PTH
