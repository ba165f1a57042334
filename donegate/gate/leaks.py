"""The transcript scan (leaks): did the session's transcript show hidden-test source, store paths or
the kit's hook code (`donegate.seal.leak_scan`)? A leak never blocks on its own; it is recorded and told. The
scrubber the feedback stage uses is built here, from the same secrets."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate.core import scrub as feedback
from donegate.seal import leak_scan as leaks, store
from donegate import paths
from donegate.gate.stop import STOP, stage

LEAK_MSG = ("donegate: the session transcript shows hidden acceptance-test content, store paths or the kit's "
            "hook code; the tests may be compromised, review the session")


def transcript_gate(payload: dict[str, Any], st: store.Store, root: Path) -> tuple[dict[str, Any] | None, feedback.Scrubber]:
    """(the leak found in the transcript since the last scan, or None; the scrubber for the agent's feedback)."""
    markers, sources, kit_sources = leaks.secrets(st)
    # Its paths found (the kit's roots resolved) only when a stop has something to show the agent.
    scrub = feedback.Scrubber(lambda: [st.path, paths.acceptance_root(root), root, *paths.protected_roots(home=root)],
                              sources)

    stage("the transcript scan")
    why: list[str] = []
    shown, scanned_to = leaks.shown_since(payload.get("transcript_path"), why=why)
    STOP["scanned_to"] = scanned_to
    STOP["transcript_unread"] = why[0] if why else ""
    return leaks.find(shown, markers, sources, kit_sources), scrub


def after_pass(root: Path, session: str, repo: str, payload: dict[str, Any]) -> None:
    """An allowed stop: the transcript may still grow after this read, so `donegate report` looks again."""
    leaks.note_pass(root, session, repo, payload.get("transcript_path"), STOP.get("scanned_to", 0))
