"""unittest's comparisons in the tests' code: the assert methods the kit reads, one list (probed in both runs,
`unit_probes`, and held by the supervisor in the second, `answers.answer_holds`, with the aliases unittest had: 3.11
has them all, 3.12 dropped them, a name the TestCase lacks fails the test in both runs alike), and their rewrite; and
the rewrite of every `==`/`!=` in an assert (`rewrite_probes`, the first run's; `compare_probes`, the second's): what
the tests' code is made to ask the equality probe (`probe.make_probe`).

Sent before probe.py's source with the plugin, the second harness and the confined run's recipe (one namespace
each, `donegate.hidden.ship`, `pyc.Rewrite`), imported by the kit. Standard library only.
"""

if not globals().get("__package__"):  # sent to a run: `ast` at its top, as always
    import ast as _ast
else:  # imported by the kit: at its first use (`core.lazy`)
    from donegate.core.lazy import Lazy as _UnitLazy

    _ast = _UnitLazy("ast", globals(), "_ast")  # type: ignore[assignment]

UNIT_EQ = ("assertEqual", "assertEquals", "failUnlessEqual")  # self.assertEqual(a, b): a == b
UNIT_TRUE = ("assertTrue", "assert_", "failUnless")  # self.assertTrue(a == b)
UNIT_FALSE = ("assertFalse", "failIf")  # self.assertFalse(a != b)
UNIT_IN = ("assertIn",)  # self.assertIn(member, container): op "member" (not "in": the decoys' call, `_decoyed`)
UNIT_NOT_IN = ("assertNotIn",)  # op "not member"
UNIT_ALMOST = ("assertAlmostEqual", "assertAlmostEquals", "failUnlessAlmostEqual")  # op ("almost", places, delta)
UNIT_COUNT = ("assertCountEqual",)  # op "count": each side made a list first (unittest's own first step)
_UNIT_TEXT = {"member": "%r not found in %r", "not member": "%r unexpectedly found in %r", "count": "element counts of %r and %r differ"}


def unit_close(a, b, places, delta, abs=abs, round=round):  # noqa: A002 (the builtins as defined: no product's patch)
    """unittest's assertAlmostEqual on two builtin values: the probe's rule in both runs (`probe.make_probe`) and the
    supervisor's for a held one (`answers.answer_judge`)."""
    if a == b:
        return True
    diff = abs(a - b)
    return diff <= delta if delta is not None else round(diff, 7 if places is None else places) == 0


def _getattr_list(node, field):
    v = getattr(node, field, None)
    return v if isinstance(v, list) else None


def _decoyed(probe, a, b, op="in"):
    """`a in probe(a, b, 'in') or b in probe(b, a, 'in')`: whether either side, an object of the repository's, equals a
    decoy of the other, compared first (`make_probe`'s `decoys`: nothing to compare for a builtin value). The expected
    value stands on either side (`expected == product()` asks the product's `__eq__` too). Another `op` (("decoys",
    unittest's op): `decoys_for`) asks for the decoys of that comparison; a membership's member stands on the left."""
    def one(x, y):
        return _ast.Compare(_ast.Name(x, _ast.Load()), [_ast.In()], [_ast.Call(
            probe(), [_ast.Name(x, _ast.Load()), _ast.Name(y, _ast.Load()), _ast.Constant(op)], [])])
    return one(a, b) if op == ("decoys", "member") else _ast.BoolOp(_ast.Or(), [one(a, b), one(b, a)])


def _rule(node):
    """A literal number or None (absent) for assertAlmostEqual's places or delta, else ValueError (not probed)."""
    value = None if node is None else _ast.literal_eval(node)
    if value is not None and type(value) not in (int, float):
        raise ValueError("not a number")
    return value


def _unit_compare(stmt):
    """(left, right, operator, the call made again with two names for its sides, the method's name) of a statement that
    compares by unittest's assert methods on `self`, else None."""
    call = stmt.value if isinstance(stmt, _ast.Expr) else None
    if not (isinstance(call, _ast.Call) and isinstance(call.func, _ast.Attribute) and isinstance(call.func.value, _ast.Name)
            and call.func.value.id == "self") or any(isinstance(a, _ast.Starred) for a in call.args) \
            or any(k.arg in (None, "first", "second", "expr") for k in call.keywords):
        return None
    name, args, keywords = call.func.attr, call.args, call.keywords
    if name in UNIT_EQ and len(args) >= 2:
        return args[0], args[1], "==", lambda a, b: _ast.Call(call.func, [a, b, *args[2:]], keywords), name
    if name in UNIT_IN + UNIT_NOT_IN + UNIT_COUNT and len(args) >= 2 and not any(k.arg in ("member", "container") for k in keywords):
        op = "member" if name in UNIT_IN else "not member" if name in UNIT_NOT_IN else "count"
        return args[0], args[1], op, lambda a, b: _ast.Call(call.func, [a, b, *args[2:]], keywords), name
    if name in UNIT_ALMOST and len(args) >= 2:
        given = {k.arg: k.value for k in keywords}
        try:
            op = ("almost", _rule(args[2] if len(args) > 2 else given.get("places")),
                  _rule(args[4] if len(args) > 4 else given.get("delta")))
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None  # a tolerance computed at run time: the call alone, as before
        return args[0], args[1], op, lambda a, b: _ast.Call(call.func, [a, b, *args[2:]], keywords), name
    cmp = args[0] if name in UNIT_TRUE + UNIT_FALSE and args else None
    if isinstance(cmp, _ast.Compare) and len(cmp.ops) == 1 and \
            isinstance(cmp.ops[0], _ast.Eq if name in UNIT_TRUE else _ast.NotEq):
        return cmp.left, cmp.comparators[0], "==" if name in UNIT_TRUE else "!=", \
            lambda a, b: _ast.Call(call.func, [_ast.Compare(a, cmp.ops, [b]), *args[1:]], keywords), name
    return None


def _unit_steps(stmt, found, probe, decoys):
    """`stmt` (unittest's comparison `found`) as the statements that make it and probe it, each side evaluated once:
    `@py_assert0 = a; @py_assert1 = b; @py_assert2 = probe.unit(self.assertEqual)` (unittest's own method: a project's
    `assertEqual` with a tolerance of its own is its own to keep), [`@py_assert3 = @py_assert2 and (@py_assert0 in
    probe(@py_assert0, @py_assert1, 'in') or ...)`: the decoys, compared first (`decoys`, the second run)], the call on
    the two names (unless it equalled a decoy), then `if @py_assert2 and not probe(@py_assert0, @py_assert1, op,
    [@py_assert3,] result): raise AssertionError(...)` (the probe's answer is the comparison's: for `!=`, a true
    answer fails) and the names cleared, as pytest clears its own."""
    left, right, op, again, method = found
    names = [f"@py_assert{i}" for i in range(4 if decoys and op not in ("!=", "not member", "count") else 3)]

    def load(i):
        return _ast.Name(names[i], _ast.Load())

    def store(i, value):
        return _ast.Assign([_ast.Name(names[i], _ast.Store())], value)

    own = _ast.Call(_ast.Attribute(probe(), "unit", _ast.Load()), [
        _ast.Attribute(_ast.Name("self", _ast.Load()), method, _ast.Load())], [])
    if op == "count":  # a list of each side (unittest's first step): the probe reads the elements the call read
        left, right = (_ast.Call(_ast.Attribute(probe(), "listed", _ast.Load()), [side], []) for side in (left, right))
    out = [store(0, left), store(1, right), store(2, own)]
    if len(names) == 4:
        decoyed = _decoyed(probe, names[0], names[1], *(() if op == "==" else (("decoys", op),)))
        out.append(store(3, _ast.BoolOp(_ast.And(), [load(2), decoyed])))
    call = _ast.Expr(again(load(0), load(1)))
    # equal to a decoy: not compared again (a latch would fail the call), the probe says why (`make_probe`'s `first`)
    out.append(_ast.If(_ast.UnaryOp(_ast.Not(), load(3)), [call], []) if len(names) == 4 else call)
    said = _ast.Call(probe(), [load(0), load(1), _ast.Constant(op), *[load(i) for i in range(3, len(names))], _ast.Constant(op != "!=")], [])
    text = _ast.BinOp(_ast.Constant(_UNIT_TEXT.get(op, "%r != %r")), _ast.Mod(), _ast.Tuple([load(0), load(1)], _ast.Load()))
    out.append(_ast.If(_ast.BoolOp(_ast.And(), [load(2), _ast.UnaryOp(_ast.Not(), said) if op != "!=" else said]),
                       [_ast.Raise(_ast.Call(_ast.Name("AssertionError", _ast.Load()), [text], []))], []))
    out.append(_ast.Assign([_ast.Name(n, _ast.Store()) for n in names], _ast.Constant(None)))
    for s in out:  # the call's own line on every node made here (the sides keep theirs)
        for n in _ast.walk(s):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                n.lineno, n.col_offset = stmt.lineno, stmt.col_offset
                n.end_lineno, n.end_col_offset = stmt.end_lineno, stmt.end_col_offset
    return out


def unit_probes(tree, probe, decoys):
    """unittest's comparisons in a function (`_unit_compare`) probed as an assert's `==` is, in both runs: after the
    call, the probe answers again (`probe()` makes the expression that names it); with `decoys` (the second run), the
    decoys of the expected value first. A value that latches onto the first one it is compared with, or equals
    everything, is then seen as it is in an assert."""
    todo = [(tree, False)]
    while todo:
        node, inside = todo.pop()
        inside = inside or isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef))
        if isinstance(node, _ast.ClassDef):
            inside = False  # a class body's names are the class's
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stmts = _getattr_list(node, field)
            if not stmts:
                continue
            todo.extend((s, inside) for s in stmts)  # before the steps are in: the call they make is not probed again
            if inside and field != "handlers" and field != "cases":
                for i in reversed(range(len(stmts))):
                    found = _unit_compare(stmts[i])
                    if found is not None:
                        stmts[i:i + 1] = _unit_steps(stmts[i], found, probe, decoys)
    return tree


# --- the tests' `==` and `!=` through the probe (`probe.make_probe`) --------------------------------------------

_PROBE_NAME = "_dg_probe"


def rewrite_probes(tree, name=_PROBE_NAME, owner="@pytest_ar"):
    """Insert `res = owner.name(left, right, op, res)` after every `res = left == right` (or `!=`) that pytest's
    assertion rewriter wrote into `tree` (its temporaries start with `@py_assert`): the probe's answer is the
    assert's."""
    for node in _statements(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = _getattr_list(node, field)
            if stmts is None:
                continue
            i = 0
            while i < len(stmts):
                s = stmts[i]
                if _is_rewritten_compare(s):
                    cmp = s.value
                    op = "==" if isinstance(cmp.ops[0], _ast.Eq) else "!="
                    call = _ast.Assign([_ast.Name(s.targets[0].id, _ast.Store())], _ast.Call(
                        _ast.Attribute(_ast.Name(owner, _ast.Load()), name, _ast.Load()),
                        [_fresh(cmp.left), _fresh(cmp.comparators[0]), _ast.Constant(op),
                         _ast.Name(s.targets[0].id, _ast.Load())], []))
                    for n in _ast.walk(call):  # the assert's own line, on every node of the call
                        n.lineno, n.col_offset = s.lineno, s.col_offset
                        n.end_lineno, n.end_col_offset = s.lineno, s.col_offset
                    stmts.insert(i + 1, call)
                    i += 1
                i += 1
    if any(isinstance(n, _ast.Import) and any(a.asname == owner for a in n.names) for n in tree.body):
        unit_probes(tree, lambda: _ast.Attribute(_ast.Name(owner, _ast.Load()), name, _ast.Load()), False)
    return tree  # no fix_missing_locations: pytest leaves some of its nodes without an end on purpose


def _statements(tree):
    """The module and every statement in it, with the handlers and cases that hold statements: the nodes
    `rewrite_probes` looks in. An expression never holds a statement, so none is walked (a whole-tree
    `ast.walk` visited ten nodes for each of these)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stmts = _getattr_list(node, field)
            if stmts:
                todo.extend(stmts)


def _fresh(node):
    return _ast.Name(node.id, _ast.Load()) if isinstance(node, _ast.Name) else _ast.Constant(node.value)


def _is_rewritten_compare(s):
    return (isinstance(s, _ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], _ast.Name)
            and s.targets[0].id.startswith("@py_assert") and isinstance(s.value, _ast.Compare)
            and len(s.value.ops) == 1 and isinstance(s.value.ops[0], (_ast.Eq, _ast.NotEq))
            and all(isinstance(x, (_ast.Name, _ast.Constant)) for x in (s.value.left, s.value.comparators[0])))


def _assert_compares():
    """The class below, made at its first use (its base is `ast`'s: imported by the kit, `ast` only once needed)."""
    global _AssertCompares
    if _AssertCompares is not None:
        return _AssertCompares

    class _AssertCompares(_ast.NodeTransformer):
        """`a == b` inside an assert becomes `probe(@py_assertN := a, @py_assertM := b, '==', @py_assertN in probe(@py_assertN,
        @py_assertM, 'in'), @py_assertN == @py_assertM)`: each side evaluated once and compared in the test's own frame, as
        pytest's rewritten assert compares (an object's `__eq__` finds the test below it, not the harness), first with the
        decoys the probe draws for an object of the repository's against an int, a float or a str (a latch latches onto one of
        them), then probed. The names are pytest's kind (no identifier)."""

        def __init__(self, name):
            self.name = name
            self.depth = self.inner = self.n = 0

        def visit_Assert(self, node):
            self.depth += 1
            node = self.generic_visit(node)
            self.depth -= 1
            return node

        def _inner(self, node):  # a comprehension or lambda: no assignment expression there (a class body forbids it)
            self.inner += 1
            node = self.generic_visit(node)
            self.inner -= 1
            return node

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda = _inner

        def visit_Compare(self, node):
            node = self.generic_visit(node)
            if self.depth and len(node.ops) == 1 and isinstance(node.ops[0], (_ast.Eq, _ast.NotEq)):
                op = "==" if isinstance(node.ops[0], _ast.Eq) else "!="
                if self.inner:  # compared by the probe itself, as before
                    call = _ast.Call(_ast.Name(self.name, _ast.Load()), [node.left, node.comparators[0], _ast.Constant(op)], [])
                    return _ast.copy_location(call, node)
                a, b = f"@py_assert{self.n}", f"@py_assert{self.n + 1}"
                self.n += 2
                sides = [_ast.NamedExpr(_ast.Name(a, _ast.Store()), node.left),
                         _ast.NamedExpr(_ast.Name(b, _ast.Store()), node.comparators[0])]
                result = _ast.Compare(_ast.Name(a, _ast.Load()), [node.ops[0]], [_ast.Name(b, _ast.Load())])
                more = []
                if op == "==":  # `a in probe(a, b, 'in') or b in ...`: the decoys of `b` it is compared with first (`make_probe`)
                    more = [_decoyed(lambda: _ast.Name(self.name, _ast.Load()), a, b)]
                call = _ast.Call(_ast.Name(self.name, _ast.Load()), [*sides, _ast.Constant(op), *more, result], [])
                return _ast.copy_location(call, node)
            return node
    return _AssertCompares


_AssertCompares = None


def compare_probes(tree, name):
    """The second harness's rewrite: every `==`/`!=` in an assert goes through `name`, and unittest's comparisons
    (`unit_probes`)."""
    tree = _assert_compares()(name).visit(tree)
    unit_probes(tree, lambda: _ast.Name(name, _ast.Load()), True)
    _ast.fix_missing_locations(tree)
    return tree
