"""What finding the working tree costs a stop (`donegate.tree.repo.locate`): in the sealed checkout (a seal
record above the folder, no git), in a linked worktree (its `.git` file read), and in a repository nobody
sealed while 50 other repositories are (the quiet path of a user or managed hook: no process: the
`.git` entries are read), and the same when one sealed repository is gone (a `git rev-list` for the root
commits: is this the moved one?). Measured interleaved, medians; the figure to read is the ratio to the sealed checkout."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROUNDS = 60


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=60)


def bench_where() -> list[str]:
    from donegate import paths
    from donegate.tree import repo as repos
    from donegate.seal import store

    with tempfile.TemporaryDirectory(prefix="donegate-where-") as tmp:
        base = Path(tmp)
        root = base / "home"
        main = base / "main"
        main.mkdir()
        _git(main, "init", "-q")
        (main / "a.py").write_text("A = 1\n")
        _git(main, "add", "-A")
        _git(main, "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-q", "-m", "base")
        _git(main, "worktree", "add", "-q", "-b", "wt", str(base / "wt"))
        other = base / "other"
        other.mkdir()
        _git(other, "init", "-q")
        record = store.seal_record_path(main, root)
        record.parent.mkdir(parents=True)
        record.write_text("{}")
        repos.record_identity(main, root)
        for i in range(49):  # other sealed repositories of the machine
            (base / f"r{i}" / ".git").mkdir(parents=True)
            fake = dict(repos.identity(main), repo=str(base / f"r{i}"), common_dir=str(base / f"r{i}" / ".git"))
            (paths.state_dir(root) / repos.IDENTITIES / f"r{i}.json").write_text(json.dumps(fake))
        cases = {"sealed checkout": main, "worktree": base / "wt", "unsealed repository": other}
        moved = base / "moved-root"  # a second state root where one sealed repository has gone (moves are looked for)
        shutil.copytree(root, moved)
        gone = dict(repos.identity(main), repo=str(base / "gone"), common_dir=str(base / "gone" / ".git"))
        (paths.state_dir(moved) / repos.IDENTITIES / "gone.json").write_text(json.dumps(gone))
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(ROUNDS):
            for name, folder in cases.items():
                t0 = time.perf_counter()
                repos.locate({"cwd": str(folder)}, root, managed=True, env={})
                times[name].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            repos.locate({"cwd": str(other)}, moved, managed=True, env={})
            times.setdefault("unsealed repository, one sealed repository gone", []).append(time.perf_counter() - t0)
        base_ms = statistics.median(times["sealed checkout"]) * 1000
        out = []
        for name in times:
            ms = statistics.median(times[name]) * 1000
            out.append(f"finding the tree, {name}: {ms:.2f} ms ({ms / base_ms:.1f}x the sealed checkout)")
        return out


if __name__ == "__main__":
    os.environ.setdefault("DONEGATE_HOME", tempfile.mkdtemp())
    print("\n".join(bench_where()))
