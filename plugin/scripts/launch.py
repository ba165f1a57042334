"""donegate as a Claude Code plugin: `launch.py setup | stop | guard`, run by the plugin's hooks.

Claude Code installs no Python packages for a plugin, so the kit's environment is made here, once: a venv
in `${CLAUDE_PLUGIN_DATA}/venv` with the kit installed from the plugin's own copy of it (`kit/`), made at
the first SessionStart (or the first hook that finds it missing) under a lock, and again when the plugin
is updated (the stamp names the plugin folder, which is new for every version). Then `stop` and `guard`
run the installed kit's own launchers exactly as a per-repository install does, with the state root fixed
on their command line: the person's `donegate seal` writes to the same `~/.local/share/donegate`.

Nothing is put on the agent's PATH: the plugin has no `bin/`, the venv lies in the plugin's data folder.

Exit codes: `stop` only 0 or 2. When the environment cannot be made, that is a broken installation for a
person to repair, not for the agent: the stop is allowed at once with a system message naming the log
(the agent, looping on it, could fix nothing), and the guard lets calls through (the stop says why).
"""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIT = os.path.join(ROOT, "kit")
SETUP_TIMEOUT = 540  # seconds for venv + pip: below the hooks' 600


def data_dir():
    value = os.environ.get("CLAUDE_PLUGIN_DATA") or ""
    if not os.path.isabs(value):  # not run by Claude Code: beside the plugin's cache, never the cwd
        value = os.path.join(os.path.expanduser("~"), ".claude", "plugins", "data", "donegate-local")
    return value


def state_root():
    """The kit's default state root for an installed wheel ($XDG_DATA_HOME/donegate, ~/.local/share/donegate):
    where `donegate seal` of the person's own installation puts the tests. DONEGATE_HOME is not read here:
    the session's environment (settings `env`) must not move the store the hook reads."""
    data = os.environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(data):
        data = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.realpath(os.path.join(data, "donegate"))


def venv_python(data):
    return os.path.join(data, "venv", "bin", "python")


def ready(data):
    try:
        with open(os.path.join(data, "venv", ".donegate-plugin")) as fh:
            return fh.read() == ROOT and os.path.exists(venv_python(data))
    except OSError:
        return False


def outer_pip():
    """Whether this python's pip can install into another environment (`pip --python`, pip 22.3 and later). Then the
    venv is made without pip: installing pip and setuptools into it was almost half of the setup's CPU (3.7 of 8.9
    CPU-s here), for a venv that never needs them (an update makes a new one). Without it, as before."""
    try:
        from importlib.metadata import version

        return tuple(int(x) for x in version("pip").split(".")[:2]) >= (22, 3)
    except Exception:  # noqa: BLE001 - no pip here, or a version string of another shape: the venv's own pip
        return False


def setup(data):
    """The venv, made once per plugin version; returns "" or why it failed (details in setup.log)."""
    if ready(data):
        return ""
    os.makedirs(data, exist_ok=True)
    log = os.path.join(data, "setup.log")
    with open(os.path.join(data, "setup.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second session waits for the first one's setup
        if ready(data):
            return ""
        venv = os.path.join(data, "venv")
        # pip builds in the source folder (build/, *.egg-info): build from a copy, never in the plugin, which
        # for a local marketplace is the repository itself.
        src = os.path.join(data, "src")
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(KIT, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        install = ["install", "--quiet", "--disable-pip-version-check", src]
        if outer_pip():  # this python's pip installs into the venv, which then needs no pip of its own
            steps = [[sys.executable, "-m", "venv", "--clear", "--without-pip", venv],
                     [sys.executable, "-m", "pip", "--python", venv_python(data), *install]]
        else:
            steps = [[sys.executable, "-m", "venv", "--clear", venv], [venv_python(data), "-m", "pip", *install]]
        deadline = time.monotonic() + SETUP_TIMEOUT
        with open(log, "a") as out:
            out.write(f"donegate plugin setup at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} from {KIT}\n")
            for argv in steps:
                out.flush()
                try:
                    code = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                          timeout=max(1.0, deadline - time.monotonic())).returncode
                except (OSError, subprocess.TimeoutExpired) as exc:
                    code = f"{type(exc).__name__}"
                if code != 0:
                    return f"`{' '.join(argv[:3])} ...` failed ({code}); see {log}"
        shutil.rmtree(src, ignore_errors=True)
        with open(os.path.join(venv, ".donegate-plugin"), "w") as fh:
            fh.write(ROOT)
    return ""


def launcher(data, name):
    return os.path.join(data, "venv", "share", "donegate", "hooks", name)


def main(argv):
    what = argv[1] if len(argv) > 1 else ""
    data = data_dir()
    try:
        why = setup(data)
    except Exception as exc:  # noqa: BLE001 - a hook must answer, whatever happens
        why = f"{type(exc).__name__}: {exc}"
    if what == "setup":
        if why:
            print(json.dumps({"systemMessage": f"donegate plugin: its Python environment could not be made ({why})"}))
        return 0
    if why:
        if what == "stop":
            print(json.dumps({"systemMessage": f"donegate plugin is broken: its Python environment could not be made ({why}); "
                                               "the stop was allowed but the work is NOT verified: a person must repair it"}))
        return 0
    home = state_root()
    if what == "stop":
        argv = [venv_python(data), "-I", launcher(data, "stop_gate.py"), "--home", home, "--managed"]
    elif what == "guard":
        argv = [venv_python(data), "-I", launcher(data, "guard.py"), "--home", home]
    else:
        print(f"usage: {argv[0]} setup|stop|guard", file=sys.stderr)
        return 0
    sys.stdout.flush()
    os.execv(argv[0], argv)  # stdin (the hook's JSON), stdout and the exit code are the launcher's
    return 2


if __name__ == "__main__":
    try:
        rc = main(sys.argv)
    except BaseException:  # noqa: BLE001
        rc = 2 if sys.argv[1:2] == ["stop"] else 0
    sys.exit(rc)
