"""A sealed file of the suite that is no test, changed since the seal, run both ways (docs/own-suite.md, "Shadowing").

A collected path may hold the project's own code beside its tests (`scripts/tool.py` beside `scripts/test_tool.py`,
`testpaths = tests scripts`): it is sealed with the suite, as a test helper (`tests/helpers.py`) is, and the sealed
run reads its sealed copy (the laid-out suite's folder comes first: pytest's `pythonpath` and its rootdir insertion).
Which of the two it is cannot be told from the tree, and each way alone lets something through: reading the sealed
copy passed a regression of `scripts/tool.py` (the strict xfail of `test_own_expected`, note8), reading the project's
would pass a helper weakened to check nothing. So both: the sealed run reads every sealed copy, as before, and for
each such file the agent changed (or removed) the sealed tests that reach it (`seal.reach`) run once more with that
file alone as the project holds it now, every other file as sealed (one at a time: a product file broken and a helper
weakened together are each caught by the run that holds the other's sealed copy), and, when it changed more than one,
once more with all of them as the project holds them now (a regression spread over two files, each harmless beside
the other's sealed copy: `tool.py` reading a `DELTA` that `extra.py` now adds). A sealed test that passed at the
seal and fails in any blocks; the project's copy failing says which files it read. Honest changes (a function
added to the file, a helper added for a new test) pass every way. What it costs: one more pytest process a stop per
such file changed, of the tests reaching it, and one for them all; a stop that changed none starts nothing.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

SLOT = "own-mixed"  # the runs' mirror (`hidden.forget.SLOTS`)


def changed(pack: dict[str, Any], helpers: dict[str, str | None]) -> dict[str, str | None]:
    """Of the suite's changed non-test modules (`own_changed.helpers_changed`: {file: its text now, None: gone or not
    text}), those run both ways: every one but the data modules outside the test folders (`pack["helpers"]`, whose
    values `seal.helper_data` compares)."""
    data = set(pack.get("helpers") or ())
    return {rel: text for rel, text in sorted(helpers.items()) if rel not in data}


def start(runs: Any, look: Any, thread: Callable[[Any], Any], skipped: Callable[..., list[str]]) -> Any:
    """The runs of `changed` files begun in a thread (`thread`: `own_suite._Run`) for the stop's own runs `runs`
    (`own_suite.OwnRuns`), or None: none to run."""
    import functools

    from donegate.gate.stop import time_left

    files = changed(runs.pack, runs.helpers)
    if not files:
        return None
    left = functools.partial(lambda r: min(r.timeout, max(1.0, time_left(r.cfg["timeout"]))), runs)
    return thread(functools.partial(run, runs.pack, files, runs.tmp, runs._go, runs.launch, skipped, left, look))


def lay_out(pack: dict[str, Any], dest: Path, files: dict[str, str | None]) -> list[str]:
    """The sealed suite laid out in `dest` (`seal.own.lay_out`) with each file of `files` as the project holds it now
    (its text; None: left out): pytest's arguments for a run there."""
    from donegate.seal import own

    args = own.lay_out(pack, dest)
    for rel, text in files.items():
        path = dest / rel
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text, encoding="utf-8")
    return args


def _runs(files: dict[str, str | None]) -> list[tuple[str, dict[str, str | None]]]:
    """(what a run is called, the files it holds as the project does): each file alone, then all of them together."""
    out = [(rel, {rel: text}) for rel, text in files.items()]
    return out + [(", ".join(files), dict(files))] if len(files) > 1 else out


def run(pack: dict[str, Any], files: dict[str, str | None], folder: Path, go: Callable[..., Any], launch: Any,
        skipped: Callable[[dict[str, Any], Path, set[str]], list[str]], timeout: Callable[[], float],
        look: Any) -> list[tuple[str, set[str] | None, Any]]:
    """Each file of `files` run the project's way, one after the other in the mirror `SLOT`, then all of them at once
    (`_runs`): [(files, the sealed test files run: None all, the run)] (a run None: it did not finish). `go`: `runner.run` with the stop's walls;
    `skipped`: what a run leaves out of the selection (`own_suite._skipped`); `timeout`: the stop's time left."""
    from donegate.seal import own, reach

    out: list[tuple[str, set[str] | None, Any]] = []
    for k, (rel, held) in enumerate(_runs(files)):
        selected = reach.select(pack.get("reach"), pack["tests"], list(held), set())  # (the suite's own, as the product's)
        if selected is not None and not selected:
            continue
        store = folder / str(k)
        store.mkdir()
        layout = lay_out(pack, store, held)
        skip = skipped(pack, store, selected) if selected is not None else []
        out.append((rel, selected, go(store, python=own.with_pythonpath(pack, launch, store), layout=layout, slot=SLOT,
                                      skip=skip, tree=look, doctests=pack.get("doctests"), timeout=timeout())))
    return out


def failing(runs: list[tuple[str, set[str] | None, Any]], passing: set[str], found: list[dict[str, Any]],
            lines: dict[str, int], changed_tests: set[str], changed_files: set[str] | None = None) -> str:
    """The sealed tests that passed at the seal (`passing`) and fail with a file of the suite as the project holds it
    (`run`'s), added to `found` (the sealed run's failing, each test once); returns a problem of a run, if any.
    A sealed test file the agent changed (`changed_files`) that no longer imports (a helper module it imports renamed,
    the import updated: review A, trial) is the old contract changed, the appeal offered, not a regression: the run
    reads the sealed test, so what the agent's test now imports is not what it judges (docs/own-suite.md)."""
    from donegate.hidden.runner import _shown
    from donegate.seal import own

    problem = ""
    for rel, selected, res in runs:
        if res is None:
            return f"the project's own tests (with its {rel}) did not finish in the stop's time"
        if res.tamper:
            problem = problem or f"the project's own tests (with its {rel}): {res.tamper}"
        errors = {e.get("nodeid", ""): (e.get("message") or "").strip() for e in res.errors}
        for tid in sorted(passing):
            file = tid.split("::", 1)[0]
            if selected is not None and file not in selected or any(f["id"] == tid for f in found):
                continue
            r = res.results.get(tid)
            if r is not None and r.get("outcome") == "passed":
                continue
            moved = False
            if r is None:
                why = next((m for n, m in errors.items() if n == file or n.startswith(file)), "")
                message = "no longer collects: " + why.splitlines()[-1] if why else (res.problem or "it did not run")
                moved = file in (changed_files or ()) and message.startswith(("no longer collects: ModuleNotFoundError",
                                                                       "no longer collects: ImportError"))
            else:
                message = _shown(r)
            contract = moved or tid.split("[", 1)[0] in changed_tests
            found.append({"id": tid, "where": own.line_of(tid, lines), "contract": contract,
                          "message": f"with the project's {rel} as {'they are' if ', ' in rel else 'it is'} now: "
                                     f"{message.strip()[:1000]}"})
    return problem
