"""The Stop hook's launcher, its body (`hooks/stop_gate.py` imports it from the kit's bytecode; see that file).

Run as a script, the launcher was compiled from its source at every stop (~8.5 M instructions, ~2.3 ms) before it
could start the stop's first run (`_early`); a module is compiled once and kept. What is left in `hooks/stop_gate.py`
is what must work when this cannot be imported: its fallback (`_fallback`), handed to `main`.
"""
import gc
import os
import sys

DISTRUSTED = ("DONEGATE_", "PYTHON", "LD_", "DYLD_", "GIT_")
OPTIONS = ("--home", "--repo", "--git", "--claude", "--client")


def _options(argv):
    """{"home": ..., "repo": ..., "git": ..., "managed": bool} from the arguments install wrote."""
    out = {"managed": "--managed" in argv}
    for i, word in enumerate(argv[:-1]):
        if word in OPTIONS:
            out[word[2:]] = argv[i + 1]
    return out


def _distrust(opts):
    """Drop what the session's environment could bend; returns the names that were set."""
    seen = sorted(k for k, v in os.environ.items() if k.startswith(DISTRUSTED) and v)
    home = opts.get("home") or os.environ.get("DONEGATE_HOME")  # an older install set it on the command line
    for k in [k for k in os.environ if k.startswith(DISTRUSTED)]:
        del os.environ[k]
    if home:
        os.environ["DONEGATE_HOME"] = home
    if opts.get("claude"):
        os.environ["DONEGATE_CLAUDE"] = opts["claude"]  # the reviewers' Claude Code, fixed at install
    return seen


def _early(opts):
    """The stop's first run started now, before the kit is imported, from the recipe the last stop of this repository
    kept (`donegate.hidden.early`): the stop adopts it only if it is exactly the run it would start, else kills it.
    Returns the module (None: nothing started), or None on any error: the stop then starts its run itself."""
    if not opts.get("repo"):
        return None
    try:
        from donegate import _layout
        from donegate.hidden import early

        early.start(_layout.state_root(_layout.KIT_ROOT, os.environ), opts["repo"])
        return early
    except BaseException:
        return None


def _site():
    """What `-S` left out, now: `site.main()` adds the environment's site-packages (PyYAML, pytest) as a start
    without `-S` would have (under `-I`: no user site), after the first run's process was started (~2-3 ms of
    the interpreter's start no longer before it). A launcher run without `-S` has them already."""
    try:
        import site

        site.main()
    except BaseException:
        pass  # the kit's imports then fail and the stop blocks (`_fallback`), as without site-packages


def _pathlib():
    """`pathlib` imported without `urllib.parse`, which it imports for `Path.as_uri` alone and which brings `ipaddress`
    with it: ~11.5 M instructions, ~4% of a stop's CPU (issue 48 item 2). While pathlib is imported, `urllib.parse`
    is a stand-in whose one name pathlib takes imports the real module at its first call; then the stand-in is gone,
    so any later `import urllib.parse` gets the real one. Any error: pathlib as it is."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    try:
        import types

        def quote_from_bytes(*args, **kwargs):
            from urllib.parse import quote_from_bytes as real

            return real(*args, **kwargs)

        stand_in = types.ModuleType("urllib.parse")
        stand_in.quote_from_bytes = quote_from_bytes
        sys.modules["urllib.parse"] = stand_in
        try:
            import pathlib  # noqa: F401
        finally:
            if sys.modules.get("urllib.parse") is stand_in:
                del sys.modules["urllib.parse"]
    except BaseException:
        pass


def main(argv, kit, fallback):
    """The stop: `kit` the launcher's folder's parent (a checkout's root), `fallback` its `_fallback`."""
    # No cyclic collection in a stop: its ~140 modules' imports made ~20 collections (one of the older generation)
    # that found under 50 objects to free, ~3.5 ms of the hook's CPU at every stop (issue 48 item 2). A stop's
    # garbage is freed by reference counting; the process ends at its answer (`answered` turns collection back on
    # for the after-answer child).
    gc.disable()
    opts = _options(sys.argv[1:] if argv is None else argv)
    seen = _distrust(opts)
    sys.dont_write_bytecode = False  # (as the launcher set them before it imported this module)
    sys.pycache_prefix = None
    sys.path.insert(0, kit)
    early = _early(opts)  # first: nothing of what follows (stdin, the kit's imports) is the first run's business
    if sys.flags.no_site:  # install runs a checkout's launcher with -S: the site-packages come after the early start
        _site()
    try:
        stdin_text = sys.stdin.read()
    except Exception:
        stdin_text = ""
    _pathlib()
    try:
        from donegate import gate

        code, out, err = gate.run_hook(stdin_text, repo=opts.get("repo"), git_path=opts.get("git"),
                                       managed=opts["managed"], env_seen=seen,
                                       client=opts.get("client"))
    except BaseException as exc:  # noqa: BLE001 - the launcher must never exit with anything but 0 or 2
        return fallback(stdin_text, type(exc).__name__, os.environ.get("DONEGATE_HOME"))
    finally:
        if early is not None:
            try:
                early.discard()  # a run started early that the stop did not take: killed, its folder removed
            except BaseException:
                pass
    try:  # the answer: what Claude Code reads (exit 0 or 2 only)
        for stream, text in ((sys.stdout, out), (sys.stderr, err)):
            stream.write(text)
        sys.stdout.flush()
    except Exception:
        pass
    return code if code in (0, 2) else 2


def answered() -> None:
    """The answer is out (flushed): the runs' copies are put back by a child while the client reads it
    (`donegate.hidden.copy.after_answer`). Here and in `donegate hook`, which runs `main` the same way."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    gc.enable()  # off for the stop (`main`); the after-answer child collects as any process does
    try:
        copies = sys.modules.get("donegate.hidden.copy")
        if copies is not None:
            copies.after_answer()
    except BaseException:
        pass
