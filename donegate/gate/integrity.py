"""The integrity stage: the store matches its manifest and its seal record (a missing or edited store blocks).

`check` is the one store check: the Stop hook and `donegate doctor` both call it.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.seal import store
from donegate.errors import StoreError
from donegate.seal.sealer import not_the_persons
from donegate.gate.stop import stage


def check(repo: Path, root: Path, session: str | None = None, *, key: str | None = None,
          record: Any = store.READ) -> tuple[store.Store | None, dict[str, Any], str]:
    """(the sealed store for `repo` or None, the stage's gate for the ledger, the fix of a problem):
    gate {"ok": True, "tests": n}; {"ok": None} when nothing is sealed; {"ok": False, "problem": ...}
    when the store is missing, modified or unrecorded (then the store is None). `key`, `record`: the
    repository's key and seal record when the caller has them (the stop's context); else read here, once."""
    stage("the store check")
    try:
        if record is store.READ:
            from donegate import paths

            key = key or paths.repo_key(repo)
            record = store.read_record(repo, root, key)
        st = store.load(repo, root, key=key, record=record)
    except StoreError as exc:
        return None, {"ok": False, "problem": exc.message}, exc.fix or "seal the tests again"
    if st is None:
        return None, {"ok": None}, ""
    stale = store.stale_places(st.manifest)
    if stale:  # fail closed, one line: not a finding at every stop on the project's own read
        return None, {"ok": False, "problem": stale}, f"seal the tests again (donegate seal {repo} TEST_FILE...)"
    by = store.recorded_by(record)
    problem = not_the_persons(by, _first_stop(root, session, key) if by is not None and session else None)
    if by is not None and problem:
        return None, {"ok": False, "problem": problem, "sealed_by": by}, \
            "a person must seal the tests again from a terminal outside the session"
    return st, {"ok": True, "tests": st.manifest["count"]}, ""


def _first_stop(root: Path, session: str, key: str | None) -> float | None:
    """When the session first stopped in the repository of `key` (`breaker.first_stop`; counters of a kit before it:
    the session's first stop anywhere)."""
    from donegate import paths
    from donegate.sessions.counters import FileCounters

    counters = FileCounters(paths.state_dir(root)).peek(session)
    firsts = counters.get("firsts")
    first = firsts.get(key) if isinstance(firsts, dict) else counters.get("first")
    return first if isinstance(first, (int, float)) else None
