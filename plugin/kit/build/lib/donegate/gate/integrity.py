"""The integrity stage: the store matches its manifest and its seal record (a missing or edited store blocks).

`check` is the one store check: the Stop hook and `donegate doctor` both call it.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import store
from donegate.errors import StoreError
from donegate.gate.stop import stage


def check(repo: Path, root: Path) -> tuple[store.Store | None, dict[str, Any], str]:
    """(the sealed store for `repo` or None, the stage's gate for the ledger, the fix of a problem):
    gate {"ok": True, "tests": n}; {"ok": None} when nothing is sealed; {"ok": False, "problem": ...}
    when the store is missing, modified or unrecorded (then the store is None)."""
    stage("the store check")
    try:
        st = store.load(repo, root)
    except StoreError as exc:
        return None, {"ok": False, "problem": exc.message}, exc.fix or "seal the tests again"
    if st is None:
        return None, {"ok": None}, ""
    return st, {"ok": True, "tests": st.manifest["count"]}, ""
