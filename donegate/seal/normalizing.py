"""An equality a sealed test checked, now checked with both sides passed through the same new call
(`loosened.findings`' `assert-loosened`, read apart from a test's shape): `normalized`."""

from __future__ import annotations

import ast

from donegate.seal.loosened import UNITTEST


# unittest's equality methods whose first two arguments are the two sides (`self.assertEqual(got, want)`).
_EQUALS = {k for k, v in UNITTEST.items() if v == "eq" and k not in ("assertIsNone", "assertRegex", "assertDictContainsSubset")}


def _equalities(fn: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """(left, right) of each equality an assert of `fn` (or a unittest assertion method) checks."""
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 \
                and isinstance(n.test.ops[0], ast.Eq):
            out.append((n.test.left, n.test.comparators[0]))
        elif isinstance(n, ast.Call) and getattr(n.func, "attr", "") in _EQUALS and len(n.args) >= 2:
            out.append((n.args[0], n.args[1]))
    return out


def _unwrapped(a: ast.expr, b: ast.expr) -> tuple[ast.expr, ast.expr, str] | None:
    """When both sides pass through the same call (`x.replace(' ', '')` and `y.replace(' ', '')`, `sorted(x)` and
    `sorted(y)`: the same method or function, the same other arguments): (inner a, inner b, the call shown)."""
    if not (isinstance(a, ast.Call) and isinstance(b, ast.Call)) \
            or [ast.dump(k) for k in a.keywords] != [ast.dump(k) for k in b.keywords]:
        return None
    fa, fb = a.func, b.func
    if isinstance(fa, ast.Attribute) and isinstance(fb, ast.Attribute) and fa.attr == fb.attr \
            and [ast.dump(x) for x in a.args] == [ast.dump(x) for x in b.args]:
        return fa.value, fb.value, f".{fa.attr}({', '.join(ast.unparse(x) for x in a.args)})"
    if ast.dump(fa) == ast.dump(fb) and len(a.args) == len(b.args) >= 1 \
            and [ast.dump(x) for x in a.args[1:]] == [ast.dump(x) for x in b.args[1:]]:
        return a.args[0], b.args[0], f"{ast.unparse(fa)}()"
    return None


def _functions(text: str | None) -> dict[str, ast.AST]:
    """{test name (Class::name for a method): function} of a test file's text ({} when it does not parse)."""
    try:
        tree = ast.parse(text or "")
    except SyntaxError:
        return {}
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            out.update((f"{node.name}::{s.name}", s) for s in node.body
                       if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name.startswith("test"))
    return out


def normalized(sealed: dict[str, str | None], current: dict[str, str | None], passing: set[str]) -> list[dict[str, str]]:
    """An equality the sealed test checked (`f(x) == expected`) now checked with both sides passed through the same
    new call (`f(x).replace(' ', '') == expected.replace(' ', '')`, `sorted(a) == sorted(b)`): it accepts what the
    sealed assert refused (`assert-loosened`). The sealed equality kept beside it, a call both sides had at the seal,
    or the sides rewritten otherwise is no finding. `sealed`, `current`: {test file: its text at the seal, now}."""
    out = []
    for name, text in sorted(current.items()):
        if text is None:
            continue
        before, now = _functions(sealed.get(name)), _functions(text)
        for test, fn in now.items():
            tid = f"{name}::{test}"
            if test not in before or not any(p == tid or p.startswith(tid + "[") for p in passing):
                continue
            was = {(ast.dump(a), ast.dump(b)) for a, b in _equalities(before[test])}
            was |= {(b, a) for a, b in was}
            equalities = _equalities(fn)
            here = {(ast.dump(a), ast.dump(b)) for a, b in equalities}
            for a, b in equalities:
                through, pair = [], (a, b)
                while (peeled := _unwrapped(*pair)) is not None and (ast.dump(pair[0]), ast.dump(pair[1])) not in was:
                    pair = peeled[:2]
                    through.append(peeled[2])
                key = (ast.dump(pair[0]), ast.dump(pair[1]))
                if through and key in was and key not in here and (key[1], key[0]) not in here:
                    out.append({"test": tid, "rule": "assert-loosened", "what": f"both sides of "
                                f"`{ast.unparse(pair[0])} == {ast.unparse(pair[1])}` now pass through "
                                f"{' then '.join(reversed(through))}"[:300]})
    return out
