"""Fixtures of the gate's end-to-end tests: a scripted model per test and a gated example repository.

`gated(...)` builds (or copies from one built once per worker) a copy of the kit, its own DONEGATE_HOME, the bundled
example repository with donegate's settings installed and the hidden tests sealed (see
tests/support/gated.py); `g.run(api)` then runs the real Claude Code in it against `api`.
"""

from __future__ import annotations

import pytest

from tests.support.fakeapi import FakeAPI
from tests.support.gated import GatedRepo
from tests.support.repos import own_suite
from tests.support.session import find_claude


@pytest.fixture
def api():
    """A scripted Messages API for this test: add the model's turns with `api.add(...)`."""
    with FakeAPI() as server:
        yield server


@pytest.fixture
def gated(tmp_path, tmp_path_factory, kit_home, monkeypatch, request):
    """Factory: `gated(sandbox=..., config=..., tests=..., seal_fixed=...)` -> GatedRepo (see GatedRepo.create).

    The test's DONEGATE_HOME becomes the repository's, so the hook, the kit's commands and the test all
    look at the same store and ledger. With the example's hidden tests the repository is a copy of one built once
    per worker for the same arguments (`GatedRepo.pooled`); with `tests` of the test's own, one of its own. Sealed
    with the example's own suite only for a test marked `own_suite` (tests/support/repos.py `own_suite`)."""
    find_claude()  # skip (or fail in CI) before building anything when the CLI is missing
    made: list[GatedRepo] = []

    def make(**kwargs) -> GatedRepo:
        kwargs.setdefault("own", own_suite(request))
        name = f"gated{len(made)}"
        g = GatedRepo.pooled(tmp_path_factory.getbasetemp() / "sealed", name, kit_home, **kwargs) \
            if "tests" not in kwargs else GatedRepo.create(tmp_path / name, **kwargs)
        monkeypatch.setenv("DONEGATE_HOME", str(g.home))
        made.append(g)
        return g

    return make
