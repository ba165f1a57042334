"""The stop's first run started by the launcher from the last stop's recipe (issue 48 item 2, `donegate.hidden.early`).

The real launcher, as install writes it, on a sealed repository whose hidden tests fail: a stop adopts the process the
launcher started only when it is exactly the run the stop starts, so a recipe that is stale, tampered with or missing
costs time and never changes what the stop decides: the same failing tests, the same assertions, no tamper finding.
"""

from __future__ import annotations

import fcntl
import json
import marshal
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from donegate.claude import settings as vocab
from donegate.hidden import copy, early
from tests.support.repos import HOOK, pooled_hidden, stop_lines, stop_payload, write_config

PY = os.path.abspath(sys.executable)


def _settled(kit_home: Path) -> None:
    """Wait until the last stop's after-answer child let go of the mirrors (as a model turn between stops does)."""
    for lock in (kit_home / "state" / "mirror").glob("*.lock"):
        fd = os.open(lock, os.O_RDWR)
        try:
            for _ in range(1200):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.05)
        finally:
            os.close(fd)


def _stop(kit_home: Path, repo: Path, n: int) -> dict:
    _settled(kit_home)
    # As install writes a checkout's Stop hook: -I -S, the launcher adding the site-packages after the early start
    argv = vocab.launch_words(HOOK, python=PY, home=kit_home, repo=repo, flags=("-S",))
    env = {k: v for k, v in os.environ.items() if k != "DONEGATE_HOME"}
    res = subprocess.run(argv, input=json.dumps(stop_payload(repo, session=f"early-{n}")), capture_output=True,
                         text=True, timeout=300, env=env)
    assert res.returncode == 2, res.stdout + res.stderr
    return stop_lines(kit_home)[-1]


def _judged(line: dict) -> tuple:
    """What a stop decided, without what differs from stop to stop by nature (times, seeds, objects' addresses)."""
    accept = line["gates"]["acceptance"]
    return (line["verdict"], accept["passed"], accept["failed"], accept["problem"],
            sorted((f["id"], re.sub(r"0x[0-9a-f]+", "0x", f["message"])) for f in accept["failing"]), accept.get("tamper"))


def _recipe(kit_home: Path) -> Path:
    (found,) = (kit_home / "state" / early.FOLDER).glob("*.recipe")
    return found


def _read(recipe: Path) -> tuple[dict, bytes]:
    size, _, rest = recipe.read_bytes().partition(b"\n")
    return marshal.loads(rest[:int(size)]), rest[int(size):]


def _write(recipe: Path, meta: dict, rest: bytes) -> None:
    blob = marshal.dumps(meta)
    recipe.write_bytes(b"%d\n" % len(blob) + blob + rest)


def test_a_stop_adopts_the_run_the_launcher_started_and_a_stale_or_tampered_recipe_changes_nothing(sealed_shop, kit_home):
    # The first stop has no recipe: it starts its run itself, and keeps what it started.
    first = _stop(kit_home, sealed_shop, 0)
    assert "early" not in first["gates"]["acceptance"] and first["verdict"] == "block"
    honest = _judged(first)
    # The next stops start their run from it, with the same verdict, from the second on: the product's bytecode and
    # the tests' rewrite the first stop's job kept after its answer are bound in where the first stop's run found
    # none yet, and the recipe is the same (the second stop ended its early run here, issue 48).
    lines = [_stop(kit_home, sealed_shop, n) for n in (1, 2, 3)]
    assert [x["gates"]["acceptance"].get("early") for x in lines] == ["adopted"] * 3
    assert all(_judged(x) == honest for x in lines), [_judged(x) for x in lines] + [honest]

    # Tampered: the early process deselects every test (adopted, no sealed test would have run). The stop ends that
    # process and runs its own: the same failures, the same assertions.
    recipe = _recipe(kit_home)
    meta, rest = _read(recipe)
    meta["argv"] += ["-k", "not_a_test_name"]
    _write(recipe, meta, rest)
    tampered = _stop(kit_home, sealed_shop, 4)
    assert _judged(tampered) == honest, _judged(tampered)
    assert tampered["gates"]["acceptance"]["early"] == "ended"
    assert b"not_a_test_name" not in _recipe(kit_home).read_bytes()  # the stop kept its own recipe again
    assert _stop(kit_home, sealed_shop, 5)["gates"]["acceptance"]["early"] == "adopted"

    # Stale: another configuration (no walls), another run. Ended, and judged as the configuration says.
    write_config(kit_home, "confine: off\n")
    stale = _stop(kit_home, sealed_shop, 6)
    assert _judged(stale) == honest, _judged(stale)
    assert stale["gates"]["acceptance"]["early"] == "ended"
    assert stale["gates"]["acceptance"]["confinement"] == "none"

    # Missing: nothing started early, the stop runs as it always did.
    _recipe(kit_home).unlink()
    missing = _stop(kit_home, sealed_shop, 7)
    assert "early" not in missing["gates"]["acceptance"] and _judged(missing) == honest


def test_unconfined_the_second_stop_after_a_seal_adopts_its_early_run(tmp_path_factory, kit_home):
    # confine: off from the first stop on, hidden tests large enough that their rewrite is kept (`pyc.REWRITE_FROM`):
    # the folder the first stop's job writes it to is named to the run from the first stop, so the second stop starts
    # the same run its launcher started (it was ended, issue 48). The look-alike: a failing test, judged alike.
    from donegate.hidden import pyc

    hidden = "import calc\n\n\ndef test_ten():\n    assert calc.price(10) == 900\n\n# " + "-" * pyc.REWRITE_FROM + "\n"
    repo = pooled_hidden(tmp_path_factory, kit_home, "early-unconfined", {"calc.py": "def price(u):\n    return u * 100\n"},
                         {"test_calc.py": hidden})
    write_config(kit_home, "confine: off\n")
    first = _stop(kit_home, repo, 0)
    lines = [_stop(kit_home, repo, n) for n in (1, 2)]
    assert [x["gates"]["acceptance"].get("early") for x in lines] == ["adopted"] * 2
    assert all(_judged(x) == _judged(first) for x in lines) and _judged(first)[2] == 1
    assert {x["gates"]["acceptance"]["confinement"] for x in [first, *lines]} == {"none"}


def test_a_recipe_laying_out_more_than_the_walls_is_never_built_in(tmp_path):
    # A recipe whose folder holds a file where the walls have a folder: its process is ended at once, its folder
    # removed, and the stop's run is built in a folder of its own.
    root, base = tmp_path / "home", tmp_path / "tmp"
    base.mkdir()
    path = Path(early.recipe_path(str(root), "/some/repo"))
    path.parent.mkdir(parents=True)
    meta = {"v": early.VERSION, "base": str(base), "lock": "", "go": True, "argv": ["/bin/sleep", "60"], "env": {},
            "cwd": early.TMP, "files": [["python", "file", "not a folder"]]}
    _write(path, meta, early.NONCE.encode() + b"\n{}\n")
    path.chmod(0o600)
    offer = early.start(str(root), "/some/repo")
    assert offer is not None and offer.pid and os.path.isfile(os.path.join(offer.tmp, "python"))
    assert early.take() is None
    assert offer.returncode is not None  # killed and reaped
    copy.remove_now()  # (its folder goes after the answer, with the runs' own)
    assert not os.path.exists(offer.tmp)
    # A recipe anyone may write is not the kit's: nothing is started from it.
    path.chmod(0o622)
    assert early.start(str(root), "/some/repo") is None


def test_an_early_run_ended_before_it_leads_its_group_is_ended_not_waited_for():
    """`Offer.end` right after the fork, before the child's `setsid`: the child is in the hook's group, so a kill of
    its group alone finds nothing, and the wait blocked on a child that waits on its go pipe (1 in 16 tries here)."""
    from donegate.hidden import early

    offer = early.Offer({}, b"", "", "", "")
    offer.pid = os.posix_spawnp("sleep", ["sleep", "30"], dict(os.environ))  # in our group, as before setsid
    assert os.getpgid(offer.pid) != offer.pid
    offer.end(folder=False)
    assert offer.returncode == -9  # killed (the old code waited the 30 s out: 0)
