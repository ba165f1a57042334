"""The second harness's processes (sent with `bare.py`, executed in its namespace): the fork of a test as a program
starts it, the steps that program runs (`_test_steps`: the test's setup, call, teardowns, token and exit status) and
what it reports of a failure, the pipe its output goes to, and the descriptors the zygote and its forks keep.

Standard library only. A test's fork is made from a thread whose only frame is a program's module-level code
(`program_fork`): in the fork, that thread is the main thread (signal handlers, `threading.main_thread()`), and the
test is called from the program's frame in `__main__`'s namespace, with no frame of the harness's below it, as a
developer's `python prog.py` calls the product from its own module.
"""

import _thread
import ast
import os
import random
import select
import signal
import sys
import types
import warnings

# Sent to a run, this source shares one namespace with bare_shim's (`second._source`); imported by the kit (its
# tests), it takes the name from the module.
if globals().get("__package__"):
    from donegate.hidden.bare_plan import HARNESS, MARKS, TOKEN
    from donegate.hidden.bare_shim import MODULE_MARKS, _Mark, _ToShim, plan_test, shim_compile
    from donegate.hidden.bare_apart import apart
    from donegate.hidden.probe_unit import compare_probes


def module_marks(rel, mod, helper):
    """The test file's `pytestmark` (`bare_plan.MARKS`) and its classes' own, their marks for each of their tests
    (`plan_test`), kept apart (`MODULE_MARKS`: for `rel`, and for each class); each named as the program's text shows
    it (`second.as_shown`: the helper's name where pytest's was), a global in its place among the module's names."""
    shown = helper + MARKS[6:]
    listed = lambda marks: [m for m in (marks if isinstance(marks, (list, tuple)) else [marks]) if isinstance(m, _Mark)]  # noqa: E731
    g, own = vars(mod), type.__dict__["__dict__"].__get__  # a class's own names, no code of its metaclass's run
    for cls in [v for v in g.values() if isinstance(v, type) and MARKS in own(v) and own(v).get("__module__") == g["__name__"]]:
        MODULE_MARKS[cls] = [*listed(own(cls)[MARKS]), *MODULE_MARKS.get(cls, ())]  # then its decorators' (`_Mark`)
        type.__setattr__(cls, shown, own(cls)[MARKS])
        type.__delattr__(cls, MARKS)
    if MARKS in g:
        MODULE_MARKS[rel] = listed(g[MARKS])
        names = list(g.items())
        g.clear()
        g.update((shown if k == MARKS else k, v) for k, v in names)
        notes = g.get("__annotations__")  # annotated (`pytestmark: list = [...]`): its note under the name shown too
        if type(notes) is dict and MARKS in notes:
            names = list(notes.items())
            notes.clear()
            notes.update((shown if k == MARKS else k, v) for k, v in names)


def _exactly(fd, n):
    """`n` bytes from `fd` (b"" at its end)."""
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data

# What a test's fork runs at the bottom of its stack: a program's own module-level code (`python prog.py`: `__main__`'s
# namespace, the program's file name) that calls each test itself, from a loop over its function `main()` (`BOTTOM`,
# names drawn by `program_fork`), as a program calls its functions: that code holds no constant but None (a program's
# module code holds no callable constant) and loads only names its module holds. `main` (a generator function of
# `__main__`, its code the program's file's) reaches the harness's steps as the free variables of its code, never as
# constants or names of `__main__`, and is suspended while the test runs: code that walks its callers by `f_back`
# finds the test, then the program's module code, and nothing of the harness's (the zygote's frames are not in the
# fork). Only `_steps`' inner function is used: its own code is never run.
PROGRAM = """\
def _steps(fork, again, list, put, plan, get, failed, tears, down, more, said, bool, walk, passed, abs, round):
    def main(*failing):
        if failing:
            return failed()

        def run():
            fork()
            while again():
                try:
                    list(put(f(*a, **k)) for f, a, k in plan())
                    called = get(0), get(1)
                except BaseException:
                    failed()
                else:
                    yield called
                while tears():
                    try:
                        list(f() for f in down)
                    except BaseException:
                        failed()
            while more():
                try:
                    list(said(bool(v == c) or d is not None and bool(abs(v - c) <= d)
                              or p is not None and bool(round(abs(v - c), p) == z)) for v, c, p, d, z in walk)
                except Exception:
                    said(False)
            passed()
        return run()
    return main
"""
# The bottom frame's code: the test called, and a failure noted by `main(test)` in its `except` (`failed` reads it)
BOTTOM = "for {test}, {kwargs} in {main}():\n    try:\n        {test}(**{kwargs})\n    except BaseException:\n        {main}({test})\n"
# What a program names its function, the test it calls and its arguments (`program_fork`: the first its module lacks)
NAMES = {"main": ("main", "run", "run_all", "demo"), "test": ("test", "check", "case", "fn"),
         "kwargs": ("kwargs", "kw", "fixtures", "params")}
_CALLS: "dict[tuple, tuple]" = {}  # the names: the program's code, its function's code and the bottom frame's (`BOTTOM`)


def _as_program_function(code, name, prefix):
    """`code` (and the code objects it holds) as a program's module-level function `name`'s: its qualified names
    without `prefix` (`_steps.<locals>.`), and not flagged as nested."""
    consts = tuple(_as_program_function(c, name, prefix) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    kw = {"co_qualname": code.co_qualname.replace(prefix, "", 1)} if hasattr(code, "co_qualname") else {}
    if code.co_name == "main":
        kw.update(co_name=name, **({"co_qualname": name} if kw else {}))
        kw["co_flags"] = code.co_flags & ~0x10  # CO_NESTED: a module-level def has no outer function
    elif kw:
        kw["co_qualname"] = kw["co_qualname"].replace("main.", name + ".", 1)
    return code.replace(co_consts=consts, **kw)


def program_fork(program, main, steps):
    """The fork of a test: made in a thread of its own whose only frame is a program's module code (`BOTTOM`, compiled
    under `program`'s file name) in `main` (`__main__`'s namespace), so the fork's one thread is its main thread and
    holds no frame of the zygote's. That code loops over the program's function (`NAMES`: names `main` lacks; the
    function in `main` while the fork lives), made from `PROGRAM`'s `main` (`program`: it compiled under the program's
    name) with the steps as its free variables, and calls each test it yields itself. In the fork the function runs
    the `steps` (`bare._test_steps`): `child()` (its pipes); the calls of the test's setup (`plan()`, each result given
    to `put`: `bare_shim.plan_test`) from a generator expression of its own; the test (`get(0)` with the arguments
    `get(1)`), yielded, `failed()` noting the first failure (the program's `except` calls the function with the test);
    its teardowns, last set up first (`down` yields them while `tears()`), from a generator expression too; `more()`
    (a failure reported, and the process ended; else the token asked for: whether the held asserts' objects have
    candidates left to be compared with, `walk`, each result given to `said`), then `passed()` (it ends the process).
    Returns the fork's pid."""
    box, ready = [], _thread.allocate_lock()
    ready.acquire()

    def fork():
        try:
            # Python 3.12 warns of a fork in a process with threads (this one's waits); the module named, not looked up
            # in `sys.modules` (the zygote hid it: `bare_shim.hide_harness`)
            with warnings.catch_warnings(module=warnings):
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException as exc:  # noqa: B036 (handed to the zygote's thread)
            pid = exc
        if pid == 0:
            steps["child"]()
            return
        box.append(pid)
        ready.release()
        raise SystemExit  # the thread ends here, quietly
    names = {k: next((n for n in options if n not in main), None) or options[0] + "_" + os.urandom(3).hex()
             for k, options in NAMES.items()}

    key = tuple(names.values())
    if _CALLS.get(key, (None,))[0] is not program:  # made once per program and names (~0.15 ms), not per fork
        outer = next(c for c in program.co_consts if isinstance(c, types.CodeType))
        _CALLS[key] = (program, _as_program_function(next(c for c in outer.co_consts if isinstance(c, types.CodeType)),
                                                     names["main"], outer.co_name + ".<locals>."),
                       compile(BOTTOM.format(**names), program.co_filename, "exec", dont_inherit=True))
    _, inner, bottom = _CALLS[key]
    objects = {**steps, "fork": fork, "list": list, "bool": bool, "abs": abs, "round": round}
    main[names["main"]] = types.FunctionType(inner, main, names["main"], None,
                                             tuple(types.CellType(objects[n]) for n in inner.co_freevars))
    try:
        _thread.start_new_thread(exec, (bottom, main))
        ready.acquire()
    finally:
        main.pop(names["main"], None)  # the fork's copy keeps it, as a program's `__main__` holds its function
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]

def _threads():
    """Threads of this process, native ones included (Linux counts them in /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        threading = sys.modules.get("threading")
        return threading.active_count() if threading is not None else 1

def _sigchld_kept():
    """SIGCHLD's handling as the product's import left it (None: the default, or not set from Python), the default put
    back in this zygote: ignored, or a handler that reaps every child, the zygote's waitpid for each test's fork raised
    ChildProcessError (its exit status lost) and every test failed without its token. Each fork takes it back
    (`_sigchld_back`) before its test runs."""
    kept = _getsignal(signal.SIGCHLD)
    if kept is None or kept is signal.SIG_DFL:
        return None
    _setsignal(signal.SIGCHLD, signal.SIG_DFL)
    return kept


def _sigchld_back(steps, kept):
    """A test's fork's `steps` (`_test_steps`), its first (`child`) followed by SIGCHLD handled as `kept` (not None:
    `_sigchld_kept`'s)."""
    if kept is not None:
        child = steps["child"]

        def back():
            child()
            _setsignal(signal.SIGCHLD, kept)
        steps["child"] = back
    return steps


_getsignal, _setsignal = signal.getsignal, signal.signal  # the harness's own, whatever the product patches


def _only(*keep):
    """Close every descriptor above 2 but `keep`."""
    last = 2
    for fd in sorted(keep):
        os.closerange(last + 1, fd)
        last = fd
    os.closerange(last + 1, 65536)


RESULT_MAX = 1 << 21  # what a fork writes back at most: its token and its held asserts' answers (`answers.ANSWER_VALUE`)


def _drain(fd, got=()):
    """What a pipe holds, after what was read from it already (`got`; [None]: too much, then nothing the harness
    writes), without waiting for its other end: a process the test started may still hold it open. The
    descriptor is closed."""
    os.set_blocking(fd, False)
    data = b"".join(got) if None not in got else None
    try:
        while data is not None:  # the token, and a test's answers (`answers.py`)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
            if len(data) > RESULT_MAX:
                data = None
    except BlockingIOError:
        pass
    os.close(fd)
    return b"" if data is None else data


def _hide(fd):
    """The descriptor moved to a random number (it is still in /proc/self/fd: see docs/security.md)."""
    while True:
        new = random.randrange(200, 900)
        try:
            os.fstat(new)  # taken: the other pipe's end, /dev/null...
        except OSError:
            break
    os.dup2(fd, new, inheritable=False)
    os.close(fd)
    return new

def _sink():
    """The write end of a pipe a child of the supervisor (no product code in it) reads and drops: the tests' stdout
    and stderr, as a program's run from a shell that reads its output (a pipe, never /dev/null)."""
    r, w = os.pipe()
    sys.stdout.flush()
    if os.fork() == 0:
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the supervisor's report above all: the kit reads it to its end
                os.dup2(devnull, fd)
            _only(r)
            while os.read(r, 1 << 16):
                pass
        finally:
            os._exit(0)
    os.close(r)
    return w


def renamed(code, name):
    """`code` (and every code object it holds) as compiled under the file name `name`: `PROGRAM` compiled once, then
    named after each test file (1.3 ms a compile, 4 us a rename)."""
    return code.replace(co_filename=name, co_consts=tuple(renamed(c, name) if isinstance(c, type(code)) else c
                                                          for c in code.co_consts))


def _called(name):
    """What a program calls the code of test `name`: its words without `test` (`test_ten_units` -> `ten_units`)."""
    words = [w for w in name.split("_") if w and w.lower() != "test"]
    return "_".join(words) if words and not words[0][:1].isdigit() else "check" + "_".join([""] + words)


def as_called(fn):
    """The code of test function `fn` (a method's function, what it wraps by `__wrapped__`) named as a program names
    the functions it calls (`_called`), `co_name` and `co_qualname` alike, in the test's fork just before it is called:
    the product's caller, by `f_back`, `inspect` or a traceback, is code of a program, not a test (a name starting
    `test` is what a test framework calls). The function keeps its own name (`__name__`, `__qualname__`), its
    decorators ran under it at the import, and nothing else of the zygote's changes."""
    seen = 0
    while fn is not None and seen < 20:
        func = getattr(fn, "__func__", fn)
        code = getattr(func, "__code__", None)
        if code is not None and code.co_name.startswith("test"):
            new = _called(code.co_name)
            try:
                func.__code__ = code.replace(co_name=new, **({"co_qualname": new} if hasattr(code, "co_qualname") else {}))
            except (AttributeError, TypeError, ValueError):
                pass
        fn, seen = getattr(func, "__wrapped__", None), seen + 1


def enter_program(mod, cwd, made):
    """The program a test file is, entered in the zygote before its first test is forked (`bare.zygote`): `mod` (the
    file's module, named `__main__`) is `__main__`, `sys.argv` as `python test_x.py` typed in the project's folder has
    it, and its file is there: confined, bound with its text by the walls (`second._programs`: a child multiprocessing's
    spawn starts runs it again); else made, empty, when the run's copy of the tree has none, the one the last program
    made removed (`made`). The supervisor removes the last one, and the copy's put-back any left."""
    path = mod.__file__
    sys.modules["__main__"] = mod
    typed = os.path.basename(path) if os.path.dirname(path) == cwd else path
    sys.argv, sys.orig_argv = [typed], [sys.executable, typed]
    # `python prog.py` asks the import system for an importer of the file (none: it is not a zip), and the answer
    # stays in its cache: `__main__.__file__ not in sys.path_importer_cache` told the second run apart
    sys.path_importer_cache.setdefault(path, None)
    while made:
        try:
            os.unlink(made.pop())
        except OSError:
            pass
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        made.append(path)
    except OSError:  # the copy has one (or the folder is read-only)
        pass


def as_main(tree):
    """A test file's tree as a developer's program holds it (its module is `__main__` in the second run): its
    module-level `if __name__ == "__main__":` blocks, which pytest never runs (a test module has its own name), left
    out, their `else:` kept (and `!=`'s body). Returns the tree and the top-level names the file imports (a test file
    another one imports is in `sys.modules` under its name too, as under pytest)."""
    body = []
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        sides = (test.left, *test.comparators) if isinstance(test, ast.Compare) and len(test.ops) == 1 else ()
        if isinstance(test.ops[0] if sides else None, (ast.Eq, ast.NotEq)) and \
                {ast.dump(n) for n in sides} == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}:
            body.extend(node.orelse if isinstance(test.ops[0], ast.Eq) else node.body)
        else:
            body.append(node)
    tree.body = body or [ast.Pass()]
    names = {(a.name if isinstance(n, ast.Import) else n.module or "").partition(".")[0] for n in ast.walk(tree)
             if isinstance(n, ast.Import) or isinstance(n, ast.ImportFrom) and not n.level for a in n.names}
    return tree, names


def rewrite(text, name, secret, program):
    """A sealed test file's source (its held asserts' literals out, `answers.py`) as the second run executes it: its
    comparisons probed (`probe_unit.compare_probes`), its `pytest` the shim and its held asserts the sink (`bare_shim._ToShim`),
    a test file's module code a program's (`as_main`, when `program`), compiled under `name`. The one rewrite of the
    supervisor's own compile (`bare.supervise`) and of the kit's once per seal (`rewritten.build`), so the kept code is
    the supervisor's. `secret`: the names (`shim`, `probe`, `hold`). Returns (the code, the top-level names the program
    imports: none when not a program); raises SyntaxError."""
    tree = compare_probes(ast.parse(text), secret["probe"])
    tree = _ToShim("\x00" + secret["shim"], (secret["probe"], secret["hold"])).visit(tree)
    names = set()
    if program:
        tree, names = as_main(tree)
    return shim_compile(tree, name), names


def passing_code(token):
    """The exit status of a fork whose test returned: drawn with the token (10-99), never 0. A fork that
    ends by `os._exit(0)`, `sys.exit()` or an exec'd `/bin/true` has not passed."""
    return 10 + int(token[:2], 16) % 90


def _test_steps(mod, test, fns, pipes, hits, later, out, alone=None):
    """The steps `program_fork` runs in a test's fork, by name: its pipes (`child`); whether a round of the test's steps
    follows (`again`: one, or two for pytest's first test, `warm_up`); its setup's calls (`plan`, their results to
    `put`: `plan_test`); the test's function and arguments (`get`); its failure noted (`failed`); its teardowns
    (`tears`, `down`); then a failure reported, or the token asked for, with the candidates of its held
    asserts (`more`: whether pairs of `later`'s objects and candidates are left, `walk` yields them, `said` takes each
    comparison's result, made by the program); then the token echoed with the answers and the exit status drawn with
    it (`passing_code`: `passed`). `passed` does not return, nor `more` after a failure. `alone`: a zygote runs the
    test itself (`bare.zygote`): (its command pipe, where the token comes, its report to the supervisor (exit status,
    what a fork would write back), the held asserts' answers its test gave)."""
    read, write, exit_, wait = os.read, os.write, os._exit, select.select
    results, tears, fd, made, pairs, counts, said, tok, broke, rounds, part, joined = [], [], [], [], [], [], [], [], [], [], [], []
    if alone:
        fd.extend((None, alone[0], None))

    def end(code, data):  # the fork's last word: what it writes back, and its exit status
        if alone:
            alone[1](code, b"".join(alone[2]) + data if code != 1 else data)
        else:
            write(fd[2], data)
        exit_(code)

    def take(n):
        got = b""
        while len(got) < n:
            wait([fd[1]], [], [], None)
            chunk = read(fd[1], n - len(got))
            if not chunk:
                exit_(1)
            got += chunk
        return got

    def child():
        try:
            ask_w, tok_r, res_w = (_hide(f) for f in pipes)  # close-on-exec, all three
            _only(ask_w, tok_r, res_w)  # the zygote's pipes to the supervisor above all
            os.set_blocking(tok_r, False)  # nothing to read there while the test runs, and no waiting for it
            out[0] = res_w
            fd.extend((ask_w, tok_r, res_w))
        except BaseException:  # noqa: B036 (a fork never goes back to being the zygote)
            exit_(3)

    def plan():
        return plan_test(mod, test, fns, results, tears, made)

    def failed():
        if not broke:  # the test's own failure is the one reported, not a teardown's after it
            broke.append(sys.exc_info()[1])

    def down():  # the teardowns, last set up first: after one that raised, the next
        while tears:
            yield tears.pop()

    def more():
        if not tok:
            if broke:
                try:
                    end(1, (_failure(broke[0], hits)).encode()[:500])
                finally:
                    exit_(1)
            if not alone:
                write(fd[0], b"R")
            tok.append(take(TOKEN))
            blob = take(int(take(7)))
            found, n = globals()["answer_pairs"](later, blob)
            pairs.extend(found)
            counts.extend(n)
            if pairs:  # shared out with a fork (`bare_apart.apart`): here, how to join the results; in that fork, None
                joined.append(apart(pairs, counts, part, later, blob))
        if len(said) < len(pairs) or not (joined and joined[0]):
            return len(said) < len(pairs)
        pairs.extend(joined[0].rest(said))  # this side's compared: the fork's turn, then what it left, compared here
        return len(said) < len(pairs)

    def walk():  # the pairs not answered yet: after one whose comparison raised, the next
        while len(said) < len(pairs):
            yield pairs[len(said)]

    def passed():
        try:
            more()
            if part:  # the fork of `apart`'s: its candidates' results, and no other word
                write(part[0], bytes(49 if b else 48 for b in said))
                exit_(0)
            if joined and joined[0]:
                said[:] = joined[0].join(said)
            end(passing_code(tok[0].decode()), globals()["answer_said"](later, counts, said) + tok[0])
        finally:
            exit_(3)

    def get(n):  # the test's function (0), as a program's (`as_called`), and its arguments (1)
        if n == 0:
            as_called(made[0])
        return made[n]

    def again():  # pytest's first test: a warm-up round (its answers unsent), then the judged one afresh (`warm_up`)
        return warm_up(rounds, out, (results, made, later, broke), test.get("warm"))

    return {"child": child, "plan": plan, "put": results.append, "get": get, "failed": failed, "again": again,
            "tears": tears.__len__, "down": _Each(down), "more": more, "walk": _Each(walk), "said": said.append,
            "passed": passed}


class _Each:
    """A step the program iterates more than once (`down` in each round, `walk`): a fresh generator each time."""

    def __init__(self, make):
        self.make = make

    def __iter__(self):
        return self.make()


def warm_up(rounds, out, kept, twice):
    """Whether the program runs the test's steps (`PROGRAM`'s `again`) once more: once, or (`twice`: the test pytest runs
    first, `second.run`'s `first`) twice. pytest calls the product for its first test in a process that has not called
    it yet, and for every later test after others; a test's fork here is a fresh process, so its first call would be
    the process's first for every test, and a product right only on a first call (issue 45, timing) right in both runs.
    A developer's program calls the product more than once: pytest's first test is judged on a second round, after a
    warm-up round of itself, whose held asserts' values are not sent (`out[1]`, read by the zygote's `hold`) and whose
    failure, results and kept objects (`kept`) are dropped. (A later test's pytest call followed others': a product
    right only on a first call is wrong for it under pytest already.) A probe's or a trace's alarm in either round ends
    the fork. Each round sets the test up afresh (its fixtures' objects new)."""
    rounds.append(len(rounds))
    if len(rounds) == 2 and twice:
        for each in kept:
            each.clear()
    out[1:] = [twice and len(rounds) == 1]
    return len(rounds) <= (2 if twice else 1)


class _Alarm(BaseException):
    """The equality probe fired while the zygote imported the test module (an assert at module level)."""


def _failure(exc, hits):
    """What a fork or the zygote reports for `exc`. Only the refused import itself, left uncaught, is "the
    product needs pytest" (appealable): a product that caught it and then failed a test behaves differently
    under pytest (hard). The probe's alarm at the zygote's import carries its own line."""
    if isinstance(exc, _Alarm):
        return exc.args[0]
    needs = hits and isinstance(exc, ImportError) and (getattr(exc, "name", "") or "").split(".")[0] in HARNESS
    return ("I:" + ",".join(hits)) if needs else ("F:" + type(exc).__name__)
