"""The second harness's processes (sent with `bare.py`, executed in its namespace): the fork of a test as a program
starts it, the pipe its output goes to, and the descriptors the zygote and its forks keep.

Standard library only. A test's fork is made from a thread whose only frame is a program's module-level code
(`program_fork`): in the fork, that thread is the main thread (signal handlers, `threading.main_thread()`), and the
test is called from the program's frame in `__main__`'s namespace, with no frame of the harness's below it, as a
developer's `python prog.py` calls the product from its own module.
"""

import _thread
import os
import random
import sys
import warnings

# Sent to a run, this source shares one namespace with bare_shim's (`second._source`); imported by the kit (its
# tests), it takes the name from the module.
if globals().get("__package__"):
    from donegate.hidden.bare_shim import bind


def _exactly(fd, n):
    """`n` bytes from `fd` (b"" at its end)."""
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data

# What a test's fork runs at the bottom of its stack, the one frame below the test's: a program's own module-level code
# (`python prog.py`: `__main__`'s namespace, the program's file name), its steps the harness's functions held as
# constants (`bind`), so `__main__` names none of them: code that walks its callers by `f_back` finds the test, then a
# program, and nothing of the harness's (the zygote's frames are not in the fork).
PROGRAM = """\
'\\x00fork'()
try:
    '\\x00list'('\\x00put'(f(*a, **k)) for f, a, k in '\\x00plan'())
    '\\x00get'(0)(**'\\x00get'(1))
except BaseException:
    '\\x00failed'()
while '\\x00tears'():
    try:
        '\\x00list'(f() for f in '\\x00down')
    except BaseException:
        '\\x00failed'()
while '\\x00more'():
    try:
        '\\x00list'('\\x00said'('\\x00bool'(v == c)) for v, c in '\\x00walk')
    except Exception:
        '\\x00said'(False)
'\\x00passed'()
"""


def program_fork(program, main, steps):
    """The fork of a test: made in a thread of its own whose only frame is `program` (`PROGRAM`, compiled under the
    program's name) in `main` (`__main__`'s namespace), so the fork's one thread is its main thread and holds no frame
    of the zygote's. In the fork the program runs the `steps` (`bare._test_steps`): `child()` (its pipes); the calls
    of the test's setup (`plan()`, each result given to `put`: `bare_shim.plan_test`) from a generator expression of
    its own; the test (`get(0)` with the arguments `get(1)`), `failed()` noting the first failure; its teardowns,
    last set up first (`down` yields them while `tears()`), from a generator expression too; `more()` (a failure
    reported, and the process ended; else the token asked for: whether the held asserts' objects have candidates left
    to be compared with, `walk`, each result given to `said`), then `passed()` (it ends the process). Returns the
    fork's pid."""
    box, ready = [], _thread.allocate_lock()
    ready.acquire()

    def fork():
        try:
            with warnings.catch_warnings():  # Python 3.12 warns of a fork in a process with threads (this one's waits)
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException as exc:  # noqa: B036 (handed to the zygote's thread)
            pid = exc
        if pid == 0:
            steps["child"]()
            return
        box.append(pid)
        ready.release()
        raise SystemExit  # the thread ends here, quietly
    code = bind(program, {"\x00" + k: v for k, v in {**steps, "fork": fork, "list": list, "bool": bool}.items()})
    _thread.start_new_thread(exec, (code, main))
    ready.acquire()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]

def _threads():
    """Threads of this process, native ones included (Linux counts them in /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        threading = sys.modules.get("threading")
        return threading.active_count() if threading is not None else 1

def _only(*keep):
    """Close every descriptor above 2 but `keep`."""
    last = 2
    for fd in sorted(keep):
        os.closerange(last + 1, fd)
        last = fd
    os.closerange(last + 1, 65536)


def _drain(fd):
    """What a pipe holds (4 KiB at most) without waiting for its other end: a process the test started may
    still hold it open. The descriptor is closed."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < 1 << 16:  # the token, and a test's answers (`answers.py`)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    os.close(fd)
    return data


def _hide(fd):
    """The descriptor moved to a random number (it is still in /proc/self/fd: see docs/security.md)."""
    while True:
        new = random.randrange(200, 900)
        try:
            os.fstat(new)  # taken: the other pipe's end, /dev/null...
        except OSError:
            break
    os.dup2(fd, new, inheritable=False)
    os.close(fd)
    return new

def _sink():
    """The write end of a pipe a child of the supervisor (no product code in it) reads and drops: the tests' stdout
    and stderr, as a program's run from a shell that reads its output (a pipe, never /dev/null)."""
    r, w = os.pipe()
    sys.stdout.flush()
    if os.fork() == 0:
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the supervisor's report above all: the kit reads it to its end
                os.dup2(devnull, fd)
            _only(r)
            while os.read(r, 1 << 16):
                pass
        finally:
            os._exit(0)
    os.close(r)
    return w


# The program's file name: the first of these the project's folder does not hold (a developer names theirs anything).
PROGRAM_NAMES = ("main.py", "run.py", "demo.py", "prog.py", "try_it.py")


def program_file(folder, path=()):
    """The file of the developer's program the tests run in (`_as_program`): in the project's folder, where a
    developer's `python prog.py` is (`sys.path[0]` is that folder in both), made by this run in its own copy of the
    tree (the copy's put-back removes it; the agent's tree never holds it), under a name no folder of `path` (the
    run's sys.path) holds a module of: it shadows nothing an import finds. Empty: a child that multiprocessing's spawn
    starts runs `__main__`'s file again, and must run nothing of the tests'. A folder where it cannot be made
    (read-only): a folder of the run's own temporary one."""
    from importlib.machinery import PathFinder

    for name in PROGRAM_NAMES:
        if PathFinder.find_spec(name[:-3], [folder, *path]) is not None:
            continue
        path_ = os.path.join(folder, name)
        try:
            os.close(os.open(path_, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return path_
        except FileExistsError:
            continue
        except OSError:
            break
    import tempfile

    path_ = os.path.join(tempfile.mkdtemp(prefix="p"), "main.py")
    os.close(os.open(path_, os.O_WRONLY | os.O_CREAT, 0o644))
    return path_
