"""The walls around the hidden run: it imports the agent's code, so it runs confined.

With bubblewrap (Linux; `confinement: "bwrap"`):
- the system read-only (`--ro-bind / /`), a private `/tmp`, `/dev` and `/proc` of its own;
- the kit's checkout, the state root (`DONEGATE_HOME`: ledger, counters, logs, other repositories'
  stores) and the user's home hidden under empty tmpfs; back on top, read-only, only what the run
  needs: the interpreter's environment (pytest) and this repository's store;
- the repository as a **throwaway copy** bound writable at its own path (its `.git` bound read-only):
  a test or the code under test may write into the package, nothing of it outlives the run. bubblewrap
  0.8.0 has no `--overlay` (copy-on-write needs 0.11), so the copy is a real one (see `donegate.hidden.copy`);
- no network (`--unshare-net`), its own PID namespace (`--unshare-pid`: nothing it starts survives
  it), IPC and UTS namespaces, a new session, every capability dropped, `--die-with-parent`;
- an environment built from an allow-list: no `DONEGATE_*`, no kit paths, no `HOME` of the user.

With macOS `sandbox-exec` (`"sandbox-exec"`): a profile of the same intent (`sandbox_profile`).

Without a sandbox (`"none"`, only with `confine: off`, or `auto` where no sandbox kind exists for the
platform at all): the same allow-listed environment and a throwaway copy of the repository in a private
temporary folder; the run can still read and write what the kit's user may, and the hook says so to the
user, in `doctor` and on every ledger line. On Linux there is no unconfined default: `auto` and `on`
refuse to run without bubblewrap (unconfined, code under test killed or stopped the hook and the stop
opened), and a bubblewrap that fails to start is a block, never a silent fallback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

from donegate import paths
from donegate.core import proc
from donegate.errors import DonegateError

# Variables the hidden run may inherit; everything else (DONEGATE_*, PYTEST_*, PYTHON*, the user's
# HOME, credentials, kit paths) is dropped. HOME and TMPDIR are set to private folders.
ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME",
         "LC_COLLATE", "TZ", "TERM", "USER", "LOGNAME", "SHELL")
FIX_ON = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or set confine: off in donegate.yaml "
          "to run the hidden tests unconfined (they then run with the kit's rights: a person's decision)")


def choose(mode: str) -> str:
    """The confinement this machine gives for `confine: mode`: bwrap, sandbox-exec or none."""
    if mode == "off":
        return "none"
    if sys.platform == "darwin" and os.path.exists("/usr/bin/sandbox-exec"):
        return "sandbox-exec"
    if sys.platform.startswith("linux") and proc.system_tool("bwrap"):
        return "bwrap"
    if mode == "on" or sys.platform.startswith("linux"):
        # No unconfined default: unconfined, the code under test could kill or stop the hook and open the stop.
        raise DonegateError(f"confine: {mode}, but this machine has no sandbox for the hidden tests (bubblewrap not found)",
                            FIX_ON)
    return "none"


def user_homes() -> list[Path]:
    """The user's home as `HOME` names it and as the account database does. `HOME` is the session's
    to set (settings `env` reaches the hook), so it alone would let a session un-hide the real one."""
    import pwd  # POSIX only, like the sandboxes that use this

    named = [os.environ.get("HOME") or ""]
    try:
        named.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (KeyError, OSError):  # a uid with no entry (some containers)
        pass
    out: list[Path] = []
    for h in named:
        p = Path(h).resolve() if h else None
        if p is not None and p != Path("/") and p.is_dir() and p not in out:
            out.append(p)  # a home of / would hide the whole system, so it hides nothing
    return out


def hidden_roots(home: Path | None = None) -> list[Path]:
    """What the run must not see: the kit, its launchers, the state root, the user's home."""
    return [*paths.protected_roots(home=home or paths.home()), *user_homes()]


def env(tmp: str, hidden: list[Path], home: str | None = None, tmpdir: bool = True) -> dict[str, str]:
    """The hidden run's environment: the allow-list, PATH without entries under hidden folders. `home`: the
    run's HOME (default `<tmp>/home`); `tmpdir`: TMPDIR is `tmp` (a confined run's /tmp is its own: none, as
    a developer's shell has none). The runs give a `home` beside `tmp`, never under it: a HOME under TMPDIR
    told the code under test it was in the hidden run."""
    out = {k: os.environ[k] for k in ALLOW if k in os.environ}
    # Each folder resolved once, compared as text (`paths.is_within` per pair resolved both sides again: a
    # ten-entry PATH cost ~3 ms a run, before the run could start).
    roots = [os.path.realpath(h) for h in hidden]
    keep = [p for p in out.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
            if p and not _under(os.path.realpath(p), roots)]
    out["PATH"] = os.pathsep.join(keep) or "/usr/bin:/bin"
    out.setdefault("LANG", "C.UTF-8")
    out["SHLVL"] = "1"  # as the shell a developer starts their command from exports it (issue 45 item 1)
    out["HOME"] = home or os.path.join(tmp, "home")
    if tmpdir:
        out["TMPDIR"] = tmp
    return out


def activate(env: dict[str, str], venv: str, seen: str, hidden: Sequence[Path]) -> None:
    """`env` as the project's environment activated has it (its `bin/activate`, `uv run`, tox and nox alike): the
    environment's `bin` first on PATH and VIRTUAL_ENV, so that a test running the project's console script or `python`
    (python-dotenv 1.0.1's `sh.dotenv("run", ...)`) gets the project's. `venv`: the environment's folder ("" for a base
    interpreter), `seen`: where the run sees it; the kit's own environment, under a hidden folder, is not one."""
    if not venv or not os.path.isdir(os.path.join(venv, "bin")) or _under(os.path.realpath(venv), [os.path.realpath(h) for h in hidden]):
        return
    scripts = os.path.join(seen, "bin")
    env["PATH"] = os.pathsep.join([scripts, *(p for p in env.get("PATH", "").split(os.pathsep) if p and p != scripts)])
    env["VIRTUAL_ENV"] = seen


def seen_home(hidden: Sequence[Path]) -> str | None:
    """The HOME a confined run gets: the account's own home as a developer's shell names it, seen empty
    (it is hidden under a tmpfs of the run's own: `bwrap_argv`), or None when the account has no home to
    hide there (the run then gets `/tmp/home`)."""
    import pwd

    try:
        named = pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        named = os.environ.get("HOME") or ""
    real = Path(named).resolve() if named else None
    if real is None or real not in hidden or paths.is_within(real, Path("/tmp")):
        return None
    return named


def _under(path: str, roots: list[str]) -> bool:
    """`path` is, or lies under, one of `roots` (all resolved)."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def python_dirs(hidden: Sequence[Path] = (), python: Sequence[Path] | None = None) -> list[Path]:
    """Folders the interpreter needs: its prefix (the venv holding pytest), the base installation, and
    the folders on its path (site-packages and what `.pth` files add, which may lie under /tmp or a
    hidden folder: a venv whose packages come from elsewhere). A path folder that is, holds, or lies
    under a hidden folder is left out (the kit's root, its `hooks/`): binding it back would show the
    run the kit's own files. Under the user's home is fine (it is hidden for its credentials, and a
    folder on the interpreter's own path is not one). `python`: the hidden run's interpreter's own
    folders (`donegate.hidden.python.Launch.binds`: its installation, the project's environment, its
    path, the kit's pytest), taken as they are; without it, the kit's interpreter's."""
    if python is not None:
        return sorted(set(python))
    homes = user_homes()
    # The kit's own roots stay out even when HOME (the session's to set) names one of them.
    kit = [h for h in hidden if h not in homes] + paths.protected_roots(home=paths.home())
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                            os.path.dirname(os.path.realpath(sys.executable)))}
    out = set(prefixes)
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue  # the stdlib's zip, a .pth line whose folder is gone
        p = Path(entry).resolve()
        if any(paths.is_within(p, q) for q in prefixes):
            continue  # bound with its prefix
        if any(paths.is_within(h, p) for h in hidden) or any(paths.is_within(p, h) for h in kit):
            continue
        out.add(p)
    return sorted(out)


def bwrap_argv(bwrap: str, *, repo: Path, copy: Path, store: Path | None, hidden: list[Path], env: dict[str, str],
               shared: Sequence[str] = (), python: Sequence[Path] | None = None, chdir: Path | None = None,
               read_only: bool = False, extra: Sequence[str] = (), pid1: bool = False) -> list[str]:
    """bubblewrap's arguments for a run in `copy`, seen at `repo`'s own path (`read_only`: not writable),
    started in `chdir` (the project's folder, default the repository); `python`: the interpreter's folders
    (`python_dirs`); `extra`: more mount arguments, last (`donegate.hidden.pyc`'s store). `store`: the sealed tests,
    bound back read-only; None for the second run, which is sent them without their expected values
    (`donegate.hidden.answers`): the store stays hidden there.
    The project's environment is never writable: read-only like the whole system, or bound read-only
    (a `.venv` inside the repository, shared with the copy; one under a hidden folder, bound back).
    `pid1`: the run's own process is PID 1 of its namespace (`--as-pid-1`), not bubblewrap: the second run
    (`donegate.hidden.second`) starts so, the first does not, so code that looks at PID 1 or its parent gets
    two answers and the runs disagree."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # Each path resolved once, compared resolved (`paths.within`; `is_within` resolved both sides of every pair again).
    tmp, real = Path("/tmp").resolve(), {h: h.resolve() for h in hidden}
    for h in sorted({h for h in hidden if h.is_dir() and not paths.within(real[h], tmp)}, key=lambda p: len(p.parts)):
        argv += ["--tmpfs", str(h)]
    # Back on top, read-only: what the run needs that lies under a hidden folder or /tmp.
    walls, inside = [*real.values(), tmp], repo.resolve()
    for p in python_dirs(hidden, python):
        seen = p.resolve()
        if any(paths.within(seen, h) for h in walls) and not paths.within(seen, inside):
            argv += ["--ro-bind", str(p), str(p)]
    argv += ["--ro-bind", str(store), str(store)] if store is not None else []
    argv += ["--ro-bind" if read_only else "--bind", str(copy), str(repo)]
    for name in [".git", *shared]:
        if (repo / name).exists():
            _mount_point(copy / name, (repo / name).is_dir())
            argv += ["--ro-bind", str(repo / name), str(repo / name)]
    argv += [*extra, "--dir", env["HOME"]]
    argv += ["--as-pid-1"] if pid1 else []
    argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session",
             "--die-with-parent", "--cap-drop", "ALL", "--chdir", str(chdir or repo), "--clearenv"]
    for k, v in env.items():
        argv += ["--setenv", k, v]
    return argv + ["--"]


def _mount_point(point: Path, folder: bool) -> None:
    """Where a folder of the tree is bound over the copy (`.git`, a shared environment), bubblewrap makes a mount point
    of that folder's kind (a folder, or a file) and it stays in the mirror after the run. The working trees of a
    project share its mirrors (`hidden.forget`): the checkout's `.git` is a folder, a worktree's a file, and bubblewrap
    refused the other kind ("Can't create file at <worktree>/.git: Is a directory": every confined stop in a worktree
    after one in the checkout blocked). An empty mount point of the other kind is removed; anything else is left
    (bubblewrap then refuses, as before)."""
    import stat

    try:
        st = os.lstat(point)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode) == folder:
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(point)  # only an empty one
        elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(point)
    except OSError:
        pass


NSSWITCH = Path("/etc/nsswitch.conf")
# Where names are looked up without asking a network: the system's own files, and the machine's own name.
_LOCAL_SOURCES = ("files", "myhostname")


def offline_nsswitch(text: str) -> str:
    """The name service switch as the runs get it (bound over /etc/nsswitch.conf): names resolved from the
    system's files only. A run has no network, so a resolver it asked answered "temporary failure" (EAI_AGAIN)
    where a developer's machine says there is no such name (EAI_NONAME): code keyed on that error kind was right
    in both runs and wrong in use (issue 45, the network family). Without the network's sources, an unknown name
    is "no such name", as a developer's resolver says it; `localhost` and the machine's own name resolve as before."""
    out = []
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if sep and key.strip() == "hosts":
            line = "hosts: " + " ".join([w for w in rest.split() if w in _LOCAL_SOURCES] or ["files"])
        out.append(line)
    return "\n".join(out) + "\n"


def _sb_quote(path: Path | str) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def sandbox_profile(*, copy: Path, store: Path | None, tmp: Path, hidden: list[Path], python: Sequence[Path] | None = None) -> str:
    """A macOS sandbox-exec (SBPL) profile with the intent of the bubblewrap run: no network, no
    writes but the private temporary folder (which holds the throwaway copy), the hidden folders
    unreadable except the store. (No macOS machine here: the tests check its text.)"""
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny network*)",
        "(deny file-write*)",
        f"(allow file-write* (subpath {_sb_quote(tmp)}) (literal \"/dev/null\") (literal \"/dev/tty\"))",
    ]
    for h in hidden:
        lines.append(f"(deny file-read* (subpath {_sb_quote(h)}))")
    for p in python_dirs(hidden, python):
        if any(paths.is_within(p, h) for h in hidden):
            lines.append(f"(allow file-read* (subpath {_sb_quote(p)}))")
    if store is not None:  # the second run's is not readable (`bwrap_argv`)
        lines.append(f"(allow file-read* (subpath {_sb_quote(store)}))")
    lines.append(f"(allow file-read* (subpath {_sb_quote(copy)}))")
    return "\n".join(lines) + "\n"


def doctor_line(mode: str) -> tuple[str, str, str, str]:
    """(level, what, where, fix) of `donegate doctor`'s line about the hidden run's confinement."""
    try:
        kind = choose(mode)
    except DonegateError as exc:
        return "error", exc.message, "", exc.fix or ""
    if kind == "none" and mode == "off":
        return "warning", ("confinement: \"none\" (confine: off): the hidden tests run unconfined, with the kit's rights; "
                           "only the environment and a throwaway copy of the repository keep them apart"), "", "set confine: auto"
    if kind == "none":
        return "warning", ("confinement: \"none\": no sandbox for the hidden tests on this machine; they run with the kit's "
                           "rights, in a throwaway copy of the repository"), "", FIX_ON.split(", or set")[0]
    return "ok", f"confinement: \"{kind}\": the hidden tests run in a sandbox (read-only system and store, no network)", "", ""
