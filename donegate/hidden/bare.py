"""The second harness, inside its confined process: the sealed tests again, with no pytest anywhere.

It runs as `python -I -c SUPERVISOR`; this file's source (with probe.py's) arrives on stdin and is executed in
a function's namespace. Nothing of the kit is imported; the standard library only.

- The supervisor reads the sealed test files and plans them from their syntax tree alone: it never imports
  the tests or the repository. A test it cannot run faithfully (a fixture it does not serve, `request`,
  fixture params, indirect parameters, `pytest_plugins`, a `pytest_generate_tests` reading `config`, async, `__init__`
  in a class, bases other than unittest's `TestCase`, `IsolatedAsyncioTestCase` and the file's own) is reported as `unsupported` by the supervisor itself, never by code the product could reach.
- One zygote, a fork of the supervisor, imports every test file (and so the product) once, as pytest's
  collection does: its stdin is /dev/null, its stdout and stderr a pipe a child of the supervisor drains (as a
  program's run from a shell that reads it), its two pipe ends at random descriptors; the tests' `import pytest`
  binds the kit's shim, which their code holds as a constant (no module, name or finder of the harness's in
  `sys.modules`, `__main__` or `sys.meta_path`: importing pytest, _pytest or pluggy fails as a missing module's
  does, by an audit hook), and it imports the test modules in pytest's order.
  (A zygote per file imported the product 500 times for 500 files: more than 120 s a stop.) Each test then
  runs in a fork of the zygote: its fixtures, the test and the teardowns. The fork is made from a thread whose
  only frame is a program's module-level code (`program_fork`): in the fork, that thread is the main thread and
  the test is called from the program's frame, with no frame of the harness's below it. The zygote is forked so too
  (`_Zygote`): one that finds threads running after the import runs its first test itself, from its own bottom
  frame, that test's program, and ends. While the test runs, the fork holds
  nothing it could echo: its three pipes (close-on-exec, at random descriptors) are empty. Only once the test
  returned does the fork ask for the token (the supervisor drew it after the fork; the zygote hands it over
  only when asked), write it back and end with the exit status drawn with it (`passing_code`, never 0). The
  supervisor, which never imported product code, judges each test from the fork's exit status and what it
  wrote back, as the zygote reports them: that status and the exact token, or the test did not pass. A fork
  that exec'd (/bin/true: status 0), ended by `os._exit`/`sys.exit`, or echoed what it found in
  /proc/self/fd has not passed. (Code written against this harness's protocol can still forge it: see
  docs/security.md.)
- Every `==`/`!=` in a test's assert goes through the equality probe (probe.py): an object equal to
  everything fails the test with `P:` (hard evidence).
- A test that fails only because the product's own `import pytest` was refused runs again with pytest
  importable (but not running): passing then, it is `imports-pytest` (appealable, or `scan_allow`);
  failing still, the runs disagree.
"""

import ast
import contextlib
import json
import linecache
import os
import select
import signal
import sys
import time
from types import ModuleType as _ModuleType

# Sent to a run, this source shares one namespace with bare_plan's and bare_shim's (`second._source`); imported by
# the kit (its tests), it takes their names from the modules. A shipped namespace has no `__package__`.
if globals().get("__package__"):
    from donegate.hidden.bare_plan import HARNESS, SEEDED, SERVED, TOKEN, nosed, noses, plan, split_id, unit_first
    from donegate.hidden.bare_served import _mkdtemp, _temp_dir
    from donegate.hidden.bare_shim import MAIN_ORDER, _as_program, _own_names, _run_test, bind, hide_harness, make_shim, refuse_harness, shim_compile
    from donegate.hidden.bare_fork import (PROGRAM, RESULT_MAX, _Alarm, _drain, _exactly, _failure, _hide, _only, _sink, _test_steps,
                                           _sigchld_back, _sigchld_kept, _threads, enter_program, module_marks, passing_code, program_fork, renamed, rewrite)
    from donegate.hidden.bare_apart import compared_apart


# --- one test, in a fork ----------------------------------------------------------------------------------


def zygote(job, codes, tests, cmd_r, rep_w, own):
    """The fork that imports every sealed test module (and with them the product) once, in pytest's order, then
    forks once per test the supervisor sends it (`_Zygote`; `tests`: what the supervisor planned, before this
    fork, each asked for by its place in the list). Its stdin is /dev/null and its output the
    supervisor's drained pipe (`_sink`) before any product code runs; nothing of the supervisor's is left open in it
    but its two pipes, at random descriptors. Returns only to run a test itself (threads run after the import), the
    first it was sent: `own` is (that test file's module, the steps its program, this process's bottom frame, runs
    then; that file's name), and the steps are set."""
    write, exit_ = os.write, os._exit
    hits, out = [], [None]  # refused harness imports; the fork's result pipe, once there is a fork
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    for fd in (1, 2):  # a pipe, as a program run from a shell whose output is read (drained by the supervisor's child)
        os.dup2(job.get("output", devnull), fd)
    cmd_r, rep_w = _hide(cmd_r), _hide(rep_w)
    _only(cmd_r, rep_w)  # nothing else of the supervisor's: its report pipe above all
    mods, failed, fixtures, flagged = {}, {}, {}, []
    try:
        globals()["DFS"][:] = [globals()["closures"](job["pytest"])]  # how its pytest walks fixtures (`bare_served.order`)
        _as_program(job["program"], job["cwd"])
        main = vars(sys.modules["__main__"])  # what each test file's module starts from: a program's `__main__`
        compiled = job["compiled"]  # once, in the supervisor: each test file's is it renamed
        if "imports-pytest" not in job["allow"]:
            refuse_harness(hits, job["own"])
        probe = globals()["make_probe"](job["repo"], lambda what: _alarm(out, "P:" + what))

        # A held assert's value goes to the fork's result pipe as returned, an object waits for its candidates
        # (`answers.py`); a zygote running its one test itself keeps the answers for its report (`said`).
        said, later = [], []
        # (not the warm-up round's, `out[1]`: `bare_fork.warm_up`)
        hold = globals()["answer_hold"](lambda rec: None if out[1:] == [True] else write(out[0], rec) if isinstance(out[0], int)
                                        else said.append(rec), later)
        # what the tests' code holds as marker constants (`_ToShim`): the shim, the probe, the held asserts' sink
        def probe_cmp(left, right, op, *result):  # the result as the test's frame compared it (`compare_probes`)
            if op == "in":  # the decoys it compares an object with first, the expected value at a drawn place among them
                return probe.placed(left, right)
            if type(op) is tuple and op[0] == "decoys":  # those of unittest's other comparisons (`probe_unit`)
                return probe.decoys_for(left, right, op[1])
            if len(result) == 2:  # whether it equalled one of them, then the result
                return probe.first(left, right, op, *result)
            return probe(left, right, op, result[0] if result else left == right if op == "==" else left != right)

        probe_cmp.unit, probe_cmp.listed = probe.unit, probe.listed  # unittest's own assert methods only (`probe_unit`)
        # the shim a module of the helper's name the program's text imports (`stems.as_shown`): none named pytest
        objects = {"\x00" + job["shim"]: make_shim(job["helper"], job["pytest"]), "\x00" + job["probe"]: probe_cmp, "\x00" + job["hold"]: hold}

        flagged = _watch_traces(job, out, frozenset(c.co_filename for _, c in codes))  # before any product code runs
        if "imports-pytest" in job["allow"]:  # importable (the kit's), never run: last on the path
            sys.path.extend(job["pytest"])
        for name in job["unload"]:  # the harness's imports the project's own modules are named like (`supervise`)
            sys.modules.pop(name, None)
        os.chdir(job["cwd"])  # sys.path is the first run's (`supervise` set it): the project's folder first
        hide_harness(job["startup"], job["imported"], job["own"], job.get("patterns", ()))  # a program's modules only, from here on
    except BaseException as exc:  # noqa: B036 (the harness could not start: every test fails alike)
        failed[None] = _failure(exc, hits)
    programs, there, made, program = job["programs"], sys.modules.get("__main__"), [], None
    for rel, code in codes:  # as pytest collects: every test module imported before any test runs
        if None in failed:
            break
        try:
            # A test file's module is a program's `__main__` (`python test_x.py` in the project's folder), as a
            # developer's program defines what it calls: under that name only (pickling by reference and type hints
            # find it there), unless another file imports it by its own (`job["named"]`). A helper module keeps its name.
            modname = rel[:-3].replace("/", ".")
            mod = own[0] if rel == own[2] and rel in programs else _ModuleType("__main__" if rel in programs else modname)
            if rel in programs:  # in the order a program's `__main__` gets them (`bare_shim._as_program`)
                new = {**main, "__annotations__": {}, "__file__": code.co_filename,
                       "__loader__": type(main["__loader__"])("__main__", code.co_filename)}
                held = {**mod.__dict__, **new}  # the program's own names (`program_fork`) after the interpreter's
                mod.__dict__.clear()
                mod.__dict__.update({**{k: held[k] for k in MAIN_ORDER if k in held}, **held})
                sys.modules["__main__"] = mod
            mod.__file__ = code.co_filename
            if rel not in programs or modname in job["named"]:
                sys.modules[modname] = mod
            exec(bind(code, objects), mod.__dict__)
            module_marks(rel, mod, job["helper"])
            mods[rel] = mod
            # by attribute name, as pytest reads a module's fixtures (`dir`): its autouse ones' order (`bare_served.order`)
            fixtures[rel] = {v._bare_fixture[0]: v for _, v in sorted(vars(mod).items()) if hasattr(v, "_bare_fixture")}
        except BaseException as exc:  # noqa: B036 (the module did not import: every test of it fails alike)
            failed[rel] = _failure(exc, hits)
    if there is not None:
        sys.modules["__main__"] = there
    if flagged and None not in failed:  # read at import, whatever the product did with the alarm it got
        failed[None] = flagged[0]
    # Threads the import started (the kernel's count: native ones too) would be copied into a fork
    # stopped where they were, holding whatever lock they held: then this zygote runs one test itself,
    # reports and ends, and the supervisor starts another for the next test (each imports again).
    alone = not failed and _threads() > 1
    chld = None if alone else _sigchld_kept()  # SIGCHLD as the import left it: each test's fork's, not this zygote's
    # Each test arrives as its place in `tests` and its token, unbuffered: the token is still in the pipe, not
    # in this process's memory, when the fork is made, and read only then. The supervisor sends tests ahead
    # (`_Zygote.send`): the next is waiting in the pipe as a fork ends, tokens with it, out of every fork's reach.
    while True:
        head = _exactly(cmd_r, 8)
        if not head:
            exit_(0)
        test = tests[int(head)]
        rel = test["rel"]
        why = failed.get(None) or failed.get(rel)
        if why or rel not in mods:
            _ticket(cmd_r)
            _report(write, rep_w, None, (why or "F:ImportError").encode()[:500])
            continue
        mod, fns = mods[rel], fixtures[rel]
        if sys.modules.get("__main__") is not mod:  # the program this test's file is (`enter_program`)
            enter_program(mod, job["cwd"], made)
            program = renamed(compiled, mod.__file__)
        if alone and mod is own[0]:  # called from the program's own frame, as a fork's test is (`_Zygote`)
            out[0] = ("report", rep_w)
            own[1].update(_test_steps(mod, test, fns, (), hits, later, out,
                                      (cmd_r, lambda code, data: _report(write, rep_w, code, data, alone=True), said)))
            return
        if alone:  # not the test its program was made for (none is sent first to a zygote that runs tests itself)
            out[0] = ("report", rep_w)
            for judged in (False, True)[0 if test.get("warm") else 1:]:  # as a fork's program runs (`bare_fork.warm_up`)
                out[1:] = [not judged]
                later.clear()
                try:
                    _run_test(mod, test, fns)
                except BaseException as exc:  # noqa: B036 (every way a test can end that is not a pass)
                    if judged:
                        _report(write, rep_w, 1, _failure(exc, hits).encode()[:500], alone=True)
                        exit_(1)
            ticket = _ticket(cmd_r)
            token = ticket[:TOKEN]
            answered = b"".join(said) + compared_apart(later, ticket[TOKEN + 7:])  # shared out with a fork (`apart`)
            _report(write, rep_w, passing_code(token.decode()), answered + token, alone=True)
            exit_(0)
        ask_r, ask_w = os.pipe()
        tok_r, tok_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = program_fork(program, vars(mod), _sigchld_back(_test_steps(mod, test, fns, (ask_w, tok_r, res_w), hits, later, out), chld))
        for fd in (ask_w, tok_r, res_w):
            os.close(fd)
        token = _ticket(cmd_r)  # the token, and the candidates of the test's held asserts
        # The token goes to the fork only once it asks, after its test returned: while the test runs, no pipe
        # of the fork holds anything it could echo. A fork that ended (or exec'd: its pipes close on exec) asks
        # nothing; one whose child still holds the pipe is watched until it ends.
        # What it writes back (its held asserts' values as it goes, then their comparisons and its token) is read
        # while it runs: a test's answers need not fit the pipe (`answers.ANSWER_VALUE`).
        got = []
        status = _asked(ask_r, pid, res_r, got)
        if status is None:
            try:
                write(tok_w, token)
            except BrokenPipeError:
                pass
        os.close(tok_w)
        os.close(ask_r)
        del token
        if status is None or status == -1:
            status = _asked(None, pid, res_r, got)
        _report(write, rep_w, os.waitstatus_to_exitcode(status), _drain(res_r, got))


def _asked(ask_r, pid, res_r, got):
    """None once the fork asked for its token (`ask_r`; None: it has, wait for its end); its wait status when it ended
    without asking. What it writes back meanwhile is read into `got` (past `RESULT_MAX`, read and dropped: [None])."""
    while True:
        ready, _, _ = select.select([res_r] if ask_r is None else [ask_r, res_r], [], [], 0.05)
        if res_r in ready:
            chunk = os.read(res_r, 1 << 16)
            if not chunk:  # every end of it closed: the fork ended (or exec'd and will)
                return os.waitpid(pid, 0)[1]
            if got[:1] != [None]:
                got.append(chunk)
                if sum(map(len, got)) > RESULT_MAX:
                    got[:] = [None]
        if ask_r is not None and ask_r in ready:
            said = os.read(ask_r, 1)
            if said == b"R":
                return None
            if said:  # not the harness's word (product code found the pipe): no token, ever
                return -1
            ask_r = None  # its end of the pipe closed: it ended, or exec'd and will
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status


def _report(write, fd, status, data, alone=False):
    """The zygote's word to the supervisor (`_Zygote.result`): `A` when the zygote ran the test itself and ends,
    else `R`; the fork's exit status (`-999`: none, the module did not import); then what the fork wrote back
    (bytes), its length first: one write, no JSON to build (every page the zygote writes is copied once per fork)."""
    write(fd, b"%c%+05d%07d" % (65 if alone else 82, -999 if status is None else status, len(data)) + data)


def _ticket(fd):
    """A test's token and the candidates of its held asserts (length first), as sent: read only after the fork."""
    token, size = _exactly(fd, TOKEN), _exactly(fd, 7)
    return token + size + (_exactly(fd, int(size)) if size and int(size) else b"")


def _alarm(out, what):
    if out[0] is None:
        raise _Alarm(what)
    if isinstance(out[0], tuple):  # a zygote running its one test itself: straight to the supervisor
        _report(os.write, out[0][1], 1, what.encode()[:500], alone=True)
    else:
        os.write(out[0], what.encode()[:500])
    os._exit(1)


def _watch_traces(job, out, sealed):
    """An audit hook (it cannot be removed once added) that sees the repository's own code read what only tells the
    walls apart (`traces.py`), as the first run's does: in a fork the test fails with `S:` (the scan's
    `sandbox-probe`, appealable); at the zygote's import the alarm is raised and kept in the list returned, so every
    test fails with it even when the product caught it. Quiet when the project is allowed the rule; a line the
    seal's baseline holds, or a finding it recorded, is the project's own (`sealed`: the hidden modules' files, where
    the place's callers stop, as they stop at the store's in the first run)."""
    flagged = []
    allow = job["allow"]
    if "sandbox-probe" in allow:
        return flagged
    trace_of, trace_where, trace_asked = globals()["trace_of"], globals()["trace_where"], globals()["trace_asker"]()
    events = globals()["TRACE_EVENTS"]
    repo = job["repo"].rstrip("/") + "/"
    theirs = tuple(t.rstrip("/") + "/" for t in job.get("theirs") or ())
    own = frozenset(a[4:] for a in allow if a.startswith("own:"))  # a trace's baseline is its place, never a line's text
    globals()["trace_keep"](repo, allow)  # the files its places name, read before the product runs (`traces.py`)
    busy = []

    def hook(event, args):
        if event not in events or busy:
            return
        busy.append(1)
        try:
            trace = trace_of(event, args)
            caller, alone = trace_asked(1) if trace else (None, "")  # `alone`: a thread of the stdlib's code only
            name = caller.f_code.co_filename if caller is not None else ""
            if not alone and (not name.startswith(repo) or name.startswith(theirs) or name in sealed):  # sealed: the tests'
                return
            where = alone or trace_where(caller, repo, theirs, sealed)
            what = f"the code under test read what only tells the sandbox apart ({trace})" + where
            if f"sandbox-probe:{what}" in own:
                return
        except Exception:  # noqa: BLE001 (never let the watch itself break an honest run)
            return
        finally:
            busy.clear()
        if out[0] is None:
            flagged.append("S:" + what)
        _alarm(out, "S:" + what)

    sys.addaudithook(hook)
    return flagged


# --- the supervisor ---------------------------------------------------------------------------------------

def supervise(params):
    """Every test in a fork of its file's zygote; one JSON line per test on stdout (theirs is /dev/null).

    The zygote imports the test module, and so the product, once; each test then starts from that state
    in a fork of its own, as pytest's tests share the imported module and nothing a test did to it. A fork
    of the supervisor itself per test imported the product once a test: 40 tests of a 26,000-line package
    took 9 s a stop (12 s a passing stop in bubblewrap, against 0.5 s for bare pytest)."""
    # Everything the harness uses was imported with this source (its top lines), before any folder of the
    # project is on sys.path: a project module named `signal` or `select` cannot stand in for one of them.
    _temp_dir()  # found once, not by every fork that asks for tmp_path
    # The project's own modules named like one the harness imported (`signal`, `select`...), and its own pluggy (a
    # project that is pluggy): its tests import its own, as `python -m pytest` in the repository gives them.
    own = _own_names(params["front"])
    startup = set(params.get("startup") or ())
    unload = [m for m in sys.modules if m.partition(".")[0] in own and m not in startup]

    # The first run's sys.path, but for the kit's pytest: the project's folder first, the standard
    # library, then the environment's path lines (the interpreter ran with -S: none of its import lines).
    sys.path[:] = params["front"] + sys.path + params["site"]
    sys.executable = params["executable"]
    # As a developer's program has them, and the first run (`bootstrap.BOOTSTRAP`): the project's environment, or the
    # base installation (not the starter's).
    sys.prefix, sys.exec_prefix = params.get("prefix") or sys.base_prefix, params.get("prefix") or sys.base_exec_prefix
    # The zygotes (one per test file, and one more with pytest importable when a test needs it) read the
    # product's bytecode the kit compiled after the last stops (`donegate.hidden.pyc`, read-only), or
    # share a cache of this run in its private temporary folder; the repository's own `__pycache__` is
    # never read (the copy has none), and every other folder's is read as Python reads it (`kept.py`).
    store = params.get("pyc")
    globals()["keep_bytecode"](store or _mkdtemp(prefix="pyc"), params["repo"], params["shared"], writable=not store)

    out = os.fdopen(os.dup(1), "w")
    nonce = params["nonce"]
    sources, plans, imported = {}, {}, set()
    tested = {split_id(t)[0] for t in params.get("sealed") or params["tests"]}  # the test files (not their helpers)
    # Each test file is the developer's program its tests run in (`enter_program`), its file in the project's folder;
    # the ones this run makes there are removed at its end (and by the put-back of its copy of the tree).
    # Its file is named as a developer names a program (`second.program_names`, drawn by the kit), not `test_*.py`.
    named = params.get("names") or {}
    made = [p for p in (os.path.join(params["folder"], named.get(rel, rel)) for rel in sorted(tested)) if not os.path.lexists(p)]
    served = (*SERVED, SEEDED) if params.get("draws") else SERVED
    # the kit's compile of these sources, and their plans, kept for the seal (`rewritten.py`); planned here for a
    # project that provides a harness module itself (`plan`'s `own`)
    kept, planned = _kept(params.get("compiled"))
    nose, first = noses(params["pytest"]), unit_first(params["pytest"])  # the kit planned as if both (`nosed`, `unit_first`): else here
    planned = {} if set(own) & set(HARNESS) else planned.get(bool(params.get("draws")), {})
    for rel, text in params["sources"].items():  # the kit took the held asserts' literals out (`answers.py`)
        text = text.encode("utf-8", "surrogateescape")
        try:
            plans[rel] = planned[rel] if rel in planned and (nose or not nosed(planned[rel])) and first else plan(text, served=served, own=own, nose=nose, first=first)
            # compiled once, run in each fork, under an absolute path in the project's folder (`folder`: as pytest's
            # `__file__` is absolute; a test file's is the program's file there, `enter_program`); its source (as sent)
            # in linecache under that name, so `inspect.getsource` finds it, as typeguard's @typechecked needs
            name = os.path.join(params["folder"], named.get(rel, rel) if rel in tested else rel)
            if rel in kept:
                code, names = kept[rel]
                sources[rel] = renamed(code, name)
            else:
                sources[rel], names = rewrite(text, name, params, rel in tested)  # a test file: a program's code
            if rel in tested:
                imported.update(names)
            lines = (params.get("shown", {}).get(rel) or text.decode("utf-8", "replace")).splitlines(True)  # as bound
            if not _bound(name, lines):  # bound with it (confined): linecache reads the file when asked, as a program's
                linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
        except SyntaxError:
            plans[rel] = ("the file does not parse", {})
        # Its text freed (its syntax tree lives only in `rewrite`) before any zygote is forked: every fork copies the page
        # tables of what this process holds (2,000 tests in one file: 42 MB against 31 MB; a bare fork and exit 25% cheaper).
        text = None
    ids = params["tests"]
    # Each test's own seed for `dg_random` (`seeded.seed_of`), never the stop's secret: none, and it is not served.
    draws = dict(zip(ids, params.get("draws") or (), strict=False))
    base = {"repo": params["repo"], "theirs": params.get("theirs") or [], "shim": params["shim"], "probe": params["probe"], "hold": params["hold"], "allow": params["allow"],
            "cwd": params["cwd"], "pytest": params["pytest"], "unload": unload, "own": own, "startup": startup,
            "imported": params.get("imported") or {}, "helper": params.get("helper") or "checks",
            "program": os.path.join(params["folder"], named.get(min(tested, default=""), min(tested, default="main.py"))),
            "programs": tested, "named": {rel[:-3].replace("/", ".") for rel in tested} & imported}
    base["output"] = _sink()
    base["compiled"] = shim_compile(ast.parse(PROGRAM), base["program"])  # each zygote's program is it renamed
    codes = [(rel, sources[rel]) for rel in sorted(sources)]  # pytest's order of collection
    groups = {}  # (file, test): its ids, in order (a parametrized test's index is its place here)
    place = {}
    for nodeid in params.get("sealed") or ids:  # every sealed id when `ids` is a share of them
        same = groups.setdefault(split_id(nodeid)[:2], [])
        place[nodeid] = len(same)
        same.append(nodeid)
    # Planned before any zygote is forked: a zygote holds the list and is sent a test's place in it.
    entries, tests = [], []  # per id: its line when the harness cannot run it, else its place in `tests`
    for nodeid in ids:
        rel, qual, bracket = split_id(nodeid)
        why, found = plans.get(rel, ("not a sealed file", {}))
        why = why or found.get(qual, (f"{qual} is not a plain test function", []))[0]
        mine = params.get("itself", {}).get(rel, {})  # the kit's `names_itself`, on the text as sealed
        why = why or mine.get("*") or mine.get(qual, "")
        if why:
            entries.append({"n": nonce, "id": nodeid, "outcome": "unsupported", "why": why})
            continue
        entries.append(len(tests))
        tests.append({"rel": rel, "qual": qual, "index": place[nodeid],
                      "count": len(groups[(rel, qual)]) if bracket is not None else 1, "fixtures": found[qual][1],
                      "draw": draws.get(nodeid), "warm": nodeid == params.get("first")})
    zygotes = {}  # pytest importable or not: the zygote that imported every test module
    # Tests go to the zygote ahead of their turn (`AHEAD` at most): it finds the next one waiting as a fork ends,
    # instead of a round trip through this process per test. What a zygote that ended had been sent goes to the next.
    sent = done = 0  # entries sent to the current zygote (those from `done` on); entries reported
    z, t0 = None, time.monotonic()
    blobs, cands = [], params.get("cands")

    def candidates(i):
        """Entry `i`'s candidates (`answers.py`), from the kit's pipe as they are needed: never held by a zygote
        forked before they were read."""
        while len(blobs) <= i:
            size = _exactly(cands, 7) if cands is not None else b""
            blobs.append(_exactly(cands, int(size)) if size and int(size) else b"")
        return blobs[i]

    while done < len(entries):
        sent = max(sent, done)
        while sent < len(entries) and sent - done < AHEAD:
            if isinstance(entries[sent], int):
                if z is None or z.dead:
                    if z is not None and z.tokens:
                        break  # one that ended holds what it was sent: its reports first
                    z = _in(zygotes, base, codes, tests, entries[sent])  # started when a test needs it
                if z.tokens and sum(z.sizes) + len(candidates(sent)) > FLIGHT:
                    break  # its pipe would fill while the zygote writes its reports: after those are read
                z.send(entries[sent], candidates(sent))
            sent += 1
        entry = entries[done]
        if isinstance(entry, dict):
            out.write(json.dumps(entry) + "\n")
            out.flush()
            done += 1
            continue
        outcome, detail, answered = z.result()
        if z.dead:  # what it was sent after this test is sent again, to the next zygote
            sent, z.tokens, z.sizes = done + 1, [], []
        if outcome == "imports-pytest":
            # Again with pytest importable (never run): a project that only uses pytest as a library passes
            # and is a finding a person may wave through; code that needs pytest *running* (its config, its
            # reporter) fails, and the runs disagree.
            allowed = {**base, "allow": [*base["allow"], "imports-pytest"]}
            other = _in(zygotes, allowed, codes, tests, entry)
            other.send(entry, candidates(done))
            again, why, answered = other.result()
            outcome, detail = ("imports-pytest", detail) if again == "passed" else (again, why)
        t1 = time.monotonic()
        out.write(json.dumps({"n": nonce, "id": ids[done], "outcome": outcome, "why": detail, "duration": round(t1 - t0, 4),
                              **({"answers": answered} if answered else {})}) + "\n")
        out.flush()
        t0 = t1
        done += 1
    for z in zygotes.values():
        z.end()
    for path_ in made:  # the run's own (the mirror's put-back removes them too)
        with contextlib.suppress(OSError):
            os.unlink(path_)
    out.write(json.dumps({"n": nonce, "done": True}) + "\n")
    out.flush()


AHEAD = 8  # tests sent to a zygote before their turn
FLIGHT = 1 << 15  # and their candidates' bytes at most, but for the one test sent when none waits (`answers.py`)


def _bound(name, lines):
    """Whether the program file `name` holds `lines` (bound with its text, confined: `second._programs`). Then linecache
    reads it when asked, with its size and time, as a program's does: an entry made ahead (its time None, which no file
    read from a disk gets) told the second run from a program (test_redteam_traces: pytest-or-linecache-time-of-the-callers-file)."""
    try:
        with open(name, "rb") as fh:
            return fh.read() == "".join(lines).encode("utf-8", "surrogateescape")
    except OSError:
        return False


def _kept(sent):
    """({test file: (its code, the top-level names it imports)}, {dg_random served: {test file: its plan}}) from the
    kit's compile (`rewritten.py`), when this interpreter reads that bytecode as compiled (the same magic number, the
    same `-O` level); else ({}, {}): compiled and planned here."""
    from importlib._bootstrap_external import MAGIC_NUMBER

    if not sent or sent[0] != MAGIC_NUMBER.hex() or sent[1] != sys.flags.optimize:
        return {}, {}
    import marshal

    try:
        codes, plans = marshal.loads(bytes.fromhex(sent[2]))
        return codes, plans
    except (ValueError, EOFError, TypeError):
        return {}, {}


def _in(zygotes, job, codes, tests, first):
    """The zygote for `job`'s allowance, started the first time (again if it died) for the test at `first`."""
    key = "imports-pytest" in job["allow"]
    z = zygotes.get(key)
    if z is None or z.dead:
        if z is not None:
            z.end()
        z = zygotes[key] = _Zygote(job, codes, tests, first)
    return z


class _Later:
    """A step of a zygote's program that is iterated (`down`, `walk`): the zygote's own, once it runs a test itself."""

    def __init__(self, steps, name):
        self.steps, self.name = steps, name

    def __iter__(self):
        return iter(self.steps[self.name])


class _Zygote:
    """The supervisor's side of a zygote: tests sent in order (`send`, a few ahead), each one's fate read in the
    same order (`result`) from the zygote's report of the fork's exit status and result pipe, and the token
    the supervisor drew for it."""

    def __init__(self, job, codes, tests, first):
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        sys.stdout.flush()
        # The zygote is forked as a test is (`program_fork`): its one thread, its main thread, has the program of the
        # first test's file at the bottom, and runs that test from there when threads run after the import (no fork
        # then): no frame of the harness's below the test either way. The program's steps are the zygote's own then.
        rel = tests[first]["rel"]
        main, steps = _ModuleType("__main__"), {}

        def child():
            try:
                os.close(cmd_w)
                os.close(rep_r)
                zygote(job, codes, tests, cmd_r, rep_w, (main, steps, rel))
            except BaseException:  # noqa: B036 (whatever happens, a zygote never goes back to being the supervisor)
                os._exit(3)
            if not steps:
                os._exit(3)
        late = {n: (lambda *a, n=n: steps[n](*a)) for n in ("plan", "put", "get", "failed", "tears", "more", "said", "passed", "again")}
        late.update(child=child, down=_Later(steps, "down"), walk=_Later(steps, "walk"))
        name = dict(codes)[rel].co_filename if rel in dict(codes) else job["program"]
        pid = program_fork(renamed(job["compiled"], name), vars(main), late)
        os.close(cmd_r)
        os.close(rep_w)
        self.pid, self.cmd, self.rep, self.dead, self.tokens, self.sizes = pid, cmd_w, os.fdopen(rep_r, "rb"), False, [], []

    def send(self, place, blob=b""):
        """The test at `place` of the plan, a token drawn for it and its held asserts' candidates, into the pipe."""
        token = os.urandom(TOKEN // 2).hex().encode()  # as secrets.token_hex
        self.tokens.append(token)
        self.sizes.append(len(blob))
        try:
            os.write(self.cmd, b"%08d" % place + token + b"%07d" % len(blob) + blob)
        except OSError:  # it ended: `result` says so
            self.dead = True

    def result(self):
        """(outcome, why, the held asserts' answers for the kit to judge) of the first test sent and not yet reported."""
        token = self.tokens.pop(0)
        self.sizes[:1] = []
        try:
            head = self.rep.read(13)
            kind, code, size = head[:1], int(head[1:6]), int(head[6:13])
            text = self.rep.read(size)
            if len(text) != size or kind not in (b"A", b"R"):
                raise ValueError(head)
            if kind == b"A":  # it ran the test itself and ended (`zygote`): the next test gets another
                self.dead = True
        except (OSError, ValueError):
            self.dead = True
            return "failed", "the test process ended without its token", None
        answers, text = globals()["answer_split"](text)
        if code == passing_code(token.decode()) and text == token and answers is not None:
            return "passed", "", {k: [v.decode("ascii", "replace") for v in kd] for k, kd in answers.items()}
        said = text.decode("utf-8", "replace")
        if said.startswith(("P:", "I:", "F:", "S:")):
            return {"P": "probe", "I": "imports-pytest", "F": "failed", "S": "sandbox-probe"}[said[0]], said[2:300], None
        return "failed", f"the test process ended with exit code {code} without its token", None

    def end(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
