"""What `doctor` reports beyond the shape of the settings: environment keys and git config that weaken
the gate, and which install mode protects it.

- `env` in any settings layer reaches the hooks' environment (managed `env` wins over the same key
  elsewhere). Some keys switch the gate off with no message: `CLAUDE_CODE_SIMPLE` (bare mode skips
  every hook), `LD_PRELOAD` (code loaded into the interpreter before the gate), a block cap at or below
  `max_blocks`; others only matter to a hook run through a shell (`PATH`, `PYTHONPATH`, ...,
  `CLAUDE_CODE_SHELL_PREFIX`), which the exec-form hook install writes is not; `DONEGATE_*` is ignored
  by the launcher (the state root, repository and git are its arguments) but is worth a look.
- git config in the repository that runs a program (`core.fsmonitor`, filter/diff/merge drivers,
  pagers, `core.hooksPath`, includes): the kit's own git calls neutralise it, every other git call in
  the repository runs it.
- the mode: managed (a drop-in with the kit's Stop hook: nothing below can switch it off), project +
  sandbox (the agent cannot write settings or the kit's folders from Bash), project alone.
"""

from __future__ import annotations

import re
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FALSE_WORDS = ("", "0", "false", "no", "off")
SHELL_ONLY = ("PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUSERBASE",
              "CLAUDE_CODE_SHELL_PREFIX", "BASH_ENV", "ENV")
ALWAYS = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH")
GIT_COMMANDS = re.compile(r"(core\.(fsmonitor|hookspath|pager|sshcommand|editor|askpass|gitproxy)|diff\.external|"
                          r"(filter)\.[^\n]+\.(clean|smudge|process)|diff\.[^\n]+\.(textconv|command)|merge\.[^\n]+\.driver|"
                          r"pager\.[^\n]+|include\.path|includeif\.[^\n]+\.path|sequence\.editor|gpg\.program|credential\.helper)")


def effective_env(files: list) -> dict[str, tuple[str, Any]]:
    """{key: (value, file)} as Claude Code merges `env`: later layers win, managed last."""
    out: dict[str, tuple[str, Any]] = {}
    for f in files:
        env = f.data.get("env") if isinstance(getattr(f, "data", None), dict) else None
        if isinstance(env, dict):
            for k, v in env.items():
                out[str(k)] = (str(v) if not isinstance(v, str) else v, f)
    return out


def check_env(findings: list, files: list, *, exec_form: bool, max_blocks: int) -> None:
    from donegate.core.finding import ERROR, OK, WARNING, Finding

    fix = "remove it from that file's env (a managed install pins it: donegate install --managed)"
    found = False
    for key, (value, f) in sorted(effective_env(files).items()):
        where = str(f.path)
        managed = f.scope == "managed"
        if key == "CLAUDE_CODE_SIMPLE" and value.strip().lower() not in FALSE_WORDS:
            findings.append(Finding(ERROR, f"env CLAUDE_CODE_SIMPLE={value!r} in the {f.scope} settings: bare mode, Claude Code "
                                           "skips every hook (the managed one too): the gate is open", where, fix))
        elif key in ALWAYS and value:
            findings.append(Finding(ERROR, f"env {key} in the {f.scope} settings loads code into every hook's interpreter "
                                           "before the gate runs: it can end the hook with 'allow'", where, fix))
        elif key in SHELL_ONLY and value and not managed:
            level = WARNING if exec_form else ERROR
            what = (f"env {key} in the {f.scope} settings reaches every hook; " +
                    ("the kit's exec-form hook (absolute interpreter, -I, no shell) is immune, other hooks are not"
                     if exec_form else "the kit's hook runs through a shell, so it can run another interpreter or code first"))
            findings.append(Finding(level, what, where, fix if level == WARNING else "donegate install REPO again (exec form)"))
        elif key.startswith("DONEGATE_"):
            findings.append(Finding(WARNING if exec_form else ERROR,
                                    f"env {key} in the {f.scope} settings: " + ("the kit's launcher ignores it (its state root comes "
                                    "from its arguments), but nobody but the agent would set it" if exec_form else
                                    "the kit's shell-form hook may read it"), where, fix))
        elif key.startswith("GIT_") and value:
            findings.append(Finding(WARNING, f"env {key} in the {f.scope} settings reaches every git the session runs "
                                             "(the kit's git drops it)", where, fix))
        else:
            continue
        found = True
    if not found:
        findings.append(Finding(OK, "no settings layer sets an env key that weakens the gate"))


def check_git(findings: list, repo: Path) -> None:
    from donegate.tree import git
    from donegate.core.finding import OK, WARNING, Finding

    try:
        res = git.run(repo, "config", "--null", "--list", "--show-scope")
    except Exception:  # noqa: BLE001 - doctor reports, it never fails on this
        return
    hits = []
    items = res.stdout.split("\0")
    for scope, entry in zip(items[0::2], items[1::2], strict=False):  # pairs; an odd last item is dropped
        name, _, value = entry.partition("\n")
        if scope == "command":
            continue
        if GIT_COMMANDS.fullmatch(name.lower()) and value.strip().lower() not in ("false", "cat", ""):
            hits.append(f"{name}={value}")
    if hits:
        findings.append(Finding(WARNING, "the repository's git config runs programs: " + "; ".join(hits)[:400]
                                + " (the kit's own git calls neutralise them; your git, and any other tool's, runs them)",
                                str(repo / ".git" / "config"), "remove the keys you did not set: git config --unset KEY"))
    else:
        findings.append(Finding(OK, "the repository's git config runs no program"))


def mode(files: list, stops: list) -> str:
    """managed | project+sandbox | project | none: what keeps the gate on."""
    if any(ref.file.scope == "managed" for ref in stops):
        return "managed"
    if not stops:
        return "none"
    enabled = None
    for f in files:
        box = f.data.get("sandbox") if isinstance(getattr(f, "data", None), dict) else None
        if isinstance(box, dict) and "enabled" in box:
            enabled = box["enabled"]
    return "project+sandbox" if enabled is True else "project"


def check_mode(findings: list, files: list, stops: list, root: Path) -> str:
    from donegate.core.finding import OK, WARNING, Finding

    m = mode(files, stops)
    if m == "managed":
        import json

        from donegate.sessions.counters import FileCounters

        try:
            quiet = int(json.loads(FileCounters(root / "state")._path("managed:unsealed").read_text())["stops"])
        except (OSError, ValueError, KeyError, TypeError):
            quiet = 0
        findings.append(Finding(OK, "protected by a managed install: no user, project or local setting can switch the hook off "
                                    f"({quiet} stop(s) outside every sealed repository passed quietly so far)"))
    elif m == "project+sandbox":
        findings.append(Finding(OK, "protected by the project install with the sandbox: Bash cannot write the settings or "
                                    "reach the kit; settings already holding a weakening env key still apply (see above)"))
    elif m == "project":
        findings.append(Finding(WARNING, "protected by the project install alone: a program run by Bash can write settings "
                                         "(env, disableAllHooks) that switch the hook off",
                                "", "donegate install REPO --sandbox on, or as root: donegate install --managed"))
    return m


TAIL_BYTES = 1 << 20  # the ledger's last MiB: recent stops, without reading a long history


def check_ledger(findings: list, repo: Path, ledger_path: Path) -> None:
    """Recent stops of this repository whose hook saw a weakening environment (`env_weakened`)."""
    import json
    import os

    from donegate.core.finding import WARNING, Finding

    try:
        with open(ledger_path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return
    names: set[str] = set()
    count = 0
    for line in data.splitlines()[1 if size > TAIL_BYTES else 0:]:
        if b'"env_weakened"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("repo") == str(repo) and isinstance(rec.get("env_weakened"), list):
            count += 1
            names.update(str(n) for n in rec["env_weakened"])
    if count:
        findings.append(Finding(WARNING, f"{count} recent stop(s) of this repository ran with an environment that weakens the gate: "
                                         + ", ".join(sorted(names)), str(ledger_path),
                                "find the settings layer that sets them (the env findings above), or the shell that started Claude Code"))
