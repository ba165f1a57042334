"""The first run started early: at the hook's entry, from the recipe the last stop kept, before the kit is imported.

A stop's first run (pytest: the run a stop waits for) spends most of its time starting: its interpreter, the walls,
the import of pytest. Started by the stop itself, it began only once the hook had imported the kit and built the
stop's context (36-60 ms after the hook's exec). The hook's launcher (`hooks/stop_gate.py`) now starts it first,
from what the last stop of this repository started (`keep`): the exact argv, environment, working folder and stdin,
templated only in what is the stop's own (the run's temporary folder, the pipes' numbers, the nonce, the seed,
drawn here like the stop's). The process imports pytest and waits on its `go` pipe: nothing of the project runs
before the stop says go.

The stop then builds its first run as always and adopts the early process only when everything it would start now
is equal to what was started (`Offer.matches`: argv, environment, folder, stdin, the files laid in the temporary
folder and nothing more there); otherwise the early process is killed and the right one started. So a recipe that
is stale (a new seal, another config, kit or interpreter, the mirror busy) or tampered with costs a stop time,
never a verdict. The recipe lives in the state root (`state/early/`), hidden from the agent like the store.

Imported by the launcher before the package's other modules: the standard library only, and nothing slow (what
starts the process imports neither `json` nor `re`: 5-7 ms; the recipe's head is `marshal`'s, built in).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "early"  # under the state root's `state/`
TMP, W, GO, NONCE, SEED = "@TMP@", "@W@", "\"@GO@\"", "@NONCE@", "\"@SEED@\""
VERSION = 1

OFFER: Offer | None = None  # the process the launcher started for this stop, until the first run takes it
KEEP = ""  # where this stop keeps its first run's recipe (the launcher names it; "" keeps none)


def recipe_path(root: str, repo: str) -> str:
    """The recipe of the stops the hook is installed for at `repo` (its `--repo`), under the state root `root`."""
    import binascii

    name = "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "-" for c in repo).strip("-.")[-80:] or "repo"
    return os.path.join(root, "state", FOLDER, f"{name}-{binascii.crc32(repo.encode()):08x}.recipe")


class Offer:
    """The process the launcher started from a recipe, and what the stop needs to adopt it or end it."""

    def __init__(self, meta: dict[str, Any], raw: bytes, tmp: str, nonce: str, seed: str) -> None:
        self.meta, self.raw, self.tmp, self.nonce, self.seed = meta, raw, tmp, nonce, seed
        self.pid = 0
        self.t0 = 0.0  # time.monotonic() when it was started
        self.argv: list[str] = []
        self.env: dict[str, str] = {}
        self.cwd = ""
        self.input = b""
        self.files: list[list[str]] = []
        self.fds: list[int] = []  # open here: the channel's read end, the go pipe's write end, stdout, stderr
        self.channel = (-1, -1)  # (read end, kept here; write end's number in the child)
        self.go = (-1, -1)  # (read end's number in the child; write end, kept here)
        self.out = self.err = -1
        self.lock = -1  # the mirror's lock, taken here (non-blocking) before the process binds the mirror
        self.lock_path = str(meta.get("lock") or "")
        self.returncode: int | None = None
        self.taken = False  # a stop's first run adopted it

    # What `donegate.core.proc.run` asks of a process it adopts, as of a Popen.
    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit code once it ended (None: still running after `timeout` seconds; None waits as long as it takes)."""
        import time

        end = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if end is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif end is not None and time.monotonic() >= end:
                import subprocess

                raise subprocess.TimeoutExpired(self.argv, timeout or 0.0)
            else:
                time.sleep(0.005)
        return self.returncode

    def matches(self, argv: list[str], env: dict[str, str], cwd: str, data: bytes, fds: tuple[int, ...]) -> bool:
        """Whether the stop would start exactly this process now, in this folder, with these files."""
        if (argv, env, cwd, data) != (self.argv, self.env, self.cwd, self.input):
            return False
        if sorted(fds) != sorted((self.channel[1], self.go[0]) if self.go[0] >= 0 else (self.channel[1],)):
            return False
        return laid(self.tmp) == sorted(map(tuple, self.files))

    def end(self, folder: bool = True) -> None:
        """Kill it (its whole group), let go of what it held, its folder removed after the answer (`folder`: not when
        the stop's run goes on in it)."""
        if self.pid and self.returncode is None:
            import signal

            # The group, then the process itself: ended before its `setsid`, the child leads no group yet (killpg finds
            # none), and it would wait on its go pipe (whose end is closed only below) while `wait` waited on it.
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.wait()
            except ChildProcessError:
                pass
        for fd in (*self.fds, self.lock):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fds, self.lock = [], -1
        if not folder or not self.tmp:
            return
        import sys

        copies = sys.modules.get("donegate.hidden.copy")
        if copies is not None:
            copies.remove_later(self.tmp)
        else:
            import shutil

            shutil.rmtree(self.tmp, ignore_errors=True)


def start(root: str, repo: str) -> Offer | None:
    """The launcher's: start the first run of this stop from the kept recipe (None: no recipe, or it cannot)."""
    global KEEP, OFFER
    KEEP = recipe_path(root, repo)
    try:
        fd = os.open(KEEP, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:  # the kit's own, as the store is
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            size, _, rest = fh.read().partition(b"\n")
        import marshal

        meta, raw = marshal.loads(rest[:int(size)]), rest[int(size):]
        if not isinstance(meta, dict) or meta.get("v") != VERSION:
            return None
        offer = Offer(meta, raw, "", os.urandom(16).hex(), os.urandom(16).hex())
        OFFER = _spawn(offer)
        return OFFER
    except Exception:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _spawn(offer: Offer) -> Offer | None:
    import time

    meta = offer.meta
    if offer.lock_path:  # the mirror this run binds: taken now, or the stop starts its run itself
        offer.lock = os.open(offer.lock_path, os.O_RDWR | os.O_NOFOLLOW)
        if not _free(offer.lock):  # the last stop's put-back, or another stop's run: not waited for here
            offer.end()
            return None
    base = str(meta["base"])
    tmp = offer.tmp = os.path.join(base, "donegate-run-" + os.urandom(6).hex())
    os.mkdir(tmp, 0o700)
    try:
        for rel, kind, data in meta["files"]:
            path = os.path.join(tmp, rel)
            if kind == "dir":
                os.mkdir(path, 0o700)
            elif kind == "link":
                os.symlink(data, path)
            else:
                with open(path, "x", encoding="utf-8") as fh:
                    fh.write(data)
        offer.files = meta["files"]
        chan_r, chan_w = os.pipe()
        go_r, go_w = os.pipe() if meta.get("go") else (-1, -1)
        offer.channel, offer.go = (chan_r, chan_w), (go_r, go_w)

        def fill(s: str) -> str:
            return s.replace(TMP, tmp)

        offer.argv = [fill(a) for a in meta["argv"]]  # the channel's end is named in the spec, never in argv
        offer.env = {k: fill(v) for k, v in meta["env"].items()}
        offer.cwd = fill(meta["cwd"])
        nonce_line, _, rest = offer.raw.partition(b"\n")
        spec, _, source = rest.partition(b"\n")
        if nonce_line != NONCE.encode():
            raise ValueError("recipe")
        spec_text = fill(spec.decode()).replace(GO, str(go_r)).replace(SEED, '"%s"' % offer.seed).replace(
            f'"{W}"', str(chan_w))
        offer.input = b"".join((offer.nonce.encode(), b"\n", spec_text.encode(), b"\n", source))
        inp = _tmpfile(base)
        os.write(inp, offer.input)
        os.lseek(inp, 0, os.SEEK_SET)
        offer.out, offer.err = _tmpfile(base), _tmpfile(base)
        offer.fds = [chan_r, *([go_w] if go_w >= 0 else []), offer.out, offer.err]
        passed = [chan_w, *([go_r] if go_r >= 0 else [])]
        offer.t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child: as `proc.run` starts a run (its own session, stdin/out/err files, the pipes)
            try:
                os.setsid()
                os.chdir(offer.cwd)
                for i, fd in enumerate((inp, offer.out, offer.err)):
                    os.dup2(fd, i)
                for fd in passed:
                    os.set_inheritable(fd, True)
                os.execve(offer.argv[0], offer.argv, offer.env)
            finally:
                os._exit(127)
        offer.pid = pid
        for fd in (inp, *passed):
            os.close(fd)
        return offer
    except BaseException:
        offer.end()
        raise


def _free(fd: int) -> bool:
    """Whether the lock on `fd` is ours now (never waited for)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _tmpfile(base: str) -> int:
    """An unnamed file in `base` (as `tempfile.TemporaryFile` makes one), for the run's stdin, stdout, stderr."""
    try:
        return os.open(base, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):
        pass
    path = os.path.join(base, "donegate-io-" + os.urandom(6).hex())
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd


def laid(tmp: str) -> list[tuple[str, ...]]:
    """What is in `tmp`, as the recipe lists it: (relative path, kind, link target or text), walked top down."""
    out: list[tuple[str, ...]] = []
    for top, dirs, names in os.walk(tmp):
        dirs.sort()
        for name in sorted(dirs + names):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, tmp)
            if os.path.islink(path):
                out.append((rel, "link", os.readlink(path)))
            elif os.path.isdir(path):
                out.append((rel, "dir", ""))
            else:
                try:
                    with open(path, encoding="utf-8") as fh:
                        out.append((rel, "file", fh.read()))
                except (OSError, UnicodeDecodeError):
                    out.append((rel, "other", ""))
    return sorted(out)


# The stop's side (the first run, `donegate.hidden.runner`).
_TAKEN: list[Offer] = []  # the offer the first run took, while its mirror's lock may still be asked for
# What a run's temporary folder holds besides folders (`runner.Walls`, `python.Launch.starter`): a folder laid out by
# the launcher with anything else, or a folder where one of these is, is not built in (`take`).
LAID = r"(python/bin/python)|(python/pyvenv\.cfg|nsswitch\.conf|python/lib/python[^/]*/site-packages/[^/]*\.pth)"


def take() -> Offer | None:
    """The process started early, for the stop's first run (once: no other run may take it). An offer whose folder
    holds anything but folders and the walls' few files (`LAID`) is ended here: the run's walls are not built in it."""
    global OFFER
    offer, OFFER = OFFER, None
    if offer is None:
        return None
    if any(kind != _kind(rel) for rel, kind, _ in offer.files) or laid(offer.tmp) != sorted(map(tuple, offer.files)):
        offer.end()
        return None
    _TAKEN.append(offer)
    return offer


def _kind(rel: str) -> str:
    import re

    found = re.fullmatch(LAID, rel)
    return "dir" if found is None else "link" if found.group(1) else "file"


def seed() -> str:
    """The secret the launcher drew for `dg_random` with the early process (both runs of a stop share one)."""
    offer = OFFER or (_TAKEN[-1] if _TAKEN else None)
    return offer.seed if offer is not None else ""


def held(lock_path: str) -> int | None:
    """The mirror's lock the launcher took for the run it started, handed over (None: it holds no such lock)."""
    for offer in _TAKEN:
        if offer.lock >= 0 and offer.lock_path == lock_path:
            fd, offer.lock = offer.lock, -1
            return fd
    return None


def discard() -> None:
    """The stop wants no early run (it ends without a run, or it is over): end what is left of it."""
    global OFFER
    offer, OFFER = OFFER, None
    if offer is not None:
        offer.end()
    while _TAKEN:
        taken = _TAKEN.pop()
        if not taken.taken:
            taken.end()


def adopt(offer: Offer | None, build: Any, walls: Any) -> tuple[list[str], str, int, int, str, str]:
    """The first run's process: the launcher's `offer` when it is exactly the process `build` makes now, else a new
    one (the offer killed before anything of the project ran in it). `build(w, nonce, pipe)`: the run's argv and stdin
    with the channel's write end `w` and the go pipe `pipe`; `walls`: the run's `runner.Walls`. Returns the argv, the
    stdin, the channel's ends (the write end -1: adopted, the process has it), the nonce, and what became of the
    offer ("adopted", "ended", or "" for none)."""
    if offer is not None:
        argv, data = build(offer.channel[1], offer.nonce, offer.go if offer.go[0] >= 0 else None)
        if offer.matches(argv, walls.env, walls.cwd, data.encode(), (offer.channel[1], *walls.passed)):
            offer.fds = [offer.out, offer.err]  # the rest is the run's now: the channel's reader, the go pipe's writer
            return argv, data, offer.channel[0], -1, offer.nonce, "adopted"
        offer.end(folder=False)  # its folder is the run's
    nonce = os.urandom(16).hex()  # as secrets.token_hex(16), without its import of hmac
    r, w = os.pipe()
    argv, data = build(w, nonce, None)
    return argv, data, r, w, nonce, "ended" if offer is not None else ""


def keep(argv: list[str], w: int, env: dict[str, str], cwd: str, data: str, tmp: str,
         files: list[tuple[str, ...]], lock: str, seed: str, nonce: str, go: int | None) -> None:
    """Keep what the stop's first run started as the recipe of the next stop's early start (`start`), when it differs
    from the recipe this stop found. Templated in what is each stop's own: the temporary folder `tmp`, the channel's
    write end `w` (the spec's `fd`), the go pipe's number `go`, the nonce and the seed. A run that
    does not wait for its go (`go` None) runs the project at once: never started early."""
    if not KEEP or go is None:
        return
    import json
    import marshal

    head, _, rest = data.partition("\n")
    spec_line, _, source = rest.partition("\n")
    spec = json.loads(spec_line)
    if head != nonce or spec.get("seed") != seed or spec.get("go") != go:
        return
    spec.update(seed=json.loads(SEED), go=json.loads(GO), **({"fd": W} if spec.get("fd") == w else {}))  # as `_spawn` fills them
    meta = {"v": VERSION, "base": os.path.dirname(tmp), "lock": lock, "go": True,
            "argv": [a.replace(tmp, TMP) for a in argv],
            "env": {k: v.replace(tmp, TMP) for k, v in env.items()}, "cwd": cwd.replace(tmp, TMP),
            "files": [list(f) for f in files]}
    blob = marshal.dumps(meta)
    text = b"%d\n" % len(blob) + blob + NONCE.encode() + b"\n" + json.dumps(spec).replace(tmp, TMP).encode() \
        + b"\n" + source.encode()
    try:
        with open(KEEP, "rb") as fh:
            if fh.read() == text:
                return
    except OSError:
        pass
    folder = os.path.dirname(KEEP)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    part = KEEP + "." + os.urandom(4).hex()
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(text)
    os.replace(part, KEEP)
