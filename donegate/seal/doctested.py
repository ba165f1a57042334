"""Doctests of the product's own modules (docs/own-suite.md, "Doctests of the product's modules").

A project whose pytest configuration says `--doctest-modules` and names no `testpaths` (inflect 7.4.0, every project of
jaraco's layout) collects, besides its test folders, the examples in every module's docstrings. The seal keeps them in
`own-suite.json` (`doctests`: per module file its importable name, the folder pytest puts on sys.path for it, and each
docstring's text as it was at the seal, found by `ast`); the runs make pytest's own doctest items of that text with the
agent's module as their namespace (`hidden/doctests.py`), under the ids pytest gives them (`calc.py::calc.twice`), so
the agent's edited docstring is never what runs. What the agent did to a sealed docstring is compared here (`findings`,
`to_actual`, `changed`): its examples deleted, skipped, loosened, or an expected output changed to what the code gives.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import shlex
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

OPTION = "--doctest-modules"
GLOB = "--doctest-glob"  # the text files whose examples pytest collects (its default: `test*.txt`)
# pytest's default `norecursedirs`, which a configuration's key replaces
NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
SKIP_DIRS = {"__pycache__", ".git", ".venv", "node_modules", ".tox", ".nox", "site-packages"}
MAX_BYTES = 4 << 20  # of docstrings kept
# Option flags that let an example's output differ from what it says (a `+SKIP` is its own rule)
LOOSER = ("ELLIPSIS", "NORMALIZE_WHITESPACE", "IGNORE_EXCEPTION_DETAIL")


def read(project: Path, config: str | None) -> dict[str, str]:
    """The sealed configuration's pytest keys that decide what its doctest options collect (addopts, norecursedirs):
    read once at the seal, and given to `wanted`, `seal` and `texts`."""
    if not config:
        return {}
    if config == "pyproject.toml":
        from donegate.core.util import parsed_toml

        try:  # (None on Python 3.10: not read, the doctests not sealed, as before)
            tool = (parsed_toml((project / config).read_text(encoding="utf-8")) or {}).get("tool", {})
        except (OSError, UnicodeDecodeError):
            return {}
        tool = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        opts = (tool.get("ini_options") or {}) if isinstance(tool, dict) else {}
        return {k: " ".join(map(shlex.quote, v)) if isinstance(v, list) else str(v)
                for k, v in opts.items() if k in ("addopts", "norecursedirs")}
    from donegate.seal.pytest_files import pytest_section

    return pytest_section(project / config) or {}


def wanted(ini: dict[str, str]) -> bool:
    """Whether the configuration's pytest (its keys `ini`: `read`) collects the product's modules' doctests
    (`--doctest-modules` in its addopts)."""
    try:
        return OPTION in shlex.split(ini.get("addopts", ""))
    except ValueError:
        return False


def norecurse(ini: dict[str, str]) -> list[str]:
    """The folders pytest does not walk into: the configuration's `norecursedirs`, else pytest's default."""
    return ini["norecursedirs"].split() if ini.get("norecursedirs") else list(NORECURSE)


def _module_name(project: Path, rel: str) -> tuple[str, str]:
    """(the module's name, the folder pytest puts first on sys.path to import it, relative), as pytest's `prepend`
    import mode makes them: the package folders above it, each with an `__init__.py`."""
    path = Path(rel)
    names = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while folder.parts and (project / folder / "__init__.py").is_file():
        names.insert(0, folder.name)
        folder = folder.parent
    return ".".join(names), folder.as_posix() if folder.parts else ""


# doctest's own option directive (`# doctest: +SKIP`), left out of an example's source when examples are compared
_DIRECTIVE = re.compile(r"#\s*doctest:\s*[^\n\'\"]*$", re.M)


def _examples(text: str) -> list[tuple[str, str, dict[int, bool]]] | None:
    """[(source without its option directive, expected output, options)] of a docstring's examples."""
    import doctest

    try:
        return [(_DIRECTIVE.sub("", e.source).strip(), e.want, e.options)
                for e in doctest.DocTestParser().get_examples(text)]
    except ValueError:  # doctest refuses its layout: pytest would fail its collection as well
        return None


def docstrings(text: str, module: str) -> dict[str, dict[str, Any]] | None:
    """{doctest name: {"text": the docstring, "doc": its first line (0-based, doctest's `lineno`), "line": the line
    of its `def`/`class` (1-based)}} of the docstrings of a module's source holding examples, named as doctest's finder
    names them (the module, its functions and classes, their methods and nested classes). None: it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, dict[str, Any]] = {}

    def add(name: str, node: Any, line: int) -> None:
        body = getattr(node, "body", None)
        first = body[0] if body else None
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
            return
        doc = first.value.value
        if ">>>" in doc and _examples(doc):
            out[name] = {"text": doc, "doc": first.value.lineno - 1, "line": line}

    def visit(node: Any, prefix: str) -> None:
        for sub in node.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                add(f"{prefix}.{sub.name}", sub, sub.lineno)
                if isinstance(sub, ast.ClassDef):  # doctest's finder goes into classes, not into functions
                    visit(sub, f"{prefix}.{sub.name}")

    add(module, tree, 1)
    visit(tree, module)
    return out


def seal(project: Path, ini: dict[str, str], how: str, collected: list[str],
         product: Callable[[Path, str], bool] | None = None) -> dict[str, dict[str, Any]]:
    """{module file (relative): {"module", "base", "tests": {name: {"text", "doc", "line"}}}} of the product's modules
    holding doctests, when the configuration's pytest (its keys `ini`: `read`) collects them (`wanted`): with no
    `testpaths` (`how`: `usual`), every module outside the test folders `collected` (whose own doctests pytest collects
    from the sealed copies); with `testpaths` or paths named, the product's modules under them (`product`:
    `own.product`, never sealed as the suite's)."""
    if not wanted(ini):
        return {}
    skip = norecurse(ini)
    if how != "usual":
        return _modules(project, sorted(rel for top in collected for rel in _walk(project, top, skip)
                                        if product is not None and product(project, rel)))
    inside = tuple(c.rstrip("/") + "/" for c in collected)
    return _modules(project, [rel for rel in _walk(project, ".", skip) if rel not in collected and not rel.startswith(inside)])


def globs(ini: dict[str, str]) -> list[str]:
    """The `--doctest-glob` patterns of the configuration's addopts (pytest's default, `test*.txt`, for none)."""
    try:
        words = shlex.split(ini.get("addopts", ""))
    except ValueError:
        return []
    found = [w.split("=", 1)[1] for w in words if w.startswith(GLOB + "=")]
    found += [words[i + 1] for i, w in enumerate(words[:-1]) if w == GLOB]
    return found or ["test*.txt"]


def texts(project: Path, ini: dict[str, str], how: str, collected: list[str]) -> list[str]:
    """The project's text files outside the test folders `collected` whose examples its pytest (its configuration's
    keys `ini`: `read`) collects (docs/own-suite.md, "Doctests of text files"): with no `testpaths` it walks the whole
    project, and a file matching a `--doctest-glob` pattern (a README.md, docs/*.rst) is a doctest file. Sealed as the
    suite's own files (their text as at the seal), at most `MAX_BYTES` of them; a file without `>>>` is none."""
    if how != "usual":
        return []
    patterns = [p for p in globs(ini) if not p.endswith(".py")]
    skip = norecurse(ini)
    inside = tuple(c.rstrip("/") + "/" for c in collected)
    out, size = [], 0
    for rel in _walk(project, ".", skip, lambda f: not f.endswith(".py") and any(
            fnmatch.fnmatch(f, p) for p in patterns)):
        if rel in collected or rel.startswith(inside):
            continue
        try:
            text = (project / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        size += len(text)
        if ">>>" in text and size <= MAX_BYTES:
            out.append(rel)
    return out


def text_entries(pack: dict[str, Any], texts: list[str]) -> dict[str, dict[str, Any]]:
    """The sealed doctest text files `texts` (`own_changed.doctext`: those of `doctext` and those inside the test
    folders) read as the modules' doctests are (`findings`, `to_actual`, `changed`): one doctest each, named as pytest
    names it (`README.md::README.md`), its text as sealed."""
    files = pack.get("files") or {}
    return {rel: {"module": None, "text_file": True, "tests": {rel.rsplit("/", 1)[-1]: {
        "text": (files.get(rel) or {}).get("text") or "", "doc": 0, "line": 0}}} for rel in texts}


def _walk(project: Path, top: str, skip: list[str], keep: Callable[[str], bool] | None = None) -> list[str]:
    """The `.py` files under `top` (relative to the project) pytest's `--doctest-modules` would import, as it walks:
    `norecursedirs` (`skip`), environments and caches left out, and `conftest.py`, `__main__.py` and links (`keep`:
    the file names wanted instead)."""
    out = []
    for folder, dirs, files in os.walk(project / top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not any(fnmatch.fnmatch(d, p) for p in skip)
                         and not (Path(folder) / d / "pyvenv.cfg").exists())
        for f in sorted(files):
            path = Path(folder) / f
            if (keep(f) if keep is not None else f.endswith(".py") and f not in ("conftest.py", "__main__.py")) \
                    and not path.is_symlink():
                out.append(path.relative_to(project).as_posix())
    return out


def _modules(project: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """{module file: its doctests} of the files `names` whose docstrings hold examples (at most `MAX_BYTES` of them)."""
    out: dict[str, dict[str, Any]] = {}
    size = 0
    for rel in names:
        try:
            text = (project / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if ">>>" not in text or rel.rsplit("/", 1)[-1] == "setup.py" and re.search(r"setuptools|distutils", text):
            continue  # (pytest leaves a setup.py out)
        module, base = _module_name(project, rel)
        found = docstrings(text, module)
        if not found:
            continue
        size += sum(len(t["text"]) for t in found.values())
        if size > MAX_BYTES:
            return out  # the first modules' (a project of this many docstrings: the rest are not sealed)
        out[rel] = {"module": module, "base": base, "tests": found}
    return out


def ids(doctests: dict[str, dict[str, Any]]) -> dict[str, int]:
    """{test id: the line of its `def`} (`own.where`)."""
    return {f"{rel}::{name}": t["line"] for rel, m in doctests.items() for name, t in m["tests"].items()}


def _now(doctests: dict[str, dict[str, Any]], current: dict[str, str | None]) -> dict[str, dict[str, Any] | None]:
    """{module file: its docstrings now (None: gone, or does not parse)} of the changed sealed modules."""
    return {rel: (None if text is None else {next(iter(doctests[rel]["tests"])): {"text": text}}
                  if doctests[rel].get("text_file") else docstrings(text, doctests[rel]["module"]))
            for rel, text in current.items() if rel in doctests}


def mine(doctests: dict[str, dict[str, Any]], rel: str, text: str) -> bool:
    """Whether the module `rel`'s docstrings (`text`, now) hold examples the seal did not keep for it: a doctest the
    agent added or changed, which runs as it is now (the agent's own test)."""
    sealed = (doctests.get(rel) or {}).get("tests") or {}
    found = docstrings(text, (doctests.get(rel) or {}).get("module") or Path(rel).stem)
    if not found:
        return False
    if not sealed:
        return True
    kept = {name: _examples(t["text"]) for name, t in sealed.items()}
    return any(name not in kept or (_examples(t["text"]) or []) not in ([], kept[name]) for name, t in found.items())


def changed(doctests: dict[str, dict[str, Any]], current: dict[str, str | None]) -> set[str]:
    """The sealed doctests whose examples the agent changed (or deleted): a failure of one is a contract change."""
    out = set()
    for rel, now in _now(doctests, current).items():
        for name, t in doctests[rel]["tests"].items():
            if _examples(((now or {}).get(name) or {}).get("text", "")) != _examples(t["text"]):
                out.add(f"{rel}::{name}")
    return out


def findings(doctests: dict[str, dict[str, Any]], current: dict[str, str | None], passing: set[str]) -> list[dict[str, str]]:
    """What the changed modules' docstrings weaken of the sealed doctests that passed at the seal: examples deleted
    (`deleted`, `assert-removed`), given `+SKIP` (`skipped`), given an option that lets their output differ or their
    output made `...` (`assert-loosened`). An example added, the prose around them reworded, or the examples moved as
    they were to another docstring of the module, is none."""
    out = []
    for rel, now in _now(doctests, current).items():
        if now is None and current.get(rel) is not None:
            continue  # it does not parse: the sealed doctest's run names that
        kept = [e for t in (now or {}).values() for e in _examples(t["text"]) or []]
        for name, t in doctests[rel]["tests"].items():
            tid = f"{rel}::{name}"
            if tid not in passing:
                continue
            sealed, mine = _examples(t["text"]) or [], _examples(((now or {}).get(name) or {}).get("text", "")) or []
            if mine == sealed:
                continue
            pool = mine or kept  # (examples moved to another docstring of the module count where they are)
            sources: dict[str, list[Any]] = {}
            for source, want, options in pool:
                sources.setdefault(source.strip(), []).append((want, options))
            gone = [s for s, _, _ in sealed if s.strip() not in sources]
            if len(gone) == len(sealed):
                out.append({"test": tid, "rule": "deleted", "what": "its examples were deleted" if current.get(rel) is not None
                            else "its file was deleted" if doctests[rel].get("text_file") else "its module was deleted"})
                continue
            if gone:
                out.append({"test": tid, "rule": "assert-removed",
                            "what": f"{len(gone)} of its {len(sealed)} examples deleted (>>> {gone[0].strip()})"})
            import doctest

            flags = {getattr(doctest, n): n for n in (*LOOSER, "SKIP")}
            for source, want, options in sealed:
                for now_want, now_options in sources.get(source.strip(), [])[:1]:
                    added = sorted(flags[f] for f, on in now_options.items() if on and not options.get(f) and f in flags)
                    if "SKIP" in added:
                        out.append({"test": tid, "rule": "skipped", "what": f"+SKIP added to >>> {source.strip()}"})
                    elif added or now_want.strip() in ("...", "") and want.strip() not in ("...", ""):
                        what = f"+{', +'.join(added)} added" if added else f"its expected output {want.strip()!r} made " \
                            f"{now_want.strip() or 'empty'!r}"
                        out.append({"test": tid, "rule": "assert-loosened", "what": f"{what} (>>> {source.strip()})"})
    return out


def to_actual(doctests: dict[str, dict[str, Any]], current: dict[str, str | None], tid: str,
              message: str) -> dict[str, str] | None:
    """`expected-to-actual` of a doctest: the sealed example failed at this stop (`message`: `>>> SOURCE`, `Expected:`,
    its output, `Got:`, the product's), and the agent's docstring now expects what the product gave."""
    rel, _, name = tid.partition("::")
    m = re.match(r">>> (.*)\nExpected:\n(.*?)\nGot:\n(.*)\Z", message.strip(), re.S)
    if rel not in doctests or m is None or current.get(rel) is None:
        return None
    source, expected, got = m.group(1).strip(), _dedent(m.group(2)), _dedent(m.group(3))
    now = (_now(doctests, {rel: current[rel]}).get(rel) or {}).get(name) or {}
    for s, want in [(s, w.strip()) for s, w, _ in _examples(now.get("text", "")) or []]:
        if s == source and want == got and want != expected:
            return {"test": tid, "rule": "expected-to-actual",
                    "what": f"its expected output {expected} was changed to {got}, what the code returns now"}
    return None


def _dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block).strip()
