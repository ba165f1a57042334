"""The `dg_random` fixture the hidden run serves to the sealed tests: a `random.Random` seeded per stop and per
test from a secret the kit draws at each stop (`runner.run`'s `seed`), kept in the ledger only. A test that draws
its inputs from it sees new ones at every stop, so a table of the values a block showed fails the next stop.

Sent with the plugin and with the second harness (one namespace each, `donegate.hidden.ship`), never imported
in the run. Standard library and pytest only. The second harness is never given the secret: the kit sends it each
test's own seed (`seed_of`), so both runs draw the same inputs for a test and neither can work out another stop's.
"""

import hashlib as _hashlib
import random as _random


class SeededRandom(_random.Random):
    """A `random.Random` whose repr names no seed."""

    def __repr__(self) -> str:
        return "<dg_random>"

    def __reduce__(self):  # a pickle would carry the state: nothing to take out of the run
        raise TypeError("dg_random cannot be pickled")


def seed_of(seed: str, nodeid: str) -> int:
    """The test `nodeid`'s own seed at the stop whose secret is `seed`: a one-way function of both."""
    digest = _hashlib.sha256(f"{seed}\0{nodeid}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


def seeded_rng(seed: str, nodeid: str) -> SeededRandom:
    """The test `nodeid`'s generator at the stop whose secret is `seed` (the same id, the same draws)."""
    return SeededRandom(seed_of(seed, nodeid))


def seeded_plugins(seed: "str | None") -> list:
    """The plugin serving `dg_random`, for `pytest.main(plugins=...)`; none without a seed."""
    if not seed:
        return []
    import pytest

    class Seeded:
        @pytest.fixture(name="dg_random")
        def dg_random(self, request):
            return seeded_rng(seed, request.node.nodeid)

    return [Seeded()]
