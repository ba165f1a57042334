"""The kit's own commands belong to the person, never to the agent they gate.

`seal`, `write`, `install`, `uninstall`, `label`, `approve`, `reject` and `unseal` change what the gate
decides or what the person reads. Run from inside a Claude Code session that works in a sealed
repository (the agent's Bash tool, or anything it starts), they refuse to act unless the person
confirms on a terminal the session did not make. `cli.main` asks `check` before any command of
`PERSON_COMMANDS` runs: the one place, keyed by command name, so a command added later is covered by
adding its name.

How a session is recognised, without trusting one signal:
- the variables Claude Code sets in its tools' environment (seen on 2.1.197: `CLAUDECODE=1`,
  `CLAUDE_CODE_ENTRYPOINT`, `CLAUDE_CODE_SESSION_ID`, `CLAUDE_CODE_EXECPATH`, `AI_AGENT=claude-code_...`);
  an agent can unset them;
- the parent process chain (`/proc`): a `claude` process above this one; an agent can leave it only
  by detaching (`setsid`, a daemon, cron), which the ledger line then shows as a run without a
  terminal, and which `report` and the Stop hook judge by its time.
A session "works in" a sealed repository when the Claude Code process's folder, this command's
folder or the command's target repository lies in one sealed under this state root.

The confirmation: a one-time word written to `/dev/tty` and typed back there. The model never sees
a terminal's screen, so it cannot read the word; a terminal the agent made itself (`script`, a
Python `pty`) is refused because its session leader lies below the Claude Code process. This is a
tripwire plus a lock for the ordinary case, not a wall: an agent that may write the state root can
forge anything in it. The walls are Claude Code's sandbox and the managed install (see docs/security.md).

Plain `os` and `/proc` only: the guard's launcher does not import this, but every command does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

from donegate.errors import DonegateError
from donegate.seal.sealer import inside_session, not_the_persons  # noqa: F401 - the rule of a person's seal, also the Stop hook's

# Every command that changes what the gate decides or what the person reads. `approve`, `reject` and
# `unseal` are here before their modules exist, so they are covered the day they land.
PERSON_COMMANDS = frozenset({"seal", "write", "install", "uninstall", "label", "approve", "reject", "unseal", "relocate"})

# Variables Claude Code puts in the environment of the tools it runs (names; their values are noted).
SESSION_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_EXECPATH",
                # and Codex CLI in its commands' environment (seen on 0.169.0; docs/codex.md)
                "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CODEX_TOOL_CALL_ID",
                # Gemini CLI (0.61.0), Qwen Code (0.15.10) and Copilot CLI (1.0.102) in their shell tools' environment
                "GEMINI_CLI", "QWEN_CODE", "COPILOT_CLI")
CLAUDE_NAMES = frozenset({"claude", "claude.exe", "codex", "codex.exe", "gemini", "qwen", "copilot"})
AGENT_PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli", "@qwen-code/qwen-code", "@github/copilot")
MAX_CHAIN = 64  # parent processes followed at most

# What each command would change, for the refusal and the confirmation prompt.
CHANGES = {
    "seal": "replace the hidden acceptance tests the Stop hook runs",
    "write": "have new acceptance tests written and seal them in place of the hidden tests",
    "install": "rewrite the hooks, deny rules and sandbox Claude Code loads",
    "uninstall": "remove the Stop hook and the guard, so nothing gates the session",
    "label": "record a person's verdict on a stop in the ledger",
    "approve": "record a person's approval of an appeal or a hand-over",
    "reject": "record a person's rejection of an appeal or a hand-over",
    "unseal": "remove the hidden acceptance tests, so the gate lets every stop through",
    "relocate": "point a seal at another folder, which the gate then judges against it",
}


def _proc(pid: int) -> dict[str, Any] | None:
    """One process as /proc shows it: pid, ppid, sid, comm, argv0 and cwd (None where unreadable)."""
    base = f"/proc/{pid}"
    try:
        with open(f"{base}/stat", "rb") as fh:
            stat = fh.read().decode("utf-8", "replace")
        fields = stat.rsplit(")", 1)[1].split()
        with open(f"{base}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except (OSError, IndexError):
        return None
    try:
        cwd: str | None = os.readlink(f"{base}/cwd")
    except OSError:
        cwd = None
    return {"pid": pid, "ppid": int(fields[1]), "sid": int(fields[3]), "comm": stat[stat.find("(") + 1:stat.rfind(")")],
            "argv0": argv[0].decode("utf-8", "replace") if argv else "",
            "args": b" ".join(argv[:3]).decode("utf-8", "replace")[:300], "cwd": cwd}


def chain(pid: int | None = None) -> list[dict[str, Any]]:
    """This process and its ancestors, nearest first (empty where there is no /proc)."""
    out: list[dict[str, Any]] = []
    pid = os.getpid() if pid is None else pid
    while pid > 0 and len(out) < MAX_CHAIN:
        p = _proc(pid)
        if p is None:
            break
        out.append(p)
        pid = p["ppid"]
    return out


def is_claude(p: dict[str, Any]) -> bool:
    """An agent CLI's process: Claude Code's native binary (`claude`, `claude.exe`) or node running its npm
    package; Codex CLI's binary (`codex`) or node running `@openai/codex`."""
    return (p["comm"] in CLAUDE_NAMES or os.path.basename(p["argv0"]) in CLAUDE_NAMES
            or any(name in p["args"] for name in AGENT_PACKAGES))


def who(env: Mapping[str, str] | None = None, procs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Who is running this command, for the check and the ledger line: a terminal or not, the Claude
    Code session if any, and the evidence of one (variables, ancestor processes)."""
    env = os.environ if env is None else env
    procs = chain() if procs is None else procs
    seen = [k for k in SESSION_VARS if env.get(k)]
    if env.get("AI_AGENT", "").startswith("claude-code"):
        seen.append("AI_AGENT")
    claude = [p for p in procs[1:] if is_claude(p)]
    try:
        terminal = os.isatty(0)
    except OSError:
        terminal = False
    return {
        "terminal": terminal,
        "session": env.get("CLAUDE_CODE_SESSION_ID") or env.get("CODEX_SESSION_ID") or None,
        "claude_env": seen,
        "claude_process": [{"pid": p["pid"], "cwd": p["cwd"]} for p in claude],
        "uid": os.getuid() if hasattr(os, "getuid") else None,
        "at": round(time.time(), 3),  # the Stop hook compares it with the session's first stop
    }


def _within(child: str, parent: Path) -> bool:
    c, p = os.path.realpath(child), os.path.realpath(parent)
    return c == p or c.startswith(p.rstrip("/") + "/")


def gated_repo(by: Mapping[str, Any], root: Path, target: str | None = None) -> Path | None:
    """The sealed repository the Claude Code session around this command works in, or None: the
    Claude Code process's folder, this command's folder or the target lies in one."""
    if not inside_session(by):
        return None
    places = [p["cwd"] for p in by.get("claude_process") or [] if p.get("cwd")]
    places += [os.getcwd()] + ([target] if target else [])
    from donegate.seal.store import sealed_repos

    for repo in sealed_repos(root):
        if any(_within(place, repo) for place in places):
            return repo
    return None


def _made_inside(procs: list[dict[str, Any]]) -> bool:
    """Whether this process's terminal session was started below the Claude Code process (a pty the
    agent made with `script`, `expect`, Python's `pty`): then the agent can read and type on it."""
    claude_at = next((i for i, p in enumerate(procs) if i > 0 and is_claude(p)), None)
    if claude_at is None:
        return True  # session variables but no Claude Code above: detached; nothing vouches for the terminal
    sid = procs[0]["sid"]
    return any(p["pid"] == sid for p in procs[:claude_at])


def confirm(command: str, repo: Path, procs: list[dict[str, Any]], tty: str = "/dev/tty") -> bool:
    """Ask on the controlling terminal for a word only a person there can see; True when typed back."""
    if _made_inside(procs):
        return False
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False  # no terminal (Claude Code's tools run without one)
    import secrets  # here, not at the top: the Stop hook imports this module at every stop

    word = "".join(secrets.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(6))
    try:
        os.write(fd, (f"\ndonegate {command} was started from inside a Claude Code session working in {repo}; it would "
                      f"{CHANGES.get(command, 'change the gate')}.\nIf you are the person, not the agent, type {word} "
                      f"and Enter to go on (anything else stops): ").encode())
        answer = b""
        while not answer.endswith(b"\n") and len(answer) < 256:
            chunk = os.read(fd, 256)
            if not chunk:
                break
            answer += chunk
    except OSError:
        return False
    finally:
        os.close(fd)
    return answer.decode("utf-8", "replace").strip() == word


def check(command: str, root: Path, target: str | None = None, *, env: Mapping[str, str] | None = None,
          procs: list[dict[str, Any]] | None = None, tty: str = "/dev/tty") -> dict[str, Any]:
    """Refuse `command` when run from inside a Claude Code session working in a sealed repository,
    unless the person confirms on the terminal. Returns who ran it (for the ledger line)."""
    procs = chain() if procs is None else procs
    by = who(env, procs)
    if command not in PERSON_COMMANDS:
        return by
    repo = gated_repo(by, root, target)
    if repo is None:
        return by
    by["gated_repo"] = str(repo)
    if confirm(command, repo, procs, tty):
        by["confirmed"] = "terminal"
        return by
    signs = by["claude_env"] + [f"claude process {p['pid']}" for p in by["claude_process"]]
    try:  # the person reads the attempt in `donegate report`; the refusal stands whether or not it is written
        record(root, "refused", by, command=command, repo=str(repo))
    except OSError:
        pass
    raise DonegateError(
        f"donegate {command} refused: these commands are the person's, not the agent's. It was run from inside a "
        f"Claude Code session working in the sealed repository {repo} ({', '.join(signs)}), and it would "
        f"{CHANGES.get(command, 'change the gate')}",
        f"if you are the person, run `donegate {command}` yourself in a terminal outside the Claude Code session; "
        "if you are the agent, work from the Stop hook's feedback, or appeal (APPEAL: <why>) and a person decides")


def record(root: Path, event: str, by: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    """A ledger line for what a person's command did, naming who ran it (`by`, from `check`)."""
    from donegate.ledger import chain as ledger
    from donegate import paths
    from donegate.core.util import utc_now

    return ledger.append({"event": event, "time": utc_now(), **fields, "by": dict(by),
                          "inside_session": inside_session(by)}, paths.ledger_path(root))
