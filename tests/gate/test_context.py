"""One stop, one context (issue 48): the hook finds the repository's key and reads its seal record once, at
its entry (`donegate.gate.context.StopContext`), and hands them to every stage.

The real hook (`gate.run_hook`, in this process so its calls can be counted) judges a real sealed repository:
`paths.repo_key` is wrapped where every caller finds it (the module's attribute: no module imports the name
itself), and the seal record's opens are counted by an audit hook on `open` (every `open`/`os.open` of the
process, whatever name a module reached it by). Before the context a blocked stop derived the key 11 times
and opened the record 3 times.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from donegate import paths
from tests.support.repos import fix_bug, stop_lines, stop_payload

_OPENS: list[str] = []
_WATCH: list[str] = []  # the seal record's path while a stop is counted; empty: the hook does nothing


_LISTED: list[str] = []  # the tree's folders a stop listed (`_LIST` names them while a stop is counted)
_LIST: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _WATCH and isinstance(args[0], (str, bytes, Path)) and str(args[0]) in _WATCH:
        _OPENS.append(str(args[0]))
    # a folder opened to be listed (the look: `os.open`, then `os.scandir` of the descriptor), or listed by its name
    if event in ("open", "os.scandir", "os.listdir") and _LIST and isinstance(args[0], (str, Path)) and str(args[0]) in _LIST:
        _LISTED.append(str(args[0]))


_HOOKED: list[bool] = []


def _count_stop(repo: Path, kit_home: Path, monkeypatch, sealed: Path | None = None, listed: list[str] | None = None,
                **kw) -> tuple[int, Counter, int]:
    """(exit code, the folders whose key the stop derived, how often it opened the seal record of `sealed`, by
    default `repo`) of one stop in `repo`; `listed` gets each listing of the tree's folder `shop` (`_LIST`)."""
    from donegate import gate

    if not _HOOKED:
        sys.addaudithook(_audit)  # cannot be removed: it counts only while `_WATCH` names a file
        _HOOKED.append(True)
    keys: Counter = Counter()
    real = paths.repo_key

    def counted(folder: Path) -> str:
        keys[str(folder)] += 1
        return real(folder)

    record = str(paths.seal_record(sealed or repo, kit_home))
    monkeypatch.setattr(paths, "repo_key", counted)
    _OPENS.clear()
    _WATCH[:] = [record]
    _LISTED.clear()
    _LIST[:] = [str(repo / "shop")]
    try:
        code, _, _ = gate.run_hook(json.dumps(stop_payload(repo, **kw)), root=kit_home, watchdog=False)
    finally:
        _WATCH.clear()
        _LIST.clear()
        if listed is not None:
            listed[:] = _LISTED
        monkeypatch.setattr(paths, "repo_key", real)
    return code, keys, len(_OPENS)


@pytest.mark.own_suite  # every stage, the own suite's run among them (tests/support/repos.py `own_suite`)
def test_a_stop_derives_the_key_and_reads_the_seal_record_once(sealed_shop, kit_home, monkeypatch):
    code, keys, opens = _count_stop(sealed_shop, kit_home, monkeypatch, session="s1")
    assert code == 2 and stop_lines(kit_home)[-1]["verdict"] == "block"  # every stage ran, to the ledger
    assert keys == Counter({str(sealed_shop): 1}) and opens == 1, (keys, opens)
    # An accepted appeal (it hashes the diff against the sealed manifest), then a pass and a cached pass.
    code, keys, opens = _count_stop(sealed_shop, kit_home, monkeypatch, session="s1",
                                    message="Done.\nAPPEAL: the hidden test contradicts the request's wording")
    assert code == 0 and stop_lines(kit_home)[-1]["verdict"] == "appealed"
    assert keys == Counter({str(sealed_shop): 1}) and opens == 1, (keys, opens)
    fix_bug(sealed_shop)
    for cached in (False, True):
        listed: list[str] = []
        code, keys, opens = _count_stop(sealed_shop, kit_home, monkeypatch, session="s2", listed=listed)
        assert code == 0 and stop_lines(kit_home)[-1]["verdict"] == "pass"
        assert bool(stop_lines(kit_home)[-1].get("cached")) is cached
        assert keys == Counter({str(sealed_shop): 1}) and opens == 1, (keys, opens)
        # One look at the tree: the second run's helper name avoids the stems the look found (`hidden/stems.py`), it
        # walks the tree no more (it did at every stop, a stop answered from the cache too: listed twice)
        assert len(listed) == 1, listed


@pytest.mark.own_suite  # every stage, the own suite's run among them (tests/support/repos.py `own_suite`)
def test_a_stop_at_a_monorepos_root_reads_the_packages_seal_record_once(tmp_path, kit_home, monkeypatch):
    # The session's folder is the root, the seal is a package's below it: finding it reads the package's record
    # (is it changed since its seal?), and the stop judges it with that record, not a second read. Each folder
    # tried on the way (the root and those above it, the package) has its key derived once.
    from tests.support.repos import EXAMPLE_TESTS, REQUEST, example_files, make_repo, seal

    mono = make_repo(tmp_path / "mono", {**{f"packages/shop/{k}": v for k, v in example_files().items()}, "README.md": "mono\n"})
    package = (mono / "packages" / "shop").resolve()
    assert seal(package, *sorted(EXAMPLE_TESTS.glob("test_*.py")), request=REQUEST).returncode == 0
    pricing = package / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text() + "\n# a change in the sealed package\n")
    code, keys, opens = _count_stop(mono, kit_home, monkeypatch, sealed=package, session="root")
    assert code == 2 and stop_lines(kit_home)[-1]["repo"] == str(package)
    assert keys[str(package)] == 1 and set(keys.values()) == {1} and opens == 1, (keys, opens)


def test_the_counts_see_what_a_stop_does(sealed_shop, kit_home, monkeypatch):
    # The look-alike: the counters are no stubs. A store check the stop did not need (doctor's own, which
    # finds the key and reads the record itself) is counted, on top of the stop's own.
    from donegate.gate import integrity

    calls = []
    real = integrity.check

    def twice(repo, root, *a, **kw):
        calls.append(real(repo, root))  # as doctor calls it: no key, no record
        return real(repo, root, *a, **kw)

    monkeypatch.setattr(integrity, "check", twice)
    code, keys, opens = _count_stop(sealed_shop, kit_home, monkeypatch, session="s1")
    assert code == 2 and calls and calls[0][1]["ok"] is True
    assert keys == Counter({str(sealed_shop): 2}) and opens == 2, (keys, opens)


def test_a_stop_reads_the_agents_usage_beside_the_runs(sealed_shop, kit_home, tmp_path, monkeypatch):
    # The session's cost and time come from its transcript; a stop that runs the tests reads it while they run, so
    # that after them only the verdict's own bookkeeping is left before the answer (issue 48 item 2). Seen at the
    # moment the stop turns to the runs' results: the usage state this stop keeps is written by then.
    from donegate import gate
    from donegate.gate import acceptance
    from donegate.sessions import usage

    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "timestamp": "2026-01-01T10:00:00.000Z", "message": {
        "id": "m1", "model": "claude-sonnet-4-5", "role": "assistant", "content": [], "usage": {
            "input_tokens": 10, "output_tokens": 5}}}) + "\n")
    state = usage._state_path(kit_home, "s-usage")
    seen: list[bool] = []
    real = acceptance.Running.finish

    def finish(self):
        seen.append(state.exists())
        return real(self)

    monkeypatch.setattr(acceptance.Running, "finish", finish)
    payload = stop_payload(sealed_shop, session="s-usage", transcript_path=str(transcript))
    code, _, _ = gate.run_hook(json.dumps(payload), root=kit_home, watchdog=False)
    line = stop_lines(kit_home)[-1]
    assert code == 2 and line["verdict"] == "block" and line["agent"]["models"]["claude-sonnet-4-5"]["input"] == 10
    assert seen == [True]
    # Honest look-alike: a stop answered from the verdict cache runs nothing, and reads the transcript after.
    seen.clear()
    code, _, _ = gate.run_hook(json.dumps(payload), root=kit_home, watchdog=False)
    assert code == 2 and stop_lines(kit_home)[-1]["cached"] and seen == []
