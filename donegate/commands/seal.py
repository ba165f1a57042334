"""`donegate seal REPO TEST_FILE...` (copy acceptance tests into the store, outside the repository's tree),
`donegate unseal REPO` (stop gating it) and `donegate relocate OLD NEW` (the seal follows a moved repository)."""

from __future__ import annotations

import argparse
from pathlib import Path

from donegate.errors import DonegateError


def cmd_seal(args: argparse.Namespace) -> int:
    from donegate import config, paths
    from donegate.person import ownership as person
    from donegate.tree import repo as repos
    from donegate.seal import sealing, store

    repo = repos.project(Path(args.repo))  # the project: a repository, or a subfolder of one
    _outside_the_agents_reach(repo, [Path(f) for f in args.tests])
    if store.is_sealed(repo) and not (args.add or args.replace):
        # Replacing a set is a choice: a second `seal` of one file used to drop the others without a word.
        raise DonegateError(f"{repo} already has sealed acceptance tests",
                            "add these to them with --add, or replace the whole set with --replace "
                            "(donegate status shows what is sealed)")
    if not args.tests and not args.held and not (args.add and getattr(args, "supersedes", None)):
        raise DonegateError("no test files given", "name at least one test file: donegate seal REPO test_x.py [--held test_y.py]")
    cfg = config.load()
    allow = _allowances(getattr(args, "allow", None) or [])
    by = getattr(args, "by", None) or person.who()
    st = sealing.seal(
        Path(args.repo), [Path(f) for f in args.tests], request=args.request or "", timeout=cfg["timeout"],
        protected=cfg["protected"], protect_repo_tests=cfg["protect_repo_tests"], allow_skip=args.allow_skip,
        confine=cfg["confine"], add=args.add, python=args.python or cfg["python"],
        python_by="--python" if args.python else "python:", pythonpath=cfg["pythonpath"], by=by,
        extra={"scan_allow": list(cfg["scan_allow"])},  # what the project allowed, at the seal
        held=[Path(f) for f in args.held or []], held_share=float(cfg["held_share"]),
        allow=allow, own_tests=_own_tests(args, cfg), supersedes=getattr(args, "supersedes", None) or [],
    )
    m = st.manifest
    person.record(paths.home(), "seal", by, repo=m["repo"], store=st.path.name, tests=m["count"],
                  base=m["base"], request=m["request"][:500])
    print(
        f"sealed {m['count']} tests for {m['repo']} at {m['base'][:12]}: "
        f"{len(m['baseline']['failing'])} new requirements failing, {len(m['baseline']['passing'])} already passing"
        + (f", {len(m['baseline']['skipped'])} skipped (sealed with --allow-skip)" if m["baseline"]["skipped"] else "")
    )
    print(held_line(m, float(cfg["held_share"])))
    numbered = sorted({n for n in (m.get("held") or {}).values() if any(c.isdigit() for c in n)})
    if numbered:  # the name is what a block shows of a held-back test: a value in it is a value handed out
        print(f"  warning: {len(numbered)} held-back requirement name(s) hold digits, and a block shows the name: "
              f"{'; '.join(numbered[:3])} (fix: say the rule in words in the test's docstring first line)")
    py = m["python"]
    print(f"  the hidden run uses {py['python']} (Python {py['version'] or '?'}, {py['source']})"
          + (f", project folder {m['project']}" if m["project"] != "." else ""))
    if m.get("own_pytest"):
        print(f"  the project is pytest: its own (in {m['own_pytest']}/) runs the hidden tests, as its `python -m pytest` "
              "does; so the first run's verdict comes from the code under test, and only the tests the second run can "
              "serve (not pytest's own API) are double-checked")
    if m.get("own_plugin_fixtures"):
        print(f"  warning: the hidden tests ask for {', '.join(map(repr, m['own_plugin_fixtures']))}, a fixture the hidden "
              "runs do not serve: the project's own pytest plugin is left out of them (its hooks would run where the "
              "verdict is made), so those tests fail at every stop (fix: test the plugin through pytester, "
              "pytest_plugins = \"pytester\" and pytester.runpytest(), as its own suite does; then seal again)")
    for line in baseline_lines(m):
        print(line)
    if "own_suite" in m:
        from donegate.seal import own

        print("  " + own.describe(m["own_suite"]))
        o = m["own_suite"]
        service = own.service_line(o)
        if service:  # the tests that failed on a connection: the cause named, in one line with the fix
            print("  " + service)
        elif not o.get("off") and o.get("failing", 0) + o.get("skipped", 0) > o.get("passing", 0):
            # most of the suite fails or skips here: a service, a fixture or a dependency the seal's walls lack
            print(f"  warning: {o['failing'] + o['skipped']} of {o['tests']} of the project's own tests fail or skip at "
                  "the seal and so never block (a service, network or dependency the sandbox lacks?) (fix: make them "
                  "pass in the project's environment, then seal again; or name the ones that can: --own-tests PATH...)")
    return 0


def _own_tests(args: argparse.Namespace, cfg: dict) -> list[str] | str:
    """`--own-tests PATH...` / `--own-tests off`, else `own_tests:` in donegate.yaml ("auto": as pytest finds them)."""
    named = getattr(args, "own_tests", None)
    if named:
        return "off" if named == ["off"] else ("auto" if named == ["auto"] else list(named))
    from donegate.seal import own

    return own.configured(cfg["own_tests"])


def held_line(m: dict, share: float) -> str:
    """What the seal says of its held-back tests: how many, who picked them, how to turn the kit's pick off."""
    held = len(m.get("held") or {})
    if not held:
        why = ("held_share is 0 in donegate.yaml" if share <= 0 else
               "the kit never holds back a suite's only test" if m["count"] < 2 else
               "the kit never holds back the only test a seal --add adds")
        return (f"  no test held back ({why}): a block shows every failing assertion, which a session could "
                "hard-code (--held FILE, or held_share in donegate.yaml; docs/held-back.md)")
    line = f"  {held} of {m['count']} tests held back: their failures show the requirement's name and a count only"
    if m.get("held_by") == "share":
        line += (f" (the kit's pick, held_share {m.get('held_share', share):g}: at most that share of each file, "
                 "never a whole file; held_share: 0 in donegate.yaml turns it off)")
    return line


def readable_trees(repo: Path) -> list[Path]:
    """The trees a session of `repo` can read: its working tree and every worktree of the repository."""
    from donegate.tree import git

    top = git.toplevel(repo)
    res = git.run(top, "worktree", "list", "--porcelain")
    found = [Path(line[len("worktree "):]) for line in res.stdout.splitlines() if line.startswith("worktree ")] \
        if res.returncode == 0 else []
    return [top, *(p for p in found if p.resolve() != top.resolve())]


def _outside_the_agents_reach(repo: Path, tests: list[Path]) -> None:
    """A hidden test the agent can read is not hidden: refuse a file inside the repository or its worktrees."""
    from donegate import paths

    trees = [t.resolve() for t in readable_trees(repo)]  # once: two git calls (500 test files: 3.5 s of a 5.8 s seal)
    for test in tests:
        for tree in trees:
            if test.exists() and paths.is_within(test.resolve(), tree):
                raise DonegateError(f"{test} lies inside {tree}, where the agent can read it: it would not be hidden",
                                    f"move it outside the repository (mv {test} ~/acceptance/), then seal that path")


def _allowances(names: list[str]) -> list[str]:
    """`--allow RULE` names checked against the scan's and the tripwires' rules (never hard evidence)."""
    from donegate.gate.scan_rules import ALLOWABLE

    unknown = sorted(set(names) - set(ALLOWABLE))
    if unknown:
        raise DonegateError(f"--allow {', '.join(unknown)}: no such rule",
                            f"name one of: {', '.join(sorted(ALLOWABLE))}")
    return sorted(set(names))


def baseline_lines(m: dict) -> list[str]:
    """What the unchanged project already trips (the seal's baseline) and what this repository allows: a few lines."""
    out = []
    found = m.get("scan_baseline") or {}
    if found:
        rules: dict[str, list[str]] = {}
        for name, items in found.items():
            for rule, *_ in items:
                rules.setdefault(rule, []).append(name)
        shown = "; ".join(f"{rule} ({len(files)}x, e.g. {files[0]})" for rule, files in sorted(rules.items()))
        out.append(f"  the unchanged project already trips the scan: {shown} - its own code, never counted against a stop")
        # A change that does the same again is the change's, appealably; but a copy of the project's own read of its
        # caller's frame that hands it over as the sealed function did (typeguard's `is_type` repeating `check_type`'s)
        # is the project's (`gate.scan_handover`).
        meant = sorted(set(rules) - set(m.get("allow") or ()))
        if meant:
            out.append(f"  a change that adds such code (a copy of a line above in another function too){_held(m, meant)} is "
                       f"blocked, appealably (fix, if the project means it: seal with --allow {' --allow '.join(meant)})")
    for trip in m.get("tripwire_baseline") or []:
        out.append(f"  the unchanged project already trips a tripwire: {trip['what']} [{trip['rule']}] - never counted against a stop")
    if m.get("allow"):
        out.append(f"  allowed for this repository: {', '.join(m['allow'])}")
    return out


def _held(m: dict, meant: list[str]) -> str:
    """", or a new call into a function holding it (NAME(), called from N places; ...)": the project's functions that
    hold a finding of a rule in `meant` and that its own code calls (`scan_calls`), as the stops judge a new call
    (`gate.scan_places`); "" when none is called."""
    from donegate.gate import scan_places

    rules = scan_places.baseline_rules(m.get("scan_baseline"))
    called: dict[str, int] = {}
    for items in (m.get("scan_calls") or {}).values():
        for callee, *_ in items:
            if rules.get(callee, " ").split(" ", 1)[0] in meant:
                called[callee] = called.get(callee, 0) + 1
    named = sorted(called, key=lambda c: (-called[c], c))
    shown = "; ".join(f"{c}(), called from {called[c]} place{'s' if called[c] > 1 else ''}" for c in named[:3])
    return f", or a new call into a function holding it ({shown}{'; ...' if len(named) > 3 else ''})," if named else ""


def cmd_relocate(args: argparse.Namespace) -> int:
    from donegate.seal import sealing

    st = sealing.relocate(args.old, args.new)
    print(f"moved the seal of {args.old} to {st.manifest['repo']} ({st.manifest['count']} tests, base "
          f"{st.manifest['base'][:12]}); stops there are judged again")
    print(f"  a per-repository install names the old path: donegate install {st.manifest['repo']} (then donegate doctor it)")
    return 0


def cmd_unseal(args: argparse.Namespace) -> int:
    from donegate import paths
    from donegate.person import ownership as person
    from donegate.tree import repo as repos
    from donegate.seal import sealing

    repo = repos.project(Path(args.repo))  # the project sealed: a repository, or a subfolder of one
    manifest = sealing.unseal(repo)
    if manifest is None:
        raise DonegateError(f"nothing is sealed for {repo}", "donegate status lists the sealed repositories")
    person.record(paths.home(), "unseal", getattr(args, "by", None) or person.who(), repo=str(repo),
                  count=manifest.get("count"))
    print(f"unsealed {repo}: {manifest.get('count', 'its')} acceptance tests removed from the store; "
          "its sessions stop ungated from now on")
    print(forget_copies(repo, (repo, *_worktrees(repo)), every_look=True))
    return 0


def _worktrees(project: Path) -> list[Path]:
    """The project's folder in each other working tree of its repository (their stops were judged by its seal and
    kept their last looks at their files under their own keys); none when git cannot say."""
    from donegate.errors import DonegateError

    try:
        top, *others = readable_trees(project)
    except DonegateError:
        return []
    below = project.resolve().relative_to(top.resolve())
    return [tree / below for tree in others]


def forget_copies(repo: Path | None, trees: tuple[Path, ...] | None = None, every_look: bool = False) -> str:
    """What the runs kept of `repo` in the kit's state (mirrors, bytecode, the laid-out own suite, the last look at the working trees
    `trees`: default its own; `every_look`: and at every tree a stop judged against its seal, `forget.forget`)
    removed: one line, and one per thing left. `repo` None: of every repository (`uninstall --scope user`)."""
    from donegate import paths
    from donegate.hidden import forget, pyc

    if repo is None:
        removed, left = forget.forget_all(paths.home())
    else:
        removed, left = forget.forget(repo, paths.home(), also=(pyc.folder(paths.home(), repo),), trees=trees,
                                      every_look=every_look)
    whose = "the repository" if repo is not None else "every repository"
    said = (f"removed the kit's copies of {whose} ({removed} folders: the runs' mirrors of its tree, its "
            "bytecode, its own suite laid out)") if removed else f"the kit's copies of {whose}: none were kept"
    if removed and repo is not None and trees and repo.resolve() not in {t.resolve() for t in trees}:  # a worktree's
        said += (f"; they were kept under its sealed project {repo}, which its working trees share (made again at "
                 "their next stop)")
    return "\n".join([said, *(f"  left: {why}" for why in left)])


def register(subparsers) -> None:
    p = subparsers.add_parser("seal", help="copy acceptance tests into the store for REPO, outside its tree")
    p.add_argument("repo", metavar="REPO", help="the guarded project: a git repository, or a subfolder of one (a monorepo package)")
    p.add_argument("tests", metavar="TEST_FILE", nargs="*", help="pytest files holding the acceptance tests")
    p.add_argument("--held", metavar="FILE", action="append", help="a pytest file whose tests are held back: their failures "
                   "block with the requirement's name and a count, never inputs or values (repeatable)")
    p.add_argument("--request", help="the request the tests were written for (kept in the manifest)")
    p.add_argument("--python", metavar="PATH", help="the project's interpreter or environment folder for the hidden run "
                   "(kept in the seal; default: python: in donegate.yaml, else the project's .venv/venv, else the kit's)")
    p.add_argument("--allow-skip", action="store_true", help="seal tests that skip or xfail now (they fail at every stop until they run)")
    p.add_argument("--allow", metavar="RULE", action="append", help="allow a scan or tripwire rule for this repository "
                   "only (repeatable; kept in the seal, shown by status)")
    p.add_argument("--own-tests", metavar="PATH", nargs="+", help="the project's own test folders or files to seal beside "
                   "the hidden tests (default: as pytest finds them: testpaths, else tests/ or test/); off: none")
    p.add_argument("--supersedes", metavar="TEST", action="append", help="a test id of the project's own tests that the "
                   "request changes: it never blocks (repeatable)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--add", action="store_true", help="add the files to REPO's sealed tests (the whole set is run again)")
    how.add_argument("--replace", action="store_true", help="replace REPO's sealed tests with these (needed when some are sealed)")
    p.set_defaults(func=cmd_seal)
    p = subparsers.add_parser("relocate", help="move the seal of a repository that was moved or renamed from OLD to NEW")
    p.add_argument("old", metavar="OLD", help="the path the repository was sealed at (doctor and the hook name it)")
    p.add_argument("new", metavar="NEW", help="where the same repository is now")
    p.set_defaults(func=cmd_relocate)
    p = subparsers.add_parser("unseal", help="remove REPO's sealed acceptance tests: its sessions stop ungated")
    p.add_argument("repo", metavar="REPO", help="the guarded git repository")
    p.set_defaults(func=cmd_unseal)
