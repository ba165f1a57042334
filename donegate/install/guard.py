"""The PreToolUse guard: refuse tool calls that reach the files the agent must not see or change.

Protected for every tool: the kit checkout (the Stop hook, the store of hidden tests, the ledger,
`state/`) and the state root `DONEGATE_HOME` when it lies elsewhere; for a kit installed from a
wheel, the site-packages folder holding the package, the launchers' folder and the state root
(`donegate._layout` says which), and the kit's hook stubs in each client's `hooks` folder, which name the
state root and the kit (donegate/claude/stubs.py). Protected from writes: Claude Code's own settings files
(`.claude/settings*.json` of the project and of the home folder), where a changed hook or
`disableAllHooks` would open the gate within the same session.

A call is refused when a path it names resolves into a protected folder (relative to the hook's
`cwd`, through `..`, `~`, `$VARS`, symlinks, braces and globs, each expanded the way a shell would),
when a search tool or a recursive command (`find`, `grep -r`, `rg`, `ls -R`, `tar`, ...) starts at a
folder that contains a protected one, or when it would write a settings file.

This is a tripwire, not a wall: a shell offers endless ways to name a path (`$(echo hooks)`,
`python -c` with a computed string, ...). The walls are the sandbox's `denyRead` for Bash and the
deny rules for the file tools, both written by `donegate install`; the guard catches the ordinary
attempts early and records them in the ledger.

It runs before every tool call, so its checks import nothing beyond the standard library and
`donegate._layout`, and never run git, pytest or PyYAML.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import shlex
import sys
import time

from donegate import _layout
from donegate.install import guard_cli
from donegate.install.guard_cli import KIT_PROGRAM, KIT_TEXT, SHELLS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, dataclasses and pathlib (via donegate.paths) would add ~25 ms to every tool call
    from typing import Any, Iterable, Iterator, Mapping

# The same answers as donegate.paths.KIT_ROOT and paths.home() (both come from donegate._layout).
KIT_ROOT = _layout.KIT_ROOT


def state_root(env: "Mapping[str, str] | None" = None) -> str:
    return _layout.state_root(KIT_ROOT, os.environ if env is None else env)

# Tools the guard is registered for (the PreToolUse matcher install writes).
TOOLS = _layout.GUARD_TOOLS
MATCHER = "|".join(TOOLS)
WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "Monitor"})
SEARCH_TOOLS = frozenset({"Grep", "Glob"})
PATH_KEYS = ("file_path", "notebook_path", "path", "absolute_path")  # the last: Qwen Code's read_file

SETTINGS_GLOB = "settings*.json"
STUB_NAME = re.compile(r"(?:stop|pretooluse)-[0-9a-f]{12}")  # `<hook>-<tag>`: donegate.claude.stubs
# The managed install's stub folder: `<managed folder>/hooks` (donegate.claude.managed.managed_root, not imported here).
MANAGED_HOOKS = "/Library/Application Support/ClaudeCode/hooks" if sys.platform == "darwin" else "/etc/claude-code/hooks"
# Commands that walk every folder below the ones they are given.
WALKERS = frozenset({"find", "rg", "ag", "ack", "tree", "du", "fd", "fdfind", "tar", "zip", "7z", "rsync", "rgrep", "bsdtar", "cpio"})
# Commands that walk folders when given one of these flags (short flags may come in clusters: -rn).
RECURSIVE_FLAGS = {
    "grep": ("r", "R", "--recursive", "--dereference-recursive", "--directories=recurse"),
    "egrep": ("r", "R", "--recursive", "--dereference-recursive"),
    "fgrep": ("r", "R", "--recursive", "--dereference-recursive"),
    "ls": ("R", "--recursive"),
    "cp": ("r", "R", "a", "--recursive", "--archive"),
    "scp": ("r",),
    "rm": ("r", "R", "--recursive"),
    "chmod": ("R", "--recursive"),
    "chown": ("R", "--recursive"),
    "chgrp": ("R", "--recursive"),
    "git": (),  # `git grep --no-index` is the one git command that walks any folder
}
# Commands that only read: they may name a settings file (writes still need a redirection).
READERS = frozenset({"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "jq", "wc", "diff",
                     "cmp", "ls", "stat", "file", "md5sum", "sha256sum", "test", "[", "echo", "printf", "bat"})
# Commands that remove or move a folder, checked against the folders holding settings files.
REMOVERS = frozenset({"rm", "rmdir", "mv", "unlink", "shred"})
# Wrappers that run the command after them.
WRAPPERS = frozenset({"sudo", "env", "command", "builtin", "exec", "nice", "nohup", "time", "timeout", "xargs",
                      "stdbuf", "ionice", "setsid", "chroot", "doas", "strace", "ltrace", "watch", "flock"})
OPERATOR_CHARS = frozenset(";&|()<>\n")

GLOB_CHARS = re.compile(r"[*?[]")
# Path-looking pieces inside a word, e.g. the argument of `python -c "open('../kit/x.py')"`.
PATHLIKE = re.compile(r"[\w.~+$-]*/[^\s'\"`()<>;,|&=:{}]*|(?<![\w.])\.\.(?![\w.])|(?<![\w.~])~(?![\w.])")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
GLOB_LIMIT = 20000  # names a glob may produce before the guard stops expanding and refuses
BRACE_LIMIT = 64
TIME_BUDGET = 3.0  # seconds; a command too costly to check is refused
MAX_DEPTH = 4  # `bash -c "bash -c ..."` nesting followed


REASON_HEAD = ("donegate guard: this {tool} call was refused: {why}. The files donegate protects (the hidden "
               "acceptance tests, the gate and its records) stay out of reach of the session; the Stop hook "
               "reports each failing requirement with its assertion, so work from that feedback.")


class Refusal(Exception):
    def __init__(self, why: str, detail: str = "", head: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.detail = detail  # the path involved: for the ledger, never shown to the agent
        self.head = head  # the reason's text when not REASON_HEAD's


class Policy:
    """What is protected, as normalised absolute path strings (both as given and symlink-resolved)."""

    def __init__(self, roots: list[str], settings_dirs: list[str], hook_dirs: list[str] | None = None,
                 stub_dirs: list[str] | None = None) -> None:
        self.roots = roots  # no access at all
        self.stub_dirs = stub_dirs or []  # folders whose kit stubs (each names the state root and the kit): no access
        self.settings_dirs = settings_dirs  # folders whose settings*.json may not be written
        self.hook_dirs = hook_dirs or []  # folders whose *.json may not be written (Copilot CLI's hooks)
        self.stubbed: dict[str, bool] = {}  # stub folder -> whether it holds a stub (read when a walk reaches it)
        self.deadline = time.monotonic() + TIME_BUDGET
        self.globbed = 0

    @classmethod
    def current(cls, cwd: str, env: Mapping[str, str] | None = None) -> "Policy":
        env = os.environ if env is None else env
        roots = _variants(_layout.protected(KIT_ROOT, state_root(env)))
        projects = [cwd] + ([env["CLAUDE_PROJECT_DIR"]] if env.get("CLAUDE_PROJECT_DIR") else [])
        home = env.get("HOME") or os.path.expanduser("~")
        # Claude Code's settings, and the other clients' files that hold the gate's hooks (donegate.clients.homes):
        # Gemini CLI's and Qwen Code's settings*.json, Copilot CLI's hooks/*.json.
        agents = [os.path.join(home, ".claude"), os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini"),
                  env.get("QWEN_HOME") or os.path.join(home, ".qwen")]
        settings_dirs = _variants([os.path.join(p, d) for p in projects for d in (".claude", ".gemini", ".qwen")] + agents)
        copilot = os.path.join(env.get("COPILOT_HOME") or os.path.join(home, ".copilot"), "hooks")
        hook_dirs = _variants([copilot] + [os.path.join(p, ".github", "hooks") for p in projects])
        stub_dirs = _variants([copilot, os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "hooks"), MANAGED_HOOKS]
                              + [os.path.join(p, "hooks") for p in agents])
        return cls(roots=_minimal(roots), settings_dirs=settings_dirs, hook_dirs=hook_dirs, stub_dirs=stub_dirs)

    # -- questions about one resolved path --------------------------------------------------------
    def inside(self, path: str) -> str | None:
        for root in self.roots:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return root
        return path if STUB_NAME.fullmatch(os.path.basename(path)) and os.path.dirname(path) in self.stub_dirs else None

    def contains(self, path: str) -> str | None:
        """A protected root, or a folder holding a stub, below (or at) `path`: a recursive walk from `path` reaches it."""
        base = path.rstrip("/") + "/"
        for root in self.roots:
            if root == path or root.startswith(base):
                return root
        return next((d for d in self.stub_dirs if (d == path or d.startswith(base)) and self.holds_stub(d)), None)

    def holds_stub(self, folder: str) -> bool:
        """Whether `folder` holds one of the kit's stubs: read once, and only when a walk reaches it."""
        if folder not in self.stubbed:
            try:
                self.stubbed[folder] = any(STUB_NAME.fullmatch(name) for name in os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                self.stubbed[folder] = False
            except OSError:
                self.stubbed[folder] = True  # unreadable here: it may hold one
        return self.stubbed[folder]

    def is_settings(self, path: str) -> bool:
        head, name = os.path.split(path)
        return (head in self.settings_dirs and fnmatch.fnmatchcase(name, SETTINGS_GLOB)
                or head in self.hook_dirs and name.endswith(".json"))

    def holds_settings(self, path: str) -> bool:
        base = path.rstrip("/") + "/"
        return any(d == path or d.startswith(base) for d in [*self.settings_dirs, *self.hook_dirs])

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise Refusal("the command is too complex to check in time")


def _variants(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        for p in (os.path.normpath(item), os.path.realpath(item)):
            if p not in out:
                out.append(p)
    return out


def _minimal(roots: list[str]) -> list[str]:
    """Drop roots that lie inside another root."""
    return [r for r in roots if not any(o != r and (r + "/").startswith(o.rstrip("/") + "/") for o in roots)]


def resolve(word: str, cwd: str) -> list[str]:
    """`word` as absolute paths: `~` and `$VARS` expanded, relative to `cwd`, normalised and symlink-resolved."""
    text = os.path.expanduser(os.path.expandvars(word)) if ("$" in word or word.startswith("~")) else word
    joined = os.path.normpath(os.path.join(cwd, text))
    real = os.path.realpath(joined)
    return [joined] if real == joined else [joined, real]


def expand_braces(word: str) -> list[str]:
    """Bash brace expansion (`a{b,c}d`, nested), bounded to BRACE_LIMIT results."""
    out: list[str] = []

    def walk(w: str) -> None:
        if len(out) >= BRACE_LIMIT:
            return
        depth, start = 0, -1
        for i, ch in enumerate(w):
            if ch == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif ch == "}" and depth:
                depth -= 1
                if depth == 0:
                    body = w[start + 1:i]
                    parts, level, last = [], 0, 0
                    for j, c in enumerate(body):
                        if c == "{":
                            level += 1
                        elif c == "}":
                            level -= 1
                        elif c == "," and level == 0:
                            parts.append(body[last:j])
                            last = j + 1
                    if parts:
                        parts.append(body[last:])
                        for part in parts:
                            walk(w[:start] + part + w[i + 1:])
                        return
        out.append(w)

    walk(word)
    return out or [word]


def concrete(word: str, cwd: str, policy: Policy) -> Iterator[str]:
    """Every absolute path `word` can stand for: braces and globs expanded against the real filesystem."""
    for piece in expand_braces(word):
        yield from resolve(piece, cwd)
        if GLOB_CHARS.search(piece):
            pattern = os.path.expanduser(os.path.expandvars(piece))
            pattern = os.path.join(cwd, pattern)
            for match in glob.iglob(pattern):
                policy.globbed += 1
                if policy.globbed > GLOB_LIMIT:
                    raise Refusal("a glob in it matches too many files to check")
                yield from resolve(match, cwd)
            policy.check_time()


def candidates(word: str) -> list[str]:
    """The word itself and the path-looking pieces inside it (`--opt=x`, `VAR=x`, code strings)."""
    out = [word]
    if "=" in word:
        out.append(word.split("=", 1)[1])
    if len(word) > 1:
        out.extend(m.group(0) for m in PATHLIKE.finditer(word) if m.group(0) != word)
    return [c for c in dict.fromkeys(out) if c]


# -- the file and search tools ----------------------------------------------------------------------

def check_file_tool(tool: str, tool_input: dict[str, Any], cwd: str, policy: Policy) -> None:
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if not isinstance(value, str) or not value:
            continue
        for path in concrete(value, cwd, policy):
            root = policy.inside(path)
            if root:
                raise Refusal("the path it names lies inside a protected folder", path)
            if tool in WRITE_TOOLS and policy.is_settings(path):
                raise Refusal("it would change the agent's settings, which hold the gate's hooks", path)


def static_prefix(pattern: str) -> str:
    """The folder part of a glob before its first wildcard."""
    parts = pattern.split("/")
    keep = []
    for part in parts:
        if GLOB_CHARS.search(part) or "{" in part:
            break
        keep.append(part)
    return "/".join(keep) or ("/" if pattern.startswith("/") else ".")


def check_search_tool(tool: str, tool_input: dict[str, Any], cwd: str, policy: Policy) -> None:
    path = tool_input.get("path")
    base = path if isinstance(path, str) and path else cwd
    starts = list(resolve(base, cwd))
    pattern = tool_input.get("pattern") if tool == "Glob" else tool_input.get("glob")
    if isinstance(pattern, str) and pattern:
        for piece in expand_braces(pattern):
            for start in list(starts):
                starts.extend(resolve(static_prefix(piece), start))
    for start in starts:
        if policy.inside(start):
            raise Refusal("it searches inside a protected folder", start)
        if policy.contains(start):
            raise Refusal("it searches a folder that contains a protected folder", start)


# -- shell commands ---------------------------------------------------------------------------------

def tokenize(command: str) -> list[str] | None:
    """Shell words and operators (newlines kept as separators); None when the quoting does not parse."""
    lex = shlex.shlex(command, posix=True, punctuation_chars="".join(sorted(OPERATOR_CHARS)))
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        return list(lex)
    except ValueError:
        return None


def segments(tokens: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(words, output-redirection targets) of each simple command. An input redirection's file
    (`< file`) counts as a word: it is read like any argument."""
    words: list[str] = []
    targets: list[str] = []
    pending: list[str] | None = None  # where the next word goes after a redirection operator
    for tok in tokens:
        if tok and set(tok) <= OPERATOR_CHARS:
            if ">" in tok:
                pending = targets
            elif "<" in tok:
                pending = words
            else:
                if words or targets:
                    yield words, targets
                words, targets, pending = [], [], None
        elif pending is not None:
            pending.append(tok)
            pending = None
        else:
            words.append(tok)
    if words or targets:
        yield words, targets


def command_name(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs (basename) and its arguments, past assignments and wrappers."""
    i = 0
    while i < len(words):
        w = words[i]
        if ASSIGNMENT.match(w):
            i += 1
            continue
        name = os.path.basename(w)
        if name in WRAPPERS:
            i += 1
            # skip the wrapper's own options and their values (`timeout 5`, `nice -n 3`, `env -u X`)
            while i < len(words) and (words[i].startswith("-") or ASSIGNMENT.match(words[i]) or words[i].replace(".", "").isdigit()
                                      or (name in ("timeout",) and re.fullmatch(r"\d+[smhd]?", words[i]))):
                if words[i] in ("-n", "-u", "-s", "-k", "-C", "-I", "-P", "-d", "-E") and i + 1 < len(words):
                    i += 1
                i += 1
            continue
        return name, words[i + 1:]
    return "", []


def recursive(name: str, args: list[str]) -> bool:
    if name in WALKERS:
        return True
    flags = RECURSIVE_FLAGS.get(name)
    if flags is None:
        return False
    if name == "git":
        return "grep" in args and "--no-index" in args
    for a in args:
        if a == "--":
            break
        if a.startswith("--"):
            if a in flags or a.split("=", 1)[0] in flags:
                return True
        elif a.startswith("-") and len(a) > 1 and any(ch in flags for ch in a[1:]):
            return True
    if name in ("grep", "egrep", "fgrep") and any(a in ("-d", "--directories") for a in args):
        i = [k for k, a in enumerate(args) if a in ("-d", "--directories")][0]
        return i + 1 < len(args) and args[i + 1] == "recurse"
    return False


def shell_body(name: str, args: list[str]) -> str | None:
    """The command string of `bash -c STRING`, `eval STRING...`."""
    if name == "eval":
        return " ".join(args)
    if name in SHELLS:
        for i, a in enumerate(args):
            if a.startswith("-") and not a.startswith("--") and "c" in a[1:] and i + 1 < len(args):
                return args[i + 1]
    return None


def _kit_cli(detail: str) -> Refusal:
    return Refusal(guard_cli.KIT_CLI_WHY, detail, guard_cli.KIT_CLI_REASON)


def check_kit_cli(name: str, args: list[str], words: list[str], cwd: str) -> None:
    """Refuse a simple command that starts the kit's CLI (donegate.install.guard_cli says which)."""
    detail = guard_cli.runs_kit(name, args, words, cwd)
    if detail is not None:
        raise _kit_cli(detail)



def check_command(command: str, cwd: str, policy: Policy, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise Refusal("it nests shells too deeply to check")
    if KIT_PROGRAM in command and KIT_TEXT.search(command):  # also heredocs, pipes into a shell, $(...)
        raise _kit_cli("the command's text")
    for root in policy.roots:
        if re.search(re.escape(root) + r"(?![^/\s'\"`;|&)<>:,])", command):
            raise Refusal("it names a protected folder", root)
    tokens = tokenize(command)
    if tokens is None:  # unbalanced quotes: check every path-looking piece of the raw text
        for word in command.split():
            _check_word(word, cwd, policy, walk=False, writes=False, removes=False)
        return
    for words, targets in segments(tokens):
        policy.check_time()
        name, args = command_name(words)
        if name in ("cd", "pushd") and args:
            target = [a for a in args if not a.startswith("-")]
            if target:
                cwd = resolve(target[0], cwd)[0]
                _check_word(target[0], cwd, policy, walk=False, writes=False, removes=False)
            continue
        check_kit_cli(name, args, words, cwd)
        body = shell_body(name, args)
        if body is not None:
            check_command(body, cwd, policy, depth + 1)
        walk = recursive(name, args)
        writes = name not in READERS
        removes = name in REMOVERS
        for word in words:
            _check_word(word, cwd, policy, walk=walk, writes=writes, removes=removes)
        for word in targets:
            _check_word(word, cwd, policy, walk=False, writes=True, removes=False)


def _check_word(word: str, cwd: str, policy: Policy, *, walk: bool, writes: bool, removes: bool) -> None:
    for cand in candidates(word):
        for path in concrete(cand, cwd, policy):
            if policy.inside(path):
                raise Refusal("a path in the command resolves inside a protected folder", path)
            if walk and policy.contains(path):
                raise Refusal("it walks a folder that contains a protected folder", path)
            if writes and policy.is_settings(path):
                raise Refusal("it would change the agent's settings, which hold the gate's hooks", path)
            if removes and policy.holds_settings(path):
                raise Refusal("it would remove or move the folder holding the agent's settings", path)


# -- the hook ---------------------------------------------------------------------------------------

def decide(payload: dict[str, Any], env: dict[str, str] | None = None) -> Refusal | None:
    """None when the call may go ahead, else the Refusal."""
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    given = payload.get("cwd")
    cwd = given if isinstance(given, str) and given else os.getcwd()
    cwd = os.path.normpath(os.path.expanduser(cwd))
    policy = Policy.current(cwd, env)
    try:
        if tool in SHELL_TOOLS and tool_input.get("dangerouslyDisableSandbox"):
            raise Refusal("it asks to run outside the sandbox")
        if tool in SHELL_TOOLS or isinstance(tool_input.get("command"), str):
            command = tool_input.get("command")
            if isinstance(command, str):
                check_command(command, cwd, policy)
        if tool in SEARCH_TOOLS:
            check_search_tool(tool, tool_input, cwd, policy)
        else:
            check_file_tool(tool, tool_input, cwd, policy)
    except Refusal as refusal:
        return refusal
    return None


def render_denial(tool: str, why: str, head: str = "", client: str = "claude") -> tuple[int, str, str]:
    """The PreToolUse denial in the form the calling client reads its reason from, and exit 2 with the reason on
    stderr, which denies the call even if the JSON were not understood (verified: Claude Code, Codex 0.169.0,
    Gemini CLI 0.61.0, Copilot CLI 1.0.102, Qwen Code 0.15.10). Claude Code's `hookSpecificOutput` is not
    Gemini's: Gemini runs the tool on it (exit 2 notwithstanding), and reads `{"decision": "deny"}`; Copilot
    reads a top-level `permissionDecision`."""
    reason = (head or REASON_HEAD).format(tool=tool or "tool", why=why)
    body: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                   "permissionDecisionReason": reason}}
    if client == "gemini":
        body = {"decision": "deny", "reason": reason}
    elif client == "copilot":
        body = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return 2, json.dumps(body), reason + "\n"


def _record(payload: dict[str, Any], refusal: Refusal) -> None:
    try:
        from pathlib import Path

        from donegate.clients import payloads
        from donegate.ledger import chain as ledger
        from donegate.core.util import utc_now

        tool_input = payload.get("tool_input")
        ledger.append({
            "event": "guard",
            "time": utc_now(),
            "session": str(payload.get("session_id") or "unknown"),
            "repo": payload.get("cwd"),
            "tool": payload.get("tool_name"),
            "verdict": "refused",
            "why": refusal.why,
            "path": refusal.detail,
            "input": json.dumps(tool_input)[:2000] if tool_input is not None else None,
            # the agent's CLI, as the Stop hook's lines say it
            "client": payloads.client_of(payload),
        }, Path(state_root()) / "ledger.jsonl")
    except Exception:
        pass  # the refusal stands whether or not it could be recorded


def run_hook(stdin_text: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one PreToolUse event; refuses on any problem of its own."""
    try:
        payload = json.loads(stdin_text)
        if not isinstance(payload, dict):
            raise ValueError("not an object")
    except ValueError:
        return render_denial("tool", "the guard could not read the tool call it was given")
    client = "claude"
    try:
        from donegate.clients import payloads

        client = payloads.client_of(payload)
        payload = payloads.tool_call(payload)
        refusal = decide(payload, env)
    except Exception as exc:  # a guard bug must not open the way: refuse, say so
        return render_denial(str(payload.get("tool_name") or "tool"),
                             f"the guard failed while checking it ({type(exc).__name__}); a person must repair the kit",
                             client=client)
    if refusal is None:
        return 0, "", ""
    _record(payload, refusal)
    return render_denial(str(payload.get("tool_name") or "tool"), refusal.why, refusal.head, client)
