"""Many weakenings of a project's own tests judged in one stop (tests/gate/test_own_red.py's tables).

A case is `{file: text now}` against a sealed project. `stop(...)` gives the sealed project one copy of each of its
test modules per case (`tests/test_calc.py` -> `tests/test_calc_03.py` for the case at index 3), writes each case's
edit into its own copies, and runs ONE stop for them all, once in the whole test run (`pool.SharedRuns`, threads=0:
the first xdist worker that asks runs it, the others read its result). Each case then reads its own finding by its own
copy's name (`Batch.named`): the weakening named with its rule on that file's test, in the block and the ledger.

Each copy's tests are renamed too (`test_add` -> `test_add_03`, `TestAdd` -> `TestAdd_03`, the same in the case's
text): the kit takes a test gone from one file whose source is still in another changed file as moved, not deleted,
and copies of one test would hide each other's deletion. The block is not capped (`feedback_chars`), so each case's
line is there to read.

Only cases whose every effect stays in the file they edit may share a stop: an edit of a conftest, the pytest, tox or
coverage configuration or a collection hook changes how every module runs or is read, so it could hide or fake another
case's finding; `stop` refuses a case that edits a file the project does not copy (`copied`). A CI workflow is copied:
GitHub runs each workflow file on its own and the kit judges each by itself (`excluded.ci_findings`, a finding named
by the workflow's file), no test run reads one; but not a workflow that calls or is called by another
(`workflow_call`, `uses: ./`): its events are its callers'. Only the files some case edits are copied."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from tests.support.repos import make_repo, run_hook, seal, stop_lines, stop_payload


def copied(path: str, text: str | None = "") -> bool:
    """A test module of its own (`test_*.py`, no conftest) or a CI workflow that neither calls nor is called by another
    (`text`: what the case writes there): what a case may edit in a batch."""
    name = PurePosixPath(path).name
    if workflow(path):
        return text is not None and "workflow_call" not in text and "uses: ./" not in text
    return name.startswith("test_") and name.endswith(".py")


def confined(path: str, text: str | None) -> bool:
    """A conftest.py whose effects stay with the tests of its own folder: at its top only imports, plain names bound
    and functions that are no pytest hook (fixtures: an autouse one patches for its folder's tests, and undoes it).
    Anything else there (`unittest.TestCase.x = ...`, a call, a hook) reaches every module of the run: it stops alone."""
    if PurePosixPath(path).name != "conftest.py" or text is None:
        return False
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("pytest_"):
                return False
        elif isinstance(node, ast.Assign):
            if not all(isinstance(t, ast.Name) for t in node.targets):
                return False
        elif not isinstance(node, (ast.Import, ast.ImportFrom)):
            return False
    return True


def folder_copy(path: str, folder: str, index: int) -> str:
    """`path` under `folder` in the case's own subfolder: `tests/test_calc.py` -> `tests/c03/test_calc_03.py` (a test
    module keeps a name of its own: pytest's `prepend` imports it by its basename), `tests/conftest.py` ->
    `tests/c03/conftest.py`."""
    rel = PurePosixPath(path).relative_to(folder)
    name = rel.name if rel.name == "conftest.py" else PurePosixPath(copy_name(rel.name, index)).name
    return str(PurePosixPath(folder) / f"c{index:02d}" / rel.parent / name)


def workflow(path: str) -> bool:
    return path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml"))


def copy_name(path: str, index: int) -> str:
    p = PurePosixPath(path)
    return str(p.with_name(f"{p.stem}_{index:02d}{p.suffix}"))


def _tests(text: str) -> list[str]:
    """The names of the test functions and classes `text` defines (and its classes' test methods)."""
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out.append(node.name)
            out += [f.name for f in node.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            out.append(node.name)
    return out


def tagged(text: str, names: list[str], index: int) -> str:
    """`text` with each of `names` (whole words) given the copy's suffix."""
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: f"{m[1]}_{index:02d}", text) if names \
        else text


@dataclass
class Batch:
    returncode: int
    stderr: str
    weakened: list[dict]
    names: dict[str, dict[str, str]]  # {case: {file: its copy}}
    tests: list[str]  # the test names the copies rename
    index: dict[str, int]  # {case: its copies' suffix}

    def as_copied(self, case: str, text: str) -> str:
        """`text` (a test id, a path) naming `case`'s copies and their tests instead of the project's."""
        for path, copy in self.names[case].items():
            text = text.replace(path, copy).replace(PurePosixPath(path).name, PurePosixPath(copy).name)
        return tagged(text, self.tests, self.index[case])

    def named(self, case: str, test: str, rule: str) -> list[str]:
        """What is missing of `case`'s finding: `test` (`tests/test_calc.py::test_add`, in the project's own names)
        weakened by `rule`, in the block's line of that test and in the stop's ledger line. [] when all is there."""
        test = self.as_copied(case, test)
        lines = [line for line in self.stderr.splitlines() if f"a test of the project was weakened: {test}: " in line]
        missing = [] if self.returncode == 2 else [f"the stop's exit {self.returncode}, not 2"]
        if not any(f"[{rule}];" in line for line in lines):
            missing.append(f"no block line of {test} naming [{rule}] (lines of it: {lines})")
        if not any(w.get("test") == test and w.get("rule") == rule for w in self.weakened):
            missing.append(f"no ledger finding {{test: {test}, rule: {rule}}}")
        return missing


def stop(tmp_path_factory, kit_home: Path, name: str, files: dict[str, str], hidden: str, product: dict[str, str],
         cases: dict[str, dict[str, str]], folder: str | None = None, beside: dict[str, dict[str, str]] | None = None
         ) -> Batch:
    """One stop of every case of `cases` at once (see the module's docstring): the project of `files` (each test module
    copied once per case) sealed with the hidden test `hidden`, `product` written over it (the request done right), each
    case's files written into its own copies. Sealed and stopped under `kit_home`'s donegate.yaml. `folder`: the
    whole test folder copied once per case instead, into a subfolder of its own (`folder_copy`), its conftest.py with
    it: a case may then edit its conftest.py too, where what it does stays with its folder's tests (`confined`).
    `beside`: more cases of the same project, copied and sealed but not edited here (a table's look-alikes beside its
    attacks): the stops of both tables, each passing the other as `beside`, then share one seal (`repos.sealed_copy`,
    the copies numbered in the cases' sorted order), each stop still once in the run."""
    from tests.support.pool import SharedRuns, shared_root

    def allowed(path: str, text: str | None) -> bool:
        return copied(path, text) or bool(folder) and path.startswith(f"{folder}/") and confined(path, text)

    every = {case: edit for case, edit in (sorted({**(beside or {}), **cases}.items()) if beside else cases.items())}
    assert not set(cases) & set(beside or {}), "a case both edited and beside"
    for case, edit in every.items():
        assert all(allowed(path, text) for path, text in edit.items()), f"{case} edits a file every module reads: stop it alone"
    edited = {path for edit in every.values() for path in edit}
    if folder:
        names = {case: {path: folder_copy(path, folder, i) for path in files if path.startswith(f"{folder}/")}
                 for i, case in enumerate(every)}
    else:
        names = {case: {path: copy_name(path, i) for path in files if path in edited} for i, case in enumerate(every)}
    copies = {path for each in names.values() for path in each}
    index = {case: i for i, case in enumerate(every)}
    tests = sorted({t for path in copies if copied(path) and not workflow(path) for t in _tests(files[path])}, key=len,
                   reverse=True)
    config = (kit_home / "donegate.yaml").read_text() if (kit_home / "donegate.yaml").exists() else ""
    config = "feedback_chars: 1000000\n" + config  # every case's line in the block

    laid = {path: text for path, text in files.items() if path not in copies}
    for case in every:
        laid.update({copy: tagged(files[path], tests, index[case]) for path, copy in names[case].items()})

    def build(repo: Path, home: Path) -> None:
        make_repo(repo, laid)
        test = repo.parent / "hidden" / "test_request.py"
        test.parent.mkdir()
        test.write_text(hidden)
        res = seal(repo, test, extra_env={"DONEGATE_HOME": str(home)})
        kept = re.search(r"the project's own tests: (\d+) of (\d+) pass", res.stdout)
        assert res.returncode == 0 and kept and kept[1] == kept[2], res.stdout + res.stderr

    def run(key, base: Path) -> dict:
        from tests.support.repos import sealed_copy

        home = base / "home"
        home.mkdir()
        (home / "donegate.yaml").write_text(config)
        env = {"DONEGATE_HOME": str(home)}
        if beside:
            sealed = hashlib.sha256(json.dumps([laid, hidden], sort_keys=True).encode()).hexdigest()[:10]
            repo = sealed_copy(tmp_path_factory.getbasetemp() / "sealed", f"batch-{sealed}", build, home)
        else:
            repo = base / "repo"
            build(repo, home)
        for path, text in product.items():
            (repo / path).write_text(text)
        for case, edit in cases.items():
            for path, text in edit.items():
                (repo / names[case][path]).write_text(tagged(text, tests, index[case]))
        res = run_hook(stop_payload(repo, session=name), env=env)
        line = stop_lines(home)[-1]
        return {"returncode": res.returncode, "stderr": res.stderr,
                "weakened": (line.get("gates", {}).get("own") or {}).get("weakened", [])}

    key = hashlib.sha256(json.dumps([files, hidden, product, cases, config, folder, sorted(beside or {})],
                                    sort_keys=True).encode()).hexdigest()[:10]
    out = SharedRuns(shared_root(tmp_path_factory, "own-batches"), [f"{name}-{key}"], run, threads=0)[f"{name}-{key}"]
    return Batch(out["returncode"], out["stderr"], out["weakened"], names, tests, index)


def shared_stop(tmp_path_factory, kit_home: Path, name: str, sealed: Callable[[Path], Path],
                edit: Callable[[Path], None]) -> dict:
    """One stop that several tests read, once in the whole test run (`pool.SharedRuns`, threads=0): `sealed(home)`
    gives a sealed project for the kit's folder `home` (a pooled copy: `repos.sealed_project`), `edit(repo)` writes
    every case's change into it. For cases that each change files of their own and assert their own tests' finding
    (filtered by test id); whoever asks first runs it under `kit_home`'s donegate.yaml, the rest read `returncode`,
    `stderr` and the stop's `own` record. `name` names the fold: one name, one `edit`."""
    from tests.support.pool import SharedRuns, shared_root

    config = (kit_home / "donegate.yaml").read_text() if (kit_home / "donegate.yaml").exists() else ""

    def run(key, base: Path) -> dict:
        home = base / "home"
        home.mkdir()
        if config:
            (home / "donegate.yaml").write_text(config)
        repo = sealed(home)
        edit(repo)
        res = run_hook(stop_payload(repo, session=name), env={"DONEGATE_HOME": str(home)})
        return {"returncode": res.returncode, "stderr": res.stderr,
                "own": stop_lines(home)[-1].get("gates", {}).get("own") or {}}

    key = f"{name}-{hashlib.sha256(config.encode()).hexdigest()[:10]}"
    return SharedRuns(shared_root(tmp_path_factory, "own-shared-stops"), [key], run, threads=0)[key]


def of(own: dict, field: str, test: str) -> list:
    """The entries of the stop's `own[field]` (weakened, failing) on `test`: a test id, or a file (every test in it)."""
    def on(entry: dict) -> str:
        return entry.get("test") or entry.get("id") or ""

    return [e for e in own.get(field) or [] if on(e) == test or on(e).split("::")[0] == test]
