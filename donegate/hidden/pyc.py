"""The product's bytecode, kept between stops for the confined runs.

The pytest run writes no bytecode and reads none of the repository's (a planted `.pyc` would run instead
of the source the scan read), so it compiled every product module at every stop: a 26,000-line package
cost half of a 1.2 s run, where bare pytest reads its `__pycache__`. The runs cannot keep bytecode
themselves, since the code under test runs in them. So once the hook has answered (in the child that
puts the mirrors back, `copy.after_answer`), a job that runs no product code compiles the mirror's
sources into this store: confined as the runs are (bubblewrap, the mirror read-only at the repository's
path, the store the one folder it may write), with the project's interpreter. Its files are checked
hash-based pycs (PEP 552): an import reads the source and uses the bytecode only when the source hashes
to what it was compiled from, whatever its mtime, size or inode say. Both runs see the store read-only
at `INSIDE`, for the repository's modules only (`donegate.hidden.kept`); a module whose source moved on
is compiled as before.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate import statcache
    from donegate.hidden import python as pyenv

INSIDE = "/tmp/.pycache"  # where the runs see the store (their /tmp is their own)
MAX_FILES = 20_000
MAX_BYTES = 4 << 20  # a larger source is compiled by the run that imports it, as before

# `python -I -S -c COMPILE`, its JSON on stdin: compile each file (read at its path in the repository,
# where the mirror is bound) into `prefix`, unless the pyc there was made from the same source.
COMPILE = """\
def main():
    import importlib.util, json, os, stat, sys
    from importlib import _bootstrap_external as ext
    job = json.loads(sys.stdin.read())
    sys.pycache_prefix = job["prefix"]
    for rel in job["files"]:
        path = os.path.join(job["repo"], rel)
        try:
            # A regular file only, opened without following a link and without waiting on a FIFO: a
            # `.py` linked to /dev/zero would be read until the memory runs out.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with open(fd, "rb") as fh:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > job["max_bytes"]:
                    continue
                source = fh.read(job["max_bytes"] + 1)
            want = importlib.util.source_hash(source)
            cfile = importlib.util.cache_from_source(path)
            try:
                with open(cfile, "rb") as fh:
                    head = fh.read(16)
                if head == importlib.util.MAGIC_NUMBER + b"\\x03\\x00\\x00\\x00" + want:
                    continue
            except OSError:
                pass
            data = ext._code_to_hash_pyc(compile(source, path, "exec", dont_inherit=True), want, True)
            os.makedirs(os.path.dirname(cfile), exist_ok=True)
            tmp = "%s.%s.tmp" % (cfile, os.urandom(6).hex())  # two stops' jobs at once never share one (nor a pid)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, cfile)
        except (OSError, SyntaxError, ValueError):
            continue
main()
"""


def folder(root: Path, repo: Path) -> Path:
    from donegate import paths

    return paths.state_dir(root) / "pyc" / paths.repo_key(repo)


def bind(root: Path | None, repo: Path) -> list[str]:
    """bubblewrap's arguments that show a run the store (none when there is none yet)."""
    if root is None:
        return []
    store = folder(root, repo)
    return ["--ro-bind", str(store), INSIDE] if store.is_dir() else []


class Compile:
    """The job, for `copy.after_answer`: the mirror's sources compiled into the store."""

    def __init__(self, root: Path, repo: Path, mirror: Path, tree: statcache.Tree, top: tuple[str, ...],
                 python: pyenv.Launch, project: Path) -> None:
        from donegate.hidden import copy as throwaway

        self.root, self.repo, self.mirror, self.python, self.project = root, repo, mirror, python, project
        want, _ = throwaway._wanted(tree, top)
        # Regular files (the stat key starts with the mode); the job checks again as it opens each.
        self.files = [n for n, key in want.items()
                      if n.endswith(".py") and stat.S_ISREG(int(key.partition(":")[0]))][:MAX_FILES]
        self.shared = [t for t in top if t != ".git"]

    def __call__(self) -> None:
        from donegate import proc
        from donegate.hidden import confine as walls

        if not self.files:
            return
        try:
            store = folder(self.root, self.repo)
            store.mkdir(parents=True, exist_ok=True)
            hidden = walls.hidden_roots()
            env = walls.env("/tmp", hidden)
            argv = walls.bwrap_argv(proc.system_tool("bwrap") or "/usr/bin/bwrap", repo=self.repo, copy=self.mirror,
                                    store=store, hidden=hidden, env=env, shared=self.shared, python=self.python.binds,
                                    chdir=self.project, read_only=True, extra=["--bind", str(store), INSIDE])
            proc.run([*argv, *self.python.argv, "-c", COMPILE], timeout=120, env=env,
                     input=json.dumps({"prefix": INSIDE, "repo": str(self.repo), "files": self.files,
                                       "max_bytes": MAX_BYTES}))
        except Exception:  # noqa: BLE001 - a job that failed costs the next stops a compile from source, nothing more
            pass
