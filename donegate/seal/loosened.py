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
import configparser
import re
import hashlib
from pathlib import Path

from donegate.seal import calls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    if isinstance(t, ast.Compare) and len(t.ops) == 1:
        op = type(t.ops[0]).__name__
        right = t.comparators[0]
        if side(t.left) == side(right) or (isinstance(t.left, ast.Constant) and isinstance(right, ast.Constant)):
            return "truth"  # `x == x`, `5 == 5`: it holds whatever the code does
        if isinstance(right, ast.Call) and getattr(right.func, "attr", getattr(right.func, "id", "")) == "approx":
            return "approx:" + ",".join(sorted(ast.unparse(k) for k in right.keywords))
        return {"Eq": "eq", "Is": "eq", "NotEq": "ne", "IsNot": "ne", "In": "in", "NotIn": "in"}.get(op, "cmp")
    return "truth"


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
    return UNITTEST.get(name) if isinstance(call.func, ast.Attribute) else None


def _raises(fn: ast.AST) -> list[str]:
    out = []
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Call) and getattr(sub.func, "attr", "") in UNITTEST_RAISES and sub.args:
            out.append(ast.unparse(sub.args[0]))
    return sorted(out)


def shape_of(fn: ast.AST, lists: dict[str, ast.expr] | None = None, helpers: dict[str, ast.AST] | None = None,
             methods: dict[str, ast.AST] | None = None) -> dict[str, Any]:
    """The test's shape, the helpers it calls (`calls.reached`) read as its own body: their source in its digest,
    their asserts, skips and raises with its."""
    parts = [fn, *calls.reached(fn, helpers or {}, methods)]
    asserts = [_assert_kind(a, _once(getattr(part, "body", []))) for part in parts for a in ast.walk(part)
               if isinstance(a, ast.Assert)] + [k for part in parts for c in ast.walk(part)
                                                if isinstance(c, ast.Call) and (k := _unittest_kind(c)) is not None]
    return {"src": hashlib.sha256("".join(ast.dump(p) for p in parts).encode()).hexdigest()[:16],
            "asserts": sorted(asserts), "skips": sorted(m for p in parts for m in _marks(p)),
            "cases": _cases(fn, lists), "raises": sorted(r for p in parts for r in _raises(p))}


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


def tests_of(text: str, conftests: list[str] | None = None) -> dict[str, dict[str, Any]] | None:
    """{test name (Class::name for a method): shape} of one test file; None when it does not parse. `conftests`:
    the texts of its conftest.py files, nearest first (`calls.chain`), for the helpers it imports from them."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    helpers = {**calls.from_conftest(tree, conftests or []), **calls.defined(tree.body)}
    out: dict[str, dict[str, Any]] = {}
    module_skip = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                      and _marks(n.value) for n in tree.body)
    lists = _lists(tree.body)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out[node.name] = shape_of(node, lists, helpers)
        elif isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or any(  # unittest's, by any name
                getattr(b, "attr", getattr(b, "id", "")).endswith("TestCase") for b in node.bases)):
            class_marks = [m for d in node.decorator_list for m in _marks(d)] + [  # its `pytestmark` too
                m for n in node.body if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark"
                                                                         for t in n.targets) for m in _marks(n.value)]
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                    found = shape_of(sub, lists, helpers, calls.defined(node.body))
                    found["skips"] = sorted(found["skips"] + class_marks)
                    out[f"{node.name}::{sub.name}"] = found
    if module_skip:
        for found in out.values():
            found["skips"] = sorted(found["skips"] + ["module"])
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
            if new["src"] == old["src"] and new["skips"] == old["skips"] and new["cases"] == old["cases"]:
                # (a class's or module's mark, a module's list of cases: not in the test's source)
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
            if new["cases"] < old["cases"]:
                out.append({"test": tid, "rule": "fewer-cases", "what": f"{old['cases']} parametrized cases at the seal, {new['cases']} now"})
            if old["raises"] and set(new["raises"]) != set(old["raises"]) and _broader(old["raises"], new["raises"]):
                out.append({"test": tid, "rule": "raises-broadened", "what": f"raises({', '.join(old['raises'])}) became "
                            f"raises({', '.join(new['raises'])})"})
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
    a, b = _tolerance(old), _tolerance(new)
    return a is None or b is None or b[0] > a[0] or b[1] > a[1]


def pytest_section(path: Path) -> dict[str, str] | None:
    """The pytest options of one configuration file ({} for a section without options), None without one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if path.name == "pyproject.toml":
        try:
            import tomllib  # type: ignore[import-not-found]  # Python 3.11+
        except ImportError:  # Python 3.10: the keys read are plain enough for a look by line
            if not re.search(r"^\[tool\.pytest(\.ini_options)?\]", text, re.M):
                return None
            m = re.search(r"^testpaths\s*=\s*(\[[^\]]*\]|\"[^\"]*\")", text, re.M)
            return {"testpaths": " ".join(re.findall(r"\"([^\"]*)\"", m.group(1)))} if m else {}
        try:
            data = tomllib.loads(text)
        except ValueError:
            return None
        tool = data.get("tool", {}).get("pytest", {})
        opts = tool.get("ini_options") if isinstance(tool, dict) and "ini_options" in tool else tool
        if not isinstance(data.get("tool", {}).get("pytest"), dict):
            return None
        tp = (opts or {}).get("testpaths", [])
        return {"testpaths": " ".join(tp) if isinstance(tp, list) else str(tp)}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    return dict(parser.items(section))


# Options that take tests out of a run: in `addopts`, or as the keys that say what is collected.
EXCLUDING_OPTS = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--co", "--collect-only", "--lf", "--last-failed",
                  "-x", "--exitfirst", "--maxfail", "--sw", "--stepwise")
COLLECT_KEYS = ("testpaths", "python_files", "python_classes", "python_functions", "norecursedirs", "collect_ignore")
HOOKS = ("pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_deselected", "pytest_collect_file",
         "pytest_generate_tests",  # (a test given no cases is skipped)
         "pytest_pycollect_makeitem", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_makereport",
         "collect_ignore", "collect_ignore_glob")


def _options(name: str, text: str | None) -> dict[str, str]:
    """The pytest options of a configuration file's text ({} for none)."""
    if not text:
        return {}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / name.rsplit("/", 1)[-1]
        p.write_text(text, encoding="utf-8")
        found = pytest_section(p) or {}
    if name.endswith("pyproject.toml"):  # the pyproject reader keeps testpaths only: the rest by its own look
        try:
            import tomllib  # type: ignore[import-not-found]  # Python 3.11+

            tool = tomllib.loads(text).get("tool", {}).get("pytest", {})
            opts = tool.get("ini_options", tool) if isinstance(tool, dict) else {}
            found = {k: " ".join(v) if isinstance(v, list) else str(v) for k, v in opts.items()}
        except (ImportError, ValueError):
            pass
    return found


def _option(word: str) -> str:
    """A short option as pytest reads it: `-knot_slow` is `-k`; in a cluster of flags, `-qx` holds `-x`, and an
    option that takes a value ends the flags (`-rxs`: `-r xs`, the report's characters)."""
    if len(word) > 2 and word[0] == "-" and word[1] != "-":
        for ch in word[1:]:
            if ch in "kmx":
                return "-" + ch
            if ch in "pcorWn" or not ch.isalpha():
                break
    return word


def config_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """Tests taken out by configuration: an option in `addopts` that deselects or stops early, a collection key
    narrowed or changed. `sealed` and `current`: {configuration file: text (None: none)}."""
    out = []
    for name in sorted(set(sealed) | set(current)):
        before, now = _options(name, sealed.get(name)), _options(name, current.get(name))
        old_words = {_option(w) for w in (before.get("addopts") or "").replace("=", " ").split()}
        for word in map(_option, (now.get("addopts") or "").replace("=", " ").split()):
            if word in EXCLUDING_OPTS and word not in old_words:
                out.append({"test": name, "rule": "config-excluded", "what": f"addopts gained {word}"})
        for key in COLLECT_KEYS:
            if now.get(key, before.get(key)) != before.get(key):
                out.append({"test": name, "rule": "config-excluded",
                            "what": f"{key} changed from {before.get(key)!r} to {now.get(key)!r}"})
        was, is_now = _cov_fail_under(before.get("addopts")), _cov_fail_under(now.get("addopts"))
        if was is not None and (is_now is None or is_now < was):  # pytest-cov's threshold, in addopts
            out.append({"test": name, "rule": "coverage-lowered",
                        "what": f"--cov-fail-under {was:g} became {'none' if is_now is None else f'{is_now:g}'}"})
    return out


def _cov_fail_under(addopts: str | None) -> float | None:
    words = (addopts or "").replace("=", " ").split()
    for i, word in enumerate(words[:-1]):
        if word == "--cov-fail-under":
            try:
                return float(words[i + 1])
            except ValueError:
                return None
    return None


# Hooks that run before collection: honest with `config.addinivalue_line` (a marker) or reading an option; a
# finding when they set an option (`config.option.deselect = ...`, `config.args[:] = ...`) or bring a plugin in.
SETUP_HOOKS = ("pytest_configure", "pytest_sessionstart", "pytest_cmdline_main", "pytest_load_initial_conftests",
               "pytest_cmdline_preparse", "pytest_addoption")
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


def _hooks(text: str | None) -> set[str]:
    if not text:
        return set()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {"(does not parse)"}
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in HOOKS:
            found.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in SETUP_HOOKS and _sets_options(node):
            found.add(f"{node.name} setting the run's options or plugins")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name) and t.id in HOOKS)
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets) and node.value is not None:
                # each plugin by name: one added can deselect or skip (the list as it was, reordered, is none)
                items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                found.update(f"pytest_plugins {ast.unparse(i)}" for i in items)
    found.update(f"a {m} mark" for m in _marks(tree) if m in SKIPS)
    return found


def conftest_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """A collection or run hook (or a skip) in a conftest.py that it did not have at the seal."""
    out = []
    for name, text in sorted(current.items()):
        added = sorted(_hooks(text) - _hooks(sealed.get(name)))
        if added:
            out.append({"test": name, "rule": "collection-hook", "what": f"{', '.join(added)} added"})
    return out


# -- coverage thresholds and CI workflows ----------------------------------------------------------------------

COVERAGE_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")
TEST_WORDS = ("pytest", "tox", "nox", "make test", "unittest", "manage.py test")


def _fail_under(name: str, text: str | None) -> float | None:
    """The coverage threshold a file sets (`fail_under`), None for none."""
    if not text:
        return None
    if name.endswith("pyproject.toml"):
        m = re.search(r"^\[tool\.coverage\.report\][^\[]*?^fail_under\s*=\s*([0-9.]+)", text, re.M | re.S)
    else:
        section = r"\[report\]" if name.endswith(".coveragerc") else r"\[coverage:report\]"
        m = re.search(section + r"[^\[]*?^fail_under\s*[=:]\s*([0-9.]+)", text, re.M | re.S)
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


def coverage_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """A coverage threshold lowered or removed."""
    out = []
    for name in sorted(current):
        before, now = _fail_under(name, sealed.get(name)), _fail_under(name, current.get(name))
        if before is not None and (now is None or now < before):
            out.append({"test": name, "rule": "coverage-lowered",
                        "what": f"fail_under {before:g} became {'none' if now is None else f'{now:g}'}"})
    return out


def _truthy(value: Any) -> bool:
    """`continue-on-error`'s value as GitHub reads it: true, or an expression that is (`${{ true }}`, "true")."""
    return value is True or (isinstance(value, str) and value.strip().strip("${} ").lower() == "true")


def _or_else(run: str) -> bool:
    """A command after `||` that lets a failure through (`|| true`, `|| echo failed`); `|| exit 1` and `|| false`
    keep it a failure."""
    for after in re.findall(r"\|\|([^\n]*)", run):  # what runs on a failure: its last command decides
        last = [c for c in re.split(r"&&|;|\|\|", after.replace("(", " ").replace(")", " ").replace("{", " ")
                                                           .replace("}", " ")) if c.strip()]
        words = last[-1].split() if last else []
        if not words or not (words[0] == "false" or (words[0] == "exit" and words[1:2] and words[1] != "0")):
            return True
    return False


# Options of a CI step's pytest command that take tests out of its run (`-x` and the like end it early, but a
# failure still fails the step).
CI_EXCLUDING = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--co", "--collect-only", "--lf", "--last-failed")


def _pytest_options(run: str) -> list[str]:
    """The options given to pytest in a step's commands (`python -m pytest -k 'not x'`: `-k`; `--ignore=x`:
    `--ignore`), as pytest reads them (`_option`); the words before `pytest` are the launcher's."""
    import shlex

    out = []
    for command in re.split(r"&&|\|\||;|\||\n", run.replace("\\\n", " ")):
        try:
            words = [w.strip() for w in shlex.split(command)]
        except ValueError:
            words = command.split()
        at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in ("pytest", "py.test")), None)
        if at is not None:
            out += [_option(w.split("=", 1)[0]) for w in words[at + 1:] if w.startswith("-")]
    return out


def _test_steps(text: str | None) -> dict[str, dict[str, Any]] | None:
    """{job/step: {"ignored": failures ignored, "excludes": pytest options that take tests out}} of a workflow's steps
    that run the tests; None when it does not parse."""
    if not text:
        return {}
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    out: dict[str, dict[str, Any]] = {}
    jobs = data.get("jobs") if isinstance(data, dict) else None
    for job, body in (jobs or {}).items():
        if not isinstance(body, dict):
            continue
        job_ignores = _truthy(body.get("continue-on-error"))
        for i, step in enumerate(body.get("steps") or []):
            run = step.get("run") if isinstance(step, dict) else None
            if isinstance(run, str) and any(w in run for w in TEST_WORDS):
                ignored = job_ignores or _truthy(step.get("continue-on-error")) or _or_else(run) or "set +e" in run
                out[f"{job}/{step.get('name') or i}"] = {"ignored": ignored, "excludes": sorted(
                    {w for w in _pytest_options(run) if w in CI_EXCLUDING})}
    return out


def ci_findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """A CI workflow's test step removed, made to ignore failures, or given a pytest option that takes tests out (one
    no sealed test step of the workflow had: a step renamed keeps its options)."""
    out = []
    for name in sorted(current):
        before, now = _test_steps(sealed.get(name)), _test_steps(current.get(name))
        if not before or now is None:
            continue
        if len(now) < len(before):
            out.append({"test": name, "rule": "ci-test-removed",
                        "what": f"{len(before)} test step(s) at the seal, {len(now)} now"})
        newly = sorted(k for k, v in now.items() if v["ignored"] and not (before.get(k) or {}).get("ignored", False))
        if newly:
            out.append({"test": name, "rule": "ci-ignores-failures", "what": f"{', '.join(newly)} now ignores its failures"})
        had = {w for v in before.values() for w in v.get("excludes", [])}
        for key, v in sorted(now.items()):
            for word in v["excludes"]:
                if word not in had:
                    out.append({"test": name, "rule": "config-excluded", "what": f"the test step {key} gained {word}"})
    return out
