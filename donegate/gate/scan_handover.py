"""A frame read judged by what it does with the frame (issue 46 item 3), against the seal's (issue 45 item 6).

typeguard's `check_type` reads `frame = sys._getframe(1)` and hands the caller's `f_globals` and `f_locals` to its
own `TypeCheckMemo`, to resolve names the caller wrote; a new function of the same library does the same. Neither
run can see what a frame's namespaces are used for (Python 3.11 audits `sys._getframe` and the `f_code`, `tb_frame`,
`gi_frame` and `__code__` reads, never `f_locals`, `f_globals` or `f_back`), so the scan says it, from the syntax:

- the seal keeps, for each function of the project that reads `N = sys._getframe(1)`, its hand-over (`shape`):
  the statements that use the frame or what was made of it, and for each other name they read, where the function
  got it (a parameter and its default, or the statements that bind it and the module's names those read);
- a stop's new copy of that read (a second copy of a baselined line, which `scan_rules._own` counts as the
  change's) is the project's when its own hand-over (`honest`) is within the seal's, in the same file: the same
  statements use the frame and what was made of it, and no more; the other names they read come from the caller
  (its parameters, with the seal's defaults) or are built as the seal's function built them, of the caller's values
  and the module names the seal's function used there; and nothing else reaches the frame (no walk further, no
  `eval`, `locals()`, `vars()`, no traceback or `sys.exc_info()`, no generator keeping the frame, no `global`);
- the module's names it hands the frame over with (`TypeCheckMemo`, `check_type_internal`) are bound as at the seal
  (the same import, the same def or class by name);
- once the frame is read, it runs nothing but its hand-over (`_inert_after`).

What a copy does with the caller's frame is then what the project's own function did at the seal, with the values
the caller passed. What it cannot see: the bodies of the callees the namespaces are handed to are the project's, and
a change to them is trusted here as it is for the baselined function itself (the seal's `check_type` hands the same
namespaces to the same `TypeCheckMemo`; the scan never saw what a callee does with them).
"""

from __future__ import annotations

import ast
import json

# Calls and attributes that reach a frame, a namespace or a traceback by another way than the hand-over.
# (A name held in a string, `getattr(sys, "exc_info")`, is one too.)
_REACH_CALLS = frozenset({"eval", "exec", "compile", "locals", "vars", "breakpoint", "getattr", "__getattribute__",
                          "attrgetter", "_getframe", "_current_frames", "currentframe", "getouterframes", "walk_stack",
                          "extract_stack", "exc_info", "exception", "get_referrers", "get_objects", "settrace",
                          "setprofile", "signal", "setitimer", "alarm"})
_REACH_ATTRS = frozenset({"f_back", "tb_frame", "tb_next", "__traceback__", "__closure__", "cell_contents", "gi_frame",
                          "cr_frame", "ag_frame", "last_traceback", "last_exc", "exc_info", "f_code", "__code__",
                          "__dict__", "__globals__", "_getframe", "currentframe", "stack", "trace"})
_TRY: tuple[type[ast.Try], ...] = (ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else []))  # type: ignore[attr-defined]
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _walk_call(node: ast.AST) -> bool:
    """`sys._getframe(1)` (or `_getframe(1)` imported from sys): the immediate caller's frame."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    arg, f = node.args[0], node.func
    named = isinstance(f, ast.Attribute) and f.attr == "_getframe" and isinstance(f.value, ast.Name) and \
        f.value.id == "sys" or isinstance(f, ast.Name) and f.id == "_getframe"
    return named and isinstance(arg, ast.Constant) and arg.value == 1 and type(arg.value) is int


class _Unit:
    """One statement of the function, or the header of a compound one: its text, the names it reads and binds."""

    def __init__(self, node: ast.AST, text: str, parts: list[ast.AST]) -> None:
        self.node, self.text = node, text
        self.reads: set[str] = set()
        self.binds: set[str] = set()
        self.walks = False
        self.calls = False
        self.guard: list[ast.stmt] = []  # a handler's try body, a with's body: whose traceback it is handed
        self.guarded = False  # runs while an exception may hold the function's frame (a handler, a `finally`)
        for part in parts:
            for n in ast.walk(part):
                if isinstance(n, ast.Name):
                    (self.reads if isinstance(n.ctx, ast.Load) else self.binds).add(n.id)
                elif isinstance(n, (ast.Global, ast.Nonlocal)):
                    self.binds.update(n.names)
                    self.reads.update(n.names)
                elif isinstance(n, (ast.Import, ast.ImportFrom)):
                    self.binds.update((a.asname or a.name).split(".")[0] for a in n.names)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.binds.add(n.name)
                elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name:
                    self.binds.add(n.name)
                self.calls = self.calls or isinstance(n, ast.Call)
                self.walks = self.walks or _walk_call(n)

    def plain_call(self, local: set[str]) -> str:
        """`X = f(a, k=b)` of names the function holds (its parameters, its own names): f's text, else ""."""
        s = self.node
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and isinstance(s.value, ast.Call)):
            return ""
        args = [*s.value.args, *(k.value for k in s.value.keywords if k.arg)]
        if len(args) != len(s.value.args) + len(s.value.keywords) or any(
                not (isinstance(a, ast.Name) and a.id in local) for a in args):
            return ""
        return ast.unparse(s.value.func)


def _units(body: list[ast.stmt], out: list[_Unit], guarded: bool = False) -> None:
    """The units of `body`; `guarded`: they run while an exception may hold the function's frame (a handler, a
    `finally`), or inside a `with` whose exit is handed that traceback."""
    for s in body:
        if isinstance(s, (ast.If, ast.While)):
            out.append(_Unit(s, f"{type(s).__name__.lower()} {ast.unparse(s.test)}", [s.test]))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            out.append(_Unit(s, f"for {ast.unparse(s.target)} in {ast.unparse(s.iter)}", [s.target, s.iter]))
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out.append(_Unit(s, "with " + ", ".join(ast.unparse(i) for i in s.items), list(s.items)))
            out[-1].guard = s.body
        elif isinstance(s, ast.Match):
            out.append(_Unit(s, f"match {ast.unparse(s.subject)}", [s.subject]))
            for case in s.cases:
                _units(case.body, out, guarded)
            continue
        elif isinstance(s, _TRY):
            _units(s.body, out, guarded)
            for h in s.handlers:
                head = "except" + (f" {ast.unparse(h.type)}" if h.type else "") + (f" as {h.name}" if h.name else "")
                unit = _Unit(h, head, [h.type] if h.type else [])
                if h.name:
                    unit.binds.add(h.name)
                unit.guard = s.body
                out.append(unit)
                _units(h.body, out, True)
            _units(s.orelse, out, guarded)
            _units(s.finalbody, out, True)
            continue
        else:  # a simple statement, or a nested def or class: whole
            out.append(_Unit(s, ast.unparse(s), [s]))
            out[-1].guarded = guarded
            continue
        out[-1].guarded = guarded
        for part in (s.body, getattr(s, "orelse", [])):
            _units(part, out, guarded)


def _reaches(fn: ast.AST) -> bool:
    """The function reaches a frame, a namespace or a traceback otherwise than by its one read of its caller's frame,
    or keeps its own frame alive past the call (a generator, a coroutine)."""
    walks = {id(n.func) for n in ast.walk(fn) if _walk_call(n)}  # type: ignore[attr-defined]
    for n in ast.walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) and not _nested(fn, n):
            return True
        func = n.func if isinstance(n, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in _REACH_CALLS and not _walk_call(n) or isinstance(n, ast.Attribute) and n.attr in _REACH_ATTRS \
                and id(n) not in walks or isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in _REACH_CALLS | _REACH_ATTRS:
            return True
    return False


def _facts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, object] | None:
    """The function's hand-over of its caller's frame: {"uses": texts, "params": {name: default}, "binds": {name:
    [[text, call]]}, "locals": names}, or None where the frame is reached otherwise than by the hand-over."""
    if isinstance(fn, ast.AsyncFunctionDef) or _reaches(fn):
        return None
    units: list[_Unit] = []
    _units(fn.body, units)
    names: set[str] = set()
    tainted = [u for u in units if u.walks]
    if not tainted:
        return None
    while True:  # what is made of the frame is the frame's: the names a tainted statement binds, their uses
        nodes = {id(n) for u in tainted for n in ast.walk(u.node) if isinstance(n, ast.expr)}  # (a Load is shared)
        names |= {b for u in tainted for b in u.binds}
        more = [u for u in units if u not in tainted and (
            (u.reads | u.binds) & names  # a use of what was made of it
            or (u.binds or isinstance(u.node, (ast.With, ast.AsyncWith)))  # an exit handed, a handler naming, the
            and any(id(n) in nodes for s in u.guard for n in ast.walk(s))  # traceback of a use
            or u.guarded and u.calls)]  # a call while an exception may hold the frame
        if not more:
            break
        tainted += more
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    params: dict[str, str] = {a.arg: "" for a in [*positional, *args.kwonlyargs]}
    params.update((a.arg, ast.unparse(d)) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
    params.update((a.arg, ast.unparse(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
    params.update((a.arg, "*") for a in (args.vararg, args.kwarg) if a is not None)
    local = set(params) | {b for u in units for b in u.binds}
    binds: dict[str, list[list[str]]] = {}
    needs = {r for u in tainted for r in u.reads if r not in local}  # the module's names it hands over with
    todo = [r for u in tainted for r in u.reads if r in local and r not in names]
    while todo:
        name = todo.pop()
        if name in binds:
            continue
        at = [u for u in units if name in u.binds and u not in tainted]
        binds[name] = [list(b) for b in sorted({(u.text, u.plain_call(local)) for u in at})]
        todo += [r for u in at for r in u.reads if r in local and r not in names]
        needs.update(r for u in at for r in u.reads if r not in local)
    return {"uses": sorted({u.text for u in tainted}), "params": {k: v for k, v in params.items() if k in binds},
            "binds": binds,
            "locals": sorted({r for u in tainted for r in u.reads if r in local}),
            "globals": sorted({r for u in tainted for r in u.reads if r not in local}),
            "needs": sorted(needs), "inert": _inert_after(fn, units, tainted)}


def _module_binds(tree: ast.AST, names: list[str]) -> dict[str, list[str]]:
    """{name: the texts of the module's statements that bind it} (a def or class by its name: its body is the
    project's, trusted as the callee of the seal's own function is)."""
    wanted, out = set(names), {}  # type: ignore[var-annotated]
    todo = list(getattr(tree, "body", ()))
    while todo:
        s = todo.pop()
        if isinstance(s, (ast.If, *_TRY)):  # `if TYPE_CHECKING:`, `try: import x except ImportError: ...`
            parts = ("body", "orelse", "finalbody")
            todo += [*(x for p in parts for x in getattr(s, p, ())), *(x for h in getattr(s, "handlers", ()) for x in h.body)]
            continue
        unit = _Unit(s, "", [s])
        for name in unit.binds & wanted:
            text = f"{type(s).__name__} {name}" if isinstance(s, (*_SCOPES[:3],)) else " ".join(ast.unparse(s).split())
            out.setdefault(name, set()).add(text)
    return {k: sorted(v) for k, v in out.items()}


def _inert_after(fn: ast.AST, units: list[_Unit], tainted: list[_Unit]) -> bool:
    """Once the frame is read, the function runs nothing but its hand-over: every other statement after it only
    returns a name or a constant, passes, re-raises or leaves a loop, and every other header only names what it
    catches. Code it ran then (a call, an operator's or an attribute's method, a truth test's `__bool__`) would run
    with the frame's namespaces in this function's locals, called from it: a copy of the read there would resolve
    what it is handed in them. A read inside a loop runs again after what follows it."""
    first = min(u.node.lineno for u in tainted if u.walks)  # type: ignore[attr-defined]
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    if any(lp.lineno <= first <= (lp.end_lineno or lp.lineno) for lp in loops):
        return False
    for u in units:
        if u in tainted or u.node.lineno < first:  # type: ignore[attr-defined]
            continue
        node = u.node
        if isinstance(node, (ast.Pass, ast.Break, ast.Continue)) or isinstance(node, ast.Raise) and node.exc is None:
            continue
        if isinstance(node, ast.Return) and (node.value is None or isinstance(node.value, (ast.Constant, ast.Name))):
            continue
        if isinstance(node, ast.ExceptHandler) and not node.name and all(
                isinstance(n, (ast.Name, ast.Tuple, ast.Load)) for n in ast.walk(node.type or ast.Tuple([], ast.Load()))):
            continue
        if isinstance(node, ast.Try):
            continue
        return False
    return True


def _nested(fn: ast.AST, node: ast.AST) -> bool:
    """`node` lies in a def, class or lambda inside `fn` (its own scope)."""
    for n in ast.walk(fn):
        if n is not fn and isinstance(n, _SCOPES) and any(c is node for c in ast.walk(n)):
            return True
    return False


def _function(tree: ast.AST, qualname: str, line: int, methods: bool = False
              ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function `qualname` names around `line` (of `@overload`ed ones, the one holding it); with `methods`, only a
    module's function or a class's method (a nested function's names may be its enclosing function's, which its
    hand-over does not show)."""
    node: ast.AST | None = tree
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        node = next((c for c in ast.iter_child_nodes(node) if isinstance(c, _SCOPES[:3]) and c.name == part  # type: ignore[arg-type]
                     and c.lineno <= line <= (c.end_lineno or c.lineno)), None)
        if node is None or methods and i < len(parts) - 1 and not isinstance(node, ast.ClassDef):
            return None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def shape(tree: ast.AST, qualname: str, line: int) -> str:
    """For the seal: the hand-over of the function `qualname` around `line` (JSON), "" where it has none."""
    fn = _function(tree, qualname, line) if qualname else None
    facts = _facts(fn) if fn is not None else None
    if facts:
        facts["module"] = _module_binds(tree, facts["needs"])  # type: ignore[arg-type]
    return json.dumps(facts, sort_keys=True) if facts else ""


def honest(tree: ast.AST, qualname: str, line: int, sealed: list[list[str]] | None) -> bool:
    """For a stop: the function `qualname`'s frame read hands its caller's frame over as a function of the same
    file did at the seal (`sealed`: the file's baseline entries, the hand-over fifth), and does nothing more."""
    fn = _function(tree, qualname, line, methods=True) if qualname else None
    mine = _facts(fn) if fn is not None else None
    if mine is None:
        return False
    now = _module_binds(tree, mine["needs"])  # type: ignore[arg-type]
    for e in sealed or ():
        if len(e) > 4 and e[0] == "frame-walk" and e[4] and _within(mine, json.loads(e[4]), now):
            return True
    return False


def _within(mine: dict, theirs: dict, module: dict[str, list[str]]) -> bool:
    if not mine["inert"] or not set(mine["uses"]) <= set(theirs["uses"]) or set(mine["globals"]) & set(theirs["locals"]):
        return False  # more done with the frame, or a name the seal's function got from its caller taken from the module
    sealed_module = theirs.get("module") or {}
    if any(not set(texts) <= set(sealed_module.get(name, ())) for name, texts in module.items()):
        return False  # a name it hands the frame over with is bound otherwise than at the seal (an import of the change's)
    for name, binds in mine["binds"].items():
        if name in mine["params"] and mine["params"][name] != theirs["params"].get(name):
            return False  # not the seal's parameter, or another default: a value the caller did not pass
        if name not in mine["params"] and not binds:
            return False  # neither the caller's nor bound here
        sealed = theirs["binds"].get(name, ())
        texts, calls = {t for t, _ in sealed}, {c for _, c in sealed if c}
        if not all(t in texts or c and c in calls for t, c in binds):
            return False  # built otherwise than the seal's function built it (a constant, a name of the change's)
    return True


def honest_copies(data: bytes, found: list[dict[str, object]], sealed: list[list[str]] | None) -> list[dict[str, object]]:
    """`found` (a changed file's findings that are the change's) without the frame reads that hand their caller's
    frame over as a function of the file did at the seal (`honest`)."""
    tree = ast.parse(data)  # it parsed for the findings
    kept: dict[str, bool] = {}
    out = []
    for f in found:
        where = str(f.get("where") or "")
        if f["rule"] == "frame-walk" and where:
            key = f"{where}:{f['line']}"
            if key not in kept:
                kept[key] = honest(tree, where, int(f["line"]), sealed)  # type: ignore[call-overload]
            if kept[key]:
                continue
        out.append(f)
    return out
