"""How this copy of the kit was installed, where its own files are, and how to tell a person to run or
repair it.

Four kinds: a `checkout` (git clone, `make setup` or `pip install -e .`), `pipx` (a venv of pipx's own,
marked by its `pipx_metadata.json`), `venv` (pip into a virtual environment) and `system` (pip into an
interpreter's own or user site-packages). A fix line names the command that works for the kind the
person has: `make setup` means nothing to someone who ran `pipx install`.

The writer's and reviewers' prompts and schemas (`writer/`, `reviewer/` at the top of the checkout, the
files a person edits) travel in the wheel as data files under `<prefix>/share/donegate/`, beside the hook
launchers: one copy of their source. The `prompts` key of donegate.yaml names a folder of the person's
own; a file there (`writer/prompt.md`, `reviewer/critic.md`, ...) replaces the kit's, file by file.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from donegate import _layout, paths

CHECKOUT, PIPX, VENV, SYSTEM = "checkout", "pipx", "venv", "system"
# The marker each folder of the kit's files must hold to count as found.
MARKERS = {"writer": "prompt.md", "reviewer": "prompt.md"}


def prefix(kit: Path | None = None) -> Path:
    """The installation's prefix: where `share/donegate` was found, else the running interpreter's."""
    hooks = paths.hooks_dir(kit)
    if hooks.parts[-3:] == ("share", "donegate", "hooks"):
        return hooks.parent.parent.parent
    return Path(sys.prefix)


def kind(kit: Path | None = None) -> str:
    if paths.is_checkout(kit):
        return CHECKOUT
    where = prefix(kit)
    if (where / "pipx_metadata.json").is_file():
        return PIPX
    if (where / "pyvenv.cfg").is_file():
        return VENV
    return SYSTEM


def _script(where: Path) -> Path:
    return where / ("Scripts" if os.name == "nt" else "bin") / "donegate"


def command(kit: Path | None = None) -> str:
    """How to run `donegate` from a shell: the bare name when PATH finds this installation's, else the
    absolute path of its script, else this interpreter with `-m donegate`."""
    kit = kit or paths.KIT_ROOT
    where = Path(paths.KIT_ROOT / ".venv") if kind(kit) == CHECKOUT else prefix(kit)
    script = _script(where)
    found = shutil.which("donegate")
    if found and script.exists() and Path(found).resolve() == script.resolve():
        return "donegate"
    if script.exists():
        return str(script)
    return f"{sys.executable} -m donegate"


def reinstall(kit: Path | None = None) -> str:
    """The one command that puts a broken installation right, for the kind it is."""
    k = kind(kit)
    if k == CHECKOUT:
        return f"run `make setup` in {kit or paths.KIT_ROOT}"
    if k == PIPX:
        return "run `pipx reinstall donegate`"
    python = prefix(kit) / ("Scripts" if os.name == "nt" else "bin") / "python" if k == VENV else Path(sys.executable)
    return f"run `{python} -m pip install --force-reinstall donegate` (or the wheel you installed it from)"


def restore(rel: str, kit: Path | None = None) -> str:
    """How to get one of the kit's own files back (`writer/schema.json`)."""
    if kind(kit) == CHECKOUT:
        return f"restore it from the kit: `git checkout {rel}` in {kit or paths.KIT_ROOT}"
    return f"{reinstall(kit)}; or set `prompts` in donegate.yaml to a folder holding your own {rel}"


def claude_install(kit: Path | None = None, high: str | None = None) -> str:
    """How to get the Claude Code binary the writer and reviewers run (`high`: the newest release proven)."""
    if kind(kit) == CHECKOUT:
        return f"run `make setup` in {kit or paths.KIT_ROOT} (installs the pinned version)"
    return f"install it: {claude_pin(high, kit)}" if high else "install it: `npm install -g @anthropic-ai/claude-code`"


def claude_pin(high: str, kit: Path | None = None) -> str:
    """How to get `high`, the Claude Code release the kit is proven on, for the kind of install this is: a
    checkout pins it in package.json; a wheel knows it (`donegate.claude.binary.NEWEST`) but has no kit to run npm in."""
    if kind(kit) == CHECKOUT:
        return f"`npm ci` in {kit or paths.KIT_ROOT} (pins {high})"
    return f"`npm install -g @anthropic-ai/claude-code@{high}`"


def try_claude(version: str, kit: Path | None = None) -> str:
    """How a person proves the kit on another Claude Code release before trusting it."""
    if kind(kit) == CHECKOUT:
        return f"or run `make e2e CLAUDE_VERSION={version}` in {kit or paths.KIT_ROOT} first"
    return "or check a session by hand: `donegate doctor` here, then a stop that must block"


def kit_dir(folder: str, kit: Path | None = None) -> Path:
    """The kit's own `writer/` or `reviewer/`: the checkout's, else the installation's share/donegate."""
    return Path(_layout.kit_folder(str(kit or paths.KIT_ROOT), folder, MARKERS[folder]))


def file(folder: str, name: str, override: str | None = None, kit: Path | None = None) -> Path:
    """`folder/name` from the person's `prompts` folder when it holds it, else the kit's."""
    if override:
        base = Path(override).expanduser()
        if not base.is_absolute():
            base = paths.home() / base  # beside donegate.yaml
        mine = base / folder / name
        if mine.is_file():
            return mine
    return kit_dir(folder, kit) / name
