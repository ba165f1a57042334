"""The unit tests' shared parts: real git repositories, the hook run as Claude Code runs it, seals.

Test modules import these from here, never from `conftest` or from one another (conftest holds the
fixtures only): one place to read what a test is made of.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Callable

KIT = Path(__file__).resolve().parents[2]
HOOK = KIT / "hooks" / "stop_gate.py"
EXAMPLE = KIT / "examples" / "shop"
EXAMPLE_TESTS = KIT / "examples" / "shop-acceptance"
REQUEST = "orders of 10 or more units get 10% off"
# The example's bug and its fix: the bulk discount starts at 10 units, not above them.
FIX = ("if units > BULK_THRESHOLD:", "if units >= BULK_THRESHOLD:")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, timeout=30).stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A real git repository with `files` committed."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(path)], check=True, timeout=30)
    # What `git config user.email/user.name` write, without two processes (~1,000 repositories a run).
    with open(path / ".git" / "config", "a") as config:
        config.write("[user]\n\temail = t@example.com\n\tname = donegate tests\n")
    for name, text in files.items():
        p = path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base", "--allow-empty")
    return path


def example_files() -> dict[str, str]:
    return {str(p.relative_to(EXAMPLE)): p.read_text() for p in EXAMPLE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def fix_bug(repo: Path) -> None:
    p = repo / "shop" / "pricing.py"
    p.write_text(p.read_text().replace(*FIX))


def seal(repo: Path, *tests: Path, extra_env: dict | None = None, request: str | None = None) -> subprocess.CompletedProcess:
    """`donegate seal REPO TESTS...` as a person runs it; the result, checked by the caller."""
    argv = [sys.executable, "-m", "donegate", "seal", str(repo), *map(str, tests), "--replace"]
    if request is not None:
        argv += ["--request", request]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=KIT, env={**os.environ, **(extra_env or {})})


def seal_example(repo: Path, extra_env: dict | None = None) -> Path:
    """The bundled example's acceptance tests sealed for `repo` (which must hold the example)."""
    res = seal(repo, *sorted(EXAMPLE_TESTS.glob("test_*.py")), request=REQUEST, extra_env=extra_env)
    assert res.returncode == 0, res.stderr
    return repo


def stop_once(repo: Path, home: Path) -> None:
    """One stop of session `s1` ("Done.") in `repo` with DONEGATE_HOME `home`, once its after-answer child has ended too
    (the state it keeps is the template's: conftest.py `blocked_shop`); its answer kept beside the repository
    (`first_stop`)."""
    res = run_hook(stop_payload(repo), env={"DONEGATE_HOME": str(home)}, after=True)
    (repo.parent / "first-stop.json").write_text(json.dumps({"returncode": res.returncode, "stdout": res.stdout,
                                                             "stderr": res.stderr}))


def first_stop(repo: Path) -> subprocess.CompletedProcess:
    """The answer of the stop `stop_once` made in `repo` (a copy of it: `blocked_shop`)."""
    out = json.loads((repo.parent / "first-stop.json").read_text())
    return subprocess.CompletedProcess([], out["returncode"], out["stdout"], out["stderr"])


def seal_single(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> Path:
    """A repository holding `mod.py` (VALUE = 1) with one hidden test file of `body` sealed for it."""
    return seal_files(tmp_path, {"mod.py": "VALUE = 1\n", **(files or {})}, "test_mod.py", body)


def pooled_single(tmp_path_factory, kit_home: Path, body: str) -> Path:
    """`seal_single`'s repository for a test that reads nothing of the seal but the repository: sealed once per
    run, body and donegate.yaml (`pooled_files`)."""
    return pooled_files(tmp_path_factory, kit_home, {"mod.py": "VALUE = 1\n"}, "test_mod.py", body)


def pooled_files(tmp_path_factory, kit_home: Path, files: dict[str, str], test_name: str, body: str,
                 check: Callable[[subprocess.CompletedProcess], None] | None = None) -> Path:
    """`seal_files`' repository for a test that reads nothing of the seal but the repository: sealed once per
    run, content and donegate.yaml (`sealed_copy`), each test a copy at the path the seal recorded. `check(seal's
    result)`: what the seal must have said, checked where it is made."""
    def build(repo: Path, home: Path) -> None:
        make_repo(repo, files)
        test = repo.parent / "hidden" / test_name
        test.parent.mkdir()
        test.write_text(body)
        res = seal(repo, test, extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr
        if check:
            check(res)

    key = json.dumps([files, test_name, body], sort_keys=True)
    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", "files-" + hashlib.sha256(key.encode()).hexdigest()[:10],
                       build, kit_home)


def pooled_hidden(tmp_path_factory, kit_home: Path, name: str, files: dict[str, str], hidden: dict[str, str]) -> Path:
    """`pooled_files` with several hidden test files ({name: text}), sealed together without the project's own suite:
    once per run, each test a copy (`sealed_copy`)."""
    def build(repo: Path, home: Path) -> None:
        make_repo(repo, files)
        folder = repo.parent / "hidden"
        folder.mkdir()
        for test, text in hidden.items():
            (folder / test).write_text(text)
        res = seal(repo, *sorted(folder.iterdir()), extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0, res.stderr

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", name, build, kit_home, own=False)


def seal_files(tmp_path: Path, files: dict[str, str], test_name: str, body: str) -> Path:
    """`tmp_path/repo` holding `files`, with one hidden test file (`tmp_path/hidden/test_name`) of `body`
    sealed for it."""
    repo = make_repo(tmp_path / "repo", files)
    test = tmp_path / "hidden" / test_name
    test.parent.mkdir()
    test.write_text(body)
    res = seal(repo, test)
    assert res.returncode == 0, res.stderr
    return repo


# The tests whose subject is the project's own suite (issue 44: docs/own-suite.md) or the seal's defaults: the pooled
# repositories (conftest's `sealed_shop`, the e2e `gated`) are sealed for them as the kit's default seals, own suite on.
# Every other test gets its copy sealed with the own suite off (`sealed_copy(own=False)`, `GatedRepo.create(own=False)`):
# what it proves (a hidden run, an attack, a scope, a report) does not involve the own suite, whose run at each stop
# cost about a third of the stop. A file named test_own* is marked whole (tests/conftest.py); a test elsewhere is marked
# `@pytest.mark.own_suite`.
OWN_SUITE = "own_suite"


def own_suite(request) -> bool:
    """Whether the test of `request` (a fixture's) is about the own suite (`OWN_SUITE`)."""
    return request.node.get_closest_marker(OWN_SUITE) is not None


# The same for the repositories a hook-level test seals itself (`seal`, `seal_example`, `seal_files`, a reseal of a
# pooled copy, `donegate seal` run by the test): `write_config` adds `own_tests: off` unless the text names
# `own_tests`, for every test tests/conftest.py sets this for (not about the own suite, not end-to-end). A seal of
# the example ran its own suite twice (~0.55 CPU-s) and each stop on it once more (~0.25 CPU-s), in tests about
# something else. Set per test (tests run one at a time in a worker process); read in the main thread only (a pool's
# runner thread builds for the e2e test that asked, whatever test runs meanwhile).
OWN_DEFAULT: str | None = None


def sealed_copy(root: Path, name: str, build: Callable[[Path, Path], None], kit_home: Path, own: bool = True) -> Path:
    """A fresh copy of a repository sealed once for every test of the run that asks for the same `name` under the same
    donegate.yaml (a seal costs a run of the hidden tests; a copy, milliseconds), whichever xdist worker asks.
    `own=False`: sealed with `own_tests: off` (`OWN_OFF`) unless the test's donegate.yaml names `own_tests`.

    `build(repo, home)` makes the repository at `repo` (and whatever beside it, in its parent folder,
    the slot) and seals it with DONEGATE_HOME=`home` (which holds the test's donegate.yaml). Each test
    then gets a copy of the slot at the very path the seal recorded (a moved repository is handed to a
    person): `<root>/<name>-<config>/<k>/slot/<name>`, the test before moved aside first, the slot the test's
    own; `kit_home` gets what the seal wrote (store, state, ledger), never the template's donegate.yaml.

    A seal holds its path, so a slot `k` serves one test at a time, across the workers (`_take_slot`): a test takes
    the first slot nobody holds, and seals it if it is not sealed yet. Under pytest-xdist each worker sealed each
    template for itself: up to six seals of it a run (`-n 6`), now as many as ever ran at once. `root` (a worker's `basetemp/sealed`) is read as the run's (`shared_sealed`)."""
    config_path = kit_home / "donegate.yaml"
    config = config_path.read_text() if config_path.exists() else ""
    if not own and not re.search(r"^own_tests\s*:|\"own_tests\"\s*:", config, re.M):
        config = _with_key(config or "{}", "own_tests", "off")
    base = shared_sealed(root) / f"{name}-{hashlib.sha256(config.encode()).hexdigest()[:10]}"
    base.mkdir(parents=True, exist_ok=True)
    k = _take_slot(base)
    template, slot = base / str(k) / "template", base / str(k) / "slot"
    if not template.exists():
        building = base / str(k) / "building"
        shutil.rmtree(building, ignore_errors=True)
        (building / "home").mkdir(parents=True)
        if config:
            (building / "home" / "donegate.yaml").write_text(config)
        shutil.rmtree(slot, ignore_errors=True)
        build(slot / name, building / "home")
        shutil.copytree(slot, building / "slot", symlinks=True)
        building.rename(template)  # whole or absent: a build that failed is made again
    if slot.exists():
        slot.rename(base / str(k) / f"used-{uuid.uuid4().hex[:8]}")
    # cp -a (links as links, modes and mtimes kept, as copytree(symlinks=True) with copy2): half the CPU of
    # shutil.copytree for the example's slot (757 files: 0.048 against 0.096 CPU-s a copy, measured).
    subprocess.run(["cp", "-a", str(template / "slot"), str(slot)], check=True, capture_output=True, timeout=120)
    for entry in (template / "home").iterdir():
        if entry.name == "donegate.yaml":
            continue
        if entry.is_dir():
            shutil.copytree(entry, kit_home / entry.name, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(entry, kit_home / entry.name)
    return slot / name


def shared_sealed(root: Path) -> Path:
    """`root` as every xdist worker of the run sees it: `.../pytest-N/popen-gwK/sealed` is `.../pytest-N/sealed`."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and root.parent.name == f"popen-{worker}":
        return root.parent.parent / root.name
    return root


# The slots this process holds, by thread: {thread id: {base: (slot, fd)}}. A thread's slot of a template is given
# back when it asks for that template again (a test, or a pool's runner, uses one copy of a name at a time) and, for
# the main thread, when the test ends (tests/conftest.py `_isolated_home`: `release_slots`).
_HELD: dict[int, dict[Path, tuple[int, int]]] = {}


def _take_slot(base: Path) -> int:
    """The number of a slot of `base` this thread now holds (an exclusive flock on `base/<k>.lock`, never waited for):
    the first one nobody holds, sealed already or not (then the caller seals it: whole or absent, `<k>/template`).
    A slot in use or being sealed is passed over: waiting for one (its sealer's test, then that worker's next test
    taking it again) left a worker idle up to its limit, and a seal costs less than that on a loaded machine."""
    import fcntl

    held = _HELD.setdefault(threading.get_ident(), {})
    if base in held:
        os.close(held.pop(base)[1])
    k = 0
    while True:
        fd = os.open(base / f"{k}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            k += 1
            continue
        held[base] = (k, fd)
        return k


def release_slots() -> None:
    """Give back the slots this thread holds (a test's end: another worker may take them)."""
    for _, fd in _HELD.pop(threading.get_ident(), {}).values():
        os.close(fd)


def run_hook(payload, *, env: dict | None = None, timeout: float = 300, after: bool = False) -> subprocess.CompletedProcess:
    """Run hooks/stop_gate.py the way Claude Code does: a subprocess with JSON on stdin. `after`: returned once the
    hook and every process that kept its file descriptors (the after-answer child, a fork) have ended: the write end
    of a pipe is handed to the hook, and the pipe reads empty once no process holds it."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return run_to_the_end([sys.executable, str(HOOK)], input=text, env={**os.environ, **(env or {})}, timeout=timeout,
                          after=after)


def run_to_the_end(argv: list[str], *, after: bool = True, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """`argv` run (its output captured as text); `after`: returned once every process that kept its file descriptors
    (a child it forked, as the hook's after-answer child) has ended too."""
    r, w = os.pipe() if after else (-1, -1)
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, pass_fds=(w,) if after else (), **kw)
        if after:
            import select
            import time

            os.close(w)
            w = -1
            end = time.monotonic() + 60
            while time.monotonic() < end:
                ready, _, _ = select.select([r], [], [], max(0.0, end - time.monotonic()))
                if ready and not os.read(r, 1):
                    return res
            raise AssertionError(f"a child of {argv[0]} still runs after 60 s")
        return res
    finally:
        for fd in (r, w):
            if fd >= 0:
                os.close(fd)


def stop_payload(repo: Path, session: str = "s1", message: str = "Done.", **extra) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": message, "transcript_path": "", **extra}


def ledger_lines(kit_home: Path) -> list[dict]:
    path = kit_home / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def write_config(home: Path, text: str, *, kit_held_share: bool = False) -> None:
    """The kit's `donegate.yaml` in `home`. On a machine where bubblewrap does not run, `confine: off` is
    added unless `text` says how to confine: there is no unconfined default, and a test that does not
    care about the walls says so (tests of the walls skip there: tests/support/require.py).

    `held_share: 0` is added unless `text` names it or `kit_held_share`: the kit's default holds back a share
    of a person's tests drawn at random at each seal, so a test that is not about held-back tests and reads a
    block's assertions (or counts shown failures) would pass or fail by the draw. Tests of the default say
    `kit_held_share=True` (tests/seal/test_held_default.py).

    `own_tests: off` is added where the test is not about the project's own suite (`OWN_DEFAULT`)."""
    from tests.support import require

    if require.unconfined() and not re.search(r"^confine\s*:|\"confine\"\s*:", text, re.M):
        text = _with_key(text, "confine", "off")
    if not kit_held_share and not re.search(r"^held_share\s*:|\"held_share\"\s*:", text, re.M):
        text = _with_key(text, "held_share", 0)
    if (OWN_DEFAULT and threading.current_thread() is threading.main_thread()  # a pool's runner may build an e2e test's
            and not re.search(r"^own_tests\s*:|\"own_tests\"\s*:", text, re.M)):
        text = _with_key(text, "own_tests", OWN_DEFAULT)
    (home / "donegate.yaml").write_text(text)


def _with_key(text: str, key: str, value: object) -> str:
    """`text` (YAML, or JSON: a flow mapping) with `key: value` added first."""
    if not text.lstrip().startswith("{"):
        return f"{key}: {value}\n" + text
    pair = f"{json.dumps(key)}: {json.dumps(value)}"
    return text.replace("{", "{" + pair + ", ", 1) if text.strip() != "{}" else "{" + pair + "}\n"


def stop_lines(kit_home: Path) -> list[dict]:
    """The Stop hook's lines of the ledger (a seal, install or label is a line too: `donegate.person.ownership`)."""
    return [r for r in ledger_lines(kit_home) if r.get("event") == "stop"]


def kept_file(folder: Path, pattern: str, timeout: float = 60) -> Path:
    """The first file under `folder` matching `pattern` (a glob), once the put-back's child has written it (the bytecode
    job after a stop's answer, `donegate.hidden.pyc`)."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = list(folder.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no {pattern} in {folder}")


def sealed_project(tmp_path_factory, kit_home: Path, name: str, files: dict[str, str], hidden: str, kept: int) -> Path:
    """A project of `files` sealed once per run with the hidden test `hidden` (`test_request.py`), all `kept` of
    its own tests passing at the seal; a copy per call."""
    def build(repo, home):
        make_repo(repo, files)
        test = repo.parent / "hidden" / "test_request.py"
        test.parent.mkdir()
        test.write_text(hidden)
        res = seal(repo, test, extra_env={"DONEGATE_HOME": str(home)})
        assert res.returncode == 0 and f"the project's own tests: {kept} of {kept} pass" in res.stdout, res.stdout + res.stderr

    return sealed_copy(tmp_path_factory.getbasetemp() / "sealed", name, build, kit_home)
