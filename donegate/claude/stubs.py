"""The hook stubs: what Claude Code runs, at a path that names nothing of the kit.

Since 2.1.332 Claude Code shows the model a blocking hook's whole command line (`Stop hook blocking
error from command: "<command> <args>": <reason>`). The kit's command line used to be its interpreter,
its launcher, `--home STATE_ROOT --repo REPO`: every block told the agent where the hidden tests live.
So install writes a stub per hook, a tiny executable file, and the hook entry is the stub's path alone
(exec form: `"args": []`, no shell; without `args` Claude Code would run it through a shell,
which `CLAUDE_CODE_SHELL_PREFIX` in settings `env` wraps):

    #!/abs/python -I            the kit's interpreter, run by the kernel (no PATH, no PYTHON* variables)
    ARGV = [...]                the launcher and its arguments: state root, repository, git, claude
    exec(...)                   the launcher, as if started with those arguments

Beside the stubs, links `ro-<hash>-<n>` stand for the kit and the state root: the deny rules and
the sandbox name the links and the stubs' folder, never the folders themselves, because 2.1.332 lists
every folder its sandbox hides, and every Read deny rule's, in the system prompt; both follow a link.

The stubs lie in a folder with a neutral name: `~/.claude/hooks/` for a repository install (the
conventional place of a user's hook scripts), `<managed folder>/hooks/` for the managed install. Their
names carry a hash of the state root and repository, so two installs never share one. The stub is
where the launcher finds the state root: the deny rules and the sandbox keep the agent from reading
or writing that folder (without the sandbox an agent that runs arbitrary programs can still read it:
see docs/claude-code.md).

One reader of a stub, `words`, serves uninstall and doctor. The launcher's own parsing of the
arguments stays in hooks/stop_gate.py (`_options`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from donegate.errors import DonegateError

FOLDER = "hooks"
MARK = "# donegate hook stub"
SHEBANG_MAX = 255  # bytes the Linux kernel reads of a `#!` line (127 before 5.1)


def folder(managed_root: Path | None = None) -> Path:
    """Where the stubs go: `<managed folder>/hooks`, else `~/.claude/hooks` of the installing user."""
    if managed_root is not None:
        return Path(managed_root) / FOLDER
    return Path(os.path.expanduser("~")) / ".claude" / FOLDER


def tag(home: Path, repo: Path | None) -> str:
    """A short name part from the state root and the repository: installs never share a stub."""
    return hashlib.sha256(f"{home}\0{repo or ''}".encode()).hexdigest()[:12]


def text(words: list[str]) -> str:
    """The stub for `words` (interpreter, its flags, launcher, the launcher's arguments)."""
    python, *rest = words
    flags = [w for w in rest[: next(i for i, w in enumerate(rest) if not w.startswith("-"))]]
    argv = rest[len(flags):]
    shebang = f"#!{python} -{''.join(f.lstrip('-') for f in flags)}"
    if len(shebang.encode()) > SHEBANG_MAX or any(c.isspace() for c in python):
        raise DonegateError(f"the interpreter path {python} is too long or holds a space for a `#!` line",
                            "install the kit (or its venv) under a shorter path without spaces")
    script = json.dumps(argv[0])
    return (f"{shebang}\n{MARK}: written by `donegate install`; `donegate uninstall` removes it.\n"
            f"ARGV = {json.dumps(argv)}\n"
            "import sys\n"
            "sys.argv = ARGV\n"
            f"exec(compile(open({script}, encoding='utf-8').read(), {script}, 'exec'),"
            f" {{'__name__': '__main__', '__file__': {script}}})\n")


def parse(stub_text: str) -> list[str]:
    """The words a stub runs ([] when it is not one of the kit's)."""
    lines = stub_text.splitlines()
    if len(lines) < 3 or not lines[0].startswith("#!") or not lines[1].startswith(MARK):
        return []
    python, _, flags = lines[0][2:].partition(" ")
    try:
        argv = json.loads(lines[2].removeprefix("ARGV = "))
    except ValueError:
        return []
    return [python, *(["-" + c for c in flags.lstrip("-")] if flags else []), *argv]


def words(path: str | Path) -> list[str]:
    """The words the stub at `path` runs ([] when there is none, or it is not the kit's)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return parse(fh.read(4096))
    except (OSError, ValueError):
        return []


def alias(folder: Path, tag: str, n: int) -> Path:
    """The neutral link that stands for the n-th protected folder in the deny rules and the sandbox."""
    return folder / f"ro-{tag}-{n}"


def write(stubs: dict[str, str], links: dict[str, str] | None = None) -> None:
    """Write the stubs (executable) and the links (link -> folder), each replaced whole."""
    from donegate.core.util import atomic_write

    for path, body in stubs.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(Path(path), body.encode(), 0o755)
    for link, target in (links or {}).items():
        tmp = Path(f"{link}.tmp{os.getpid()}")
        tmp.unlink(missing_ok=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.symlink_to(target)
        os.replace(tmp, link)


def remove(paths: list[str]) -> None:
    """Remove the kit's own stubs and links among `paths` (anything else there stays)."""
    for path in paths:
        if words(path) or (os.path.islink(path) and os.path.basename(path).startswith("ro-")):
            Path(path).unlink(missing_ok=True)


def _gone(argv: list[str]) -> bool:
    """Whether the stub's launcher, state root or repository no longer exists (a deleted clone, a test's
    temporary folder): its hook could only fail."""
    named = [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("--home", "--repo")]
    return any(not os.path.exists(p) for p in argv[:1] + named)


def sweep(where: Path | None = None) -> list[str]:
    """Remove the stubs (and their links) of an install whose launcher, state root or repository is gone;
    returns the stubs' paths. A settings file still naming one has a hook that fails: doctor there says so."""
    where = where or folder()
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return []
    dead: set[str] = set()
    for name in names:
        kind, _, tag = name.partition("-")
        if kind in ("stop", "pretooluse") and tag:
            argv = words(where / name)[1:]
            argv = argv[next((i for i, w in enumerate(argv) if not w.startswith("-")), len(argv)):]
            if argv and _gone(argv):
                dead.add(tag)
    mine = [n for n in names if n.partition("-")[2] in dead or n.startswith("ro-") and n[3:].rpartition("-")[0] in dead]
    remove([str(where / n) for n in mine])
    return [str(where / n) for n in mine if not n.startswith("ro-")]
