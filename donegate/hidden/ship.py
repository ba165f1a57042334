"""What a hidden run executes of the kit: its harness modules, sent on the run's stdin, never imported there.

Each run compiled the harness from source at every stop (the plugin ~4 ms, the second harness ~9 ms of CPU).
Now the code objects of those modules, from the kit's own bytecode (its `__pycache__`, read and checked as
any import of the kit reads it), go first, on one line: a run whose interpreter reads that bytecode (the
same magic number) executes them; any other compiles the source that follows, as before. Every code object
is renamed to what the run calls the harness: no kit path reaches a traceback the product could read.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

# In the run, after its JSON line(s): `codes` is what to exec, in order, in one namespace.
READ = """\
    head = sys.stdin.readline().split()
    source = sys.stdin.read()
    from importlib._bootstrap_external import MAGIC_NUMBER
    if len(head) == 2 and head[0] == MAGIC_NUMBER.hex():
        import marshal
        codes = marshal.loads(bytes.fromhex(head[1]))
    else:
        codes = [compile(source, LABEL, "exec")]
"""


# The equality probe and the names it reads first (unittest's, the rewrites: `probe_unit.py`), in that order: in each
# run's payload (`runner`, `second`) and the bytecode job's recipe (`pyc.Tests`).
PROBE = ("probe_unit", "probe")


def source(names: tuple[str, ...]) -> str:
    """The modules' source joined, as a payload sends it after its line of code objects."""
    from pathlib import Path

    here = Path(__file__).parent
    return "\n\n".join((here / f"{name}.py").read_text(encoding="utf-8") for name in names)


def payload(names: tuple[str, ...], label: str, keep: "str | None" = None) -> str:
    """The line of code objects (magic number, their marshal in hex), then the modules' source joined.

    Hex, not base64: `bytes.fromhex` is a builtin, where `binascii` is an extension module the second run mapped and
    held in sys.modules, and a developer's program did not (tests/data/catalogue: `kernel view.mapped libraries`).

    `keep`: a folder of the state root where the payload is kept between stops (its code objects renamed to a
    placeholder of the label's length, spliced with the label here): building it read, renamed and marshalled
    ~300 code objects at every stop (the second run's: 2.7 ms of CPU, measured warm). Kept under the modules' stat (a kit
    changed is built again) and checked to hold its placeholder exactly once; anything else builds it afresh."""
    if keep and label.isascii() and len(label) > 2:
        try:
            return _kept(names, label, keep)
        except Exception:  # noqa: BLE001 - a payload kept badly is built again
            pass
    line, source = _build(names, label)
    return line + "\n" + source


def _build(names: tuple[str, ...], label: str) -> tuple[str, str]:
    """(the line of code objects, or "-" when there is no bytecode to send; the modules' source joined)."""
    line, blob, source = _parts(names, label)
    return (line + " " + blob.hex() if blob else line), source


def _parts(names: tuple[str, ...], label: str) -> tuple[str, bytes, str]:
    import marshal
    from importlib._bootstrap_external import MAGIC_NUMBER, SourceFileLoader  # type: ignore[import-not-found]

    text = source(names)
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        codes = []
        for name in names:  # each module's code as its import reads it (its bytecode kept beside it), without
            full = f"{__package__}.{name}"  # `importlib.util`'s import at a stop
            codes.append(_named(SourceFileLoader(full, os.path.join(here, f"{name}.py")).get_code(full), label))  # type: ignore[arg-type]
        return MAGIC_NUMBER.hex(), marshal.dumps(codes), text
    except Exception:  # noqa: BLE001 - no bytecode to send: the run compiles the source
        return "-", b"", text


def _stamp(names: tuple[str, ...]) -> str:
    """What a kept payload was built for: the interpreter's magic number, the modules' paths, sizes and times (and, checked
    at every stop, the modules' text itself: `_kept`)."""
    from importlib._bootstrap_external import MAGIC_NUMBER  # type: ignore[import-not-found]

    here = os.path.dirname(os.path.abspath(__file__))
    parts = ["hex", MAGIC_NUMBER.hex(), here]  # "hex": the code's marshal is kept in hex (a kept blob of bytes is built again)
    for name in names:
        st = os.stat(os.path.join(here, f"{name}.py"))
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def _kept(names: tuple[str, ...], label: str, keep: str) -> str:
    import marshal

    place = "<" + "\x7f" * (len(label) - 2) + ">"  # DEL: no code object of the harness names it
    path = os.path.join(keep, "-".join(names) + f".{len(label)}")
    stamp, text = _stamp(names), source(names)
    try:
        with open(path, "rb") as fh:
            got = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        got = None
    # the modules' text as kept, not only their sizes and times: an edit that kept both ran the payload of the old text
    # (the text is read and compared at every stop, ~0.2 ms; its bytecode is the import's, as the kit's own modules')
    if not (isinstance(got, tuple) and len(got) == 4 and got[0] == stamp and got[3] == text):
        line, blob, _ = _parts(names, place)
        if not blob or blob.count(place.encode()) != 1:
            raise ValueError("no bytecode, or a placeholder not found once")
        from donegate.core.util import atomic_write

        os.makedirs(keep, mode=0o700, exist_ok=True)
        got = (stamp, line, blob.hex(), text)  # kept in hex: hexing ~0.5 MB at every stop was ~3% of its CPU
        atomic_write(path, marshal.dumps(got), 0o600, durable=False)
    _, line, hexed, _ = got
    # The placeholder's bytes are there exactly once (checked above), so their hex is, at an even place; a second
    # match of it in the hex (across two bytes) or none: built afresh.
    mark = place.encode().hex()
    at = hexed.find(mark) if isinstance(hexed, str) else -1
    if at < 0 or at % 2 or hexed.count(mark) != 1:
        raise ValueError("kept payload without its placeholder")
    return "".join((line, " ", hexed[:at], label.encode().hex(), hexed[at + len(mark):], "\n", text))


def _named(code: CodeType, label: str) -> CodeType:
    from types import CodeType

    consts = tuple(_named(c, label) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=label, co_consts=consts)
