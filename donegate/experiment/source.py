"""A task's repository, made ready once per experiment process: a folder of files committed as one
commit (no history an agent could `git show`), which every run copies afresh.

- `path`: a local folder (its git-tracked files when it is a git repository, else every file but
  caches and virtual environments);
- `pypi`: `name==version`, the sdist fetched by the ordinary client (`pip download --no-binary NAME`)
  into `$DONEGATE_HOME/cache/pypi/`, so a second experiment needs no network;
- `git`: a URL and a commit, cloned into `$DONEGATE_HOME/cache/git/`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from donegate import paths
from donegate.errors import DonegateError

SKIP = {".git", "__pycache__", ".pytest_cache", ".venv", "venv", "node_modules", ".mypy_cache", ".tox", ".claude"}
GIT_TIMEOUT = 300
PIP_TIMEOUT = 600


def git_env() -> dict[str, str]:
    """Hermetic git: no user or system configuration (hooks, signing, templates)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def git(repo: Path, *args: str, timeout: float = GIT_TIMEOUT) -> str:
    res = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=timeout, env=git_env(),
                         stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        raise DonegateError(f"git {' '.join(args[:2])} failed in {repo}: {res.stderr.strip()[-500:]}")
    return res.stdout


def commit_tree(repo: Path, message: str) -> str:
    """Make `repo` (a folder of files) a git repository with everything in one commit; its hash."""
    git(repo, "-c", "init.defaultBranch=main", "init", "-q")
    for key, value in (("user.name", "donegate experiment"), ("user.email", "experiment@donegate.invalid"),
                       ("commit.gpgsign", "false")):
        git(repo, "config", key, value)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _copy_files(src: Path, dest: Path) -> None:
    if (src / ".git").exists():
        listed = git(src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
        files = [src / f for f in listed if f]
    else:
        files = [p for p in src.rglob("*") if p.is_file() and not (set(p.relative_to(src).parts) & SKIP)
                 and p.suffix != ".pyc"]
    for f in files:
        if not f.is_file():
            continue
        rel = f.relative_to(src)
        if set(rel.parts) & SKIP:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)


def cache_dir() -> Path:
    return paths.home() / "cache"


def sdist(requirement: str) -> Path:
    """The sdist of `name==version`, downloaded once into the cache."""
    name, version = requirement.split("==", 1)
    folder = cache_dir() / "pypi" / f"{name.lower()}-{version}"
    found = sorted(p for p in folder.glob("*") if p.name.endswith((".tar.gz", ".zip", ".tgz")))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    # `--no-binary NAME`, not `:all:`: pip builds the sdist's metadata, and `:all:` made it build the build
    # backend (poetry-core for tinydb) from source too: 33 CPU-s for tinydb 4.9.0 against 3, the same file.
    res = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", name,
                          "--disable-pip-version-check", "-q", "-d", str(folder), requirement],
                         capture_output=True, text=True, timeout=PIP_TIMEOUT, stdin=subprocess.DEVNULL)
    found = sorted(p for p in folder.glob("*") if p.name.endswith((".tar.gz", ".zip", ".tgz")))
    if res.returncode != 0 or not found:
        raise DonegateError(f"pip download {requirement} failed: {(res.stderr or res.stdout).strip()[-400:]}",
                            "check the name and version on PyPI and the network (or a pip index set in pip.conf)")
    return found[0]


def _extract(archive: Path, dest: Path) -> None:
    """The archive's single top folder, unpacked into `dest` (members leaving it are refused)."""
    tmp = dest.with_name(dest.name + ".unpack")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise DonegateError(f"{archive.name}: member {member!r} leaves the archive")
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            try:
                t.extractall(tmp, filter="data")
            except TypeError:  # Python before 3.10.12 has no extraction filters: check the members here
                for m in t.getmembers():
                    if m.name.startswith("/") or ".." in Path(m.name).parts or m.issym() or m.islnk() or m.isdev():
                        raise DonegateError(f"{archive.name}: member {m.name!r} is not a plain file inside the archive") from None
                t.extractall(tmp)
    tops = [p for p in tmp.iterdir()]
    root = tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp
    _copy_files(root, dest)
    shutil.rmtree(tmp, ignore_errors=True)


def clone(url: str, commit: str) -> Path:
    folder = cache_dir() / "git" / hashlib.sha256(url.encode()).hexdigest()[:16]
    if not (folder / ".git").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["git", "clone", "-q", url, str(folder)], capture_output=True, text=True,
                             timeout=GIT_TIMEOUT, env=git_env(), stdin=subprocess.DEVNULL)
        if res.returncode != 0:
            shutil.rmtree(folder, ignore_errors=True)
            raise DonegateError(f"git clone {url} failed: {res.stderr.strip()[-400:]}", "check the URL and the network")
    try:
        git(folder, "cat-file", "-e", f"{commit}^{{commit}}")
    except DonegateError:
        git(folder, "fetch", "-q", "origin", commit)
    git(folder, "checkout", "-q", "--detach", commit)
    return folder


def prepare(repo: dict, spec_folder: Path, dest: Path, label: str) -> Path:
    """The task's repository at `dest`, committed once; returns `dest`."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if repo.get("path"):
        _copy_files((spec_folder / repo["path"]).resolve(), dest)
        source = repo["path"]
    elif repo.get("pypi"):
        _extract(sdist(repo["pypi"]), dest)
        source = f"{repo['pypi']} (sdist)"
    else:
        _copy_files(clone(repo["git"], repo["commit"]), dest)
        source = f"{repo['git']} at {repo['commit']}"
    commit_tree(dest, f"{label}: {source}")
    return dest
