"""The `dg_random` fixture the hidden run serves to the sealed tests: a `random.Random` seeded per stop and per
test from a secret the kit draws at each stop (`runner.run`'s `seed`), kept in the ledger only. A test that draws
its inputs from it sees new ones at every stop, so a table of the values a block showed fails the next stop.

Sent with the plugin and with the second harness (one namespace each, `donegate.hidden.ship`), never imported
in the run. Standard library and pytest only. The second harness is never given the secret: the kit sends it each
test's own seed (`seed_of`), so both runs draw the same inputs for a test and neither can work out another stop's.

hypothesis's `@given` tests draw from the same seed (`given_draw`), as hypothesis's own `@seed` sets it: the first run's
examples are the second run's, and another stop's are new ones.
"""

import random as _random
import sys as _sys

# SHA-512 as `random` holds it (its str seeds' digest: the standard library's own, no OpenSSL library loaded in the
# second run), truncated below: importing `_sha256` (3.11) or `_sha2` here put a module in `sys.modules` that neither a
# developer's pytest nor their program holds, in both runs (`'_sha256' in sys.modules` told them apart,
# tests/gate/test_redteam_traits.py).
try:
    from random import _sha512  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover (an interpreter whose `random` names it otherwise)
    from hashlib import sha512 as _sha512


class SeededRandom(_random.Random):
    """A `random.Random` whose repr names no seed."""

    def __repr__(self) -> str:
        return "<dg_random>"

    def __reduce__(self):  # a pickle would carry the state: nothing to take out of the run
        raise TypeError("dg_random cannot be pickled")


def seed_of(seed: str, nodeid: str) -> int:
    """The test `nodeid`'s own seed at the stop whose secret is `seed`: a one-way function of both."""
    digest = _sha512(f"{seed}\0{nodeid}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


def seeded_rng(seed: str, nodeid: str) -> SeededRandom:
    """The test `nodeid`'s generator at the stop whose secret is `seed` (the same id, the same draws)."""
    return SeededRandom(seed_of(seed, nodeid))


_OWN: dict = {}  # a @given test's own seed and settings, before `given_draw` first set them (by the test's id())


def given_draw(fn, draw: int) -> bool:
    """Whether `fn` is a hypothesis `@given` test; if so, it draws its examples from `draw` (the test's own seed at this
    stop) as hypothesis's `@seed` sets it, with no example database: the seed alone decides the examples, so the second
    run repeats the first run's draw. A test's own `@seed` stays. Neither run times the examples (no deadline, no
    `too_slow` health check): on a machine the runs share with others, timing would fail a test by chance in one run
    and not the other; and the settings, which a test can read (`current_build_context().wrapped_test`), are the
    same in both runs."""
    test = getattr(fn, "__func__", fn)
    hypothesis = _sys.modules.get("hypothesis")
    if hypothesis is None or not getattr(test, "is_hypothesis_test", False):
        return False
    own = _OWN.setdefault(id(test), (test._hypothesis_internal_use_seed, test._hypothesis_internal_use_settings))
    test._hypothesis_internal_use_seed = draw if own[0] is None else own[0]
    quiet = [*own[1].suppress_health_check, hypothesis.HealthCheck.too_slow]
    test._hypothesis_internal_use_settings = hypothesis.settings(own[1], database=None, deadline=None,
                                                                 suppress_health_check=quiet)
    return True


def seeded_plugins(seed: "str | None") -> list:
    """The plugin serving `dg_random` and setting each `@given` test's draw, for `pytest.main(plugins=...)`; none
    without a seed."""
    if not seed:
        return []
    import pytest

    class Seeded:
        @pytest.fixture(name="dg_random")
        def dg_random(self, request):
            return seeded_rng(seed, request.node.nodeid)

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            given_draw(getattr(item, "obj", None), seed_of(seed, item.nodeid))

    return [Seeded()]
