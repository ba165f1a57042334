"""What a run looks like from inside, group by group (issue 45 item 2): the product module of the catalogue's small
project (tests/gate/test_catalogue.py copies it in as `look.py`, at the repository's top).

`snapshot()` returns, per observable group, a normalized value: paths as their place (`<repo>/...`, `<home>`,
`<tmp>`, `<stdlib>`, `<site>`, `<prefix>`), numbers that differ on every run (pids, inode numbers, times) as a
shape or a bucket, so that two runs that look alike give equal values and a difference is a fingerprint.
`send(fifo, lock)` writes one JSON line of it to a FIFO outside the walls (a read-only system still lets a FIFO be
written; the lock keeps two runs' lines apart).

This is product code that reads what the runs' walls show on purpose: the seal's baseline holds it.
"""

import sys

# What the process held before the product's first line ran (its own imports below not yet made): what a harness
# loaded for itself is in a developer's program only when the program imports it.
_BEFORE = sorted({n.split(".")[0] for n in sys.modules if n.split(".")[0] in sys.stdlib_module_names})

import errno  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import sysconfig  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

REPO = os.path.dirname(os.path.abspath(__file__))
HOME = os.path.expanduser("~")
STDLIB = sysconfig.get_paths()["stdlib"]


def place(path):
    """A path as its place, never its text (the run's temporary folders differ every time)."""
    if not isinstance(path, str) or not path:
        return repr(path)
    p = os.path.normpath(os.path.abspath(path))

    def within(root):
        return p == root or p.startswith(root.rstrip("/") + "/")

    if within(REPO):
        rest = p[len(REPO):].lstrip("/")
        return "<repo>" + ("/" + rest if rest else "")
    if within(STDLIB):
        return "<stdlib>" + ("/..." if p != STDLIB else "")
    if "site-packages" in p or "dist-packages" in p:
        return "<site>"
    if within(sys.base_prefix) or within(sys.prefix):
        return "<prefix>"
    if os.path.isfile(os.path.join(p, "hooks", "stop_gate.py")):
        return "<kit>"  # the kit's own checkout (an editable install's path entry), wherever it was cloned (CI: /tmp)
    if within(HOME):
        return "<home>" + ("/..." if p != HOME else "")
    if within("/tmp") or within(tempfile.gettempdir()):
        return "<tmp>"
    return "<other>"


def _try(fn):
    try:
        return fn()
    except socket.gaierror as exc:
        return "error:gaierror %s" % exc.errno
    except OSError as exc:
        return "error:" + (errno.errorcode.get(exc.errno or 0) or type(exc).__name__)
    except Exception as exc:  # a group that cannot be read is a value too
        return "error:" + type(exc).__name__


def _read(path):
    with open(path) as f:
        return f.read()


def environment():
    names = sorted(os.environ)
    return {"names": names,
            "PWD is the cwd": os.environ.get("PWD") == os.getcwd(),
            "HOME": place(os.environ.get("HOME", "")), "TMPDIR": place(os.environ.get("TMPDIR", "")),
            "SHLVL": os.environ.get("SHLVL"),
            # the command's path, as the shell found it: its name, and whether it is the interpreter running
            "_": os.path.basename(os.environ.get("_", "")) + (" (exists)" if os.path.exists(os.environ.get("_", "-"))
                                                              else ""),
            "_ is sys.executable": os.environ.get("_") == sys.executable,
            "locale": _try(lambda: __import__("locale").setlocale(__import__("locale").LC_CTYPE))}


def argv():
    orig = getattr(sys, "orig_argv", [])
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    # argv[0]'s folder, not its name (a developer names their program anything)
    return {"argv0": place(os.path.dirname(os.path.abspath(sys.argv[0]))) if sys.argv and sys.argv[0] not in ("-c", "-m", "")
            else sys.argv[:1],
            "argv0 is __main__'s file": bool(sys.argv and main and os.path.abspath(sys.argv[0]) == main),
            "argv0 absolute": bool(sys.argv and os.path.isabs(sys.argv[0])),
            # its name only as far as a test framework's: a developer names their program anything but test_*.py
            "argv0 names a test file": bool(sys.argv and os.path.basename(sys.argv[0]).startswith("test_")),
            "__main__'s file names a test file": os.path.basename(main or "").startswith("test_"),
            "orig_argv": [os.path.basename(orig[0])] + [a if a.startswith("-") and len(a) < 4 else "<arg>"
                                                        for a in orig[1:3]] if orig else [],
            "executable": place(sys.executable), "executable name": os.path.basename(sys.executable)}


def _stack():
    """The frames below the code that called the probe (`send`'s caller), by `f_back`: where the code of those between
    it and the bottom one lies (runs of one place as one), and the bottom one (its name, its file's folder, whether the
    file is `__main__.__file__` and its namespace `__main__`'s). A developer's program calls from the bottom itself."""
    def where(f):
        name = f.f_code.co_filename
        return name if name.startswith("<") else place(name)

    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "send":
        f = f.f_back
    frames = []
    f = f.f_back if f is not None else None  # the caller
    while f is not None:
        frames.append(f)
        f = f.f_back
    between = []
    for f in frames[1:-1]:
        if not between or between[-1] != where(f):
            between.append(where(f))
    main = sys.modules.get("__main__")
    bottom = frames[-1] if frames else None
    name = bottom.f_code.co_filename if bottom is not None else ""
    caller = frames[0] if frames else None
    return {"frames between the caller and the bottom": between,
            # the caller's own module: a program's is `__main__` (its namespace, its file), a test module's its own
            # (pytest's name in it when the test file imports it)
            "caller's namespace is __main__'s": caller is not None and main is not None and caller.f_globals is vars(main),
            "caller's file is __main__'s": caller is not None and caller.f_code.co_filename == getattr(main, "__file__", None),
            "pytest in the caller's globals": caller is not None and "pytest" in caller.f_globals,
            "caller's module in sys.modules by its name": caller is not None and any(
                m is not main and getattr(m, "__dict__", None) is caller.f_globals for m in list(sys.modules.values())),
            "the caller's source": _try(lambda: bool(__import__("inspect").getsource(caller.f_code))),
            # what the caller is: a test function (its name, its file's text naming pytest), or a program's code
            "the caller's name": "test_*" if caller is not None and caller.f_code.co_name.startswith("test") else "other",
            "pytest in the caller's file's text": _try(lambda: "pytest" in "".join(
                __import__("linecache").getlines(caller.f_code.co_filename, caller.f_globals))),
            "__main__'s source": _try(lambda: bool(__import__("inspect").getsource(main))),
            "bottom frame": None if bottom is None else [
                bottom.f_code.co_name, where(bottom) if name.startswith("<") else place(os.path.dirname(name)),
                name == getattr(main, "__file__", None), main is not None and bottom.f_globals is vars(main)]}


def main_module():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return {"names": sorted(n for n in vars(main) if n.startswith("__")) if main else None,
            # and in the order the namespace got them (the interpreter's, runpy's, or a harness's own)
            "names in order": [n for n in vars(main) if n.startswith("__")] if main else None,
            # the file's folder, not its name (a developer names their program anything); whether it is there, empty
            "file": place(os.path.dirname(getattr(main, "__file__", "") or "") or ""),
            "file exists": os.path.isfile(getattr(main, "__file__", "") or ""),
            "file empty": _try(lambda: os.path.getsize(main.__file__) == 0),
            # a file of its folder's filesystem, linked from it (a mount's file is on another device; a bind of a file
            # its filesystem unlinked has no link)
            "file on its folder's device": _try(lambda: os.stat(main.__file__).st_dev == os.stat(os.path.dirname(main.__file__)).st_dev),
            "file linked": _try(lambda: os.stat(main.__file__).st_nlink > 0),
            "spec": getattr(spec, "name", None), **_stack()}


def path():
    return {"entries": [place(p) if p else "''" for p in sys.path],
            "prefix is base": sys.prefix == sys.base_prefix}


def modules():
    import re

    std = set(sys.stdlib_module_names) | {"__main__", "look"}
    # A name drawn at random per run (m + 12 hex digits) is shown as its shape.
    return sorted({re.sub(r"^m[0-9a-f]{12}$", "m<hex12>", n.split(".")[0]) for n in list(sys.modules)
                   if n.split(".")[0] not in std})


def import_system():
    from importlib import machinery

    loader = globals().get("__loader__")
    return {"this module's loader": "%s.%s" % (type(loader).__module__, type(loader).__qualname__),
            "loader is SourceFileLoader": type(loader) is machinery.SourceFileLoader,
            "loader's attributes": sorted(vars(loader)) if loader is not None else None,
            "cached": place(globals().get("__cached__") or ""),
            "meta_path": [type(f).__qualname__ if not isinstance(f, type) else f.__qualname__ for f in sys.meta_path],
            "path_hooks": [getattr(h, "__qualname__", type(h).__qualname__) for h in sys.path_hooks],
            "builtins import": getattr(__builtins__, "__import__", None) is __import__
            if not isinstance(__builtins__, dict) else __builtins__["__import__"].__module__}


def bytecode():
    """Does an import write `__pycache__` beside a new module of the repository?"""
    folder = tempfile.mkdtemp(prefix=".look-", dir=REPO)
    name = "look_fresh_%d" % os.getpid()
    try:
        with open(os.path.join(folder, name + ".py"), "w") as f:
            f.write("X = 1\n")
        sys.path.insert(0, folder)
        try:
            __import__(name)
        finally:
            sys.path.remove(folder)
            sys.modules.pop(name, None)
        wrote = os.path.isdir(os.path.join(folder, "__pycache__"))
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return {"dont_write_bytecode": sys.dont_write_bytecode, "pycache_prefix": place(sys.pycache_prefix or ""),
            "an import writes __pycache__": wrote}


def interpreter():
    import faulthandler
    import gc

    return {"flags": {k: getattr(sys.flags, k) for k in dir(sys.flags) if not k.startswith(("_", "n_")) and
                      k not in ("count", "index")},
            "faulthandler": faulthandler.is_enabled(), "gc": gc.isenabled(), "gc thresholds": gc.get_threshold(),
            "recursion limit": sys.getrecursionlimit(), "trace": sys.gettrace() is not None,
            "profile": sys.getprofile() is not None, "switch interval": sys.getswitchinterval(),
            "warnings filters": _warnings(), "site": "site" in sys.modules,
            "user site": getattr(sys.modules.get("site"), "ENABLE_USER_SITE", None),
            "excepthook": getattr(sys.excepthook, "__module__", "?"),
            "displayhook": getattr(sys.displayhook, "__module__", "?"),
            "unraisablehook": _owner(sys.unraisablehook), "threading excepthook": _owner(threading.excepthook),
            "breakpointhook": _owner(sys.breakpointhook), "warnoptions": list(sys.warnoptions),
            "xoptions": sorted(sys._xoptions)}


def _owner(hook):
    """Whose a hook is: its module's top-level package (pytest's plugins set some during a test)."""
    return (getattr(hook, "__module__", None) or type(hook).__module__ or "?").split(".")[0]


def _warnings():
    import warnings

    return len(warnings.filters)


def signals():
    out = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGCHLD", "SIGUSR1", "SIGALRM", "SIGQUIT", "SIGXFSZ"):
        h = signal.getsignal(getattr(signal, name))
        out[name] = h.name if isinstance(h, signal.Handlers) else "python:" + getattr(h, "__module__", "?")
    out["blocked"] = sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    return out


def stdio():
    def kind(fd):
        import stat

        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return "closed"
        if os.isatty(fd):
            return "tty"
        return {stat.S_IFIFO: "pipe", stat.S_IFREG: "file", stat.S_IFCHR: "char", stat.S_IFSOCK: "socket"}.get(
            stat.S_IFMT(mode), "other")

    return {"fds": [kind(fd) for fd in (0, 1, 2)],
            "python streams": [type(s).__name__ if s is not None else None for s in (sys.stdin, sys.stdout, sys.stderr)],
            "encoding": sys.stdout.encoding if sys.stdout else None}


def process():
    pid = os.getpid()
    ppid = os.getppid()

    def comm(p):
        return _try(lambda: _read("/proc/%d/comm" % p).strip())

    return {"cwd": place(os.getcwd()), "umask": oct(_umask()), "pid is 1": pid == 1, "ppid is 0": ppid == 0,
            "pid under 100": pid < 100, "session id under 100": _try(lambda: os.getsid(0) < 100),
            "parent": comm(ppid) if ppid else None,
            "session leader": _try(lambda: os.getsid(0) == pid), "group leader": os.getpgrp() == pid,
            "session is the parent's": _try(lambda: os.getsid(0) == os.getsid(ppid)) if ppid else None,
            "controlling tty": _try(_tty),
            "uid": os.getuid(), "gid": os.getgid(), "euid": os.geteuid(), "groups": len(os.getgroups()),
            "rlimits": {n: resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource))
                        if n.startswith("RLIMIT_")},
            "PID 1": _try(lambda: _read("/proc/1/comm").strip()) if pid != 1 else "itself",
            "cpus": [os.cpu_count(), _try(lambda: len(os.sched_getaffinity(0)))],
            "nice": _try(lambda: os.getpriority(os.PRIO_PROCESS, 0)),
            "oom_score_adj": _try(lambda: _read("/proc/self/oom_score_adj").strip()),
            "open fds": len(os.listdir("/proc/self/fd")), "threads": threading.active_count(),
            "os threads": _try(lambda: len(os.listdir("/proc/self/task"))),
            "children": _try(lambda: len(_read("/proc/self/task/%d/children" % pid).split()))}


def _tty():
    fd = os.open("/dev/tty", os.O_RDONLY)
    os.close(fd)
    return "yes"


def _umask():
    m = os.umask(0o22)
    os.umask(m)
    return m


def status():
    keys = ("NoNewPrivs", "Seccomp", "Seccomp_filters", "CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb", "NSpid",
            "Speculation_Store_Bypass")
    out = {}
    for line in _read("/proc/self/status").splitlines():
        k, _, v = line.partition(":")
        if k in keys:
            out[k] = len(v.split()) if k == "NSpid" else v.strip()
    return out


def namespaces():
    """Each namespace: shared with PID 1 as this process sees it, or not (inode numbers differ every run)."""
    out = {}
    for ns in sorted(_try(lambda: os.listdir("/proc/self/ns")) or []):
        mine = _try(lambda ns=ns: os.readlink("/proc/self/ns/" + ns))
        init = _try(lambda ns=ns: os.readlink("/proc/1/ns/" + ns))
        out[ns] = "error" if mine.startswith("error") else ("as PID 1's" if mine == init else
                                                             "unreadable at PID 1" if init.startswith("error") else "own")
    # the user namespace's mapping: the whole id range, or the one id a sandbox maps
    out["uid_map"] = _try(lambda: [len(r.split()) and r.split()[2] for r in _read("/proc/self/uid_map").splitlines()])
    return out


def mounts():
    rows = [line.split() for line in _read("/proc/self/mountinfo").splitlines()]
    at = {}
    for r in rows:
        sep = r.index("-")
        at[r[4]] = (r[sep + 1], "ro" if "ro" in r[5].split(",") else "rw")

    def of(p):
        best = max((m for m in at if p == m or p.startswith(m.rstrip("/") + "/")), key=len, default="/")
        return [place(best) if best not in ("/", "/tmp", "/proc", "/dev") else best, *at.get(best, ("?", "?"))]

    return {"entries": len(rows), "statvfs / read-only": bool(os.statvfs("/").f_flag & os.ST_RDONLY), "/": of("/"), "repo": of(REPO), ".git": of(os.path.join(REPO, ".git")),
            "home": of(HOME), "/tmp": of("/tmp"), "/proc": of("/proc"), "/dev": of("/dev")}


def files():
    def writable(p):
        return os.access(p, os.W_OK)

    def count(p):
        n = _try(lambda: len(os.listdir(p)))
        return n if isinstance(n, str) else "empty" if n == 0 else "some"

    return {"repo writable": writable(REPO), ".git writable": writable(os.path.join(REPO, ".git")),
            "home exists": os.path.isdir(HOME), "home writable": writable(HOME), "home": count(HOME),
            "tmp writable": writable(tempfile.gettempdir()), "/tmp": count("/tmp"),
            "/tmp/.python": os.path.exists("/tmp/.python"), "/tmp/.pycache": os.path.exists("/tmp/.pycache"),
            "/dev": count("/dev"),
            "/dev entries": _try(lambda: len(os.listdir("/dev"))),
            "/dev/shm": os.path.isdir("/dev/shm"), "/dev/kmsg": os.path.exists("/dev/kmsg"), "/run": count("/run"),
            "/etc/hostname": os.path.exists("/etc/hostname")}


def identity():
    return {"hostname": socket.gethostname() == _try(lambda: _read("/etc/hostname").strip()),
            "hostname is set": bool(socket.gethostname()) and socket.gethostname() != "(none)",
            "login": _try(os.getlogin), "user in passwd": _try(lambda: __import__("pwd").getpwuid(os.getuid())[0])}


def network():
    def connect():
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            s = socket.socket()
            s.settimeout(2)
            s.connect(("127.0.0.1", port))  # bound a moment ago and closed: nobody listens there
            return "connected"
        finally:
            s.close()

    def outside():
        s = socket.socket()
        s.settimeout(0.3)
        try:
            s.connect(("192.0.2.1", 80))  # TEST-NET-1: routed nowhere
            return "connected"
        except socket.timeout:
            return "timeout"
        finally:
            s.close()

    return {"closed local port": _try(connect), "outside address": _try(outside),
            "unresolvable host": _try(lambda: socket.getaddrinfo("nothing.invalid", 80) and "resolved"),
            "localhost": _try(lambda: socket.gethostbyname("localhost")),
            "interfaces": _try(lambda: sorted(n for _, n in socket.if_nameindex()))}


def timing():
    age = _try(lambda: time.time() - _started())
    cpu = time.process_time()

    def bucket(x):
        return x if isinstance(x, str) else "<5ms" if x < 0.005 else "<0.1s" if x < 0.1 else "<1s" if x < 1 else \
            "<10s" if x < 10 else ">=10s"

    return {"clock": time.get_clock_info("monotonic").implementation, "timezone": list(time.tzname),
            "process cpu": bucket(cpu), "process age": bucket(age),
            "time.time resolution": time.get_clock_info("time").resolution}


def _started():
    ticks = os.sysconf("SC_CLK_TCK")
    start = int(_read("/proc/self/stat").rsplit(")", 1)[1].split()[19]) / ticks
    boot = float(_read("/proc/uptime").split()[0])
    return time.time() - boot + start


def forks():
    import multiprocessing

    def fork():
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    return {"start method": multiprocessing.get_start_method(allow_none=True), "fork": _try(fork)}


def _bucket(n, steps):
    """A count as the first step it is under (`>=` the last): a size, not its exact figure."""
    for s in steps:
        if n < s:
            return "<%d" % s
    return ">=%d" % steps[-1]


def _shape(args):
    """A command line as its shape: the program's name, short flags as typed, every other word `<arg>`."""
    if not args:
        return []
    return [os.path.basename(args[0])] + [a if a.startswith("-") and len(a) < 4 else "<arg>" for a in args[1:4]] + \
        ["+%d" % (len(args) - 4)] * (len(args) > 4)


def _link(fd):
    target = _try(lambda: os.readlink("/proc/self/fd/%d" % fd))
    if target.startswith(("pipe:", "socket:", "anon_inode:")):
        return target.split(":")[0]
    if target.startswith("/dev/"):
        return "/dev/pts" if target.startswith("/dev/pts/") else target
    return place(target) if target.startswith("/") else target


def kernel_view():
    """What /proc shows of the process, beyond what Python says of itself (a harness can set `sys.orig_argv`, not
    the command line the kernel keeps; `os.environ`, not the environment the process was started with)."""
    cmdline = _try(lambda: [a for a in _read("/proc/self/cmdline").split("\0") if a])
    environ = _try(lambda: sorted(e.partition("=")[0] for e in _read("/proc/self/environ").split("\0") if e))
    ppid = os.getppid()

    def rows(path, keys):
        out = {}
        for line in _try(lambda: _read(path)).splitlines():
            k, _, v = line.partition(":")
            if k.strip() in keys:
                out[k.strip()] = v.strip()
        return out

    status = rows("/proc/self/status", ("SigIgn", "SigCgt", "SigBlk", "SigPnd", "ShdPnd", "Threads",
                                        "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"))
    sched = rows("/proc/self/sched", ("nr_switches",))
    stat = _try(lambda: _read("/proc/self/stat").rsplit(")", 1)[1].split())
    pstat = _try(lambda: _read("/proc/%d/stat" % ppid).rsplit(")", 1)[1].split()) if ppid else "none"
    ticks = os.sysconf("SC_CLK_TCK")
    return {
        "cmdline": _shape(cmdline) if isinstance(cmdline, list) else cmdline,
        "cmdline is orig_argv": cmdline == list(getattr(sys, "orig_argv", [])),
        "cmdline names -c": isinstance(cmdline, list) and "-c" in cmdline,
        "exe is the executable": _try(lambda: os.readlink("/proc/self/exe") == os.path.realpath(sys.executable)),
        "comm": _try(lambda: _read("/proc/self/comm").strip()),
        "start environ names": environ if isinstance(environ, str) else
        {"only at start": sorted(set(environ) - set(os.environ)), "only now": sorted(set(os.environ) - set(environ))},
        "environ order": [n for n in os.environ if n in ("PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "PWD", "_",
                                                         "SHLVL", "OLDPWD")],
        "parent cmdline": _try(lambda: _shape([a for a in _read("/proc/%d/cmdline" % ppid).split("\0") if a]))
        if ppid else None,
        "parent's parent": _try(lambda: _read("/proc/%s/comm" % pstat[1]).strip()) if isinstance(pstat, list) else pstat,
        "started after the parent by": _try(lambda: _bucket((int(stat[19]) - int(pstat[19])) * 1000 // ticks,
                                                            (10, 100, 1000, 10000))),
        "cgroup": _try(lambda: _read("/proc/self/cgroup").strip()),
        "cgroup is the parent's": _try(lambda: _read("/proc/self/cgroup") == _read("/proc/%d/cgroup" % ppid)),
        "loginuid": _try(lambda: _read("/proc/self/loginuid").strip()),
        "sessionid": _try(lambda: _read("/proc/self/sessionid").strip() == _read("/proc/%d/sessionid" % ppid).strip()),
        "personality": _try(lambda: _read("/proc/self/personality").strip()),
        "timerslack_ns": _try(lambda: _read("/proc/self/timerslack_ns").strip()),
        "coredump_filter": _try(lambda: _read("/proc/self/coredump_filter").strip()),
        "signal masks": {k: v for k, v in status.items() if k.startswith(("Sig", "Shd"))},
        "threads": status.get("Threads"),
        "switches": _try(lambda: _bucket(int(sched["nr_switches"]), (10, 100, 1000, 10000))),
        "voluntary switches": _try(lambda: _bucket(int(status["voluntary_ctxt_switches"]), (10, 100, 1000, 10000))),
        "fd targets": [_link(fd) for fd in (0, 1, 2)],
        # the shared objects mapped (a harness's extension modules and libraries: OpenSSL's, pyexpat's, ...)
        "mapped libraries": _try(lambda: sorted({re.sub(r"\.cpython-.*|[.-][0-9.]*so.*$", "", os.path.basename(
            line.split()[-1])) for line in _read("/proc/self/maps").splitlines() if ".so" in line.rsplit("/", 1)[-1]})),
        "inheritable fds": sorted(fd for fd in map(int, os.listdir("/proc/self/fd"))
                                  if fd > 2 and _try(lambda fd=fd: os.get_inheritable(fd)) is True),
        "itimers": {n: signal.getitimer(getattr(signal, n)) != (0.0, 0.0) for n in ("ITIMER_REAL", "ITIMER_VIRTUAL",
                                                                                   "ITIMER_PROF")},
        "all handlers": sorted(s.name for s in signal.valid_signals() if isinstance(s, signal.Signals) and
                               s not in (signal.SIGKILL, signal.SIGSTOP) and
                               signal.getsignal(s) not in (signal.SIG_DFL, None)),
        "scheduler": _try(lambda: os.sched_getscheduler(0)),
        # whether a child of this process has been waited for (the probe's own fork, below, in every run)
        "children's usage": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss > 0,
    }


class _Spy(str):
    """An audit event's argument that notes every method an audit hook calls on it."""
    touched = []

    def __getattribute__(self, name):
        if not name.startswith("__") or name in ("__class__", "__fspath__", "__eq__", "__hash__", "__str__"):
            _Spy.touched.append(name)
        return str.__getattribute__(self, name)

    def __eq__(self, other):
        _Spy.touched.append("==")
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _cached(key):
    if key.startswith("<"):
        return "<" + key.strip("<>").split(" ")[0][:10] + ">"
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return "<__main__'s file>" if main and os.path.abspath(key) == os.path.abspath(main) else place(key)


def interpreter_state():
    """The interpreter's figures at the product's call: what a harness loaded, allocated, registered and hooked."""
    import atexit
    import gc

    std = set(sys.stdlib_module_names)
    touched = {}
    for event, args in (("import", ("look_spy_module", None, None, None, None)), ("open", ("/look-spy", "r", 0)),
                        ("os.listdir", ("/look-spy",)), ("socket.connect", (None, ("/look-spy", 1))),
                        ("ctypes.dlsym", (None, "look_spy"))):
        _Spy.touched = []
        spied = tuple(_Spy(a) if isinstance(a, str) else a for a in args)
        if event == "socket.connect":
            spied = (None, (_Spy(args[1][0]), 1))
        try:
            sys.audit(event, *spied)
            touched[event] = sorted(set(_Spy.touched))
        except Exception as exc:
            touched[event] = "raised " + type(exc).__name__
    return {
        "stdlib modules before the product": _BEFORE,
        "pytest's modules": sorted(n for n in sys.modules if n.startswith("_pytest.")),
        "stdlib modules": sorted({n.split(".")[0] for n in sys.modules if n.split(".")[0] in std}),
        "modules count": _bucket(len(sys.modules), (50, 100, 200, 400)),
        "allocated blocks": _bucket(sys.getallocatedblocks(), (20000, 50000, 100000, 200000, 400000)),
        "gc objects": _bucket(len(gc.get_objects()), (10000, 30000, 100000, 300000)),
        "gc collections": [_bucket(s["collections"], (1, 10, 100)) for s in gc.get_stats()],
        "gc frozen": gc.get_freeze_count() > 0,
        "atexit callbacks": atexit._ncallbacks(),
        "threads": sorted(re.sub(r"\d+", "N", t.name) for t in threading.enumerate()),
        "main thread is this one": threading.current_thread() is threading.main_thread(),
        "main thread's native id is the pid": threading.main_thread().native_id == os.getpid(),
        "audit hooks touch an argument": touched,
        "__builtins__ in __main__": type(vars(sys.modules["__main__"]).get("__builtins__")).__name__,
        "__main__'s loader": getattr(getattr(sys.modules["__main__"], "__loader__", None), "__name__", None) or
        type(getattr(sys.modules["__main__"], "__loader__", None)).__name__,
        "exc_info": sys.exc_info()[0] is not None,
        # the folders the import system has looked in, and the files linecache holds (a harness's own, as places)
        # (`__main__`'s file as such: a developer names their program anything; the probe's own bytecode folders out)
        "importer cache": sorted({_cached(k) for k in list(sys.path_importer_cache) if "/.look-" not in k}),
        "linecache": sorted({_cached(k) for k in list(__import__("linecache").cache)}),
        "tracemalloc": "tracemalloc" in sys.modules and sys.modules["tracemalloc"].is_tracing(),
        "warning registries": sorted(n for n, m in list(sys.modules.items()) if getattr(m, "__warningregistry__", None)
                                     and n.split(".")[0] in std),
        "dlopen flags": sys.getdlopenflags(),
        "stdout line buffering": getattr(sys.stdout, "line_buffering", None),
        "stdout errors": getattr(sys.stdout, "errors", None),
        "stdin isatty": _try(lambda: sys.stdin.isatty()) if sys.stdin else None,
        "locale": _try(lambda: list(__import__("locale").getlocale())),
        "preferred encoding": _try(lambda: __import__("locale").getpreferredencoding(False)),
        "filesystem encoding": [sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()],
        "int max str digits": sys.get_int_max_str_digits(),
        "float repr": sys.float_repr_style,
    }


GROUPS = {"environment": environment, "argv": argv, "__main__": main_module, "search path": path, "modules": modules,
          "import system": import_system, "bytecode": bytecode, "interpreter": interpreter, "signals": signals,
          "stdio": stdio, "process": process, "proc status": status, "namespaces": namespaces, "mounts": mounts,
          "files": files, "identity": identity, "network": network, "timing": timing, "forks": forks,
          "kernel view": kernel_view, "interpreter state": interpreter_state}


def snapshot():
    """Every group, each read on its own (one that fails says how)."""
    out = {}
    for name, fn in GROUPS.items():
        try:
            out[name] = json.loads(json.dumps(fn(), default=repr))
        except Exception as exc:
            out[name] = "error:%s: %s" % (type(exc).__name__, exc)
    return out


def send(fifo, lock):
    """One JSON line of the snapshot to `fifo` (opened by a reader outside the run), `lock` held while writing."""
    import fcntl

    snap = snapshot()  # before the harness is named: naming it imports nothing
    line = json.dumps({"harness": "pytest" if "_pytest.main" in sys.modules else "program", "look": snap}) + "\n"
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        fd = os.open(fifo, os.O_WRONLY)
        try:
            data = line.encode()
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
    return snap
