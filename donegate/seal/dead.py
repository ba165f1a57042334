"""The parts of a test that can never fail it, by their syntax (`ast`): an assert kept in the text but never reached
(`if False:`, after a `return` or `raise` in its block) or whose failure is swallowed (a `try` whose handler takes an
AssertionError and does not raise, `with contextlib.suppress(AssertionError)`) checks nothing, so the weakening check
(`donegate.seal.loosened`) does not count it. The same assert reached, or re-raised (`except AssertionError: raise`),
still counts."""

from __future__ import annotations

import ast

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


def _falsy(test: ast.expr) -> bool | None:
    """A condition's falsity when it is known without running it, else None: a literal (`False`, `0`, `None`, `not
    True`, `[]`), a comparison of literals (`1 == 2`), `TYPE_CHECKING` (false when the tests run), `and`/`or` of
    those."""
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
               ast.Gt: operator.gt, ast.GtE: operator.ge}
        try:
            a, b = ast.literal_eval(test.left), ast.literal_eval(test.comparators[0])
            return not ops[type(test.ops[0])](a, b)
        except (ValueError, TypeError, SyntaxError, KeyError, MemoryError, RecursionError):
            return None
    try:
        return not ast.literal_eval(test)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _block(body: list[ast.stmt], out: set[int]) -> None:
    ended = False
    for stmt in body:
        if ended:
            out.update(id(n) for n in ast.walk(stmt))
            continue
        _stmt(stmt, out)
        ended = isinstance(stmt, _ENDS)


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
    if isinstance(stmt, (ast.For, ast.AsyncFor)) and _falsy(stmt.iter) is True:  # `for _ in []:` never runs its body
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


def inert(fn: ast.AST) -> set[int]:
    """The ids of the nodes of `fn`'s body that can never fail it (never reached, or their failure swallowed), a
    function or class it defines and never names after (`def check(): assert ...` not called) among them."""
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
        out.update(id(x) for part in skipped for x in ast.walk(part))
    while True:  # (a def named only from another unnamed one is unnamed too)
        unnamed = [d for d in ast.walk(fn) if d is not fn and id(d) not in out and isinstance(d, _DEFS)
                   and not _named(fn, d, out)]
        if not unnamed:
            return out
        out.update(id(n) for d in unnamed for n in ast.walk(d))


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _named(fn: ast.AST, d: ast.AST, out: set[int]) -> bool:
    """Whether `fn` names `d` (by its name, outside `d` itself and its inert nodes), or `d` is a method of a class."""
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
    return any(isinstance(n, ast.Name) and n.id == name and id(n) not in inside and id(n) not in out
               or isinstance(n, ast.Attribute) and n.attr == name and id(n) not in out for n in ast.walk(fn))
