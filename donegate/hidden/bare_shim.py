"""What the sealed tests' `pytest` is inside the second harness: the shim (`raises`, `approx`, `mark`, `param`,
`fixture`, `fail`, `skip`) and the fixtures it serves (`tmp_path`, `tmp_path_factory`, `monkeypatch`, `capsys`,
`caplog`); and the program a test runs in (`__main__`, the project's own modules, pytest refused).

Standard library only: this source is sent with `bare.py` and executed in the same namespace.
"""

import ast
import functools
import inspect
import itertools
import math
import os
import re
import sys
import types
from pathlib import Path

if globals().get("__package__"):  # imported by the kit (its tests); sent to a run, bare_plan's and bare_served's names are here
    from donegate.hidden.bare_plan import SEEDED
    from donegate.hidden.bare_served import (XUNITS, _CapLog, _Metafunc, _CapSys, _Failed, _MonkeyPatch, _Skipped, _Subtests, _TmpFactory, order,
                                             _as_pytests, _mkdtemp, unit_call, unit_case, unit_steps, xunit)

# Sent to a run, this source shares one namespace with bare_plan's (`second._source`); imported by the kit, it takes
# the name from the module.
if globals().get("__package__"):
    from donegate.hidden.bare_plan import HARNESS


# --- the shim: what the tests' `pytest` is here ------------------------------------------------------------

class _Mark:
    def __init__(self, name, args=(), kwargs=None):
        self.name, self.args, self.kwargs = name, args, kwargs or {}

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):  # pytest's rule: a lone callable is decorated
            fn = args[0]  # a class's marks are each of its tests' (`MODULE_MARKS`, after its `pytestmark`: `module_marks`)
            (MODULE_MARKS.setdefault(fn, []) if isinstance(fn, type) else fn.__dict__.setdefault("_bare_marks", [])).append(self)
            return fn
        return _Mark(self.name, args, kwargs)


class _MarkSpace:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Mark(name)


class _Param:
    def __init__(self, values, id=None, marks=()):
        self.values, self.id, self.marks = values, id, marks


class _ExcInfo:
    def __init__(self):
        self.value = self.type = self.tb = None

    def match(self, pattern):
        assert re.search(pattern, str(self.value)), f"{pattern!r} does not match {str(self.value)!r}"
        return True


class _Raises:
    def __init__(self, expected, match):
        self.expected, self.pattern, self.info = expected, match, _ExcInfo()

    def __enter__(self):
        return self.info

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise _Failed(f"DID NOT RAISE {self.expected}")
        if not issubclass(kind, self.expected):
            return False
        self.info.value, self.info.type, self.info.tb = value, kind, tb
        if self.pattern is not None:
            self.info.match(self.pattern)
        return True


def _raises(expected, *args, match=None, **kwargs):
    ctx = _Raises(expected, match)
    if args:
        with ctx:
            args[0](*args[1:], **kwargs)
        return ctx.info
    return ctx


class _Approx:
    def __init__(self, expected, rel=None, abs=None, nan_ok=False):
        self.expected, self.rel, self.abs, self.nan_ok = expected, rel, abs, nan_ok

    def _one(self, got, want):
        if isinstance(want, dict):
            return isinstance(got, dict) and got.keys() == want.keys() and all(self._one(got[k], want[k]) for k in want)
        if isinstance(want, (list, tuple)):
            return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(self._one, got, want))
        if isinstance(want, bool) or not isinstance(want, (int, float, complex)) or isinstance(got, bool):
            return got == want
        if not isinstance(got, (int, float, complex)):
            return False
        if want == got:
            return True
        if isinstance(want, float) and math.isnan(want):
            return self.nan_ok and isinstance(got, float) and math.isnan(got)
        if isinstance(want, float) and math.isinf(want):
            return False
        if self.abs is not None and self.rel is None:  # pytest: an abs alone leaves rel out
            tol = self.abs
        else:
            tol = max((1e-6 if self.rel is None else self.rel) * builtins_abs(want), 1e-12 if self.abs is None else self.abs)
        return builtins_abs(got - want) <= tol

    def __eq__(self, other):
        return self._one(other, self.expected)

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"approx({self.expected!r})"


# pytest's kinds of approx, each a class of its own (`_approx`), named as the first run's pytest names them (`make_shim`)
_APPROX_KINDS = {"ApproxScalar": type("ApproxScalar", (_Approx,), {})}
_APPROX_KINDS.update({k: type(k, (_APPROX_KINDS["ApproxScalar"] if k == "ApproxDecimal" else _Approx,), {})
                      for k in ("ApproxDecimal", "ApproxSequenceLike", "ApproxMapping")})


def _approx(expected, rel=None, abs=None, nan_ok=False):
    """`pytest.approx(expected)`: of the kind pytest makes for it (a mapping's, a list's or tuple's, a Decimal's, a number's)."""
    kind = ("ApproxMapping" if isinstance(expected, dict) else "ApproxSequenceLike" if isinstance(expected, (list, tuple))
            else "ApproxDecimal" if type(expected).__name__ == "Decimal" else "ApproxScalar")
    return _APPROX_KINDS[kind](expected, rel, abs, nan_ok)


builtins_abs = abs


def _fail(reason="", pytrace=True):
    raise _Failed(reason)


def _skip(reason="", allow_module_level=False):
    raise _Skipped(reason)


def _fixture(fn=None, *, scope="function", autouse=False, name=None, params=None, ids=None):
    def mark(f):  # a classmethod's (a class's own fixture scoped wider than its tests): on it and its function
        for g in (f, getattr(f, "__func__", f)):
            g._bare_fixture = (name or getattr(f, "__func__", f).__name__, autouse, scope)
        return f
    return mark(fn) if callable(fn) or isinstance(fn, classmethod) else mark


def make_shim(name="pytest", folders=()):
    """The tests' `pytest`: a module named `name` (the second run's: the helper the program's text imports, never pytest:
    a module of that name in the heap told the run from a program), in no `sys.modules` (a developer's program imports
    no test framework); the tests reach it by a constant their code holds (`_ToShim`, `bind`), not by a name. Its
    objects' classes named as the first run's pytest (in `folders`) names its own (`_as_pytests`)."""
    _as_pytests(folders)
    shim = types.ModuleType(name)
    shim.raises, shim.approx, shim.fail, shim.skip = _raises, _approx, _fail, _skip
    shim.mark, shim.param, shim.fixture = _MarkSpace(), lambda *v, id=None, marks=(): _Param(v, id, marks), _fixture
    return shim


class _ToShim(ast.NodeTransformer):
    """The tests' `pytest` as the program holds it: no name. `import pytest [as p]` and `from pytest import x [as y]`
    bind nothing; each load of `p` (or `y`) is a marker constant the zygote turns into the shim (or its attribute,
    `bind`), as the names in `held` (the probe's, the held asserts' sink) are: the test's globals (a program's
    `__main__` in the second run) and `sys.modules` hold nothing of the harness's. A name the file binds elsewhere too
    (a parameter `mark`, a loop's `param`) keeps its binding to the shim, as before."""

    def __init__(self, marker, held=()):
        self.marker, self.held, self.inline = marker, {n: "\x00" + n for n in held}, {}

    def visit_Module(self, node):
        named, bound = {}, set()
        for n in ast.walk(node):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                mine = isinstance(n, ast.ImportFrom) and n.level == 0 and n.module == "pytest"
                for a in n.names:
                    if mine or a.name == "pytest":
                        named[a.asname or a.name] = a.name if mine else None
                    else:
                        bound.add((a.asname or a.name).partition(".")[0])
            elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) or isinstance(n, ast.arg):
                bound.add(n.id if isinstance(n, ast.Name) else n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs,
                                ast.MatchStar)) and n.name:
                bound.add(n.name)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                bound.update(n.names)
        self.inline = {k: v for k, v in named.items() if k not in bound and k != "*"}
        return self.generic_visit(node)

    def _bind(self, node, names):
        out = [ast.Assign([ast.Name(name, ast.Store())], value) for name, value in names if name not in self.inline]
        return [ast.copy_location(n, node) for n in out or [ast.Pass()]]

    def visit_Import(self, node):
        return node if not any(a.name == "pytest" for a in node.names) else [
            n for a in node.names for n in (self._bind(node, [(a.asname or "pytest", ast.Constant(self.marker))])
                                            if a.name == "pytest" else [ast.copy_location(ast.Import([a]), node)])]

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module == "pytest":
            return self._bind(node, [(a.asname or a.name, ast.Attribute(ast.Constant(self.marker), a.name, ast.Load()))
                                     for a in node.names if a.name != "*"])
        return node

    def visit_Name(self, node):
        if node.id in self.held and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(self.held[node.id]), node)
        if node.id in self.inline and isinstance(node.ctx, ast.Load):
            attr, shim = self.inline[node.id], ast.Constant(self.marker)
            return ast.copy_location(shim if attr is None else ast.Attribute(shim, attr, ast.Load()), node)
        return node


def shim_compile(tree, name):
    """`compile` of a tree `_ToShim` rewrote (its calls of a marker constant are no mistake: no SyntaxWarning)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return compile(ast.fix_missing_locations(tree), name, "exec", dont_inherit=True)


def bind(code, objects):
    """`code` with each marker constant (`_ToShim`) that is a key of `objects` replaced by its object, in every code
    object it holds: the bytecode loads it as a constant, no namespace names it."""
    consts = tuple(bind(c, objects) if isinstance(c, types.CodeType) else objects.get(c, c) if type(c) is str else c
                   for c in code.co_consts)
    return code.replace(co_consts=consts)


# --- one test as pytest runs it: its parameter set, skip marks, fixtures ---------------------------------

def _cases(fn, outer=(), first=()):
    """The test's parameter sets in pytest's order: `first` (its module's `pytest_generate_tests`' calls), then its marks
    in the order applied, then its class's and its module's (`outer`: their `pytestmark`), the first varying slowest."""
    lists = []
    for m in [*first, *getattr(fn, "_bare_marks", []), *outer]:
        if m.name != "parametrize":
            continue
        names = m.args[0] if not isinstance(m.args[0], str) else [n.strip() for n in m.args[0].split(",") if n.strip()]
        values = m.args[1] if len(m.args) > 1 else m.kwargs.get("argvalues")
        sets = []
        for v in values:
            if isinstance(v, _Param):
                v = v.values if len(names) > 1 else v.values[0]
            sets.append(dict(zip(names, v, strict=True)) if len(names) > 1 else {names[0]: v})
        lists.append(sets)
    return [dict(kv for d in combo for kv in d.items()) for combo in itertools.product(*lists)] if lists else [{}]


MODULE_MARKS: dict = {}  # {test file, or a class: its `pytestmark`, as a list} (`bare_fork.module_marks`)


def _skipping(fn, marks=()):
    for m in [*getattr(fn, "_bare_marks", []), *marks]:
        if m.name == "skip" or m.name == "skipif" and m.args and m.args[0] is True:
            raise _Skipped(str(m.kwargs.get("reason", "")))


def _run_test(mod, job, fixtures):
    """The test, its fixtures set up before and torn down after (as `_setup` and `teardown` do in a fork)."""
    fn, kwargs, teardowns = _setup(mod, job, fixtures)
    try:
        fn(**kwargs)
    finally:
        teardown(teardowns)


def teardown(teardowns):
    """The fixtures' teardowns, last set up first."""
    while teardowns:
        teardowns.pop()()


def _setup(mod, job, fixtures):
    """(the test's function, its arguments, the teardowns of its fixtures): its parameter set and fixtures, set up
    (torn down again when one of them fails)."""
    results, teardowns, out = [], [], []
    try:
        for f, a, k in plan_test(mod, job, fixtures, results, teardowns, out):
            results.append(f(*a, **k))
    except BaseException:
        teardown(teardowns)
        raise
    return out[0], out[1], teardowns


def plan_test(mod, job, fixtures, results, teardowns, out):
    """A test's setup as the calls that run the test file's own code (its fixtures, a yield fixture's first part): a
    generator of (callable, args, kwargs), each call's result appended to `results` by its caller before the next is
    asked for (`_setup`; a fork's program makes the calls from its own frame, `bare_fork.PROGRAM`, so the fixtures'
    code finds no frame of the harness's below it). The parameter set and the fixtures the harness serves are made
    here; `teardowns` gets each fixture's teardown once it is set up, `out` the test's function and arguments."""
    cls, _, name = job["qual"].rpartition("::")
    klass = getattr(mod, cls) if cls else None
    unit = unit_case(klass)  # a unittest TestCase: made for its test method, its steps the program's (`unit_steps`)
    fn = getattr(klass(name) if unit else klass(), name) if cls else getattr(mod, name)
    func = getattr(fn, "__func__", fn)
    outer = [*(m for c in reversed(getattr(klass, "__mro__", ())) for m in MODULE_MARKS.get(c, ())), *MODULE_MARKS.get(job["rel"], ())]
    # Its fixtures as pytest lists them (`bare_served.order`): the autouse ones, the module's (its xunit set-ups first,
    # as pytest registers them before it reads the file's, then the file's by attribute name) and the class's (a
    # plain class's xunit set-ups or a TestCase's class part, then its own fixtures, bound to the test's instance),
    # then `usefixtures` (the test's marks, its class's, its module's), then its arguments.
    # A wider one (not a TestCase's: `bare_plan._fixture_def`) is bound as pytest binds it: a classmethod to the class,
    # a method to an instance of its own (pytest's made at collection: the test's `self` is not it), made once.
    own, holder = {}, []
    for a in sorted({a for c in getattr(klass, "__mro__", ()) for a, v in vars(c).items() if hasattr(v, "_bare_fixture")}):
        if hasattr(getattr(klass, a), "_bare_fixture"):
            wide = getattr(klass, a)._bare_fixture[2] != "function" and (holder or holder.append(klass()) or True)
            own[getattr(klass, a)._bare_fixture[0]] = getattr(holder[0] if wide else fn.__self__, a)
    autouse = lambda defs: [n for n, f in defs.items() if f._bare_fixture[1]]  # noqa: E731
    names = [" module", *([" function"] if klass is None else []), *autouse(fixtures),
             *([" unit", " class", " unit method"] if unit else [" class", " method"] if klass is not None else []), *autouse(own),
             *(a for m in [*getattr(func, "_bare_marks", []), *outer] if m.name == "usefixtures" for a in m.args), *job["fixtures"]]
    fixtures = {**fixtures, **own}
    # The module's `pytest_generate_tests` (a plain test's, as pytest collects it: a call for the program), then its
    # skip marks, as pytest's skipping plugin reads them before any set-up; then its parameter set.
    gen, meta = vars(mod).get("pytest_generate_tests"), _Metafunc(func, klass, mod, ())
    if callable(gen) and not unit:
        meta.fixturenames = [n for n in order([*names, *inspect.signature(fn).parameters], fixtures, ()) if n not in XUNITS]
        yield gen, (meta,), {}
    _skipping(func, outer)
    cases = _cases(func, outer, meta.calls)
    if len(cases) != job["count"]:
        raise LookupError(f"{len(cases)} parameter sets where pytest ran {job['count']}")
    kwargs = dict(cases[job["index"]])
    made, base, params = {}, [], dict(kwargs)  # each parameter the value of its name for any fixture (`order`)

    def temp():  # the test's temporary folder, made when a fixture asks for it (most tests never do)
        if not base:
            base.append(Path(_mkdtemp(prefix="t")))
        return base[0]

    def get(n):
        if n in made or n in params:
            return made[n] if n in made else params[n]
        if n in XUNITS:  # an xunit set-up, as pytest's autouse fixture of it (`bare_served.xunit`)
            made[n] = yield from xunit(mod, klass, fn, n, teardowns)
            return None
        if n in fixtures:  # the file's own, as pytest prefers it to a fixture of the same name it serves
            f, args = fixtures[n], {}
            for a in inspect.signature(f).parameters:
                args[a] = yield from get(a)
            yield f, (), args
            value = results[-1]
            if inspect.isgenerator(value):  # a yield fixture: its first part now, its rest a teardown
                gen = value
                yield next, (gen,), {}
                value = results[-1]
                # its rest: `next` itself, with no frame of the harness's between the fixture and its caller (a
                # fixture that yields twice failed its test under pytest already, which never reaches this run)
                teardowns.append(functools.partial(next, gen, None))
        elif n == "tmp_path":
            value = Path(_mkdtemp(dir=temp()))
        elif n == "tmp_path_factory":
            value = _TmpFactory(temp())
        elif n == "monkeypatch":
            value = _MonkeyPatch()
            teardowns.append(value.undo)
        elif n == "capsys":
            value = _CapSys()
            teardowns.append(value.close)
        elif n == "caplog":
            value = _CapLog()
            teardowns.append(value.close)
        elif n == "subtests":  # its failed subtests fail the test once it returned, as pytest's report does
            value = _Subtests()
            teardowns.append(value.close)
        elif n == SEEDED:  # the stop's draws for this test, as the first run's plugin makes them (`seeded.py`)
            value = globals()["SeededRandom"](job["draw"])
        else:
            raise LookupError(f"the fixture {n} is not served")
        if n not in fixtures:  # a served value's classes' modules, as a developer's test imports them (`hide_harness`)
            for kind in type(value).__mro__:
                unhide(kind.__module__)
        made[n] = value
        return value

    for n in order(names, fixtures, kwargs, meta.calls):
        value = yield from get(n)
        if n in job["fixtures"]:
            kwargs[n] = value
    if unit:  # setUp after the fixtures, as pytest calls it in the test's call
        yield from unit_steps(fn.__self__, fn, teardowns)
    if job.get("draw") is not None:  # a @given test draws what the first run drew (`seeded.given_draw`)
        globals()["given_draw"](fn, job["draw"])
    unasked = params.keys() - inspect.signature(fn).parameters  # a parameter only its fixtures ask for (pytest's override)
    out.extend(unit_call(fn.__self__, fn, kwargs) if unit else (fn, {k: v for k, v in kwargs.items() if k not in unasked}))


# --- the program a test runs in: `__main__`, the project's own modules, pytest refused ---------------------

# The names a program's `__main__` holds, in the order `python prog.py` gives them.
MAIN_ORDER = ("__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__", "__builtins__", "__file__",
              "__cached__")


def _as_program(path, cwd=None):
    """`__main__` and `sys.argv` as a developer's own program has them (`python prog.py`), `path` the program's file:
    code that looks at `__main__.__file__` (python-dotenv's find_dotenv) sees a program, not `python -c`. Nothing of
    the supervisor's `-c` namespace is left in it."""
    main = sys.modules.get("__main__")
    if main is None:
        return
    g = vars(main)
    kept = g.get("__builtins__")
    g.clear()
    from importlib.machinery import SourceFileLoader

    # in the interpreter's order (`MAIN_ORDER`): code that lists `vars(__main__)` sees a program's (the update's
    # order, `__spec__`, `__cached__`, `__builtins__` ahead of `__annotations__`, told the second run apart)
    g.update(__name__="__main__", __doc__=None, __package__=None, __loader__=SourceFileLoader("__main__", path),
             __spec__=None, __annotations__={},  # the interpreter's `__main__` starts with one, as a program's has it
             __builtins__=kept, __file__=path, __cached__=None)
    # as typed in the program's folder (the cwd it runs in): `__file__` is absolute, argv[0] as typed
    typed = os.path.basename(path) if os.path.dirname(path) == cwd else path
    sys.argv = [typed]
    sys.orig_argv = [sys.executable, typed]  # `python prog.py`'s: no `-c` and its program text
    sys.path_importer_cache.setdefault(path, None)  # as `python prog.py`'s start leaves it (`bare_fork.enter_program`)


def _own_names(front):
    """Top-level names the project's own folders hold (`front`: its root, `src/`, `pythonpath`) that the harness
    itself imported or refuses: the project's copies are the ones its tests get."""
    names = set()
    for folder in front:
        try:
            listed = os.listdir(folder)
        except OSError:
            continue
        names.update(n[:-3] if n.endswith(".py") else n for n in listed)
    return sorted(n for n in names if n in sys.modules or n == "pluggy")


def refuse_harness(hits, own=()):
    """The test framework refused to the product (`HARNESS`, but for the project's own modules of those names), with
    no finder on `sys.meta_path` for code to see (a developer's program has none): an audit hook, which no code can
    list or remove, turns the import statement's `import` event for one of them into the error a missing module
    gives, and so does the opening of one of their files (`importlib.import_module` raises no `import` event). Its
    code is named as importlib's, whose frames Python takes out of an import error's traceback."""
    from importlib.machinery import PathFinder

    refused = tuple(n for n in HARNESS if n not in own)
    whose = {}  # a refused module's folder (or file) -> its name
    for name in refused:
        spec = PathFinder.find_spec(name)
        if spec is not None:
            whose.update((p.rstrip("/") + "/", name) for p in spec.submodule_search_locations or ())
            if spec.origin and not spec.submodule_search_locations:
                whose[spec.origin] = name
    places = tuple(whose)

    # The argument read as a plain str copy (str's own slicing), never by its own methods: a str subclass given to
    # `sys.audit` noted those called on it (`partition`, `==`, `startswith`, `__class__` by isinstance), and so that
    # a hook was there (tests/gate/test_redteam_traits.py).
    def hook(event, args):
        name = str.__getitem__(args[0], slice(None)) if args and issubclass(type(args[0]), str) else None
        if event == "import":
            top = name.partition(".")[0] if name is not None else ""
            if top not in refused:
                return
        elif event == "open" and places and name is not None and name.startswith(places):
            top = next(n for p, n in whose.items() if name.startswith(p))
        else:
            return
        hits.append(top)
        raise ModuleNotFoundError(f"No module named {top!r}", name=top)

    hook.__code__ = hook.__code__.replace(co_filename="<frozen importlib._bootstrap>", co_name="_find_and_load")
    sys.addaudithook(hook)


# The harness's modules the zygote took out of `sys.modules` (`hide_harness`): {name: module}; and what each one's import
# imported when the supervisor loaded it (`second.NOTE_IMPORTS`).
_HIDDEN: "dict[str, object]" = {}
_IMPORTED: "dict[str, list]" = {}


def hide_harness(startup, imported, own=(), patterns=()):
    """Take out of `sys.modules` what the harness imported beyond the interpreter's start-up modules (`startup`), before
    the product's import: a program's `python prog.py` holds only those when it imports the product (`'ast' in
    sys.modules` told the second run apart, issue 45 item 1). An import of one of them puts it back, the very module
    (no second copy of a module whose objects the harness hands the tests: tmp_path's `pathlib.Path`), with what its
    own import imported (`unhide`): an audit hook on the import statement's `import` event, which Python raises before it
    looks in `sys.modules`, named as importlib's code as `refuse_harness`'s is. The project's own modules named like one
    (`own`) were unloaded already and stay its own."""
    import builtins
    import opcode

    _IMPORTED.update(imported)
    real, at, getframe = builtins.__import__, opcode.opmap["IMPORT_NAME"], sys._getframe
    bootstrap = sys.modules["_frozen_importlib"]
    removed, loading = bootstrap._call_with_frames_removed.__code__, bootstrap._load_unlocked.__code__
    execs = {bootstrap.FrozenImporter.exec_module.__code__, bootstrap._bootstrap_external._LoaderBasics.exec_module.__code__}
    for name in [n for n in sys.modules if n not in startup and n.partition(".")[0] not in own]:
        _HIDDEN[name] = sys.modules.pop(name)
    # `re`'s caches as the interpreter's start left them (`patterns`, the supervisor's): the harness's patterns in them
    # were right in both runs (`any('coding' in str(k[1]) for k in re._cache)`)
    kept = set(patterns)
    for cache in (getattr(re, "_cache", None), getattr(re, "_cache2", None)):
        for key in [k for k in cache or () if k not in kept]:
            cache.pop(key, None)
    for name in () if "re" in startup else ("_compile_repl", "_compile_template"):  # a fresh `re`'s are empty
        getattr(getattr(re, name, None), "cache_clear", lambda: None)()

    # Only an import statement's own event (or importlib's, for `from package import submodule`) puts a module back:
    # one raised by hand (`sys.audit('import', 'ast', ...)`) did, and `'ast' in sys.modules` was right in both runs.
    # Its arguments are the interpreter's (no globals, the import system's lists), `__import__` the interpreter's,
    # and the frame raising it is at an IMPORT_NAME (or importlib's, calling the interpreter's `__import__`). Any other
    # import (a call of `__import__`, a C module's) loads a fresh copy, as a program's interpreter would.
    def hook(event, args):
        if event == "exec" and _HIDDEN:
            return fresh(getframe(0).f_back)  # none when no Python code called it (the interpreter's own `exec`)
        if event != "import" or not _HIDDEN or len(args) != 5 or not issubclass(type(args[0]), str):
            return
        if args[1] is not None or args[2] is not sys.path or args[3] is not sys.meta_path or args[4] is not sys.path_hooks:
            return
        f = getframe(1)
        if f.f_builtins.get("__import__") is not real or builtins.__import__ is not real:
            return
        if f.f_code is removed and f.f_locals.get("f") is real or 0 <= f.f_lasti and f.f_code.co_code[f.f_lasti] == at:
            unhide(str.__getitem__(args[0], slice(None)))

    # Any other route to a hidden module's fresh load (`importlib.import_module`, which raises no `import` event, a call
    # of `__import__`): the import system's `exec` of its code puts the very module back in `sys.modules` in its place,
    # and the import returns it, as `_load_unlocked` takes what `sys.modules` holds once the code ran (a fresh copy of
    # `pathlib` made a served `tmp_path` no `pathlib.Path`, in the second run only). Only the import system's own
    # `exec_module`, called by its `_load_unlocked`, counts (a reload's, or a module built by hand, stays as it is).
    # The fresh code still runs, in its own namespace, as it ran before: what it writes through `sys.modules` (an enum's
    # `_convert_`) lands in the module put back. Extension and built-in modules raise no `exec`: a fresh copy, a limit.
    def fresh(f):
        if f is not None and f.f_code is removed:
            f = f.f_back
        if f is None or f.f_code not in execs or f.f_back is None or f.f_back.f_code is not loading:
            return
        spec = f.f_back.f_locals.get("spec")
        name = getattr(spec, "name", None)
        if type(name) is str and name in _HIDDEN:
            sys.modules.pop(name, None)
            unhide(name)

    hook.__code__ = hook.__code__.replace(co_filename="<frozen importlib._bootstrap>", co_name="_find_and_load")
    fresh.__code__ = fresh.__code__.replace(co_filename="<frozen importlib._bootstrap>", co_name="_load_unlocked")
    sys.addaudithook(hook)


def unhide(name, seen=None):
    """Put `name` back into `sys.modules` when the zygote hid it, its parents first and what its import imported after
    it, as a fresh import adds them (a module before the ones its code imports)."""
    if name not in _HIDDEN or seen is not None and name in seen:
        return
    seen = set() if seen is None else seen
    parts = name.split(".")
    for parent in (".".join(parts[:i]) for i in range(1, len(parts))):
        unhide(parent, seen)
    seen.add(name)
    module = _HIDDEN.pop(name, None)
    if module is not None and name not in sys.modules:
        sys.modules[name] = module
        # as its import binds it in its package, which may be a fresh copy (`importlib.import_module('json')`, then
        # its `from .decoder import ...`): `json.decoder` failed with AttributeError
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)
    for dep in _IMPORTED.get(name, ()):
        unhide(dep, seen)
    # a module a package's code names as its submodule in `sys.modules` itself, not by an import (importlib's
    # `_bootstrap_external`, collections' `abc`): its spec names another
    # (a copy of the items: another thread's import may pop one meanwhile)
    for alias in [n for n, m in list(_HIDDEN.items()) if n.startswith(name + ".") and getattr(getattr(m, "__spec__", None), "name", n) != n]:
        unhide(alias, seen)
