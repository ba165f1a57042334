"""An expected value changed to what the code returns now (`expected-to-actual`, docs/own-suite.md), found by
effect: the sealed test fails at the stop, the agent changed it, and a literal it changed now holds the value the
product gave in that failure (pytest's `assert GOT == EXPECTED` parsed by `ast`) where it held the expected value.

Read only when a sealed test fails in a test file the agent changed; the other weakenings are `seal.loosened`'s.
"""

from __future__ import annotations

import ast
import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NONE = object()


def _literal(node: ast.AST) -> Any:
    """The value a literal stands for, or arithmetic on number literals (`2 - 3`: the second run's reading,
    `hidden.answers`), else _NONE."""
    try:
        return ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    from donegate.hidden.answers import _answer_arith

    try:
        return _answer_arith(node)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        return _NONE


def _pairs(a: ast.AST, b: ast.AST, out: list[tuple[Any, Any]]) -> None:
    """The (sealed, current) values of the literals the current function puts where the sealed one had another
    (each a literal in both, at the same place of the same tree; a container's elements too): a statement or
    argument added or removed pairs nothing, so a check added beside the sealed ones changes no expected value."""
    if ast.dump(a) == ast.dump(b):
        return
    x, y = _literal(a), _literal(b)
    if x is not _NONE and y is not _NONE:
        out.append((x, y))
        if isinstance(a, (ast.Tuple, ast.List)) and isinstance(b, type(a)) and len(a.elts) == len(b.elts):
            for e, f in zip(a.elts, b.elts, strict=True):
                _pairs(e, f, out)
        return
    if type(a) is not type(b):
        return
    if isinstance(a, ast.Compare) and isinstance(b, ast.Compare) and len(a.ops) == len(b.ops) == 1:
        _pairs(a.left, b.comparators[0], out)  # the sides swapped (`x == 5` made `-1 == x`): paired across too
        _pairs(a.comparators[0], b.left, out)
    import difflib

    for field in a._fields:
        p, q = getattr(a, field, None), getattr(b, field, None)
        if isinstance(p, ast.AST) and isinstance(q, ast.AST):
            _pairs(p, q, out)
        elif isinstance(p, list) and isinstance(q, list) and all(isinstance(n, ast.AST) for n in p + q):
            match = difflib.SequenceMatcher(None, [ast.dump(n) for n in p], [ast.dump(n) for n in q], autojunk=False)
            for tag, i1, i2, j1, j2 in match.get_opcodes():
                if tag == "replace":
                    for m, n in zip(p[i1:i2], q[j1:j2], strict=False):
                        _pairs(m, n, out)


def _function(text: str | None, test: str) -> ast.AST | None:
    """The test's function (`name` or `Class::name`) in a test file's text, each name of a constant the module (or
    its class) assigns once at its top replaced by the constant's expression: an expected value the agent changed
    where the test reads it (`WANT = 5`, `CASES = [...]`) is changed in the test."""
    body = _parsed(text)
    if body is None:
        return None
    consts = _constants(body)
    *classes, name = test.split("::")
    for cls in classes:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == cls), [])
        consts.update(_constants(body))
    fn = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if fn is None or not consts:
        return fn
    import copy

    fn = copy.deepcopy(fn)  # (the parsed file is kept for the stop's other failing tests)

    class Constants(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return consts.get(node.id, node) if isinstance(node.ctx, ast.Load) else node

    return Constants().visit(fn)


@functools.lru_cache(maxsize=4)
def _parsed(text: str | None) -> list[ast.stmt] | None:
    """A test file's statements, parsed once a stop however many of its tests failed."""
    try:
        return ast.parse(text).body if text else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _constants(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """{name: expression} of the names a module's or class's top assigns once (a name assigned twice is left out)."""
    seen: dict[str, list[ast.expr]] = {}
    for n in body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(n.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _compared(message: str) -> tuple[tuple[Any, str], tuple[Any, str]] | None:
    """The two sides of the failed equality in a test's failure, parsed: pytest's `assert -1 == 5` (its first
    `assert` line), or unittest's `AssertionError: -1 != 5` (`assertEqual`'s, `Lists differ: ...` too). Each side:
    (its value, or _NONE for no literal; the repr shown). None for another operator or no such line."""
    for line in message.splitlines():
        line = line.strip()
        unittest = line.startswith("AssertionError: ") and not line.startswith("AssertionError: assert ")
        line = re.sub(r"^\w+ differ: ", "", line.removeprefix("AssertionError: ")) if unittest else \
            line.removeprefix("AssertionError: ")
        if not unittest and not line.startswith("assert "):
            continue
        try:
            node = ast.parse(line if not unittest else f"assert {line}").body[0]
        except (SyntaxError, ValueError, RecursionError):
            node = None
        t = node.test if isinstance(node, ast.Assert) else None
        op = ast.NotEq if unittest else ast.Eq
        if not isinstance(t, ast.Compare) or len(t.ops) != 1 or not isinstance(t.ops[0], op):
            if unittest:  # an assert's own message (`assert x == 5, "why"`): pytest's line comes after it
                continue
            return None
        sides = [(_literal(n), ast.get_source_segment(line if not unittest else f"assert {line}", n) or "")
                 for n in (t.left, t.comparators[0])]
        return sides[0], sides[1]
    return None


def _shows(value: Any, side: tuple[Any, str]) -> bool:
    """`value` is what pytest showed as `side`: the same literal, or a repr pytest shortened (`'abc...xyz'`,
    `[0, 1, 2, 3, 4, 5, ...]`) that pytest's own repr of `value` gives at that length."""
    got, text = side
    if "..." not in text:
        return got is not _NONE and _same(value, got)
    from _pytest._io.saferepr import saferepr  # (only here: a sealed test the agent changed fails)

    return any(saferepr(value, maxsize=m) == text for m in (len(text), 240))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def to_actual(sealed: str | None, current: str | None, tid: str, message: str) -> dict[str, str] | None:
    """`expected-to-actual`, found by effect: the sealed test `tid` failed at this stop with `message`, the agent
    changed that test (or a constant of its file it reads), and a literal it changed is now the value the product
    gave in that failure, where it was the value the test expected. An expected value rewritten to an equal
    expression (`4` to `2 + 2`: the sealed test does not fail), changed to a value the product does not give, or a
    check added beside it, is no finding."""
    test = tid.split("::", 1)[1].split("[", 1)[0] if "::" in tid else ""
    compared = _compared(message)
    old, new = (_function(sealed, test), _function(current, test)) if compared is not None else (None, None)
    if compared is None or old is None or new is None:
        return None
    pairs: list[tuple[Any, Any]] = []
    _pairs(old, new, pairs)  # type: ignore[arg-type]
    for was, now in pairs:
        for expected, got in (compared, compared[::-1]):
            if not _same(was, now) and _shows(was, expected) and _shows(now, got):
                return {"test": tid, "rule": "expected-to-actual", "what": f"its expected value {_shown(was)} was "
                        f"changed to {_shown(now)}, what the code returns now"}
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
