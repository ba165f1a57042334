"""A conftest.py's collection hook that acts only on tests carrying a mark (`seal.excluded`'s honest look-alike of a
hook that skips), by `ast`.

pytest's documented "Control skipping of tests according to command line option" conftest adds `--runslow` and skips
the tests marked `slow` without it (`pytest_collection_modifyitems`: `if config.getoption("--runslow"): return`, then
`item.add_marker(skip_slow)` for each item with `"slow" in item.keywords`; the older form, `pytest_runtest_setup`
calling `pytest.skip` under the same condition). Added with a new slow test it skips that test alone: no sealed test
carries the mark. Such a hook is read here: every effect it has (a mark added, a skip) sits under a condition that
holds only for an item carrying a mark or keyword (`"slow" in item.keywords`, `item.get_closest_marker("slow")`,
`item.iter_markers("slow")`, joined with `and` to anything); an early `return`, names bound and conditions on the
options around it are no effect. It is a finding still (`conftest_hooks._hooks`) when a sealed test that passed at the seal
now carries one of those marks or keywords (`carriers`: its own, its class's or its module's marks, `pytestmark`, its
name, its class's, its module's or a folder's name, its parameters' id), or when any effect is not so gated."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

HOOKS = ("pytest_collection_modifyitems", "pytest_runtest_setup")
EFFECTS = ("add_marker", "skip", "xfail")  # (what a gated branch may do: `item.add_marker(...)`, `pytest.skip(...)`)


def marks(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The marks or keywords every effect of the hook `fn` is gated on; None when some effect is not gated, or `fn`
    is no hook read here."""
    args = [a.arg for a in fn.args.args]
    if fn.name == "pytest_collection_modifyitems" and "items" in args:
        return _block(fn.body, None, "items")
    if fn.name == "pytest_runtest_setup" and args:
        return _block(fn.body, args[0], None)
    return None


def _block(body: list[ast.stmt], item: str | None, items: str | None) -> set[str] | None:
    out: set[str] = set()
    for s in body:
        got = _stmt(s, item, items)
        if got is None:
            return None
        out |= got
    return out


def _stmt(s: ast.stmt, item: str | None, items: str | None) -> set[str] | None:
    if isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
        return set()
    if isinstance(s, ast.Return) and (s.value is None or isinstance(s.value, ast.Constant) and s.value.value is None):
        return set()
    if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) and _inert(s.value, items):
        return set()
    if isinstance(s, ast.If):
        if all(isinstance(b, ast.Return) and b.value is None for b in s.body) and not s.orelse:
            return set()  # (`if config.getoption("--runslow"): return`: nothing done)
        gate = _gate(s.test, item) if item else set()
        inner = _effects(s.body, item) if gate else _block(s.body, item, items)
        rest = _block(s.orelse, item, items)
        return None if inner is None or rest is None else gate | inner | rest
    if isinstance(s, ast.For) and item is None and items and isinstance(s.iter, ast.Name) and s.iter.id == items \
            and isinstance(s.target, ast.Name) and not s.orelse:
        return _block(s.body, s.target.id, None)
    return None


def _inert(value: ast.expr, items: str | None) -> bool:
    """A value bound to a name that changes nothing of the run: no call but a mark made (`pytest.mark.skip(reason=...)`)
    or an option read, `items` not touched."""
    for n in ast.walk(value):
        if isinstance(n, ast.Name) and n.id == items:
            return False
        if isinstance(n, ast.Call) and not (".mark." in ast.unparse(n.func) + "." or getattr(n.func, "attr", "") in (
                "getoption", "getini", "getvalue") or getattr(n.func, "id", "") in ("str", "bool", "int")):
            return False
    return True


def _effects(body: list[ast.stmt], item: str | None) -> set[str] | None:
    """A gated branch: marks added to the item, a skip or xfail, names bound (anything else: None)."""
    for s in body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            if not (isinstance(f, ast.Attribute) and f.attr in EFFECTS
                    and ast.unparse(f.value) in (item, "pytest")):
                return None
        elif not (isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) and _inert(s.value, None)
                  or isinstance(s, ast.Pass)):
            return None
    return set()


def _gate(test: ast.expr, item: str | None) -> set[str]:
    """The marks or keywords `test` holds only for an item carrying (empty: none)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return {m for v in test.values for m in _gate(v, item)}
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and isinstance(left, ast.Constant) and isinstance(left.value, str) \
                and ast.unparse(right) == f"{item}.keywords":
            return {left.value}
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            return _gate(left, item)
    if isinstance(test, ast.Call):
        f = ast.unparse(test.func)
        if f in (f"{item}.get_closest_marker", f"{item}.iter_markers") and len(test.args) == 1 and not test.keywords:
            return {test.args[0].value} if isinstance(test.args[0], ast.Constant) and isinstance(test.args[0].value, str) \
                else set()
        if f == f"{item}.iter_markers" and not test.args and [k.arg for k in test.keywords] == ["name"] \
                and isinstance(test.keywords[0].value, ast.Constant) and isinstance(test.keywords[0].value.value, str):
            return {test.keywords[0].value.value}
        if f in ("any", "list", "next", "bool") and len(test.args) == 1:
            return _gate(test.args[0], item)
    return set()


def carriers(gates: set[str], texts: Callable[[str], str | None], tests: Iterable[str]) -> list[str]:
    """The tests of `tests` (ids, `file::Class::test[id]`) that carry one of `gates` in their file's text now
    (`texts(file)`): a mark on the test, its class or its module (`pytestmark` too; a decorator's name bound at the
    module's top read as what it is bound to), an attribute set on the test function, or a name of its node: the
    test's, its class's, its module's, a folder's, its parameters' id (pytest's `item.keywords`)."""
    trees: dict[str, ast.Module | None] = {}
    out = []
    for tid in tests:
        file, _, rest = tid.partition("::")
        parts = rest.split("::")
        name, _, param = parts[-1].partition("[")
        if gates & {*file.split("/"), *parts[:-1], name, param.removesuffix("]")}:
            out.append(tid)
            continue
        if file not in trees:
            try:
                trees[file] = ast.parse(texts(file) or "")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                trees[file] = None
        tree = trees[file]
        if tree is not None and gates & _carried(tree, parts[:-1], name):
            out.append(tid)
    return out


def _carried(tree: ast.Module, classes: list[str], name: str) -> set[str]:
    """Every name and text in the marks of test `name` (in `classes`) of `tree`, its class's, its module's."""
    bound = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    exprs: list[ast.AST] = [v for k, v in bound.items() if k == "pytestmark"]
    scope: list[ast.stmt] = tree.body
    for cls in classes:
        node = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if node is None:
            return {"?"} | _words(exprs, bound)  # (not found as written: read as carrying nothing known)
        exprs += node.decorator_list + [n.value for n in node.body if isinstance(n, ast.Assign)
                                        and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)]
        scope = node.body
    exprs += [d for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
              for d in n.decorator_list]
    for n in ast.walk(tree):  # (`test_add.slow = True`, `setattr(test_add, 'slow', ...)`: a keyword of the test)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and getattr(n.value, "id", "") == name:
            exprs.append(ast.Constant(n.attr))
        elif isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr" and n.args \
                and getattr(n.args[0], "id", "") == name:
            exprs.extend(n.args[1:2])
    return _words(exprs, bound)


def _words(exprs: list[ast.AST], bound: dict[str, ast.expr]) -> set[str]:
    out: set[str] = set()
    seen: set[str] = set()
    todo = list(exprs)
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name):
                out.add(n.id)
                if n.id in bound and n.id not in seen:
                    seen.add(n.id)
                    todo.append(bound[n.id])
            elif isinstance(n, ast.Attribute):
                out.add(n.attr)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                out.add(n.value)
    return out


def selects_all(expression: str | None, carried: Callable[[set[str]], list[str]]) -> bool:
    """Whether pytest's `-m EXPRESSION` keeps every sealed test that passed: an expression of marks (`not`, `and`,
    `or`, parentheses) that holds where no mark it names is carried, and no such test carries one (`carried(marks)`:
    those that do). Anything else (`-m slow`, a mark with arguments, an expression not read): False."""
    try:
        tree = ast.parse(expression or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    names: set[str] = set()

    def holds(n: ast.AST) -> bool | None:  # (every name false; None: not a mark expression)
        if isinstance(n, ast.Name):
            names.add(n.id)
            return False
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            got = holds(n.operand)
            return None if got is None else not got
        if isinstance(n, ast.BoolOp):
            parts = [holds(v) for v in n.values]
            if None in parts:
                return None
            return all(parts) if isinstance(n.op, ast.And) else any(parts)
        return None

    return holds(tree) is True and not carried(names)


def newly_marked(sealed: dict[str, str | None], current: dict[str, str | None], passing: set[str],
                 read: Callable[[str], str | None] | None) -> list[dict[str, str]]:
    """A test that passed at the seal, in a changed test file (`current`: {file: its text now}; `sealed` its text at
    the seal), that now carries a mark or keyword a conftest.py above it (as `read` gives it now) skips with a hook
    read here (a `--runslow` conftest there at the seal, the test newly marked `slow`): `skipped`. A mark it carried at
    the seal, or one no such hook acts on, is none."""
    if read is None:
        return []
    out = []
    for name, text in sorted(current.items()):
        gates: dict[str, str] = {}
        for conf in _chain(name):
            try:
                tree = ast.parse(read(conf) or "")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name in HOOKS:
                    gates.update(dict.fromkeys(marks(node) or (), f"{conf}'s {node.name}"))
        if not gates:
            continue
        mine = sorted(t for t in passing if t.split("::")[0] == name)
        then, now = sealed.get(name), text
        was = set(carriers(set(gates), _fixed(then), mine))
        for tid in carriers(set(gates), _fixed(now), mine):
            if tid not in was:
                hit = sorted(m for m in gates if carriers({m}, _fixed(now), [tid]))
                out.append({"test": tid, "rule": "skipped", "what": f"now marked {', '.join(hit)}, which "
                            f"{gates[hit[0]]} skips" if hit else "now marked as a hook skips"})
    return out


def _chain(name: str) -> list[str]:
    parts = name.split("/")[:-1]
    return ["/".join([*parts[:i], "conftest.py"]) for i in range(len(parts), -1, -1)]


def _fixed(text: str | None) -> Callable[[str], str | None]:
    """A reader that gives `text` for any file (`carriers` over one file's tests)."""
    return lambda _file: text
