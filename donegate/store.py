"""The acceptance store: hidden tests for one repository, sealed with a manifest.

Layout: `$DONEGATE_HOME/acceptance/<repo-key>/` holds the test files, `pytest.ini` and `manifest.json`.
A seal record in `$DONEGATE_HOME/state/seals/<repo-key>.json` keeps the manifest's hash apart from the
store, so a store that was deleted or rewritten (manifest included) is told apart from one that was
never sealed.

Sealing is atomic: the new store is built in a temporary folder beside the old one and swapped in
with renames; a seal that fails leaves the previous store as it was.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import git, paths, runner
from donegate.errors import DonegateError, StoreError

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
# Test files of the repository itself, protected from the agent when they existed at seal time.
REPO_TEST_GLOBS = ("test_*.py", "*_test.py", "tests/*", "test/*", "*/tests/*", "*/test/*", "conftest.py", "*/conftest.py")


def _utc_now() -> str:
    import datetime as dt  # seal only: kept off the hook's start-up path

    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def matches(name: str, globs) -> bool:
    """fnmatch semantics on the repository-relative path: `*` also crosses `/`."""
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def snapshot(repo: Path, globs) -> dict[str, str]:
    """sha256 of every working-tree file (tracked, untracked, and anything under .claude/) matching `globs`."""
    names = set(git.ls_files(repo))
    claude = repo / ".claude"
    if claude.is_dir():  # settings.local.json is usually git-ignored, so walk it directly
        for p in claude.rglob("*"):
            if p.is_file():
                names.add(p.relative_to(repo).as_posix())
    out = {}
    for name in sorted(names):
        if matches(name, globs):
            p = repo / name
            if p.is_file():
                out[name] = sha256_file(p)
    return out


def seal_record_path(repo: Path, root: Path | None = None) -> Path:
    return paths.state_dir(root) / "seals" / f"{paths.repo_key(repo)}.json"


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


class Store:
    def __init__(self, repo: Path, path: Path, manifest: dict[str, Any]) -> None:
        self.repo, self.path, self.manifest = repo, path, manifest

    def tests(self) -> list[str]:
        return list(self.manifest["tests"])


def seal(
    repo: Path,
    files: list[Path],
    *,
    request: str = "",
    timeout: float = 120,
    protected: list[str] | None = None,
    protect_repo_tests: bool = True,
    extra: dict[str, Any] | None = None,
    root: Path | None = None,
) -> Store:
    """Copy `files` into the store for `repo`, collect and run them once, write the manifest, swap in."""
    repo = git.toplevel(repo)
    root = root or paths.home()
    paths.check_outside(repo, root)
    if not files:
        raise DonegateError("no test files given", "name at least one test file: donegate seal REPO test_x.py")
    names = set()
    for f in files:
        if not f.is_file():
            raise DonegateError(f"{f}: no such test file")
        if f.suffix != ".py":
            raise DonegateError(f"{f}: not a Python file", "acceptance tests are pytest files named test_*.py")
        if paths.is_within(f, repo):
            pass  # copying from the repository is fine; the copy lives outside it
        if f.name in names or f.name == "conftest.py":
            raise DonegateError(f"{f}: two test files named {f.name} (or a conftest.py)", "give every test file its own name")
        names.add(f.name)

    final = paths.store_dir(repo, root)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".seal-{final.name}-"))
    try:
        for f in files:
            shutil.copyfile(f, tmp / f.name)
        (tmp / runner.INI_NAME).write_text(runner.INI_TEXT, encoding="utf-8")
        collected = runner.run(tmp, repo, timeout=timeout, collect_only=True)
        if not collected.ok:
            detail = "\n".join(e.get("detail", "") for e in collected.errors) or collected.output[-3000:]
            raise DonegateError(f"the test files do not collect: {collected.problem}\n{detail}".rstrip())
        if not collected.collected:
            raise DonegateError("the test files hold no tests", "write functions named test_* in them")
        baseline = runner.run(tmp, repo, timeout=timeout, expected=collected.collected)
        if not baseline.ok:
            raise DonegateError(f"the baseline run against {repo} failed: {baseline.problem}")
        globs = list(protected if protected is not None else [".claude/**"])
        manifest = {
            "version": MANIFEST_VERSION,
            "repo": str(repo),
            "repo_key": paths.repo_key(repo),
            "base": git.head(repo),
            "request": request,
            "sealed_at": _utc_now(),
            "files": {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.name != MANIFEST},
            "tests": collected.collected,
            "count": len(collected.collected),
            "baseline": {"passing": sorted(baseline.passing()), "failing": sorted(baseline.failing())},
            "protected": snapshot(repo, globs),
            "repo_tests": snapshot(repo, REPO_TEST_GLOBS) if protect_repo_tests else {},
            **(extra or {}),
        }
        text = json.dumps(manifest, indent=2) + "\n"
        (tmp / MANIFEST).write_text(text, encoding="utf-8")
        old = None
        if final.exists():
            old = final.parent / f".old-{final.name}-{os.getpid()}"
            os.rename(final, old)
        os.rename(tmp, final)
        _atomic_write(
            seal_record_path(repo, root),
            json.dumps({"manifest_sha256": hashlib.sha256(text.encode()).hexdigest(), "sealed_at": manifest["sealed_at"]}),
        )
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return Store(repo, final, manifest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load(repo: Path, root: Path | None = None) -> Store | None:
    """The sealed store for `repo`, verified against its manifest and seal record; None if never sealed.

    Raises StoreError when the store is missing, modified or unrecorded.
    """
    root = root or paths.home()
    path = paths.store_dir(repo, root)
    record_path = seal_record_path(repo, root)
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        record = None
    except ValueError:
        raise StoreError("the seal record of the acceptance store is corrupt", "seal the tests again") from None
    if not path.exists():
        if record is None:
            return None
        raise StoreError("the acceptance store is missing although it was sealed", "seal the tests again: donegate seal")
    try:
        text = (path / MANIFEST).read_text(encoding="utf-8")
        manifest = json.loads(text)
    except (OSError, ValueError):
        raise StoreError("acceptance tests were modified: the manifest is missing or unreadable", "seal the tests again") from None
    if record is None:
        raise StoreError("the acceptance store has no seal record", "seal the tests again: donegate seal")
    if hashlib.sha256(text.encode()).hexdigest() != record.get("manifest_sha256"):
        raise StoreError("acceptance tests were modified: the manifest changed", "seal the tests again")
    present = {p.name for p in path.iterdir() if p.name != MANIFEST and not p.name.startswith(".")}
    expected = set(manifest.get("files", {}))
    changed = sorted(
        name for name in expected | present
        if name not in present or name not in expected or sha256_file(path / name) != manifest["files"][name]
    )
    if changed:
        raise StoreError(f"acceptance tests were modified ({len(changed)} file(s) changed, added or removed)", "seal the tests again")
    return Store(repo, path, manifest)


def refresh_protected(repo: Path, globs: list[str], root: Path | None = None) -> bool:
    """Take a new snapshot of the protected files into a sealed store's manifest.

    For a person's own changes after sealing (installing or removing the kit's settings, which lie
    under `.claude/`): without this every later stop would block on "protected files were changed".
    Returns False when there is no sealed store. The store must be intact: a tampered one stays so.
    """
    root = root or paths.home()
    st = load(repo, root)
    if st is None:
        return False
    manifest = {**st.manifest, "protected": snapshot(Path(st.manifest["repo"]), globs)}
    text = json.dumps(manifest, indent=2) + "\n"
    _atomic_write(st.path / MANIFEST, text)
    _atomic_write(
        seal_record_path(repo, root),
        json.dumps({"manifest_sha256": hashlib.sha256(text.encode()).hexdigest(), "sealed_at": manifest["sealed_at"]}),
    )
    return True
