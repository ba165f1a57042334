"""The guard's tripwire for the kit's own command line (`donegate.install.guard` calls `runs_kit`).

The commands are the person's (`donegate.person.ownership` refuses them too, without needing to recognise
the spelling: this is the tripwire in front of it). Standard library only: it runs before every tool call.
"""

from __future__ import annotations

import os
import re

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})

# The kit's own command line, in any spelling the guard can see: the program `donegate`, a Python
# running `-m donegate` or code importing it, a runner (`pipx run`, `uvx`, ...) starting it, or a script
# file holding any of these. The commands are the person's (`donegate.person.ownership` refuses them too, without
# needing to recognise the spelling: this is the tripwire in front of it).
KIT_PROGRAM = "donegate"
PYTHON_NAME = re.compile(r"(?:python|pypy)[0-9.]*[mtw]?(?:\.exe)?$|py$")
RUNNERS = frozenset({"pipx", "uvx", "uv", "pdm", "poetry", "hatch", "rye", "pixi", "conda", "mamba", "micromamba"})
KIT_TEXT = re.compile(
    r"(?<![\w./-])donegate(?:\.exe)?\s+(?:hook|guard|seal|write|install|uninstall|doctor|review|report|label|experiment"
    r"|approve|reject|unseal|status)\b|-m['\"]?\s*,?\s*['\"]?donegate\b"
    r"|['\"]donegate['\"]\s*,\s*['\"](?:seal|write|install|uninstall|label|approve|reject|unseal)['\"]|\bimport\s+donegate\b|\bfrom\s+donegate\b"
    r"|\b__import__\(\s*['\"]donegate|import_module\(\s*['\"]donegate|runpy\.\w+\(\s*['\"]donegate")
SCRIPT_BYTES = 256 * 1024  # a script the agent wrote, read at most this far
KIT_CLI_WHY = "it runs donegate's own command line"
KIT_CLI_REASON = ("donegate guard: this {tool} call was refused: {why}. donegate's commands (seal, write, install, "
                  "uninstall, label, approve, reject, unseal, report, ...) are the person's, not the session's: the "
                  "gate's tests and verdicts are not the agent's to change. Work from the Stop hook's feedback; if you "
                  "are sure a hidden test is wrong, end your message with `APPEAL: <why>` and a person decides.")


def _script_runs_kit(word: str, cwd: str) -> bool:
    """Whether the file `word` names (a script the agent may have written) runs the kit's command line."""
    path = os.path.normpath(os.path.join(cwd, os.path.expanduser(os.path.expandvars(word))))
    try:
        with open(path, "rb") as fh:
            if not os.path.isfile(path):
                return False
            text = fh.read(SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return bool(KIT_TEXT.search(text))


def runs_kit(name: str, args: list[str], words: list[str], cwd: str) -> str | None:
    """What of a simple command starts the kit's CLI (None: nothing): `donegate ...`, `python -m donegate`, Python
    code importing it, a runner starting it, or a script file that does any of these."""
    if name in (KIT_PROGRAM, KIT_PROGRAM + ".exe"):
        return name
    if name in RUNNERS and any(os.path.basename(a) == KIT_PROGRAM for a in args):
        return name
    if PYTHON_NAME.match(name):
        for i, a in enumerate(args):
            if a in ("-m", "-c") and i + 1 < len(args):
                body = args[i + 1]
                if (a == "-m" and (body == KIT_PROGRAM or body.startswith(KIT_PROGRAM + "."))) or \
                        (a == "-c" and KIT_PROGRAM in body and KIT_TEXT.search(body)):
                    return f"{name} {a}"
                break
            if a.startswith("-m") and a[2:].split(".")[0] == KIT_PROGRAM:
                return f"{name} {a}"
            if not a.startswith("-"):
                if _script_runs_kit(a, cwd):
                    return a
                break
        return None
    if name in SHELLS or name in ("source", "."):
        files = [a for a in args if not a.startswith("-")]
        if files and _script_runs_kit(files[0], cwd):
            return files[0]
        return None
    program = words[len(words) - len(args) - 1] if len(words) > len(args) else ""
    if "/" in program and _script_runs_kit(program, cwd):  # ./run.sh, /tmp/x (a script the agent wrote)
        return program
    return None
