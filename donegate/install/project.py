"""`donegate install [--scope project|local|user] [REPO]` and `uninstall`: the kit's entries in the
settings file of one scope (`Files`: `REPO/.claude/settings.json`, `REPO/.claude/settings.local.json`,
or `~/.claude/settings.json`, whose hook takes `--managed` instead of `--repo`: every sealed repository).

Install merges into whatever the file holds (the user's keys, hooks and rules stay, in their order)
and writes:

- the Stop hook in exec form (no shell, so neither `PATH`, `CLAUDE_CODE_SHELL_PREFIX` nor quoting
  can bend it) whose `"command"` is a stub at a neutral path, `~/.claude/hooks/stop-<hash>`, and
  `"args": []` (Claude Code 2.1.332 shows the model a blocking hook's command line; `donegate.claude.stubs`). The
  stub runs the kit's interpreter by absolute path with `-I` (no `PYTHON*`
  variable, no user site; and `-S` for a checkout's launcher, which adds the site-packages itself once the
  first run is started), `stop_gate.py`, `--home` the state root the deny rules cover, `--repo` the
  sealed project (a stop is judged against its seal wherever the agent `cd`s; on the session's own
  worktree of it, `donegate.tree.repo`), `--git` the git found now (a
  fake `git` put first on `PATH` later runs nothing) and `--claude` the reviewers' Claude Code (the
  launcher ignores `DONEGATE_CLAUDE` from the session's environment); and a `timeout` above the kit's worst case
  (tests, plus reviewers when on, plus `hook_margin`): a hook that times out opens the gate;
- the PreToolUse guard (`guard.py`, through its stub `~/.claude/hooks/pretooluse-<hash>`) for the file,
  search and shell tools;
- `permissions.deny` rules with absolute `//` paths for Read, Edit, Write, Grep, Glob and NotebookEdit
  over the kit (the checkout; for an installed wheel, the site-packages folder holding the package, and
  the launchers' folder `share/donegate/hooks`) and the state root, and Edit/Write rules over
  `.claude/settings*.json`;
- with the sandbox (`--sandbox auto|on|off`): `sandbox.enabled`, `failIfUnavailable`,
  `allowUnsandboxedCommands: false`, `autoAllowBashIfSandboxed`, and `filesystem.denyRead` /
  `denyWrite` over the same folders. Never `Edit(./.claude/**)`: with the sandbox on it makes every
  Bash command fail, and the sandbox already keeps the settings files read-only.

What install added is recorded in `.claude/donegate-install.json` (hooks, rules, the earlier values
of the sandbox keys it set, the containers it created) and the earlier file is kept in
`.claude/settings.json.donegate-backup`. Uninstall removes exactly those entries; when the file is
still what install wrote, it puts the backup back byte for byte. Installing again first undoes the
earlier install, so installing twice gives the same file.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from donegate import config
from donegate.tree import git, repo as repos
from donegate.claude import stubs
from donegate.claude.settings import (SANDBOX_FLAGS, SANDBOX_LISTS, SETTINGS, check_scripts, deny_rules,
                                       guard_script, hook_words, kit_entries, stop_script, want_sandbox)
from donegate.claude.shapes import check_shapes
from donegate.errors import DonegateError
from donegate.core.finding import ERROR
from donegate.core.util import atomic_write

BACKUP_SUFFIX = ".donegate-backup"
RECORD = Path(".claude") / "donegate-install.json"
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
LOCAL_RECORD = Path(".claude") / "donegate-install.local.json"
SCOPES = ("project", "local", "user")
RECORD_VERSION = 1


# -- what install writes ----------------------------------------------------------------------------


def _container(parent: dict, key: str, kind: type, where: str, created: list[str]) -> Any:
    if key not in parent:
        parent[key] = kind()
        created.append(where)
    value = parent[key]
    if not isinstance(value, kind):
        raise DonegateError(
            f"{where} in the settings file is {type(value).__name__} {json.dumps(value)[:80]}, "
            f"not {'an object' if kind is dict else 'a list'}; Claude Code ignores such a file",
            f"fix {where} by hand (see `donegate doctor`), then install again",
        )
    return value


def apply(existing: dict, *, sandbox: bool, cfg: dict[str, Any], kit: Path | None = None,
          home: Path | None = None, python: str | None = None, repo: Path | None = None,
          entries: dict[str, Any] | None = None) -> tuple[dict, dict]:
    """(new settings, record of what was added). `existing` is left untouched."""
    if not isinstance(existing, dict):
        raise DonegateError("the settings file does not hold a JSON object", "make it an object: {}")
    data = copy.deepcopy(existing)
    entries = entries or kit_entries(cfg, kit=kit, home=home, python=python, repo=repo)
    created: list[str] = []
    record: dict[str, Any] = {"version": RECORD_VERSION, "hooks": {}, "deny": [], "sandbox_keys": {},
                              "sandbox_lists": {}, "created": created}

    hooks = _container(data, "hooks", dict, "hooks", created)
    for event in ("Stop", "PreToolUse"):
        groups = _container(hooks, event, list, f"hooks.{event}", created)
        groups.append(copy.deepcopy(entries[event]))
        record["hooks"][event] = [[h["command"]] if not h.get("args") else hook_words(h) for h in entries[event]["hooks"]]
    record["stubs"] = sorted([*(entries.get("stubs") or {}), *(entries.get("links") or {})])

    perms = _container(data, "permissions", dict, "permissions", created)
    deny = _container(perms, "deny", list, "permissions.deny", created)
    for rule in entries["deny"]:
        if rule not in deny:
            deny.append(rule)
            record["deny"].append(rule)

    if sandbox:
        box = _container(data, "sandbox", dict, "sandbox", created)
        for key, value in SANDBOX_FLAGS.items():
            record["sandbox_keys"][key] = {"had": key in box, "value": box.get(key)}
            box[key] = value
        fs = _container(box, "filesystem", dict, "sandbox.filesystem", created)
        for name in SANDBOX_LISTS:
            items = _container(fs, name, list, f"sandbox.filesystem.{name}", created)
            added = [p for p in entries["sandbox_paths"] if p not in items]
            items.extend(added)
            record["sandbox_lists"][name] = added
    return data, record


def build_settings(existing: dict, *, sandbox: bool, cfg: dict[str, Any] | None = None, **kw: Any) -> dict:
    """Exactly the settings `install` writes over `existing` (a pure function, for tests and harnesses)."""
    return apply(existing, sandbox=sandbox, cfg=cfg or config.load(), **kw)[0]


# -- undoing it -------------------------------------------------------------------------------------

def _is_kit_command(hook: Any, recorded: list) -> bool:
    words = hook_words(hook)
    if not words:
        return False
    if isinstance(hook, dict) and [hook.get("command")] in recorded:  # a stub, recorded by its path
        return True
    if words in recorded or (len(words) == 1 and words[0] in recorded):  # exec form, or an older record's string
        return True
    return any(str(s) in w for s in (stop_script(), guard_script()) for w in words)


def remove(data: dict, record: dict) -> dict:
    """`data` without what `record` says install added (and without any hook of this kit)."""
    data = copy.deepcopy(data)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, commands in (record.get("hooks") or {}).items():
            groups = hooks.get(event)
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(inner, list):
                    rest = [h for h in inner if not _is_kit_command(h, commands)]
                    if not rest and inner:
                        continue  # the group held only the kit's hooks
                    group["hooks"] = rest
                kept.append(group)
            hooks[event] = kept
    perms = data.get("permissions")
    if isinstance(perms, dict) and isinstance(perms.get("deny"), list):
        added = set(record.get("deny") or [])
        perms["deny"] = [r for r in perms["deny"] if r not in added]
    box = data.get("sandbox")
    if isinstance(box, dict):
        for key, before in (record.get("sandbox_keys") or {}).items():
            if before.get("had"):
                box[key] = before.get("value")
            else:
                box.pop(key, None)
        fs = box.get("filesystem")
        if isinstance(fs, dict):
            for name, added in (record.get("sandbox_lists") or {}).items():
                if isinstance(fs.get(name), list):
                    fs[name] = [p for p in fs[name] if p not in added]
    # Containers install created go again when nothing else was put in them (deepest first).
    for where in sorted(record.get("created") or [], key=lambda w: -w.count(".")):
        *parents, last = where.split(".")
        node: Any = data
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node and node[last] in ({}, []):
            del node[last]
    return data


# -- files ------------------------------------------------------------------------------------------

def _indent(text: str) -> int | str:
    m = re.search(r"\n([ \t]+)\S", text)
    if not m:
        return 2
    ws = m.group(1)
    return "\t" if ws.startswith("\t") else len(ws)


def dumps(data: dict, like: str = "") -> str:
    return json.dumps(data, indent=_indent(like), ensure_ascii=False) + "\n"


def parse(text: str, where: Path) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DonegateError(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); Claude Code ignores it",
            "fix the JSON by hand (`donegate doctor REPO` says what is wrong), then install again",
        ) from None
    if not isinstance(data, dict):
        raise DonegateError(f"{where} does not hold a JSON object", "make it an object: {}")
    return data




def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Files:
    """Where one install scope writes: the settings file, and the record of what install added.

    - `project`: `REPO/.claude/settings.json` (the default; Claude Code loads it in a session started
      in REPO, and in a worktree only when the file is committed);
    - `local`: `REPO/.claude/settings.local.json`, git-excluded: this machine's paths stay out of
      the committed project settings, which remain safe to share;
    - `user`: `~/.claude/settings.json`, loaded in every folder: one hook for every sealed
      repository, its worktrees and subfolder projects, quiet where nothing is sealed.
    """

    def __init__(self, scope: str, repo: Path | None) -> None:
        self.scope, self.repo = scope, repo
        if scope == "user":
            self.settings = Path.home() / SETTINGS
            self.record = Path.home() / ".claude" / "donegate-install.json"
        elif repo is None:
            raise DonegateError(f"install --scope {scope}: give the repository", f"donegate install --scope {scope} REPO")
        elif scope == "local":
            self.settings = repo / LOCAL_SETTINGS
            self.record = repo / LOCAL_RECORD
        else:
            self.settings, self.record = repo / SETTINGS, repo / RECORD


def _read_record(files: Files) -> dict | None:
    try:
        record = json.loads(files.record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        raise DonegateError(f"{files.record} is corrupt", f"restore it, or remove it and fix {files.settings} by hand") from None
    return record if isinstance(record, dict) else None


def _original(files: Files) -> tuple[bytes | None, dict | None]:
    """The settings file as it was before the kit's last install (None: there was none), and the record."""
    path = files.settings
    current = path.read_bytes() if path.exists() else None
    record = _read_record(files)
    if record is None:
        return current, None
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if current is not None and _sha(current) == record.get("installed_sha256"):
        # Untouched since the install: the original is the backup (or no file at all).
        return (backup.read_bytes() if record.get("had_file") and backup.exists() else None), record
    if current is None:
        return None, record
    text = current.decode("utf-8")
    return dumps(remove(parse(text, path), record), text).encode(), record


def install(repo: Path | str | None, sandbox: str = "auto", scope: str = "project") -> Path:
    """Write the kit's hooks, deny rules and sandbox into the scope's settings file (`Files`); returns its path."""
    check_scripts()
    project = repos.target(repo) if repo is not None and scope != "user" else None
    files = Files(scope, project)
    if project is not None:
        from donegate.tree import git
        from donegate.hidden import python as pyenv

        inside = pyenv.hook_problem(sys.executable, git.toplevel(project))  # anywhere in the working tree
        if inside is not None:
            raise DonegateError(*inside)
    cfg = config.load()
    use_sandbox = want_sandbox(sandbox)
    path = files.settings
    created_dir = not path.parent.exists()
    original, old_record = _original(files)
    had_file = original is not None
    text = original.decode("utf-8") if original is not None else ""
    existing = parse(text, path) if had_file else {}
    problems = [f for f in check_shapes(existing, str(path)) if f.level == ERROR]
    if problems:
        raise DonegateError(
            f"{path} has values Claude Code rejects (it then ignores the file, or its hooks, silently): "
            + "; ".join(p.what for p in problems),
            "fix them by hand (`donegate doctor REPO` lists each), then install again",
        )
    entries = kit_entries(cfg, repo=project, managed=project is None)  # user scope: every repository, quiet where unsealed
    data, record = apply(existing, sandbox=use_sandbox, cfg=cfg, entries=entries)
    out = dumps(data, text).encode()
    record.update(had_file=had_file, installed_sha256=_sha(out), sandbox=use_sandbox,
                  created_dir=old_record.get("created_dir", False) if old_record else created_dir)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if original is not None:
        # The file as it was without the kit: the old file on a first install, the same bytes again on
        # a repeated one (or the user's later edits, with the kit's entries taken out).
        atomic_write(backup, original, mode)
    else:
        backup.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(files.record, (json.dumps(record, indent=2) + "\n").encode())
    stubs.remove([p for p in (old_record or {}).get("stubs") or [] if p not in record["stubs"]])
    stubs.write(entries["stubs"], entries["links"])  # before the settings that name them: a hook whose file is missing opens the gate
    atomic_write(path, out, mode)
    if project is not None:
        if scope == "local":
            _exclude(project)
        _refresh_seal(project, cfg)
    return path


def _exclude(project: Path) -> None:
    """Keep the local scope's files out of commits: `.git/info/exclude` (shared by every worktree)."""
    top = git.toplevel(project)
    prefix = project.relative_to(top).as_posix() + "/" if project != top else ""
    exclude = git.common_dir(top) / "info" / "exclude"
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    want = [f"/{prefix}{name}" for name in (LOCAL_SETTINGS.as_posix(), LOCAL_SETTINGS.as_posix() + BACKUP_SUFFIX,
                                             LOCAL_RECORD.as_posix())]
    missing = [w for w in want if w not in text.splitlines()]
    if missing:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(exclude, (text + ("" if not text or text.endswith("\n") else "\n") + "\n".join(missing) + "\n").encode())


def _refresh_seal(repo: Path, cfg: dict[str, Any]) -> None:
    # A person changing the settings after sealing is not the agent touching a protected file:
    # take the new files into the sealed snapshot, so install and seal work in either order.
    from donegate.seal import sealing

    sealing.refresh_protected(repo, cfg["protected"])


def uninstall(repo: Path | str | None, scope: str = "project") -> tuple[Path, str]:
    """Remove what install added; returns (settings path, what was done)."""
    project = None
    if scope != "user":
        if repo is None:
            raise DonegateError(f"uninstall --scope {scope}: give the repository", f"donegate uninstall --scope {scope} REPO")
        project = Path(repo).expanduser()
        project = repos.project(project) if project.is_dir() else project
    files = Files(scope, project)
    path = files.settings
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    record = _read_record(files)
    if record is None:
        if not path.exists():
            return path, "nothing to do: donegate is not installed here"
        text = path.read_text(encoding="utf-8")
        data = parse(text, path)
        # No record (deleted, or an install by hand): remove this kit's hooks and rules by recognition.
        guess = {"hooks": {"Stop": [], "PreToolUse": []}, "deny": kit_entries(config.load(), repo=project, managed=project is None)["deny"] + deny_rules()}
        cleaned = remove(data, guess)
        if cleaned == data:
            return path, "nothing to do: no donegate entries found"
        atomic_write(path, dumps(cleaned, text).encode(), path.stat().st_mode & 0o7777)
        return path, "removed the kit's hooks and deny rules (no install record was found)"
    current = path.read_bytes() if path.exists() else None
    if current is not None and _sha(current) == record.get("installed_sha256"):
        if record.get("had_file"):
            if not backup.exists():
                raise DonegateError(f"{backup} is missing", f"restore it, or remove {files.record} and fix {path} by hand")
            atomic_write(path, backup.read_bytes(), path.stat().st_mode & 0o7777)
            done = "restored the settings file from before the install"
        else:
            path.unlink()
            done = "removed the settings file install had created"
        backup.unlink(missing_ok=True)
    elif current is not None:
        text = current.decode("utf-8")
        cleaned = remove(parse(text, path), record)
        if cleaned == {} and not record.get("had_file"):
            path.unlink()
            done = "removed the settings file install had created (only the kit's entries were left in it)"
        else:
            atomic_write(path, dumps(cleaned, text).encode(), path.stat().st_mode & 0o7777)
            done = "removed the kit's entries (the file had changed since the install, so it was not restored whole"
            done += f"; the file from before the install is kept in {backup.name})" if backup.exists() else ")"
    else:
        done = "the settings file was already gone"
    stubs.remove(record.get("stubs") or [])
    files.record.unlink(missing_ok=True)
    if record.get("created_dir"):
        try:
            path.parent.rmdir()  # only when empty
        except OSError:
            pass
    if project is not None:
        _refresh_seal(project, config.load())
    return path, done
