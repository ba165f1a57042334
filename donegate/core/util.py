"""The small things every module needs once: a file replaced whole, a UTC timestamp, a counted noun, a guarded parse.

Kept free of imports beyond `os`, `sys` and `time`: the Stop hook writes its counter and cache entry with
`atomic_write` at every stop, and `tempfile` (with `random` and `shutil` behind it) would cost it
milliseconds for a name it can make itself.
"""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    import configparser
    from typing import IO, Any, Callable, Iterable

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_seq = 0


def remembered(path: "os.PathLike[str] | str", tag: str, compute: "Callable[[], Any]", *, exact: bool = False,
               limit: int | None = None) -> "Any":
    """`compute()`, or what it gave before under the same `tag`: kept as JSON in `path` (`{"id", "value"}`,
    `memo_read`), written whole but not synced (a lost memo costs one `compute`). `exact`: kept only when JSON
    gives back exactly what `compute` gave (no tuples, no dates). What `compute` raises is raised."""
    memo = memo_read(path, limit=limit)
    if memo is not None and memo[0] == tag:
        return memo[1]
    value = compute()
    memo_write(path, tag, value, exact=exact)
    return value


def memo_read(path: "os.PathLike[str] | str", limit: int | None = None) -> "tuple[str, Any] | None":
    """(tag, value) of a memo `memo_write` kept, read as a regular file (`fsafe`: a FIFO in its place is never
    waited on); None for none or a broken one. The value is JSON's: its caller checks its shape."""
    import json

    from donegate.core import fsafe

    try:
        memo = json.loads(fsafe.read_text(path, limit=limit))
        if isinstance(memo, dict) and isinstance(memo.get("id"), str) and "value" in memo:
            return memo["id"], memo["value"]
    except (OSError, ValueError):
        pass
    return None


def memo_write(path: "os.PathLike[str] | str", tag: str, value: "Any", *, exact: bool = False) -> None:
    """Keep `value` under `tag` in `path`, whole, not synced: lost or not kept (`exact`: JSON does not give back
    exactly `value`), the next reader works it out again."""
    import json

    try:
        text = json.dumps({"id": tag, "value": value}, separators=(",", ":"))
        if not exact or json.loads(text)["value"] == value:
            atomic_write(path, text, durable=False)
    except (OSError, TypeError, ValueError):
        pass


def atomic_write(path: "os.PathLike[str] | str", data: "bytes | str | Iterable[bytes]", mode: int | None = None, *,
                 durable: bool = True, before_replace: "Callable[[], None] | None" = None) -> None:
    """Replace `path` with `data` in one step: a reader sees the old file or the new one, never half.

    The temporary file lies beside `path` (a rename across file systems is not atomic), is created
    exclusively (never opened through a symlink or onto a file someone else made) and is removed when
    anything fails. `durable` syncs the data before the rename, so a crash cannot leave an empty file
    under the final name; counters and caches that are rebuilt when lost skip it. `before_replace`
    runs between the write and the rename (the seal's crash tests stop there). `data` may be pieces of bytes, written
    as they come (a large file never whole in memory)."""
    global _seq
    _seq += 1
    target = os.fspath(path)
    folder, name = os.path.split(target)
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{time.monotonic_ns()}.{_seq}.tmp")
    pieces = [data.encode("utf-8")] if isinstance(data, str) else [data] if isinstance(data, bytes) else data
    fd = os.open(tmp, _FLAGS, 0o666 if mode is None else mode)  # a name already there is not ours to remove
    try:
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)  # the umask narrowed what os.open was given
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_TEMP: list[str] = []  # the temporary folder, found once (`temp_dir`)


def temp_dir() -> str:
    """The folder `tempfile.gettempdir()` names: TMPDIR, TEMP, TMP, then /tmp, /var/tmp, /usr/tmp, the working folder,
    the first that is a folder this process may write in; found once. Not `tempfile` itself: its import (`shutil`,
    `random`, bz2's and lzma's modules behind it) was ~3-5 ms of every stop's CPU for a name (issue 48 item 2). Its
    twin in the runs, `hidden/bare_served._temp_dir`, is shipped into the product's process and imports nothing of the kit."""
    if not _TEMP:
        for d in [os.environ.get(k) for k in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp", "/usr/tmp", os.getcwd()]:
            if d and os.path.isdir(d) and _writes(d):
                _TEMP.append(os.path.abspath(d))
                break
        else:
            raise FileNotFoundError("no usable temporary folder found")
    return _TEMP[0]


def _writes(folder: str) -> bool:
    """Whether a file can be made and written in `folder`, tried as `tempfile` tries it: `os.access` says yes to root
    for any folder (`/proc`, a read-only mount), where the run's folder then failed to be made (review C)."""
    for _ in range(100):
        path = os.path.join(folder, "tmp" + os.urandom(6).hex())
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue
        except OSError:
            return False
        try:
            os.write(fd, b"blat")
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
    return False


def make_temp_dir(prefix: str, folder: str | None = None) -> str:
    """A new private folder as `tempfile.mkdtemp` makes one (`prefix`, then random characters; mode 0o700) in
    `folder` (default: `temp_dir()`): its absolute path."""
    base = folder or temp_dir()
    while True:
        path = os.path.join(base, prefix + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return os.path.abspath(path)


def temp_file() -> "IO[bytes]":
    """An unnamed file in `temp_dir()`, open for reading and writing (as `tempfile.TemporaryFile` makes one): gone
    from the disk once closed."""
    base = temp_dir()
    try:
        fd = os.open(base, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):  # no O_TMPFILE here (or not on this file system): a named one, unlinked at once
        while True:
            path = os.path.join(base, "tmp" + os.urandom(6).hex())
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            except FileExistsError:
                continue
            os.unlink(path)
            break
    try:
        return os.fdopen(fd, "w+b")
    except BaseException:  # not left open (review C)
        os.close(fd)
        raise


def utc_now(seconds: float | None = None, *, ms: bool = True) -> str:
    """ISO 8601 in UTC, as the ledger writes it: `2026-12-03T16:48:44.123+00:00` (or without the
    milliseconds). Built with `time`, not `datetime`, which the hook does not otherwise import."""
    t = time.time() if seconds is None else seconds
    head = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return head + (f".{int(t % 1 * 1000):03d}" if ms else "") + "+00:00"


def plural(count: int, word: str, *, grouped: bool = False) -> str:
    """`1 test`, `2 tests` (`1,000 stops` with `grouped`)."""
    return (f"{count:,}" if grouped else str(count)) + f" {word}" + ("" if count == 1 else "s")


def json_object(text: "str | bytes") -> "dict[str, Any] | None":
    """One line of JSON that must be an object (a transcript's, a stream's, an event log's): the dict, or None
    for anything else (not JSON, or a list, a number, a string)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def python_tree(text: str | None) -> "ast.Module | None":
    """A Python module's tree, None when it does not parse: a syntax error, a NUL byte, or nested past the parser's
    recursion or memory (`SUM = 1+1+...`, 3,000 terms), which the agent's text may be and a stop never raises on."""
    import ast

    try:
        return ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# Whether this Python reads TOML (`tomllib`, 3.11+): on 3.10 `parsed_toml` reads nothing, and a caller that must tell
# "no TOML here" from "a file that does not parse" asks this first.
READS_TOML = sys.version_info >= (3, 11)


def parsed_toml(text: str | None) -> "dict[str, Any] | None":
    """A TOML document (pyproject.toml, tox.toml, pytest.toml), None when it does not parse or this Python has no
    `tomllib` (`READS_TOML`): the agent's text, read by the seal's configuration rules, never raises."""
    if text is None or not READS_TOML:
        return None
    import tomllib  # type: ignore[import-not-found,unused-ignore]  # Python 3.11+

    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError, MemoryError):
        return None


def parsed_ini(text: str | None) -> "configparser.ConfigParser | None":
    """An ini file as pytest, tox and coverage.py read theirs (configparser, no interpolation), None when it does
    not parse."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text or "")
    except (configparser.Error, RecursionError, MemoryError):
        return None
    return parser


def epoch_ms(value: Any) -> "int | None":
    """`utc_ms(value)` as whole milliseconds since the epoch (None as there), without `datetime` for the form every
    client writes (`2026-01-01T10:01:30.250Z`, an offset or none; 1-6 digits of fraction): the stop reads a session's
    time from its transcript at every stop, and importing `datetime` cost it 1-4.5 ms of its CPU. Any other form (and
    a date or time out of range) is left to `utc_ms`, so both always agree."""
    if isinstance(value, str) and 19 <= len(value) <= 32 and value[4:5] == "-" and value[7:8] == "-" \
            and value[10:11] in ("T", " ") and value[13:14] == ":" and value[16:17] == ":":
        rest, sign, off = value[19:], 0, 0
        if rest.endswith("Z"):
            rest = rest[:-1]
        elif len(rest) >= 6 and rest[-6] in "+-" and rest[-3] == ":":
            sign, off, rest = (1 if rest[-6] == "+" else -1), _digits(rest[-5:-3]) * 60 + _digits(rest[-2:]), rest[:-6]
        frac = rest[1:] if rest[:1] == "." else None if rest else ""
        parts = [_digits(value[i:j]) for i, j in ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19))]
        if frac is not None and 0 < len(frac) <= 6 and frac.isdigit() or frac == "":
            y, mo, d, h, mi, s = parts
            ms = int((frac + "000")[:3]) if frac else 0
            if min(parts) >= 0 and 1 <= y and 1 <= mo <= 12 and 1 <= d <= _days(y, mo) and h < 24 and mi < 60 \
                    and s < 60 and off < 24 * 60:
                days = _civil(y, mo, d)
                return ((days * 24 + h) * 60 + mi - sign * off) * 60_000 + s * 1000 + ms
    when = utc_ms(value)
    if when is None:
        return None
    import datetime as dt

    return (when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)


def _digits(text: str) -> int:
    """A field of ASCII digits as a number (-1 for anything else: `int` takes '+1', ' 1' and other digits)."""
    return int(text) if text.isascii() and text.isdigit() else -1


def _days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _civil(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to the proleptic Gregorian date y-m-d (Howard Hinnant's days_from_civil)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def utc_ms(value: Any) -> Any:
    """An ISO time as the ledger keeps times: UTC (a naive time is taken as UTC), cut to the millisecond; None when
    `value` is not one. Here, below both the stop (a session's time from its transcript) and the report, which
    reads the ledger's times: a stop that imported the report package for it paid 28 ms of CPU."""
    import datetime as dt

    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    when = when.astimezone(dt.timezone.utc)
    return when.replace(microsecond=when.microsecond // 1000 * 1000)
