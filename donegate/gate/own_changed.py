"""What changed since the seal, as the own-suite stage reads it (`donegate.gate.own_suite`): the project's test files
added or changed, the sealed test files changed or gone, their conftest.py files, the data files of the tests and the
modules of the sealed doctests, each relative to the project, with their text now."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up time on every stop; annotations are strings anyway
    from typing import Any, Callable, Iterator

    from donegate.seal import store
    from donegate.tree import statcache

from donegate.core import fsafe

TEST_NAMES = ("test_*.py", "*_test.py")
SKIP_PARTS = {".venv", "venv", "node_modules", ".tox", ".nox", "site-packages"}
# `seal.coverage_files.COVERAGE_FILES`, here so that a stop changing none of them does not import the rules
COVERAGE_FILES = (".coveragerc", ".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml")


def inside(changed: list[str], prefix: str) -> Iterator[tuple[str, str]]:
    """(its path in the repository, its path in the project) of each path `changed` (the repository's) inside the
    project, the folder `prefix` of the repository ("": the repository)."""
    for name in changed:
        if not prefix:
            yield name, name
        elif name.startswith(prefix + "/"):
            yield name, name[len(prefix) + 1:]


def since_seal(repo: Path, st: store.Store, look: statcache.Tree | None) -> list[str]:
    found = st.changes(look)
    if found is None:
        from donegate.tree import git

        return git.changed_since(repo, st.manifest["base"])
    return found[0]


def changed_tests(repo: Path, changed: list[str], prefix: str) -> list[str]:
    """The project's test files (as pytest names them) added or changed since the seal (`changed`: `since_seal`) that
    are there now, relative to the project."""
    from donegate.seal.store import matcher

    match = matcher(TEST_NAMES)
    out = []
    for name, rel in inside(changed, prefix):
        parts = rel.split("/")
        if match(parts[-1]) and not SKIP_PARTS & set(parts) and fsafe.digest(repo / name) not in (None, "missing") \
                and (repo / name).is_file() and not (repo / name).is_symlink():
            out.append(rel)
    return sorted(out)


def sealed_changed(changed_since: list[str], pack: dict[str, Any], prefix: str) -> list[str]:
    """The sealed test files that changed or are gone since the seal (relative to the project), and those under a
    conftest.py that changed (a helper they import from it: `seal.calls`), the project's own only: one above it (the
    repository's root, `prefix` a subfolder) is never loaded by its pytest, and its folder "" is a prefix of every
    name."""
    changed = {rel for _, rel in inside(changed_since, prefix)}
    folders = tuple(n[:-len("conftest.py")] for n in changed if n.rsplit("/", 1)[-1] == "conftest.py")
    return sorted(name for name in pack.get("shape", {}) if name in changed or name.startswith(folders))


def data_changed(repo: Path, changed: list[str], pack: dict[str, Any], prefix: str,
                 texts: list[str]) -> dict[str, str | None]:
    """{data file: its text now (None: gone)} of the sealed files of the tests that are not Python nor configuration
    (`tests/inflections.txt`) changed since the seal (relative to the project); `texts`: the sealed text doctests
    (`doctext`), not data."""
    from donegate.seal.own import CONFIGS

    files = pack.get("files") or {}
    out = {}
    for name, rel in inside(changed, prefix):
        if rel in files and not rel.endswith(".py") and rel not in CONFIGS and rel not in COVERAGE_FILES and rel != "tox.toml" \
                and not runs_tests_file(rel) \
                and not rel.startswith(".github/") and rel not in texts:
            out[rel] = text(repo / name)
    return out


def runs_tests_file(rel: str) -> bool:
    """A file of the project's own that holds test commands (a Makefile, a noxfile, `scripts/*.sh`, a composite
    action: `seal.scripts`), here so that a stop changing none does not import the rules; never a test data file."""
    return rel in ("Makefile", "makefile", "GNUmakefile", "noxfile.py") or rel.endswith(".sh") and rel.startswith(
        "scripts/") or rel.startswith(".github/actions/") and rel.rsplit("/", 1)[-1] in ("action.yml", "action.yaml")


def helpers_changed(repo: Path, changed: list[str], pack: dict[str, Any], prefix: str) -> dict[str, str | None]:
    """{helper module: its text now (None: gone)} of the sealed Python files of the suite that are neither test files
    nor conftest.py (`tests/expected.py`, `tests/helpers.py`) changed since the seal (relative to the project): the
    constants a test imports from one are its expected values (`own_expected.imports`)."""
    files, shapes = pack.get("files") or {}, pack.get("shape") or {}
    return {rel: text(repo / name) for name, rel in inside(changed, prefix)
            if rel.endswith(".py") and rel in files and rel not in shapes and rel.rsplit("/", 1)[-1] != "conftest.py"
            and rel != "noxfile.py"}


def doctext(pack: dict[str, Any]) -> list[str]:
    """The sealed doctest text files (relative to the project): those outside the test folders (`doctext`) and those
    inside them that the sealed configuration's pytest collected as doctests (its `--doctest-glob`, `test*.txt` by
    default: `tests/test_calc.txt`, one test named as its file, `tests/test_calc.txt::test_calc.txt`), whose examples
    are compared as a docstring's (`seal.doctested`), not read as a data file's rows (`data_changed`). Worked out once
    a stop (`own_suite.OwnRuns.texts`) and handed to its readers."""
    files = pack.get("files") or {}
    found = set(pack.get("doctext") or ())
    for tid in pack.get("tests") or ():
        rel, _, name = tid.partition("::")
        if name == rel.rsplit("/", 1)[-1] and not rel.endswith(".py") and ">>>" in ((files.get(rel) or {}).get("text") or ""):
            found.add(rel)
    return sorted(found)


def texts_mine(repo: Path, changed: list[str], pack: dict[str, Any], prefix: str) -> list[str]:
    """The text doctests the agent added since the seal (relative to the project): a file that is not sealed, holds
    `>>>` and that the project's pytest collects as doctests (a `--doctest-glob` pattern of its configuration now,
    `test*.txt` by default; under the sealed test folders, or anywhere when none were configured, as pytest walks):
    run as it is now, as the agent's own test (`tests/test_more.txt`), as a new `tests/test_*.py` is."""
    files, found = pack.get("files") or {}, []
    under = tuple(p.rstrip("/") + "/" for p in pack.get("paths") or [])
    for name, rel in inside(changed, prefix):
        parts = rel.split("/")
        if rel.endswith(".py") or rel in files or SKIP_PARTS & set(parts) or any(p.startswith(".") for p in parts) \
                or not (pack.get("by") == "usual" or rel.startswith(under)):
            continue
        now = text(repo / name)
        if now is not None and ">>>" in now:
            found.append(rel)
    if not found:
        return []  # (before reading the configuration: most stops add no text file)
    import fnmatch

    from donegate.seal import doctested, own

    if "doctest" in own.switched_off(repo / prefix):
        return []  # (`-p no:doctest`: pytest collects no text doctest, and one named errors "not found")
    left = own.ignored(repo / prefix)
    found = [rel for rel in found if not any(rel == p or rel.startswith(p + "/") for p in left)]

    ini = doctested.read(repo / prefix, pack.get("config"))
    globs, skip = doctested.globs(ini), doctested.norecurse(ini)
    # (pytest's `fnmatch_ex`: a pattern without a `/` matches the file's name; it walks into no `norecursedirs`)
    return sorted(rel for rel in found if any(fnmatch.fnmatch(rel if "/" in g else rel.rsplit("/", 1)[-1], g)
                                              for g in globs)
                  and not any(fnmatch.fnmatch(d, p) for d in rel.split("/")[:-1] for p in skip))


def doctested_changed(repo: Path, changed_since: list[str], pack: dict[str, Any], prefix: str,
                      texts: list[str]) -> dict[str, str | None]:
    """{module file: its text now (None: gone)} of the product's modules holding sealed doctests, and of the sealed
    doctest text files (`texts`: `doctext`), that changed since the seal (relative to the project)."""
    doctests = [*(pack.get("doctests") or ()), *texts]
    if not doctests:
        return {}
    changed = {rel for _, rel in inside(changed_since, prefix)}
    return {rel: text(repo / prefix / rel) for rel in sorted(doctests) if rel in changed}


def conftests(repo: Path, current: dict[str, str | None], prefix: str) -> dict[str, str | None]:
    """{conftest.py: its text now} of the folders of the changed test files and their parents (the helpers the tests
    import from them: `seal.calls`); none read when no sealed test file changed."""
    from donegate.seal import calls

    names = {n for name in current for n in calls.conftests_of(name)}
    return {n: text(repo / prefix / n) for n in sorted(names)}


def added(repo: Path, pack: dict[str, Any], changed: list[str], prefix: str) -> dict[str, str | None]:
    """{test file: its text} of the test files the agent added (a sealed test moved there as it was is not deleted:
    `loosened.findings`)."""
    sealed = pack.get("shape") or {}
    return {name: text(repo / prefix / name) for name in changed if name not in sealed}


def reader(root: Path) -> Callable[[str], str | None]:
    """`read(rel)`: the text of the project's file `rel` (under `root`) as it is now (`text`), each file read once
    however many rules of the stop ask for it."""
    texts: dict[str, str | None] = {}

    def read(rel: str) -> str | None:
        if rel not in texts:
            texts[rel] = text(root / rel)
        return texts[rel]

    return read


def text(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return fsafe.read_text(path)
    except (OSError, UnicodeDecodeError):
        return None


def doctested_mine(repo: Path, changed: list[str], pack: dict[str, Any], prefix: str,
                   documented: dict[str, str | None]) -> list[str]:
    """The product's modules (relative to the project) whose doctests the agent added or changed since the seal, when
    the sealed configuration's pytest collects them (`doctest_modules`): run as they are now, as its own tests."""
    if not pack.get("doctest_modules"):
        return []
    from donegate.seal import doctested

    files, out = pack.get("files") or {}, []
    tests = tuple(p.rstrip("/") + "/" for p in pack.get("paths") or [])
    for name, rel in inside(changed, prefix):
        parts = rel.split("/")
        if not rel.endswith(".py") or rel in files or rel.startswith(tests) or SKIP_PARTS & set(parts) \
                or parts[-1] in ("conftest.py", "setup.py", "__main__.py") or any(p.startswith(".") for p in parts):
            continue
        now = documented[rel] if rel in documented else text(repo / name)
        if now is not None and ">>>" in now and doctested.mine(pack.get("doctests") or {}, rel, now):
            out.append(rel)
    return sorted(out)


def sealed_shapes(pack: dict[str, Any], names: Any) -> dict[str, dict[str, Any]]:
    """{test file: {test: shape}} of the sealed test files `names`: as the store keeps them when sealed by this kit's
    rules (`loosened.RULES`), else read again from their sealed text (and the sealed conftest.py files) as the current
    files are: a store sealed by an earlier kit keeps the shapes of its own reading (before stop 53 without the
    helpers a test calls), which compared with this reading named what the agent did not do (a helper's old skip, a
    test moved as it was, a contract changed). The stored shape where the text is not kept (a file that is not UTF-8)
    or does not parse."""
    from donegate.seal import calls, loosened

    files, stored = pack.get("files") or {}, pack.get("shape") or {}
    loosened.dead.interpreter(pack.get("python"))  # (its tests' version guards read as the project's Python, as sealed)
    if pack.get("shape_rules") == loosened.RULES:  # sealed by these rules: as kept
        return {name: stored[name] for name in names if name in stored}
    conftests = {n: b.get("text") for n, b in files.items() if n.rsplit("/", 1)[-1] == "conftest.py"}
    out = {}
    for name in names:
        text = (files.get(name) or {}).get("text")
        if name in stored:
            found = loosened.tests_of(text, calls.chain(name, conftests)) if text is not None else None
            out[name] = found if found is not None else stored[name]
    return out


def changed_test_ids(shapes: dict[str, dict[str, Any]], current: dict[str, str | None],
                      conftests: dict[str, str | None] | None = None) -> set[str]:
    """The sealed tests whose source (or a helper's they call) the agent changed (or deleted); `shapes`: the sealed
    files' (`sealed_shapes`)."""
    from donegate.seal import calls, loosened

    out = set()
    for name, text in current.items():
        now = (loosened.tests_of(text, calls.chain(name, conftests or {})) if text is not None else {}) or {}
        for test, shape in shapes.get(name, {}).items():
            if (now.get(test) or {}).get("src") != shape["src"]:
                out.add(f"{name}::{test}")
    return out
