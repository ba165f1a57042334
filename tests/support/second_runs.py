"""The second run's own harness driven directly (`second.run`: unconfined, no walls, no hook): a product module and a
store of hidden test files in temporary folders, and each test's held candidates drawn at a chosen place through
`second._system`, the seam the run draws from."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

from donegate.hidden import answer_draw, second

# What the second run says of a latch: equal to a candidate on each side, never to the expected value alone.
LATCH = ("failed", "the object it returned is not equal to the expected value alone (held by the supervisor)")


def run(tmp_path: Path, calc: str, tests: dict[str, str], ids: list[str], timeout: float = 30) -> Any:
    """`ids` of the test files `tests` ({name: text}, in the store) run against a repository holding `calc.py`."""
    repo, store = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    store.mkdir()
    (repo / "calc.py").write_text(calc)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    for name, text in tests.items():
        (store / name).write_text(text)
    return second.run(store, repo, ids, timeout=timeout, kind="none")


def outcomes(out: Any) -> dict[str, tuple[str, str]]:
    """{test id: (outcome, why)} of a run's results."""
    return {i: (r["outcome"], r["why"]) for i, r in out.results.items()}


def seed_at(place: int) -> int:
    """A seed of `random.Random` whose draw of one held value's candidates puts the expected value at `place`."""
    return next(s for s in range(1000) if answer_draw.answer_ticket([(0, 900)], random.Random(s))[1][0] == place)


def drawn_at(monkeypatch: Any, place: int) -> None:
    """Each test's candidates drawn with the expected value at `place` (0: first; 1: the first candidate of
    `bare_apart`'s fork, compared after the test's fork's own)."""
    seed = seed_at(place)

    class Drawn(random.SystemRandom):
        def getrandbits(self, k: int) -> int:
            return seed if k == 128 else super().getrandbits(k)

    monkeypatch.setattr(second, "_system", Drawn)
