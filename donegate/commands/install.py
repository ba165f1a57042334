"""`donegate install` and `donegate uninstall`: per repository (`donegate.install.project`) or machine-wide
(`--managed`, `donegate.install.machine`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from donegate import config, paths
from donegate.install import project as install, machine as managed, routes
from donegate.claude import stubs
from donegate.person import ownership as person
from donegate.claude.settings import SANDBOX_FIX, hook_timeout, sandbox_available
from donegate.errors import DonegateError

OTHERS = ("gemini", "copilot", "qwen")  # the clients of `donegate.clients`


def _record(event: str, args: argparse.Namespace, settings: str) -> None:
    """The ledger line of an install or uninstall, naming who ran it."""
    person.record(paths.home(), event, getattr(args, "by", None) or person.who(), settings=settings,
                  managed=bool(args.managed))


def cmd_install(args: argparse.Namespace) -> int:
    if getattr(args, "client", "claude") == "codex":
        return _install_codex(args)
    if getattr(args, "client", "claude") in OTHERS:
        return _install_other(args)
    if args.managed:
        if args.repo:
            raise DonegateError("install --managed guards every repository on the machine: give no REPO",
                                "donegate install --managed (then seal each repository as usual)")
        path = managed.install_managed(sandbox=args.sandbox)
        _record("install", args, str(path))
        data = json.loads(path.read_text(encoding="utf-8"))
        print(f"donegate installed as managed policy in {path}")
        print(f"  Stop hook and guard for every Claude Code session on this machine, {len(data['permissions']['deny'])} deny "
              f"rules, env pinned ({', '.join(data['env'])}), sandbox {'on' if 'sandbox' in data else 'off'}")
        print("  a session outside every sealed repository passes quietly; seal a repository to gate it")
        return 0
    if args.scope == "user":
        if args.repo:
            raise DonegateError("install --scope user guards every sealed repository of this account: give no REPO",
                                "donegate install --scope user (then seal each repository, worktree-wide, as usual)")
        _sweep()
        path = install.install(None, sandbox=args.sandbox, scope="user")
        print(f"donegate installed in your user settings {path}")
        print("  Stop hook and guard for every Claude Code session of this account: every sealed repository, its "
              "worktrees and subfolder projects is gated; elsewhere a stop passes quietly")
        from donegate.seal.store import sealed_repos

        for repo in sealed_repos(paths.home()):
            _covered(repo, path)
        return 0
    if not args.repo:
        raise DonegateError("install: give the repository to guard (or --scope user, or --managed for the whole machine)",
                            "donegate install REPO")
    _sweep()
    path = install.install(args.repo, sandbox=args.sandbox, scope=args.scope)
    _record("install", args, str(path))
    data = json.loads(path.read_text(encoding="utf-8"))
    box = data.get("sandbox", {}) if isinstance(data.get("sandbox"), dict) else {}
    project = path.parent.parent
    print(f"donegate installed in {path}")
    print(f"  Stop hook (timeout {hook_timeout(config.load())} s), PreToolUse guard, "
          f"{_rules(project)} deny rules, sandbox {'on' if box.get('enabled') else 'off'}")
    if not box.get("enabled"):
        ok, why = sandbox_available()
        print("  without the sandbox, Bash can still read the hidden tests with a program of its own"
              + (f" ({why}; {SANDBOX_FIX})" if not ok else " (pass --sandbox on)"))
    if args.scope == "local":
        print("  this machine's paths are in settings.local.json (git-excluded); .claude/settings.json stays safe to commit")
    _covered(project, path)
    from donegate.seal import store

    if store.is_sealed(project):
        print(f"  sealed already; check everything: donegate doctor {project}")
    else:
        print(f"  next: seal the acceptance tests (donegate seal {project} TEST_FILE..., or donegate write {project} "
              f"--request ...), then check everything: donegate doctor {project}")
    return 0


def _rules(project) -> int:
    """The deny rules install wrote (the protected folders' links and the stubs' folder, for each file
    tool, and the settings files' own): the same entries `install` merged in."""
    from donegate.claude.settings import kit_entries

    return len(kit_entries(config.load(), repo=project)["deny"])


def _covered(folder, mine) -> None:
    """Say which other install already puts a donegate Stop hook in front of `folder`'s sessions."""
    from donegate.install import diagnose

    for other in routes.others(diagnose.settings_files(folder), mine):
        print(f"  warning: {folder} is already covered by {other.describe()}: the hooks of a stop share one verdict "
              f"(one judges, the others report it), but keep one install (donegate uninstall the other)")


def _sweep() -> None:
    gone = stubs.sweep()
    if gone:
        print(f"donegate: removed {len(gone)} hook stub(s) of installs whose repository or kit is gone (in {stubs.folder()})")


def cmd_uninstall(args: argparse.Namespace) -> int:
    if getattr(args, "client", "claude") in OTHERS:
        from donegate.clients import wiring

        path, done = wiring.uninstall(args.client)
        _record("uninstall", args, str(path))
        print(f"donegate uninstall --client {args.client} {path}: {done}")
        return 0
    if getattr(args, "client", "claude") == "codex":
        from donegate.codex import installing as codex

        path, done = codex.uninstall()
        _record("uninstall", args, str(path))
        print(f"donegate uninstall --client codex {path}: {done}")
        return 0
    if args.managed:
        path, done = managed.uninstall_managed()
        _record("uninstall", args, str(path))
        print(f"donegate uninstall --managed {path}: {done}")
        return 0
    if not args.repo and args.scope != "user":
        raise DonegateError("uninstall: give the repository (or --scope user, or --managed)", "donegate uninstall REPO")
    path, done = install.uninstall(args.repo, scope=args.scope)
    _record("uninstall", args, str(path))
    print(f"donegate uninstall {path}: {done}")
    if args.repo:  # no stop of it runs now: what the runs kept of it goes too (made again if it is installed again)
        from donegate.commands.seal import forget_copies
        from donegate.tree import repo as repos

        where = Path(args.repo).expanduser()
        tree = repos.project(where) if where.is_dir() else where.absolute()
        try:  # a worktree of a sealed project: its stops kept their copies under the project's key
            found = repos.resolve(tree, paths.home()) if where.is_dir() else None
        except DonegateError:
            found = None
        mine = found is not None and found.tree.resolve() == tree.resolve()
        print(forget_copies(found.sealed, (tree,)) if found is not None and mine else forget_copies(tree))
    elif args.scope == "user":  # the install that gated every repository of this account: their copies go
        from donegate.commands.seal import forget_copies

        print(forget_copies(None))
    return 0


def _install_codex(args: argparse.Namespace) -> int:
    """`install --client codex [REPO]`: the hooks go into Codex's user config (`donegate.codex.installing` says why)."""
    from donegate.codex import installing as codex
    from donegate.tree import git

    if args.managed or args.scope != "project":
        raise DonegateError("install --client codex writes Codex's user config; --managed and --scope are Claude Code's",
                            "donegate install --client codex [REPO]")
    if args.repo:
        git.toplevel(Path(args.repo).expanduser().resolve())  # refuses a folder outside every git repository
    plan = codex.install(sandbox=args.sandbox)
    _record("install", args, str(plan["config"]))
    print(f"donegate installed for Codex in {plan['config']} (the user level: every Codex session of this account)")
    print(f"  Stop hook (timeout {plan['timeout']} s) and PreToolUse guard (Bash), both trusted (no dangerous flag "
          "needed); a stop outside every sealed repository passes quietly")
    if plan["profile"]:
        print("  permission profile on: the agent's commands cannot read the kit, the state root or the hooks' config")
    else:
        print(f"  no permission profile ({plan['why_no_profile']}): only the guard keeps the agent from the kit")
    print("  next: seal the acceptance tests (donegate seal), then check: donegate doctor --client codex"
          + (f" {args.repo}" if args.repo else " ."))
    return 0


def _install_other(args: argparse.Namespace) -> int:
    """`install --client gemini|copilot|qwen [REPO]`: the Stop hook at the client's user level, REPO trusted
    (`donegate.clients.wiring` says why)."""
    from donegate.clients import wiring
    from donegate.tree import git

    if args.managed or args.scope != "project":
        raise DonegateError(f"install --client {args.client} writes the client's user configuration; --managed and "
                            "--scope are Claude Code's", f"donegate install --client {args.client} [REPO]")
    repo = None
    if args.repo:
        repo = git.toplevel(Path(args.repo).expanduser().resolve())  # refuses a folder outside every git repository
    plan = wiring.install(args.client, repo=repo)
    name = wiring.NAMES[args.client]
    _record("install", args, str(plan["file"]))
    print(f"donegate installed for {name} in {plan['file']} (the user level: every {name} session of this account)")
    print(f"  {wiring.EVENTS[args.client]} hook (timeout {plan['timeout']} s) and {wiring.GUARDS[args.client]} guard; a stop "
          "outside every sealed repository passes quietly")
    if repo is not None:
        print(f"  {repo} {'now' if plan['trusted_now'] else 'already'} trusted by {name} (no skip-trust flag needed)")
    print(f"  no sandbox or deny rules for {name}: past the guard (a tripwire), a program of the agent's own can still read "
          f"the kit's folders (docs/{args.client}.md)")
    print(f"  next: seal the acceptance tests (donegate seal), then check: donegate doctor --client {args.client}"
          + (f" {repo}" if repo else " REPO"))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("install", help="write the Stop hook, guard, deny rules and sandbox into REPO/.claude/settings.json")
    p.add_argument("repo", metavar="REPO", nargs="?", help="the git repository to guard")
    p.add_argument("--managed", action="store_true",
                   help="as root: write the hooks, pinned env, deny rules and sandbox as machine-wide managed policy instead")
    p.add_argument("--sandbox", choices=("auto", "on", "off"), default="auto",
                   help="Claude Code's sandbox over the kit's folders: auto (when bubblewrap and socat are present), on (fail without them), off")
    _scope(p)
    _client(p)
    p.set_defaults(func=cmd_install)
    p = subparsers.add_parser("uninstall", help="remove exactly what install added to REPO/.claude/settings.json")
    p.add_argument("repo", metavar="REPO", nargs="?", help="the git repository")
    p.add_argument("--managed", action="store_true", help="as root: remove the managed drop-in, restoring what was there before")
    _scope(p)
    _client(p)
    p.set_defaults(func=cmd_uninstall)


def _scope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scope", choices=install.SCOPES, default="project",
                   help="which settings file: project (REPO/.claude/settings.json), local (REPO/.claude/settings.local.json, "
                        "git-excluded: the project file stays safe to commit), user (~/.claude/settings.json: every sealed "
                        "repository, worktree and subfolder project of this account)")


def _client(p: argparse.ArgumentParser) -> None:
    p.add_argument("--client", choices=("claude", "codex", *OTHERS), default="claude",
                   help="the agent's CLI: claude (Claude Code's settings), codex (Codex's user config, $CODEX_HOME/config.toml), "
                        "gemini, copilot or qwen (that client's user configuration; docs/<client>.md)")
