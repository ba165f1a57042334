"""`donegate report --html FILE`: the ledger as one self-contained page a person can mail or attach.

Everything is inline (CSS, JS, SVG, the data as JSON); a Content-Security-Policy forbids the page any
request, so it opens the same from a mail attachment as from disk. Numbers come from the report's own
readers: the per-configuration summary is `report.summarize`, each stop goes through the timeline's
`report.timeline_stop`. The page is built for large ledgers: sessions are aggregated in Python, every
session gets a compact row (its stops as one character each), and the per-stop details (feedback,
timings) go in for the sessions a person sees first (left for a person, then the latest) up to a byte
budget; the page stays under 5 MB for 100,000 stops and the browser renders one page of rows at a time.

What a stop shows is what the agent was shown: the stop line's `feedback` (scrubbed and capped by the
gate), never the raw test messages in `gates`, which can hold hidden-test source. Lines written before
`feedback` existed show the failing test ids and the kit's own problems. Every text taken from the
ledger also goes through a Scrubber built from the stores under DONEGATE_HOME (defence in depth).

`--experiment NAME --html FILE` renders the experiment harness's table instead
(`donegate.report.experiment_page`).
"""

from __future__ import annotations

import array
import collections
import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from donegate.core import scrub as feedback
from donegate.ledger import chain as ledger
from donegate import report
from donegate.errors import DonegateError
from donegate.core.stats import wilson
from donegate.core.util import atomic_write
from donegate.report import page_read
from donegate.report.page_read import TEXT_CHARS, local_scrubber, sealed_requests  # noqa: F401 - the experiment page's too

_dict = report._dict  # a dict, else {}

# Colours of the verdicts this page knows; any other verdict gets NEUTRAL and its own name.
COLOURS = {
    "pass": "#2f9e5b", "block": "#d64545", "gave_up": "#7b3fa0", "error": "#e8830c", "hint": "#e3b505",
    "review_error": "#d97aa6", "unsealed": "#a9b6c4", "appealed": "#3b7dd8", "tamper": "#6d1b1b",
}
NEUTRAL = "#7c8591"
ORDER = ("block", "hint", "error", "gave_up", "tamper", "appealed", "review_error", "pass", "unsealed")
# One character per stop in a session's compact row: the verdict's index in the page's verdict list.
CODES = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Flags after a stop's character: the transcript leaked, the result was cached, a person's label.
LEAK, CACHED, JUSTIFIED, UNJUSTIFIED = "!", "*", "+", "-"
# A person's label: the gate was right (a justified block, a rejected appeal) or wrong.
LABEL_FLAGS = {"justified": JUSTIFIED, "rejected": JUSTIFIED, "unjustified": UNJUSTIFIED, "upheld": UNJUSTIFIED}
# Bytes of JSON the page carries at most: the session rows (the oldest sessions beyond it are counted in
# the summary, not listed), then the per-stop details (feedback texts included). With the page's own
# 40 KB, a page stays under 5 MB whatever the ledger.
ROW_BYTES = 3_200_000
DETAIL_BYTES = 1_300_000
DETAIL_STOPS = 25_000  # stops read again for their details: more than DETAIL_BYTES can hold (50+ bytes each)
DETAIL_BATCH = 2_000  # stops read at a time for their details (by their places; read line by line: all at once)
MIN_ROW = 40  # bytes of JSON a session's row takes at least (its id, the indexes, the marks, the cells)
ROW_GUESS = 80  # bytes a row takes as a rule (a uuid, a few stops): the page reads about this many sessions first


# -------------------------------------------------------------------------------------------------
# The sessions: one pass over the ledger, each stop read by the timeline's code
# -------------------------------------------------------------------------------------------------


_NO_AGENT: dict[str, Any] = {}  # shared by every session without figures (never changed: a session's is replaced)
_DAYS: dict[bytes, str] = {}  # a session's first day, one str a day (tens of thousands of sessions, a few hundred days)


class _Session:
    """One session's row. Its stops are kept in columns (a few tens of bytes a stop, not a tuple of objects):
    `stops` gives them back as (verdict, ref, leak, cached, place) tuples."""

    __slots__ = ("sid", "config", "repo", "first", "last", "verdicts", "refs", "flags", "places", "gave", "cost",
                 "seconds", "line", "agent")

    def __init__(self, sid: str) -> None:
        self.sid, self.config, self.repo, self.first, self.last = sid, "", "", "", ""  # first: its first day
        self.verdicts: list[str] = []  # per stop: its verdict (shared strs),
        self.refs, self.flags = "", ""  # its ref (REF_CHARS each), leak + 2 * cached (one digit each),
        self.places: list[Any] | array.array[int] = []  # and where it lies: (file index, line number) or a `page_read.POSITION` place
        self.gave, self.cost, self.seconds, self.line = False, 0.0, 0.0, 0
        self.agent: dict[str, Any] = _NO_AGENT  # the last stop's `agent` figures: the session's own cost and time so far

    @property
    def stops(self) -> list[tuple[str, str, bool, bool, Any]]:
        n = ledger.REF_CHARS
        return [(v, self.refs[k * n:(k + 1) * n], f in "13", f in "23", w)
                for k, (v, f, w) in enumerate(zip(self.verdicts, self.flags, self.places, strict=True))]


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _num(value: Any) -> float:
    return float(value) if _is_num(value) else 0.0


def _records(files: list[Path], words: tuple[bytes, ...], since: bytes | None,
             wanted: set[tuple[int, int]] | None = None):
    """(where, line, record, canonical time) of each schema-1 line holding one of `words` (and, when
    `wanted` is given, only at those (file index, line number) places); stops before `since` left out."""
    for f, path in enumerate(files):
        for n, line in ledger.read(path):
            if wanted is not None and (f, n) not in wanted:
                continue
            if not any(w in line for w in words):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("v") != ledger.SCHEMA_VERSION:
                continue
            when = None
            if rec.get("event") == "stop":
                when = report.canonical_time(rec.get("time"))
                if when is None or (since is not None and when < since):
                    continue
            yield (f, n), line, rec, when


class _Sessions:
    """The page's sessions and labels, a line at a time (`take`): every stop and label line the old way, or only the
    listed sessions' (`page_read`)."""

    def __init__(self) -> None:
        self.sessions: dict[str, _Session] = {}
        self.labels: dict[str, dict[str, Any]] = {}
        self.order = 0

    def take(self, where: Any, line: bytes, rec: dict[str, Any], when: bytes | None,
             order: int | None = None) -> None:
        """One line: a label or a decision (its stop's flag), or a stop of its session (`order`: where it lies in
        the ledgers; None: counted here)."""
        labels, event = self.labels, rec.get("event")
        if event == "label" or (event == "decision" and rec.get("label")):  # an appeal's decision is its label
            if isinstance(rec.get("ref"), str) and isinstance(rec.get("label"), str) and rec["label"]:
                mark = labels.setdefault(rec["ref"][: ledger.REF_CHARS], {"label": "", "note": ""})
                mark.update(label=rec["label"], note=str(rec.get("note") or ""))
        if event == "decision":  # a person's approve / reject of an appeal or a hand-over
            if isinstance(rec.get("ref"), str) and isinstance(rec.get("decision"), str):
                mark = labels.setdefault(rec["ref"][: ledger.REF_CHARS], {"label": "", "note": ""})
                mark["decision"] = {"approve": "approved", "reject": "rejected"}.get(rec["decision"], rec["decision"]) + (
                    f": {rec['note']}" if rec.get("note") else "")
            return
        sid, verdict = rec.get("session"), rec.get("verdict")
        if event != "stop" or not (isinstance(sid, str) and sid and isinstance(verdict, str)) or when is None:
            return
        gates = _dict(rec.get("gates"))
        accept = _dict(gates.get("acceptance"))
        self.add(sid, verdict, ledger.stop_ref(line), bool(gates.get("leak")), bool(rec.get("cached") or accept.get("cached")),
                 where, rec["config"] if isinstance(rec.get("config"), str) else "(none)",
                 rec["repo"] if isinstance(rec.get("repo"), str) else "", when, report.review_cost(gates.get("review")),
                 _num(rec.get("duration")), report.agent_of(rec), order)

    def add(self, sid: str, verdict: str, ref: str, leak: bool, cached: bool, where: Any, config: str,
            repo: str, when: bytes, cost: float, seconds: float, agent: dict[str, Any], order: int | None) -> None:
        """One stop of session `sid`, its fields read."""
        self.order += 1
        s = self.sessions.get(sid)
        if s is None:
            s = self.sessions[sid] = _Session(sid)
            s.first = _DAYS.get(when[:10]) or _DAYS.setdefault(when[:10], when[:10].decode())  # only its day is shown
            if order is not None:  # `page_read` places are ints: 8 bytes a stop, not an int object and a list slot
                s.places = array.array("Q")
        s.verdicts.append(verdict)
        s.refs += ref.ljust(ledger.REF_CHARS)[: ledger.REF_CHARS]
        s.flags += "0123"[leak + 2 * cached]
        s.places.append(where)
        s.config, s.repo = config, repo
        s.last, s.line = when.decode(), self.order if order is None else order
        s.gave = s.gave or verdict == "gave_up"
        s.cost += cost
        s.seconds += seconds
        s.agent = agent or s.agent


def read_sessions(files: list[Path], since: bytes | None = None) -> tuple[dict[str, _Session], dict[str, dict]]:
    """(sessions by id in ledger order, latest label by stop ref) from every stop and label line.

    A session keeps one small tuple per stop; the stops' details are read again, for the sessions the
    page shows first only, by `read_details` (memory stays with the number of stops, not their text)."""
    out = _Sessions()
    for where, line, rec, when in _records(files, (b'"stop"', b'"label"', b'"decision"'), since):
        out.take(where, line, rec, when)
    return out.sessions, out.labels


def read_details(files: list[Path], wanted: set[tuple[int, int]]) -> dict[tuple[int, int], tuple[dict[str, Any], str]]:
    """(the timeline's stop, the line's `feedback`) of each stop at a wanted place (file index, line number), read by
    the timeline's own code (`report.timeline_stop`)."""
    return {where: _details(line, rec) for where, line, rec, _ in _records(files, (b'"stop"',), None, wanted)}


def _details_at(files: list[Path], wanted: set[int]) -> dict[int, tuple[dict[str, Any], str]]:
    """`read_details` of the stops at `page_read.POSITION` places."""
    return {where: _details(line, rec) for where, line, rec in page_read.lines_at(files, wanted)}


def _details(line: bytes, rec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    stop = report.timeline_stop(rec, line, {})
    gates = _dict(rec.get("gates"))
    scope = _dict(gates.get("scope"))
    stop["scope_duration"] = scope.get("duration") if _is_num(scope.get("duration")) else None
    accept = _dict(gates.get("acceptance"))
    stop["tamper"] = accept.get("tamper") if isinstance(accept.get("tamper"), dict) else None  # the confined run's
    stop["said"] = rec.get("said") if isinstance(rec.get("said"), str) else ""  # the agent's last message
    shown = rec.get("feedback")
    return stop, shown if isinstance(shown, str) else ""


def _agent_cells(agent: dict[str, Any]) -> list[Any]:
    """The agent's own cost (None: no figure; "?": a model the price table does not know) and time of a session."""
    usd = (round(agent["usd"], 4) if _is_num(agent.get("usd")) else "?") if "usd" in agent else None
    return [usd, round(agent["seconds"], 1) if _is_num(agent.get("seconds")) else None]


def left_for_person(s: _Session, decided: dict[bytes, bytes] | None = None) -> bool:
    """The report's rule (gave up, or the last stop failing, and no person decided it since), and a last
    verdict it does not know."""
    code = report.verdict_code(s.verdicts[-1])
    when = (decided or {}).get(s.sid.encode())
    if when is not None and not (s.last.encode() > when and code in report.FAILING):
        return False
    return s.gave or code is None or code in report.FAILING


def _stop_text(verdict: str, stop: dict[str, Any], shown: str, scrub: feedback.Scrubber) -> str:
    """What the agent was shown at this stop, as best the line allows."""
    if shown:
        return feedback.capped(scrub(shown), TEXT_CHARS, "feedback")
    if verdict not in ("block", "hint", "error"):
        return ""
    ids = [str(f.get("id")) for f in stop["failing"] if f.get("id")]
    parts = ["(this line predates the ledger's `feedback` field: the failing tests and the kit's problems "
             "as recorded; the assertions the agent read are not shown)"]
    parts += [f"- {p}" for p in stop["problems"]]
    parts += [f"- {i}" for i in ids]
    return feedback.capped(scrub("\n".join(parts)), TEXT_CHARS, "failures")


def _detail(verdict: str, stop: dict[str, Any], shown: str, scrub: feedback.Scrubber, text_ids: dict[str, int],
            texts: list[str], label: dict | None) -> tuple[dict[str, Any], int]:
    """One stop's details for the page, and the bytes they add (new texts included)."""
    text = _stop_text(verdict, stop, shown, scrub)
    size = 0
    tid = -1
    if text:
        tid = text_ids.get(text, -1)
        if tid < 0:
            tid = text_ids[text] = len(texts)
            texts.append(text)
            size += len(json.dumps(text))
    acc, rev = stop["acceptance"] or {}, stop["review"]
    d: dict[str, Any] = {"n": stop["stop"], "t": stop["time"], "ref": stop["ref"], "d": stop["duration"]}
    if acc:
        d.update(p=acc.get("passed"), of=acc.get("total"), ad=acc.get("duration"))
    if stop["scope_duration"] is not None:
        d["sd"] = stop["scope_duration"]
    if rev:
        d.update(rc=rev["cost_usd"], rd=rev["duration"], rv=rev["verdict"])
        findings = [report.finding_text(f) for f in rev["findings"]][:20]
        if findings:
            d["rf"] = [scrub(f) for f in findings]
    appeal = stop.get("appeal")
    if isinstance(appeal, dict):
        tests = ", ".join(str(t) for t in appeal.get("failing") or [] if isinstance(t, str))
        d["ap"] = scrub((f"accepted (against {tests}): " if appeal.get("accepted") else
                         f"refused ({appeal.get('refused')}): ") + str(appeal.get("reason") or ""))
    if stop.get("tamper"):
        changed = ", ".join(str(c) for c in stop["tamper"].get("changed") or [])[:300]
        d["tm"] = scrub(f"{stop['tamper'].get('what') or 'the code under test tampered with the hidden run'}"
                        + (f" (changed: {changed})" if changed else ""))
    if stop.get("blocked_by"):
        d["by"] = scrub(stop["blocked_by"])  # the finding or tripwire that blocked, by name
    if isinstance(stop["breaker"], dict):
        d["br"] = scrub("; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in stop["breaker"].items()))
    if stop["leak"]:
        leak = stop["leak"]
        d["lk"] = (f"the transcript shows hidden-test content: {leak.get('paths', 0)} store path(s), "
                   f"{leak.get('source_lines', 0)} source line(s)") if isinstance(leak, dict) else "the transcript shows hidden-test content"
    if tid >= 0:
        d["f"] = tid
    if stop.get("said"):
        d["sa"] = feedback.capped(scrub(stop["said"]), TEXT_CHARS, "message")
    if label and label["label"]:
        d["lb"] = label["label"]
        if label["note"]:
            d["ln"] = scrub(label["note"])
    if label and label.get("decision"):
        d["dc"] = scrub(label["decision"])
    return d, size + len(json.dumps(d))


def page_data(files: list[Path], since: bytes | None = None, jobs: int = 1, budget: int = DETAIL_BYTES,
              row_budget: int = ROW_BYTES, root: Path | None = None, by: str = "config", keep: bool = False) -> dict[str, Any]:
    """Everything the page shows, aggregated: the report's summary plus one compact row per session. `keep`: the
    summary reads only what was added since the last report (`report.resume`)."""
    from donegate.report import resume
    from donegate.report.summary import read_and_summarize, summarize_and_decisions

    scrub = local_scrubber(root)
    # With nothing new since the last page, its data are the ones kept then (`resume.keep_finished`): the ledgers are
    # marked before and after they are read, and a page is kept or taken only when nothing moved in between.
    shape = [budget, row_budget, by, scrub.key]
    at = resume.mark(files, shape) if keep and since is None else None
    kept = resume.finished(files, "page", at)
    if kept is not None:
        summary, made = summarize_and_decisions(files, by=by, jobs=jobs, keep=keep)
    else:
        summary, made, merged = read_and_summarize(files, by=by, since=since, jobs=jobs, keep=keep,
                                                   page=0 if since is not None else row_budget // MIN_ROW + 1)
    if at and resume.mark(files, shape) != at:
        at = None
    if kept is not None and at:  # its keys in the order they were made (the page's JSON is byte for byte the same)
        requests = sealed_requests(set(kept.pop("repo_names")), scrub, root)
        return {**kept, "summary": summary, "requests": [requests.get(r, "") for r in kept["repos"]]}
    if kept is not None:  # the ledger moved while it was read: read it again, for the page's sessions too
        summary, made, merged = read_and_summarize(files, by=by, since=since, jobs=jobs, keep=keep,
                                                   page=row_budget // MIN_ROW + 1)
    data = _page_rows(files, since, budget, row_budget, root, summary, made, merged, scrub)
    if at:
        resume.keep_finished(files, "page", at, {**data, "summary": None, "requests": None})  # both made again at each page
    data.pop("repo_names")
    return data


def _page_rows(files: list[Path], since: bytes | None, budget: int, row_budget: int, root: Path | None,
               summary: dict[str, Any], made: dict[str, dict], merged: list, scrub: feedback.Scrubber) -> dict[str, Any]:
    """`page_data` from the report's reading: the sessions' rows and the first sessions' details."""
    most = row_budget // MIN_ROW + 1  # more sessions than the page can list
    decided = report.decided_sessions(files, made)
    listing = min(most, row_budget // ROW_GUESS + 1)  # the sessions read whole: about as many as the page lists
    ranked, spans, spill = page_read.listed(merged, files, most) if since is None else ([], array.array("Q"), {})
    for _, _, part in merged:
        part.page = b""  # its sessions are in `ranked`
    while True:
        got = page_read.sessions(files, summary, merged, ranked[:listing], spans, spill, _Sessions()) if since is None else None
        if got is None:  # every line read again (`--since`, or a line the report skipped: `page_read`)
            sessions, labels = read_sessions(files, since)
            seen = collections.Counter(v for s in sessions.values() for v in s.verdicts)
            days = sorted({d for s in sessions.values() for d in (s.first[:10], s.last[:10])})
            configs = sorted({s.config for s in sessions.values()})
            repo_names = {s.repo for s in sessions.values()}
        else:
            sessions, labels, seen, days, configs, repo_names = got
        ordered: list[Any] = sorted(sessions.values(), key=lambda s: (not left_for_person(s, decided), -s.line))
        sessions.clear()  # `ordered` holds them alone: a session is let go once its row is made (below)
        n_sessions, stops_before = len(ordered), 0
        verdicts = [v for v in ORDER if seen[v]] + sorted(v for v in seen if v not in ORDER)
        index = {v: i for i, v in enumerate(verdicts[: len(CODES)])}
        cindex = {c: i for i, c in enumerate(configs)}
        dindex = {d: i for i, d in enumerate(days)}
        repos = sorted({scrub(r) for r in repo_names})
        rindex = {r: i for i, r in enumerate(repos)}
        rows: list[list[Any]] = []
        row_bytes = 0
        for k, s in enumerate(ordered):
            codes = []
            for verdict, ref, leak, cached, _ in s.stops:
                label = labels.get(ref)
                codes.append(CODES[index.get(verdict, len(CODES) - 1)] + (LEAK if leak else "") + (CACHED if cached else "")
                             + (LABEL_FLAGS.get(label["label"], "") if label else ""))
            row = [s.sid, cindex[s.config], rindex[scrub(s.repo)], dindex[s.first[:10]], dindex[s.last[:10]], "".join(codes),
                   1 + s.gave if left_for_person(s, decided) else 0, round(s.cost, 4), round(s.seconds, 1), -1,
                   s.last[11:16], *_agent_cells(s.agent)]
            row_bytes += len(json.dumps(row, separators=(",", ":"))) + 1
            if row_bytes > row_budget:
                break
            rows.append(row)
            # Only the first sessions, up to DETAIL_STOPS stops, can get details: the rest go now (their memory makes
            # the rows and details; the page's peak is its listed sessions once, not them and their rows).
            if stops_before >= DETAIL_STOPS:
                ordered[k] = None
            stops_before += len(s.verdicts)
        del ordered[len(rows):]
        # Read too few sessions to fill the page (rows shorter than guessed): read more of them.
        if got is None or row_bytes > row_budget or n_sessions >= summary["total"]["sessions"] or listing >= most:
            break
        listing = min(most, listing * 3)
    requests = sealed_requests(repo_names, scrub, root)
    texts: list[str] = []
    text_ids: dict[str, int] = {}
    # Details for the first sessions, up to more stops than the budget can hold, read a batch of sessions at a time
    # (until the budget is spent: memory for what the page holds, not for DETAIL_STOPS stops).
    details: list[Any] = []
    used = count = k = 0
    while k < len(rows) and used < budget and count < DETAIL_STOPS:
        batch = ordered[k: k + 1]
        stops = len(batch[0].verdicts)
        while k + len(batch) < len(rows) and (stops < DETAIL_BATCH or got is None) and count + stops < DETAIL_STOPS:
            batch.append(ordered[k + len(batch)])
            stops += len(batch[-1].verdicts)
        found = (read_details if got is None else _details_at)(files, {where for s in batch for where in s.places})
        for s in batch:
            if used < budget and all(where in found for where in s.places):
                shown = []
                for verdict, ref, _, _, where in s.stops:
                    d, size = _detail(verdict, *found[where], scrub, text_ids, texts, labels.get(ref))
                    shown.append(d)
                    used += size
                rows[k][9] = len(details)
                details.append(shown)
            k += 1
        count += stops
    stops_by_verdict = {v: seen[v] for v in verdicts}
    return {"summary": summary, "verdicts": verdicts, "colours": [COLOURS.get(v, NEUTRAL) for v in verdicts],
            "configs": configs, "repos": repos,
            "requests": [requests.get(r, "") for r in repos], "days": days, "rows": rows, "details": details, "texts": texts,
            "stops_by_verdict": stops_by_verdict, "detail_sessions": len(details),
            "sessions": n_sessions if got is None else summary["total"]["sessions"], "stops": sum(seen.values()),
            "repo_names": sorted(repo_names)}


# -------------------------------------------------------------------------------------------------
# Rendering
# -------------------------------------------------------------------------------------------------

E = html.escape


def _asset(name: str) -> str:
    return resources.files("donegate").joinpath("html").joinpath(name).read_text(encoding="utf-8")  # one name a call: 3.10


def _json_for_script(value: Any) -> str:
    """JSON safe inside <script>: no `<`, `>` or `&` left to end the element or open a comment."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c").replace(
        ">", "\\u003e").replace("&", "\\u0026")


CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _page(title: str, body: str, script: str = "") -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{E(title)}</title><style>{_asset('page.css')}</style></head>"
            f"<body>{body}{script}</body></html>\n")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def pct(k: float, n: float) -> str:
    """k/n as a percentage a person can trust: whole numbers, one decimal where rounding would show 0%
    or 100% for a rate that is neither."""
    x = 100 * k / n
    text = f"{x:.0f}"
    if (text == "100" and k < n) or (text == "0" and k > 0):
        text = f"{min(99.9, max(0.1, round(x, 1))):.1f}"
    return text + "%"


def rate_bar(k: int, n: int, colour: str = "#2f9e5b") -> str:
    """A rate as a bar, its 95% Wilson interval as a whisker, and the numbers."""
    if not n:
        return '<span class="muted">-</span>'
    low, high = wilson(k, n)
    p = k / n
    title = f"{k} of {n} = {100 * p:.1f}%, 95% interval {100 * low:.1f}% to {100 * high:.1f}%"
    return (f'<div class="rate" title="{E(title)}"><svg class="bar" viewBox="0 0 100 14" preserveAspectRatio="none" '
            f'aria-hidden="true"><rect class="track" x="0" y="2" width="100" height="10" rx="2"/>'
            f'<rect x="0" y="2" width="{100 * p:.2f}" height="10" rx="2" fill="{colour}"/>'
            f'<line class="ci" x1="{100 * low:.2f}" x2="{100 * high:.2f}" y1="7" y2="7"/>'
            f'<line class="ci" x1="{100 * low:.2f}" x2="{100 * low:.2f}" y1="3" y2="11"/>'
            f'<line class="ci" x1="{100 * high:.2f}" x2="{100 * high:.2f}" y1="3" y2="11"/></svg>'
            f'<span class="num">{pct(k, n)}</span><span class="ci-text">{pct(low, 1)[:-1]}-{pct(high, 1)}</span>'
            f'<span class="kn">{k:,}/{n:,}</span></div>')


def _money(x: Any) -> str:
    return "-" if x is None else f"${x:,.2f}" if x >= 1 else f"${x:.4f}".rstrip("0").rstrip(".") if x else "$0"


def _secs(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}s" if x < 100 else f"{x / 60:.1f} min"


def _agent_money(g: dict[str, Any]) -> str:
    """The agent's cost per session, and the sessions on a model the price table does not know (never $0)."""
    unpriced = g.get("agent_sessions_unpriced") or 0
    return _money(g.get("agent_cost_per_session_usd")) + (f" +{unpriced} unpriced" if unpriced else "")


def summary_table(summary: dict[str, Any]) -> str:
    by = summary["by"]
    head = (f"<tr><th>{'configuration' if by == 'config' else E(by)}</th><th>sessions</th><th>ended passing <small>(95% interval)</small></th>"
            "<th>requirements met <small>(95% interval)</small></th><th>stops</th><th>blocks</th>"
            "<th>justified / unjustified</th><th>gave up</th><th>agent cost / session <small>(the gate's)</small></th>"
            "<th>agent time / session <small>(the gate's)</small></th>"
            "<th>left for a person</th>")
    appeals = bool(summary["total"].get("appeals"))  # the column only where there were appeals
    head += "<th>appeals <small>(upheld / rejected)</small></th></tr>" if appeals else "</tr>"
    rows = []
    groups = summary["groups"] + ([{by: "all", **summary["total"]}] if len(summary["groups"]) > 1 else [])
    for g in groups:
        total = len(summary["groups"]) > 1 and g is groups[-1]
        extra = (f'<td class="n">{g.get("appeals", 0):,}<span class="muted"> ({g.get("appeals_upheld", 0):,} / '
                 f'{g.get("appeals_rejected", 0):,})</span></td>') if appeals else ""
        rows.append(
            f'<tr class="{"total" if total else "cfg"}" data-{by}="{E(g[by])}"><th scope="row">{E(g[by])}</th>'
            f'<td class="n">{g["sessions"]:,}</td><td>{rate_bar(g["ended_passing"], g["sessions"])}</td>'
            f'<td>{rate_bar(g["requirements_passed"], g["requirements_sealed"], "#3b7dd8")}</td>'
            f'<td class="n">{g["stops"]:,}</td><td class="n">{g["blocks"]:,}</td>'
            f'<td class="n">{g["justified"]:,} / {g["unjustified"]:,}<span class="muted"> ({g["unlabelled"]:,} unlabelled)</span></td>'
            f'<td class="n">{g["gave_up"]:,}</td><td class="n">{_agent_money(g)}<span class="muted"> '
            f'({_money(g["cost_per_session_usd"])})</span></td><td class="n">{_secs(g.get("agent_seconds_per_session"))}'
            f'<span class="muted"> ({_secs(g["seconds_per_session"])})</span></td>'
            f'<td class="n{" warn" if g["left_for_person"] else ""}">{g["left_for_person"]:,}</td>{extra}</tr>')
    return f'<table class="summary" id="summary"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _notes(summary: dict[str, Any]) -> str:
    lines = report.notes(summary)
    return "".join(f'<p class="note">{E(n)}</p>' for n in lines)


def _inside(summary: dict[str, Any], scrub: feedback.Scrubber) -> str:
    """The kit's own commands run from inside a Claude Code session, above everything else."""
    lines = report.inside_lines(summary)
    if not lines:
        return ""
    items = "".join(f"<li>{E(scrub(x.strip()))}</li>" for x in lines[1:] if x.strip())
    return f'<section class="inside" id="inside"><h2>{E(lines[0])}</h2><ul>{items}</ul></section>'


def render_page(data: dict[str, Any], scrub: feedback.Scrubber | None = None) -> str:
    scrub = scrub or local_scrubber()
    s = data["summary"]
    t = s["total"]
    title = f"donegate report: {t['sessions']:,} sessions, {t['stops']:,} stops"
    ledgers = ", ".join(Path(p).name for p in s["ledgers"])
    omitted = data["sessions"] - len(data["rows"])
    listed = "" if not omitted else (
        f' <b id="omitted">The page lists the first {len(data["rows"]):,} sessions in this order; the {omitted:,} older ones '
        f'are in the counts above but not listed</b> (<code>--since</code> narrows the ledger).')
    shown = listed + ("" if data["detail_sessions"] >= len(data["rows"]) else
        f' Stop details (feedback, timings) are in this page for the first {data["detail_sessions"]:,} sessions in this '
        f'order; for the others, <code>donegate report --session ID</code> prints them.')
    tiles = "".join(f'<div class="tile{" alert" if warn else ""}"><b>{E(v)}</b><span>{E(k)}</span></div>' for k, v, warn in (
        ("sessions", f"{t['sessions']:,}", False), ("stops", f"{t['stops']:,}", False), ("blocks", f"{t['blocks']:,}", False),
        ("ended passing", pct(t["ended_passing"], t["sessions"]) if t["sessions"] else "-", False),
        ("requirements met", pct(t["requirements_passed"], t["requirements_sealed"]) if t["requirements_sealed"] else "-", False),
        ("gave up", f"{t['gave_up']:,}", bool(t["gave_up"])),
        ("left for a person", f"{s['left_for_person']['count']:,}", bool(s["left_for_person"]["count"])),
        ("cost", _money(t["cost_usd"]), False)))
    body = (
        f'<header><h1>donegate report</h1><p class="sub">{E(scrub(ledgers))} · {s["lines"]:,} lines'
        f'{" · since " + E(s["since"]) if s["since"] else ""}</p></header>'
        f'{_inside(s, scrub)}'
        f'<section class="tiles" id="tiles">{tiles}</section>'
        f'<section><h2>By configuration</h2>{summary_table(s)}'
        f'<p class="hint">Bars: the rate; whiskers: its 95% Wilson interval. Requirements met counts the sealed tests '
        f'passing at each session\'s last stop (tests of one session are not independent trials: read the interval as a guide).</p>'
        f'{_notes(s)}</section>'
        f'<section><h2>Sessions <span id="count" class="count"></span></h2>'
        f'<p class="hint">Sessions left for a person first, then the latest. Each mark is a stop, coloured by its verdict; '
        f'click one for what the agent was shown.{shown}</p>'
        f'<div id="filters" class="filters"></div><div id="legend" class="legend"></div>'
        f'<table class="sessions" id="sessions"><thead><tr><th></th><th>session</th><th>configuration</th><th>repository</th>'
        f'<th>last stop (UTC)</th><th>stops</th><th class="n">blocks</th><th class="n">agent cost (gate)</th><th class="n">agent time (gate)</th>'
        f'</tr></thead><tbody id="rows"></tbody></table>'
        f'<div class="more"><button id="more" type="button">show more</button></div></section>'
        f'<aside id="detail" class="detail" hidden></aside>'
        f'<footer>Written by <code>donegate report --html</code>. Self-contained: no request leaves this page.</footer>')
    payload = {k: data[k] for k in ("verdicts", "colours", "configs", "repos", "requests", "days", "rows", "details", "texts",
                                    "stops_by_verdict", "sessions", "stops")}
    script = (f'<script id="data" type="application/json">{_json_for_script(payload)}</script>'
              f"<script>{_asset('page.js')}</script>")
    return _page(title, body, script)


def write(path: Path, text: str) -> None:
    """Write the page whole: a temporary name, then a rename (a reader never sees half a page)."""
    path = path.expanduser()
    if path.is_dir():
        raise DonegateError(f"--html {path} is a folder", "give a file name, e.g. report.html")
    if not path.parent.is_dir():
        raise DonegateError(f"--html {path}: no folder {path.parent}", "create it first, or write the page elsewhere")
    atomic_write(path, text)
