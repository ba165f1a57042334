"""The second run's tests, rewritten and compiled once per seal instead of at every stop.

At every stop the kit took the held asserts out of the sealed tests (`answers.answer_sources`, ~2 ms for a 40-test
file of 5.5 KB) and the second run's supervisor parsed, rewrote (`probe_unit.compare_probes`, `bare_shim._ToShim`,
`bare_fork.as_main`) and compiled them (~11-14 ms), and planned them (`bare_plan.plan`, ~2.5 ms): the same work on the same text, since the sealed tests do not change
between stops. Only the stop's secret names differ (the shim's marker, the probe's, the held asserts' sink).

So once the hook has answered (`copy.after`), the kit does that work itself, with names of its own drawn for the
purpose (placeholders of the secret names' length), and keeps the result under the state root (`state/rewritten/`,
the kit's home: no run binds it, the agent reaches it no more than the store). A stop whose key matches reads it,
splices its own names in, and sends the code objects with the sources; the supervisor uses them when its interpreter
reads that bytecode (the same magic number, no `-O`), and names them after the stop's program files as it named its
own compile. The key: the sealed files' bytes (their digest), the interpreter's magic number and version, the kit's
version and the stat of the modules the rewrite runs. A missing, stale or unreadable file, a placeholder not found
as often as it was written, costs the stop what it cost before (the supervisor compiles), never a wrong test.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Sequence

FOLDER = "rewritten"
FILE_NAME = "<rewritten>"  # every code object's file name until the supervisor names it (`bare_fork.renamed`)
# Modules whose code decides the rewrite: a kit changed (an upgrade, a checkout) makes another key.
MODULES = ("answers", "probe", "probe_unit", "bare_shim", "bare_fork", "bare_plan", "rewritten", "stems")


def stamp(files: Sequence[Path], tested: Sequence[str]) -> tuple[str, list[bytes]] | None:
    """(the key of this seal's rewrite, the files' bytes), or None when a file cannot be read."""
    from donegate.core.fsafe import sha256 as _sha256
    import sys

    from importlib._bootstrap_external import MAGIC_NUMBER  # type: ignore[import-not-found]

    from donegate import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    h = _sha256(f"{MAGIC_NUMBER.hex()}|{sys.version}|{sys.flags.optimize}|{__version__}|{here}".encode())
    try:
        for name in MODULES:
            st = os.stat(os.path.join(here, f"{name}.py"))
            h.update(f"|{name}:{st.st_size}:{st.st_mtime_ns}".encode())
        datas = [f.read_bytes() for f in files]
    except OSError:
        return None
    for f, data in zip(files, datas, strict=True):
        h.update(b"\0" + f.name.encode() + b"\0" + _sha256(data).digest())
    h.update(("\0" + "\0".join(sorted(tested))).encode())
    return h.hexdigest(), datas


def path(root: Path, key: str) -> Path:
    """The rewrite kept for the repository named by `key` (`paths.repo_key`): one file, the last seal's."""
    from donegate import paths

    return paths.state_dir(root) / FOLDER / f"{key}.marshal"


def load(where: Path, key: str, names: dict[str, str]
         ) -> tuple[dict[str, str], dict[str, Any], list[str], dict[str, list[int]]] | None:
    """({file: its source with the held asserts out, under `names["hold"]`}, {file: {test: [(K, expected)]}},
    [the interpreter's magic number, its `-O` level, the code objects' marshal in hex], {file: the columns of pytest
    the program's text shows as the helper, `stems.shown_at`}) for this stop's `names` (shim, probe, hold), or None: no
    kept rewrite, another key, a placeholder not found as often as written, a column that does not hold pytest."""
    import marshal

    try:
        with open(where, "rb") as fh:
            got = marshal.loads(fh.read())
        kept_key, places, counts, sources, held, magic, optimize, blob, at = got
        if kept_key != key or set(places) != set(names) or set(at) - set(sources) or \
                any(sources[rel][c:c + 6] != "pytest" for rel, cols in at.items() for c in cols):
            return None
        for what, place in places.items():
            if len(place) != len(names[what]) or blob.count(place.encode()) != counts[what][0] or \
                    sum(t.count(place) for t in sources.values()) != counts[what][1]:
                return None
    except (OSError, ValueError, EOFError, TypeError, KeyError, AttributeError):
        return None
    for what, place in places.items():
        blob = blob.replace(place.encode(), names[what].encode())
    hold, new = places["hold"], names["hold"]  # (as long as the placeholder: the columns stay where they are)
    return ({rel: t.replace(hold, new) for rel, t in sources.items()}, held,
            [magic, optimize, blob.hex()], at)  # hex: `ship.payload`'s why


def keep(where: Path, key: str, files: Sequence[Path], datas: Sequence[bytes], tested: Sequence[str],
         lengths: dict[str, int]) -> None:
    """The rewrite of `files` (their bytes `datas`) written to `where` under `key`, with placeholder names of the
    stop's names' `lengths`; after the answer (`copy.after`). Anything that goes wrong keeps nothing."""
    try:
        got = build(files, datas, tested, lengths)
        if got is None:
            return
        import marshal

        from donegate.core.util import atomic_write

        os.makedirs(where.parent, mode=0o700, exist_ok=True)
        atomic_write(where, marshal.dumps((key, *got)), 0o600, durable=False)
    except Exception:  # noqa: BLE001 - nothing kept: the next stop compiles in the run, as before
        pass


def build(files: Sequence[Path], datas: Sequence[bytes], tested: Sequence[str],
          lengths: dict[str, int]) -> tuple[Any, ...] | None:
    """(placeholders, their counts in the code and in the sources, the sources, the held values, the magic number,
    the `-O` level, the code objects' marshal, where pytest is shown): the supervisor's rewrite (`bare.supervise`),
    done by the kit."""
    import marshal
    import sys

    from importlib._bootstrap_external import MAGIC_NUMBER  # type: ignore[import-not-found]

    from donegate.hidden import answers
    from donegate.hidden.bare_fork import rewrite
    from donegate.hidden.bare_plan import SEEDED, SERVED, plan

    prefix = {"shim": "m", "probe": "_p", "hold": "_h"}
    places = {w: prefix[w] + os.urandom(n).hex()[:n - len(prefix[w])] for w, n in lengths.items()}
    if set(places) != set(prefix) or any(len(p) != lengths[w] for w, p in places.items()):
        return None
    if any(p.encode() in d for p in places.values() for d in datas):
        return None  # a placeholder the tests hold themselves: nothing kept
    sources, held = answers.answer_sources(files, places["hold"])
    codes: dict[str, tuple[Any, list[str]]] = {}
    # each file's plan, with `dg_random` served (the stop sent seeds) and without, for a project that provides no
    # harness module itself (`bare_plan.plan`'s `own`; the supervisor plans such a project's files itself)
    plans: dict[bool, dict[str, Any]] = {False: {}, True: {}}
    for rel, text in sources.items():
        try:
            for seeded in plans:
                plans[seeded][rel] = plan(text.encode("utf-8", "surrogateescape"), served=(*SERVED, SEEDED) if seeded else SERVED)
            code, names = rewrite(text.encode("utf-8", "surrogateescape"), FILE_NAME, places, rel in tested)
            codes[rel] = (code, sorted(names))
        except SyntaxError:
            continue  # the supervisor says the file does not parse
    blob = marshal.dumps((codes, plans))
    counts = {w: (blob.count(p.encode()), sum(t.count(p) for t in sources.values())) for w, p in places.items()}
    from donegate.hidden.stems import shown_at

    return places, counts, sources, held, MAGIC_NUMBER.hex(), sys.flags.optimize, blob, shown_at(sources)
