"""Read files the agent can reach without ever hanging on them.

Every file the kit reads from the repository (and from its own state root, which an agent without
the sandbox can reach too) is looked at with `lstat` first: only a regular file is opened, never
through a symlink (`O_NOFOLLOW`), never blocking on open (`O_NONBLOCK`: a FIFO swapped in after the
`lstat` opens at once instead of waiting for a writer), and `fstat` must show the same regular file.
A symlink, FIFO, device or socket is named by its kind, so a digest of it never equals the digest of
a file: putting one where a regular file was sealed reads as a change, reported as such.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:  # the standard library's own SHA-256 (3.12 on: `_sha2`, which `random` loads anyway; 3.11: `_sha256`): no OpenSSL
    from _sha2 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
except ImportError:
    try:
        from _sha256 import sha256 as _builtin_sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:
        _builtin_sha256 = None
LARGE = 1 << 17  # bytes a process hashes with the built-in SHA-256 before it loads OpenSSL's (5.6-9x faster per byte, measured on 16 MB)
_builtin_left = [LARGE]


def sha256(data: bytes = b"", size: int | None = None) -> Any:
    """`hashlib.sha256(data)`, without importing `hashlib` while little is hashed: `hashlib` loads OpenSSL
    (`_hashlib`, ~2-3 ms of a stop's CPU), where what a stop with no file changed hashes (its keys, the ledger's line,
    the config's text, the store's manifest and tests) is some KB. The process's first `LARGE` bytes (`size`: what
    will be fed to it, a file's size for `digest`) take the built-in one, the rest OpenSSL's, so hashing a
    whole tree costs what it did. The same digests either way. Only what is passed here is counted: a caller that
    streams more through `.update()` passes its total as `size`."""
    n = len(data) if size is None else max(size, len(data))
    if _builtin_sha256 is None or n > _builtin_left[0]:
        import hashlib

        return hashlib.sha256(data)
    _builtin_left[0] -= n
    return _builtin_sha256(data)


KINDS = ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
         (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder"))
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
CHUNK = 1 << 20


class NotRegular(OSError):
    """The path exists but is not a regular file (`kind` says what it is)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path}: a {kind}, not a regular file")
        self.kind = kind


def kind_of(mode: int) -> str:
    for test, name in KINDS:
        if test(mode):
            return name
    return "file" if stat.S_ISREG(mode) else "special file"


def kind(path) -> str | None:
    """'file', 'symlink', 'FIFO', ... for `path` itself (a symlink is not followed); None if missing."""
    try:
        return kind_of(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def _open(path) -> int:
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(os.fspath(path), kind_of(st.st_mode))
    fd = os.open(path, _FLAGS)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise NotRegular(os.fspath(path), kind_of(now.st_mode) if not stat.S_ISREG(now.st_mode) else "file swapped while opened")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path`; NotRegular for anything else; OSError(EFBIG) past `limit`."""
    fd = _open(path)
    try:
        parts: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if limit is not None and size > limit:
                import errno

                raise OSError(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
            parts.append(chunk)
    finally:
        os.close(fd)


def read_from(path, start: int, limit: int) -> tuple[bytes, int]:
    """(at most `limit` bytes of the regular file `path` from byte `start` on, the file's size now):
    a file that only grows is read a piece at a time; NotRegular for anything else."""
    fd = _open(path)
    try:
        size = os.fstat(fd).st_size
        parts: list[bytes] = []
        pos, end = start, min(size, start + limit)
        while pos < end:
            chunk = os.pread(fd, min(CHUNK, end - pos), pos)
            if not chunk:
                break
            parts.append(chunk)
            pos += len(chunk)
        return b"".join(parts), size
    finally:
        os.close(fd)


def copy_file(src, dst) -> None:
    """`shutil.copy2(src, dst, follow_symlinks=False)` without `shutil`'s import (bz2's and lzma's modules behind it:
    ~1.5-3 ms of a stop's CPU that copies a changed file into a mirror): the bytes, the mode and the times (not the
    extended attributes); a symlink is copied as one. The source is opened as every read here opens a file (no FIFO
    waited on); anything else than a file or a symlink raises NotRegular."""
    if stat.S_ISLNK(os.lstat(src).st_mode):
        os.symlink(os.readlink(src), dst)
        return
    fin = _open(src)
    try:
        st = os.fstat(fin)
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            left, sent = st.st_size, 0
            try:
                while True:  # as `shutil.copyfile` on Linux: in the kernel
                    n = os.sendfile(fout, fin, sent, max(left - sent, 1 << 20))
                    if n == 0:
                        break
                    sent += n
            except OSError:
                if sent:
                    raise
                while chunk := os.read(fin, 1 << 20):  # a file system without sendfile
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fout, view):]
        finally:
            os.close(fout)
    finally:
        os.close(fin)
    os.chmod(dst, stat.S_IMODE(st.st_mode))
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def remove_tree(path) -> None:
    """`path` and everything under it removed, errors ignored, no symbolic link followed (one named `path` is left,
    as `shutil.rmtree` leaves it): `shutil.rmtree(path, ignore_errors=True)` without `shutil`'s import (bz2, lzma:
    ~6.4 M instructions of each stop's after-answer child, which removes the runs' folders; issue 48 item 2)."""
    walk = os.fwalk(path, topdown=False)  # a link to a folder is in `dirs`, never walked
    while True:
        try:
            _top, dirs, files, fd = next(walk)  # its descriptor is open until the next step
        except (StopIteration, OSError):  # done, or nothing there
            break
        for name in files:
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                pass
        for name in dirs:
            try:
                os.rmdir(name, dir_fd=fd)
            except NotADirectoryError:  # a link to a folder: the link goes
                try:
                    os.unlink(name, dir_fd=fd)
                except OSError:
                    pass
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def read_text(path, limit: int | None = None, errors: str = "strict") -> str:
    return read_bytes(path, limit).decode("utf-8", errors)


def digest(path) -> str | None:
    """sha256 (hex) of a regular file; for anything else a label that never equals one
    ('symlink:<sha256 of the target>', 'FIFO', ...); None when it does not exist."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return "symlink:" + sha256(os.fsencode(os.readlink(path))).hexdigest()
    if not stat.S_ISREG(st.st_mode):
        return kind_of(st.st_mode)
    try:
        fd = _open(path)
    except NotRegular as exc:
        return exc.kind
    try:
        h = sha256(size=st.st_size)  # the built-in SHA-256 for the process's first bytes, then OpenSSL's
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)
    finally:
        os.close(fd)


def describe(value: str | None) -> str:
    """What a `digest` value says about the file, for a message: '' for a regular file."""
    if value is None:
        return "missing"
    if value.startswith("symlink:"):
        return "a symlink"
    if len(value) == 64:
        return ""
    return "a " + value
