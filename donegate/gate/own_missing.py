"""What the own-now run's mirror held of a module of the project its collection said was missing, to the kit's log.

Twice on real projects (typeguard, more-itertools) an honest stop was blocked by "your own test ... does not collect:
ModuleNotFoundError: No module named 'typeguard._checkers'" (or "module 'more_itertools' has no attribute
'peekable'") that no re-run reproduced. On that error path only, the kit's log (never stderr, never the ledger) is
given, for each place the module could be, in the own-now run's mirror and in the repository: exists, size, mtime_ns,
sha256 prefix, the mirror's record of it; and the mirror's marks (`.clean`, `.putback`: `donegate.hidden.copy`).
"""

from __future__ import annotations

import re
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = ("ModuleNotFoundError", "ImportError", "AttributeError")
_NAMED = re.compile(r"No module named '([\w.]+)'|cannot import name '\w+' from '([\w.]+)'"
                    r"|module '([\w.]+)' has no attribute|partially initialized module '([\w.]+)'")


def modules(errors: list[dict[str, str]]) -> list[str]:
    """The modules the collection errors of those kinds name (each once, in order)."""
    out: list[str] = []
    for e in errors:
        message = e.get("message") or ""
        if not any(k in message for k in KINDS):
            continue
        for found in _NAMED.findall(message):
            name = next(n for n in found if n)
            if name not in out:
                out.append(name)
    return out


def _candidates(module: str) -> list[str]:
    parts = module.split(".")
    return [f"{base}{'/'.join(parts)}{tail}" for base in ("", "src/") for tail in (".py", "/__init__.py")]


def _ours(module: str, folders: list[Path]) -> bool:
    """A module of the project: its top-level package or module is in the project's folder (or its `src/`)."""
    top = module.split(".", 1)[0]
    return any((f / base / top).is_dir() or (f / base / f"{top}.py").is_file()
               for f in folders for base in ("", "src"))


def _state(path: Path) -> str:
    import hashlib

    try:
        st = path.stat()
    except OSError:
        return "absent"
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        digest = f"unreadable ({type(exc).__name__})"
    return f"exists size={st.st_size} mtime_ns={st.st_mtime_ns} sha256={digest}"


def _mark(path: Path) -> str:
    try:
        return f"present {path.read_text(encoding='utf-8', errors='replace').strip()[:80]!r}"
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"


def _record(mirror: Path, repo: Path) -> dict[str, Any]:
    """The mirror's record as its own reader takes it (`Mirror.load`), empty when there is none."""
    from donegate.hidden.copy import Mirror

    kept = Mirror(mirror, repo, ())
    kept.load()
    return kept.record


def noted(root: Path | None, key: str | None, repo: Path, prefix: str, now: Any) -> None:
    """`note`, whose own failure is logged and changes nothing of the verdict."""
    try:
        note(root, key, repo, prefix, now)
    except Exception:  # a diagnostic: never a block of its own
        from donegate import paths
        from donegate.gate.stop import log_exception

        log_exception(root or paths.home())


def note(root: Path | None, key: str | None, repo: Path, prefix: str, now: Any) -> None:
    """The log's lines for the own-now run `now`'s collection errors naming a module of the project (none else)."""
    from donegate import paths
    from donegate.gate.stop import log

    root = root or paths.home()
    mirror = paths.state_dir(root) / "mirror" / f"{key or paths.repo_key(repo)}-own-now"
    base = f"{prefix}/" if prefix else ""
    names = [m for m in modules(now.errors) if _ours(m, [repo / base, mirror / base])]
    if not names:
        return
    record = _record(mirror, repo)
    lines = [f"own-now collection error naming a module of the project: {', '.join(names)}; mirror {mirror} "
             f"(.clean {_mark(mirror.with_suffix('.clean'))}, .putback {_mark(mirror.with_suffix('.putback'))}, "
             f"record {'read' if record else 'none'}); run faithful={getattr(now, 'faithful', None)} "
             f"copied={getattr(now, 'copy_duration', None)}"]
    for module in names:
        for rel in _candidates(module):
            name = base + rel
            lines.append(f"  {module} {name}: mirror {_state(mirror / name)} record={record.get(name)}; "
                         f"repository {_state(repo / name)}")
    log(root, "\n".join(lines))
