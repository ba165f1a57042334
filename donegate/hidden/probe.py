"""The equality probe: a passing `==` (or a failing `!=`) in a test's assert, whose operand's equality is the
repository's own, is tried again against fresh values it cannot be equal to. An object that is equal to them
too is equal to everything: a pass it gives proves nothing, and it is tampering (never appealable).

Both runs use it: the pytest run inserts a call after each comparison pytest's assertion rewriter makes
(`rewrite_probes`, on the tree pytest has rewritten), the second harness rewrites the test's asserts itself
(`compare_probes`). This file is self-contained (the standard library only): its source is sent into the
hidden run with the plugin's or the harness's and executed there; nothing of the kit is imported.

Whose equality counts: the first class along the type's MRO that defines `__eq__` (or `__ne__`). A builtin
type (int, str, object...) or a class from a file outside the repository (the standard library, an installed
package: `unittest.mock.ANY` equals everything on purpose) is never probed; a class whose method lives in
the repository, or in no file at all (built by `type()` or `exec`), or that names no real module, is.
Honest equality returns False, NotImplemented or raises against a stranger, so it is never trapped.
"""

import ast as _ast
import os as _os

_PROBE_NAME = "_dg_probe"
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type(), not a builtin


def make_probe(repo, alarm):
    """The probe function: probe(left, right, op, result), calling `alarm(what)` on an object equal to
    everything. Every builtin it uses is bound now, before the code under test is imported."""
    import sys

    repo = repo.rstrip("/") + "/"
    _type, _bool, _getattr, _isinstance, _repr = type, bool, getattr, isinstance, repr
    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    modules, isabs, urandom = sys.modules, _os.path.isabs, _os.urandom
    _int, _float, _str, _bytes, _tuple, _list, _dict = int, float, str, bytes, tuple, list, dict

    def own(tp):
        """True when `tp`'s equality is the repository's (or nobody's file's)."""
        for name in ("__eq__", "__ne__"):
            for cls in mro_of(tp):
                d = dict_of(cls)
                if name not in d:
                    continue
                if not flags_of(cls) & _HEAPTYPE:
                    break  # int, str, object: the interpreter's own equality
                code = _getattr(d[name], "__code__", None)
                where = _getattr(code, "co_filename", None) if code is not None else \
                    _getattr(modules.get(_getattr(cls, "__module__", None) or ""), "__file__", None)
                if not _isinstance(where, _str) or not isabs(where) or where.startswith(repo):
                    return True
                break
        return False

    def strangers(other):
        """Fresh values `x` cannot honestly equal: an instance of a new class, and `other` changed."""
        tag = urandom(6).hex()
        out = [_type("_Stranger" + tag, (), {})()]
        try:
            kind = _type(other)
            if kind is _bool:
                out.append(not other)
            elif kind is _int:
                out.append(other + 982451653)
            elif kind is _float and other == other and other not in (float("inf"), float("-inf")):
                out.append(other * 3 + 1e9 + 0.5)
            elif kind is _str:
                out.append(other + "\x00" + tag)
            elif kind is _bytes:
                out.append(other + b"\x00" + tag.encode())
            elif kind in (_tuple, _list):
                out.append(other + kind([out[0]]))
            elif kind is _dict:
                out.append({**other, tag: out[0]})
        except Exception:  # an exotic value: the fresh instance is probe enough
            pass
        return out

    def probe(left, right, op, result):
        try:
            holds = _bool(result) if op == "==" else not _bool(result)
        except Exception:
            return
        if not holds:
            return
        for x, other in ((left, right), (right, left)):
            try:
                if not own(_type(x)):
                    continue
            except Exception:
                continue
            for s in strangers(other):
                try:
                    hit = _bool(x == s) if op == "==" else not _bool(x != s)
                except Exception:
                    hit = False
                if hit:
                    name = _getattr(_type(x), "__qualname__", "?")
                    alarm(f"an object of the repository's class {name} compared equal to a fresh value it cannot "
                          f"equal ({_type(s).__name__}): an object equal to everything is not a result")
                    return

    return probe


def rewrite_probes(tree, name=_PROBE_NAME, owner="@pytest_ar"):
    """Insert `owner.name(left, right, op, res)` after every `res = left == right` (or `!=`) that pytest's
    assertion rewriter wrote into `tree` (its temporaries start with `@py_assert`)."""
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
                    call = _ast.Expr(_ast.Call(
                        _ast.Attribute(_ast.Name(owner, _ast.Load()), name, _ast.Load()),
                        [_fresh(cmp.left), _fresh(cmp.comparators[0]), _ast.Constant(op),
                         _ast.Name(s.targets[0].id, _ast.Load())], []))
                    for n in _ast.walk(call):  # the assert's own line, on every node of the call
                        n.lineno, n.col_offset = s.lineno, s.col_offset
                        n.end_lineno, n.end_col_offset = s.lineno, s.col_offset
                    stmts.insert(i + 1, call)
                    i += 1
                i += 1
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


def _getattr_list(node, field):
    v = getattr(node, field, None)
    return v if isinstance(v, list) else None


def _fresh(node):
    return _ast.Name(node.id, _ast.Load()) if isinstance(node, _ast.Name) else _ast.Constant(node.value)


def _is_rewritten_compare(s):
    return (isinstance(s, _ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], _ast.Name)
            and s.targets[0].id.startswith("@py_assert") and isinstance(s.value, _ast.Compare)
            and len(s.value.ops) == 1 and isinstance(s.value.ops[0], (_ast.Eq, _ast.NotEq))
            and all(isinstance(x, (_ast.Name, _ast.Constant)) for x in (s.value.left, s.value.comparators[0])))


class _AssertCompares(_ast.NodeTransformer):
    """`a == b` inside an assert becomes `probe_cmp(a, b, '==')`, which compares once, probes, returns."""

    def __init__(self, name):
        self.name = name
        self.depth = 0

    def visit_Assert(self, node):
        self.depth += 1
        node = self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if self.depth and len(node.ops) == 1 and isinstance(node.ops[0], (_ast.Eq, _ast.NotEq)):
            op = "==" if isinstance(node.ops[0], _ast.Eq) else "!="
            call = _ast.Call(_ast.Name(self.name, _ast.Load()), [node.left, node.comparators[0], _ast.Constant(op)], [])
            return _ast.copy_location(call, node)
        return node


def compare_probes(tree, name):
    """The second harness's rewrite: every `==`/`!=` in an assert goes through `name`."""
    tree = _AssertCompares(name).visit(tree)
    _ast.fix_missing_locations(tree)
    return tree
