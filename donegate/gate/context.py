"""One stop's context: what every stage reads, found once at the hook's entry and handed down.

`run_hook` builds it once the payload is parsed and the configuration read: the state root, the payload,
the configuration, the session (`donegate.sessions.ids`) and the agent's client. `evaluate` adds the
repository once it is found (`at`): the working tree judged and the sealed project, with their keys
(`paths.repo_key`, derived once per stop: every file a stop keeps under the state root is named by one),
and the seal record, read once (`record`). The store check adds the verified store, the look at the
working tree adds the look; the agent's usage (its transcript read, `agent_usage`) is read while the runs run,
not after them. Stages read these and never find them again; what lies below the stages
(`seal/`, `tree/`, `hidden/`) takes plain values (a key, a record), never the context.

A plain class with slots: dataclasses cost start-up time on every stop. Set in the order above, by the
entry (`gate/__init__.py`) only; a stage treats it as read-only.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

    from donegate.seal.store import Store
    from donegate.tree.repo import Target
    from donegate.tree.statcache import Tree

from donegate import paths
from donegate.errors import StoreError
from donegate.sessions import ids as sessions

_UNREAD = object()


class StopContext:
    """One stop's facts (see the module's doc). `store` and `look` are None until those stages set them."""

    __slots__ = ("root", "payload", "cfg", "client", "session", "session_from", "target", "tree", "sealed", "key",
                 "tree_key", "_record", "store", "look", "_usage")

    def __init__(self, root: Path, payload: dict[str, Any], cfg: dict[str, Any], client: str | None = None) -> None:
        self.root, self.payload, self.cfg, self.client = root, payload, cfg, client
        self.session, self.session_from = sessions.resolve(payload)
        self.target: Target | None = None
        self.tree: Path | None = None  # the working tree judged
        self.sealed: Path | None = None  # the sealed project whose seal judges it (the same folder, or not: a worktree)
        self.key = ""  # paths.repo_key(sealed)
        self.tree_key = ""  # paths.repo_key(tree): the key itself when the tree is the sealed folder
        self._record: Any = _UNREAD
        self.store: Store | None = None  # the verified store, for the tree judged (`donegate.gate.integrity`)
        self.look: Tree | None = None  # the stop's look at the working tree (`donegate.tree.statcache`)
        self._usage: Any = _UNREAD

    def at(self, target: Target) -> StopContext:
        """The repository found: its working tree, its sealed project and their keys. A key the search already
        derived (`Target.key`) is taken, never derived again."""
        if target is self.target:
            return self
        self.target, self.tree, self.sealed = target, target.tree, target.sealed
        self.key = target.key or paths.repo_key(target.sealed)
        target.key = self.key
        self.tree_key = self.key if target.tree == target.sealed else paths.repo_key(target.tree)
        self._record = target.record if target.record is not None else _UNREAD  # read while finding it
        self.store = None
        return self

    def record(self) -> dict[str, Any] | None:
        """The seal record of the sealed project (None: never sealed), read once; a corrupt one raises the
        same StoreError each time it is asked (the store check says so)."""
        if self._record is _UNREAD:
            from donegate.seal import store

            assert self.sealed is not None
            try:
                self._record = store.read_record(self.sealed, self.root, self.key)
            except StoreError as exc:
                self._record = exc
        if isinstance(self._record, StoreError):
            raise self._record
        return self._record

    def agent_usage(self) -> dict[str, Any] | None:
        """The session's own cost and time from its transcript (`donegate.gate.record.agent_usage`), read once: a stop
        that runs tests reads it beside the runs, so its ledger line waits for nothing after them."""
        if self._usage is _UNREAD:
            from donegate.gate import record

            self._usage = record.agent_usage(self.payload, self.session, self.root)
        return self._usage

    def has_record(self) -> bool:
        """Whether the sealed project has a seal record, intact or not (`donegate.seal.store.is_sealed`)."""
        try:
            return self.record() is not None
        except StoreError:
            return True

    def key_of(self, folder: str | Path | None) -> str | None:
        """The key of `folder` when it is the tree or the sealed project (None: another folder, derive it there)."""
        if folder is None or self.tree is None:
            return None
        folder = str(folder)
        return self.tree_key if folder == str(self.tree) else self.key if folder == str(self.sealed) else None
