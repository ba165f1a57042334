"""The writer's checks, retry messages and helpers, without a model (the e2e tests drive the real one)."""

from __future__ import annotations

import io
import json
import subprocess

import pytest

from donegate.models import writer
from donegate.hidden import runner
from donegate.claude.headless import ModelRun
from donegate.errors import DonegateError
from tests.support import require
from tests.support.repos import EXAMPLE_TESTS, REQUEST, make_repo

SCHEMA = writer.load_schema()


def files_answer(*entries, **more) -> dict:
    return {"files": [{"path": p, "content": c} for p, c in entries], **more}


# -- the schema and the kit's own check of it ---------------------------------


def test_shipped_schema_and_prompt_fit_the_contract():
    assert SCHEMA["type"] == "object" and "files" in SCHEMA["required"]
    item = SCHEMA["properties"]["files"]["items"]
    assert set(item["required"]) == {"path", "content"}
    template = writer.load_prompt()
    for placeholder in ("{{request}}", "{{repo}}", "{{base}}", "{{files}}"):
        assert placeholder in template


def test_valid_answer_has_no_schema_errors():
    answer = files_answer(("test_a.py", "def test_a(): pass\n"),
                          behaviours=[{"test": "test_a", "behaviour": "b", "source": "inferred"}], notes="")
    assert writer.schema_errors(answer, SCHEMA) == []


@pytest.mark.parametrize(
    "answer, expected",
    [
        ({}, "answer: missing required property 'files'"),
        ({"files": []}, "answer.files: needs at least 1 item(s), got 0"),
        ({"files": "test_a.py"}, "answer.files: expected array, got str"),
        (files_answer(("tests/test_a.py", "x")), "answer.files[0].path: 'tests/test_a.py' does not match the pattern"),
        (files_answer(("../test_a.py", "x")), "answer.files[0].path: '../test_a.py' does not match"),
        (files_answer(("test_a.py", "")), "answer.files[0].content: must not be shorter than 1 character(s)"),
        ({"files": [{"path": "test_a.py"}]}, "answer.files[0]: missing required property 'content'"),
        ({**files_answer(("test_a.py", "x")), "extra": 1}, "answer: unexpected property 'extra'"),
        ({**files_answer(("test_a.py", "x")), "behaviours": [{"test": "t", "behaviour": "b", "source": "guess"}]},
         "answer.behaviours[0].source: 'guess' is not one of ['stated', 'inferred', 'existing']"),
    ],
)
def test_schema_errors_name_the_place(answer, expected):
    errors = writer.schema_errors(answer, SCHEMA)
    assert any(e.startswith(expected) for e in errors), errors


def test_schema_subset_types_and_bounds():
    schema = {"type": ["integer", "null"], "maxLength": 1}
    assert writer.schema_errors(None, schema) == []
    assert writer.schema_errors(True, schema) == ["answer: expected integer or null, got bool"]
    assert writer.schema_errors("ab", {"type": "string", "maxLength": 1}) == ["answer: longer than 1 characters"]
    assert writer.schema_errors([1, 2], {"maxItems": 1, "items": {"type": "string"}}) == [
        "answer: at most 1 item(s), got 2", "answer[0]: expected string, got int", "answer[1]: expected string, got int"]
    assert writer.schema_errors({"a": 1}, {"additionalProperties": {"type": "string"}}) == ["answer.a: expected string, got int"]
    assert writer.schema_errors(2, {"const": 1}) == ["answer: must be 1"]


@pytest.mark.parametrize("text, problem", [("{", "not valid JSON"), ('{"type": "object"}', "does not require a top-level `files` list")])
def test_a_broken_schema_file_is_a_user_error(tmp_path, text, problem):
    path = tmp_path / "schema.json"
    path.write_text(text)
    with pytest.raises(DonegateError, match=problem) as exc:
        writer.load_schema(path)
    assert exc.value.fix
    with pytest.raises(DonegateError, match="is missing"):
        writer.load_schema(tmp_path / "nope.json")


# -- file checks ------------------------------------------------------------------


def test_files_are_checked_for_names_and_syntax():
    files, problems = writer.check_files(files_answer(
        ("test_ok.py", "def test_ok():\n    pass\n"),
        ("test_bad.py", "def test_bad(:\n    pass\n"),
        ("sub/test_x.py", "x = 1\n"),
        ("conftest.py", "x = 1\n"),
        ("test_ok.py", "def test_ok():\n    pass\n"),
    ))
    assert list(files) == ["test_ok.py", "test_bad.py"]
    assert problems[0].startswith("test_bad.py line 1: ") and "def test_bad(:" in problems[0]
    assert "files[2].path 'sub/test_x.py': must be a plain file name test_<topic>.py" in problems[1]
    assert "files[3].path 'conftest.py'" in problems[2]
    assert "files[4].path 'test_ok.py': two files with the same name" in problems[3]


def test_no_files_is_a_problem():
    assert writer.check_files({"files": []}) == ({}, ["files: no test files in the answer; write at least one test_<topic>.py"])


def test_null_byte_source_is_reported_not_raised():
    _, problems = writer.check_files(files_answer(("test_a.py", "x = 1\0\n")))
    assert problems and problems[0].startswith("test_a.py")


def _run(**kw) -> runner.TestRun:
    return runner.TestRun(**{"ok": True, **kw})


def test_collection_errors_go_back_with_the_import_hint():
    run = _run(ok=False, problem="collect", errors=[{"nodeid": "test_a.py", "message": "ModuleNotFoundError: No module named 'shop.coupons'"}])
    problems = writer.check_run({"test_a.py": ""}, run)
    assert problems[0] == "test_a.py does not collect: ModuleNotFoundError: No module named 'shop.coupons'"
    assert "imported inside the test functions" in problems[1]


def test_a_file_without_tests_and_a_hang_are_problems():
    run = _run(collected=["test_a.py::test_x"], results={"test_a.py::test_x": {"outcome": "passed", "message": ""}})
    assert writer.check_run({"test_a.py": "", "test_b.py": ""}, run) == [
        "test_b.py: pytest collected no test from it; name the test functions test_*"]
    hung = _run(ok=False, problem="the hidden tests did not finish within 5 s (timeout); the run was killed")
    assert writer.check_run({"test_a.py": ""}, hung) == [f"the tests did not run to the end: {hung.problem}"]


def _results(*outcomes: tuple[str, str]) -> runner.TestRun:
    return _run(results={f"test_a.py::t{i}": {"outcome": o, "message": m} for i, (o, m) in enumerate(outcomes)})


def test_suspicious_runs_are_flagged():
    assert "no test fails before the change (2 tests, all passing)" in writer.suspicious(_results(("passed", ""), ("passed", "")))[0]
    one_import = _results(("failed", "ModuleNotFoundError: No module named 'shopx'"), ("error", "ModuleNotFoundError: No module named 'shopx'"))
    assert "every test (2) fails before the change with the same import error" in writer.suspicious(one_import)[0]
    assert writer.suspicious(_results(("failed", "assert 1 == 2"), ("passed", ""))) == []
    assert writer.suspicious(_results(("failed", "assert 1 == 2"), ("failed", "assert 1 == 2"))) == []
    assert writer.suspicious(_results(("failed", "ImportError: a"), ("failed", "ImportError: b"))) == []


# -- prompts ------------------------------------------------------------------------


def test_prompt_is_filled_and_the_request_is_never_expanded():
    text = writer.render_prompt("R={{request}} at {{base}} of {{repo}}\n{{files}}", request="  use {{files}} please \n",
                                repo="shop", base="abc", files=["a.py", "b/c.py"])
    assert text == "R=use {{files}} please at abc of shop\n- a.py\n- b/c.py"


def test_a_prompt_without_the_request_placeholder_gets_it_appended():
    text = writer.render_prompt("Write tests.", request="do X", repo="r", base="b", files=[], retry="## again")
    assert text == "Write tests.\n\n## The request\n\ndo X\n\n\n## again"


def test_long_listings_are_cut():
    text = writer.render_prompt("{{request}}{{files}}", request="x", repo="r", base="b", files=[f"f{i}.py" for i in range(writer.MAX_LISTED + 5)])
    assert text.endswith("- ... and 5 more (use Glob)")


def test_retry_text_names_every_problem_and_shows_the_old_files():
    text = writer.retry_text(1, 3, ["p one", "p two"], {"test_a.py": "def test_a(:\n"})
    assert text.startswith("## Your previous answer was rejected (attempt 1 of 3)")
    assert "- p one\n- p two" in text
    assert "### test_a.py\n\n```python\ndef test_a(:\n```" in text
    big = writer.retry_text(2, 3, ["p"], {"test_a.py": "x" * (writer.MAX_ECHO + 1)})
    assert "test_a.py" not in big


# -- progress -------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_rewrites_one_line_on_a_terminal():
    out = _Tty()
    p = writer.Progress(out, "w")
    p(0, 0)
    p(1.2, 1)
    p.end()
    assert out.getvalue() == "\rw:    0 s, 0 turns\033[K\rw:    1 s, 1 turn\033[K\n"


def test_progress_prints_now_and_then_elsewhere():
    out = io.StringIO()
    p = writer.Progress(out, "w")
    for second in range(25):
        p(float(second), second // 5)
    p.end()
    assert out.getvalue().splitlines() == ["w:    0 s, 0 turns", "w:   10 s, 2 turns", "w:   20 s, 4 turns"]


# -- the clean copy -----------------------------------------------------------------


def test_clean_copy_holds_head_only(tmp_path):
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n", "pkg/b.py": "B = 1\n"})
    (repo / "a.py").write_text("A = 2  # the agent's change\n")
    (repo / "new.py").write_text("untracked\n")
    dest = tmp_path / "dest"
    dest.mkdir()
    copy = writer.clean_copy(repo, dest)
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == ["a.py", "pkg/b.py"]
    assert (copy / "a.py").read_text() == "A = 1\n"
    assert list(dest.iterdir()) == [copy]


def test_clean_copy_of_a_repo_without_commits_is_a_user_error(tmp_path):
    repo = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with pytest.raises(DonegateError, match="cannot take a clean copy") as exc:
        writer.clean_copy(repo, tmp_path)
    assert "commit" in exc.value.fix


def test_empty_request_is_refused_before_any_model_run(shop_repo):
    from donegate import config

    with pytest.raises(DonegateError, match="the request is empty"):
        writer.write(shop_repo, "  ", config.defaults(), err=io.StringIO())


def test_write_is_a_registered_command():
    from donegate import cli

    args = cli.build_parser().parse_args(["write", "REPO", "--request", "do it"])
    from donegate.commands import write as command

    assert args.func is command.cmd_write and args.repo == "REPO" and args.request == "do it"
    assert json.loads(writer.SCHEMA_FILE.read_text()) == SCHEMA


# -- write() through its model seam: the answers scripted, everything after them real ---------------


def _answer(structured: dict | None, *, subtype: str = "success", cost: float = 0.01) -> ModelRun:
    return ModelRun(ok=structured is not None, subtype=subtype, structured=structured, text="", turns=2, cost_usd=cost,
                    duration=1.0, error="" if structured is not None else f"the writer gave no answer ({subtype})",
                    model="scripted", raw=None)


BEHAVIOUR = {"test": "test_bulk", "behaviour": "10 units get the discount", "source": "stated"}


class ScriptedWriter:
    """Stands where `claude.headless.run` stands: hands out the next answer, keeps the prompts."""

    def __init__(self, *answers: ModelRun) -> None:
        self.answers, self.prompts, self.calls = list(answers), [], []

    def __call__(self, prompt: str, **kw) -> ModelRun:
        self.prompts.append(prompt)
        self.calls.append(kw)
        return self.answers.pop(0)


def test_a_rejected_answer_goes_back_with_its_problem_and_the_next_one_is_sealed(shop_repo, kit_home):
    from donegate import config
    from donegate.ledger import chain as ledger
    from donegate.seal import store

    good = sorted(EXAMPLE_TESTS.glob("test_*.py"))[0]
    model = ScriptedWriter(
        _answer(files_answer(("../escape.py", "def test_x():\n    assert True\n"), behaviours=[BEHAVIOUR])),
        _answer(files_answer((good.name, good.read_text()), behaviours=[BEHAVIOUR], notes="n")),
    )
    cfg = {**config.defaults(), "confine": require.confine()}  # no walls here: a person's `confine: off`
    st, warnings = writer.write(shop_repo, REQUEST, cfg, err=io.StringIO(), run_model=model)
    assert len(model.prompts) == 2 and "../escape.py" in model.prompts[1]
    assert REQUEST in model.prompts[0] and model.calls[0]["purpose"] == "writer"
    assert not writer.paths.is_within(model.calls[0]["cwd"], shop_repo)  # the writer works on a clean copy
    assert st.manifest["count"] >= 1 and st.manifest["baseline"]["failing"]  # the example's bug fails them
    assert store.load(shop_repo).manifest == st.manifest
    line = [r for r in ledger.records(kit_home / "ledger.jsonl") if r.get("event") == "write"][-1]
    assert line["attempts"] == 2 and line["cost_usd"] == pytest.approx(0.02)


def test_no_usable_answer_seals_nothing_and_says_so_in_the_ledger(shop_repo, kit_home):
    from donegate import config
    from donegate.ledger import chain as ledger
    from donegate.seal import store

    cfg = config.defaults()
    model = ScriptedWriter(*[_answer(files_answer(("notatest.txt", "x"), behaviours=[BEHAVIOUR])) for _ in range(cfg["writer"]["attempts"])])
    with pytest.raises(DonegateError, match="nothing was sealed"):
        writer.write(shop_repo, REQUEST, cfg, err=io.StringIO(), run_model=model)
    assert store.load(shop_repo) is None and not list((kit_home / "acceptance").glob("*/*.py"))
    assert [r["event"] for r in ledger.records(kit_home / "ledger.jsonl")][-1] == "write_failed"


def test_the_prompt_asks_for_held_back_tests_and_inputs_drawn_per_stop():
    text = writer.installation.file("writer", "prompt.md").read_text()
    assert "test_held_<topic>.py" in text and "dg_random" in text


def test_the_writers_held_back_file_is_sealed_held_back(shop_repo, kit_home):
    from donegate import config

    shown = held = sorted(EXAMPLE_TESTS.glob("test_*.py"))[0]
    model = ScriptedWriter(_answer(files_answer((shown.name, shown.read_text()),
                                                (f"test_held_{held.name[5:]}", held.read_text()), behaviours=[BEHAVIOUR])))
    cfg = {**config.defaults(), "confine": require.confine()}
    st, warnings = writer.write(shop_repo, REQUEST, cfg, err=io.StringIO(), run_model=model)
    m = st.manifest
    assert m["held"] and all(t.startswith("test_held_") for t in m["held"])
    assert all(t in m["held"] for t in m["tests"] if t.startswith("test_held_"))
    assert m["held_by"] == "files" and not any("no test is held back" in w for w in warnings)
    # An answer without one: the kit picks by held_share (the default: one of the file's five tests).
    model = ScriptedWriter(_answer(files_answer((shown.name, shown.read_text()), behaviours=[BEHAVIOUR])))
    st, warnings = writer.write(shop_repo, REQUEST, cfg, err=io.StringIO(), run_model=model)
    assert len(st.manifest["held"]) == 1 and st.manifest["held_by"] == "share"
    assert not any("no test is held back" in w for w in warnings)
    # The look-alike, held_share 0: sealed all shown, with a warning saying what that costs.
    model = ScriptedWriter(_answer(files_answer((shown.name, shown.read_text()), behaviours=[BEHAVIOUR])))
    st, warnings = writer.write(shop_repo, REQUEST, {**cfg, "held_share": 0}, err=io.StringIO(), run_model=model)
    assert st.manifest["held"] == {} and any("no test is held back" in w for w in warnings)


def test_write_seals_the_subfolder_named_as_seal_does(tmp_path, kit_home):
    """A monorepo: `donegate write packages/shop` seals packages/shop, as `seal packages/shop` does, never the
    repository's root; the writer works in the package's folder of the repository's HEAD."""
    from donegate import config
    from donegate.seal import store
    from tests.support.repos import example_files

    mono = make_repo(tmp_path / "mono", {**{f"packages/shop/{k}": v for k, v in example_files().items()},
                                         "packages/other/README.md": "another package\n"})
    package = mono / "packages" / "shop"
    good = sorted(EXAMPLE_TESTS.glob("test_*.py"))[0]
    model = ScriptedWriter(_answer(files_answer((good.name, good.read_text()), behaviours=[BEHAVIOUR], notes="n")))
    cfg = {**config.defaults(), "confine": require.confine()}
    st, _ = writer.write(package, REQUEST, cfg, err=io.StringIO(), run_model=model)
    assert store.is_sealed(package) and not store.is_sealed(mono)
    assert st.manifest["repo"] == str(package.resolve()) and st.manifest["baseline"]["failing"]
    assert model.calls[0]["cwd"].parts[-2:] == ("packages", "shop")  # the package's folder, in the clean copy
    assert "shop/pricing.py" in model.prompts[0] and "other/README.md" not in model.prompts[0]
    from donegate import cli

    assert "subfolder" in cli.build_parser()._subparsers._group_actions[0].choices["write"].format_help()


def test_write_names_the_projects_own_tests_the_request_contradicts(shop_repo, kit_home):
    """Issue 44: the writer's `contradicts` is named for the person, never applied on the writer's word."""
    from donegate import config

    good = sorted(EXAMPLE_TESTS.glob("test_*.py"))[0]
    contradicts = [{"test": "tests/test_cart.py::test_small_cart_has_no_discount", "why": "small carts now get 5% off"}]
    model = ScriptedWriter(_answer(files_answer((good.name, good.read_text()), behaviours=[BEHAVIOUR],
                                                contradicts=contradicts)))
    cfg = {**config.defaults(), "confine": require.confine()}
    st, warnings = writer.write(shop_repo, REQUEST, cfg, err=io.StringIO(), run_model=model)
    (named,) = [w for w in warnings if "contradicts" in w]
    assert "tests/test_cart.py::test_small_cart_has_no_discount (small carts now get 5% off)" in named
    assert "--supersedes tests/test_cart.py::test_small_cart_has_no_discount" in named
    assert st.manifest["own_suite"]["supersedes"] == []  # the writer's word supersedes nothing
