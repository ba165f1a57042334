"""`donegate report` (the ledger summarised, one session's timeline, the chain verified, the
experiment table, the HTML page) and `donegate label` (a person's verdict on a stop)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from donegate.ledger import chain as ledger
from donegate import paths, report
from donegate.report import html as report_html
from donegate.report.summary import summarize_and_decisions
from donegate.errors import DonegateError


def _files(args: argparse.Namespace) -> list[Path] | None:
    """The ledgers to read; None when the default ledger does not exist yet (nothing has run)."""
    if not args.ledgers:
        default = paths.ledger_path()
        return [default] if default.exists() else None
    files = [Path(p).expanduser() for p in args.ledgers]
    for path in files:
        if not path.exists():
            raise DonegateError(f"no ledger at {path}", "check the path; the kit's own ledger is "
                                f"{paths.ledger_path()} (the default)")
        if not path.is_file():
            raise DonegateError(f"{path} is not a file", "pass ledger.jsonl files")
    return files


def _print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=1)
    sys.stdout.write("\n")


def cmd_report(args: argparse.Namespace) -> int:
    if not args.ledgers and not args.verify:
        from donegate.seal import leak_scan as leaks  # a second look at sessions that ended on a pass

        for rec in leaks.rescan(paths.home()):
            print(f"donegate: a leak found late in session {rec['session']} ({rec['repo']}): its transcript shows "
                  "hidden acceptance-test content, store paths or the kit's hook code after its last stop; recorded "
                  "in the ledger", file=sys.stderr)
    files = _files(args)
    if getattr(args, "html", None):
        return _html(args, files)
    if getattr(args, "experiment", None) and not args.verify:
        from donegate.experiment import table

        fmt = "json" if args.json else "markdown" if args.markdown else "csv" if args.csv else "text"
        s = table.summarize(files or [], args.experiment)
        print(table.render(s, fmt))
        return 0 if all(c["intact"] for c in s["ledgers"]) else 1
    if getattr(args, "csv", False):
        raise DonegateError("--csv is for --experiment NAME", "add --experiment NAME, or use --json")
    if files is None:
        where = paths.ledger_path()
        if args.json:
            _print_json({"ledgers": [str(where)], "missing": True, "lines": 0, "groups": []})
        else:
            print(f"No ledger yet at {where}: no stop has been recorded (the Stop hook writes one line per stop).")
        return 0
    if args.verify:
        results = [ledger.verify(p) for p in files]
        if args.json:
            _print_json(results)
        else:
            print("\n".join(report.render_verify(v) for v in results))
        return 0 if all(v["intact"] for v in results) else 1
    if args.session:
        timeline = report.session_timeline(files, args.session)
        if args.json:
            _print_json(timeline)
        else:
            print(report.render_timeline(timeline))
        return 0
    since = report.parse_since(args.since) if args.since else None
    if args.jobs is not None and args.jobs < 1:
        raise DonegateError(f"--jobs {args.jobs} is not a number of processes", "use 1 or more")
    summary, made = summarize_and_decisions(files, by=args.by, since=since, jobs=args.jobs or report.default_jobs(),
                                            keep=True)
    if made:  # a person's approve / reject: shown only when there are some (the outputs stay as they were)
        summary["decisions"] = list(made.values())
    if args.json:
        _print_json(summary)
    else:
        print(report.render(summary, markdown=args.markdown, width=shutil.get_terminal_size((1000, 24)).columns))
    return 0


def _html(args: argparse.Namespace, files: list[Path] | None) -> int:
    """--html FILE: the report (or with --experiment NAME, that experiment) as one page."""
    name = getattr(args, "experiment", None)
    target = Path(args.html)
    if args.session or args.verify or args.json or args.markdown:
        raise DonegateError("--html writes the whole report as a page", "drop --session, --verify, --json and --markdown")
    if files is None:
        raise DonegateError(f"no ledger yet at {paths.ledger_path()}: nothing to put in a page",
                            "run a gated session first, or pass a ledger file")
    if name:
        from donegate.experiment import table

        summary = table.summarize(files, name)
        if not summary["runs"]:
            raise DonegateError(f"no run of experiment {name!r} in {', '.join(map(str, files))}"
                                + "".join(f"; {n}" for n in table.problem_notes(summary)),
                                "experiment names are in the ledger's `run` lines (donegate experiment run SPEC writes them)")
        from donegate.report import experiment_page

        text = experiment_page.render(summary)
    else:
        since = report.parse_since(args.since) if args.since else None
        if args.jobs is not None and args.jobs < 1:
            raise DonegateError(f"--jobs {args.jobs} is not a number of processes", "use 1 or more")
        text = report_html.render_page(report_html.page_data(files, since=since, jobs=args.jobs or report.default_jobs(),
                                                             by=args.by, keep=True))
    report_html.write(target, text)
    print(f"wrote {target} ({len(text.encode()) / 1e6:.2f} MB)")
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    path = Path(args.ledger).expanduser() if args.ledger else paths.ledger_path()
    from donegate.person import ownership as person

    rec = report.label_stop(path, args.ref, args.label, args.note or "", by=getattr(args, "by", None) or person.who())
    print(f"labelled stop {rec['ref']} (session {rec['session']}, stop {rec['stop']}) {rec['label']}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("report", help="summarise the ledger: blocks, give-ups, pass rates, cost and time per configuration")
    p.add_argument("ledgers", metavar="LEDGER", nargs="*", help="ledger files to read (default: the kit's ledger)")
    p.add_argument("--by", choices=report.BY, default="config", help="group the summary by configuration label, repository or day (UTC)")
    p.add_argument("--since", metavar="DATE", help="count only stops from DATE on (2026-12-01, an ISO time, 7d or 12h)")
    p.add_argument("--session", metavar="ID", help="print one session stop by stop instead of the summary")
    p.add_argument("--verify", action="store_true", help="check the hash chain and name the first line changed, removed or inserted")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON for machines (the same numbers as the table)")
    out.add_argument("--markdown", action="store_true", help="print a Markdown table for pasting into an issue")
    out.add_argument("--csv", action="store_true", help="print CSV, one row per configuration (with --experiment)")
    p.add_argument("--experiment", metavar="NAME", help="the table of experiment NAME's runs (donegate experiment run)")
    p.add_argument("--jobs", type=int, metavar="N", help="processes reading a large ledger (default: up to 2)")
    p.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page to FILE "
                   "(with --experiment NAME: that experiment's page)")
    p.set_defaults(func=cmd_report)

    p = subparsers.add_parser("label", help="record whether a block was justified, or an appeal upheld (the report counts labels)")
    p.add_argument("ref", metavar="STOP_REF", help="the stop's ref, as `donegate report --session ID` shows it")
    p.add_argument("label", choices=report.LABELS + report.APPEAL_LABELS,
                   help="justified or unjustified for a block; upheld (the test was wrong) or rejected for an appeal")
    p.add_argument("--note", help="why (kept in the ledger)")
    p.add_argument("--ledger", metavar="PATH", help="the ledger holding the stop (default: the kit's ledger)")
    p.set_defaults(func=cmd_label)
