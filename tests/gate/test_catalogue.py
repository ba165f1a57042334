"""The catalogue of what a run looks like (issue 45 item 2), measured: the runs look like what they stand for (item 1).

One small project whose product module is the probe (tests/data/catalogue/look.py: every observable group, each
normalized so that two runs alike give equal values). It is run four ways, through real processes:
- (a) a developer's `python -m pytest` in the repository, from a shell (a test of theirs calls the probe);
- (b) a developer's own program, `python prog.py`, that imports the product and calls it;
- (c) the first hidden run and (d) the second, through the real Stop hook (one seal, then two stops confined in
  bubblewrap, the second with the bytecode the kit kept after the first, and one with `confine: off`).
Each run sends its snapshot over a FIFO outside the walls. The first run must equal (a), the second (b), in every
group the kit sets; a group that differs must be listed in tests/data/catalogue/catalogue.yaml with why the kit
cannot set it and what sees product code that reads it. A new difference fails with the group and the fix.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import yaml

from tests.support import require
from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload, write_config

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogue"
CATALOGUE = DATA / "catalogue.yaml"
RUNS = {"first": "a developer's `python -m pytest`", "second": "a developer's program (`python prog.py`)"}
# The variables a developer's shell would have of the test process's (the rest is the test harness's own).
SHELL_VARS = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME", "SHELL", "TZ", "HOME")
# And a few of a person's own, as a login shell has them (the runs drop them: catalogue.yaml says why).
PERSONAL = {"EDITOR": "vi", "LS_COLORS": "di=01;34", "XDG_SESSION_TYPE": "tty"}


@contextlib.contextmanager
def receiver():
    """A FIFO outside /tmp and the home (both hidden by the walls) and its lock; yields (fifo, lock, lines): every
    JSON line any run writes to it, read by a thread."""
    folder = Path(tempfile.mkdtemp(prefix="donegate-look-", dir="/var/tmp"))
    fifo, lock = folder / "look", folder / "lock"
    os.mkfifo(fifo)
    lock.write_text("")
    folder.chmod(0o755)
    lines: list[dict] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            with open(fifo, "rb") as f:  # blocks until a run opens it to write
                for raw in f:
                    if raw.strip():
                        lines.append(json.loads(raw))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield str(fifo), str(lock), lines
    finally:
        done.set()
        with contextlib.suppress(OSError):  # ENXIO: the reader is not waiting in its open (it will see `done`)
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # lets the reader's open return
        thread.join(5)
        shutil.rmtree(folder, ignore_errors=True)


def _taken(lines: list[dict], count: int) -> list[dict]:
    import time

    for _ in range(100):  # the reader thread may still be parsing the last line
        if len(lines) >= count:
            break
        time.sleep(0.05)
    got = lines[:]
    lines.clear()
    return got


def developer(repo: Path, command: str) -> subprocess.CompletedProcess:
    """`command` as a developer types it in their shell at the repository (bash, its own variables, its child)."""
    env = {k: os.environ[k] for k in SHELL_VARS if k in os.environ}
    env.update(PERSONAL)
    # `; exit` keeps bash the parent (a lone command is exec'd), as an interactive shell is.
    return subprocess.run(["bash", "-c", f"{command}; exit $?"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def differences(dev: dict, run: dict) -> dict[str, tuple]:
    """`group.key` -> (developer's, run's) for each value that differs."""
    out: dict[str, tuple] = {}
    for group in sorted(set(dev) | set(run)):
        a, b = dev.get(group), run.get(group)
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    out[f"{group}.{key}"] = (a.get(key), b.get(key))
        elif a != b:
            out[group] = (a, b)
    return out


def _apart(a: object, b: object) -> tuple[set[str], set[str]] | None:
    """For two lists: the items only the developer's run has, and only the hidden run's (None for other values)."""
    if not (isinstance(a, list) and isinstance(b, list)):
        return None
    return set(map(str, a)) - set(map(str, b)), set(map(str, b)) - set(map(str, a))


def _shown(a: object, b: object) -> str:
    apart = _apart(a, b)
    if apart and any(apart):
        return f"only the developer's: {sorted(apart[0])}, only the run's: {sorted(apart[1])}"
    return f"the developer's {json.dumps(a)}, the run's {json.dumps(b)}"


def _covered(entry: dict | list | None, run: str, kind: str, a: object, b: object) -> bool:
    """The catalogue lists this difference: the key for this run and confinement, and for a list, each item that
    differs among the entry's `dev_only` and `run_only` when it names them. (A key may have several entries.)"""
    if isinstance(entry, list):
        return any(_covered(e, run, kind, a, b) for e in entry)
    if not entry or run not in entry["runs"] or kind not in entry["confinement"]:
        return False
    apart = _apart(a, b)
    if apart is None or ("dev_only" not in entry and "run_only" not in entry):
        return True
    return apart[0] <= set(entry.get("dev_only", ())) and apart[1] <= set(entry.get("run_only", ()))


def unlisted(found: dict[tuple[str, str], dict[str, tuple]], catalogue: dict) -> list[str]:
    """Each difference (run, confinement) -> {group.key: values} the catalogue does not list, as a message."""
    out = []
    for (run, kind), diffs in sorted(found.items()):
        for key, (a, b) in diffs.items():
            listed = catalogue["listed"]
            if _covered(listed.get(key) or listed.get(key.split(".")[0] + ".*"), run, kind, a, b):
                continue
            out.append(f"{key}: the {run} hidden run ({kind}) does not look like {RUNS[run]}: {_shown(a, b)}. Fix: make "
                       f"the run set it as the developer's has it (issue 45 item 1), or, where the kit cannot set it, "
                       f"list `{key}` in {CATALOGUE.relative_to(DATA.parents[2])} (runs: [{run}], confinement: "
                       f"[{kind}]) with why and what sees product code that reads it")
    return out


def stale(found: dict[tuple[str, str], dict[str, tuple]], catalogue: dict) -> list[str]:
    """Listed keys that no measured run differed in (for the runs and confinements they name): the run was fixed,
    and the entry would hide the difference coming back. `may_match: true` marks a key that differs by machine or load."""
    out = []
    for key, entries in catalogue["listed"].items():
        for entry in entries if isinstance(entries, list) else [entries]:
            named = [(r, k) for r in entry["runs"] for k in entry["confinement"] if (r, k) in found]
            if entry.get("may_match") or not named:
                continue
            if not any(d == key or key.endswith(".*") and d.startswith(key[:-1]) for r, k in named for d in found[(r, k)]):
                out.append(f"{key}: listed in {CATALOGUE.name}, but the runs now look like the developer's "
                           f"({', '.join(f'{r} {k}' for r, k in named)}): remove the entry")
    return out


HIDDEN = "import pytest\n\nimport look\n\n\ndef test_look():\n    assert look.send({fifo!r}, {lock!r})\n"
# A developer's program calls the product more than once, as the second run's does (its warm-up round, then the
# judged one: `bare_fork.warm_up`); each harness's last look is compared.
PROGRAM = "import look\n\nlook.send({fifo!r}, {lock!r})\nlook.send({fifo!r}, {lock!r})\n"


def test_each_run_looks_like_the_developers_run_it_stands_for_or_the_catalogue_lists_why(tmp_path, kit_home):
    text = CATALOGUE.read_text()
    catalogue = yaml.safe_load(text)
    for part in text.split("\nlisted:"):
        keys = re.findall(r"^  ([^#\s][^:\n]*):", part, re.M)
        twice = {k for k in keys if keys.count(k) > 1}
        assert not twice, f"named twice in {CATALOGUE.name} (YAML keeps the last): {sorted(twice)}"
    kinds = ["off"]
    if require.sandbox_works():
        # twice: the second confined stop reads the product's bytecode the kit kept after the first (`hidden.pyc`)
        kinds[:0] = ["auto", "auto"]
    elif os.environ.get("DGTEST_REQUIRE_SANDBOX") == "1":
        pytest.fail("bubblewrap does not run here (DGTEST_REQUIRE_SANDBOX=1: the confined runs must be measured)")
    with receiver() as (fifo, lock, lines):
        repo = make_repo(tmp_path / "repo", {"look.py": (DATA / "look.py").read_text(), "VERSION": "1\n",
                                             ".gitignore": "__pycache__/\n.pytest_cache/\n"})
        hidden = tmp_path / "hidden"
        hidden.mkdir()
        (hidden / "test_look.py").write_text(HIDDEN.format(fifo=fifo, lock=lock))
        write_config(kit_home, "confine: auto\n" if kinds[0] == "auto" else "confine: off\n")
        res = seal(repo, hidden / "test_look.py")
        assert res.returncode == 0, res.stdout + res.stderr
        _taken(lines, 0)

        # The developer's two runs, from their shell, with the files they would have (removed after: not the agent's).
        home = Path(os.environ["HOME"])
        (home / ".bashrc").write_text("# a developer's\n")
        (repo / "tests").mkdir()
        (repo / "tests" / "test_look.py").write_text(HIDDEN.format(fifo=fifo, lock=lock))
        (repo / "prog.py").write_text(PROGRAM.format(fifo=fifo, lock=lock))
        ran = developer(repo, f"{sys.executable} -m pytest -q")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        ran = developer(repo, f"{sys.executable} prog.py")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        dev = {d["harness"]: d["look"] for d in _taken(lines, 3)}
        assert sorted(dev) == ["program", "pytest"], dev.keys()
        shutil.rmtree(repo / "tests")
        (repo / "prog.py").unlink()

        found: dict[tuple[str, str], dict[str, tuple]] = {}
        for n, kind in enumerate(kinds):
            write_config(kit_home, f"confine: {kind}\n")
            (repo / "VERSION").write_text(f"{n + 2}\n")  # a new tree: no cached verdict
            res = run_hook(stop_payload(repo, session=f"s{n}"))
            line = stop_lines(kit_home)[-1]
            assert res.returncode == 0, res.stderr + json.dumps(line["gates"].get("acceptance"))
            runs = {d["harness"]: d["look"] for d in _taken(lines, 3)}
            assert sorted(runs) == ["program", "pytest"], (runs.keys(), json.dumps(line["gates"]["acceptance"]))
            label = "bwrap" if kind == "auto" else "none"
            found.setdefault(("first", label), {}).update(differences(dev["pytest"], runs["pytest"]))
            found.setdefault(("second", label), {}).update(differences(dev["program"], runs["program"]))

    groups = set(dev["pytest"])
    assert groups == set(catalogue["groups"]), ("the probe's groups and the catalogue's differ: name each group the "
                                                f"probe reads in {CATALOGUE.name}", groups ^ set(catalogue["groups"]))
    assert all(k.split(".")[0] in groups for k in catalogue["listed"]), "a listed key names no group of the probe"
    problems = unlisted(found, catalogue) + stale(found, catalogue)
    assert not problems, "\n".join(problems)


def test_a_difference_the_catalogue_does_not_list_names_its_group_and_the_fix():
    """The check itself, on made-up snapshots: what a new fingerprint would look like to the catalogue test."""
    catalogue = {"listed": {"modules": {"runs": ["second"], "confinement": ["bwrap"], "run_only": ["test_look"]},
                            "mounts.*": {"runs": ["first", "second"], "confinement": ["bwrap"]}}}
    dev = {"modules": ["a"], "mounts": {"/": "rw", "/tmp": "rw"}, "interpreter": {"faulthandler": True}}
    listed_only = {"modules": ["a", "test_look"], "mounts": {"/": "ro", "/tmp": "tmpfs"}, "interpreter": {"faulthandler": True}}
    assert unlisted({("second", "bwrap"): differences(dev, listed_only), ("first", "bwrap"):
                     differences(dev, {**listed_only, "modules": ["a"]})}, catalogue) == []
    new = {"modules": ["a", "test_look", "spy"], "mounts": dev["mounts"], "interpreter": {"faulthandler": False}}
    problems = unlisted({("second", "bwrap"): differences(dev, new), ("first", "none"): differences(dev, listed_only)},
                        catalogue)
    assert [p.split(":")[0] for p in problems] == ["modules", "mounts./", "mounts./tmp", "interpreter.faulthandler",
                                                   "modules"]
    assert "only the run's: ['spy', 'test_look']" in problems[-1] and "list `modules` in" in problems[-1]
    assert "(runs: [second], confinement: [bwrap])" in problems[-1]
