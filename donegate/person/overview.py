"""`donegate status`: what a person needs to see at a glance. How the kit is installed and where its state
lives; for each sealed repository (or the one named) its tests, base commit, request, the interpreter
recorded at seal time, and how its hook is installed; the sessions still being blocked, and those waiting
for a person (an appeal, a hand-over) that nobody has approved or rejected yet, with why.

The sessions come from the ledger (the latest stop of each session decides its state), the seals from the
seal records in `state/seals/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from donegate import __version__, paths
from donegate.clients import wiring
from donegate.core import kit as installation
from donegate.ledger import chain as ledger
from donegate.seal import store
from donegate.errors import DonegateError
from donegate.seal.sealer import not_the_persons
from donegate.report.labels import DECIDABLE, decisions
from donegate.seal.store import sealed_repos

IN_PROGRESS = ("block", "hint", "error")
LISTED = 20  # sessions of each kind listed (the latest)


def install_mode(repo: Path) -> str:
    from donegate.install import diagnose, routes

    modes = [("the plugin" if r.plugin else "the hook") + f" in the {r.scope} settings ({r.path})"
             for r in routes.found(diagnose.settings_files(repo))]
    if codex_installed():
        modes.append("Codex: user level ($CODEX_HOME/config.toml)")
    modes += [f"{wiring.NAMES[c]}: user level" for c in clients_installed()]
    return " and ".join(modes) or "not installed: no hook runs in its sessions (donegate install REPO)"


def clients_installed() -> list[str]:
    """The other clients whose user configuration holds the kit's Stop hook (`install --client gemini|copilot|qwen`)."""
    return [c for c in wiring.NAMES if wiring.installed(c)]


def codex_installed() -> bool:
    """Whether the user's Codex config holds the kit's hooks (`donegate install --client codex`)."""
    from donegate.codex import userconfig

    try:
        return bool(userconfig.kit_block(userconfig.config_path().read_text(encoding="utf-8")))
    except OSError:
        return False


def _seal(repo: Path, root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"repo": str(repo), "install": install_mode(repo)}
    try:
        st = store.load(repo, root)
    except DonegateError as exc:
        return {**out, "intact": False, "problem": exc.message}
    if st is None:
        return {**out, "intact": None}
    if store.stale_places(st.manifest):
        return {**out, "intact": False, "problem": store.stale_places(st.manifest)}
    m = st.manifest
    by = store.sealed_by(repo, root)
    out["not_the_persons"] = not_the_persons(by, None)  # the Stop hook's own rule (no session: the evidence alone)
    out["sealed_by"] = by
    return {**out, "intact": True, "tests": m.get("count"), "files": sorted(n for n in m.get("files", {}) if n.endswith(".py")),
            "base": m.get("base"), "request": m.get("request", ""), "sealed_at": m.get("sealed_at"),
            "interpreter": _interpreter(m.get("python") or m.get("interpreter")),
            "failing_at_seal": len(m.get("baseline", {}).get("failing", [])),
            "allow": list(m.get("allow") or []),  # `seal --allow RULE`: this repository's own allowances
            "own": _own(m), "own_suite": m.get("own_suite")}


def _own(m: dict[str, Any]) -> list[str]:
    """What the unchanged project already trips (the seal's baseline), rule by rule."""
    rules: dict[str, int] = {}
    for items in (m.get("scan_baseline") or {}).values():
        for rule, *_ in items:
            rules[rule] = rules.get(rule, 0) + 1
    out = [f"{rule} ({n}x in its code)" for rule, n in sorted(rules.items())]
    return out + [f"{t.get('rule')} (tripwire: {t.get('what')})" for t in m.get("tripwire_baseline") or () if isinstance(t, dict)]


def _interpreter(rec: Any) -> Any:
    """The manifest's record of the hidden run's interpreter (`donegate.hidden.python`), in one line."""
    if not isinstance(rec, dict):
        return rec
    where = f", project folder {rec['project']}" if rec.get("project") not in (None, ".") else ""
    return f"{rec.get('python')} (Python {rec.get('version') or '?'}, {rec.get('source')}){where}"


def _why(rec: dict[str, Any]) -> str:
    gates: dict[str, Any] = rec["gates"] if isinstance(rec.get("gates"), dict) else {}
    if rec.get("verdict") == "appealed":
        appeal: dict[str, Any] = gates["appeal"] if isinstance(gates.get("appeal"), dict) else {}
        return f"appeal: {appeal.get('reason', '')}"[:300]
    if gates.get("handover") == "config":
        return f"the kit's configuration is broken: {gates.get('error', '')}"[:300]
    if gates.get("handover") == "environment":
        env: dict[str, Any] = gates["environment"] if isinstance(gates.get("environment"), dict) else {}
        return f"the project's environment cannot run the hidden tests: {env.get('problem', '')}"[:300]
    breaker: dict[str, Any] = gates["breaker"] if isinstance(gates.get("breaker"), dict) else {}
    from donegate.gate.breaker import blocked_by

    what = breaker.get("blocked_by") or blocked_by(gates)  # the finding or tripwire that blocked, by name
    return f"gave up after {breaker.get('gave_up', 'the breaker')}" + (f"; blocked by {what}" if what else "")[:600]


def sessions(files: list[Path], repo: Path | None) -> dict[str, list[dict[str, Any]]]:
    latest: dict[str, tuple[int, str, dict[str, Any]]] = {}
    blocks: dict[str, int] = {}
    n = 0
    for line, rec in ledger.events(files, "stop"):
        sid = rec.get("session")
        if not isinstance(sid, str) or (repo is not None and rec.get("repo") != str(repo)):
            continue
        n += 1
        latest[sid] = (n, ledger.stop_ref(line), rec)
        blocks[sid] = blocks.get(sid, 0) + 1 if rec.get("verdict") in IN_PROGRESS else 0
    decided = decisions(files)
    waiting, progress = [], []
    for sid, (_, ref, rec) in sorted(latest.items(), key=lambda kv: kv[1][0], reverse=True):
        row = {"session": sid, "ref": ref, "repo": rec.get("repo") or "", "time": rec.get("time"), "verdict": rec.get("verdict")}
        if rec.get("verdict") in DECIDABLE and ref not in decided:
            waiting.append({**row, "why": _why(rec)})
        elif rec.get("verdict") in IN_PROGRESS:
            progress.append({**row, "blocks": blocks[sid]})
    return {"waiting": waiting, "in_progress": progress}


def gather(repo: Path | None = None, root: Path | None = None) -> dict[str, Any]:
    root = root or paths.home()
    if repo is not None:
        from donegate.tree import repo as where

        repo = where.project(repo)  # the project: a repository, or a subfolder of one
    repos = [repo] if repo is not None else sealed_repos(root)
    led = paths.ledger_path(root)
    found = sessions([led], repo) if led.is_file() else {"waiting": [], "in_progress": []}
    return {"version": __version__, "install": installation.kind(), "command": installation.command(),
            "kit": str(paths.KIT_ROOT), "state_root": str(root), "ledger": str(led),
            "codex": codex_installed(), "clients": clients_installed(), "sealed": [_seal(r, root) for r in repos], **found}


def render(s: dict[str, Any]) -> str:
    out = [f"donegate {s['version']}, a {s['install']} install ({s['kit']}); run it as: {s['command']}",
           f"state root {s['state_root']}"]
    if s.get("codex"):
        out.append("Codex: hooks installed at the user level ($CODEX_HOME/config.toml; donegate doctor --client codex checks them)")
    for c in s.get("clients") or []:
        out.append(f"{wiring.NAMES[c]}: Stop hook installed at the user level (donegate doctor --client {c} REPO checks it)")
    if not s["sealed"]:
        out.append("no repository is sealed (donegate seal REPO TEST_FILE..., or donegate write REPO --request ...)")
    for r in s["sealed"]:
        out.append("")
        if r["intact"] is None:
            out.append(f"{r['repo']}: nothing sealed")
        elif r["intact"] is False:
            out.append(f"{r['repo']}: the sealed store is broken: {r['problem']} (every stop blocks until it is sealed again)")
        else:
            out.append(f"{r['repo']}: {r['tests']} sealed tests in {', '.join(r['files'])} ({r['failing_at_seal']} failing at seal), "
                       f"base {str(r['base'])[:12]}, sealed {r['sealed_at']}")
            if r.get("not_the_persons"):
                out.append(f"  WARNING: {r['not_the_persons']}: every stop blocks for a person until a person seals again")
            out.append(f"  request: {r['request']!r}" if r["request"] else "  request: (none recorded)")
            if r["interpreter"]:
                out.append(f"  interpreter: {r['interpreter']}")
            if r.get("allow"):
                out.append(f"  allowed for this repository: {', '.join(r['allow'])} (donegate seal --allow RULE)")
            if r.get("own"):
                out.append(f"  the project's own, never counted against a stop: {'; '.join(r['own'])[:300]}")
            if r.get("own_suite"):  # issue 44: the project's own tests, as sealed, run at every stop
                from donegate.seal import own as own_tests

                out.append("  " + own_tests.describe(r["own_suite"]))
                service = own_tests.service_line(r["own_suite"])
                out.extend(["  " + service] if service else [])
        out.append(f"  hook: {r['install']}")
    for key, head in (("waiting", "waiting for a person (donegate approve REF, or donegate reject REF --note WHY)"),
                      ("in_progress", "in progress (the latest stop blocked)")):
        rows = s[key]
        out.append("")
        out.append(f"{len(rows)} session(s) {head}" + (":" if rows else ""))
        for row in rows[:LISTED]:
            extra = row["why"] if key == "waiting" else f"{row['blocks']} block(s) in a row"
            out.append(f"  ref {row['ref']}  session {row['session']}  {row['repo']}  {row['time']}: {extra}")
        if len(rows) > LISTED:
            out.append(f"  ... and {len(rows) - LISTED} more")
    return "\n".join(out)
