"""Where the kit keeps things.

Everything the agent must not see lives under the state root `DONEGATE_HOME` (default: the kit
checkout; for a kit installed from a wheel, `$XDG_DATA_HOME/donegate`, i.e. `~/.local/share/donegate`):
the hidden tests (`acceptance/<repo-key>/`), the ledger, per-session counters and the log.
The root must lie outside every repository it guards; `check_outside` refuses any other layout.
The layout rules themselves are in `donegate._layout`, shared with the guard.
"""

from __future__ import annotations

from donegate.core.fsafe import sha256 as _sha256
import os
import re
from pathlib import Path

from donegate import _layout
from donegate.errors import DonegateError

KIT_ROOT = Path(__file__).resolve().parent.parent  # the checkout, or the site-packages folder of a wheel


def is_checkout(kit: Path | None = None) -> bool:
    """A git checkout (or editable install) of the kit: `hooks/stop_gate.py` lies beside the package."""
    return _layout.is_checkout(str(kit or KIT_ROOT))


def hooks_dir(kit: Path | None = None) -> Path:
    """The folder of the hook launchers (`stop_gate.py`, `guard.py`): the checkout's `hooks/`, else the
    installed `share/donegate/hooks`; when neither exists, the checkout's `hooks/` (reported missing)."""
    return Path(_layout.hooks_dir(str(kit or KIT_ROOT)))


def home() -> Path:
    """The state root: DONEGATE_HOME, else the checkout, else $XDG_DATA_HOME/donegate (~/.local/share/donegate)."""
    return Path(_layout.state_root(str(KIT_ROOT), os.environ))


_default_home = home  # for the functions below whose parameter is named `home`


def repo_key(repo: Path) -> str:
    """A readable name plus a short hash of the absolute path: two clones named alike never share."""
    repo = repo.resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", repo.name).strip("-.") or "repo"
    digest = _sha256(str(repo).encode()).hexdigest()[:10]
    return f"{name}-{digest}"


def acceptance_root(root: Path | None = None) -> Path:
    return (root or home()) / "acceptance"


def store_dir(repo: Path, root: Path | None = None, key: str | None = None) -> Path:
    """`key`: `repo_key(repo)` when the caller has it (a stop derives it once: `donegate.gate.context`)."""
    return acceptance_root(root) / (key or repo_key(repo))


def seal_record(repo: Path, root: Path | None = None, key: str | None = None) -> Path:
    """The seal record naming the store of `repo` (`donegate.seal.store`); `key` as for `store_dir`."""
    return state_dir(root) / "seals" / f"{key or repo_key(repo)}.json"


def ledger_path(root: Path | None = None) -> Path:
    return (root or home()) / "ledger.jsonl"


def state_dir(root: Path | None = None) -> Path:
    return (root or home()) / "state"


def log_path(root: Path | None = None) -> Path:
    return (root or home()) / "logs" / "donegate.log"


def config_path(root: Path | None = None) -> Path:
    return (root or home()) / "donegate.yaml"


def is_within(child: Path, parent: Path) -> bool:
    try:
        child.resolve().relative_to(parent.resolve())
    except ValueError:
        return False
    return True


def within(child: Path, parent: Path) -> bool:
    """`is_within` of two paths resolved already: the same answer, nothing resolved again (each `resolve` is an lstat
    a folder of the path; a stop compared ~100 pairs, ~5 ms of its CPU)."""
    return child == parent or parent in child.parents


def protected_roots(kit: Path | None = None, home: Path | None = None) -> list[Path]:
    """The kit (checkout, or site-packages folder), the launchers' folder and the state root, without
    one that lies inside another: for a checkout, the checkout and the state root."""
    kit = (kit or KIT_ROOT).resolve()
    roots = [Path(r).resolve() for r in _layout.protected(str(kit), str((home or _default_home()).resolve()))]
    out: list[Path] = []
    for r in roots:
        if not any(within(r, o) for o in out):
            out = [o for o in out if not within(o, r)] + [r]
    return out


def check_outside(repo: Path, root: Path | None = None) -> None:
    """Refuse a state root inside the guarded repository: the agent could read the hidden tests."""
    root = root or home()
    if is_within(root, repo):
        raise DonegateError(
            f"the donegate state root {root} lies inside the guarded repository {repo.resolve()}",
            "keep the kit checkout outside the repository, or set DONEGATE_HOME to a folder outside it",
        )
