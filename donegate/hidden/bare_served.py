"""The fixtures the second harness serves itself, as pytest serves them: `tmp_path` and `tmp_path_factory`'s folder,
`monkeypatch`, `capsys`, `caplog`, and pytest 9's `subtests` (`bare_shim.plan_test` makes them for a test); and a
unittest TestCase's test as pytest runs it (`unit_class`, `unit_steps`), its steps called by the program itself.

Standard library only: this source is sent with `bare.py` and executed in the same namespace.
"""

import functools
import inspect
import io
import os
import sys
from collections import namedtuple

if globals().get("__package__"):  # imported by the kit; sent to a run, bare_plan's names are here
    from donegate.hidden.bare_plan import CLASS_XUNIT, XUNIT


def _pytests(module, name):
    """A class decorator: the class read as pytest's own `module.name` (its name, qualified name and module, and its
    methods' qualified names), as the first run hands a test its fixtures: a served object's type (`_Metafunc`, from a
    module named by the run's secret) was a name no developer's run holds, which code could read to tell the run."""
    def as_theirs(cls):
        old = cls.__qualname__
        for v in list(vars(cls).values()):
            for f in (v, getattr(v, "__func__", None), getattr(v, "fget", None), getattr(v, "fset", None)):
                code = getattr(f, "__code__", None)
                if code is not None and hasattr(code, "co_qualname") and code.co_qualname.startswith(old + "."):
                    f.__code__ = code.replace(co_qualname=name + code.co_qualname[len(old):])
        cls.__name__, cls.__qualname__, cls.__module__ = name, name, module
        return cls
    return as_theirs


def _as_pytests(folders):
    """The shim's classes named as the first run's pytest (in `folders`) names its own (`bare_served._pytests`): pytest
    9's modules where its `_pytest` has them (`approx.py`, `raises.py`), else pytest 8's: a served object's type was the
    harness's (`_Approx`, `_Mark`, of a module the run's secret named), a name no developer's run holds."""
    shim = vars(__import__("donegate.hidden.bare_shim", fromlist=["_Approx"])) if globals().get("__package__") else globals()
    has = lambda f: any(os.path.isfile(os.path.join(d, "_pytest", f)) for d in folders)  # noqa: E731
    approx, raises = ("_pytest.approx", "Approx") if has("approx.py") else ("_pytest.python_api", "ApproxBase"), has("raises.py")
    for cls, module, name in (("_Approx", approx[0], approx[1]), *((shim["_APPROX_KINDS"][n], approx[0], n) for n in shim["_APPROX_KINDS"]),
                              ("_Raises", *(("_pytest.raises", "RaisesExc") if raises else ("_pytest.python_api", "RaisesContext"))),
                              ("_ExcInfo", "_pytest._code.code", "ExceptionInfo"), ("_Mark", "_pytest.mark.structures", "MarkDecorator"),
                              ("_MarkSpace", "_pytest.mark.structures", "MarkGenerator"),
                              ("_Param", "pytest" if approx[1] == "Approx" else "_pytest.mark.structures", "ParameterSet")):
        cls = shim[cls] if isinstance(cls, str) else cls
        if cls.__qualname__ != name or cls.__module__ != module:
            _pytests(module, name)(cls)


@_pytests("builtins", "Skipped")  # pytest's outcomes say `builtins` of themselves
class _Skipped(BaseException):
    pass


@_pytests("builtins", "Failed")
class _Failed(Exception):
    pass


# --- temporary folders, as `tempfile` makes them ----------------------------------------------------------------
# Not `tempfile` itself: its import (`shutil`, and with it bz2's, lzma's and zlib's libraries mapped) made each of the
# second run's forks cost ~0.3 ms more of CPU, ~11 ms a 40-test stop (issue 48 item 2). A product that imports it gets
# it afresh, as a developer's program does.

_TEMP_DIR: list = []  # the temporary folder, found once by the supervisor before any fork (`_temp_dir`)
_TEMP_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"  # `tempfile`'s


def _temp_dir():
    """The folder `tempfile.gettempdir()` names: TMPDIR, TEMP, TMP, then /tmp, /var/tmp, /usr/tmp, the working folder,
    the first that is a folder this process may write in; found once."""
    if not _TEMP_DIR:
        for d in [os.environ.get(k) for k in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp", "/usr/tmp", os.getcwd()]:
            if d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
                _TEMP_DIR.append(os.path.abspath(d))
                break
        else:
            raise FileNotFoundError("No usable temporary directory found")
    return _TEMP_DIR[0]


def _mkdtemp(prefix="tmp", dir=None):
    """A new folder as `tempfile.mkdtemp` makes one: `prefix` and 8 random characters, mode 0o700, in `dir` (default:
    the temporary folder); its absolute path."""
    base = os.fspath(dir) if dir is not None else _temp_dir()
    while True:
        path = os.path.join(base, prefix + "".join(_TEMP_CHARS[b % len(_TEMP_CHARS)] for b in os.urandom(8)))
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return os.path.abspath(path)


# --- served fixtures ---------------------------------------------------------------------------------------

@_pytests("_pytest.monkeypatch", "MonkeyPatch")
class _MonkeyPatch:
    _NOTSET = object()

    def __init__(self):
        self._undo = []

    def _target(self, target, name, value):
        if isinstance(target, str) and value is self._NOTSET:
            mod, _, attr = target.rpartition(".")
            globals().get("unhide", len)(mod)  # a module the zygote hid comes back (`bare_shim.hide_harness`)
            __import__(mod)
            obj = sys.modules[mod]
            return obj, attr, name
        return target, name, value

    def setattr(self, target, name, value=_NOTSET, raising=True):
        target, name, value = self._target(target, name, value)
        old = getattr(target, name, self._NOTSET)
        if raising and old is self._NOTSET:
            raise AttributeError(f"{target!r} has no attribute {name!r}")
        self._undo.append(lambda: setattr(target, name, old) if old is not self._NOTSET else delattr(target, name))
        setattr(target, name, value)

    def delattr(self, target, name=_NOTSET, raising=True):
        if isinstance(target, str) and name is self._NOTSET:
            target, name, _ = self._target(target, None, self._NOTSET)
        if not hasattr(target, name):
            if raising:
                raise AttributeError(name)
            return
        old = getattr(target, name)
        self._undo.append(lambda: setattr(target, name, old))
        delattr(target, name)

    def setitem(self, mapping, key, value):
        old = mapping.get(key, self._NOTSET)
        self._undo.append(lambda: mapping.__setitem__(key, old) if old is not self._NOTSET else mapping.pop(key, None))
        mapping[key] = value

    def delitem(self, mapping, key, raising=True):
        if key not in mapping:
            if raising:
                raise KeyError(key)
            return
        old = mapping[key]
        self._undo.append(lambda: mapping.__setitem__(key, old))
        del mapping[key]

    def setenv(self, name, value, prepend=None):
        value = str(value)
        if prepend and name in os.environ:
            value = value + prepend + os.environ[name]
        self.setitem(os.environ, name, value)

    def delenv(self, name, raising=True):
        self.delitem(os.environ, name, raising)

    def syspath_prepend(self, path):
        self._undo.append(lambda: sys.path.remove(str(path)))
        sys.path.insert(0, str(path))

    def chdir(self, path):
        old = os.getcwd()
        self._undo.append(lambda: os.chdir(old))
        os.chdir(path)

    def undo(self):
        while self._undo:
            self._undo.pop()()


@_pytests("_pytest.capture", "CaptureFixture")
class _CapSys:
    def __init__(self):
        self._io = io
        self._old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()

    def readouterr(self):
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
        sys.stdout, sys.stderr = self._io.StringIO(), self._io.StringIO()
        return namedtuple("CaptureResult", "out err", module="_pytest.capture")(out, err)

    def close(self):
        sys.stdout, sys.stderr = self._old


@_pytests("_pytest.logging", "LogCaptureFixture")
class _CapLog:
    """pytest's `caplog`: a handler on the root logger for the test (every record that reaches it, as pytest's
    handler takes them), its records, messages and text in pytest's format; levels set through it are put back."""

    FORMAT = "%(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s"  # pytest's DEFAULT_LOG_FORMAT

    def __init__(self):
        import logging

        class Handler(logging.Handler):
            def __init__(self):
                super().__init__(0)
                self.records, self.stream = [], io.StringIO()
                self.setFormatter(logging.Formatter(_CapLog.FORMAT))

            def emit(self, record):
                self.records.append(record)
                self.stream.write(self.format(record) + "\n")

        self._logging, self.handler, self._levels = logging, _pytests("_pytest.logging", "LogCaptureHandler")(Handler)(), []
        logging.getLogger().addHandler(self.handler)

    @property
    def records(self):
        return self.handler.records

    @property
    def record_tuples(self):
        return [(r.name, r.levelno, r.getMessage()) for r in self.records]

    @property
    def messages(self):
        return [r.getMessage() for r in self.records]

    @property
    def text(self):
        return self.handler.stream.getvalue()

    def get_records(self, when):
        return self.records if when == "call" else []

    def clear(self):
        self.handler.records, self.handler.stream = [], io.StringIO()

    def set_level(self, level, logger=None):
        target = self._logging.getLogger(logger)
        self._levels.append((target, target.level, self.handler.level))
        target.setLevel(level)
        self.handler.setLevel(level)

    def at_level(self, level, logger=None):
        import contextlib

        @contextlib.contextmanager
        def scope():
            n = len(self._levels)
            self.set_level(level, logger)
            try:
                yield
            finally:
                self._restore(n)
        return scope()

    def _restore(self, n=0):
        while len(self._levels) > n:
            target, was, handler_was = self._levels.pop()
            target.setLevel(was)
            self.handler.setLevel(handler_was)

    def close(self):
        self._restore()
        self._logging.getLogger().removeHandler(self.handler)


@_pytests("_pytest.tmpdir", "TempPathFactory")
class _TmpFactory:
    def __init__(self, base):
        self.base, self.n = base, 0

    def getbasetemp(self):
        return self.base

    def mktemp(self, basename, numbered=True):
        self.n += 1
        p = self.base / (f"{basename}{self.n}" if numbered else basename)
        p.mkdir(parents=True)
        return p


@_pytests("_pytest.subtests", "Subtests")
class _Subtests:
    """pytest 9's `subtests`: each `subtests.test(msg, **kwargs)` block runs; an exception in it (any but
    KeyboardInterrupt, as pytest reraises only that and its own `Exit`) is that subtest's failure, and the test goes
    on; a skip in it skips the subtest alone. Any failed subtest fails the test (`close`, a teardown: pytest turns a
    passing test with failed subtests into a failure when it reports it)."""

    def __init__(self):
        self.failures = []

    def test(self, msg=None, **kwargs):
        return _SubTest(self.failures)

    def close(self):
        if self.failures:
            raise self.failures[0]


@_pytests("_pytest.subtests", "_SubTestContextManager")
class _SubTest:
    def __init__(self, failures):
        self.failures = failures

    def __enter__(self):
        return None

    def __exit__(self, kind, value, tb):
        if value is None or isinstance(value, KeyboardInterrupt):
            return False
        if not isinstance(value, _Skipped):
            self.failures.append(value)
        return True


# --- a unittest TestCase's test, as pytest runs it, its steps called by the program ---------------------------

def _takes_one(fn):
    """Whether pytest calls a set-up or tear-down with its argument (`_call_with_optional_argument`)."""
    code = getattr(fn, "__code__", None)
    return bool(code is not None and code.co_argcount - inspect.ismethod(fn))


@_pytests("_pytest.python", "Metafunc")
class _Metafunc:
    """What a module's `pytest_generate_tests` is handed for a test (`bare_plan.METAFUNC`): its function, class, module
    and fixture names, and `parametrize`, whose calls become the test's first parameter lists (`bare_shim._cases`: pytest
    calls the hook before it reads the test's marks)."""

    def __init__(self, function, cls, module, fixturenames):
        self.function, self.cls, self.module, self.fixturenames, self.calls = function, cls, module, fixturenames, []

    def parametrize(self, argnames, argvalues, indirect=False, ids=None, scope=None):
        if indirect or scope:
            raise LookupError("an indirect or scoped parametrize")  # the plan leaves such a file out (`bare_plan._generated`)
        self.calls.append(globals()["_Mark"]("parametrize", (argnames, argvalues)))


# pytest's scopes, widest first: a test's fixtures are set up widest first (`order`)
SCOPES = ("session", "package", "module", "class", "function")
# The xunit set-ups, each as pytest registers it, an autouse fixture of its scope (`xunit`): the module's (`setup_module`,
# `setUpModule`), a test function's, a plain class's (`setup_class`), its method's (`setup_method`); a TestCase's class
# (`unit_class`). Named as no fixture can be.
XUNITS = {" module": "module", " function": "function", " class": "class", " method": "function", " unit": "class",
          " unit method": "function"}


DFS = [True]  # pytest 9 walks a test's fixtures depth first, pytest 8 breadth first (`bare_plan.closures`, per run)


def order(names, defs, params, calls=()):
    """A test's fixtures in the order pytest sets them up (`getfixtureclosure`): `names` (its autouse fixtures, the
    xunit set-ups among them, then its `usefixtures`, then its arguments), each fixture's own arguments (`defs`: the
    file's fixtures) after it as pytest walks them (pytest 9: each fixture's right after it, depth first; before: after
    the whole list as it grows), the parameters (`params`) left out; then sorted by scope, widest first, stable (`get`
    sets each up with what it asks for first). A parameter shadows the file's fixture of its name in the whole closure
    (pytest's direct parametrization): a mark's is never walked into; those of the `parametrize` calls of a module's
    `pytest_generate_tests` (`calls`) are walked, then pruned with what only their fixture asked for, the rest kept in
    place (pytest's `prune_dependency_tree`)."""
    generated = {n.strip() for m in calls for n in (m.args[0].split(",") if isinstance(m.args[0], str) else m.args[0])}
    if generated & set(params):
        kept = set(order(names, defs, params))
        return [n for n in order(names, defs, set(params) - generated) if n in kept]
    closure = []

    def asks(n):
        return inspect.signature(defs[n]).parameters if n in defs else ("tmp_path_factory",) if n == "tmp_path" else ()

    def walk(n):
        if n not in params and n not in closure:
            closure.append(n)
            for a in asks(n) if DFS[0] else ():
                walk(a)
    for n in names:
        walk(n)
    for n in closure if not DFS[0] else ():  # the list grows as it is walked, as pytest 8's does
        closure += [a for a in asks(n) if a not in closure and a not in params]

    def scope(n):
        found = XUNITS.get(n) or getattr(defs.get(n), "_bare_fixture", (0, 0, "function"))[2]
        return "session" if n == "tmp_path_factory" and n not in defs else found if found in SCOPES else "function"
    return sorted(closure, key=lambda n: SCOPES.index(scope(n)))


def xunit(mod, klass, fn, kind, teardowns):
    """The xunit set-up `kind` (`XUNITS`) as pytest's autouse fixture of it calls it (a call for the program to make,
    `bare_shim.plan_test`), with its argument when it takes one, its tear-down a teardown once it returned: the module's
    first of `setUpModule`/`setup_module` (and of their tear-downs) with the module; a test function's
    `setup_function`/`teardown_function` (`bare_plan.XUNIT`) with it; a plain test class's `setup_class` and
    `teardown_class` with the class (a classmethod's function), its `setup_method`/`teardown_method` (the instance's)
    with the test's method (`CLASS_XUNIT`). Every test's fork sets its module and class up afresh."""
    if kind == " unit":
        yield from unit_class(klass, fn, teardowns)
        return
    if kind == " unit method":  # a TestCase's `setup_method`: the class's, with the instance and the method, always
        up, down = (getattr(klass, n, None) for n in CLASS_XUNIT[2:])
        if up is not None:
            yield up, (fn.__self__, fn), {}
        if down is not None:
            teardowns.append(functools.partial(down, fn.__self__, fn))
        return
    if kind == " module":
        up, down = ([f for f in map(vars(mod).get, names) if callable(f) and not hasattr(f, "_bare_fixture")][:1] or [None]
                    for names in (("setUpModule", "setup_module"), ("tearDownModule", "teardown_module")))
        pair, arg = (up[0], down[0]), mod
    elif kind == " function":  # the module's names (a lookup that misses raises inside getattr: ~1.5 us each, every test)
        pair, arg = [vars(mod).get(n) for n in XUNIT], fn
    else:
        have = {n for c in klass.__mro__ for n in CLASS_XUNIT if n in vars(c)}
        names = CLASS_XUNIT[:2] if kind == " class" else CLASS_XUNIT[2:]
        pair = [(getattr(getattr(klass, n), "__func__", getattr(klass, n)) if kind == " class" else getattr(fn.__self__, n))
                if n in have else None for n in names]
        arg = klass if kind == " class" else fn
    up, down = pair
    if up is not None:
        yield up, (arg,) if _takes_one(up) else (), {}
    if down is not None:
        teardowns.append(functools.partial(down, arg) if _takes_one(down) else down)


def unit_case(klass):
    """Whether `klass` is a unittest TestCase (the test file imported unittest, so `unittest.case` is loaded)."""
    case = getattr(sys.modules.get("unittest.case"), "TestCase", None)
    return case is not None and isinstance(klass, type) and issubclass(klass, case)


def unit_class(klass, method, teardowns):
    """The class's part of a TestCase test, as pytest's class fixture runs it: skipped (the class's or the method's
    `unittest.skip*`) before anything runs, else `setUpClass` (a call for the program to make, `bare_shim.plan_test`),
    then as teardowns `tearDownClass`, the class cleanups, and their errors raised (`tearDown_exceptions`). Every
    test's fork sets its class up afresh, as each fork imports nothing anew: no state goes from one test to another."""
    if getattr(klass, "__unittest_skip__", False) or getattr(method, "__unittest_skip__", False):
        raise _Skipped(getattr(klass, "__unittest_skip_why__", "") or getattr(method, "__unittest_skip_why__", ""))

    def raised():
        errors = getattr(klass, "tearDown_exceptions", None)
        if errors:
            raise errors[0][1]
    teardowns.append(raised)
    teardowns.append(getattr(klass, "doClassCleanups", lambda: None))
    yield klass.setUpClass, (), {}
    teardowns.append(klass.tearDownClass)


def unit_steps(case, method, teardowns):
    """The test's part: `setUp` (a call for the program), then as teardowns `tearDown`, the cleanups
    (`addCleanup`, `enterContext`) and the verdict of what unittest kept (`check`). The test method itself is the
    program's call, with no frame of unittest's below it (a developer's program calls the product directly; a
    product right only under unittest's `run` is wrong there). `self.subTest` runs each block as unittest does (a
    failure in it is the subtest's, the test goes on, a skip skips it alone): the case holds unittest's own record of
    the parts (`_Outcome`), as its `run` gives it; any failed subtest or cleanup fails the test. A test expecting to
    fail (`unittest.expectedFailure`) never passes, as under pytest (xfailed, or failed as an unexpected success)."""
    import unittest

    try:
        outcome = unittest.case._Outcome(unittest.TestResult())
    except (AttributeError, TypeError):  # another Python's unittest: subTest then fails at its first failure
        outcome = None
    case._outcome = outcome
    expecting = getattr(type(case), "__unittest_expecting_failure__", False) or \
        getattr(method, "__unittest_expecting_failure__", False)

    def check():
        case._outcome = None
        if expecting:
            raise _Failed("an expected failure (unittest.expectedFailure) is never a pass")
        if outcome is not None and (outcome.result.failures or outcome.result.errors):  # a skip fails nothing
            raise AssertionError("a subtest or a cleanup failed")
    loop = _async_case(case)
    if loop:  # its runner (`unit_call`), its last teardown: the loop's leftover tasks cancelled, the loop closed
        case._setupAsyncioRunner()
        teardowns.append(case._tearDownAsyncioRunner)
    teardowns.append(check)
    teardowns.append(case.doCleanups)  # an async case's cleanups run in its loop (its `_callCleanup`)
    yield case._callSetUp if loop else case.setUp, (), {}  # setUp, then asyncSetUp in the loop
    teardowns.append(case._callTearDown if loop else case.tearDown)


def _async_case(case):
    """An IsolatedAsyncioTestCase. Its module is asked of `sys.modules`: an async case's class imported it already,
    and unittest's own `IsolatedAsyncioTestCase` attribute imports it (with asyncio, ~22 ms) in every fork of a plain
    TestCase's test, leaving asyncio loaded where the developer's program has none."""
    import sys

    module = sys.modules.get("unittest.async_case")
    return module is not None and isinstance(case, module.IsolatedAsyncioTestCase)


def unit_call(case, fn, kwargs):
    """(the call the program makes for the test, its arguments): an IsolatedAsyncioTestCase's test method runs in its
    case's loop (`asyncio.Runner.run`, as `asyncio.run` runs a developer's coroutine: asyncio's frames below it, no
    unittest's), any other test as it is."""
    if _async_case(case):
        import functools
        import inspect

        if inspect.iscoroutinefunction(fn):  # the coroutine made here runs nothing of the test's yet
            return functools.partial(case._asyncioRunner.run, fn(**kwargs), context=case._asyncioTestContext), {}
        return functools.partial(case._asyncioTestContext.run, fn), kwargs  # a plain method, in the case's context
    return fn, kwargs
