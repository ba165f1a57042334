"""The project's own interpreter for the hidden run, and the `sys.path` it gets.

Which interpreter (`find`), in this order:

1. named: `donegate seal --python PATH` (kept in the manifest, so per repository) or `python:` in
   donegate.yaml; a path to an interpreter or to an environment folder, relative to the project root;
2. the project's virtual environment: a `.venv` or `venv` folder with `pyvenv.cfg` in the project
   root, then in each folder above it up to the git top level (a monorepo's shared `.venv`). uv, pdm,
   and poetry or hatch configured in-project all make exactly this `.venv`;
3. poetry's own environment for the project, where poetry keeps it by default
   (`~/.cache/pypoetry/virtualenvs/<name>-<hash of the project path>-py3.X`: computed, not asked of
   poetry); hatch's default environments live under a path only hatch computes: name them with `python:`;
4. none of these: the kit's own interpreter and environment (as before the project had one).

How it starts (`launch`): never the environment's own `bin/python`, which the agent can replace with a
script, nor through its `pyvenv.cfg` (its `home` chooses the standard library); the real interpreter
it links to, checked to lie outside the repository, with no flag (`START`): `site` runs for the base
installation only, so no `.pth` import line or `sitecustomize` of the project's environment runs, and HOME
is empty (no user site). The bootstrap then puts on `sys.path`, in order: the project
root, the `pythonpath` folders, `src/` when it holds code (a src layout works without an install), the
standard library, the environment's site-packages and the path lines of its `.pth` files (never their
import lines). An editable install still imports: a path-line `.pth` (setuptools compat mode, hatch,
pdm, `setup.py develop`) is a path line; the finder style (`import __editable___x_finder`, or the
`editables` `_editable_impl_x` redirector) is read as data (its mapping, by `ast`), never imported,
and the folder holding each mapped package goes on `sys.path`.

pytest always comes from the kit, whatever the environment holds: the environment is the agent's to
write, and pytest decides the verdict. It is imported from the kit's folders before anything of the
project is on `sys.path`; then the kit's folders leave `sys.path`, so the project sees its own packages
(a dependency missing from its environment is missing in the run too). A project's own pytest (any
version) is shadowed during the hidden run; its plugins are never loaded (autoload is off anyway).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from donegate import paths
from donegate.errors import DonegateError

VENV_NAMES = (".venv", "venv")
KIT = "the kit's own interpreter"
# Modules the kit's pytest needs at import; their folders go on sys.path just for that import.
PYTEST_MODULES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging")


class EnvProblem(DonegateError):
    """The project's environment cannot run the hidden tests (gone, broken, or inside the repository):
    a person's to fix, not the agent's."""


class Interpreter:
    """One Python environment. (A plain class: it is built at every stop.)"""

    def __init__(self, shown: str, source: str, env: str = "", site: list[str] | None = None,
                 version: str = "") -> None:
        self.shown = shown  # the interpreter as the project knows it: sys.executable inside the run
        self.source = source  # how it was found: python: (config), --python, .venv, venv, poetry, the kit's
        self.env = env  # the environment's folder (a venv), "" for a base interpreter
        self.site = site or []  # its site-packages folders, in site's order
        self.version = version
        self.exe = ""  # what really runs: set by `resolve`

    def record(self) -> dict[str, Any]:
        """What the seal's manifest keeps (and doctor shows): `runs` and its `stat` pin the binary
        every stop starts (a link retargeted since, or the file replaced, is a changed environment)."""
        return {"python": self.shown, "source": self.source, "env": self.env, "version": self.version,
                "runs": self.exe, "stat": _identity(self.exe)}

    def describe(self) -> str:
        version = f" (Python {self.version})" if self.version else ""
        return f"{self.shown}{version}, {self.source}"


# -- finding it -------------------------------------------------------------------------------------

def _cfg(venv: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines()[:100]:
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def _venv_python(venv: Path) -> Path:
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
        if (venv / rel).exists() or (venv / rel).is_symlink():
            return venv / rel
    return venv / "bin" / "python"


def _site_of_venv(venv: Path, cfg: dict[str, str]) -> list[str]:
    found = sorted(str(p) for p in venv.glob("lib/python3*/site-packages") if p.is_dir())
    if (venv / "Lib" / "site-packages").is_dir():
        found.append(str(venv / "Lib" / "site-packages"))
    return found


def venv_interpreter(venv: Path, source: str) -> Interpreter:
    cfg = _cfg(venv)
    version = cfg.get("version_info") or cfg.get("version") or ""
    site = _site_of_venv(venv, cfg)
    interp = Interpreter(str(_venv_python(venv)), source, env=str(venv), site=site, version=version)
    if cfg.get("include-system-site-packages", "false").lower() == "true":
        interp.source += " (with the system's site-packages)"
        interp.site += _probe_site(_base_executable(venv, cfg))
    return interp


def kit_interpreter() -> Interpreter:
    import site

    return Interpreter(sys.executable, KIT, env=sys.prefix if sys.prefix != sys.base_prefix else "",
                       site=[p for p in site.getsitepackages() if os.path.isdir(p)],
                       version=".".join(map(str, sys.version_info[:3])))


def _poetry_env(project: Path) -> Path | None:
    """poetry's default environment for `project` (`virtualenvs.in-project` false), as poetry names it."""
    pyproject = project / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    if "[tool.poetry" not in text:
        return None
    import base64
    from donegate.core.fsafe import sha256 as _sha256
    import re

    # The project's name as poetry reads it (the first `name = "..."` of [tool.poetry] or [project]).
    found_name = re.search(r'^\[(?:tool\.poetry|project)\][^\[]*?^name\s*=\s*["\']([^"\']+)["\']', text, re.M | re.S)
    if found_name is None:
        return None
    name = found_name.group(1)
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = base64.urlsafe_b64encode(_sha256(os.path.normcase(os.path.realpath(project)).encode()).digest()).decode()[:8]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pypoetry" / "virtualenvs"
    found = sorted(cache.glob(f"{sanitized}-{digest}-py*"))
    return found[-1] if found and (found[-1] / "pyvenv.cfg").exists() else None


def find(project: Path, top: Path | None = None, named: str | None = None, named_by: str = "python:") -> Interpreter:
    """The project's interpreter (see the module's docstring for the order). `top`: the git top
    level above a monorepo's `project`; `named`: a `--python` or config `python:` value."""
    project = project.resolve()
    top = (top or project).resolve()
    if named:
        return named_interpreter(project, named, named_by)
    folder = project
    while True:
        for name in VENV_NAMES:
            if (folder / name / "pyvenv.cfg").is_file():
                return venv_interpreter(folder / name, name if folder == project else os.path.relpath(folder / name, project))
        if folder == top or not paths.is_within(folder, top) or folder.parent == folder:
            break
        folder = folder.parent
    poetry = _poetry_env(project)
    if poetry is not None:
        return venv_interpreter(poetry, "poetry's environment")
    return kit_interpreter()


def named_interpreter(project: Path, named: str, named_by: str) -> Interpreter:
    path = Path(named).expanduser()
    path = path if path.is_absolute() else project / path
    if path.is_dir() and (path / "pyvenv.cfg").is_file():
        return venv_interpreter(path, named_by)
    if path.is_file() and (path.parent.parent / "pyvenv.cfg").is_file():
        interp = venv_interpreter(path.parent.parent, named_by)
        interp.shown = str(path)
        return interp
    if not path.exists():
        raise EnvProblem(f"the interpreter named by {named_by} ({named}) does not exist: {path}",
                         f"point {named_by} at the project's interpreter or environment folder, or remove it")
    if not os.access(path, os.X_OK) or path.is_dir():
        raise EnvProblem(f"{named_by} names {path}, which is neither an interpreter nor a virtual environment",
                         f"point {named_by} at the project's python, or at its environment folder (with pyvenv.cfg)")
    return Interpreter(str(path), named_by, site=_probe_site(str(path)), version=_probe_version(str(path)))


# -- what really runs --------------------------------------------------------------------------------

def _base_executable(venv: Path, cfg: dict[str, str]) -> str:
    """The interpreter a venv's `bin/python` stands for: the link's target, else pyvenv.cfg's `home`."""
    link = _venv_python(venv)
    real = os.path.realpath(link)
    if os.path.isfile(real) and not paths.is_within(Path(real), venv):
        return real
    home = cfg.get("home", "")
    for name in (os.path.basename(real), f"python{cfg.get('version', '')[:4].rstrip('.')}", "python3", "python"):
        candidate = os.path.join(home, name)
        if home and os.path.isfile(candidate):
            return os.path.realpath(candidate)
    return real


def _identity(exe: str) -> list[int]:
    try:
        st = os.stat(exe)
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def resolve(interp: Interpreter, repo: Path, pinned: "dict[str, Any] | None" = None) -> Interpreter:
    """Set `interp.exe`: the real interpreter to start, never a file inside the repository (the agent
    writes there: a script in its place would answer for the tests). EnvProblem when there is none."""
    if pinned is not None:
        interp.exe = str(pinned.get("runs") or "")
        if _identity(interp.exe) != pinned.get("stat"):
            raise EnvProblem(f"the project's interpreter changed since the seal: {interp.shown} no longer runs the "
                             f"{interp.exe} the seal recorded (removed, upgraded or replaced)",
                             "recreate the project's environment as it was, or seal again")
    elif interp.source == KIT:
        interp.exe = os.path.realpath(sys.executable)
    elif interp.env:
        venv = Path(interp.env)
        if not (venv / "pyvenv.cfg").is_file():
            raise EnvProblem(f"the project's environment {venv} is gone (no pyvenv.cfg)",
                             f"recreate it (python -m venv {venv}, then install the project), or seal again")
        interp.exe = _base_executable(venv, _cfg(venv))
    else:
        interp.exe = os.path.realpath(interp.shown)
    exe = Path(interp.exe)
    if not exe.is_file() or not os.access(exe, os.X_OK):
        raise EnvProblem(f"the project's interpreter {interp.shown} does not run: {exe} is missing or not executable",
                         "recreate the project's environment (its Python was removed or upgraded), or seal again")
    if paths.is_within(exe, repo):
        raise EnvProblem(f"the project's interpreter {interp.shown} is a file inside the repository ({exe}), which the "
                         "agent can rewrite", "make the environment with links to a Python outside the repository "
                         "(python -m venv without --copies, or uv venv), or name one with python: in donegate.yaml")
    return interp


def _probe(exe: str, code: str) -> str:
    from donegate.core import proc

    try:
        res = proc.run([exe, "-I", "-S", "-c", code], timeout=30)
    except OSError:
        return ""
    return res.stdout.strip() if res.returncode == 0 else ""


def _probe_site(exe: str) -> list[str]:
    """A base interpreter's own site-packages (asked of it with -I -S: no .pth file runs)."""
    out = _probe(exe, "import site\nprint('\\n'.join(site.getsitepackages()))")
    return [line for line in out.splitlines() if os.path.isdir(line)]


def _probe_version(exe: str) -> str:
    return _probe(exe, "import sys; print('%d.%d.%d' % sys.version_info[:3])")


# -- sys.path ----------------------------------------------------------------------------------------

def _finder_roots(module: Path) -> list[str]:
    """Folders an editable finder maps its packages to, read from its source as data (never run):
    setuptools' `MAPPING = {'pkg': '/abs/src/pkg'}`, `editables`' `F.map_module('pkg', '/abs/pkg/__init__.py')`."""
    import ast

    try:
        tree = ast.parse(module.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    targets: list[str] = []
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MAPPING" for t in node.targets):
            value = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "MAPPING":
            value = node.value
        if value is not None:
            try:
                mapping = ast.literal_eval(value)
            except ValueError:
                continue
            if isinstance(mapping, dict):
                targets += [v for v in mapping.values() if isinstance(v, str)]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "map_module"
                and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            target = node.args[1].value
            targets.append(os.path.dirname(target) if os.path.basename(target) == "__init__.py" else target)
    return [os.path.dirname(t.rstrip("/")) for t in targets]


def site_entries(site_dirs: list[str]) -> list[str]:
    """Each site-packages folder, then what its `.pth` files add, as `site.addsitedir` would but running
    nothing: a path line is added when the folder exists; an `import` line is skipped, except that an
    editable finder's mapping is read as data."""
    import re

    out: list[str] = []

    def add(p: str) -> None:
        p = os.path.normpath(p)
        if p not in out and os.path.isdir(p):
            out.append(p)

    for sitedir in site_dirs:
        add(sitedir)
        try:
            names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(sitedir, name), encoding="utf-8", errors="replace") as f:
                    lines = f.read(1 << 20).splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith(("import ", "import\t")):
                    for mod in re.findall(r"\b(__editable___\w+_finder|_editable_impl_\w+)\b", line)[:1]:
                        for root in _finder_roots(Path(sitedir) / f"{mod}.py"):
                            add(root)
                    continue
                add(os.path.join(sitedir, line))
    return out


def project_entries(project: Path, pythonpath: list[str]) -> list[str]:
    """The project's own folders, first on sys.path: its root, the `pythonpath` folders (relative to
    it), and `src/` when that holds code and `pythonpath` does not already say where it is."""
    out = [str(project)]
    for entry in pythonpath:
        p = os.path.normpath(os.path.join(project, entry))
        if p not in out:
            out.append(p)
    src = project / "src"
    if not pythonpath and src.is_dir() and any(e.name.endswith(".py") or (Path(e.path) / "__init__.py").exists()
                                               or e.is_dir() and not e.name.startswith((".", "_"))
                                               for e in os.scandir(src)):
        out.append(str(src))
    return out


def _find_spec(name: str) -> Any:
    """`importlib.util.find_spec(name)` of a top-level module, asked of the finders as the import system asks them,
    without `importlib.util`'s import (~0.4-0.8 ms of every stop's CPU)."""
    if name in sys.modules:
        return getattr(sys.modules[name], "__spec__", None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def pytest_dirs() -> list[str]:
    """The kit's folders holding pytest and what it imports."""
    out: list[str] = []
    for name in PYTEST_MODULES:
        spec = _find_spec(name)
        if spec is None or not spec.origin:
            continue
        origin = Path(spec.origin)
        folder = str(origin.parent.parent if origin.name == "__init__.py" else origin.parent)
        if folder not in out:
            out.append(folder)
    return out


# The first lines of both runs' bootstraps (inside their `main()`): the runs start with no flag (the first as
# `python -m pytest`, its bootstrap run by `site` from the starter's one `.pth` file; the second as `python -c`), from
# the kit's own environment (`Launch.starter`), so `site` finds nothing else to add: no other `.pth` file runs, neither
# the base installation's nor the project environment's; the environment is the allow-list (no PYTHON*
# variable) and HOME is empty (no user site). The project's environment is added as data by the bootstrap.
# `std`: sys.path as the interpreter computed it, before `site` appended to it (site only appends: its first
# entry is a site-packages folder) and without the current folder `-c` put first (`-m` puts it there after `site`).
START = """\
    import sys, site as _site
    _own = set(_site.getsitepackages())
    _own.add(_site.getusersitepackages())
    std = []
    for _p in sys.path:
        if _p in _own:
            break
        if _p:
            std.append(_p)
    sys.path[:] = std
"""


def lay(path: Path, text: str = "", link: str = "") -> None:
    """Write `text` at `path` (or make it a link to `link`), unless it holds exactly that already: a run's walls built
    in the folder the launcher laid out for the process it started early (`donegate.hidden.early`). Whatever else is
    there is replaced (the early process is then not the one the stop starts, and is ended)."""
    try:
        if (os.readlink(path) == link) if link else (not path.is_symlink() and path.read_text(encoding="utf-8") == text):
            return
        path.unlink()
    except (OSError, UnicodeDecodeError):
        pass
    if link:
        path.symlink_to(link)
    else:
        path.write_text(text, encoding="utf-8")


class Launch:
    """How to start the hidden run's interpreter: `argv` (the prefix: interpreter and flags), the
    `sys.path` it gets (`front`, then its own standard library, then `site`), the folders to bind
    read-only in a sandbox (`binds`), and `theirs`: folders whose code is the environment's, not the
    code under test's (for the plugin's watch). The second harness starts the same interpreter from this."""

    def __init__(self, interp: Interpreter, front: list[str], site: list[str], pytest: list[str], binds: list[Path]) -> None:
        self.interp = interp
        # The kit's own jobs, which run no product code (the bytecode compile): `-I -S`. The runs start from
        # `starter` with no flag a developer's `python -m pytest` lacks (`START`).
        self.argv = [interp.exe, "-I", "-S"]
        self.front, self.site, self.pytest, self.binds = front, site, pytest, binds

    def starter(self, folder: Path, pth: str = "") -> Path:
        """Make in `folder` the environment the runs start from: `bin/python`, a link to the real interpreter,
        and a `pyvenv.cfg` the kit writes (its `home` that interpreter's folder, no system site-packages).
        Started from there, `site` runs as in a developer's environment and finds only `pth` (the first run's
        bootstrap, `bootstrap.PTH`) in its site-packages: no `.pth` file of the base installation or of the project's
        environment runs (the kit adds the project's path lines itself), and no flag is needed. Returns the link.
        What is there already (a folder the launcher laid out for a run it started early, `donegate.hidden.early`) is
        kept where it is what would be written."""
        (folder / "bin").mkdir(parents=True, exist_ok=True)
        exe = folder / "bin" / "python"
        lay(exe, link=self.interp.exe)
        version = f"\nversion = {self.interp.version}" if self.interp.version else ""
        lay(folder / "pyvenv.cfg", f"home = {os.path.dirname(self.interp.exe)}\ninclude-system-site-packages = false{version}\n")
        if pth:
            # site's folder in an environment: lib/pythonX.Y/site-packages (lib64's is searched beside lib's)
            known = ".".join(self.interp.version.split(".")[:2])
            for xy in [known] if known.count(".") == 1 else [f"3.{minor}" for minor in range(8, 16)]:
                site = folder / "lib" / f"python{xy}" / "site-packages"
                site.mkdir(parents=True, exist_ok=True)
                lay(site / "_run.pth", pth)
        return exe

    def spec(self, seen: "dict[str, str] | None" = None) -> dict[str, Any]:
        """What the bootstrap reads (JSON), paths under the repository moved to where the run sees it."""
        def move(p: str) -> str:
            for a, b in (seen or {}).items():
                if p == a or p.startswith(a + os.sep):
                    return b + p[len(a):]
            return p
        return {"front": [move(p) for p in self.front], "site": [move(p) for p in self.site], "pytest": self.pytest,
                "executable": move(self.interp.shown), "theirs": [move(p) for p in self.site],
                "prefix": move(self.interp.env) if self.interp.env else ""}


def launch(project: Path, repo: Path, *, named: str | None = None, named_by: str = "python:",
           pythonpath: list[str] | None = None, interp: Interpreter | None = None,
           pinned: "dict[str, Any] | None" = None, allowed: "list[str] | None" = None,
           top: Path | None = None) -> Launch:
    """The hidden run's interpreter for `project` (a folder of the git repository `repo`): found,
    resolved to a real interpreter outside the repository, its sys.path computed. EnvProblem when the
    environment cannot run (gone, broken, inside the repository)."""
    project, repo = project.resolve(), repo.resolve()
    top = (top or repo).resolve()  # the git working tree: where an environment is looked for, where no binary may lie
    interp = resolve(interp or find(project, top, named, named_by), top, pinned)
    kit = paths.protected_roots(home=paths.home())
    # A path line naming a folder that holds the kit or the state root is dropped; the environment's own
    # site-packages stay (an installed kit's own is a protected root, and the kit's fallback environment).
    # Every path below is resolved once and compared as resolved (`paths.within`): `paths.is_within` resolved both of its
    # paths at each of ~26 calls, ~5 ms of every stop's CPU. `kit` (protected_roots) and `repo` are resolved already.
    entries = site_entries(interp.site)
    real = {p: Path(p).resolve() for p in entries}
    site = [p for p in entries if p in interp.site or not any(paths.within(k, real[p]) for k in kit)]
    pytest = pytest_dirs()
    exe = Path(interp.exe)
    base = exe.parent.parent if exe.parent.name in ("bin", "Scripts") else exe.parent
    own = [base, *([Path(interp.env)] if interp.env else []), *map(Path, interp.site), *map(Path, pytest)]
    out: list[Path] = []
    for b in own:
        b = b.resolve()
        if b not in out and not paths.within(b, repo):
            out.append(b)
    # What the environment's path lines name (the agent can write them) is bound back only where the
    # seal saw it too (`allowed`), and never a folder holding, or inside, the kit, the state root or a
    # user's home: a line naming ~/.ssh or the state root must not un-hide it in the sandbox.
    from donegate.hidden.confine import user_homes

    hidden = [*kit, *user_homes()]
    for p in site:
        b = real[p]
        if b in out or paths.within(b, repo) or any(paths.within(b, q) for q in out):
            continue
        if any(paths.within(h, b) for h in hidden) or any(paths.within(b, k) for k in kit):
            continue
        if allowed is not None and str(b) not in allowed:
            continue
        out.append(b)
    return Launch(interp, project_entries(project, list(pythonpath or [])), site, pytest, out)


def sealed(manifest: dict[str, Any], repo: Path) -> Launch:
    """The interpreter the seal recorded, for a stop: the same environment again (an environment
    that is gone or broken is an EnvProblem, never quietly another interpreter). A store sealed
    before the kit recorded one: found as a seal would."""
    repo = repo.resolve()
    project = (repo / str(manifest.get("project") or ".")).resolve()
    if not paths.is_within(project, repo):
        project = repo
    rec = manifest.get("python")
    if not isinstance(rec, dict):
        return launch(project, repo)
    pythonpath = [p for p in rec.get("pythonpath") or [] if isinstance(p, str)]
    source = str(rec.get("source") or "")
    interp: Interpreter | None = None
    if source == KIT:
        interp = kit_interpreter()
    elif rec.get("env"):
        venv = Path(str(rec["env"]))
        if not (venv / "pyvenv.cfg").is_file():
            raise EnvProblem(f"the project's environment {venv}, which the seal used, is gone",
                             f"recreate it (python -m venv {venv}, then install the project into it), or seal again")
        interp = venv_interpreter(venv, source)
        interp.shown = str(rec.get("python") or interp.shown)
    elif rec.get("named"):
        interp = named_interpreter(project, str(rec["named"]), str(rec.get("named_by") or "python:"))
    binds = rec.get("binds")
    return launch(project, repo, pythonpath=pythonpath, interp=interp, pinned=rec if rec.get("runs") else None,
                  allowed=[str(b) for b in binds] if isinstance(binds, list) else None)


def hook_problem(interp: str, repo: Path) -> "tuple[str, str] | None":
    """(message, fix) when the Stop hook's interpreter lies inside the repository (`install` refuses
    it, `doctor` reports it): the agent can write a `.pth` file into that environment that runs before
    the gate, and the stop then exits 0 with no ledger line."""
    p = Path(os.path.abspath(interp))
    env = p.parent.parent if (p.parent.parent / "pyvenv.cfg").exists() else p
    if not any(paths.is_within(x, repo.resolve()) for x in (p, env, Path(os.path.realpath(p)))):
        return None
    return (f"the hook's interpreter {p} lies inside the repository: the agent can write a .pth file into its "
            "environment that runs before the gate (the stop then ends with no ledger line)",
            "install the kit with an interpreter outside the repository (pipx install donegate, or a venv elsewhere), "
            "and run that donegate's install")


def doctor_lines(repo: Path, manifest: "dict[str, Any] | None", cfg: dict[str, Any]) -> "list[tuple[str, str, str, str]]":
    """(level, what, where, fix) of `donegate doctor`'s lines about the hidden run's interpreter:
    the one the seal recorded (or would find, unsealed), and whether it still runs."""
    try:
        if manifest is not None:
            got = sealed(manifest, repo)
        else:
            got = launch(repo, repo, named=cfg.get("python"), pythonpath=cfg.get("pythonpath") or [])
    except EnvProblem as exc:
        return [("error", f"the hidden run's interpreter: {exc.message}", str(repo), exc.fix or "")]
    interp = got.interp
    where = " ".join(got.front)
    out = [("ok", f"the hidden run uses {interp.describe()}, running {interp.exe}; sys.path starts with {where}", interp.shown, "")]
    if manifest is not None and interp.source == KIT:
        now = find(Path(got.front[0]), repo, cfg.get("python"))
        if now.source != KIT:
            out.append(("warning", f"the seal uses the kit's own interpreter, but the project now has {now.describe()}",
                        now.shown, "seal again to run the hidden tests in the project's environment"))
    return out
