"""What a test checks, by its syntax (`ast`, never a grep): the seal keeps each sealed test's shape, a stop compares
the repository's current test files with it and names what was weakened (docs/own-suite.md).

A shape per test function: its source's digest (changed or not), its asserts (how many, and each one's kind: an
equality, a comparison, a truthiness, `in`, an approx with its tolerance, a `raises` with its exception), the
skip/skipif/xfail marks and calls it holds, and how many parametrized cases it has. A weakening is a test deleted
or renamed away, a skip or xfail added, fewer or looser asserts, fewer cases. Edits that keep or strengthen what a
test checks (an assert added, a case added, a rename of a helper) are no finding.
"""

from __future__ import annotations

import ast

from donegate.core.fsafe import sha256 as _sha256
from donegate.seal import bounds, calls, collect, dead

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What a shape holds, by version: a seal keeps it beside the shapes (`shape_rules`); a stop reads the shapes of a store
# of other rules again from its sealed text (`gate.own_changed.sealed_shapes`). 2: the helpers a test calls read with it
# (`seal.calls`, stop 53); 3: an assert that can never fail the test not counted (`seal.dead`); 4: a module's or
# class's skip by a call, an alias, `__test__` or an autouse fixture, a test unbound (`seal.collect`); 5: the raises
# that check the message (`match`); 6: `abs(a - b) < C` read as an approx (its tolerance taken at the expected value),
# an assert in a function or class the test defines and never names not counted, a skip in a set-up (`setUp`,
# `setUpClass`, `setup_module`); 7: an equality with `mock.ANY` read as a truthiness, unittest's assertion methods a
# class replaced not counted, an assert under a condition known false (`1 == 2`, `TYPE_CHECKING`), in a loop over an
# empty literal, in an expression's part never evaluated (`False and ...`) or an unnamed lambda not counted, a name
# the module imported then rebound (`add = lambda a, b: 5`) read as a mark of the tests that read it; 8: an attribute
# of the project's own module the test patches and then calls (`monkeypatch.setattr(calc, "add", ...)`, `mock.patch`)
# read as a mark of it; 9: an assert under a guard false on the project's interpreter (`sys.version_info < (3, 0)`,
# `sys.platform == 'win32'`), in a loop over an empty range (`range(0)`, `list()`) or a comprehension over one, in a
# function only mentioned (`_ = [check]`, `print(check)`, `map(check, ...)` never iterated) or after an `if` whose
# branch that runs returns not counted; `assertLess(abs(got - want), C)` and `lo < got < hi` read as approxes; the
# product rebound under a block, through `globals()`, `exec`, `global`, `setattr` of the module or `add.__code__`,
# and a patch of it the module makes outside its tests, read as marks; 10: guards on `sys.maxsize`,
# `sys.implementation.name`, a number the module names once (`LIMIT = 1e9`) read as its value, names built of
# literals (`'add' + ''`) and an `exec` of text not known read as binding. Raise it when `shape_of` reads a test otherwise.
RULES = 10

# pytest's and unittest's ways to skip a test or expect it to fail (`pytest.mark.skip`, `pytest.importorskip(...)`,
# `unittest.skipIf`, `self.skipTest(...)`, `raise unittest.SkipTest`).
SKIPS = {"skip", "skipif", "xfail", "importorskip", "skipIf", "skipUnless", "expectedFailure", "skipTest", "SkipTest"}


def _marks(node: ast.AST) -> list[str]:
    """The skip/skipif/xfail marks of a decorator list or calls in a body (`pytest.mark.skip`, `pytest.skip(...)`),
    by attribute or by a name imported alone (`from unittest import skipIf`) that is called or decorates."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in SKIPS:
            out.append(sub.attr)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in SKIPS:
            out.append(sub.func.id)
        elif isinstance(sub, ast.Call) and getattr(sub.func, "id", "") == "getattr" and len(sub.args) > 1 \
                and isinstance(sub.args[1], ast.Constant) and sub.args[1].value in SKIPS:  # getattr(pytest.mark, 'skip')
            out.append(str(sub.args[1].value))
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out += [d.id for d in sub.decorator_list if isinstance(d, ast.Name) and d.id in SKIPS]
    return sorted(out)


def _cases(fn: ast.AST, lists: dict[str, ast.expr] | None = None) -> int:
    """Parametrized cases: the product of the lengths of literal argvalues lists (1 without parametrize), a list
    the module names once at its top (`CASES = [...]`, in `lists`) read where the decorator names it."""
    n = 1
    for dec in getattr(fn, "decorator_list", []):
        if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize":
            values = dec.args[1] if len(dec.args) > 1 else next((k.value for k in dec.keywords if k.arg == "argvalues"), None)
            if isinstance(values, ast.Name) and lists:
                values = lists.get(values.id, values)
            if isinstance(values, (ast.List, ast.Tuple, ast.Set)):
                n *= max(1, len(values.elts))
    return n


def _assert_kind(node: ast.Assert, local: dict[str, ast.expr] | None = None) -> str:
    """The assert's kind; `local`: the test's names assigned once, read as their expression where a side is one
    (`want = add(2, 3)` then `add(2, 3) == want` holds whatever the code does)."""
    t = node.test

    def side(n: ast.expr) -> str:
        return ast.dump(local.get(n.id, n) if local and isinstance(n, ast.Name) else n)
    if isinstance(t, ast.Compare) and len(t.ops) > 1 and all(isinstance(o, ast.Eq) for o in t.ops):
        return "eq"  # `a == b == 5`: an equality each
    if isinstance(t, ast.Compare) and (bound := bounds.between(t)) is not None:  # `0.3 - 1e-9 < got < 0.3 + 1e-9`
        return bound
    if isinstance(t, ast.Compare) and len(t.ops) == 1:
        op = type(t.ops[0]).__name__
        right = t.comparators[0]
        if side(t.left) == side(right) or (isinstance(t.left, ast.Constant) and isinstance(right, ast.Constant)) \
                or _anything(t.left) or _anything(right):
            return "truth"  # `x == x`, `5 == 5`, `x == mock.ANY`: it holds whatever the code does
        if isinstance(right, ast.Call) and getattr(right.func, "attr", getattr(right.func, "id", "")) == "approx":
            given = [f"{k}={_shown(v)}" for k, v in zip(("rel", "abs"), right.args[1:3], strict=False)]  # by position
            return "approx:" + ",".join(sorted([f"{k.arg}={_shown(k.value)}" if k.arg else ast.unparse(k)
                                                for k in right.keywords] + given + _at(right.args[:1])))
        if (bound := _within(t)) is not None:  # `abs(got - want) < 1e-9`: an approx of that absolute tolerance
            return bound
        return {"Eq": "eq", "Is": "eq", "NotEq": "ne", "IsNot": "ne", "In": "in", "NotIn": "in"}.get(op, "cmp")
    return "truth"


def _shown(node: ast.expr) -> str:
    """A tolerance as its number where it is known (`TOL`, a number the module names once: `dead.FLAGS`), else its text."""
    got = dead.value(node)
    return repr(float(got)) if isinstance(got, (int, float)) and not isinstance(got, bool) and not isinstance(
        node, ast.Constant) else ast.unparse(node)


def _anything(node: ast.expr) -> bool:
    """`unittest.mock.ANY` (`ANY`, `mock.ANY`): equal to anything."""
    return getattr(node, "id", None) == "ANY" or getattr(node, "attr", None) == "ANY"


def _at(values: list[ast.expr]) -> list[str]:
    """`at=X` for the first number literal of `values`: the expected value an approx's tolerance is taken at."""
    for v in values:
        if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant):
            v = v.operand
        if isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
            return [f"at={abs(v.value)!r}"]
    return []


def _within(t: ast.Compare) -> str | None:
    """`abs(a - b) < C` (`<=`, or `C > abs(a - b)`) as the approx kind it stands for (`approx:abs=C,at=b`)."""
    op, left, right = t.ops[0], t.left, t.comparators[0]
    if isinstance(op, (ast.Gt, ast.GtE)):
        left, right = right, left
    elif not isinstance(op, (ast.Lt, ast.LtE)):
        return None
    if not (isinstance(left, ast.Call) and getattr(left.func, "id", "") == "abs" and len(left.args) == 1
            and isinstance(left.args[0], ast.BinOp) and isinstance(left.args[0].op, ast.Sub)):
        return None
    diff = left.args[0]
    return "approx:" + ",".join(sorted([f"abs={_shown(right)}"] + _at([diff.right, diff.left])))


STRENGTH = {"eq": 3, "ne": 1, "cmp": 2, "in": 1, "truth": 0}
# unittest's assertion methods (`self.assertEqual(...)`), each as the `assert` it stands for.
UNITTEST = {**dict.fromkeys(("assertEqual", "assertEquals", "assertListEqual", "assertDictEqual", "assertTupleEqual",
                             "assertSetEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertCountEqual",
                             "assertIs", "assertIsNone", "assertRegex", "assertDictContainsSubset"), "eq"),
            **dict.fromkeys(("assertNotEqual", "assertNotEquals", "assertIsNot", "assertNotRegex"), "ne"),
            **dict.fromkeys(("assertIn", "assertNotIn"), "in"),
            **dict.fromkeys(("assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual"), "cmp"),
            **dict.fromkeys(("assertTrue", "assertFalse", "assert_", "assertIsNotNone", "assertIsInstance",
                             "assertNotIsInstance"), "truth")}
UNITTEST_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")


def _unittest_kind(call: ast.Call) -> str | None:
    name = getattr(call.func, "attr", "")
    if name in ("assertAlmostEqual", "assertAlmostEquals"):  # its tolerance as an approx's (`places`, `delta`)
        given = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg in ("places", "delta")}
        if len(call.args) > 2:
            given["places"] = ast.unparse(call.args[2])
        return "approx:" + ",".join(f"{k}={v}" for k, v in sorted((given or {"places": "7"}).items()))
    if UNITTEST.get(name) == "eq" and any(_anything(a) for a in call.args[:2]):
        return "truth"  # `assertEqual(got, mock.ANY)`
    if name in ("assertLess", "assertLessEqual", "assertGreater", "assertGreaterEqual") and len(call.args) >= 2:
        op = {"assertLess": ast.Lt, "assertLessEqual": ast.LtE, "assertGreater": ast.Gt, "assertGreaterEqual": ast.GtE}[name]
        within = _within(ast.Compare(left=call.args[0], ops=[op()], comparators=[call.args[1]]))
        if within is not None:  # `assertLess(abs(got - want), 1e-9)`: an approx, as `abs(got - want) < 1e-9` is
            return within
    return UNITTEST.get(name) if isinstance(call.func, ast.Attribute) else None


def _raises(nodes: list[ast.AST]) -> list[tuple[str, bool]]:
    """(the exception, whether it also checks the message: `match=`, `assertRaisesRegex`) of each `raises`."""
    out = []
    for sub in nodes:
        if isinstance(sub, ast.Call) and getattr(sub.func, "attr", "") in UNITTEST_RAISES and sub.args:
            out.append((ast.unparse(sub.args[0]), any(k.arg == "match" for k in sub.keywords)
                        or sub.func.attr.startswith("assertRaisesRegex")))  # type: ignore[attr-defined]
    return out


def shape_of(fn: ast.AST, lists: dict[str, ast.expr] | None = None, helpers: dict[str, ast.AST] | None = None,
             methods: dict[str, ast.AST] | None = None, rebound: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """The test's shape, the helpers it calls (`calls.reached`) read as its own body: their source in its digest,
    their asserts, skips and raises with its; `rebound`: unittest's assertion methods its class replaced (not
    counted)."""
    read = [_part(part, rebound) for part in [fn, *calls.reached(fn, helpers or {}, methods)]]
    raised = [r for got in read for r in got[2]]
    return {"src": _sha256("".join(got[3] for got in read).encode()).hexdigest()[:16],
            "asserts": sorted([a for got in read for a in got[0]] + [k for got in read for k in got[1]]),
            "skips": sorted(m for got in read for m in got[4]), "cases": _cases(fn, lists),
            "raises": sorted(r for r, _ in raised), "match": sorted(r for r, matched in raised if matched),
            "bounds": sorted(b for got in read for b in got[5])}


# {(id(part), rebound): (part, what it adds)} while one test file is read (`tests_of`): a helper is a part of every
# test that calls it, read once. Parts are whole functions, apart from each other (a test, the helpers it reaches).
_PARTS: dict[tuple[int, frozenset[str]], tuple[ast.AST, tuple[Any, ...]]] | None = None


def _part(part: ast.AST, rebound: set[str] | frozenset[str]) -> tuple[Any, ...]:
    """What one part of a test adds to its shape: (assert kinds, unittest assertion kinds, raises, its dump, marks,
    bounds), of its nodes that can fail it (`dead.inert`: never reached, or their failure swallowed, left out)."""
    key = (id(part), frozenset(rebound))
    got = _PARTS.get(key) if _PARTS is not None else None
    if got is None or got[0] is not part:
        gone = dead.inert(part)
        live = [n for n in ast.walk(part) if id(n) not in gone]
        local = _once(getattr(part, "body", []))
        got = (part, ([_assert_kind(a, local) for a in live if isinstance(a, ast.Assert)],
                      [k for c in live if isinstance(c, ast.Call) and getattr(c.func, "attr", "") not in rebound
                       and (k := _unittest_kind(c)) is not None], _raises(live), ast.dump(part), _marks(part),
                      [b for n in live if (b := bounds.bound(n)) is not None]))
        if _PARTS is not None:
            _PARTS[key] = got
    return got[1]



def _rebound(cls: ast.ClassDef, module: list[ast.stmt]) -> set[str]:
    """unittest's assertion methods a test class replaces with what checks nothing: assigned in its body
    (`assertEqual = lambda *a: None`), on `self`/`cls` or a class at the module's top (`TestCase.assertEqual = ...`),
    or defined without an assert, a raise or another assertion call in its body (an override that still checks is
    no replacement)."""
    out = set()
    for n in [*ast.walk(cls), *module]:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            name = t.id if isinstance(t, ast.Name) and n in cls.body else t.attr if isinstance(t, ast.Attribute) else ""
            if name in UNITTEST or name == "fail":
                out.add(name)
    for n in cls.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in UNITTEST and not any(
                isinstance(x, (ast.Assert, ast.Raise)) or isinstance(x, ast.Call) and "assert" in getattr(
                    x.func, "attr", getattr(x.func, "id", "")).lower() for x in ast.walk(n)):
            out.add(n.name)
    return out


def _once(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """{name: expression} a block's top assigns once (a name assigned twice, `x += ...` too, is left out)."""
    seen: dict[str, list[ast.expr | None]] = {}
    for n in body:
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(n.value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _lists(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """{name: list, tuple or set} a module's top assigns once."""
    return {k: v for k, v in _once(body).items() if isinstance(v, (ast.List, ast.Tuple, ast.Set))}


# {(text, its conftests, the interpreter its guards are read for): (its shapes, the `dead.FLAGS` it set)}: a stop reads
# each changed test file two or three times (`own_changed.changed_test_ids`, `findings`, a test moved), ~0.17 CPU-s
# each for a 38 KB file. What is handed out is a copy; a file that does not parse sets no FLAGS (`_NO_FLAGS`).
_READ: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_NO_FLAGS = object()


def tests_of(text: str, conftests: list[str] | None = None) -> dict[str, dict[str, Any]] | None:
    """{test name (Class::name for a method): shape} of one test file; None when it does not parse. `conftests`:
    the texts of its conftest.py files, nearest first (`calls.chain`), for the helpers it imports from them."""
    key = (text, tuple(conftests or ()), dead.PYTHON, dead.VERSION_INFO)
    got = _READ.get(key)
    if got is None:
        global _PARTS
        dead.INERT, _PARTS = {}, {}
        try:
            shapes = _tests_of(text, conftests)
        finally:
            dead.INERT, _PARTS = None, None
        got = (shapes, dead.FLAGS if shapes is not None else _NO_FLAGS)
        if len(_READ) >= 64:
            _READ.pop(next(iter(_READ)))
        _READ[key] = got
    if isinstance(got[1], dict):
        dead.FLAGS = got[1]
    return None if got[0] is None else {t: {k: list(v) if isinstance(v, list) else v for k, v in shape.items()}
                                        for t, shape in got[0].items()}


def _tests_of(text: str, conftests: list[str] | None) -> dict[str, dict[str, Any]] | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    # (a guard the module names once at its top, `PY2 = sys.version_info[0] == 2`, read where a test tests it)
    # (and a number it names once, `LIMIT = 1e9`, read where a bound compares with it)
    dead.FLAGS = {k: v for k, v in _once(tree.body).items() if any(w in ast.unparse(v) for w in dead.GUARDS)
                  or isinstance(v, (ast.Constant, ast.UnaryOp, ast.BinOp)) and isinstance(dead.value(v), (int, float))}
    helpers = {**calls.from_conftest(tree, conftests or []), **calls.defined(tree.body)}
    out: dict[str, dict[str, Any]] = {}
    aliases = {k: m for k, v in _once(tree.body).items() if (m := _marks(v))}  # `later = pytest.mark.skip`
    module_skip = collect.skips(tree.body, _marks, aliases)
    lists = _lists(tree.body)
    swapped = collect.replaced(tree.body)  # `from calc import add`, then `add = lambda a, b: 5`
    mods = collect.modules(tree.body)  # the project's modules it imports: a patch of what it then calls (`patched`)
    outside = collect.patches(tree.body, mods)  # (made at its top, in a fixture or a set-up: for each test)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out[node.name] = shape_of(node, lists, helpers)
            out[node.name]["skips"] = sorted(out[node.name]["skips"] + collect.aliased(node, aliases)
                                             + collect.uses(node, swapped) + collect.patched(node, mods, outside))
        elif isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or any(  # unittest's, by any name
                getattr(b, "attr", getattr(b, "id", "")).endswith("TestCase") for b in node.bases)):
            class_marks = [m for d in node.decorator_list for m in _marks(d)] + collect.aliased(node, aliases) + \
                collect.skips(node.body, _marks, aliases)  # its `pytestmark`, `__test__`, autouse fixtures too
            rebound = _rebound(node, tree.body)
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                    found = shape_of(sub, lists, helpers, calls.defined(node.body), rebound)
                    found["skips"] = sorted(found["skips"] + class_marks + collect.aliased(sub, aliases)
                                            + collect.uses(sub, swapped) + collect.patched(sub, mods, outside))
                    out[f"{node.name}::{sub.name}"] = found
    for name, marks in collect.per_test(tree.body).items():  # `test_add.__test__ = False`
        if name in out:
            out[name]["skips"] = sorted(out[name]["skips"] + marks)
    gone = collect.unbound(tree.body)  # `del test_add`, `test_add = None`: pytest never sees it
    out = {k: v for k, v in out.items() if k.split("::", 1)[0] not in gone}
    for found in out.values():
        found["skips"] = sorted(found["skips"] + module_skip)
    return out


def shapes(files: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    """{test file: {test: shape}} of the sealed files (`donegate.seal.own` pack's `files`)."""
    out = {}
    conftests = {n: b.get("text") for n, b in files.items() if n.rsplit("/", 1)[-1] == "conftest.py"}
    for name, body in files.items():
        base = name.rsplit("/", 1)[-1]
        if name.endswith(".py") and "text" in body and base != "conftest.py" and (base.startswith("test") or base.endswith("_test.py")):
            found = tests_of(body["text"], calls.chain(name, conftests))
            if found is not None:
                out[name] = found
    return out


def findings(sealed: dict[str, dict[str, Any]], current: dict[str, str | None], passing: set[str],
             elsewhere: dict[str, str | None] | None = None,
             conftests: dict[str, str | None] | None = None) -> list[dict[str, str]]:
    """What the current test files weaken against the sealed shapes, for the tests that passed at the seal:
    `current` is {test file: its text now (None: gone)} for the sealed test files that changed, `elsewhere` the
    same of the test files the agent added (a sealed test moved there as it was is not deleted), `conftests` the
    same of the conftest.py files (the helpers a test imports from them)."""
    out = []
    moved: set[str] | None = None
    for name, text in current.items():
        before = sealed.get(name)
        if before is None:
            continue
        now = tests_of(text, calls.chain(name, conftests or {})) if text is not None else {}
        if now is None:
            continue  # it does not parse: the current run names that
        for test, old in before.items():
            tid = f"{name}::{test}"
            if not any(p == tid or p.startswith(tid + "[") for p in passing):
                continue
            new = now.get(test)
            if new is None and moved is None:  # each test function's source now, read once
                moved = {shape["src"] for n, t in (*current.items(), *(elsewhere or {}).items()) if t is not None
                         for shape in (tests_of(t, calls.chain(n, conftests or {})) or {}).values()}
            if new is None and old["src"] in moved:  # type: ignore[operator]
                continue  # moved to another test file as it was: it still runs there
            if new is None:
                out.append({"test": tid, "rule": "deleted", "what": "the test was deleted or renamed away"
                            if text is not None else "its file was deleted"})
                continue
            if new["src"] == old["src"] and new["skips"] == old["skips"] and new["cases"] == old["cases"] \
                    and new["asserts"] == old["asserts"]:
                # (a class's or module's mark, a module's list of cases, its class's assertion methods replaced: not
                # in the test's source)
                continue
            added = sorted(set(new["skips"]) - set(old["skips"]))
            if added:
                out.append({"test": tid, "rule": "skipped", "what": f"{'/'.join(added)} added"})
            if len(new["asserts"]) < len(old["asserts"]):
                out.append({"test": tid, "rule": "assert-removed",
                            "what": f"{len(old['asserts'])} assert(s) at the seal, {len(new['asserts'])} now"})
            elif len(new["raises"]) < len(old["raises"]):
                out.append({"test": tid, "rule": "assert-removed", "what": f"raises({', '.join(old['raises'])}) at the "
                            f"seal, {'raises(' + ', '.join(new['raises']) + ')' if new['raises'] else 'none'} now"})
            elif _looser(old["asserts"], new["asserts"]):
                out.append({"test": tid, "rule": "assert-loosened", "what": f"asserts were {', '.join(old['asserts'])}; "
                            f"now {', '.join(new['asserts'])}"})
            elif wider := bounds.widened(old.get("bounds", []), new.get("bounds", [])):
                out.append({"test": tid, "rule": "assert-loosened", "what": wider})
            if new["cases"] < old["cases"]:
                out.append({"test": tid, "rule": "fewer-cases", "what": f"{old['cases']} parametrized cases at the seal, {new['cases']} now"})
            if old["raises"] and set(new["raises"]) != set(old["raises"]) and _broader(old["raises"], new["raises"]):
                out.append({"test": tid, "rule": "raises-broadened", "what": f"raises({', '.join(old['raises'])}) became "
                            f"raises({', '.join(new['raises'])})"})
            elif lost := sorted({r for r in old.get("match", []) if r in new["raises"]
                                 and old["match"].count(r) > new.get("match", []).count(r)}):
                out.append({"test": tid, "rule": "raises-broadened", "what": f"raises({', '.join(lost)}) lost its match= "
                            "(any message is taken now)"})
    return out


def _exceptions(expr: str) -> list[type] | None:
    """The built-in exception classes a `raises` argument names (`ValueError`, `(KeyError, TypeError)`); None when
    it names another (the project's: its hierarchy is not known without importing it)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    import builtins

    out = []
    for n in node.elts if isinstance(node, ast.Tuple) else [node]:
        name = n.attr if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "builtins" else getattr(n, "id", "")
        found = getattr(builtins, name, None)
        if not (isinstance(found, type) and issubclass(found, BaseException)):
            return None
        out.append(found)
    return out


def _broader(old: list[str], new: list[str]) -> bool:
    """A `raises` that now takes what the sealed one did not: `Exception` or `BaseException`, a built-in base of
    the class it named (`ZeroDivisionError` to `ArithmeticError`), or more built-in classes than it named. Another
    class in its place (`ValueError` for `KeyError`) takes no more: the sealed copy still runs as it was."""
    if any(r in ("Exception", "BaseException") for r in new):
        return True
    was = {c for r in old if r not in new for c in _exceptions(r) or []}
    now = {c for r in new if r not in old for c in _exceptions(r) or []}
    return bool(was) and (was < now or any(issubclass(w, c) and w is not c for w in was for c in now))


def _looser(old: list[str], new: list[str]) -> bool:
    """The asserts, matched strongest to strongest, with one now weaker than it was (an equality made truthiness or
    `in`), or an approx's tolerance made wider. A check added beside the sealed ones (an `!=`, a truthiness) takes
    nothing from them, and a tolerance made narrower is no finding."""
    def strength(kind: str) -> int:
        return 2 if kind.startswith("approx:") else STRENGTH.get(kind, 1)

    a, b = sorted(old, key=strength, reverse=True), sorted(new, key=strength, reverse=True)
    if any(strength(y) < strength(x) for x, y in zip(a, b, strict=False)):
        return True
    was = [k for k in old if k.startswith("approx:")]
    now = [k for k in new if k.startswith("approx:")]
    if len(now) < len(was) and new.count("cmp") > old.count("cmp"):
        return True  # an approx made a one-sided bound (`approx(0.3)` to `< 1e9`): it takes what lies past the value
    removed = [k for k in was if k not in now]
    return bool(removed) and any(all(_wider(k, r) for r in removed) for k in now if k not in was)


def _tolerance(kind: str) -> tuple[float, float] | None:
    """(rel, abs) an approx kind (`approx:abs=0.1,rel=0.01`) compares with, as pytest does: neither given, its
    defaults; `abs` alone, no relative tolerance. None when a value is no number literal."""
    given: dict[str, float] = {}
    for part in filter(None, kind.removeprefix("approx:").split(",")):
        key, _, value = part.partition("=")
        try:
            given[key] = float(ast.literal_eval(value))
        except (ValueError, TypeError, SyntaxError, RecursionError):
            if key in ("rel", "abs", "places", "delta"):
                return None
    if "places" in given or "delta" in given:  # unittest's assertAlmostEqual: round(a - b, places) == 0
        return 0.0, given.get("delta", 0.5 * 10 ** -given.get("places", 7))
    if "rel" not in given and "abs" in given:
        return 0.0, given["abs"]
    return given.get("rel", 1e-6), given.get("abs", 1e-12)


def _wider(new: str, old: str) -> bool:
    """Whether `new` takes a value `old` refused: at the expected value either names (`at=`), pytest's tolerance
    there (the larger of `rel` times it and `abs`), else either part larger."""
    a, b = _tolerance(old), _tolerance(new)
    if a is None or b is None:
        return True
    at = _expected(old) if _expected(old) is not None else _expected(new)
    def more(x: float, y: float) -> bool:  # (beyond float rounding: 1e-6 * 100 is 9.999999999999999e-05)
        return x > y * (1 + 1e-9)

    if at is not None:
        return more(max(b[0] * at, b[1]), max(a[0] * at, a[1]))
    return more(b[0], a[0]) or more(b[1], a[1])


def _expected(kind: str) -> float | None:
    for part in kind.removeprefix("approx:").split(","):
        if part.startswith("at="):
            try:
                return float(part[3:])
            except ValueError:
                return None
    return None


def _plugins(node: ast.stmt) -> set[str]:
    """Each plugin a `pytest_plugins = ...` names, by name: one added can deselect or skip (the list as it was,
    reordered, is none)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    value = getattr(node, "value", None)
    if value is None or not any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
        return set()
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return {f"pytest_plugins {ast.unparse(i)}" for i in items}


def gained(sealed: dict[str, str | None], current: dict[str, str | None], read: Any, said: str,
           rule: str = "collection-hook") -> list[dict[str, str]]:
    """A `rule` finding for each file whose text now holds what `read` finds that its sealed text did not (a test
    module's hooks here, a conftest.py's in `seal.excluded`, unittest patched in `seal.faked`)."""
    out = []
    for name, text in sorted(current.items()):
        added = sorted(read(text) - read(sealed.get(name)))
        if added:
            out.append({"test": name, "rule": rule, "what": f"{', '.join(added)} {said}"})
    return out


def _module_hooks(text: str | None) -> set[str]:
    """What pytest reads of a test module besides its tests that can change what runs: `pytest_generate_tests` (the
    module's, or a test class's: a test given no cases is skipped) and each `pytest_plugins` entry."""
    try:
        tree = ast.parse(text or "")
    except SyntaxError:
        return set()  # it does not parse: the current run names that
    found = set()
    for node in tree.body:
        for sub in node.body if isinstance(node, ast.ClassDef) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == "pytest_generate_tests":
                found.add(sub.name + (f" in {node.name}" if isinstance(node, ast.ClassDef) else ""))
        found.update(_plugins(node))
    return found


def module_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """A sealed test module gaining a hook pytest reads from it (`_module_hooks`); `sealed`, `current`: {test file:
    its text at the seal, now (None: gone)}."""
    return gained(sealed, current, _module_hooks, "added to the test module")
