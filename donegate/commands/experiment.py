"""`donegate experiment run SPEC` and `donegate experiment check SPEC`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from donegate import paths
from donegate.errors import DonegateError


def _spec(args: argparse.Namespace):
    from donegate.experiment import spec

    return spec.load(Path(args.spec))


def _warn_exposed(s, ledger_path: Path | None = None) -> None:
    """What an agent could find on disk: each run's sandbox and deny rules cover the kit (checkout, or its
    installed folders) and that run's own state root, not this process's state root."""
    roots = paths.protected_roots(home=paths.KIT_ROOT)
    where = ", ".join(str(r) for r in roots)
    if ledger_path is not None and not any(paths.is_within(ledger_path, r) for r in roots):
        print(f"donegate: warning: the ledger {ledger_path} lies outside what the runs' sandbox hides ({where}): an agent "
              "searching the disk could read earlier runs' lines (grading test names, results)", file=sys.stderr)
    for task in s.tasks:
        folder = s.resolve(task["grading"])
        if not any(paths.is_within(folder, r) for r in roots):
            print(f"donegate: warning: the grading tests of task {task['name']} ({folder}) lie outside what the runs' "
                  f"sandbox and deny rules hide ({where}); an agent searching the disk could read them", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    from donegate.experiment import harness

    s = _spec(args)
    jobs = args.jobs if args.jobs is not None else s.limits["jobs"]
    if jobs < 1:
        raise DonegateError(f"--jobs {jobs} is not a number of runs at a time", "use 1 or more")
    max_cost = args.max_cost if args.max_cost is not None else s.limits["max_cost"]
    if max_cost is not None and max_cost < 0:
        raise DonegateError(f"--max-cost {max_cost} is below zero", "give the budget in US dollars, e.g. --max-cost 10")
    shard = harness.parse_shard(args.shard) if args.shard else None
    ledger_path = Path(args.ledger).expanduser().resolve() if args.ledger else paths.ledger_path()
    if args.dry_run:
        return _dry_run(s, ledger_path, jobs, shard, max_cost, args.scripted)
    _warn_exposed(s, ledger_path)
    out = harness.run_experiment(s, ledger_path, jobs=jobs, max_cost=max_cost, shard=shard, keep=args.keep,
                                 scripted=args.scripted)
    where = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    money = (f"${out['spent']:.4f} computed from the scripted server's tokens, no money spent" if args.scripted
             else f"${out['spent']:.4f} spent in all")
    print(f"experiment {s.name}{where}: {out['done']} of {out['planned']} runs recorded in {ledger_path} "
          f"({out['new']} new, {out['failed']} failed, {money})")
    for line in out["failures"]:
        print(f"  failed: {line}", file=sys.stderr)
    if out["stopped"]:
        print(f"donegate: the first {out['failed']} runs all failed, so {out['stopped']} more were not started; "
              "fix the cause above (a login or ANTHROPIC_API_KEY, the network, the spec), then run again", file=sys.stderr)
        return 1
    if out["skipped_budget"]:
        print(f"donegate: --max-cost ${max_cost:g} reached: {out['skipped_budget']} run(s) not started; "
              "run again with a higher --max-cost to do them", file=sys.stderr)
        return 1
    if out["failed"] or out["busy"]:
        if out["busy"]:
            print(f"donegate: {out['busy']} run(s) were being done by another process; run again to check", file=sys.stderr)
        return 1
    if not args.quiet:
        from donegate.experiment import table

        print()
        print(table.render(table.summarize([ledger_path], s.name), "text"))
    return 0


def _money(value: float | None) -> str:
    return "?" if value is None else f"${value:.4f}"


def _dry_run(s, ledger_path: Path, jobs: int, shard, max_cost: float | None, scripted: bool) -> int:
    """`run --dry-run`: the runs it would do, each configuration's estimate and where it comes from."""
    from donegate.experiment import harness
    from donegate.experiment.bookkeeping import duration_text

    est = harness.dry_run(s, ledger_path, jobs=jobs, shard=shard, scripted=scripted)
    where = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    print(f"experiment {s.name}{where}: {len(est['runs'])} run(s) to do of {est['planned']} "
          f"({est['recorded']} already in {ledger_path}); nothing is run (--dry-run)")
    for name, c in est["configurations"].items():
        if c["todo"]:
            took = duration_text(c["seconds"]) if c["seconds"] is not None else "?"
            per = f"{_money(c['cost'])} and {took} a run" if c["cost"] is not None else "no estimate"
            print(f"  {name}: {c['todo']} run(s), {per} ({c['source']}" + (f", {c['from_runs']} run(s)" if c["from_runs"] else "") + ")")
    for r in est["runs"]:
        print(f"    {r['key']}")
    unit = "computed from a scripted server's tokens, no money" if scripted else "US dollars"
    more = f" plus {est['unestimated']} run(s) with no estimate" if est["unestimated"] else ""
    took = duration_text(est["seconds"]) if est["seconds"] is not None else "?"
    print(f"estimate: {_money(est['cost'])}{more} ({unit}); about {took} at {jobs} at a time, "
          f"at most {duration_text(est['seconds_bound'])} by the spec's time limit ({s.limits['time']:g} s a session, "
          "plus setup and grading)")
    if max_cost is not None and est["cost"] > max_cost:
        print(f"--max-cost ${max_cost:g} is below the estimate: the runs stop when the spend plus an average run "
              "would pass it; run again with a higher cap to finish")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from donegate.experiment import harness

    s = _spec(args)
    runs = harness.plan(s)
    print(f"{s.path}: experiment {s.name}, {len(s.tasks)} task(s) x {len(s.configurations)} configuration(s) x "
          f"{s.repetitions} repetition(s) = {len(runs)} runs")
    for c in s.configurations:
        keys = ", ".join(f"{k}: {v}" for k, v in c["keys"].items()) or "defaults"
        print(f"  configuration {c['name']}: gate {c['gate']}, acceptance tests {'yes' if c['tests'] else 'no'}, {keys}")
    for t in s.tasks:
        repo = t["repo"]
        where = repo["path"] or repo["pypi"] or f"{repo['git']} at {repo['commit']}"
        print(f"  task {t['name']}: {where}; acceptance {t['acceptance']}; grading {t['grading']}")
    _warn_exposed(s)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("experiment", help="run configurations x tasks x repetitions of real sessions and score them with grading tests")
    sub = p.add_subparsers(dest="experiment_command", metavar="SUBCOMMAND")
    r = sub.add_parser("run", help="do the spec's runs that have no line in the ledger yet, then print the table")
    r.add_argument("spec", metavar="SPEC", help="the experiment's YAML spec")
    r.add_argument("--jobs", type=int, metavar="N", help="runs at a time (default: the spec's limits.jobs)")
    r.add_argument("--max-cost", type=float, metavar="USD", help="start no run once the spend plus an average run would pass USD")
    r.add_argument("--shard", metavar="K/N", help="do only shard K of N (every N-th run from the K-th, in spec order)")
    r.add_argument("--ledger", metavar="PATH", help="the ledger to write (default: the kit's ledger)")
    r.add_argument("--keep", action="store_true", help="keep each run's temporary folder (repository, state root) for a look")
    r.add_argument("--quiet", action="store_true", help="do not print the table at the end")
    r.add_argument("--dry-run", action="store_true", help="list the runs it would do, with their estimated cost and time, and run none")
    r.add_argument("--scripted", action="store_true",
                   help="the models are a scripted stand-in (make experiment): its dollars are labelled as no money spent")
    r.set_defaults(func=cmd_run)
    c = sub.add_parser("check", help="validate the spec and list its runs")
    c.add_argument("spec", metavar="SPEC", help="the experiment's YAML spec")
    c.set_defaults(func=cmd_check)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
