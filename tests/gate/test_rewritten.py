"""The second run's tests, rewritten and compiled once per seal by the kit (`donegate.hidden.rewritten`): the code the
supervisor would have compiled, used only under its key (the sealed files' digest, the interpreter, the kit), a file
that is missing, stale or unreadable costing a compile in the run, never a wrong test."""

from __future__ import annotations

import ast
import marshal
import os
import time
from pathlib import Path

from tests.support import require
from tests.support.repos import ledger_lines, run_hook, seal_files, stop_payload, write_config

HIDDEN = '''import pytest
import calc
from helper import UNIT


def test_ten_units_get_the_bulk_discount():
    assert calc.price(10) == 900


@pytest.mark.parametrize("units, want", [(2, 200), (1, 100)])
def test_small_orders_pay_the_full_price(units, want):
    assert calc.price(units) == want * UNIT
    assert [calc.price(u) for u in (units,)] != [want + 1]


if __name__ == "__main__":
    raise SystemExit("not under a harness")
'''
FIXED = "def price(units):\n    return units * 90 if units >= 10 else units * 100\n"
NAMES = {"shim": "m" + "a1" * 6, "probe": "_p" + "b2" * 6, "hold": "_h" + "c3" * 6}
TESTED = ["test_calc.py"]


def _harness_compile(text: str, names: dict[str, str], tested: bool, name: str):
    """What the supervisor compiles from a sent source (`bare.supervise`), the kit's modules standing in for the
    harness's namespace."""
    from donegate.hidden.bare_fork import as_main
    from donegate.hidden.bare_shim import _ToShim, shim_compile
    from donegate.hidden.probe_unit import compare_probes

    tree = compare_probes(ast.parse(text.encode("utf-8", "surrogateescape")), names["probe"])
    tree = _ToShim("\x00" + names["shim"], (names["probe"], names["hold"])).visit(tree)
    if tested:
        tree, _ = as_main(tree)
    return shim_compile(tree, name)


def _files(tmp_path: Path) -> list[Path]:
    (tmp_path / "test_calc.py").write_text(HIDDEN)
    (tmp_path / "helper.py").write_text("UNIT = 1\n")
    return [tmp_path / "helper.py", tmp_path / "test_calc.py"]


def test_the_kept_code_is_what_the_supervisor_compiles_under_the_stop_s_own_names(tmp_path):
    from donegate.hidden import answers, rewritten
    from donegate.hidden.bare_fork import renamed
    from donegate.hidden.bare_plan import SEEDED, SERVED, plan

    files = _files(tmp_path)
    key, datas = rewritten.stamp(files, TESTED)
    where = tmp_path / "kept.marshal"
    rewritten.keep(where, key, files, datas, TESTED, {w: len(n) for w, n in NAMES.items()})
    sources, held, compiled, at = rewritten.load(where, key, NAMES)
    want_sources, want_held = answers.answer_sources(files, NAMES["hold"])
    assert (sources, held) == (want_sources, want_held) and NAMES["hold"] in sources["test_calc.py"]
    # where the program's text shows the helper for pytest, kept: a stop splices its name in, no regular expression's
    # pass over the sources (`stems.shown_at`: ~2 ms of the hook at every stop, 7.5 M instructions), the same text
    from donegate.hidden import stems

    assert at == stems.shown_at(want_sources) and at["test_calc.py"]
    assert stems.as_shown(sources, "checks", at) == stems.as_shown(want_sources, "checks")
    codes, plans = marshal.loads(bytes.fromhex(compiled[2]))
    assert sorted(codes) == ["helper.py", "test_calc.py"]
    for seeded, served in ((False, SERVED), (True, (*SERVED, SEEDED))):  # and each file's plan, as the supervisor's
        assert plans[seeded] == {rel: plan(t.encode(), served=served) for rel, t in want_sources.items()}
    assert plans[False]["test_calc.py"] != ("", {})
    for rel, (code, names) in codes.items():
        want = _harness_compile(want_sources[rel], NAMES, rel in TESTED, f"/p/{rel}")
        assert renamed(code, f"/p/{rel}") == want, rel
        assert names == (["calc", "helper"] if rel in TESTED else [])  # `import pytest` is the shim now
    def consts(code):
        for c in code.co_consts:
            yield from consts(c) if hasattr(c, "co_consts") else (c,)
    assert {"\x00" + n for n in NAMES.values()} <= set(consts(codes["test_calc.py"][0]))  # the stop's names, spliced in
    # another key (a sealed file changed, another interpreter or kit), other names' lengths, a file cut short: none
    assert rewritten.load(where, "0" * 64, NAMES) is None
    assert rewritten.load(where, key, {**NAMES, "hold": NAMES["hold"] + "x"}) is None
    kept = marshal.loads(where.read_bytes())  # a column that does not hold pytest: none (the stop finds them itself)
    where.write_bytes(marshal.dumps((*kept[:-1], {"test_calc.py": [at["test_calc.py"][0] + 1]})))
    assert rewritten.load(where, key, NAMES) is None
    where.write_bytes(marshal.dumps(kept)[:-40])
    assert rewritten.load(where, key, NAMES) is None
    assert rewritten.stamp(files, TESTED)[0] == key
    assert rewritten.stamp(files, ["helper.py"])[0] != key
    files[1].write_text(HIDDEN + "\n")
    assert rewritten.stamp(files, TESTED)[0] != key


def test_a_stop_runs_the_kept_code_only_under_its_key_and_recompiles_a_bad_file(tmp_path, kit_home):
    """The kept rewrite is what the second run executes (a planted one, under the right key, that fails a test makes
    the runs disagree: it ran); under another key the run compiles the sources, as before, and keeps them again."""
    from donegate import paths
    from donegate.hidden import rewritten

    mode = "on" if require.sandbox_works() or os.environ.get("DGTEST_REQUIRE_SANDBOX") == "1" else "off"
    write_config(kit_home, f"confine: {mode}\n")
    repo = seal_files(tmp_path, {"calc.py": "def price(units):\n    return units * 100\n", "helper.py": "UNIT = 1\n"},
                      "test_calc.py", HIDDEN)
    where = rewritten.path(kit_home, paths.repo_key(repo))
    at_seal = marshal.loads(where.read_bytes())  # kept by the seal itself (`second.keep_at_seal`; issue 48 item 2)
    ship = kit_home / "state" / "ship"  # the runs' payloads and `.pth` line too: a state root's first stop builds none

    def payloads() -> dict[str, int]:
        return {p.name: p.stat().st_mtime_ns for p in ship.iterdir()} if ship.is_dir() else {}

    shipped = payloads()
    assert len(shipped) == 3 and any(n.startswith("plugin-") for n in shipped), shipped

    def stop(n: int) -> tuple[int, dict]:
        (repo / "calc.py").write_text(FIXED + f"# {n}\n")  # a tree of its own: no verdict kept for it
        res = run_hook(stop_payload(repo, session=f"kept-{n}"), timeout=120)
        return res.returncode, ledger_lines(kit_home)[-1]["gates"]["acceptance"]

    def kept() -> tuple:
        deadline = time.monotonic() + 30  # written by the child that outlives the answer
        while time.monotonic() < deadline:
            try:
                return marshal.loads(where.read_bytes())
            except (OSError, EOFError, ValueError):
                time.sleep(0.05)
        raise AssertionError("no rewrite kept")

    code, accept = stop(0)
    assert code == 0 and accept["second"]["checked"] == 3, accept
    good = kept()
    assert good[0] == at_seal[0]  # the seal's key: what the first stop read, so it compiled nothing and kept nothing new
    assert payloads() == shipped  # read as the seal kept them, nothing built again
    # the same rewrite of a test that fails, kept under the seal's key: the second run executes it
    evil_dir = tmp_path / "evil"
    evil_dir.mkdir()
    files = _files(evil_dir)
    files[1].write_text(HIDDEN.replace("    assert calc.price(10) == 900\n", "    assert calc.price(10) == 900\n    assert not calc\n"))
    lengths = {w: len(p) for w, p in good[1].items()}
    evil = rewritten.build(files, [f.read_bytes() for f in files], TESTED, lengths)
    where.write_bytes(marshal.dumps((good[0], *evil)))
    code, accept = stop(1)
    assert code == 2 and "test_calc.py::test_ten_units_get_the_bulk_discount" in accept["second"].get("disagree", {}), accept
    # under another key (a file that does not read: the first test): compiled in the run, kept again after the answer
    where.write_bytes(marshal.dumps(("0" * 64, *evil)))
    code, accept = stop(2)
    assert code == 0 and accept["second"]["checked"] == 3, accept
    deadline = time.monotonic() + 30
    while kept()[0] != good[0] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kept()[0] == good[0]
