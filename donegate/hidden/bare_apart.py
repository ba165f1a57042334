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
  grows with the test's fork's own time.
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
    total = len(pairs)
    pairs[:] = [pairs[j] for j in halves[0]]
    return _Apart(pid, r, go_w, halves, total, saved, later, blob)


class _Apart:
    """This side of `apart`'s: `rest` (once it has compared its own) lets the fork compare its candidates and returns
    those it did not answer, to compare here; `join` returns every result in `answers.answer_pairs`' first order."""

    def __init__(self, pid, r, go, halves, total, saved, later, blob):
        self.pid, self.r, self.go, self.halves, self.total, self.saved = pid, r, go, halves, total, saved
        self.later, self.blob, self.got, self.left, self.since = later, blob, None, [], _clock()

    def rest(self):
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
        self.got = _answered(self.pid, self.r, APART_WAIT + APART_TIMES * took)
        _seek(here)
        if len(self.got) < len(self.halves[1]):  # killed before all its answers: compared here
            pairs, _ = globals()["answer_pairs"](self.later, self.blob)
            self.left = [pairs[j] for j in self.halves[1][len(self.got):]]
        return self.left

    def join(self, said):
        mine, out = len(self.halves[0]), [False] * self.total
        for j, b in zip(self.halves[0], said, strict=False):
            out[j] = b
        theirs = [b == 49 for b in self.got or b""] + list(said[mine:])
        for j, b in zip(self.halves[1], theirs, strict=False):
            out[j] = b
        return out


def _answered(pid, r, wait):
    """What the fork `pid` wrote on `r` until it ended, or until `wait` s passed (more while it runs, up to
    `APART_MOST`): then it is killed. Either way it is reaped."""
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
            os.kill(pid, signal.SIGKILL)
            break
    os.close(r)
    os.waitpid(pid, 0)
    return got


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
        said = joint.join(said + [_close(*pair) for pair in joint.rest()])
    return globals()["answer_said"](later, counts, said)


def _close(value, candidate, places, delta, _):
    """Whether a held object is its candidate, as `answers.answer_later` compares them."""
    try:
        return bool(value == candidate) or (places, delta) != (None, None) and bool(unit_close(value, candidate, places, delta))
    except Exception:  # noqa: BLE001 - an object that cannot be compared is equal to nothing
        return False
