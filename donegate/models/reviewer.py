"""Reviewers: a model's judgment of the change, after the tests pass. Evidence, not a fact.

Two shapes (`review_mode`):

- `pair`: reviewers A and B, each a headless `claude -p` (`model.run`) with `reviewer/prompt.md`,
  read-only tools and `reviewer/schema.json`, run at the same time in two threads (each run is its own
  subprocess, so the pair costs about the wall time of one). Their findings are merged (`merge`), and
  the verdict blocks if any blocking finding remains.
- `critic`: reviewer A, then critic B (`reviewer/critic.md`, `reviewer/critic_schema.json`), which
  stamps each of A's findings `confirmed` or `rejected`; only a confirmed blocking finding blocks.

Verdicts: `block` when a healthy reviewer's blocking finding stands (a crashed partner does not cancel
real evidence); otherwise `error` when any run failed (timed out, hit its turn bound, answered without
`structured_output`, or answered something that is not a review): a failed review never passes as an
approval; otherwise `approve`. The whole review is bounded by `review_timeout`.

`review()` returns the dict the ledger carries as `gates.review`; `donegate review` is `commands/review.py`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from donegate.core import kit as installation
from donegate.errors import DonegateError

ASSETS = installation.kit_dir("reviewer")  # the kit's own; donegate.yaml's `prompts` can replace each file
TOOLS = ["Read", "Grep", "Glob"]
SEVERITIES = ("blocking", "minor")
MAX_DIFF_CHARS = 150_000  # about 40k tokens; a longer diff is cut, and the reviewers are told to read the files
CRITIC_SHARE = 0.6  # of review_timeout for reviewer A in critic mode; the critic gets what is left
JOIN_GRACE = 15.0  # seconds past its own timeout before a run that never returned counts as lost
# Two findings are "the same" (see `same_finding`) within this many lines, or with summaries this alike.
NEAR_LINES = 3
SIMILAR_SUMMARY = 0.5
NO_REQUEST = "(no request was recorded)"
_COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)
_WORD = re.compile(r"[a-z0-9_]{3,}")


# --------------------------------------------------------------------------------------------------
# The files users edit
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Assets:
    prompt: str
    schema: dict[str, Any]
    critic: str
    critic_schema: dict[str, Any]


def load_assets(directory: Path | None = None, override: str | None = None) -> Assets:
    """The four files from `directory`, else each from the person's `prompts` folder or the kit's."""
    def where(name: str) -> Path:
        return directory / name if directory is not None else installation.file("reviewer", name, override)

    def text(name: str) -> str:
        try:
            return where(name).read_text(encoding="utf-8")
        except OSError as exc:
            raise DonegateError(f"cannot read the reviewer file {where(name)}: {exc.strerror}",
                                installation.restore(f"reviewer/{name}")) from None

    def schema(name: str) -> dict[str, Any]:
        try:
            data = json.loads(text(name))
        except ValueError as exc:
            raise DonegateError(f"{where(name)} is not valid JSON ({exc})", "fix the JSON syntax") from None
        if not isinstance(data, dict) or data.get("type") != "object":
            raise DonegateError(f"{where(name)} must be a JSON schema of an object (\"type\": \"object\")")
        return data

    return Assets(text("prompt.md"), schema("schema.json"), text("critic.md"), schema("critic_schema.json"))


def fill(template: str, values: dict[str, str]) -> str:
    """`{{name}}` placeholders filled; one the user deleted is appended, so nothing is ever left out."""
    text = _COMMENT.sub("", template)
    for name, value in values.items():
        mark = "{{" + name + "}}"
        if mark in text:
            text = text.replace(mark, value)
        else:
            text += f"\n\n## {name}\n\n{value}\n"
    return text


def cap_diff(diff: str, limit: int = MAX_DIFF_CHARS) -> tuple[str, bool]:
    if len(diff) <= limit:
        return diff or "(no changes)", False
    return (diff[:limit] + f"\n... (diff cut at {limit} of {len(diff)} characters: "
            "read the changed files in the repository for the rest)\n"), True


# --------------------------------------------------------------------------------------------------
# Reading answers
# --------------------------------------------------------------------------------------------------


def _run_facts(run: Any, role: str) -> dict[str, Any]:
    return {"role": role, "approve": None, "findings": [], "turns": run.turns, "cost_usd": run.cost_usd,
            "duration": round(run.duration, 3), "error": "", "subtype": run.subtype, "model": run.model}


def _run_error(run: Any) -> str:
    """Why a run gave no usable answer, or "" when it did."""
    if not run.ok:
        return run.error or run.subtype or "the run failed"
    if not isinstance(run.structured, dict):
        return "no structured_output (the model answered in text)"
    return ""


def _finding(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    severity = str(raw.get("severity", "")).lower()
    line = raw.get("line")
    return {
        "severity": severity if severity in SEVERITIES else "blocking",  # an unknown severity is not waved through
        "file": str(raw.get("file") or "").strip(),
        "line": line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else 0,
        "summary": str(raw.get("summary") or "").strip(),
        "evidence": str(raw.get("evidence") or "").strip(),
    }


def read_review(run: Any, role: str) -> dict[str, Any]:
    """A reviewer's entry for the ledger: its verdict, findings, turns, cost, time, or its error."""
    entry = _run_facts(run, role)
    entry["error"] = _run_error(run)
    if entry["error"]:
        return entry
    data = run.structured
    findings = data.get("findings")
    if not isinstance(data.get("approve"), bool) or not isinstance(findings, list):
        entry["error"] = "the answer is not a review (needs approve and findings)"
        return entry
    entry["approve"] = data["approve"]
    entry["findings"] = [f for f in map(_finding, findings) if f is not None]
    return entry


def read_stamps(run: Any, count: int) -> dict[str, Any]:
    """The critic's entry: `stamps` by index (1..count); out-of-range or repeated stamps are kept aside."""
    entry = _run_facts(run, "critic")
    entry.update(stamps={}, ignored=[])
    entry["error"] = _run_error(run)
    if entry["error"]:
        return entry
    stamps = run.structured.get("stamps")
    if not isinstance(stamps, list):
        entry["error"] = "the answer holds no stamps"
        return entry
    for stamp in stamps:
        index = stamp.get("index") if isinstance(stamp, dict) else None
        status = stamp.get("status") if isinstance(stamp, dict) else None
        if (not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= count
                or status not in ("confirmed", "rejected") or index in entry["stamps"]):
            entry["ignored"].append(stamp)
            continue
        entry["stamps"][index] = {"status": status, "reason": str(stamp.get("reason") or "")}
    return entry


# --------------------------------------------------------------------------------------------------
# Merging (pair) and stamping (critic)
# --------------------------------------------------------------------------------------------------


def _path(file: str) -> str:
    file = file.strip().replace("\\", "/")
    return file[2:] if file.startswith("./") else file


def _same_file(a: str, b: str) -> bool:
    """Equal paths, also when one is cited the way the diff names it ("a/x" or "b/x" for "x")."""
    a, b = _path(a), _path(b)
    return a == b or any(x == f"{side}/{y}" for x, y in ((a, b), (b, a)) for side in "ab")


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of the words (3+ characters) of two summaries: 0 to 1."""
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def same_finding(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two reviewers' findings name the same problem.

    Same file ("./x", and "a/x" or "b/x" as the diff names it, equal to "x") and, when both give a line, lines at most
    NEAR_LINES apart: two reviewers pointing at one defect cite the same file and nearly the same line
    (one the `if`, the other the statement under it) but word it differently, so a line match is
    trusted over wording. Without a line on both sides only the words remain, and the summaries must
    share at least half their words. A wrong merge loses nothing: the merged finding keeps the other
    summary under `also` and the graver severity.
    """
    if not _same_file(a["file"], b["file"]):
        return False
    if a["line"] and b["line"]:
        return abs(a["line"] - b["line"]) <= NEAR_LINES
    return similarity(a["summary"], b["summary"]) >= SIMILAR_SUMMARY


def merge(per_reviewer: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One list of findings; a finding reported by several reviewers is counted once.

    Only findings of different reviewers are merged: one reviewer listing two findings a line apart
    meant two. Each finding takes the closest still-unmatched finding of an earlier reviewer.
    """
    merged: list[dict[str, Any]] = []
    for role, findings in per_reviewer:
        for f in findings:
            candidates = [m for m in merged if role not in m["reviewers"] and same_finding(m, f)]
            if not candidates:
                merged.append({**f, "file": _path(f["file"]), "reviewers": [role]})
                continue
            m = min(candidates, key=lambda c: (abs(c["line"] - f["line"]), -similarity(c["summary"], f["summary"])))
            m["reviewers"].append(role)
            if f["severity"] == "blocking":
                m["severity"] = "blocking"
            if f["summary"] and f["summary"] != m["summary"]:
                m.setdefault("also", []).append(f["summary"])
    return merged


def stamp(findings: list[dict[str, Any]], stamps: dict[int, dict[str, str]]) -> list[dict[str, Any]]:
    """A's findings with the critic's stamp on each (`unstamped` when the critic skipped one)."""
    out = []
    for n, f in enumerate(findings, 1):
        s = stamps.get(n) or {"status": "unstamped", "reason": ""}
        out.append({**f, "file": _path(f["file"]), "reviewers": ["A"], "status": s["status"], "reason": s["reason"]})
    return out


def standing(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Findings that stand: all of a pair's, only the confirmed ones after a critic."""
    return [f for f in result["findings"] if f.get("status", "confirmed") == "confirmed"]


def blocking(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in standing(result) if f["severity"] == "blocking"]


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------


def name(role: str) -> str:
    return role if role == "critic" else f"reviewer {role}"


def _render_findings(findings: list[dict[str, Any]]) -> str:
    """The critic's numbered list (numbers are the stamps' `index`)."""
    return "\n".join(f"{n}. {describe_finding(f)}" for n, f in enumerate(findings, 1))


class _Lost:
    """Stands in for a ModelRun when a thread never came back (model.run overran its own timeout)."""

    ok, subtype, structured, text, turns, cost_usd, model, raw = False, "lost", None, "", 0, 0.0, None, None

    def __init__(self, duration: float, error: str) -> None:
        self.duration, self.error = duration, error


def run_parallel(jobs: list[Callable[[], Any]], timeout: float) -> list[Any]:
    """Call each job in its own daemon thread; results in order. A job still running `timeout` +
    JOIN_GRACE seconds later (or one that raised) becomes a failed run: the review never waits on it,
    and a daemon thread never keeps the hook's process alive."""
    results: list[Any] = [None] * len(jobs)
    t0 = time.monotonic()

    def call(i: int) -> None:
        try:
            results[i] = jobs[i]()
        except Exception as exc:  # model.run should not raise; if it does, that run failed
            results[i] = _Lost(time.monotonic() - t0, f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=call, args=(i,), daemon=True, name=f"donegate-review-{i}") for i in range(len(jobs))]
    for t in threads:
        t.start()
    deadline = t0 + timeout + JOIN_GRACE
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return [r if r is not None else _Lost(time.monotonic() - t0, f"no answer within {timeout:.0f} s") for r in results]


def review(
    repo: Path,
    request: str,
    base: str,
    cfg: dict[str, Any],
    *,
    timeout: float | None = None,
    mode: str | None = None,
    diff: str | None = None,
    run_model: Callable[..., Any] | None = None,
    assets: Assets | None = None,
) -> dict[str, Any]:
    """Review the change of `repo` since `base` against `request`; the ledger-ready result.

    `diff` defaults to `git.diff(repo, base)` (untracked files included); `run_model` to `model.run`.
    """
    t0 = time.monotonic()
    mode = mode or cfg["review_mode"]
    timeout = float(timeout if timeout is not None else cfg["review_timeout"])
    assets = assets or load_assets(override=cfg.get("prompts"))
    if diff is None:
        from donegate.tree import git

        diff = git.diff(repo, base)
    if run_model is None:
        from donegate.claude import headless as model

        run_model = model.run
    shown, cut = cap_diff(diff)
    request = request or NO_REQUEST
    opts = {"cwd": repo, "tools": TOOLS, "max_turns": cfg["reviewer"]["max_turns"], "model": cfg["reviewer"]["model"]}

    def job(role: str, prompt: str, schema: dict[str, Any], budget: float) -> Callable[[], Any]:
        return lambda: run_model(prompt, schema=schema, timeout=budget, purpose=name(role), **opts)

    def reviewer(role: str, budget: float) -> Callable[[], Any]:
        return job(role, fill(assets.prompt, {"role": name(role), "request": request, "diff": shown}), assets.schema, budget)

    if mode == "pair":
        runs = run_parallel([reviewer("A", timeout), reviewer("B", timeout)], timeout)
        entries = [read_review(run, role) for run, role in zip(runs, "AB", strict=False)]
        findings = merge([(e["role"], e["findings"]) for e in entries if not e["error"]])
    elif mode == "critic":
        (run_a,) = run_parallel([reviewer("A", timeout * CRITIC_SHARE)], timeout * CRITIC_SHARE)
        entries = [read_review(run_a, "A")]
        findings = []
        found = entries[0]["findings"]
        if found:  # nothing to stamp: no critic run
            left = timeout - (time.monotonic() - t0)
            if left < 1:
                run_b = _Lost(0.0, f"no time left for the critic within the review's {timeout:g} s")
            else:
                prompt = fill(assets.critic, {"request": request, "findings": _render_findings(found), "diff": shown})
                (run_b,) = run_parallel([job("critic", prompt, assets.critic_schema, left)], left)
            critic = read_stamps(run_b, len(found))
            findings = stamp(found, critic["stamps"])
            critic["approve"] = not any(f["status"] == "confirmed" and f["severity"] == "blocking" for f in findings)
            critic["stamps"] = [{"index": k, **v} for k, v in sorted(critic["stamps"].items())]
            entries.append(critic)
    else:
        raise DonegateError(f"unknown review mode {mode!r}", "use pair or critic")

    result = {"mode": mode, "verdict": "approve", "findings": findings, "reviewers": entries,
              "errors": [f"{name(e['role'])}: {e['error']}" for e in entries if e["error"]],
              "cost_usd": round(sum(e["cost_usd"] or 0.0 for e in entries), 6),
              "duration": round(time.monotonic() - t0, 3), "diff_chars": len(diff), "diff_cut": cut}
    result["verdict"] = verdict(result)
    return result


def verdict(result: dict[str, Any]) -> str:
    """block when a standing blocking finding exists; else error when any run failed, or when the
    critic left a blocking finding unstamped (nobody checked it); else approve."""
    if blocking(result):
        return "block"
    unchecked = [f for f in result["findings"] if f.get("status") == "unstamped" and f["severity"] == "blocking"]
    if result["errors"] or unchecked:
        return "error"
    return "approve"


def error_result(mode: str, why: str, duration: float = 0.0) -> dict[str, Any]:
    """A review that could not even start (broken reviewer files, git failure, a kit bug)."""
    return {"mode": mode, "verdict": "error", "findings": [], "reviewers": [], "errors": [why],
            "cost_usd": 0.0, "duration": round(duration, 3)}


# --------------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------------


def describe_finding(f: dict[str, Any], *, evidence: bool = True) -> str:
    where = (f["file"] + (f":{f['line']}" if f["line"] else "")) if f["file"] else "(whole change)"
    who = ", ".join(f.get("reviewers", []))
    text = f"[{f['severity']}] {where}: {f['summary']}" + (f" (reviewer {who})" if who else "")
    for other in f.get("also", []):
        text += f"\n    also worded: {other}"
    if f.get("reason"):
        text += f"\n    critic: {f['reason']}"
    if evidence and f["evidence"]:
        text += "\n    evidence: " + f["evidence"].replace("\n", "\n    ")
    return text


def describe_reviewer(e: dict[str, Any]) -> str:
    if e["error"]:
        state = f"ERROR: {e['error']}"
    elif e["role"] == "critic":
        state = f"{len(e.get('stamps', []))} stamps" + (f", {len(e['ignored'])} ignored" if e.get("ignored") else "")
    else:
        state = f"{'approve' if e['approve'] else 'block'}, {len(e['findings'])} findings"
    return f"{name(e['role'])}: {state}; {e['turns']} turns, ${e['cost_usd'] or 0:.4f}, {e['duration']:.1f} s"


def report(result: dict[str, Any], where: str = "") -> str:
    lines = [f"donegate review ({result['mode']}){' of ' + where if where else ''}: {result['verdict'].upper()}"]
    lines += ["  " + describe_reviewer(e) for e in result["reviewers"]]
    if not result["reviewers"]:  # the review never started: say why
        lines += [f"  error: {e}" for e in result["errors"]]
    shown = standing(result)
    rejected = [f for f in result["findings"] if f not in shown]
    if shown:
        lines.append("findings:")
        lines += ["  " + describe_finding(f).replace("\n", "\n  ") for f in shown]
    if rejected:
        lines.append("set aside by the critic:")
        lines += ["  " + describe_finding(f, evidence=False).replace("\n", "\n  ") for f in rejected]
    if not result["findings"] and result["verdict"] == "approve":
        lines.append("no findings")
    lines.append(f"total ${result['cost_usd']:.4f}, {result['duration']:.1f} s")
    return "\n".join(lines)


def feedback(result: dict[str, Any], *, hint: bool, claimed: bool) -> str:
    """What the agent is told: the standing findings, labelled as a model's judgment."""
    shown = standing(result)
    if hint:
        head = ("donegate: the acceptance tests pass. Reviewers (a model's judgment, not a failed test) "
                f"raised {len(shown)} point(s) about your change. Check each against the code and fix what is real; "
                "this note is given once for this state of the code, so stopping again without changes is allowed.")
    else:
        lead = "You reported the work as complete, but" if claimed else "donegate: the acceptance tests pass, but"
        head = (f"{lead} the reviewers found blocking problems. This is a model's judgment, not a failed test: "
                "read the code they point at, fix what is real, then stop again.")
    return "\n".join([head, *("- " + describe_finding(f) for f in shown)])


# --------------------------------------------------------------------------------------------------
# `donegate review`
# --------------------------------------------------------------------------------------------------
