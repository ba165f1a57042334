"""The stop's deadline, kept by a watchdog thread (`donegate.core.deadline`): past it, the stop is answered
block (bounded by the breaker) with one ledger line, rather than left to Claude Code's hook timeout,
which would let it through."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any

from donegate import config
from donegate.core import deadline
from donegate.sessions import ids as sessions
from donegate.gate import breaker, record
from donegate.gate.stop import STOP, log
from donegate.core.outcome import BLOCK, Outcome, render


def budget(cfg: dict[str, Any]) -> float:
    """Seconds the whole stop may take: the hook timeout install writes for `cfg`, less the reserve."""
    return config.hook_timeout(cfg) - deadline.RESERVE


def expired(ctx: dict[str, Any]) -> int:
    """The watchdog's answer when the stop's deadline passes: block (bounded by the breaker), one ledger
    line without waiting on any lock, the answer on stdout and stderr. Returns the exit code."""
    from donegate.core import proc

    proc.kill_all()
    dl: deadline.Deadline = ctx["deadline"]
    stage = STOP["stage"]
    budget = dl.budget()
    reason = (f"donegate: the stop did not finish within its deadline ({budget:.0f} s; still in {stage}), so it is "
              "blocked rather than left to Claude Code's hook timeout, which would let it through; if this repeats, "
              "a person must look (see the kit's log)")
    outcome = Outcome("error", BLOCK, reason=reason, failing=["error:deadline"],
                      gates={"error": f"deadline of {budget:.1f} s passed in {stage}", "deadline": {"stage": stage, "budget": round(budget, 3)}})
    root, payload, cfg = ctx["root"], ctx["payload"], ctx["cfg"]
    session, session_from = sessions.resolve(payload)
    log(root, f"the stop's deadline ({budget:.1f} s) passed in {stage}: answered block by the watchdog")
    try:
        counters = breaker.count(outcome, session, cfg, root, wait=0.2)
        from donegate.gate.inputs import client_of

        line = record.record(outcome, payload, session, session_from, counters, cfg, dl.start,
                             client=client_of(payload, ctx.get("client")))
        record.write(line, outcome, root, wait=0.2)
    except BaseException:
        pass
    code, out, err = ctx["claim"].keep(render(outcome)) if ctx.get("claim") else render(outcome)
    for fd, text in ((1, out), (2, err)):
        try:
            os.write(fd, text.encode())
        except OSError:
            pass
    _let_go()
    return code


def _let_go() -> None:
    """What the launcher does once its answer is out (`hooks/stop_gate.py`: `early.discard`, then `answered`), here:
    the watchdog's `os._exit` skips it. The run started early and never taken is ended, and its folder named; the
    after-answer child removes the runs' folders once the hook has exited (`copy.LIVE`, `leftovers.once_gone`).
    Without it each such stop left its runs' and the own suite's folders for `leftovers.sweep` (a day)."""
    import sys

    for name, call in (("donegate.hidden.early", "discard"), ("donegate.hidden.copy", "after_answer")):
        module = sys.modules.get(name)
        if module is not None:
            try:
                getattr(module, call)()
            except BaseException:
                pass


def answer(dl: deadline.Deadline, result: tuple[int, str, str]) -> tuple[int, str, str]:
    """Hand `result` back unless the watchdog has claimed the stop (it answers, and ends the process)."""
    if not dl.claim():
        dl.wait_forever()  # the watchdog is answering for this stop
    STOP.update(deadline=None, stage="start", scanned_to=0)
    return result
