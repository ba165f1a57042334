"""The second opinion: every would-be pass is run again, in a fresh confined process, by a harness unlike pytest
(`donegate.hidden.bare`), and the stop passes only when both runs agree.

What the product sees in the second run: no pytest (not in `sys.modules`, not importable), no `PYTEST_*`
variable, no plugin, reporter or nonce, the tests' `pytest` a small shim their code holds as a constant (in no
`sys.modules`), every test in its own fork of a zygote, called from a program's module-level frame that imported the test module once (forked by a supervisor that
never imports the product), its pass the fork's exit status and a token handed to it after the fork and
echoed only after the test function returned. Code that special-cases pytest, or forges pytest's result stream, passes the first run and
fails this one: the runs disagree, and that is tampering (hard evidence, never appealable).

A test the harness cannot run faithfully (see `bare_plan.plan`) is recorded as `unsupported`, decided by the
supervisor from the test file's syntax alone; it is not double-checked, and the ledger and the user say so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

    from donegate.tree import statcache

from donegate.core import proc
from donegate.hidden import answer_draw, answers, python as pyenv, ship

# What each module the harness loads imports as it is imported (its code at module level, a C module's own imports
# included: `__import__` is theirs too), recorded while the supervisor loads the harness, then `__import__` put back:
# {module: [the modules its import statements name, a dotted name's parents first]}. The zygote takes the harness's
# modules out of `sys.modules` before the product's import and puts one back, with what its import imported, when code
# imports it (`bare_shim.hide_harness`): as a program's fresh import would load them.
NOTE_IMPORTS = """\
    import builtins
    _real, _imported, _resolve = builtins.__import__, {}, sys.modules["_frozen_importlib"]._resolve_name

    def _noted(name, globals=None, locals=None, fromlist=(), level=0):
        module = _real(name, globals, locals, fromlist, level)
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "<module>":
            f = f.f_back
        who = f.f_globals.get("__name__") if f is not None else None
        if type(who) is str and who in sys.modules:
            full = _resolve(name, (globals or {}).get("__package__") or "", level) if level else name
            parts = full.split(".")
            names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            names += [full + "." + n for n in fromlist or () if type(n) is str and full + "." + n in sys.modules]
            seen = _imported.setdefault(who, [])
            seen.extend(n for n in names if n not in seen and n != who)
        return module

    builtins.__import__ = _noted
"""
# `python -c SUPERVISOR` (the project's interpreter, as the first run starts it: `python.START`): its parameters (one
# JSON line, with the sys.path spec of `python.Launch`), then the harness's source, arrive on stdin. It
# leaves without the interpreter's teardown once its report is out (it never imported product code, and
# its children are all waited for).
SUPERVISOR = """\
def main():
""" + pyenv.START + """\
    startup = list(sys.modules)  # what the interpreter itself holds before anything is imported
    _re = sys.modules.get("re")  # and the patterns in `re`'s cache, when its start imported it (`hide_harness`)
    _patterns = [*getattr(_re, "_cache", ()), *getattr(_re, "_cache2", ())]
""" + NOTE_IMPORTS + """\
    import json
    params = json.loads(sys.stdin.readline())
    params["startup"], params["patterns"] = startup, _patterns
    ns = {"__name__": params["shim"] + "_h"}
    LABEL = "<" + params["shim"] + ">"
""" + ship.READ + """\
    for code in codes:
        exec(code, ns)
    builtins.__import__ = _real
    params["imported"] = _imported
    if params.get("go") is not None:
        # Started before its copy was in step: no test runs until the hook says go.
        import os
        if os.read(params["go"], 1) != b"g":
            os._exit(96)
        os.close(params["go"])
    ns["supervise"](params)
    sys.stdout.flush()
    import os
    os._exit(0)
main()
"""
# Outcomes of the second run that block, and under which rule: `probe` and `disagree` are hard evidence,
# `imports-pytest` (the product needs pytest, which this run does not offer) is honest code's too.
RULES = {"failed": "disagree", "probe": "probe", "imports-pytest": "imports-pytest", "sandbox-probe": "sandbox-probe"}


# Up to this many sealed tests, every stop checks each again; above, every new requirement (a test that did not
# pass at the seal's baseline) and a share of the rest drawn afresh at each stop (`drawn`).
ALL_UP_TO = 200
SHARE = 4  # above ALL_UP_TO: a quarter of the tests that passed at the seal, and at least ALL_UP_TO in all


def drawn(tests: Sequence[str], manifest: dict[str, Any], every: bool = False) -> list[str]:
    """The tests the second run checks at this stop, in the sealed order: all of them up to `ALL_UP_TO`; above,
    every new requirement and a share of the tests that already passed at the seal, drawn now from the operating
    system's randomness (nothing in the repository, the run or an earlier stop tells which). `every`: all of them
    whatever their number (the runs disagreed earlier in the session: a retry is no new draw)."""
    if every or len(tests) <= ALL_UP_TO:
        return list(tests)
    passing = set(((manifest.get("baseline") or {}).get("passing")) or ())
    old = [t for t in tests if t in passing]
    keep = len(tests) - len(old)  # the new requirements: always
    k = min(len(old), max(len(old) // SHARE, ALL_UP_TO - keep))
    chosen = set(_system().sample(old, k)) if k > 0 else set()
    return [t for t in tests if t not in passing or t in chosen]


class SecondRun:
    def __init__(self) -> None:
        self.done = False
        self.problem = ""
        self.results: dict[str, dict[str, Any]] = {}
        self.duration = 0.0
        self.tamper = ""
        self.rule = ""
        self.output = ""  # the supervisor's stderr when it failed, for the kit's log only
        self.faithful = False  # its copy held exactly what the stop's look saw (`runner.Walls.faithful`)
        self.of = 0  # the sealed tests, when it checked a share of them (`drawn`)
        self.confirmed: dict[str, Any] = {}  # a share's disagreements cleared by a run of every test before them

    def unsupported(self) -> dict[str, str]:
        return {i: r.get("why", "") for i, r in self.results.items() if r.get("outcome") == "unsupported"}

    def summary(self) -> dict[str, Any]:
        """For the ledger: counts, what was not double-checked and why, and the tests the runs disagree on."""
        outcomes = [r.get("outcome") for r in self.results.values()]
        unsupported = self.unsupported()
        out: dict[str, Any] = {"checked": outcomes.count("passed"), "unsupported": dict(list(unsupported.items())[:20]),
                               "duration": round(self.duration, 4)}
        if unsupported:  # how many, and how many of them are hypothesis's (`bare_plan.GIVEN`): the pass says both
            out["not_checked"] = {"tests": len(unsupported),
                                  "given": sum(why.startswith("a hypothesis @given test") for why in unsupported.values())}
        against = {i: f"{r.get('outcome')}: {r.get('why', '')}"[:300] for i, r in self.results.items()
                   if r.get("outcome") not in ("passed", "unsupported")}
        if against:
            out["disagree"] = dict(list(against.items())[:20])
            if len(against) > 20:  # how many, when the ledger lists the first 20
                out["disagreeing"] = len(against)
        if self.of:
            out["drawn"] = {"checked": len(self.results), "of": self.of}
        if self.confirmed:
            out["confirmed"] = self.confirmed
        if self.problem:
            out["problem"] = self.problem
        return out


def _system() -> Any:
    """The system's randomness as `secrets` gives it (`secrets.SystemRandom`, `secrets.randbits`; its `token_hex` is
    `os.urandom(n).hex()`), without `secrets`' import of `hmac` and `base64` at every stop."""
    import random

    return random.SystemRandom()


def _source(shim: str, root: Path | None = None) -> str:
    """The harness, the probe and the bytecode hook: one namespace (`donegate.hidden.ship`), its code kept between
    stops under the state root with a placeholder for the stop's own secret name, spliced in here."""
    from donegate.hidden.runner import ship_keep

    return ship.payload(("bare_plan", "bare_shim", "bare_served", "bare_apart", "bare_fork", "bare", *ship.PROBE, "kept", "seeded", "answers", "traces"),
                        f"<{shim}>", ship_keep(root))


def run(store: Path, repo: Path, tests: Sequence[str], *, timeout: float, kind: str, allow: Sequence[str] = (),
        project: Path | None = None, python: "pyenv.Launch | None" = None, root: Path | None = None,
        tree: "statcache.Tree | statcache.Pending | None" = None, started: "Callable[[int], None] | None" = None,
        later: bool = False, progress: "list[int] | None" = None, seed: str = "", of: int = 0,
        sealed: "Sequence[str] | None" = None, key: str | None = None, first: str | None = None,
        avoid: "set[str] | None" = None) -> SecondRun:
    """Run `tests` (ids the first run passed) again under the bare harness, inside the same walls (`kind`:
    bwrap | sandbox-exec | none, as `confine.choose` gave the first run), with the same interpreter and
    sys.path as the first run (`python`, default found for `project`), but for the kit's pytest. With the
    state root and the stop's look (`tree`), a confined run works in the tree's second mirror, so it can run
    beside the first (`runner.setting`); `started` as `proc.run` has it (the stop cancels a second run whose
    first failed). `progress` gets an item per line of the report as it comes (how far a run the stop ended got).
    `seed`: the stop's secret the first run's `dg_random` drew from; the run is sent each test's own seed
    (`seeded.seed_of`), never the secret, and serves `dg_random` with it (without one, such tests are unsupported).
    `of`: the number of sealed tests when `tests` is the share of them `drawn` for this stop (the ledger says so);
    `sealed`: then every sealed id in order (a parametrised test's case is known by its place among all its cases).
    `key`: `paths.repo_key(repo)` when the caller has it (a stop derives it once: `donegate.gate.context`). `first`:
    the test pytest runs first (the first sealed one not held back), judged after a warm-up round of itself
    (`bare_fork.warm_up`: its pytest call was the product's first in a process, a fork's would be too). `avoid`: the
    tree's stems as the stop's look found them (`stems`), when a run is started again because its helper name was one."""
    from donegate.hidden import runner, stems
    from donegate.hidden.bare_itself import names_itself, spawns
    from donegate.hidden.bare_plan import split_id

    out = SecondRun()
    out.of = of  # `tests` is a share of that many sealed tests (`drawn`)
    repo, store = repo.resolve(), store.resolve()
    python = python or pyenv.launch((project or repo).resolve(), repo)
    project = Path(python.front[0]) if project is None else project.resolve()
    nonce = os.urandom(16).hex()
    # The run holds no answer (`answers.py`): the tests' sources go in with their literal expected values taken out,
    # the candidates follow per test on a pipe, and which candidate is the expected one stays here.
    secret = _secret()
    hold = secret["hold"]
    files = runner.test_files(store)
    # the sources with the held asserts out and their code compiled, as the kit kept them for this seal (`rewritten`)
    kept, compiled, keeping = _rewritten(root, key or _key(repo), files, sealed or tests, secret) if root is not None \
        else (None, None, None)
    sources, held, *at = kept or answers.answer_sources(files, hold)  # (`at`: where pytest is shown, kept with them)
    # tests that write their own module's name out, which a program's `__main__` is not: not double-checked
    itself = {p.name: found for p in files if (found := names_itself(p.read_bytes(), p.name))}
    with runner.setting(store, repo, kind, project=project, python=python, root=root, tree=tree, slot="second",
                        pytest_env=False, later=later, key=key) as walls:
        spec = walls.spec
        # The program files' text (`_programs`: closed by `proc.run` once handed over, as the pipes are). Where a file
        # stays empty, tests whose multiprocessing children run it again are not double-checked (`bare_itself.spawns`).
        names = program_names({split_id(t)[0] for t in (sealed or tests)}, walls.seen_project, sources)
        # the program's text as a program's: pytest named by a helper module's name (`shown`), bound beside it, none of
        # the tree's stems: drawn from those kept with the last look, checked against the stop's own before the run goes
        taken: list[set[str]] = []
        there, check = _stems(repo, walls, tree, avoid, taken)
        helper = _helper(walls.seen_project, spec, sources, names, there)
        shown = stems.as_shown(sources, helper, *at)
        programs, fds, empty = _programs(walls, sources, spec, names, shown, helper) if walls.kind == "bwrap" \
            else ([], [], set(sources))
        newer = tuple(int(x) for x in (python.interp.version or "0.0").split(".")[:2] if x.isdigit()) >= (3, 14)
        for p in (p for p in files if p.name in empty):
            for qual, why in spawns(p.read_bytes(), newer).items():
                itself.setdefault(p.name, {}).setdefault(qual, why)
        # The kit's pytest is only for a test retried with the product's `import pytest` allowed (never run).
        params = {"nonce": nonce, "shim": secret["shim"], "probe": secret["probe"], "hold": hold,
                  "repo": spec["repo"], "theirs": spec["theirs"], "cwd": str(walls.seen_project), "allow": list(allow), "tests": list(tests),
                  **({"sealed": list(sealed)} if sealed is not None and list(sealed) != list(tests) else {}),
                  "front": spec["front"], "site": spec["site"], "pytest": spec["pytest"], "pyc": spec.get("pyc", ""), "shared": spec["shared"],
                  "executable": spec["executable"], "prefix": spec["prefix"], "sources": sources, "shown": shown, "helper": helper, "itself": itself, "names": names,
                  # each test module's `__file__`: absolute, as pytest's, in the project's folder (where the bare name
                  # pointed): never the store's (the first run's tests lie outside the repository, a developer's inside
                  # it; code that keys on it gets two answers), nor a folder that tells this run apart
                  "folder": str(walls.seen_project), "first": first}
        if compiled:
            params["compiled"] = compiled
        if seed:
            from donegate.hidden.seeded import seed_of

            params["draws"] = [seed_of(seed, t) for t in tests]
        asked = started
        started = walls.go(started, check=None if check is None else lambda: check(helper))
        params["go"] = walls.wait
        places, params["cands"] = _candidates(tests, held)
        argv = [*walls.prefix[:-1], *programs, *walls.prefix[-1:], *walls.argv, "-c", SUPERVISOR]
        res = proc.run(argv, timeout=timeout, cwd=walls.cwd, env=walls.env, input=json.dumps(params) + "\n" + _source(params["shim"], root),
                       pass_fds=(*walls.passed, params["cands"], *fds), started=started,
                       on_line=None if progress is None else (lambda line: progress.append(1)))
        out.faithful = walls.faithful
    if keeping is not None:  # queued once the run is done: a mirror taken before would do it at once (`copy.drain`)
        from donegate.hidden import copy as throwaway

        throwaway.after(keeping)
    if taken and helper in taken[0]:  # its name was taken in the tree since the last look: ended unrun, run again
        return run(store, repo, tests, timeout=max(1.0, timeout - res.duration), kind=kind, allow=allow, project=project,
                   python=python, started=asked, progress=progress, seed=seed, of=of, sealed=sealed, key=key, first=first,
                   avoid=taken[0])
    out.duration = res.duration
    if res.timed_out:
        out.problem = f"the second run of the hidden tests did not finish within {timeout:g} s (timeout)"
        return out
    for line in res.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or msg.get("n") != nonce:
            out.problem = "the second run's report carried a line the harness did not write"
            out.tamper, out.rule = out.problem, "stream"
            return out
        # One line per test, in the order asked, then `done`, once: a child that reached the report
        # (say through /proc) would have to write before the supervisor and be caught repeating it.
        if out.done or (msg.get("done") and len(out.results) != len(tests)) or \
                (not msg.get("done") and (len(out.results) >= len(tests) or msg.get("id") != tests[len(out.results)])):
            out.problem = "the second run's report was out of order or repeated"
            out.tamper, out.rule = out.problem, "stream"
            return out
        if msg.get("done"):
            out.done = True
        else:
            out.results[msg["id"]] = {k: msg.get(k) for k in ("outcome", "why", "duration")}
            if msg.get("outcome") == "passed":  # the held asserts' answers, judged here (`answers.answer_judge`)
                why = _judged(msg.get("answers"), *places[msg["id"]])
                if why:
                    out.results[msg["id"]] = {**out.results[msg["id"]], "outcome": "failed", "why": why}
    if not out.done:
        last = (res.stderr.strip().splitlines() or [""])[-1][:300]  # a traceback's last line names the error
        out.problem = f"the second run of the hidden tests ended before reporting (exit code {res.returncode}){': ' + last if last else ''}"
        out.output = res.stderr[-4000:]
        return out
    if res.returncode != 0:  # the supervisor reported, then did not end as it does: something ended it
        out.problem = f"the second run's supervisor ended with exit code {res.returncode} after its report"
        return out
    _judge(out, first)
    return out


# What developers name a program that tries their code (`{}`: the test file's subject, `test_calc.py` -> `calc`).
PROGRAM_NAMES = ("main.py", "app.py", "run.py", "demo.py", "example.py", "script.py", "prog.py", "play.py", "scratch.py",
                 "try_{}.py", "use_{}.py", "run_{}.py", "check_{}.py", "{}_demo.py", "{}_example.py", "{}_script.py")


def program_names(tested: set[str], folder: Path, sources: dict[str, str]) -> dict[str, str]:
    """{test file: the name of the program it is in the second run} (`bare.supervise`: its `__file__`, `sys.argv[0]`,
    its code's file name): drawn for this stop from the names developers give a program (`PROGRAM_NAMES`), never
    `test_*.py`, which only a test framework runs: code right only where its caller's file, the program or a file in
    the project's folder is named `test_*` is then wrong in the second run (issue 45: OR_NAME). Never a name the
    folder holds (a file, a folder or a module of its stem), one a sealed file imports, or another program's."""
    import re

    try:
        taken = {n for e in os.listdir(folder) for n in (e, e.partition(".")[0])}
    except OSError:
        taken = set()
    taken |= {m.partition(".")[0] for t in sources.values() for m in re.findall(r"^[ \t]*(?:from|import)[ \t]+([\w.]+)", t, re.M)}
    taken |= {rel[:-3] for rel in sources}
    pick, out = _system(), dict[str, str]()
    for rel in sorted(tested):
        words = [w for w in rel.rpartition("/")[2][:-3].split("_") if w and w.lower() != "test"]
        subject = "_".join(words) or "it"
        free = [n for n in (p.format(subject) for p in PROGRAM_NAMES) if n not in taken and n[:-3] not in taken]
        name = pick.choice(free) if free else f"try_{subject}_{len(out)}.py"
        taken |= {name, name[:-3]}
        out[rel] = name if "/" not in rel else rel.rpartition("/")[0] + "/" + name
    return out


MOUNTS = 32  # program files bound with their text at most (`_programs`): 32 mounts ~0.03 s of bubblewrap's setup


# What a developer names a module of their own beside a program, as long as `pytest` (the program's text names it so:
# `as_shown`, every column where it was), and its text (`bare_helper.py`'s, `_helper_text`): a developer's own small
# checks, what the sealed tests use of pytest (`bare_plan.SHIM`: a file using more is not double-checked), for the
# program's spawn children. It was pytest itself under that name (`import pytest`, `sys.modules[__name__] = pytest`):
# a product that read the files beside its program found the test framework named there (red2b, a stop passing with
# the bug in); a developer's helper names none.
HELPER_NAMES = ("checks", "common", "helper", "shared", "verify", "expect", "assure", "basics", "things", "models")


def _helper_text() -> str:
    return Path(__file__).with_name("bare_helper.py").read_text()


# Past the ten, as long too: more such words, then six letters and digits drawn (never pytest shown again)
HELPER_MORE = ("audits", "claims", "guards", "proofs", "trials", "probes", "ensure", "truths", "bounds", "limits")


def _helper(folder: Path, spec: dict[str, Any], sources: dict[str, str], names: dict[str, str], stems: set[str]) -> str:
    """A name drawn for this stop that nothing can import yet and no source names: no module of its stem anywhere in
    the repository's tree (a folder the product puts on sys.path: `vendor/models.py` was shadowed by the helper, an
    honest product's runs disagreed), in the project's paths or the standard library. From HELPER_NAMES, else
    HELPER_MORE, else six letters and digits drawn: never none (the program's text then named pytest again: every name
    taken by a file, `checks.txt`..., passed with the bug in). A folder that cannot be listed is passed over: a name it
    hides makes the runs disagree (closed)."""
    import re
    import sys

    there = stems | set(getattr(sys, "stdlib_module_names", ()))
    for d in {folder / os.path.dirname(n) for n in names.values()} | {Path(d) for d in (*spec["front"], *spec["site"], *spec["pytest"])}:
        try:
            there |= {e.partition(".")[0] for e in os.listdir(d)}
        except OSError:
            pass
    there |= {w for t in sources.values() for w in re.findall(r"\w+", t)}
    pick = _system()
    for pool in (HELPER_NAMES, HELPER_MORE):
        free = [n for n in pool if n not in there]
        if free:
            return pick.choice(free)
    while True:  # never a keyword (each holds a vowel, these none)
        name = pick.choice("bcdfghjklmnpqrstvwxz") + "".join(pick.choice("bcdfghjklmnpqrstvwxz0123456789") for _ in range(5))
        if name not in there:
            return name


def _stems(repo: Path, walls: Any, tree: Any, avoid: set[str] | None, taken: list[set[str]]
           ) -> tuple[set[str], "Callable[[str], bool] | None"]:
    """The tree's stems the helper's name must avoid (`donegate.hidden.stems`), and what checks a name drawn from them
    once the stop's look is here (None: nothing to check). A stop's look still to come: the stems kept with the last
    look, checked against this one's before the run goes (`taken` gets them); a look: its stems; else a walk."""
    from donegate.hidden import stems
    from donegate.tree import statcache

    if avoid is not None:
        return avoid, None
    if isinstance(tree, statcache.Tree):
        return stems.now(tree, stems.known(tree.stat_path)), None
    if isinstance(tree, statcache.Pending) and tree.stat is not None and walls.told.get("bring") is not None:
        kept = stems.known(tree.stat)
        return (stems.walked(repo) if kept is None else kept[1]), lambda name: stems.clear(tree, kept, name, taken)
    return stems.walked(repo), None


def _programs(walls: Any, sources: dict[str, str], spec: dict[str, Any], names: dict[str, str], shown: dict[str, str],
              helper: str | None) -> tuple[list[str], list[int], set[str]]:
    """bubblewrap's arguments that give each test file's program (`bare_fork.enter_program`: `python test_x.py` in the
    project's folder) its text inside the walls, and the descriptors they read it from. multiprocessing's spawn and
    forkserver run `__main__`'s file again in a fresh interpreter (as `__mp_main__`) and find a function of the test
    file there by name: with an empty file, every worker of a pool mapping one failed and the pool started workers
    until the second run's time ran out (an honest stop handed to a person). The text is the one the run is sent
    (its held literals out: no more than `linecache` holds there), copied by bubblewrap from a memory file into its
    own temporary filesystem and bound over the program's path: never on a disk, gone with the walls' mount namespace
    (the empty mount point is the mirror's, and its put-back removes it). Not where the tree has a file of that name
    (the project's own, as before), nor for a file that imports pytest when the project's interpreter cannot: its
    children would fail at that import, where with an empty file they run whatever of the product they are given (and
    under pytest, a child finds no function of the test file either: importing it imports pytest). bubblewrap's cost of
    a mount grows with the mounts before it (100 files' 0.24 s of wall, 500 files' 3.7 s, 1,000 files' 14.5 s): past
    `MOUNTS` files, only those a child can look something up in (`looked_up`), at most `MOUNTS`. Returns the arguments,
    the descriptors, and the files left empty where the text was wanted (their name taken, or past the cap). A text
    `shown` (naming `helper` where it named pytest) gets the helper module (`_helper_text`) bound beside its program."""
    import re

    have = any(os.path.exists(os.path.join(d, "pytest", "__init__.py")) for d in [*spec["front"], *spec["site"]])
    args: list[str] = []
    fds: list[int] = []
    keep = walls.told.setdefault("keep", set())  # the mirror's walk before the run leaves them (`copy.Mirror.sync`)
    empty = set()
    want: list[tuple[str, str, Path]] = []
    for rel, text in sorted(sources.items()):
        dest = walls.seen_project / names.get(rel, rel)
        if os.path.lexists(dest) or not dest.parent.is_dir():
            empty.add(rel)
            continue
        if not have and re.search(r"^[ \t]*(import|from)[ \t]+_?pytest\b", text, re.M):
            continue
        want.append((rel, text, dest))
    if len(want) > MOUNTS:  # past the cap, the files a child can look something up in first; the others stay empty
        needed = [w for w in want if looked_up(w[1])]
        empty |= {rel for rel, _, _ in needed[MOUNTS:]}  # their spawning tests are not double-checked (`spawns`)
        want = needed[:MOUNTS]
    helpers = {dest.parent / f"{helper}.py" for rel, _, dest in want if rel in shown}
    helper_text = _helper_text() if helpers else ""  # read once, bound beside every program folder that needs it
    for text, dest in [(shown.get(rel, text), dest) for rel, text, dest in want] + [(helper_text, h) for h in sorted(helpers)]:
        fd = os.memfd_create("program", os.MFD_CLOEXEC)
        os.write(fd, text.encode("utf-8", "surrogateescape"))
        os.lseek(fd, 0, os.SEEK_SET)
        fds.append(fd)
        args += ["--perms", "0644", "--bind-data", str(fd), str(dest)]
        keep.add(dest.relative_to(walls.seen_repo).as_posix())
    return args, fds, empty


def _secret() -> dict[str, str]:
    """A stop's secret names: the shim's marker, the probe's, the held asserts' sink."""
    return {"shim": "m" + os.urandom(6).hex(), "probe": "_p" + os.urandom(6).hex(), "hold": "_h" + os.urandom(6).hex()}


def keep_at_seal(root: Path, key: str, store: Path, sealed: Sequence[str]) -> None:
    """The second run's tests rewritten and kept by the seal (`rewritten.keep`), as a stop that found none keeps them
    after its answer: a seal's first stop reads them too (no compile in its run, no `ast` in its hook when its tree has
    nothing to scan; issue 48 item 2). The runs' payloads and the first run's `.pth` line too (`ship.payload`,
    `bootstrap.pth`: ~11 ms of CPU at a state root's first stop, every test's first stop in the kit's suite). Anything
    that goes wrong keeps nothing: the stop does it, as before."""
    try:
        from donegate.hidden import bootstrap, runner

        secret = _secret()
        keeping = _rewritten(root, key, runner.test_files(store), sealed, secret)[2]
        if keeping is not None:
            keeping()
        runner._plugin_source(root), _source(secret["shim"], root), bootstrap.pth(runner.ship_keep(root))
    except Exception:  # noqa: BLE001 - a seal never fails for a cache
        pass


def _key(repo: Path) -> str:
    from donegate import paths

    return paths.repo_key(repo)


def _rewritten(root: Path, key: str, files: Sequence[Path], ids: Sequence[str],
               names: dict[str, str]) -> tuple[Any, Any, "Callable[[], None] | None"]:
    """((the sources, the held values), the compiled tests for `params`, None) as the kit kept them for this seal
    (`rewritten.py`), or (None, None, the job that keeps them for the next stops, for once the hook has answered)."""
    from donegate.hidden import rewritten
    from donegate.hidden.bare_plan import split_id

    tested = sorted({split_id(t)[0] for t in ids})
    found = rewritten.stamp(files, tested)
    if found is None:
        return None, None, None
    stamp, datas = found
    where = rewritten.path(root, key)
    got = rewritten.load(where, stamp, names)
    if got is not None:
        return (got[0], got[1], got[3]), got[2], None
    lengths = {w: len(n) for w, n in names.items()}
    return None, None, lambda: rewritten.keep(where, stamp, files, datas, tested, lengths)


def looked_up(text: str) -> bool:
    """Whether a child in a fresh interpreter could look something of this test file up by name (`__mp_main__.f`,
    unpickled): the file defines a class at its top (a test class's instance goes with its bound methods), a function
    not named as a test, or a test function its text names again. Under pytest such a child imports the test module
    only then (its `__main__` is pytest's), so past `MOUNTS` files one with nothing of that kind is left empty: its
    children run as they do with the text (what an empty file still tells a product is then open, for such suites)."""
    import re

    if re.search(r"^(?:class\s|(?:async[ \t]+)?def[ \t]+(?!test))", text, re.M):
        return True
    tests = re.findall(r"^(?:async[ \t]+)?def[ \t]+(test\w*)", text, re.M)
    if not tests:
        return False
    words: dict[str, int] = {}
    for w in re.findall(r"\w+", text):
        words[w] = words.get(w, 0) + 1
    return any(words.get(t, 0) > 1 for t in tests)


def _candidates(tests: Sequence[str], held: dict[str, dict[str, list[Any]]]) -> tuple[dict[str, Any], int]:
    """({test id: (its held asserts, the expected value's place among each one's candidates)}, the read end of a
    pipe that carries each test's candidates, in the order of `tests`, written by a thread as the run reads)."""
    import threading

    from donegate.hidden.bare_plan import split_id

    import random

    places, chunks = {}, []
    for t in tests:
        rel, qual, _ = split_id(t)
        mine = held.get(rel, {}).get(qual, [])
        # a generator of its own per test, seeded from the system's randomness: a run that sees one test's draws
        # learns nothing of another's (one system call a test, not one a draw: 2,000 tests 0.2 s -> 0.05 s)
        blob, where = answer_draw.answer_ticket(mine, random.Random(_system().getrandbits(128))) if mine else (b"", {})
        places[t] = (mine, where, {k: e for items in held.get(rel, {}).values() for k, e in items})
        chunks.append(b"%07d" % len(blob) + blob)
    r, w = os.pipe()

    def write() -> None:
        try:
            with open(w, "wb") as fh:
                fh.write(b"".join(chunks))
        except OSError:  # the run ended without reading them all
            pass
    threading.Thread(target=write, name="donegate-candidates", daemon=True).start()
    return places, r


def _judged(said: Any, held: list[Any], places: dict[int, int], others: dict[int, Any]) -> str:
    """Why a test the fork passed did not pass by its held asserts' answers ("" when it did)."""
    try:
        got = {int(k): (str(v[0]).encode(), str(v[1]).encode()) for k, v in (said or {}).items()}
    except (TypeError, ValueError, IndexError, AttributeError):
        got = None
    why = answers.answer_judge(got, held, places, others)
    return why


# Where the test that disagrees is the one the second run runs twice (`first`: `bare_fork.warm_up`), the line says so: a
# test asserting what only a fresh process gives (a count at 1, a first call's log line, a record of its own from empty)
# fails there too, and the person who wrote it can tell the two apart; the block stays hard evidence.
_TWICE = (", where it ran twice in one process, pytest's first test, as a program calls the code more than once (a test "
          "asserting what only a fresh process gives, a count at 1 or a first call's log line, fails there too: its "
          "state wants a fixture that resets it)")


def _judge(out: SecondRun, first: str | None = None) -> None:
    """The first hard disagreement (or, failing that, the first soft one) becomes the run's tamper line."""
    found = [(i, r) for i, r in out.results.items() if r.get("outcome") in RULES]
    found.sort(key=lambda x: RULES[x[1]["outcome"]] in ("imports-pytest", "sandbox-probe"))  # hard evidence first
    if not found:
        return
    nodeid, r = found[0]
    rule = RULES[r["outcome"]]
    out.rule = rule
    if rule == "probe":
        out.tamper = f"the equality probe, in the second run: {r.get('why')} (in {nodeid})"
    elif rule == "sandbox-probe":  # seen by the harness's watch (`traces.py`), as the first run sees it
        out.tamper = f"{r.get('why')} (in the second run, {nodeid})"
    elif rule == "imports-pytest":
        out.tamper = (f"the code under test imports {r.get('why') or 'pytest'}, which the second run does not offer: "
                      f"{nodeid} passed under pytest and failed without it")
    else:
        out.tamper = (f"the two runs disagree: {nodeid} passed under pytest and failed under the second harness "
                      f"({r.get('why') or 'no reason'}){_TWICE if nodeid == first else ''}: the code under test behaves "
                      "differently when pytest runs it")
