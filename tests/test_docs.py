"""The README, the docs and the code cannot drift apart: the tables in docs/ are checked against the schema
and --help; the README stays short (the quick start itself is run by tests/test_quickstart.py)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support.repos import KIT
from donegate import cli, config

README = (KIT / "README.md").read_text()
DOCS = KIT / "docs"
COMMANDS = (DOCS / "commands.md").read_text()  # the command table
CONFIG = (DOCS / "configuration.md").read_text()  # the config table
MAX_README_LINES = 300


def test_readme_opens_with_the_two_commands():
    first_block = README.split("```")[1]
    assert re.search(r"^make demo\b", first_block, re.M) and re.search(r"^make test\b", first_block, re.M)


def test_every_config_key_is_documented_with_its_type_and_default():
    for path, key in config.iter_keys():
        default = "null" if key.default is None else json.dumps(key.default)
        row = f"| `{path}` | {key.type_name()} | `{default}` | {key.doc} |"
        assert row in CONFIG, f"docs/configuration.md's table is out of date for {path}: expected\n{row}"


def test_every_command_is_documented_with_its_help_text():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    documented = set(re.findall(r"^\| `donegate ([a-z-]+)` \|", COMMANDS, re.M))
    for choice in sub._choices_actions:
        row = f"| `donegate {choice.dest}` | {choice.help} |"
        assert row in COMMANDS, f"docs/commands.md's table is out of date: expected\n{row}"
    assert documented == set(sub.choices), "docs/commands.md lists commands the CLI does not have, or misses some"


def test_a_command_parsed_alone_is_the_command_of_the_whole_parser():
    # `donegate X` builds the parser of X's module only (cli.COMMANDS): each module must register exactly the
    # commands listed for it, and X's own parser (usage, help, defaults) must be the one the whole parser holds.
    def subparsers(parser):
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    whole = subparsers(cli.build_parser())
    listed = [name for names in cli.COMMANDS.values() for name in names]
    assert sorted(listed) == sorted(whole), "cli.COMMANDS names other commands than its modules register"
    for name in listed:
        alone = subparsers(cli.build_parser(name))
        assert name in alone and set(alone) <= set(whole)
        assert alone[name].format_help() == whole[name].format_help()
        shape = [([(a.dest, a.default, a.option_strings, a.required) for a in p._actions],
                  {k: getattr(v, "__code__", v) for k, v in p._defaults.items()}) for p in (alone[name], whole[name])]
        assert shape[0] == shape[1]


def test_makefile_targets_named_in_readme_and_docs_exist():
    makefile = (KIT / "Makefile").read_text()
    for page in [KIT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in set(re.findall(r"`make ([a-z0-9-]+)", page.read_text())):
            assert re.search(rf"^{target}:", makefile, re.M), f"{page.name} names `make {target}`, the Makefile has no such target"


def test_the_readme_is_short_starts_with_the_reader_and_ends_with_more():
    lines = README.splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines: move detail into docs/ (at most {MAX_README_LINES})"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[0].startswith("## Quick start") and headings[-1] == "## More"
    more = README.split("\n## More\n", 1)[1]
    links = re.findall(r"\]\((docs/[a-z0-9-]+\.md)\)", more)
    assert links and all((KIT / link).is_file() for link in links)
    assert {p.name for p in DOCS.glob("*.md")} <= {Path(link).name for link in links}, "every docs/ page is in the More list"
    for link in set(re.findall(r"\]\((docs/[^)#]+)", README)):
        assert (KIT / link).is_file(), link
    assert "pipx install donegate\n" not in README and not re.search(r"`write`[^.]*needs? a checkout", README)


def test_help_runs():
    res = subprocess.run([sys.executable, "-m", "donegate", "--help"], capture_output=True, text=True, timeout=60, cwd=KIT)
    assert res.returncode == 0 and "seal" in res.stdout


def test_the_layout_page_names_every_module_and_only_modules_that_exist():
    # A newcomer walks the kit from docs/layout.md: a module added, moved or removed without it is a wrong map.
    package = KIT / "donegate"
    text = (KIT / "docs" / "layout.md").read_text()
    modules = {p.relative_to(package).as_posix() for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    named = {n.removeprefix("donegate/") for n in re.findall(r"`([a-z_/]+\.py)`", text)}
    outside = {n for n in named if n.startswith(("hooks/", "tests/"))}
    assert sorted(modules - named) == [], "modules missing from docs/layout.md"
    assert sorted(named - modules - outside) == [], "docs/layout.md names modules that do not exist"
    assert all((KIT / n).exists() for n in outside)
