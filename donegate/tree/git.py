"""The few git questions the kit asks, each one subprocess through `proc.run`, none running anything
of the repository's.

git runs commands named in configuration: `core.fsmonitor` on almost every command that looks at the
working tree, `filter.<driver>.clean|smudge|process` for files whose `.gitattributes` name the driver,
`diff.external` and `diff.<driver>.command|textconv` in diffs, pagers, and more. The repository's
`.git/config` is the agent's to write, so without care the hook's own `git status`-like calls run the
agent's program with the hook's rights, outside any sandbox. Every call here therefore:

- runs the git found at install time (`use(path)`: the hook gets it as an argument), never one from
  a `PATH` the session can change;
- gets an environment of its own: no `GIT_*` variable of the caller's (`GIT_CONFIG_COUNT`/`KEY`/
  `VALUE`, `GIT_EXTERNAL_DIFF`, `GIT_PAGER`, `GIT_DIR`, ...), no system or global config
  (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`: `/etc/gitconfig` and `~/.gitconfig` are as
  writable to a root agent as the repository), no `LD_*`;
- overrides on its command line (which beats the repository's config) every key that runs a program:
  the fixed ones below, and each `filter.*`, `diff.*`, `merge.*` driver command the repository's
  config defines (read first with `git config --list`, which runs nothing); diffs also get
  `--no-ext-diff --no-textconv`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from donegate.core import proc
from donegate.errors import DonegateError

# Local git questions answer in milliseconds; a hung one (a lock, a dying disk) must leave the stop
# inside the hook timeout, whose `hook_margin` (30 s) covers the few git calls of one stop.
GIT_TIMEOUT = 10.0
# Where git is looked up when nobody said (`use`): the system's folders, never the caller's PATH.
SYSTEM_PATH = proc.SYSTEM_PATH

# Keys that name a program git may run, set to something that runs nothing. (`core.fsmonitor=false`
# turns the hook off; an empty `core.hooksPath` would mean "the default", so it points at nothing.)
FIXED = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.attributesFile", os.devnull),
    ("core.untrackedCache", "false"),
    ("diff.external", ""),
    ("sequence.editor", "true"),
    ("credential.helper", ""),
    ("gpg.program", "true"),
    ("interactive.diffFilter", "cat"),
    ("uploadpack.packObjectsHook", ""),
)
# `<section>.<driver>.<key>` entries that run a program, per section.
DRIVER_KEYS = {"filter": ("clean", "smudge", "process"), "diff": ("command", "textconv"), "merge": ("driver",)}
DRIVER_VALUES = {"process": "", "clean": "cat", "smudge": "cat", "command": "", "textconv": "", "driver": "true"}

_git_path: str | None = None
_overrides: dict[str, list[str]] = {}  # per repository: the `-c` arguments (read once per process)
_safe: list[str] | None = None  # the person's own safe.directory entries (read once per process)


def use(path: str | None) -> None:
    """Use the git at `path` (absolute) for every call of this process."""
    global _git_path, _safe
    _git_path = path or None
    _overrides.clear()
    _safe = None


def executable() -> str:
    """The git the kit runs: the one given to `use`, else the first on the system's folders."""
    if _git_path:
        return _git_path
    import shutil  # only without the hook's --git: `shutil` (bz2, lzma) off a stop's imports

    found = proc.system_tool("git") or shutil.which("git")
    if not found:
        raise DonegateError("git is not installed", "install git (Debian/Ubuntu: apt-get install git)")
    return os.path.abspath(found)


def environment() -> dict[str, str]:
    """The environment of every kit git call: nothing of the caller's that git would act on."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "LD_", "DYLD_")) and k not in ("PAGER", "EDITOR", "VISUAL", "XDG_CONFIG_HOME")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_OPTIONAL_LOCKS="0", PATH=SYSTEM_PATH, LC_ALL="C", GIT_PAGER="cat", PAGER="cat")
    return env


def _run(argv: list[str], timeout: float = GIT_TIMEOUT) -> proc.Result:
    try:
        return proc.run(argv, timeout=timeout, env=environment())
    except OSError as exc:
        raise DonegateError(f"cannot run git at {argv[0]}: {exc.strerror}",
                            "install git, or run `donegate install` again so the hook finds it") from None


def _driver_overrides(repo: Path) -> list[str]:
    """`-c` arguments that blank every driver command the repository's config defines."""
    key = str(repo)
    if key in _overrides:
        return _overrides[key]
    res = _run([executable(), "-C", key, "config", "--null", "--list"])
    args: list[str] = []
    seen = set()
    if res.returncode == 0:
        for entry in res.stdout.split("\0"):
            name = entry.split("\n", 1)[0].lower()
            m = re.fullmatch(r"(filter|diff|merge)\.(.+)\.([a-z]+)", name)
            if m and m.group(3) in DRIVER_KEYS[m.group(1)] and name not in seen:
                seen.add(name)
                args += ["-c", f"{name}={DRIVER_VALUES[m.group(3)]}"]
                if m.group(1) == "filter":
                    args += ["-c", f"filter.{m.group(2)}.required=false"]
            elif name.startswith("pager."):
                args += ["-c", f"{name}=cat"]
    _overrides[key] = args
    return args


def command(repo: Path, *args: str) -> list[str]:
    """The full argument list of `git -C repo ARGS` with everything command-running neutralised."""
    argv = [executable(), "--no-pager", "-C", str(repo)]
    for k, v in FIXED:
        argv += ["-c", f"{k}={v}"]
    argv += ["-c", f"safe.directory={repo}"]
    for trusted in _safe_directories():
        argv += ["-c", f"safe.directory={trusted}"]
    return argv + _driver_overrides(repo) + list(args)


def _person_configs() -> list[Path]:
    """The person's own global git config files: of the account the kit runs as (its home from the
    password database, not $HOME, which a settings `env` can move), never the repository's."""
    try:
        import pwd

        home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        return []
    return [home / ".gitconfig", home / ".config" / "git" / "config"]


def _safe_directories() -> list[str]:
    """`safe.directory` entries of the person's global config: git ignores them under the kit's own
    `GIT_CONFIG_GLOBAL=/dev/null`, so a repository they trust (owned by another user) would not be a
    repository to the kit. Only this key is taken over; read once per process, running nothing."""
    global _safe
    if _safe is None:
        _safe = []
        for path in _person_configs():
            if not path.is_file():
                continue
            res = _run([executable(), "config", "--file", str(path), "--null", "--get-all", "safe.directory"])
            if res.returncode == 0:
                _safe += [v for v in res.stdout.split("\0") if v]
    return _safe


def run(repo: Path, *args: str, timeout: float = GIT_TIMEOUT) -> proc.Result:
    """`git ARGS` in `repo`, neutralised (for the few callers that read the result themselves)."""
    return _run(command(repo, *args), timeout=timeout)


def _git(repo: Path, *args: str) -> str:
    res = run(repo, *args)
    if res.timed_out or res.returncode != 0:
        why = "timed out" if res.timed_out else (res.stderr.strip().splitlines() or ["failed"])[-1]
        raise DonegateError(f"git {' '.join(args)} in {repo}: {why}")
    return res.stdout


def toplevel(path: Path) -> Path:
    res = run(path, "rev-parse", "--show-toplevel")
    if res.returncode != 0:
        raise DonegateError(
            f"{path} is not inside a git repository",
            "run Claude Code (and donegate) from inside a git repository",
        )
    return Path(res.stdout.strip()).resolve()


def common_dir(path: Path) -> Path:
    """The git dir shared by every working tree of the repository holding `path` (for a linked
    worktree, the main checkout's `.git`), absolute and resolved."""
    res = run(path, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if res.returncode != 0:
        raise DonegateError(f"{path} is not inside a git repository",
                            "run Claude Code (and donegate) from inside a git repository")
    return Path(res.stdout.strip()).resolve()


def roots(path: Path) -> list[str]:
    """The root commits of HEAD's history (what a moved or renamed repository still has); [] for a
    repository without commits."""
    res = run(path, "rev-list", "--max-parents=0", "HEAD")
    if res.timed_out:
        raise DonegateError(f"git rev-list in {path}: timed out")
    return sorted(res.stdout.split()) if res.returncode == 0 else []


def head(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\0") if line]


def changed_since(repo: Path, base: str) -> list[str]:
    """Files that differ from `base` in the working tree (committed or not), plus untracked files."""
    # `--relative`: names below `repo` and relative to it, as ls-files gives them (a subfolder project)
    changed = _lines(_git(repo, "diff", "--no-ext-diff", "--no-textconv", "--relative", "--name-only", "-z", "--no-renames", base, "--"))
    untracked = _lines(_git(repo, "ls-files", "-z", "--others", "--exclude-standard"))
    return sorted(set(changed) | set(untracked))


def tracked_at(repo: Path, commit: str) -> list[str]:
    """The files `commit` holds below `repo`, relative to it."""
    return _lines(_git(repo, "ls-tree", "-r", "-z", "--name-only", commit, "--"))


def ls_files(repo: Path) -> list[str]:
    """Tracked plus untracked (not ignored) files of the working tree."""
    return _lines(_git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"))


def diff(repo: Path, base: str) -> str:
    """The full diff against `base`, untracked files included (for reviewers)."""
    text = _git(repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--relative", base, "--")
    for name in _lines(_git(repo, "ls-files", "-z", "--others", "--exclude-standard")):
        res = run(repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-index", "--", "/dev/null", name)
        text += res.stdout
    return text


def archive(repo: Path, dest: Path, timeout: float = 120) -> proc.Result:
    """`git archive HEAD` of `repo` into the tar file `dest` (smudge filters neutralised)."""
    return run(repo, "archive", "--format=tar", "-o", str(dest), "HEAD", timeout=timeout)
