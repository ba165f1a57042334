"""A repository guarded by donegate, driven by the real Claude Code: shared by the e2e tests and `make demo`.

`GatedRepo.create` lays out what a user of the kit has, in one folder:

    base/kit/           the kit checkout (a git repository): donegate/ and hooks/
    base/donegate-home/ DONEGATE_HOME: the sealed hidden tests, the ledger, donegate.yaml
    base/shop/          the bundled example repository, committed, with its bug
    base/home/          HOME of the Claude Code session (its transcripts land here)

then writes `donegate.yaml`, runs `donegate install` (settings into `shop/.claude/settings.json`) and
`donegate seal` (in that order: the seal snapshots `.claude/` as protected files).

The tests use a *copy* of the kit (`copy_kit`): an escape attempt that got through would change the
copy, never the developer's checkout. The demo uses the checkout itself.
"""

from __future__ import annotations

import atexit
import compileall
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from donegate.ledger import chain as kit_ledger
from donegate.claude import settings as vocab

from .fakeapi import FakeAPI, feedback_reason
from .repos import sealed_copy, write_config
from .one_process import run_sessions
from .session import SessionResult, make_repo, run_session

KIT = Path(__file__).resolve().parents[2]
EXAMPLE = KIT / "examples" / "shop"
EXAMPLE_TESTS = KIT / "examples" / "shop-acceptance"
REQUEST = "orders of 10 or more units get 10% off"
# What an unattended session gets: the tools a headless run is allowed to use without asking.
UNATTENDED_TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "Glob")
BUG = ("if units > BULK_THRESHOLD:", "if units >= BULK_THRESHOLD:")


def sandbox_available() -> bool:
    """Whether `donegate install --sandbox auto` turns Claude Code's sandbox on here."""
    return vocab.sandbox_available()[0]


def text_files(root: Path, *folders: str) -> dict[str, str]:
    """{relative path: text} of the files under `root/folder` (no caches)."""
    out = {}
    for folder in folders:
        for p in sorted((root / folder).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                out[p.relative_to(root).as_posix()] = p.read_text(encoding="utf-8")
    return out


_KIT_COPY: list[Path] = []
_KIT_LOCK = threading.Lock()


def copy_kit(dest: Path) -> Path:
    """The kit's code (donegate/, hooks/) as a committed git repository at `dest`/kit, with the checkout's bytecode
    (`_bytecode`): made once per test process (in a folder of its own, removed at exit) and copied with `cp -a` (the
    same files, modes, mtimes and commit; a pooled repository's copy was already one): 0.04-0.08 CPU-s a copy against
    0.13-0.16 for a repository made afresh (cgroup, three each), once per GatedRepo built."""
    with _KIT_LOCK:  # the pools' runner threads build repositories too
        if not _KIT_COPY:
            folder = Path(tempfile.mkdtemp(prefix="dgtest-kit-"))
            atexit.register(shutil.rmtree, folder, True)
            kit = make_repo(folder, text_files(KIT, "donegate", "hooks"), name="kit")
            _bytecode(kit)
            _KIT_COPY.append(kit)
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(_KIT_COPY[0]), str(dest / "kit")], check=True, capture_output=True, timeout=120)
    return dest / "kit"


def _bytecode(kit: Path) -> None:
    """The checkout's `__pycache__` files beside the copy's sources, each source given its original's mtime: a pyc
    is used where it is for the checkout (same mtime and size) and recompiled where it is stale there, as Python
    does. Without them the first hook, seal and install of each copy compiled the ~100 modules they import
    (~0.3 CPU-s, once per end-to-end test). The checkout compiled first: a fresh clone's holds bytecode only for what
    ran there before this worker's first copy (the test modules' imports: 36 of the 171 modules missing, the commands
    `install` and `seal` among them), and every later copy of this worker lacked the rest."""
    compileall.compile_dir(KIT / "donegate", quiet=1)  # ~0.04 CPU-s when up to date; written even under the variable
    for cache in KIT.glob("donegate/**/__pycache__"):
        folder = kit / cache.parent.relative_to(KIT)
        if not folder.is_dir():
            continue
        shutil.copytree(cache, folder / "__pycache__", dirs_exist_ok=True)
        for src in folder.glob("*.py"):
            st = (cache.parent / src.name).stat()
            os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))


def example_files() -> dict[str, str]:
    return {k.removeprefix("examples/shop/"): v for k, v in text_files(KIT, "examples/shop").items()}


def kit_cmd(kit: Path, home: Path, *args: str, timeout: float = 180, user_home: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m donegate ARGS` run from the kit checkout `kit`, with DONEGATE_HOME=`home` (and HOME=`user_home`:
    where install writes its hook stubs and `--scope user` its settings; never the person's real home)."""
    env = {**os.environ, "DONEGATE_HOME": str(home)}
    if user_home is not None:
        user_home.mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(user_home)
    env.pop("DONEGATE_NESTED", None)
    if os.environ.get("DGTEST_CLAUDE"):  # `make e2e CLAUDE_VERSION=...`: install points the reviewers at that one
        env["DONEGATE_CLAUDE"] = os.environ["DGTEST_CLAUDE"]
    return subprocess.run([sys.executable, "-m", "donegate", *args], cwd=kit, env=env, capture_output=True,
                          text=True, timeout=timeout)


def ledger(home: Path) -> list[dict]:
    """The records of the ledger in DONEGATE_HOME `home`."""
    return kit_ledger.records(home / "ledger.jsonl")


@dataclass
class Session:
    """One `claude -p` run in a gated repository: what Claude Code returned, what the model was shown,
    what the gate recorded."""

    res: SessionResult
    api: FakeAPI
    ledger: list[dict]

    @property
    def stops(self) -> list[dict]:
        """The ledger's records of the Stop hook (the guard records its refusals there too)."""
        return [r for r in self.ledger if r.get("event") == "stop"]

    @property
    def verdicts(self) -> list[str]:
        return [r["verdict"] for r in self.stops]

    def feedback(self) -> list[str]:
        """The Stop hook's words of each block, without the client's wrapping (which moves between releases)."""
        return [feedback_reason(t) for t in self.api.stop_hook_feedback()]

    def shown(self) -> str:
        """Everything the model was sent on the user side (prompt, tool results, hook feedback) and
        the system prompts."""
        return "\n".join(self.api.all_text_shown(include_system=True))

    def tool_results(self) -> list[dict]:
        """Every tool result the model got, in order."""
        seen, out = set(), []
        for req in self.api.main_requests():
            for r in self.api.tool_results(req):
                if r["tool_use_id"] not in seen:
                    seen.add(r["tool_use_id"])
                    out.append(r)
        return out

    def attachments(self, kind: str) -> list[dict]:
        """Transcript attachments of one type (`hook_blocking_error`, `hook_system_message`, ...)."""
        return [e["attachment"] for e in self.res.read_transcript()
                if e.get("type") == "attachment" and (e.get("attachment") or {}).get("type") == kind]

    def system_messages(self) -> list[str]:
        return [a.get("content", "") for a in self.attachments("hook_system_message")]

    def describe(self) -> str:
        return (self.res.describe() + f"\nledger verdicts: {self.verdicts}\nfeedback: {self.feedback()}\n"
                f"overrun: {self.api.overrun_message}\nserver errors: {self.api.errors}")


@dataclass
class GatedRepo:
    base: Path
    kit: Path
    home: Path  # DONEGATE_HOME
    repo: Path
    sandbox: bool
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        base: Path,
        *,
        kit: Path | None = None,
        sandbox: bool | None = None,
        config: dict[str, Any] | None = None,
        tests: Iterable[Path] | None = None,
        seal_fixed: bool = False,
        install: bool = True,
        seal_timeout: float | None = None,
        kit_held_share: bool = False,
        own: bool = True,
        files: dict[str, str] | None = None,
    ) -> "GatedRepo":
        """`kit`: the kit checkout to use (default: a copy under `base`). `sandbox`: install the sandbox
        block (default: when available). `config`: donegate.yaml. `tests`: hidden test files (default:
        the example's). `seal_fixed`: seal while the bug is fixed in the working tree (for hidden tests
        whose baseline run would otherwise hang), then put the bug back. `install=False`: no project
        install (a managed one, written by the test, guards the repository). `seal_timeout`: the
        hidden tests' timeout for the seal's own run only, where `config` sets one so short (for the stops)
        that a loaded machine could not seal the example within it; install still writes the hook timeout
        of `config`. `kit_held_share`: seal with the kit's default held_share (`make demo`), not the tests' 0
        (tests/support/repos.py `write_config`). `own=False`: seal with `--own-tests off`, for a test whose subject is
        not the example's own suite (tests/support/repos.py `own_suite`): every stop then runs the hidden tests only.
        `files`: more files of the example's repository (its own tests), or files in place of its own."""
        base.mkdir(parents=True, exist_ok=True)
        kit = kit or copy_kit(base)
        home = base / "donegate-home"
        home.mkdir(exist_ok=True)
        write_config(home, json.dumps(config or {}, indent=2) + "\n", kit_held_share=kit_held_share)  # JSON is YAML; `confine: off` without walls
        sandbox = sandbox_available() if sandbox is None else sandbox
        g = cls(base, kit, home, make_repo(base, {**example_files(), **(files or {})}, name="shop"), sandbox)
        if install:
            g.install()
        if seal_fixed:
            g.fix_bug()
        if seal_timeout is not None:
            write_config(home, json.dumps({**(config or {}), "timeout": seal_timeout}, indent=2) + "\n",
                         kit_held_share=kit_held_share)
        g.seal(tests or sorted(EXAMPLE_TESTS.glob("test_*.py")), *(() if own else ("--own-tests", "off")))
        if seal_timeout is not None:
            write_config(home, json.dumps(config or {}, indent=2) + "\n", kit_held_share=kit_held_share)
        if seal_fixed:
            g.fix_bug(undo=True)
        return g

    @classmethod
    def pooled(cls, root: Path, name: str, kit_home: Path, **kwargs: Any) -> "GatedRepo":
        """`create(base, **kwargs)` (the example's hidden tests, the kit's copy) built once per test process for each
        `name` and `kwargs`, and copied for each test at the very path it was built at (tests/support/repos.py
        `sealed_copy`: install and seal record absolute paths): a copy of a folder instead of the kit's copy, the
        install and the seal's run of the hidden tests (~0.9 CPU-s a test, measured). Only for a test that runs one GatedRepo of that name at a time
        and reads none after the next is made (`name` apart for each of a test's repositories)."""
        assert "kit" not in kwargs and "tests" not in kwargs, "a pooled GatedRepo is the example's, on a kit copy"
        # One repository for one build: `sandbox` as `create` resolves it (gated() and gated(sandbox=True) are the same
        # where the sandbox is available), and the arguments given as their defaults dropped (config None or {}).
        kwargs = {**kwargs, "sandbox": sandbox_available() if kwargs.get("sandbox") is None else kwargs["sandbox"]}
        defaults = {"config": None, "seal_fixed": False, "install": True, "seal_timeout": None, "kit_held_share": False,
                    "own": True, "files": None}
        kwargs = {k: v for k, v in kwargs.items() if k not in defaults or (v or None) != (defaults[k] or None)}
        key = hashlib.sha256(json.dumps(kwargs, sort_keys=True).encode()).hexdigest()[:10]

        def build(base: Path, home: Path) -> None:
            cls.create(base, **kwargs)  # its own DONEGATE_HOME, under base: `home` stays empty

        base = sealed_copy(root, f"{name}-{key}", build, kit_home)
        sandbox = kwargs.get("sandbox")
        g = cls(base, base / "kit", base / "donegate-home", base / "shop",
                sandbox_available() if sandbox is None else sandbox)
        if kwargs.get("install", True):
            g.settings = json.loads(g.settings_path.read_text())
        return g

    # -- the kit's own steps -------------------------------------------------------------------------

    def donegate(self, *args: str) -> str:
        """`donegate ARGS` as a user runs it from the kit checkout; its output, or RuntimeError."""
        res = kit_cmd(self.kit, self.home, *args, user_home=self.user_home)
        if res.returncode != 0:
            raise RuntimeError(f"donegate {args[0]} failed: {res.stdout}{res.stderr}")
        return res.stdout

    def install(self) -> None:
        self.donegate("install", str(self.repo), "--sandbox", "on" if self.sandbox else "off")
        self.settings = json.loads(self.settings_path.read_text())

    def seal(self, tests: Iterable[Path], *args: str) -> None:
        self.donegate("seal", str(self.repo), *map(str, tests), "--request", REQUEST, *args)

    @property
    def user_home(self) -> Path:
        """HOME of the session and of the kit's commands: the hook stubs and `--scope user` land here."""
        return self.base / "home"

    # -- paths the agent must not reach --------------------------------------------------------------

    @property
    def hook(self) -> Path:
        return self.kit / "hooks" / "stop_gate.py"

    @property
    def store(self) -> Path:
        (store,) = (self.home / "acceptance").glob("shop-*")
        return store

    @property
    def hidden_test(self) -> Path:
        return self.store / "test_bulk_discount.py"

    @property
    def settings_path(self) -> Path:
        return self.repo / ".claude" / "settings.json"

    @property
    def pricing(self) -> Path:
        return self.repo / "shop" / "pricing.py"

    def fix_bug(self, undo: bool = False) -> None:
        old, new = BUG[::-1] if undo else BUG
        self.pricing.write_text(self.pricing.read_text().replace(old, new))

    # -- a session -----------------------------------------------------------------------------------

    def run(self, api: FakeAPI, prompt: str = f"Implement the request: {REQUEST}.", *,
            tools: Iterable[str] | None = UNATTENDED_TOOLS, timeout: float = 180, extra_env: dict | None = None,
            wrap: Iterable[str] = ()) -> Session:
        # DONEGATE_HOME is emptied in the session's environment (the kit reads "" as unset): the hooks
        # must find the store through the command install wrote, as they do for a user who never set it.
        res = run_session(self.repo, api, prompt, allowed_tools=tools, timeout=timeout, home=self.user_home,
                          extra_env={"DONEGATE_HOME": "", **(extra_env or {})}, wrap=wrap)
        return Session(res, api, ledger(self.home))

    def run_many(self, apis: list[FakeAPI], prompt: str = f"Implement the request: {REQUEST}.", *,
                 before: Callable[[int], None] | None = None, tools: Iterable[str] | None = UNATTENDED_TOOLS,
                 timeout: float = 180, extra_env: dict | None = None, wrap: Iterable[str] = ()) -> list[Session]:
        """`run` of each FakeAPI's case, one session after the other in one Claude Code process (`/clear` between:
        tests/support/one_process.py): a Session each, whose ledger is the lines written from its start to the next's.
        `before(k)` runs before case k is sent (a reset of what the case before changed)."""
        marks: list[int] = []

        def start(k: int) -> None:
            if before is not None:
                before(k)
            marks.append(len(ledger(self.home)))

        results = run_sessions(self.repo, apis, [prompt] * len(apis), before=start, allowed_tools=tools, timeout=timeout,
                               home=self.user_home, extra_env={"DONEGATE_HOME": "", **(extra_env or {})}, wrap=wrap)
        lines = ledger(self.home)
        bounds = marks + [len(lines)] * (len(apis) + 1 - len(marks))  # a case never sent (one before it ended the run): none
        return [Session(res, api, lines[bounds[k]:bounds[k + 1]]) for k, (res, api) in enumerate(zip(results, apis, strict=True))]


def pooled_example(tmp_path_factory: Any, kit_home: Path, own: bool = False, **kwargs: Any) -> GatedRepo:
    """`GatedRepo.create(tmp_path / "g", **kwargs)` for a test that checks nothing of the seal: a copy of the one its
    worker built for these arguments (`GatedRepo.pooled`, shared with the `gated` fixture's first repository). The
    own suite off unless `own` (its callers, the other clients' e2e, are not about it)."""
    return GatedRepo.pooled(tmp_path_factory.getbasetemp() / "sealed", "gated0", kit_home, own=own, **kwargs)


# What the scripted agent claims, and the assertion the example's hidden tests fail with while the bug is in.
CLAIM = "All done: orders of 10 or more units now get the bulk discount."
ASSERTION = "assert 4300 == 3870"


def stop_hook_ran_cleanly(s: Session) -> None:
    assert s.res.returncode == 0, s.describe()
    assert s.res.result and s.res.result.get("subtype") == "success", s.describe()
    assert not s.api.overrun and not s.api.errors, s.describe()
    assert s.api.remaining() == 0, s.describe()
    assert not s.attachments("hook_cancelled"), s.describe()
    assert all(r["session"] == s.res.session_id for r in s.stops), "the hook saw another session id"
