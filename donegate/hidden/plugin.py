"""The kit's own pytest plugin: results come from here, never from parsing pytest's output.

It runs inside the hidden test process, where the code under test runs too, so nothing here is
trusted by the parent on its own word (see `donegate.hidden.channel`, which checks the stream):

- every result leaves the process as its test phase ends, one JSON line on an inherited pipe (the
  channel): nothing is kept in memory to rewrite later, and there is no file path to guess;
- tripwires: before the repository's code is imported, it fingerprints what the verdict depends on
  (registered plugins and hook implementations, pytest's runner, call, report, outcome and assertion
  functions, the `pytest` namespace, every collected test function and its code, `sys.meta_path`,
  `sys.path_hooks`, trace and profile functions, the builtins, this reporter), and checks them after
  every test and at the end. A change is reported as `tamper`, naming what changed and during which
  test. Tripwires catch the known families of in-process tricks; they are not the wall: code that
  runs in the process can in principle defeat anything the process checks. The wall is the
  confinement around the process (`donegate.hidden.confine`).

The parent loads this file's source (it is sent on stdin and executed by the bootstrap, so no kit path
is needed inside the sandbox).
"""

import builtins
import json
import operator
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: the run imports no more than it must
    from typing import Any

_dumps, _write = json.dumps, os.write  # bound now: a later patch of json or os cannot reach the channel

# Module-level names of these pytest modules, and the attributes of their classes, are fingerprinted.
_MODULES = (
    "pytest", "_pytest.runner", "_pytest.python", "_pytest.reports", "_pytest.outcomes", "_pytest.skipping",
    "_pytest.main", "_pytest.fixtures", "_pytest.nodes", "_pytest.raises", "_pytest.approx", "_pytest.python_api",
    "_pytest.assertion", "_pytest.assertion.rewrite", "_pytest.assertion.util", "_pytest.unittest",
    "_pytest.capture", "_pytest.warnings", "_pytest.recwarn", "_pytest.monkeypatch", "pluggy", "pluggy._hooks",
    "pluggy._manager", "pluggy._callers", "pluggy._result",
)
# Set by pytest itself around every test (assertion comparison hooks): not the code under test's doing.
_VOLATILE = {("_pytest.assertion.util", "_reprcompare"), ("_pytest.assertion.util", "_assertion_pass"),
             ("_pytest.assertion.util", "_config")}


_KEEP_DUNDER = frozenset(("__init__", "__call__", "__eq__", "__exit__", "__enter__", "__new__", "__getattribute__", "__getattr__",
                           "__bool__", "__iter__", "__next__"))


_FUNCTION = operator.attrgetter("_obj")
_GET = operator.itemgetter.__call__  # an itemgetter applied to a namespace (`Tripwires.snapshot`)
_IMPL = operator.attrgetter("plugin", "function", "hookwrapper", "wrapper", "tryfirst", "trylast")  # a hook's impl
_RUNTEST = operator.attrgetter("runtest.__func__")
_EACH = 200  # a run of up to this many tests checks every test's function after every test (`Tripwires.collected`)


def _functions(items, types) -> list:
    """Each test's function, read in a C loop (`_obj`); a unittest test's, the function its class holds: pytest binds
    its `_obj` anew at each setup (a new TestCase) and clears it at teardown, so it read as replaced in every run.
    `types`: the items' types, read once for the snapshot too (a plugin's subclass of pytest's counts, as isinstance).
    A conftest's own item (`pytest.Item`: wrapt 2.5.2's mypy pairs) has no function: None, its runtest and class
    its print (the C loop raised, every test of the run read as replaced above 200 tests, none fingerprinted below)."""
    try:
        out = list(map(_FUNCTION, items))
    except AttributeError:
        out = [getattr(i, "_obj", None) for i in items]
    case = getattr(sys.modules.get("_pytest.unittest"), "TestCaseFunction", None)
    if case is not None and any(issubclass(t, case) for t in set(types)):  # (no loop over the items without one)
        out = [getattr(i.parent.obj, i.name, None) if isinstance(i, case) else f for i, f in zip(items, out, strict=True)]
    return out


def _prints(items):
    """(functions, runtests, classes) of `items`, in C loops; None when a runtest is no longer a method."""
    try:
        types = list(map(type, items))
        return (_functions(items, types), list(map(_RUNTEST, items)), types)
    except AttributeError:
        return None


class Tripwires:
    """Fingerprints of what the verdict depends on, taken before the code under test is imported.

    `snapshot` is a list of sections (a namespace, a hook, the plugins, ...), each a tuple of object
    ids; a check compares it with the first one (well under a millisecond), and only a section that
    differs is looked at closely to name what changed.
    """

    def __init__(self, config, reporter) -> None:
        self.config, self.reporter = config, reporter
        self.spaces = []  # (label, namespace dict, keys)
        for mod in _MODULES:
            m = globals()["kit_module"](reporter, mod)  # copies.py: the kit's, never the project's own pluggy
            if m is None:
                continue
            volatile = {k for name, k in _VOLATILE if name == mod}  # one set a module, str slices: 1.7 -> 1.3 ms a run
            for label, ns in [(mod, m), *((f"{mod}.{k}", v) for k, v in vars(m).items() if isinstance(v, type)
                                          and getattr(v, "__module__", "").split(".")[0] in ("_pytest", "pytest", "pluggy"))]:
                d = vars(ns)
                keys = [k for k, v in d.items() if (callable(v) or isinstance(v, (property, classmethod, staticmethod)))
                        and (k[:2] != "__" or k[-2:] != "__" or k in _KEEP_DUNDER)]
                self.spaces.append((label, d, [k for k in keys if k not in volatile] if volatile else keys))
        # Each namespace's entries read by one C call (an `itemgetter` of its keys: a tuple, a lone key's value as is), all
        # in one C loop (`snapshot`): a `getitem` an entry (3,611 of them) cost 0.4 ms a check, 17 ms of a 40-test run.
        self.spaces = [s for s in self.spaces if s[2]]
        self.getters, self.dicts = [operator.itemgetter(*keys) for _, _, keys in self.spaces], [s[1] for s in self.spaces]
        self.callers = [(name, c) for name, c in vars(config.pluginmanager.hook).items() if hasattr(c, "_hookimpls")]
        self.builtin_names = [k for k in vars(builtins) if k != "_"]  # `_`: the display hook and gettext set it
        self.modules = [m for m in _MODULES if m in sys.modules and globals()["kit_module"](reporter, m) is sys.modules[m]]
        self.items: list = []
        self.many: list = []  # a large run's tests (`collected`)
        self.where: dict = {}
        self.many_base = None
        self.quiet: dict = {}  # id -> a finder added to sys.meta_path that leaves the tests and the kit alone (`finder_alone`)
        self.harness_names = [m for m in sys.modules if m.partition(".")[0] in ("pytest", "_pytest", "pluggy")]
        rewrite = sys.modules.get("_pytest.assertion.rewrite")
        self.rewriter = getattr(rewrite, "AssertionRewritingHook", None)
        globals()["conftests_init"](self, config)  # conftests.py, sent with this file
        self.labels, self.base = self.snapshot()

    def collected(self, items) -> None:
        """Add the collected tests (their functions and code) to the fingerprints. Up to `_EACH` tests, every
        test's are checked after every test; in a larger run each test's own as it starts and every test's at
        the end (all after each was O(n²): 2,000 tests, a second and more of the run)."""
        items = list(items)
        self.many = items if len(items) > _EACH else []
        self.items = [] if self.many else items
        self.where = {item.nodeid: j for j, item in enumerate(self.many)}
        self.many_base = _prints(self.many)
        self.labels, self.base = self.snapshot()

    def replaced(self, nodeid: "str | None" = None) -> list:
        """Of a large run's tests, those whose function, runtest or class changed: the test `nodeid`, or all."""
        if not self.many:
            return []
        j = self.where.get(nodeid, -1) if nodeid is not None else None
        if j == -1:
            return []
        picked = self.many if j is None else [self.many[j]]
        now, base = _prints(picked), self.many_base
        if base is not None and j is not None:
            base = tuple([column[j]] for column in base)
        if now is not None and base is not None and all(x is y for a, b in zip(now, base, strict=True)
                                                        for x, y in zip(a, b, strict=True)):
            return []
        return [f"test {item.nodeid}" for k, item in enumerate(picked)
                if now is None or base is None or any(a[k] is not b[k] for a, b in zip(now, base, strict=True))] or ["tests"]

    def snapshot(self) -> tuple[list, list]:
        # Objects, compared by identity, collected in C loops: `id()` and reading a function's
        # `__code__` or `__defaults__` raise audit events, thousands a check. Assigning those on a
        # pytest function or a test is reported by the audit hook (`_watch`) instead.
        try:  # modules' dicts and classes' mapping proxies alike
            flat = list(map(_GET, self.getters, self.dicts))
        except KeyError:  # something was deleted: the slow way, which reads it as None
            flat = [tuple(map(d.get, keys)) if len(keys) > 1 else d.get(keys[0]) for _, d, keys in self.spaces]
        labels: list[str] = ["namespaces"]
        out: list[Any] = [flat]
        for name, c in self.callers:
            labels.append(f"hook {name}")
            out.append(list(map(_IMPL, globals()["unheld"](self, c._hookimpls) if self.held else c._hookimpls)))  # type: ignore[attr-defined]
        pm = self.config.pluginmanager
        labels += ["plugins", "pluginmanager", "sys.modules", "sys.meta_path", "sys.path_hooks", "sys.settrace",
                   "sys.setprofile", "threading.settrace", "threading.setprofile", "builtins", "reporter"]
        out += [
            globals()["plugins_now"](self, pm),  # conftests.py: the sealed conftest.py files held left out
            [pm.hook, getattr(pm, "_hookexec", None), getattr(pm, "_inner_hookexec", None), *(c._hookexec for _, c in self.callers)],
            list(map(sys.modules.get, self.modules)),
            [f for f in sys.meta_path if id(f) not in self.quiet],
            list(sys.path_hooks),
            sys.gettrace(), sys.getprofile(),
            getattr(threading, "_trace_hook", None), getattr(threading, "_profile_hook", None),
            list(map(vars(builtins).get, self.builtin_names)),
            [self.reporter.fd, self.reporter.nonce, *vars(type(self.reporter)).values(), *globals().values()],
        ]
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            labels.append("sys.monitoring")
            out.append([monitoring.get_tool(i) for i in range(6)])
        labels.append("tests")
        try:  # every collected test after every test: C loops, so a run of n tests costs O(n) each
            types = list(map(type, self.items))
            out.append((_functions(self.items, types), list(map(_RUNTEST, self.items)), types))
        except AttributeError:
            out.append(None)  # a test's runtest is no longer a method
        return labels, out

    def changed(self) -> list:
        labels, now = self.snapshot()
        if now == self.base:
            return []
        if "sys.meta_path" in labels:
            j = labels.index("sys.meta_path")
            if now[j] != self.base[j]:
                for finder in sys.meta_path:
                    if id(finder) not in self.quiet and not any(finder is f for f in self.base[j]) and globals()["finder_alone"](self, finder):
                        self.quiet[id(finder)] = finder  # held: its id stays its own
                labels, now = self.snapshot()
                if now == self.base:
                    return []
        if globals()["take_conftests"](self):  # sealed conftest.py files pytest registered as it collected
            return self.changed()
        if labels != self.labels:
            return ["plugins"]  # a hook or test appeared or went: only a registered plugin does that
        found = []
        for label, a, b in zip(labels, now, self.base, strict=False):
            if a == b:
                continue
            if label == "namespaces":
                names = [f"{space}.{k}" for space, _, keys in self.spaces for k in keys]
                a, b = ([v for x, (_, _, keys) in zip(y, self.spaces, strict=True) for v in (x if len(keys) > 1 else (x,))]
                        for y in (a, b))  # each namespace's values flat, as the names are
                found += [names[j] for j in range(len(a)) if a[j] is not b[j]] or [label]
            elif label == "tests":
                found += [f"test {item.nodeid}" for j, item in enumerate(self.items)
                          if a is None or any(x[j] is not y[j] for x, y in zip(a, b, strict=False))] or ["tests"]
            elif label == "builtins":
                found += [f"builtins.{self.builtin_names[j]}" for j in range(len(a)) if a[j] != b[j]]
            else:
                found.append(label)
        return found


# Judged by their effect, not their use (issue 37): a gc walk, a tracer or a profiler the code under test starts is
# not a finding on its own: what it does to the harness, the tests or the result is (the fingerprints, the setattr
# watch below, the stream's order, the second opinion); a tracer left running after a test is (`Tripwires`). A frame walk
# is a finding when it reaches the harness's frames (pytest, pluggy, this plugin), and opening a sealed test's file is one.
_WATCH = frozenset({"sys._getframe", "object.__setattr__", "object.__getattr__", "sys._current_frames", "open"})
# With them (`_watch`), what only tells the runs' walls apart and neither run can hide (`traces.py`, sent with this
# file): opened, listed, looked up through ctypes or handed to a child by the repository's own code, however spelled,
# it is the scan's `sandbox-probe`.
_FRAME_ATTRS = frozenset({"f_code", "__code__"})  # a frame's code (whose frame it is), a function's (a test's?)
_HARNESS_MODULES = ("_pytest", "pytest", "pluggy", "donegate_plugin")


def _watch(reporter, repo: str, store: str, theirs: "tuple[str, ...]" = (), kit: "tuple[str, ...]" = ()) -> None:
    """An audit hook (it cannot be removed once added) that reports, the moment it happens and so
    before the code can do anything with it, the code under test reaching for the harness: searching
    the interpreter's objects (gc), walking the call stack (sys._getframe, inspect.stack, a
    traceback's frame), patching a pytest or pluggy class or function, or a test's code, or setting a
    trace or profile function. Only calls made from the repository's own files count: pytest,
    logging, namedtuple and the like walk frames all the time; so do the project's dependencies, which
    may live in an environment inside the repository (`theirs`: its site-packages)."""
    import inspect as _inspect
    import traceback as _traceback

    stdlib_stack = (_inspect.__file__, _traceback.__file__)
    trace_of, trace_where, trace_asked = globals()["trace_of"], globals()["trace_where"], globals()["trace_asker"]()
    traces = globals()["TRACE_EVENTS"]
    watch = _WATCH | traces
    getframe = sys._getframe
    frame_type = type(getframe())
    busy: list[Any] = []
    repo = repo.rstrip("/") + "/"

    theirs = tuple(t.rstrip("/") + "/" for t in theirs)

    own_lines = reporter.own_lines

    def ours(filename: str, frame: "Any" = None) -> bool:
        """The repository's own file, and (with `frame`) not a line the seal's baseline holds (the project's
        own code, unchanged since the seal wherever an edit moved it)."""
        if not filename.startswith(repo) or filename.startswith(theirs):
            return False
        if frame is not None and own_lines:
            import linecache

            code = " ".join(linecache.getline(filename, frame.f_lineno).split())
            if f"{filename[len(repo):]}:{code}" in own_lines:
                return False
        return True

    def at(frame: "Any") -> str:  # its place: file, function, callers, lines' text (`Reporter.own` matches the baseline)
        return trace_where(frame, repo, theirs, (), store)

    def named_harness(frame: "Any") -> bool:  # its module's name pytest's, pluggy's, ours (f_globals: not audited)
        mod = dict.get(frame.f_globals, "__name__")
        return isinstance(mod, str) and mod.split(".")[0] in _HARNESS_MODULES

    def harness_frame(frame: "Any") -> bool:
        """A frame of pytest, pluggy or this plugin: the harness's own state (config, reporter, outcomes). Known by
        its code's file, the kit's: a frame of the project's own pluggy (its copy: `_own_copies`) is not one."""
        if not named_harness(frame):
            return False
        name = frame.f_code.co_filename
        return bool(kit) and name.startswith(kit) or not name.startswith((repo, *theirs))

    def judge(event: str, args: tuple) -> tuple[str, str]:
        if event == "object.__getattr__" and args[1] == "__code__":  # pytest reads tests' code all the time: cheap first
            code = getattr(args[0], "__code__", None)
            if code is None or not str(getattr(code, "co_filename", "")).startswith(store):
                return "", ""
            caller: Any = getframe(2)
            if ours(caller.f_code.co_filename, caller):
                return "reached the sealed tests' code (a test function's __code__)" + at(caller), "frame-walk"
            return "", ""
        if event in traces:
            trace = trace_of(event, args)
            if trace:
                caller, alone = trace_asked(2)  # traces.py; `alone`: a thread of the stdlib's code only, the product's
                if alone or caller is not None and ours(caller.f_code.co_filename):  # its place (`own:`), never its line
                    return f"read what only tells the sandbox apart ({trace})" + (alone or at(caller)), "sandbox-probe"
                return "", ""
            path = globals()["trace_text"](args[0]) if args and event == "open" else None  # a plain copy (traces.py)
            if path is None or not path.startswith(store):  # the sealed tests' files, below
                return "", ""  # every import opens its source: only a sealed test's file is looked at closely
        caller = getframe(2)  # 0: judge, 1: the hook, 2: the code that raised the event
        if event == "sys._getframe" or event == "sys._current_frames":
            names = []
            while caller is not None and caller.f_code.co_filename in stdlib_stack:
                names.append(caller.f_code.co_name)
                caller = caller.f_back
            if caller is None or not ours(caller.f_code.co_filename, caller):
                return "", ""
            if event == "sys._current_frames":
                return "walked every thread's call stack (sys._current_frames)" + at(caller), "frame-walk"
            got = args[0] if args else None
            if not names and got is not None and hasattr(got, "f_globals") and harness_frame(got):
                return "walked the call stack to the test harness's frames (sys._getframe)" + at(caller), "frame-walk"
            return "", ""
        if event == "open":
            if ours(caller.f_code.co_filename):
                return "walked the call stack to a sealed test's file and opened it" + at(caller), "frame-walk"
            return "", ""
        if not ours(caller.f_code.co_filename, None if event == "object.__setattr__" else caller):
            return "", ""
        if event == "object.__getattr__":
            frame = args[0] if args[1] == "f_code" else None
            if frame is not None and hasattr(frame, "f_globals") and harness_frame(frame):
                return "walked the call stack to the test harness's frames (.f_code)" + at(caller), "frame-walk"
            return "", ""
        if event == "object.__setattr__":
            obj = args[0]
            mod = str(getattr(obj, "__module__", "") or "")
            code = getattr(obj, "__code__", None)
            if mod.split(".")[0] in _HARNESS_MODULES:
                return f"patched {mod}.{getattr(obj, '__qualname__', '?')}.{args[1]}", "harness"
            if code is not None and code.co_filename.startswith(store):
                return f"replaced the code of the test {getattr(obj, '__qualname__', '?')}", "harness"
        return "", ""

    def hook(event: str, args: tuple) -> None:
        if event not in watch or busy or reporter.tampered:  # after hard evidence, nothing more to say
            return
        if event == "object.__getattr__" and (args[1] not in _FRAME_ATTRS or args[1] == "f_code" and
                                             type(args[0]) is frame_type and not named_harness(args[0])):
            return  # every other audited read (a traceback's frame, a generator's): not a walk outward; nor a code of
            # a frame not the harness's, what a tracer reads at each call (the seal's reach map: 10^8 in a suite)
        busy.append(1)
        try:
            what, rule = judge(event, args)
            if what and rule not in reporter.allow:
                reporter.alarm(f"the code under test {what}", event, rule)
        except Exception:  # never let the watch itself break an honest run
            pass
        finally:
            busy.clear()

    sys.addaudithook(hook)


def describe(changed: list, where: str) -> str:
    """One plain line naming what changed, for the agent and the ledger."""
    def kind(key: str) -> str:
        if key == "plugins":
            return "a pytest plugin was registered or removed"
        if key.startswith("hook "):
            return f"the pytest hook {key.split()[1]} was changed"
        if key.startswith("test "):
            return f"the test function {key[5:]} was replaced"
        if key.startswith("reporter"):
            return "the kit's reporter was changed"
        if key == "pluginmanager":
            return "pytest's plugin manager was changed"
        if key == "sys.modules":
            return "a pytest module in sys.modules was replaced"
        if key.startswith("builtins."):
            return f"the builtin {key[9:]} was replaced"
        if key in ("sys.settrace", "threading.settrace", "sys.setprofile", "threading.setprofile"):
            return f"set a {key.split('.')[1]} function and left it running after the test ({key})"
        if key.startswith(("sys.", "threading.")):
            return f"{key} was changed"
        return f"pytest's {key} was replaced"
    kinds = list(dict.fromkeys(kind(k) for k in changed))
    more = f" (and {len(kinds) - 2} more)" if len(kinds) > 2 else ""
    return f"the code under test changed the test harness: {'; '.join(kinds[:2])}{more} {where}"


HARD = frozenset({"harness", "probe"})  # never honest code's doing: not appealable


def rule_of(key: str) -> str:
    """The rule a tripwire's key falls under: a tracer or profiler is honest code's too (appealable);
    any other change to the harness is not."""
    if key in ("sys.settrace", "threading.settrace", "sys.monitoring"):
        return "settrace"
    if key in ("sys.setprofile", "threading.setprofile"):
        return "setprofile"
    return "harness"


def _send(fd: int, msg: dict) -> None:
    _write(fd, (_dumps(msg) + "\n").encode())


def _probe_asserts(reporter) -> None:
    """Every passing `==` pytest rewrites in a test is probed (`make_probe`, from probe.py, whose source is
    sent with this file's). Installed before the tripwires' fingerprints: replacing it is tampering."""
    import _pytest.assertion.rewrite as rw

    original, ours = rw.rewrite_asserts, globals()  # probe.py's functions share this namespace

    def rewrite_asserts(mod, source, module_path=None, config=None):
        original(mod, source, module_path, config)
        ours["rewrite_probes"](mod)

    rw.rewrite_asserts = rewrite_asserts
    kept = reporter.tests_pyc
    if kept:
        # The sealed tests' rewrite (pytest's and these probes), kept by the kit's job (`donegate.hidden.pyc`):
        # pytest reads it from there, read-only, and only when the test's source hashes to what it was made from.
        # The project's own suite (`root`: the folder it is laid out in) keeps its folders under `dir`.
        stores, folder, original_dir, root = frozenset(kept["stores"]), kept["dir"], rw.get_cache_dir, kept.get("root")
        made = rw.try_makedirs  # never written by a run (unconfined it is writable: `pyc.Rewrite`), as if read-only
        rw.try_makedirs = lambda cache_dir: not str(cache_dir).startswith(folder) and made(cache_dir)

        def get_cache_dir(file_path):
            if root and str(file_path).startswith(root + "/"):
                return type(file_path)(folder + str(file_path.parent)[len(root):])
            return type(file_path)(folder) if str(file_path.parent) in stores else original_dir(file_path)

        rw.get_cache_dir = get_cache_dir
    else:
        # A developer's pytest writes a test's rewrite beside it (sys.dont_write_bytecode is off, as theirs): here the
        # tests are the store's, which an unconfined run could write, so the rewrite goes to a folder of the run's.
        import tempfile

        private = tempfile.mkdtemp(prefix="rw")

        def get_cache_dir(file_path):
            return type(file_path)(private + str(file_path.parent))

        rw.get_cache_dir = get_cache_dir
    rw._dg_probe = ours["make_probe"](reporter.repo, lambda what: reporter.alarm(  # type: ignore[attr-defined]
        f"the equality probe: {what}", "probe", "probe"))


class Reporter:
    def __init__(self, fd: int, nonce: str, repo: str = "", theirs: "list[str] | None" = None,
                 allow: tuple = (), tests_pyc: "dict | None" = None, last: "list[str] | None" = None,
                 kit: "list[str] | None" = None, startup: "frozenset | None" = None,
                 path: "list[str] | None" = None, by_file: bool = False, skip: "list[str] | None" = None) -> None:
        self.fd = fd
        self.skip = frozenset(skip or ())  # test files not collected (the own suite's the change cannot reach)
        # The project's own suite (`donegate.gate.own_suite`): the fingerprints are checked as each test file's tests
        # are done, not after each test (~0.4 ms a check: 2,000 tests, 0.8 s of a 2.6 s suite). The hidden run: each test.
        self.by_file = by_file
        self.file = ""
        self.last = frozenset(last or ())  # the held-back tests: run after every shown one (`pytest_collection_modifyitems`)
        self.kit = tuple(k.rstrip("/") + "/" for k in kit or ())  # the kit's pytest's folders (the harness's code)
        self.startup = startup  # the modules the interpreter held before the kit imported anything
        # the project's own folders on sys.path (its root, `src/`, `pythonpath`): not its environment's, whose copy of
        # pluggy or packaging would split what pytest and the product share (an exception group's class) in two
        self.path = list(path or ())
        self.kit_copies: dict = {}  # name -> the kit's module the project's own copy replaced (copies.py)
        self.tests_pyc = tests_pyc  # where the sealed tests' rewrite is kept ({"stores": [...], "dir": ...}), or None
        self.nonce = nonce
        self.repo = repo
        self.theirs = tuple(theirs or ())
        # rules the project allows (`scan.allow`): their tripwires stay quiet; and the seal's baseline, marked in the
        # same list (`donegate.gate.acceptance.own_marks`): `own:RULE:WHAT` a tripwire the unchanged project tripped,
        # `line:FILE:CODE` a line of it the scan found (a frame walk there is the project's own, wherever it moved)
        self.allow = frozenset(a for a in allow if not a.startswith(("own:", "line:")))
        self.own = frozenset(a[4:] for a in allow if a.startswith("own:"))
        globals()["trace_keep"](repo or "/", allow)  # traces.py: the files its places name, before the product runs
        self.own_lines = frozenset(a[5:] for a in allow if a.startswith("line:"))
        self.wires: Tripwires | None = None
        self.tampered = False  # hard evidence was sent: later checks would only repeat it
        self.sent: set = set()  # rules already reported (a tracer first, a patched harness later: both count)
        self.said: set = set()  # (rule, what) of the alarms sent
        self.current = ""

    def _send(self, **msg) -> None:
        _send(self.fd, msg)

    def pytest_configure(self, config) -> None:
        # Autoload was off for this pytest's start (`bootstrap.BOOTSTRAP`); the tests' process then has the variables a
        # developer's shell gives `python -m pytest`: a pytest the project starts itself loads its plugins.
        os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        self._send(ev="hello", nonce=self.nonce)
        if self.repo:
            _probe_asserts(self)

    def pytest_collection(self, session) -> None:
        # The last moment before the test modules (and so the repository's code) are imported.
        self.wires = Tripwires(session.config, self)
        if self.repo:
            _watch(self, self.repo, str(session.config.rootpath).rstrip("/") + "/", self.theirs, self.kit)
        globals()["drop_kit_copies"](self)  # copies.py, sent with this file: what pytest imported since

    def pytest_addoption(self, parser) -> None:
        globals()["add_inert"](parser)  # inert.py: a project's `--cache-clear` in addopts, the plugin off

    def pytest_load_initial_conftests(self) -> None:
        # Before the first conftest.py is imported: one that imports pluggy gets the project's (copies.py)
        globals()["drop_kit_copies"](self)

    def alarm(self, what: str, key: str, rule: str) -> None:
        if rule not in HARD and f"{rule}:{what}" in self.own:
            return  # the unchanged project did this at the seal: its own
        # each distinct soft finding once (the seal's baseline records them all: `donegate.seal.sealing`), at most 20
        if not self.tampered and (rule, what) not in self.said and len(self.said) < 20:
            self.said.add((rule, what))
            self.sent.add(rule)
            self.tampered = rule in HARD
            where = f" during {self.current}" if self.current else " during collection"
            self._send(ev="tamper", what=what + where, keys=[key], rule=rule)

    def pytest_ignore_collect(self, collection_path) -> "bool | None":
        # Not named one by one: pytest collects a folder again for each file named in it (200 files, 40,000 modules)
        return True if self.skip and str(collection_path) in self.skip else None

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._send(ev="collecterror", id=report.nodeid, message=globals()["failure_text"](report), detail=str(report.longrepr)[:4000])

    def pytest_exception_interact(self, node, call, report) -> None:
        # A module that could not be found, and the file whose import asked for it: the parent tells a missing
        # dependency (an environment problem) from a missing feature with it; any collection error's innermost file
        # too (module ""): the parent names a third-party plugin whose code raised it (`seal.blamed`).
        exc = getattr(call.excinfo, "value", None)
        if not (isinstance(exc, ModuleNotFoundError) and exc.name or isinstance(exc, Exception) and call.when == "collect"):
            return
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = tb.tb_frame.f_code.co_filename if tb is not None else ""
        self._send(ev="import", id=node.nodeid, module=str(getattr(exc, "name", "") or "")[:200], file=str(where)[:1000])

    def pytest_collection_modifyitems(self, session, config, items) -> None:
        # The held-back tests last: a shown test's failure (its assertion, the product's repr) is written before any
        # held-back test ran, so no value a held-back test compares (a spy's `__eq__` records them) can be in it.
        if self.last:
            items[:] = [i for i in items if i.nodeid not in self.last] + [i for i in items if i.nodeid in self.last]

    def pytest_collection_finish(self, session) -> None:
        self._check("during collection")
        if self.wires is not None:
            self.wires.collected(session.items)
        self._send(ev="collected", ids=[item.nodeid for item in session.items])

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        if self.by_file:
            file = nodeid.split("::", 1)[0]
            if self.file and file != self.file:
                self._check(f"during the tests of {self.file}")
            self.file = file
        self.current = nodeid
        self._send(ev="start", id=nodeid)
        if self.wires is not None and self.wires.many:
            self._check(f"before {nodeid} ran", self.wires.replaced(nodeid), only=True)

    def pytest_runtest_logreport(self, report) -> None:
        outcome, message, text = report.outcome, "", globals()["failure_text"]  # failures.py, sent with this file
        sub = globals()["subtest_label"](report)
        if report.failed:
            message = text(report)
        elif report.skipped:
            outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
            message = report.wasxfail if outcome == "xfailed" else text(report)
        elif report.when == "call" and hasattr(report, "wasxfail"):
            outcome, message = "xpassed", report.wasxfail or ""
        self._send(ev="report", id=report.nodeid, when=report.when, outcome=outcome, message=message[:4000],
                   **({} if sub is None else {"sub": sub[:200]}))

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        if not self.by_file:
            self._check(f"during {nodeid}")
        self._send(ev="end", id=nodeid)

    def _check(self, where: str, also: "list | None" = None, only: bool = False) -> None:
        if self.wires is None or self.tampered:
            return
        found = (also or []) if only else [*self.wires.changed(), *(also or [])]
        changed = [k for k in found if rule_of(k) not in self.allow | self.sent]
        if changed and all(rule_of(k) not in HARD for k in changed) and \
                f"{rule_of(changed[0])}:{describe(changed, '').rstrip()}" in self.own:
            return  # the unchanged project did this at the seal: its own
        if changed:
            rules = {rule_of(k) for k in changed}
            rule = "harness" if "harness" in rules else sorted(rules)[0]
            self.sent.add(rule)
            self.tampered = rule in HARD
            self._send(ev="tamper", what=describe(changed, where), keys=changed[:20], rule=rule)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self._check("at the end of the run", self.wires.replaced() if self.wires is not None else None)
        self._send(ev="finish", nonce=self.nonce, exitstatus=int(exitstatus))
