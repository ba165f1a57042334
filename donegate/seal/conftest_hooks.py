"""A conftest.py's hooks that take tests out of a run or stand for it (`collection-hook`), by `ast`: a collection or
run hook added, a set-up hook that sets an option or brings a plugin in, a closing hook that sets the run's status, a
skip, a `pytest_plugins` entry. Honest look-alikes: a hook that times or records, one that acts only on tests carrying
a mark no sealed test carries (`seal.gated`), `collect_ignore` of files that hold no sealed test, `pytest_plugins`
naming pytest's own fixture plugin (`pytester`)."""

from __future__ import annotations

import ast
from typing import Any

from donegate.seal import gated
from donegate.seal.loosened import SKIPS, _marks, _plugins, gained

# pytest's own plugins that only give fixtures (`pytest_plugins = ['pytester']`, as pytest's docs for plugin authors
# say): naming one takes nothing out of a run.
FIXTURE_PLUGINS = ("pytest_plugins 'pytester'", "pytest_plugins '_pytest.pytester'", 'pytest_plugins "pytester"')

HOOKS = ("pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_deselected", "pytest_collect_file",
         "pytest_generate_tests",  # (a test given no cases is skipped)
         "pytest_pycollect_makeitem", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_makereport",
         "collect_ignore", "collect_ignore_glob",
         # (a test's call, its whole run or the run of all replaced; items dropped or marked; a report rewritten)
         "pytest_pyfunc_call", "pytest_runtestloop", "pytest_collection",
         "pytest_make_collect_report", "pytest_itemcollected", "pytest_collection_finish", "pytest_collectreport",
         "pytest_fixture_setup")
# Hooks honest when they time or record (a wrapper that yields, `report.duration` read); a finding when they stand
# for the run (a value returned without yielding) or rewrite it (`report.outcome = ...`, `item.runtest = ...`).
RUN_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_logreport")
REPORT_FIELDS = ("outcome", "longrepr", "passed", "failed", "skipped", "wasxfail")


# Hooks that run before collection: honest with `config.addinivalue_line` (a marker) or reading an option; a
# finding when they set an option (`config.option.deselect = ...`, `config.args[:] = ...`) or bring a plugin in.
SETUP_HOOKS = ("pytest_configure", "pytest_sessionstart", "pytest_cmdline_main", "pytest_load_initial_conftests",
               "pytest_cmdline_preparse", "pytest_addoption",
               # (honest with clean-up; a finding when they set the run's status: `session.exitstatus = 0`)
               "pytest_sessionfinish", "pytest_unconfigure")
CLOSING_HOOKS = ("pytest_sessionfinish", "pytest_unconfigure")
PLUGIN_CALLS = ("register", "import_plugin", "consider_module", "consider_pluginarg", "set_blocked")


def _sets_options(fn: ast.AST) -> bool:
    for sub in ast.walk(fn):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
                return True
        elif isinstance(sub, ast.Call) and getattr(sub.func, "attr", "") in (*PLUGIN_CALLS, "setattr"):
            return True
        elif isinstance(sub, ast.Call) and getattr(sub.func, "id", "") == "setattr":
            return True
    return False


def _writes(fn: ast.AST) -> list[tuple[ast.expr, str | None]]:
    """(what, which attribute) for each attribute written in `fn` (`x.a = ...`, `x.a += ...`, `setattr(x, 'a', ...)`;
    None for an attribute named at run time)."""
    out: list[tuple[ast.expr, str | None]] = []
    for sub in ast.walk(fn):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                out.extend((e.value, e.attr) for e in ast.walk(t) if isinstance(e, ast.Attribute)
                           and isinstance(e.ctx, ast.Store))
        elif isinstance(sub, ast.Call) and "setattr" in (getattr(sub.func, "id", ""), getattr(sub.func, "attr", "")) \
                and len(sub.args) >= 2:
            name = sub.args[1]
            out.append((sub.args[0], name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None))
    return out


def _rewrites_run(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a run hook (`RUN_HOOKS`) stands for the run or rewrites it rather than timing or recording it."""
    nodes = list(ast.walk(fn))
    if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes) and any(
            isinstance(n, ast.Return) and n.value is not None and not (isinstance(n.value, ast.Constant)
                                                                       and n.value.value is None) for n in nodes):
        return True
    params = {a.arg for a in fn.args.args[:1]}  # (the item the protocol runs)
    if any(getattr(n.func, "attr", "") in ("force_result", "force_exception") for n in nodes if isinstance(n, ast.Call)):
        return True
    return any(attr in (*REPORT_FIELDS, None) or isinstance(what, ast.Name) and what.id in params
               for what, attr in _writes(fn))


def _sets_status(fn: ast.AST) -> bool:
    """Whether a closing hook sets the run's status (`session.exitstatus = 0`, `setattr(session, 'testsfailed', 0)`)
    or leaves before pytest reports it (`os._exit(0)`)."""
    exits = any(isinstance(n, ast.Call) and (getattr(n.func, "attr", "") in ("_exit", "exit") or getattr(
        n.func, "id", "") == "exit") for n in ast.walk(fn))
    return exits or any(attr in ("exitstatus", "testsfailed", None) for _, attr in _writes(fn))


def _hooks(text: str | None, carried: Any = None, folder: str = "", suite: tuple[str, ...] | None = None) -> set[str]:
    """`carried(marks)`: the sealed passing tests carrying one of `marks` now (`seal.gated`; None: named); `suite`:
    the sealed test files that hold a test that passed, which a `collect_ignore` of the conftest in `folder` may not
    name (None: any named)."""
    try:
        tree = ast.parse(text or "")
    except SyntaxError:
        return {"(does not parse)"}
    found: set[str] = set()
    for node in list(tree.body):
        marks = gated.marks(node) if carried and isinstance(node, ast.FunctionDef) else None
        if marks and not (on := carried(marks)):
            tree.body = [n for n in tree.body if n is not node]  # (nor its skip mark)
        elif marks and isinstance(node, ast.FunctionDef):
            found.add(f"{node.name} skipping {', '.join(on[:3])} (marked {', '.join(sorted(marks))})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.name in HOOKS or node.name in RUN_HOOKS and _rewrites_run(node)):
            found.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in CLOSING_HOOKS:
            if _sets_status(node):
                found.add(f"{node.name} setting the run's status")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in SETUP_HOOKS and _sets_options(node):
            found.add(f"{node.name} setting the run's {'status' if node.name in CLOSING_HOOKS else 'options or plugins'}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name) and t.id in (*HOOKS, *RUN_HOOKS)
                         and not _ignores_none(t.id, node, folder, suite))
            found.update(p for p in _plugins(node) if p not in FIXTURE_PLUGINS)
    found.update(f"a {m} mark" for m in _marks(tree) if m in SKIPS)
    return found


def _ignores_none(key: str, node: ast.stmt, folder: str, suite: tuple[str, ...] | None) -> bool:
    """Whether `collect_ignore = [...]` (`collect_ignore_glob`) of literal paths, relative to the conftest's `folder`
    (globs as pytest matches them, `*` across folders), leaves out no file of `suite` nor a folder holding one
    (`collect_ignore = ['setup.py']`, `collect_ignore_glob = ['*_py2.py']`, pytest's documented examples)."""
    value = getattr(node, "value", None)
    if suite is None or key not in ("collect_ignore", "collect_ignore_glob") or isinstance(node, ast.AugAssign) \
            or not isinstance(value, (ast.List, ast.Tuple)) \
            or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return False
    import fnmatch
    import posixpath

    for e in value.elts:
        at = posixpath.normpath(posixpath.join(folder, str(e.value)))  # type: ignore[attr-defined]
        for path in suite:
            parts = path.split("/")
            places = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]  # (the file and each folder above it)
            if any(p == at or key.endswith("glob") and fnmatch.fnmatchcase(p, at) for p in places):
                return False
    return True


def conftest_findings(sealed: dict[str, str | None], current: dict[str, str | None], carried: Any = None,
                      suite: tuple[str, ...] | None = None) -> list[dict[str, str]]:
    """A collection or run hook (or a skip) in a conftest.py that it did not have at the seal."""
    out = []
    for name, text in sorted(current.items()):
        folder = name.rsplit("/", 1)[0] if "/" in name else "."
        out += gained({name: sealed.get(name)}, {name: text}, lambda t, f=folder: _hooks(t, carried, f, suite), "added")
    return out
