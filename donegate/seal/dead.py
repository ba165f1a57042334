"""The parts of a test that can never fail it, by their syntax (`ast`): an assert kept in the text but never reached
(`if False:`, after a `return` or `raise` in its block) or whose failure is swallowed (a `try` whose handler takes an
AssertionError and does not raise, `with contextlib.suppress(AssertionError)`) checks nothing, so the weakening check
(`donegate.seal.loosened`) does not count it. The same assert reached, or re-raised (`except AssertionError: raise`),
still counts."""

from __future__ import annotations

import ast
from collections.abc import Callable

# What takes an AssertionError (pytest's asserts and unittest's assertion methods raise it).
CATCHES = {"AssertionError", "Exception", "BaseException"}
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# `try` and (3.11) `try`/`except*`: the same fields.
_TRIES: tuple[type[ast.Try], ...] = tuple(getattr(ast, n) for n in ("Try", "TryStar") if hasattr(ast, n))


def _takes_assertions(expr: ast.expr | None) -> bool:
    """A handler's class or tuple of classes (None: a bare `except:`) that takes an AssertionError."""
    if expr is None:
        return True
    items = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return any((getattr(i, "attr", None) or getattr(i, "id", None)) in CATCHES for i in items)


def _swallows(handler: ast.ExceptHandler) -> bool:
    """The handler takes an AssertionError and lets it through: no `raise` in it and no call that fails the test
    (`pytest.fail(...)`, `self.fail(...)`)."""
    if not _takes_assertions(handler.type):
        return False
    return not any(isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(
        n.func, "id", "")) == "fail") for n in ast.walk(handler))


def _suppresses(item: ast.withitem) -> bool:
    """`contextlib.suppress(...)` (or `suppress(...)`) of a class that takes an AssertionError."""
    call = item.context_expr
    return isinstance(call, ast.Call) and getattr(call.func, "attr", getattr(call.func, "id", "")) == "suppress" \
        and any(_takes_assertions(a) for a in call.args)


# The project's interpreter (`interpreter`): a guard on `sys.version_info` is read against its version, never the
# kit's (None: not known, such a guard is not known either). `sys.platform`, `os.name`, `sys.byteorder`, `os.sep`,
# `platform.system()` and `platform.machine()` are the kit's: the project's runs start on the same machine.
# `sys.implementation.name` is CPython's and `sys.maxsize` the kit's where the project's version is known (`_PROJECT`).
PYTHON: tuple[int, ...] | None = None
_UNKNOWN = object()
# `sys.version_info` as the project's interpreter has it: (major, minor, micro, releaselevel, serial), its parts not
# known `_UNKNOWN` (a version given as `3.11.7`: its release level and serial; `3.11`: its micro too).
VERSION_INFO: tuple[object, ...] | None = None
# The names a test module's top binds once to a guard (`PY2 = sys.version_info[0] == 2`), read where a test tests them
# (`flags`, set by `seal.loosened.tests_of` for the module it reads).
FLAGS: dict[str, ast.expr] = {}
GUARDS = ("sys.version_info", "sys.platform", "os.name", "platform.system()", "sys.byteorder", "os.sep", "platform.machine()",
          "sys.maxsize", "sys.implementation", "platform.python_implementation()", "sys.hexversion", "sys.version",
          "struct.calcsize", "platform.architecture()", "platform.python_version()")


# (the project's Python known: a CPython, as its runs are, of this machine's word size: `_machine`)
_PROJECT = {"sys.implementation.name": "cpython", "platform.python_implementation()": "CPython", "sys.maxsize": 0,
            "struct.calcsize('P')": 0, "platform.architecture()": 0}


class _Prefix(str):
    """A string of which only the start is known (`sys.version` is "3.11." and more): `_prefix_holds` reads it."""


class _Version(_Prefix):
    """A module's `__version__`: a string that starts with a digit (PEP 440), its value not known; only what holds for
    every such string is decided (`>= '0'`, `< 'a'`: `_prefix_holds`)."""


class _Between:
    """A number known to lie in [lo, hi] (`sys.hexversion` where the project's Python is 3.11: its release level and
    serial not known): `_between_holds` reads it."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi


def _machine(text: str) -> object:
    """What `text` (one of `_PROJECT`'s, or `sys.hexversion`, `sys.version`, `platform.python_version()`) is for the
    project's interpreter (`PYTHON` known)."""
    import struct
    import sys

    assert PYTHON is not None
    if text == "sys.hexversion":
        lo = sum(p << s for p, s in zip(PYTHON[:3], (24, 16, 8), strict=False))
        return _Between(lo, lo | (0xFF if len(PYTHON) > 2 else 0xFFFF))
    if text in ("sys.version", "platform.python_version()"):
        known = ".".join(map(str, PYTHON[:3]))
        return _Prefix(known if len(PYTHON) > 2 else known + ".")
    if text == "platform.architecture()":  # (its bits as pytest's interpreter has them; its linkage this machine's)
        return (f"{struct.calcsize('P') * 8}bit", _linkage())
    return {"sys.maxsize": sys.maxsize, "struct.calcsize('P')": struct.calcsize("P")}.get(text, _PROJECT.get(text))


_LINKAGE: list[object] = []


def _linkage() -> object:
    """`platform.architecture()[1]` on this machine (the project's runs start on it), read once, as the standard
    library works it out but without running the `file` program (a process outside the kit's wrapper): `platform`
    says 'ELF' where `file` is on PATH and calls the interpreter an ELF executable or shared object, which its header
    says (ELF's magic, `e_type` 2 or 3); '' where no `file` is (its answer there on Linux); `_UNKNOWN` where the
    interpreter cannot be read or is no such file (what `file` says of it is not read here)."""
    if not _LINKAGE:
        import os
        import shutil
        import sys

        try:
            with open(os.path.realpath(sys.executable), "rb") as f:
                head = f.read(18)
        except OSError:
            head = b""
        order = {1: "little", 2: "big"}.get(head[5]) if len(head) == 18 else None
        elf = head[:4] == b"\x7fELF" and order is not None \
            and int.from_bytes(head[16:18], order) in (2, 3)  # type: ignore[arg-type]
        _LINKAGE.append("" if shutil.which("file") is None else "ELF" if elf else _UNKNOWN)
    return _LINKAGE[0]


def interpreter(version: str | None) -> None:
    """Read the guards as the project's interpreter of `version` (`3.11.7`, pyvenv.cfg's `3.11.7.final.0`) would."""
    global PYTHON, VERSION_INFO
    parts: list[int] = []
    words = (version or "").split(".")
    for p in words:
        if not p.isdigit():
            break
        parts.append(int(p))
    PYTHON = tuple(parts) if len(parts) >= 2 else None
    rest = words[3:5] if len(parts) == 3 else []
    level = tuple(rest) if len(rest) == 2 and rest[0] in ("alpha", "beta", "candidate", "final") and rest[1].isdigit() \
        else (_UNKNOWN, _UNKNOWN)
    VERSION_INFO = None if PYTHON is None else (*PYTHON[:3], *[_UNKNOWN] * (3 - len(PYTHON[:3])), level[0],
                                                 int(level[1]) if isinstance(level[1], str) else level[1])


def _compare(op: str, a: object, b: object) -> object:
    """`a OP b` (`op`: ast's name of a comparison) as Python decides it where `a` or `b` is a tuple holding parts not
    known (`_UNKNOWN`): element by element, the first that differs decides, a shorter equal prefix is smaller;
    `_UNKNOWN` where an unknown part would decide."""
    if op in ("In", "NotIn"):
        if not isinstance(b, (tuple, list, set, frozenset)):
            return _UNKNOWN
        held = [_compare("Eq", a, x) for x in b]
        found = True if True in held else _UNKNOWN if _UNKNOWN in held else False
        return found if found is _UNKNOWN or op == "In" else not found
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    if not (isinstance(a, tuple) and isinstance(b, tuple)):
        import operator

        ops: dict[str, Callable[..., object]] = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt,
                                                         "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge}
        if op not in ops:
            return _UNKNOWN
        if isinstance(a, tuple) or isinstance(b, tuple):  # (a tuple and what is not: never equal, never ordered)
            return op == "NotEq" if op in ("Eq", "NotEq") else _UNKNOWN
        try:
            return ops[op](a, b)
        except (TypeError, ValueError):
            return _UNKNOWN
    if op in ("Eq", "NotEq") and len(a) != len(b):
        return op == "NotEq"
    for x, y in zip(a, b, strict=False):
        same = _compare("Eq", x, y)
        if same is _UNKNOWN:
            return _UNKNOWN
        if same is False:
            return _compare(op, x, y) if op not in ("Eq", "NotEq") else op == "NotEq"
    return _compare(op, len(a), len(b))


def _value(node: ast.expr, depth: int = 0) -> object:
    """What `node` evaluates to when it is known without running the tests: a literal, arithmetic of literals, the
    interpreter's `sys.version_info` (an index, a slice, `.major`/`.minor`/`.micro`), `sys.platform`, `os.name`,
    `platform.system()`, `platform.machine()`, `sys.byteorder`, `os.sep`, `sys.maxsize`, `sys.implementation.name`,
    `platform.python_implementation()`, `str.startswith` of those, a flag of the module's (`FLAGS`); else `_UNKNOWN`."""
    import operator
    import sys

    text = ast.unparse(node) if isinstance(node, (ast.Attribute, ast.Call)) else ""
    if text == "sys.version_info":
        return VERSION_INFO if VERSION_INFO is not None else _UNKNOWN
    if text in ("sys.platform", "os.name", "sys.byteorder", "os.sep"):
        return {"sys.platform": sys.platform, "sys.byteorder": sys.byteorder}.get(text) or getattr(__import__("os"), text[3:])
    if text in _PROJECT or text in ("sys.hexversion", "sys.version", "platform.python_version()"):
        return _UNKNOWN if PYTHON is None else _machine(text)
    if text in ("platform.system()", "platform.machine()"):
        os = __import__("os")
        return (os.uname().sysname if text == "platform.system()" else os.uname().machine) if hasattr(os, "uname") else _UNKNOWN
    if isinstance(node, ast.Attribute) and node.attr == "__version__":
        return _Version("")
    if isinstance(node, ast.Name) and node.id in FLAGS and depth < 5:
        return _value(FLAGS[node.id], depth + 1)
    if isinstance(node, (ast.Compare, ast.BoolOp)) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        falsy = _falsy(node) if depth < 5 else None
        return _UNKNOWN if falsy is None else not falsy
    if isinstance(node, ast.Attribute) and node.attr in _FIELDS:
        got = _value(node.value, depth + 1)
        index = _FIELDS.index(node.attr)
        return got[index] if isinstance(got, tuple) and len(got) > index else _UNKNOWN
    if isinstance(node, ast.Subscript):
        got, at = _value(node.value, depth + 1), _value(node.slice, depth + 1) if not isinstance(node.slice, ast.Slice) \
            else slice(*(None if x is None else _value(x, depth + 1) for x in (node.slice.lower, node.slice.upper, node.slice.step)))
        if isinstance(got, _Prefix):  # (`sys.version[0]`: within what is known)
            known = isinstance(at, int) and 0 <= at < len(got) or isinstance(at, slice) and at.step is None and isinstance(
                at.stop, int) and 0 <= at.stop <= len(got) and isinstance(at.start or 0, int) and (at.start or 0) >= 0
            return str(got)[at] if known else _UNKNOWN  # type: ignore[index]
        try:
            return got[at] if isinstance(got, tuple) and at is not _UNKNOWN else _UNKNOWN  # type: ignore[index,call-overload]
        except (TypeError, IndexError, ValueError):
            return _UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "bit_length" \
            and not node.args and not node.keywords:  # (`sys.maxsize.bit_length()`)
        got = _value(node.func.value, depth + 1)
        return got.bit_length() if isinstance(got, int) and not isinstance(got, bool) else _UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "endswith") \
            and len(node.args) == 1 and not node.keywords:
        got, arg = _value(node.func.value, depth + 1), _value(node.args[0], depth + 1)
        if isinstance(got, _Prefix):
            return _prefix_holds("startswith", got, arg) if node.func.attr == "startswith" else _UNKNOWN
        if isinstance(got, str) and isinstance(arg, (str, tuple)):
            return getattr(got, node.func.attr)(arg)
        return _UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        a, b = _value(node.left, depth + 1), _value(node.right, depth + 1)
        ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            try:
                return ops[type(node.op)](a, b)
            except ArithmeticError:
                return _UNKNOWN
        return _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


_FIELDS = ("major", "minor", "micro", "releaselevel", "serial")


def _prefix_holds(op: str, a: object, b: object) -> object:
    """Whether `a OP b` holds (`op`: `startswith` or ast's name of a comparison) where one side is only partly known
    (`_Prefix`, `_Between`) and the other a literal; `_UNKNOWN` where the unknown part decides."""
    flip = {"Lt": "Gt", "Gt": "Lt", "LtE": "GtE", "GtE": "LtE", "Eq": "Eq", "NotEq": "NotEq"}
    if not isinstance(a, (_Prefix, _Between)) and op in flip:
        a, b, op = b, a, flip[op]
    if isinstance(a, _Between) and isinstance(b, int) and not isinstance(b, bool):
        if op in ("Eq", "NotEq"):
            return _UNKNOWN if a.lo <= b <= a.hi else op == "NotEq"
        ends = [{"Lt": x < b, "LtE": x <= b, "Gt": x > b, "GtE": x >= b}.get(op) for x in (a.lo, a.hi)]
        return ends[0] if None not in ends and ends[0] == ends[1] else _UNKNOWN
    if not isinstance(a, _Prefix) or not all(isinstance(x, str) for x in (b if isinstance(b, tuple) else (b,))):
        return _UNKNOWN
    if isinstance(a, _Version):  # (every string from "0" up to, not with, ":"; a literal outside decides alike for all)
        below, above = not isinstance(b, str) or b < "0", isinstance(b, str) and b[:1] > "9"
        at_least = isinstance(b, str) and b <= "0"
        return {"Lt": False if at_least else True if above else _UNKNOWN,
                "LtE": False if below else True if above else _UNKNOWN,
                "Gt": True if below else False if above else _UNKNOWN,
                "GtE": True if at_least else False if above else _UNKNOWN,
                "Eq": False if below or above or isinstance(b, str) and not b[:1].isdigit() else _UNKNOWN,
                "NotEq": True if below or above or isinstance(b, str) and not b[:1].isdigit() else _UNKNOWN,
                "startswith": True if b == "" else False if isinstance(b, str) and not b[:1].isdigit() else _UNKNOWN,
                }.get(op, _UNKNOWN)
    if op == "startswith":  # (the whole starts with what is known: a literal it starts with, it starts with)
        held = [True if a.startswith(x) else _UNKNOWN if x.startswith(a) else False for x in (b if isinstance(b, tuple) else (b,))]
        return True if True in held else False if all(h is False for h in held) else _UNKNOWN
    if not isinstance(b, str):
        return _UNKNOWN
    if op in ("Eq", "NotEq"):  # (the whole is longer than what is known)
        return _UNKNOWN if b.startswith(a) else op == "NotEq"
    n = min(len(a), len(b))
    if a[:n] == b[:n] and len(b) >= len(a):
        return _UNKNOWN
    bigger = a[:n] > b[:n] or a[:n] == b[:n]  # (the same start and `b` shorter: the whole is bigger)
    return {"Lt": not bigger, "LtE": not bigger, "Gt": bigger, "GtE": bigger}.get(op, _UNKNOWN)


def text_of(node: ast.AST | None, depth: int = 0) -> str | None:
    """A string known without running the test: a literal, literals added (`"assert" + "Equal"`), an f-string of
    literals, `"".join([...])` of them, `"%s" % ...` of them; None for one built from what runs."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if depth > 20:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = text_of(node.left, depth + 1), text_of(node.right, depth + 1)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        pattern = text_of(node.left, depth + 1)
        parts = [text_of(e, depth + 1) for e in (node.right.elts if isinstance(node.right, ast.Tuple) else [node.right])]
        try:
            return pattern % tuple(parts) if pattern is not None and None not in parts else None
        except (TypeError, ValueError):
            return None
    if isinstance(node, ast.JoinedStr):
        parts = [text_of(v.value if isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1
                         else v, depth + 1) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "join" and len(node.args) == 1 \
            and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep, parts = text_of(node.func.value, depth + 1), [text_of(e, depth + 1) for e in node.args[0].elts]  # type: ignore[attr-defined]
        return None if sep is None or None in parts else sep.join(parts)  # type: ignore[arg-type]
    return None


def value(node: ast.expr) -> object:
    """`_value`, None when not known (`seal.loosened` reads a bound's number with it)."""
    got = _value(node)
    return None if got is _UNKNOWN else got


def _falsy(test: ast.expr) -> bool | None:
    """A condition's falsity when it is known without running it, else None: a literal (`False`, `0`, `None`, `not
    True`, `[]`), a comparison of literals (`1 == 2`) or of the interpreter's version or platform with one
    (`sys.version_info < (3, 0)`, `sys.platform == 'win32'`: `_value`), `TYPE_CHECKING` (false when the tests run),
    `and`/`or` of those."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _falsy(test.operand)
        return None if inner is None else not inner
    if (getattr(test, "id", None) or getattr(test, "attr", None)) == "TYPE_CHECKING":
        return True
    if isinstance(test, ast.BoolOp):
        parts = [_falsy(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return True if True in parts else False if all(p is False for p in parts) else None
        return False if False in parts else True if all(p is True for p in parts) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        import operator

        ops = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
               ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
        a, b = _value(test.left), _value(test.comparators[0])
        if a is _UNKNOWN or b is _UNKNOWN or type(test.ops[0]) not in ops:
            return None
        if isinstance(a, (_Prefix, _Between)) or isinstance(b, (_Prefix, _Between)):
            holds = _prefix_holds(type(test.ops[0]).__name__, a, b)
            return None if holds is _UNKNOWN else not holds
        if isinstance(a, tuple) or isinstance(b, (tuple, list, set, frozenset)):  # (parts of it may not be known)
            holds = _compare(type(test.ops[0]).__name__, a, b)
            return None if holds is _UNKNOWN else not holds
        try:
            return not ops[type(test.ops[0])](a, b)
        except (TypeError, ValueError):
            return None
    got = _value(test)
    return None if got is _UNKNOWN else not got


# What gives nothing to loop over when what it is given is empty (`list()`, `zip([], x)`, `enumerate([])`).
_OVER = {"list", "tuple", "set", "frozenset", "dict", "iter", "reversed", "sorted", "enumerate", "zip", "filter", "map"}


def _empty(it: ast.expr) -> bool:
    """An iterable known empty without running the tests: an empty literal, `range(0)` (any `range` of literal
    bounds holding nothing), `list()`, `zip()`, or one of `_OVER` given an empty one (`zip` any)."""
    if _falsy(it) is True:
        return True
    if not isinstance(it, ast.Call) or it.keywords or not isinstance(it.func, ast.Name):
        return False
    name = it.func.id
    if name == "range":
        bounds = [_value(a) for a in it.args]
        if not 1 <= len(bounds) <= 3 or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            return False
        try:
            return len(range(*bounds)) == 0  # type: ignore[arg-type,call-overload]
        except (ValueError, OverflowError):
            return False
    if name not in _OVER:
        return False
    args = it.args[1:] if name in ("filter", "map") else it.args
    if not args:
        return name != "map"  # (`map(f)` raises: not a loop over nothing)
    return any(_empty(a) for a in args) if name in ("zip", "map") else _empty(args[0])


def _block(body: list[ast.stmt], out: set[int]) -> None:
    ended = False
    for stmt in body:
        if ended:
            out.update(id(n) for n in ast.walk(stmt))
            continue
        _stmt(stmt, out)
        ended = _ends(stmt)


def _ends(stmt: ast.stmt) -> bool:
    """A statement after which its block never goes on: a `return`, `raise`, `continue` or `break`, or an `if` whose
    branch that runs ends (`if sys.version_info >= (3, 0): return`; both branches when the condition is not known)."""
    if isinstance(stmt, _ENDS):
        return True
    if not isinstance(stmt, ast.If):
        return False
    falsy = _falsy(stmt.test)
    runs = [b for b, taken in ((stmt.body, falsy is not True), (stmt.orelse, falsy is not False)) if taken]
    return all(any(_ends(s) for s in b) for b in runs)


def _stmt(stmt: ast.stmt, out: set[int]) -> None:
    if isinstance(stmt, (ast.If, ast.While)):
        falsy = _falsy(stmt.test)
        for part, dead in ((stmt.body, falsy is True), (stmt.orelse, falsy is False and isinstance(stmt, ast.If))):
            if dead:
                out.update(id(n) for s in part for n in ast.walk(s))
            else:
                _block(part, out)
        return
    if isinstance(stmt, _TRIES):
        if any(_swallows(h) for h in stmt.handlers):
            out.update(id(n) for s in stmt.body for n in ast.walk(s))
        else:
            _block(stmt.body, out)
        for part in (*(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
            _block(part, out)
        return
    if isinstance(stmt, (ast.For, ast.AsyncFor)) and _empty(stmt.iter):  # `for _ in []:`, `range(0)`: never runs its body
        out.update(id(n) for s in stmt.body for n in ast.walk(s))
        _block(stmt.orelse, out)
        return
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_suppresses(i) for i in stmt.items):
        out.update(id(n) for s in stmt.body for n in ast.walk(s))
        return
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                _block(inner, out)


# {id(node): (node, `inert(node)`)} while one test module is read (`seal.loosened.tests_of`): a helper many tests call
# is read once, not once per test (FLAGS and the interpreter stay as they are for that module); None: not kept. The
# node is held with its answer: an id is another node's only once the first is gone.
INERT: dict[int, tuple[ast.AST, set[int]]] | None = None


def inert(fn: ast.AST) -> set[int]:
    """The ids of the nodes of `fn`'s body that can never fail it (never reached, or their failure swallowed), a
    function or class it defines and never names after (`def check(): assert ...` not called) among them."""
    kept = INERT
    if kept is None:
        return _inert(fn)
    got = kept.get(id(fn))
    if got is None or got[0] is not fn:
        got = kept[id(fn)] = (fn, _inert(fn))
    return set(got[1])


def _inert(fn: ast.AST) -> set[int]:
    out: set[int] = set()
    _block(getattr(fn, "body", []), out)
    for n in ast.walk(fn):  # an expression's part never evaluated: `False and check()`, `None if True else check()`
        skipped: list[ast.AST] = []
        if isinstance(n, ast.BoolOp):
            for i, v in enumerate(n.values[:-1]):
                if _falsy(v) is isinstance(n.op, ast.And):  # (`and` stops at a false one, `or` at a true one)
                    skipped = list(n.values[i + 1:])
                    break
        elif isinstance(n, ast.IfExp) and (falsy := _falsy(n.test)) is not None:
            skipped = [n.body if falsy else n.orelse]
        elif isinstance(n, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            # (`[check() for _ in range(0)]`: a comprehension over nothing evaluates none of what it would make)
            for i, gen in enumerate(n.generators):
                if _empty(gen.iter):
                    skipped = [*gen.ifs, *(x for g in n.generators[i + 1:] for x in (g.iter, *g.ifs)),
                               *((n.key, n.value) if isinstance(n, ast.DictComp) else (n.elt,))]
                    break
        out.update(id(x) for part in skipped for x in ast.walk(part))
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    while True:  # (a def named only from another unnamed one is unnamed too)
        unnamed = [d for d in ast.walk(fn) if d is not fn and id(d) not in out and isinstance(d, _DEFS)
                   and not _named(fn, d, out, parents)]
        if not unnamed:
            return out
        out.update(id(n) for d in unnamed for n in ast.walk(d))


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _named(fn: ast.AST, d: ast.AST, out: set[int], parents: dict[int, ast.AST] | None = None) -> bool:
    """Whether `fn` names `d` where what it names can run (by its name, outside `d` itself and its inert nodes:
    `_runs`), or `d` is a method of a class."""
    if any(d in getattr(c, "body", []) for c in ast.walk(fn) if isinstance(c, ast.ClassDef)):
        return True  # a method: its class named is enough (`Check().run()`, or a class pytest would not run)
    if getattr(d, "decorator_list", None):
        return True  # handed to its decorator (`@done.append`, `@request.addfinalizer`, `@bus.subscribe`)
    inside = {id(n) for n in ast.walk(d)}
    if isinstance(d, ast.Lambda):  # named by what it is bound to, or handed on (an argument, a return) or called
        bound = next((t for a in ast.walk(fn) if isinstance(a, ast.Assign) and a.value is d for t in a.targets), None)
        if bound is None:
            return not any(isinstance(s, ast.Expr) and s.value is d for s in ast.walk(fn))
        if not isinstance(bound, ast.Name):
            return True
        inside |= {id(bound)}
        name = bound.id
    else:
        name = getattr(d, "name", "")
    parents = parents if parents is not None else {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    return any(isinstance(n, ast.Name) and n.id == name and id(n) not in inside and id(n) not in out
               and isinstance(n.ctx, ast.Load) and _runs(fn, n, parents, out, set())
               or isinstance(n, ast.Attribute) and n.attr == name and id(n) not in out for n in ast.walk(fn))


# Calls that look at what they are given and never call it (`print(check)`, `_ = len([check])`).
_LOOKS = {"print", "id", "repr", "str", "len", "type", "isinstance", "callable", "bool", "hash", "dir", "vars",
          "hasattr", "format", "ascii"}
_THROUGH = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred, ast.IfExp, ast.BoolOp, ast.Subscript, ast.Attribute,
            ast.keyword, ast.NamedExpr)


def _runs(fn: ast.AST, node: ast.AST, parents: dict[int, ast.AST], out: set[int], seen: set[str], depth: int = 0) -> bool:
    """Whether what `node` evaluates to can still be run: called, handed to a call (but one of `_LOOKS`), returned,
    yielded, stored on an object, or bound to a name that is; through a list, a tuple, an attribute, a loop over
    it. Only mentioned (`check`, `_ = [check]`, `print(check)`, `del check`): no. What is not known: yes."""
    p = parents.get(id(node))
    if p is None or depth > 30:
        return True
    if isinstance(p, (ast.Expr, ast.Delete)):
        return False
    if isinstance(p, ast.Call) and node is not p.func and getattr(p.func, "id", None) in ("map", "filter"):
        return _runs(fn, p, parents, out, seen, depth + 1)  # (lazy: `map(check, [1])` calls nothing unless iterated)
    if isinstance(p, ast.Call):
        return node is p.func or getattr(p.func, "id", None) not in _LOOKS
    if isinstance(p, ast.keyword):  # (an argument by keyword: the call's)
        call = parents.get(id(p))
        return not isinstance(call, ast.Call) or getattr(call.func, "id", None) not in _LOOKS
    if isinstance(p, _THROUGH) and not (isinstance(p, ast.Subscript) and node is not p.value):
        return _runs(fn, p, parents, out, seen, depth + 1)
    targets: list[ast.expr] = []
    if isinstance(p, (ast.Assign, ast.AnnAssign)) and node is p.value:
        targets = p.targets if isinstance(p, ast.Assign) else [p.target]
    elif isinstance(p, (ast.For, ast.AsyncFor, ast.comprehension)) and node is p.iter:
        targets = [p.target]
    else:
        return True
    if not all(isinstance(t, ast.Name) for t in targets):
        return True  # (stored on an object, or unpacked: kept where it can run)
    names = {t.id for t in targets if isinstance(t, ast.Name)} - seen  # type: ignore[union-attr]
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and id(n) not in out
               and _runs(fn, n, parents, out, seen | names, depth + 1) for n in ast.walk(fn))
