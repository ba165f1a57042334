"""A held object's candidates shared out between the test's fork and a fork of it (sent with `bare.py`, executed in its
namespace): each side compares the object with its own candidates alone, one side after the other.

Standard library only. An object equal to the first value it is compared with (a latch) then equals one candidate on
each side, which is no answer (`answers.answer_judge`), whichever the expected value's place; compared in one process,
it was right where the expected value was drawn first (1 time in 16 a held assert). A fork has none of the threads
but the one that forked, and shares the open files' offsets with its parent; so:
- the test's fork compares first, the other waiting; the offsets of before are put back for the other (`_offsets`,
  `_seek`), the test's fork's own after it: a file the object's `==` reads (opened before the comparisons) reads the
  same on each side, never where the other side left it (compared at once, the second to read it read nothing);
- the other is waited for `APART_WAIT` s beyond `APART_TIMES` times the test's fork's own comparisons (longer while
  it runs: `_running`, `APART_MOST` at the most), then killed, and the candidates it did not answer are compared by
  the test's fork after its own, as in one process. An `==` that waits on a thread's future (a thread the fork lacks)
  waited there for ever; it is answered here. What that leaves open: an object that behaves otherwise in the fork (it
  knows its side, or waits there on a thread) is compared on one side alone, right one time in 16 a held assert if a
  latch, as any object that knows its side and answers on one side alone. Failing the test instead would block an
  honest product whose value a thread works out. A latch slow to compare on both sides is waited for: the deadline
  grows with the test's fork's own time;
- an object equal to no candidate on either side has the fork's half compared here too (`_Apart.rest`): an honest
  `==` that reads a pipe or a socket gets the data on the side that reads first alone;
- the fork's answer is read from its pipe, never its exit status, and it is signalled through its pidfd (`_kill`): a
  test that ignores SIGCHLD or reaps every child reaps it too.
"""

import os
import select
import signal
import stat
import time
import warnings

# Sent to a run, this source shares one namespace with probe_unit's and answers.py's (`second._source`); imported by the
# kit (its tests), it takes the name from the module.
if globals().get("__package__"):
    from donegate.hidden.probe_unit import unit_close

APART_WAIT = 1.0  # s, beyond APART_TIMES times this side's comparisons: the fork's `==` stuck (a thread it lacks)
APART_TIMES = 4
APART_MOST = 30.0  # s: a fork still running (busy, or waiting for a processor) is waited for so long at the most
_clock, _lseek, _fstat = time.monotonic, os.lseek, os.fstat  # the harness's own, whatever the product patches


def apart(pairs, counts, part, later=None, blob=None):
    """`pairs` (`answers.answer_pairs(later, blob)`: each held object with each of its candidates) shared out between
    this process and a fork of it made now, before any is compared: each object's candidates in turn, one here, the
    next there. Each side holds its own candidates alone (`pairs`, cut down; the fork's are held here only as the
    ticket came, `blob`, decoded again if the fork does not answer). In the fork: None once this side has compared
    its own (it waits for the word), its pipe in `part` (it compares its pairs, writes their results there and ends).
    Here: a `_Apart` (`rest`, then `join`); None where there is nothing to share."""
    halves, i = ([], []), 0
    for n in counts:
        seen = {}
        for j in range(i, i + n):
            halves[seen.setdefault(id(pairs[j][1]), len(seen)) % 2].append(j)
        i += n
    if not halves[1]:
        return None
    saved = _offsets()
    go_r, go_w = os.pipe()
    r, w = os.pipe()
    with warnings.catch_warnings(module=warnings):  # a fork where the test started threads (`program_fork`)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        os.close(go_w)
        os.close(r)
        pairs[:] = [pairs[j] for j in halves[1]]
        if os.read(go_r, 1) != b"g":  # this side ended without its word
            os._exit(0)
        os.close(go_r)
        part.append(w)
        return None
    os.close(go_r)
    os.close(w)
    owner = [k for k, n in enumerate(counts) for _ in range(n)]
    pairs[:] = [pairs[j] for j in halves[0]]
    return _Apart((pid, _pidfd(pid)), r, go_w, halves, owner, saved, later, blob)


class _Apart:
    """This side of `apart`'s: `rest` (once it has compared its own) lets the fork compare its candidates and returns
    those to compare here (`redo`): those it did not answer, and every one of its half of an object equal to no
    candidate on either side; `join` returns every result in `answers.answer_pairs`' first order."""

    def __init__(self, pid, r, go, halves, owner, saved, later, blob):
        self.pid, self.r, self.go, self.halves, self.owner, self.saved = pid, r, go, halves, owner, saved
        self.later, self.blob, self.got, self.redo, self.since = later, blob, None, [], _clock()

    def rest(self, said):
        """`said`: this side's results, its own half's. An object equal to no candidate on either side (an honest
        `==` that reads a pipe or a socket: only the side that reads first gets the data) has the fork's half
        compared here too, after this side's: a latch says equal on both sides (one candidate each: no answer);
        one that knows its side and says equal on one alone is right one time in 16, as before."""
        if self.got is not None:
            return []
        took = _clock() - self.since
        here = _offsets(self.saved)
        _seek(self.saved)  # the fork's files as they were when it was made
        try:
            os.write(self.go, b"g")
        except OSError:
            pass
        os.close(self.go)
        self.got = _answered(*self.pid, self.r, APART_WAIT + APART_TIMES * took)
        _seek(here)
        theirs, owner = self.halves[1], self.owner
        equal = {owner[j] for j, b in zip(self.halves[0], said, strict=False) if b}
        equal.update(owner[j] for j, b in zip(theirs, self.got, strict=False) if b == 49)
        self.redo = [j for i, j in enumerate(theirs) if i >= len(self.got) or owner[j] not in equal]
        if not self.redo:
            return []
        pairs, _ = globals()["answer_pairs"](self.later, self.blob)
        return [pairs[j] for j in self.redo]

    def join(self, said):
        mine, out = len(self.halves[0]), [False] * len(self.owner)
        for j, b in zip(self.halves[0], said, strict=False):
            out[j] = b
        for j, b in zip(self.halves[1], self.got or b"", strict=False):
            out[j] = b == 49
        for j, b in zip(self.redo, said[mine:], strict=False):
            out[j] = b
        return out


def _pidfd(pid):
    """A descriptor of the process `pid` (Linux 5.3's pidfd), made while it cannot have ended (it waits for its
    word): signalled through it, a fork reaped by the test's own SIGCHLD handling is never mistaken for a process that
    took its pid. None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _answered(pid, pidfd, r, wait):
    """What the fork `pid` (`pidfd`: its descriptor, or None) wrote on `r` until it ended, or until `wait` s passed
    (more while it runs, up to `APART_MOST`): then it is killed. Either way it is reaped where the test has not
    reaped it already (SIGCHLD ignored, or a handler that reaps every child): the answer is what the pipe holds."""
    got, now = b"", _clock()
    until, most = now + wait, now + APART_MOST
    while True:
        ready, _, _ = select.select([r], [], [], max(0.0, until - _clock()))
        if ready:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            got += chunk
        elif _clock() < most and _running(pid):
            until = min(most, _clock() + APART_WAIT)
        else:
            _kill(pid, pidfd)
            break
    os.close(r)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # reaped by the test's SIGCHLD handling
        pass
    if pidfd is not None:
        os.close(pidfd)
    return got


def _kill(pid, pidfd):
    """SIGKILL to the fork: through its pidfd, or (none) by its pid while it is still this process's unreaped child."""
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        elif os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
    except OSError:  # it ended (ProcessLookupError), or was reaped already (ChildProcessError)
        pass


def _running(pid):
    """Whether process `pid` runs or waits for a processor (Linux's /proc; elsewhere not known: False)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] == b"R"
    except (OSError, IndexError):
        return False


def _offsets(of=None):
    """{descriptor: (offset, device, inode)} of this process's regular files (a fork shares their offsets); of those
    `of` (an answer of this) has only, each where it is still that file."""
    fds = of
    if of is None:
        try:
            fds = [int(n) for n in os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")]
        except (OSError, ValueError):
            fds = range(1024)
    out = {}
    for fd in fds:
        try:
            st = _fstat(fd)
            if stat.S_ISREG(st.st_mode) and (of is None or of[fd][1:] == (st.st_dev, st.st_ino)):
                out[fd] = (_lseek(fd, 0, os.SEEK_CUR), st.st_dev, st.st_ino)
        except OSError:
            pass
    return out


def _seek(offsets):
    """Each file of `offsets` (an `_offsets` answer) put back at its offset, where it is still that file."""
    for fd, (at, dev, ino) in offsets.items():
        try:
            st = _fstat(fd)
            if (st.st_dev, st.st_ino) == (dev, ino):
                _lseek(fd, at, os.SEEK_SET)
        except OSError:
            pass


def compared_apart(later, blob):
    """The held asserts' answers (`answers.answer_later`'s), the candidates shared out with a fork (`apart`), by
    the harness's code: where a zygote runs a test that is not its program's own (`bare.zygote`)."""
    pairs, counts = globals()["answer_pairs"](later, blob)
    part = []
    joint = apart(pairs, counts, part, later, blob) if pairs else None
    said = [_close(*pair) for pair in pairs]
    if part:
        try:
            os.write(part[0], bytes(49 if b else 48 for b in said))
        finally:
            os._exit(0)
    if joint:
        said = joint.join(said + [_close(*pair) for pair in joint.rest(said)])
    return globals()["answer_said"](later, counts, said)


def _close(value, candidate, places, delta, _):
    """Whether a held object is its candidate, as `answers.answer_later` compares them."""
    try:
        return bool(value == candidate) or (places, delta) != (None, None) and bool(unit_close(value, candidate, places, delta))
    except Exception:  # noqa: BLE001 - an object that cannot be compared is equal to nothing
        return False
