"""`donegate doctor FOLDER`: check the installation as Claude Code will see it in a session started in FOLDER.

Claude Code drops a settings file whole and silently when one value has a type it does not accept
(measured with 2.1.197: a string or non-positive `timeout`, an unknown hook `type`, a `deny` that is
not a list, a JSON syntax error or trailing comma, ...), and ignores only the hooks when `hooks` is a
list. A gate whose settings were dropped is simply open, with no message anywhere. Doctor reads every
settings file that applies (managed, user, project, local), names each value Claude Code would reject,
then checks what the surviving files add up to: the Stop hook and its interpreter, the timeouts, the
block cap, the deny rules over every protected folder, the sandbox and its dependencies; then the
`claude` binary, which working tree and seal a stop there is judged on (the hook's own
`donegate.tree.repo.resolve`: a worktree, a subfolder project, a moved repository), the sealed store and the ledger. Every finding says what, where, and the fix; any
error makes the exit code 1.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from donegate import config, paths
from donegate.core import proc
from donegate.tree import repo as repos
from donegate.claude import stubs
from donegate.claude import binary, settings as vocab
from donegate.claude.managed import managed_root
from donegate.claude.shapes import (DEFAULT_BLOCK_CAP, DEFAULT_HOOK_TIMEOUT, DROPS_FILE, DROPS_HOOKS, MISSING, check_json,
                                    check_shapes, parse_hook, rule_covers, sandbox_path_covers)
from donegate.errors import DonegateError
from donegate.core.finding import ERROR, OK, WARNING, Finding

MANAGED_DIR: Path | None = None  # None: the platform's (donegate.claude.managed.managed_root); tests point it elsewhere


# -- one file: JSON and the shapes Claude Code accepts ----------------------------------------------


# -- all files --------------------------------------------------------------------------------------

@dataclass
class SettingsFile:
    scope: str  # managed | user | project | local
    path: Path
    data: dict | None  # None: absent or dropped by Claude Code
    hooks_ok: bool = True  # False: Claude Code ignores this file's hooks


def managed_dir() -> Path | None:
    try:
        return MANAGED_DIR or managed_root()
    except DonegateError:
        return None


def settings_files(repo: Path) -> list[tuple[str, Path]]:
    """Lowest precedence first: user < project < local < managed (the file, then the drop-ins A-Z)."""
    out = [("user", Path.home() / ".claude" / "settings.json"),
           ("project", repo / ".claude" / "settings.json"),
           ("local", repo / ".claude" / "settings.local.json")]
    folder = managed_dir()
    if folder is not None:
        out.append(("managed", folder / "managed-settings.json"))
        drop_ins = folder / "managed-settings.d"
        if drop_ins.is_dir():
            out += [("managed", p) for p in sorted(drop_ins.glob("*.json"))]
    return out


def read_settings(repo: Path, findings: list[Finding]) -> list[SettingsFile]:
    files = []
    for scope, path in settings_files(repo):
        if not path.exists():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(ERROR, f"cannot read the {scope} settings ({exc})", str(path), "make the file readable UTF-8 text"))
            files.append(SettingsFile(scope, path, None))
            continue
        data, problems = check_json(text, str(path))
        if data is not MISSING:
            problems = check_shapes(data, str(path))
        findings.extend(problems)
        errors = [p for p in problems if p.level == ERROR]
        dropped = any(DROPS_FILE in p.what for p in errors)
        hooks_ok = not any(DROPS_HOOKS in p.what for p in errors)
        files.append(SettingsFile(scope, path, None if dropped else data, hooks_ok))
        if not errors:
            findings.append(Finding(OK, f"{scope} settings: valid, every value of a shape Claude Code accepts", str(path)))
    return files


@dataclass
class HookRef:
    file: SettingsFile
    where: str
    hook: dict
    matcher: Any


def _exec_form(hook: dict) -> bool:
    """Run with no shell: an argument list, or the kit's stub (a `#!` file, no arguments)."""
    return isinstance(hook.get("args"), list) or bool(stubs.words(hook.get("command", "")))


def kit_hooks(files: list[SettingsFile], event: str, script_name: str) -> list[HookRef]:
    out = []
    for f in files:
        if f.data is None or not f.hooks_ok or not isinstance(f.data.get("hooks"), dict):
            continue
        groups = f.data["hooks"].get(event)
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            for j, hook in enumerate(group.get("hooks") or []):
                if any(script_name in w for w in vocab.hook_words(hook)):
                    out.append(HookRef(f, f"{f.path}: hooks.{event}[{i}].hooks[{j}]", hook, group.get("matcher")))
    return out


def _merged_list(files: list[SettingsFile], *keys: str) -> list[tuple[SettingsFile, Any]]:
    out: list[tuple[SettingsFile, Any]] = []
    for f in files:
        node: Any = f.data
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, list):
            out.extend((f, item) for item in node)
    return out


def _last_value(files: list[SettingsFile], *keys: str) -> tuple[Any, SettingsFile | None]:
    value, source = MISSING, None
    for f in files:
        node: Any = f.data
        for k in keys:
            node = node.get(k, MISSING) if isinstance(node, dict) else MISSING
        if node is not MISSING:
            value, source = node, f
    return value, source


# -- the whole diagnosis ----------------------------------------------------------------------------

def diagnose(repo_arg: Path | str, env: dict[str, str] | None = None) -> list[Finding]:
    env = dict(os.environ if env is None else env)
    findings: list[Finding] = []
    repo_arg = Path(repo_arg).expanduser()
    try:
        repo = repos.target(repo_arg)
    except DonegateError as exc:
        findings.append(Finding(ERROR, exc.message, str(repo_arg.resolve()), exc.fix or ""))
        return findings
    files = read_settings(repo, findings)
    project = repo / vocab.SETTINGS
    # A worktree, or a monorepo's root above a sealed package: only an install for every folder reaches it.
    tops = repos._git_tops(repo)
    wide = bool(repos.sealed_below(repo, paths.home())) or bool(tops and (tops[0] / ".git").is_file())
    fix_install = "donegate install --scope user" if wide else f"donegate install {repo}"

    for f in files:
        if f.data is not None and f.data.get("disableAllHooks") is True:
            findings.append(Finding(ERROR, f"disableAllHooks is true in the {f.scope} settings: no hook runs, the gate is open",
                                    str(f.path), "remove disableAllHooks"))

    # The Stop hook, its interpreter, script, state root and timeout.
    home = paths.home()
    # An installed kit's launchers import the package from their interpreter's site-packages.
    checkout = paths.is_checkout()
    stops = kit_hooks(files, "Stop", "stop_gate.py")
    from donegate.install import routes

    reach = routes.found(settings_files(repo))  # every route, the plugin included
    plugins = [r for r in reach if r.plugin]
    if not stops and plugins:
        findings.append(Finding(OK, f"{plugins[0].describe()}: its hooks run the gate in this folder's sessions", str(plugins[0].path)))
    elif not stops:
        findings.append(Finding(ERROR, "no donegate Stop hook in any settings file Claude Code would load: the gate never runs",
                                str(project), fix_install))
    if len(reach) > 1:
        findings.append(Finding(WARNING, f"{len(reach)} donegate installs reach this folder ({'; '.join(r.describe() for r in reach)}): "
                                "one hook judges each stop and the others report its verdict only where they share a state root",
                                "; ".join(str(r.path) for r in reach), "keep one: donegate uninstall the others (or claude plugin uninstall donegate@donegate)"))
    if stops:  # GitHub Copilot CLI runs this install's Stop hook too, but only in a folder it trusts
        from donegate.clients.wiring import copilot_skips

        findings += copilot_skips(repo, env)
    for ref in stops[:1]:
        _check_hook_repo(findings, ref, repo, home, fix_install)
        variables, interp, script = parse_hook(ref.hook)
        if not _exec_form(ref.hook):
            findings.append(Finding(
                ERROR, "the Stop hook runs through a shell: `env` in any settings file can bend it (PATH finds another "
                       "interpreter, CLAUDE_CODE_SHELL_PREFIX wraps it, PYTHONPATH runs code before the gate)",
                ref.where, f"{fix_install} (it writes the hook in exec form: an absolute interpreter with -I, no shell)"))
        if "DONEGATE_HOME" in variables:
            home = Path(variables["DONEGATE_HOME"]).expanduser().resolve()
            if home != paths.home():
                findings.append(Finding(
                    WARNING, f"the Stop hook uses the state root {home}, but here DONEGATE_HOME gives {paths.home()}: "
                             "`donegate seal` or `write` run from this shell puts the tests where the hook does not look",
                    ref.where, f"export DONEGATE_HOME={home} before sealing, or install again from this shell"))
        _check_launch(findings, ref, interp, script, vocab.stop_script(), fix_install,
                      modules="pytest, yaml" if checkout else "donegate, pytest, yaml")
        from donegate.hidden import python as pyenv

        inside = pyenv.hook_problem(interp, repo) if interp else None
        if inside is not None:
            findings.append(Finding(ERROR, inside[0], ref.where, inside[1]))
    try:
        cfg = config.load(paths.config_path(home))
    except DonegateError as exc:
        findings.append(Finding(ERROR, exc.message, str(paths.config_path(home)), exc.fix or "fix donegate.yaml"))
        cfg = config.defaults()
    worst = vocab.hook_timeout(cfg) - 1
    for ref in stops:
        timeout = ref.hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout <= worst:
            review = f" + reviewers {cfg['review_timeout']:g}" if cfg["review"] != "off" else ""
            findings.append(Finding(
                ERROR, f"the Stop hook's timeout ({timeout:g} s) is not above the kit's worst case ({cfg['timeout']:g} s of tests"
                       f"{review} + margin {cfg['hook_margin']:g}): a hook that times out lets the agent stop unchecked",
                ref.where, f"set its timeout to {vocab.hook_timeout(cfg)} ({fix_install} writes it)"))
        elif stops:
            findings.append(Finding(OK, f"Stop hook timeout {timeout:g} s is above the kit's worst case {worst} s", ref.where))

    # Claude Code's own cap on consecutive blocks.
    cap_text, cap_where = env.get("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"), "the environment"
    value, source = _last_value(files, "env", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
    if value is not MISSING and source is not None:
        cap_text, cap_where = str(value), f"env in {source.path}"
    try:
        cap = int(cap_text) if cap_text not in (None, "") else DEFAULT_BLOCK_CAP
    except ValueError:
        findings.append(Finding(WARNING, f"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP={cap_text!r} is not a whole number", cap_where,
                                "set it to a whole number, or unset it (default 8)"))
        cap = DEFAULT_BLOCK_CAP
    if cap > 0 and cfg["max_blocks"] >= cap:
        findings.append(Finding(
            ERROR, f"max_blocks is {cfg['max_blocks']} but Claude Code lets the stop through after {cap} blocks in a row "
                   f"(CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, from {cap_where}): the session ends unverified with no ledger line saying so",
            str(paths.config_path(home)), f"set max_blocks below {cap} in donegate.yaml, or raise CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"))
    else:
        findings.append(Finding(OK, f"max_blocks {cfg['max_blocks']} is below Claude Code's block cap "
                                    f"({'none' if cap <= 0 else cap}, from {cap_where})"))

    # The guard.
    guards = kit_hooks(files, "PreToolUse", "guard.py")
    if not guards and not plugins:
        findings.append(Finding(WARNING, "no donegate PreToolUse guard: nothing trips on a search or a glob reaching the hidden tests",
                                str(project), fix_install))
    for ref in guards[:1]:
        variables, interp, script = parse_hook(ref.hook)
        _check_launch(findings, ref, interp, script, vocab.guard_script(), fix_install,
                      modules=None if checkout else "donegate")
        from donegate.install import guard

        matcher = ref.matcher if isinstance(ref.matcher, str) else ""
        missing = [t for t in guard.TOOLS if t not in matcher.split("|")] if matcher not in ("", "*") else []
        if missing:
            findings.append(Finding(WARNING, f"the guard's matcher leaves out {', '.join(missing)}", ref.where, fix_install))

    # Deny rules over every protected folder, and over the settings files.
    rules = _merged_list(files, "permissions", "deny")
    for root in vocab.protected_roots(home=home):
        missing = [t for t in vocab.DENY_TOOLS if not any(rule_covers(r, t, root, repo) for _, r in rules)]
        if missing:
            findings.append(Finding(ERROR, f"no deny rule keeps {', '.join(missing)} out of {root}: the agent can read the hidden tests or the gate",
                                    str(project), f"{fix_install} (it adds {missing[0]}({vocab.abs_pattern(root)}/**) and the others)"))
        else:
            findings.append(Finding(OK, f"deny rules cover {root} for {', '.join(vocab.DENY_TOOLS)}"))
    settings_target = repo / ".claude" / "settings.json"
    if not any(rule_covers(r, "Edit", settings_target, repo) or r in ("Edit(/.claude/settings*.json)",) for _, r in rules):
        findings.append(Finding(WARNING, "no Edit deny rule over .claude/settings*.json: under bypassPermissions the agent can rewrite its own hooks",
                                str(project), fix_install))

    # The sandbox.
    enabled, source = _last_value(files, "sandbox", "enabled")
    if enabled is True:
        where = str(source.path) if source else ""
        ok, why = vocab.sandbox_available()
        if not ok:
            findings.append(Finding(ERROR, f"the sandbox is on but cannot run here ({why})", where, vocab.SANDBOX_FIX))
        deny_read = [item for _, item in _merged_list(files, "sandbox", "filesystem", "denyRead")]
        for root in vocab.protected_roots(home=home):
            if not any(isinstance(p, str) and sandbox_path_covers(p, root, repo) for p in deny_read):
                findings.append(Finding(ERROR, f"the sandbox's filesystem.denyRead leaves {root} readable to Bash", where, fix_install))
        for key, want in (("allowUnsandboxedCommands", False), ("failIfUnavailable", True)):
            value, src = _last_value(files, "sandbox", key)
            if value is not want:
                findings.append(Finding(WARNING, f"sandbox.{key} is not {json.dumps(want)}: "
                                        + ("a command can ask to run outside the sandbox" if key == "allowUnsandboxedCommands"
                                           else "when the sandbox cannot start, Claude Code runs commands unsandboxed, with a warning only"),
                                        str(src.path) if src else where, f'set "sandbox": {{"{key}": {json.dumps(want)}}} ({fix_install} does)'))
        for f, r in rules:
            if isinstance(r, str) and re.fullmatch(r"Edit\((\./|/)?\.claude/\*\*\)", r.strip()):
                findings.append(Finding(ERROR, f"{r} while the sandbox is on makes every Bash command fail (bwrap cannot mount .claude)",
                                        str(f.path), f"remove {r}: the sandbox already keeps .claude/settings*.json read-only"))
        if ok:
            findings.append(Finding(OK, "the sandbox is on and its dependencies are present", where))
    else:
        findings.append(Finding(WARNING, "the sandbox is off: a Bash command can still read the hidden tests with a program "
                                         "of its own (python, find, cp); deny rules and the guard do not stop that",
                                str(project), f"{fix_install} --sandbox on (needs bubblewrap and socat on Linux)"))

    from donegate.install import weakening

    weakening.check_env(findings, files, exec_form=bool(stops) and _exec_form(stops[0].hook),
                        max_blocks=cfg["max_blocks"])
    weakening.check_git(findings, repo)
    weakening.check_mode(findings, files, stops, home)
    weakening.check_ledger(findings, repo, paths.ledger_path(home))
    from donegate.hidden import confine  # one line: how the hidden run is confined
    findings.append(Finding(*confine.doctor_line(cfg.get("confine", "auto"))))
    _check_claude(findings, cfg)
    _check_prompts(findings, cfg)
    _check_target(findings, repo, home, cfg)
    _check_writable(findings, paths.ledger_path(home), "the ledger")
    _check_writable(findings, paths.state_dir(home), "the state folder (block counters)", folder=True)
    return findings


def _check_hook_repo(findings: list[Finding], ref: HookRef, folder: Path, home: Path, fix: str) -> None:
    """A hook that names its repository (`--repo`, an older per-repository install) must name this
    folder's sealed project: copied settings, or a moved repository, judge another one or none."""
    words = vocab.hook_words(ref.hook)
    named = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--repo"), None)
    if named is None:
        return
    target = repos.resolve(folder, home)
    want = target.sealed if target is not None and target.moved_from is None else folder
    hooked = repos.resolve(Path(named), home) if Path(named).is_dir() else None
    if (hooked.sealed if hooked is not None else Path(named).resolve()) != want:
        gone = "" if Path(named).is_dir() else " (it no longer exists)"
        findings.append(Finding(ERROR, f"the Stop hook judges {named}{gone}, not {want}", ref.where, fix))


def _check_launch(findings: list[Finding], ref: HookRef, interp: str | None, script: str | None, expected: Path,
                  fix: str, modules: str | None) -> None:
    if not interp or not os.path.isabs(interp) or not os.access(interp, os.X_OK):
        findings.append(Finding(ERROR, f"the hook's interpreter {interp!r} is not an executable absolute path: the hook fails "
                                       "and Claude Code carries on as if there were none", ref.where, fix))
        return
    if not script or not os.path.isfile(script):
        findings.append(Finding(ERROR, f"the hook's script {script!r} does not exist: the hook fails and the gate is open", ref.where, fix))
        return
    if Path(script).resolve() != expected.resolve():
        findings.append(Finding(WARNING, f"the hook runs {script}, not this kit's {expected}", ref.where, fix))
    if modules:
        if _run_cached(interp, "-c", f"import {modules}")[0] != 0:
            findings.append(Finding(ERROR, f"the hook's interpreter {interp} cannot import {modules}: every call of the hook would be an error",
                                    ref.where, f"{interp} -m pip install pytest pyyaml, or install the kit with that interpreter"))
            return
    findings.append(Finding(OK, f"hook runs {script} with {interp}", ref.where))


@functools.lru_cache(maxsize=None)
def _run_cached(*argv: str) -> tuple[int | None, str]:
    """(exit code, stdout + stderr) of a short probe, run once per process."""
    res = proc.run(list(argv), timeout=60)
    return res.returncode, res.stdout + res.stderr


def _check_claude(findings: list[Finding], cfg: dict[str, Any]) -> None:
    from donegate.core import kit as installation

    level = ERROR if cfg["review"] != "off" else WARNING
    low, high = binary.supported_range()
    try:
        exe = binary.find_claude()
    except DonegateError as exc:
        findings.append(Finding(level, exc.message + ("; the reviewers need it" if level == ERROR else ""),
                                str(paths.KIT_ROOT / "node_modules" / ".bin" / "claude"), exc.fix or ""))
        return
    code, output = _run_cached(exe, "--version")
    version = (output.strip().split() or ["?"])[0]
    if code != 0 or "Claude Code" not in output:
        findings.append(Finding(level, f"{exe} --version failed: {output.strip()[-200:]}", exe,
                                f"reinstall it: {installation.claude_pin(high)}"))
        return
    span = f"the kit is proven on {low} to {high}"
    fit = binary.support(version)
    if fit == "older":
        findings.append(Finding(ERROR, f"claude is {version}, older than the oldest release {span.removeprefix('the kit is ')}: "
                                       "its hooks may not run as the kit writes them (exec form), which opens the gate",
                                exe, f"update Claude Code: {installation.claude_pin(high)}"))
    elif fit != "ok":
        findings.append(Finding(WARNING, f"claude is {version}; {span}: hook and settings behaviour moves between versions",
                                exe, f"{installation.claude_pin(high)}, {installation.try_claude(version)}"))
    else:
        findings.append(Finding(OK, f"claude {version} ({span})", exe))


def _check_target(findings: list[Finding], folder: Path, home: Path, cfg: dict[str, Any]) -> None:
    """Which working tree a session started in `folder` is judged on, against which seal (the hook's
    own `donegate.tree.repo.resolve`), then that seal's store and scope checks on that tree."""
    target = repos.resolve(folder, home)
    below = repos.sealed_below(folder, home) if target is None else []
    if below:
        findings.append(Finding(WARNING, f"nothing is sealed for this folder; sealed below this folder: {', '.join(str(t.tree) for t in below)}: "
                                "a session started here is judged on the one it changes only through an install for every folder "
                                "(a project install there runs only in sessions started there)",
                                str(folder), "donegate install --scope user, or start the session in the sealed folder"))
        return
    if target is None:
        _check_store(findings, folder, home, cfg)  # says "no acceptance tests are sealed", with the fix
        return
    if target.moved_from is not None:
        findings.append(Finding(ERROR, f"this repository was sealed at {target.moved_from} and is now at {target.tree}: "
                                       "every stop here is handed to a person unverified",
                                str(folder), f"donegate relocate {target.moved_from} {target.tree}"))
        return
    if target.tree != folder or target.sealed != folder:
        what = "the working tree" if target.tree != target.sealed else "the sealed project"
        findings.append(Finding(OK, f"a session in {folder} is judged on {what} {target.tree} against the seal of {target.sealed}",
                                str(folder)))
    _check_store(findings, target.sealed, home, cfg, tree=target.tree)


def _check_prompts(findings: list[Finding], cfg: dict[str, Any]) -> None:
    """The writer's and reviewers' prompts and schemas, read by the very loaders `write` and the review
    gate use. With `review: block` a reviewer file that cannot be read let every stop through as
    `review_error` while doctor said nothing (an installed wheel without them)."""
    from donegate.models import reviewer
    from donegate.models import writer

    for who, load, level in (("the writer's", lambda: (writer.load_schema(override=cfg["prompts"]),
                                                        writer.load_prompt(override=cfg["prompts"])), WARNING),
                             ("the reviewers'", lambda: reviewer.load_assets(override=cfg["prompts"]),
                              ERROR if cfg["review"] != "off" else WARNING)):
        try:
            load()
        except DonegateError as exc:
            findings.append(Finding(level, f"{who} prompt and schema: {exc.message}", cfg["prompts"] or "", exc.fix or ""))
        else:
            findings.append(Finding(OK, f"{who} prompt and schema load", cfg["prompts"] or ""))


def _check_store(findings: list[Finding], repo: Path, home: Path, cfg: dict[str, Any], tree: Path | None = None) -> None:
    from donegate.seal import store
    from donegate.gate import integrity, scope  # the very checks the Stop hook runs, in its order

    tree = tree or repo
    try:
        st, sealed, fix = integrity.check(repo, home)
    except DonegateError as exc:
        st, sealed, fix = None, {"ok": False, "problem": exc.message}, exc.fix or "seal the tests again"
    if sealed["ok"] is False:
        findings.append(Finding(ERROR, f"acceptance store: {sealed['problem']}; the gate blocks every stop",
                                str(paths.store_dir(repo, home)), fix))
        return
    if st is None:
        findings.append(Finding(ERROR, "no acceptance tests are sealed for this repository: the gate lets every stop through unchecked",
                                str(paths.store_dir(repo, home)), f"donegate write {repo} --request ..., or donegate seal {repo} TEST_FILE..."))
        _check_python(findings, repo, None, cfg)
        return
    if tree != repo:
        st = store.Store(tree, st.path, st.manifest, sealed_at=repo)
    from donegate.gate import own_suite
    from donegate.seal import own as own_tests

    problems = scope.scope_gate(tree, st, cfg)["problems"] + own_suite.weakenings(tree, st, cfg)
    for problem in problems:
        findings.append(Finding(ERROR, f"since the seal, {problem}: the gate will block every stop until this is undone",
                                str(tree), "undo the change, or seal again after a change of your own: donegate seal ..."))
    if not problems:  # never "intact" beside the errors (it said so while every stop blocked)
        findings.append(Finding(OK, f"{st.manifest['count']} acceptance tests sealed and intact", str(st.path)))
    if "own_suite" in st.manifest:  # issue 44: what every stop runs of the project's own tests
        findings.append(Finding(OK, own_tests.describe(st.manifest["own_suite"]), str(repo)))
        service = own_tests.service_line(st.manifest["own_suite"])
        if service:
            findings.append(Finding(WARNING, service.removeprefix("warning: "), str(repo)))
    own = sorted({rule for items in (st.manifest.get("scan_baseline") or {}).values() for rule, *_ in items}
                 | {str(t.get("rule")) for t in st.manifest.get("tripwire_baseline") or () if isinstance(t, dict)})
    if own:  # issue 37: what the unchanged project already does is its own, said once here and at the seal
        findings.append(Finding(OK, f"the unchanged project already does what these rules look for: {', '.join(own)} "
                                "(the seal's baseline: never counted against a stop)", str(repo)))
    _check_python(findings, tree, st.manifest, cfg)  # the tree judged: a worktree runs with its own paths


def _check_python(findings: list[Finding], repo: Path, manifest: dict[str, Any] | None, cfg: dict[str, Any]) -> None:
    from donegate.hidden import python as pyenv  # the stop's own choice of interpreter

    for level, what, where, fix in pyenv.doctor_lines(repo, manifest, cfg):
        findings.append(Finding(level, what, where, fix))


def writable(path: Path, folder: bool = False) -> bool:
    """Whether the kit can append to the file (or create files in the folder) at `path`."""
    if path.exists():
        if folder:
            return path.is_dir() and os.access(path, os.W_OK | os.X_OK)
        if path.is_dir():
            return False
        try:
            with open(path, "a", encoding="utf-8"):
                return True
        except OSError:
            return False
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)


def _check_writable(findings: list[Finding], path: Path, name: str, folder: bool = False) -> None:
    if writable(path, folder):
        findings.append(Finding(OK, f"{name} is writable", str(path)))
    else:
        findings.append(Finding(ERROR, f"{name} cannot be written: stops would not be recorded or counted", str(path),
                                f"make {path} a writable {'folder' if folder else 'file'} (or set DONEGATE_HOME elsewhere and install again)"))


def render(findings: list[Finding], verbose: bool = False) -> str:
    lines = []
    for f in findings:
        if f.level == OK and not verbose:
            continue
        label = {ERROR: "ERROR", WARNING: "warning", OK: "ok"}[f.level]
        lines.append(f"{label:8s}{f.what}")
        if f.where and f.level != OK:
            lines.append(f"{'':8s}where: {f.where}")
        if f.fix and f.level != OK:
            lines.append(f"{'':8s}fix: {f.fix}")
    errors = sum(f.level == ERROR for f in findings)
    warnings = sum(f.level == WARNING for f in findings)
    lines.append(f"{errors} error(s), {warnings} warning(s), {sum(f.level == OK for f in findings)} check(s) passed")
    return "\n".join(lines)
