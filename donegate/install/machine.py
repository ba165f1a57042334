"""`donegate install --managed` / `uninstall --managed`: the gate as machine-wide policy.

Claude Code reads managed settings from `/etc/claude-code/managed-settings.d/*.json` on Linux
(`/Library/Application Support/ClaudeCode/managed-settings.d/` on macOS) above every other layer:
their hooks fire in every session (with `--setting-sources ""` too), `disableAllHooks` in user,
project or local settings does not silence them, their `deny` rules and `sandbox` cannot be relaxed
below, and their `env` wins over the same key elsewhere (measured with 2.1.197, see
claude-code.md). The drop-in holds:

- the Stop hook and the guard in exec form, each a stub in `<managed folder>/hooks/` (no path of the
  kit on the command line Claude Code shows the model; `donegate.claude.stubs`) running the launcher with
  `--managed` instead of `--repo` (the hook judges the
  session's working tree against the seal of the repository it belongs to, worktrees and subfolder
  projects included (`donegate.tree.repo`), and passes quietly, counted, where nothing is sealed, so
  unrelated sessions on the machine cost a counter and no ledger line);
- `env` pinning what switches a hook off from settings: `CLAUDE_CODE_SIMPLE: "0"` (bare mode skips
  every hook), `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` above `max_blocks`, `LD_PRELOAD: ""`;
- deny rules over the kit, its state root and the managed folder itself (drop-ins apply live: a
  Write of a second drop-in would otherwise switch the first off), and the settings files;
- the sandbox, where it can run, denying reads of the kit and writes of the managed folder.

What was there before is kept under the state root (`state/managed-install.json`, and the earlier
file if one had the same name); uninstall puts it back byte for byte and removes the folders install
created.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from donegate import config, paths
from donegate.claude import stubs
from donegate.claude.managed import drop_in, drop_in_path, managed_root
from donegate.claude.settings import check_scripts, want_sandbox
from donegate.errors import DonegateError
from donegate.core.util import atomic_write

RECORD = "managed-install.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record_path(home: Path | None = None) -> Path:
    return paths.state_dir(home) / RECORD


def _need_root(check: bool) -> None:
    if check and os.geteuid() != 0:
        raise DonegateError("install --managed writes machine-wide policy and needs root",
                            "run it as root (sudo donegate install --managed), or use the per-repository install")


def install_managed(*, sandbox: str = "auto", root: Path | None = None, check_root: bool = True) -> Path:
    """Write the drop-in; returns its path."""
    _need_root(check_root)
    check_scripts()
    root = root or managed_root()
    cfg = config.load()
    use_sandbox = want_sandbox(sandbox)
    path = drop_in_path(root)
    record_path = _record_path()
    old = _read_record(record_path)
    if old is not None and old.get("path") == str(path):
        uninstall_managed(root=root, check_root=False)  # installing again: from what was there before
    created = [str(p) for p in (root, path.parent) if not p.exists()]
    before = path.read_bytes() if path.exists() else None
    content, stub_files, links = drop_in(cfg, sandbox=use_sandbox, root=root, with_stubs=True)
    data = (json.dumps(content, indent=2) + "\n").encode()
    stub_dir = stubs.folder(root)
    created += [str(stub_dir)] if not stub_dir.exists() else []
    record = {"version": 1, "path": str(path), "installed_sha256": _sha(data), "created": created,
              "before": before.decode("latin-1") if before is not None else None, "sandbox": use_sandbox,
              "stubs": sorted([*stub_files, *links])}
    atomic_write(record_path, (json.dumps(record, indent=2) + "\n").encode())
    for folder in created:
        Path(folder).mkdir(mode=0o755, exist_ok=True)
    stubs.write(stub_files, links)
    atomic_write(path, data, 0o644)
    return path


def _read_record(path: Path) -> dict | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        raise DonegateError(f"{path} is corrupt", "remove it, then remove the drop-in by hand") from None
    return record if isinstance(record, dict) else None


def uninstall_managed(*, root: Path | None = None, check_root: bool = True) -> tuple[Path, str]:
    """Put the managed folder back as it was before the install."""
    _need_root(check_root)
    root = root or managed_root()
    path = drop_in_path(root)
    record_path = _record_path()
    record = _read_record(record_path)
    if record is None or record.get("path") != str(path):
        return path, "nothing to do: no managed install of this kit is recorded"
    current = path.read_bytes() if path.exists() else None
    if current is not None and _sha(current) != record.get("installed_sha256"):
        done = "the drop-in had been changed since the install; it was replaced by what was there before"
    else:
        done = "removed the drop-in"
    if record.get("before") is not None:
        atomic_write(path, record["before"].encode("latin-1"), 0o644)
        done = "restored the file that was there before the install" if current is None or done.startswith("removed") else done
    elif current is not None:
        path.unlink()
    stubs.remove(record.get("stubs") or [])
    for folder in reversed(record.get("created") or []):  # the deepest first; only when empty
        try:
            Path(folder).rmdir()
        except OSError:
            pass
    record_path.unlink(missing_ok=True)
    return path, done
