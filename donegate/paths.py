"""Where the kit keeps things.

Everything the agent must not see lives under the state root `DONEGATE_HOME` (default: the kit
checkout): the hidden tests (`acceptance/<repo-key>/`), the ledger, per-session counters and the log.
The root must lie outside every repository it guards; `check_outside` refuses any other layout.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from donegate.errors import DonegateError

KIT_ROOT = Path(__file__).resolve().parent.parent


def home() -> Path:
    env = os.environ.get("DONEGATE_HOME")
    return Path(env).expanduser().resolve() if env else KIT_ROOT


def repo_key(repo: Path) -> str:
    """A readable name plus a short hash of the absolute path: two clones named alike never share."""
    repo = repo.resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", repo.name).strip("-.") or "repo"
    digest = hashlib.sha256(str(repo).encode()).hexdigest()[:10]
    return f"{name}-{digest}"


def acceptance_root(root: Path | None = None) -> Path:
    return (root or home()) / "acceptance"


def store_dir(repo: Path, root: Path | None = None) -> Path:
    return acceptance_root(root) / repo_key(repo)


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


def check_outside(repo: Path, root: Path | None = None) -> None:
    """Refuse a state root inside the guarded repository: the agent could read the hidden tests."""
    root = root or home()
    if is_within(root, repo):
        raise DonegateError(
            f"the donegate state root {root} lies inside the guarded repository {repo.resolve()}",
            "keep the kit checkout outside the repository, or set DONEGATE_HOME to a folder outside it",
        )
