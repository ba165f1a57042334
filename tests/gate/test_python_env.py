"""The hidden run in the project's own environment (issue 20): real projects built from files, real
venvs with real editable installs (pip, offline), the seal's messages, the stop's hand-over.

Venvs are slow to make: one template per session (conftest `py_template`), copied into each project;
the projects that only read are module-scoped and shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.seal import store
from donegate.hidden import python as pyenv, runner
from tests.support.pool import SharedRuns, shared_root
from tests.support.pyprojects import SETUPTOOLS, build_wheel, clone_venv, editable, kit_pth, pip, site_packages
from tests.support.repos import KIT, ledger_lines, make_repo, run_hook, seal, stop_lines, stop_payload, write_config

CALC = "def add(a, b):\n    return a + b\n"
HIDDEN_CALC = """\
def test_add_exists():
    from calc import add
    assert add(2, 3) == 5

def test_mul_is_new():
    from calc import mul
    assert mul(2, 3) == 6
"""


def hidden(tmp_path: Path, body: str, name: str = "test_hidden.py") -> Path:
    path = tmp_path / "hidden" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    return path


def one_store(tmp_path: Path, body: str) -> Path:
    """A store folder (tests + the kit's pytest.ini) for runner.run, without a seal."""
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "test_hidden.py").write_text(body)
    (folder / runner.INI_NAME).write_text(runner.INI_TEXT)
    return folder


def manifest_of(repo: Path, kit_home: Path) -> dict:
    st = store.load(repo, kit_home)
    assert st is not None
    return st.manifest


@pytest.fixture(scope="module")
def src_project(py_template, tmp_path_factory) -> Path:
    """src layout, `pip install -e .` (setuptools, PEP 660: a path line in `__editable__.calc-0.1.pth`)."""
    repo = make_repo(tmp_path_factory.mktemp("srcproj") / "calc", {
        "pyproject.toml": SETUPTOOLS.format(name="calc", deps="[]"),
        "src/calc/__init__.py": CALC, ".gitignore": ".venv/\n"})
    clone_venv(py_template, repo / ".venv")
    editable(repo / ".venv", repo)
    pth = (site_packages(repo / ".venv") / "__editable__.calc-0.1.pth").read_text()
    assert pth.strip() == str(repo / "src")  # the path-line style
    return repo


@pytest.fixture(scope="session")
def dep_project(py_template, tmp_path_factory) -> Path:
    """A flat package with a runtime dependency (a wheel built here), installed `pip install -e .`:
    setuptools' finder style (`import __editable___shop2_0_1_finder` in the .pth). The dependency walks
    the call stack, as logging and many libraries do: living in the repository's `.venv` does not make
    it the code under test (the plugin's watch would call that tampering). Made once for the whole run
    (tests/support/pool.py: a pip install each xdist worker made again as a module fixture); its tests
    only read it (a test that changes it changes a copy)."""

    def build(key: str, base: Path) -> Path:
        wheels = base / "wheels"
        build_wheel(wheels, "fmtlib", {"fmtlib/__init__.py": ("import sys\n\ndef money(cents):\n    sys._getframe(1)\n"
                                                              "    return f'${cents / 100:.2f}'\n")})
        repo = make_repo(base / "shop2", {
            "pyproject.toml": SETUPTOOLS.format(name="shop2", deps='["fmtlib"]') + '\n[tool.setuptools]\npackages = ["shop2"]\n',
            "shop2/__init__.py": "from fmtlib import money\n\ndef total(cents):\n    return money(cents)\n",
            ".gitignore": ".venv/\n"})
        clone_venv(py_template, repo / ".venv")
        editable(repo / ".venv", repo, "--find-links", str(wheels))
        return repo

    repo = SharedRuns(shared_root(tmp_path_factory, "dep-project"), ["dep"], build, threads=0)["dep"]
    assert "__editable___shop2_0_1_finder" in (site_packages(repo / ".venv") / "__editable__.shop2-0.1.pth").read_text()
    return repo


HIDDEN_SHOP = """\
def test_total_formats():
    from shop2 import total
    assert total(250) == "$2.50"

def test_discount_is_new():
    from shop2 import discount
    assert discount(1000) == 900
"""


# -- finding the interpreter ----------------------------------------------------------------------------

def test_a_src_layout_with_an_editable_install_seals_in_its_own_venv(src_project, kit_home, tmp_path):
    res = seal(src_project, hidden(tmp_path, HIDDEN_CALC))
    assert res.returncode == 0, res.stderr
    assert "1 new requirements failing, 1 already passing" in res.stdout
    assert f"the hidden run uses {src_project}/.venv/bin/python (Python 3." in res.stdout and ".venv)" in res.stdout
    m = manifest_of(src_project, kit_home)
    assert m["python"]["source"] == ".venv" and m["python"]["env"] == str(src_project / ".venv")
    assert m["python"]["runs"] == os.path.realpath(src_project / ".venv" / "bin" / "python")
    assert m["baseline"]["failing"] == ["test_hidden.py::test_mul_is_new"]
    # A stop runs the same environment: the new requirement blocks, on the feature, not on an import of calc.
    out = run_hook(stop_payload(src_project))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "test_mul_is_new" in out.stderr and "test_add_exists" not in out.stderr
    assert "cannot import name 'mul'" in out.stderr
    # The same stop again is answered from the cache: the venv's links out of the repository (its interpreter)
    # are keyed by where they lead, not a reason to run again.
    again = run_hook(stop_payload(src_project))
    assert again.returncode == 2 and "cannot import name 'mul'" in again.stderr
    assert os.path.islink(src_project / ".venv" / "bin" / "python") and stop_lines(kit_home)[-1]["cached"] is True


def test_a_dependency_installed_in_the_venv_imports_and_the_finder_is_read_not_run(dep_project, kit_home, tmp_path):
    res = seal(dep_project, hidden(tmp_path, HIDDEN_SHOP))
    assert res.returncode == 0, res.stderr
    m = manifest_of(dep_project, kit_home)
    assert m["baseline"] == {"passing": ["test_hidden.py::test_total_formats"],
                             "failing": ["test_hidden.py::test_discount_is_new"], "skipped": []}
    launch = pyenv.sealed(m, dep_project)
    assert str(dep_project) in launch.site  # from the finder's MAPPING, as data


def test_a_missing_dependency_refuses_the_seal_in_one_line(dep_project, kit_home, tmp_path):
    """The same project without its environment: the kit's interpreter has no fmtlib. Before, the
    baseline called test_total_formats a new requirement (or printed a 25-line traceback)."""
    bare = make_repo(tmp_path / "bare", {p: (dep_project / p).read_text() for p in ("pyproject.toml", "shop2/__init__.py")})
    res = seal(bare, hidden(tmp_path, HIDDEN_SHOP))
    assert res.returncode == 1
    err = res.stderr.strip().splitlines()
    assert len(err) == 2 and err[1].strip().startswith("fix:"), res.stderr
    assert "fmtlib is not installed with the project's interpreter" in err[0] and sys.executable in err[0]
    assert "the kit's own interpreter" in err[0] and "imported by shop2/__init__.py" in err[0]
    assert "python -m venv" in err[1] and "pip install -e" in err[1]
    assert store.load(bare, kit_home) is None


def test_a_src_layout_without_any_install_works_as_is(kit_home, tmp_path):
    repo = make_repo(tmp_path / "plain", {"src/calc/__init__.py": CALC})
    res = seal(repo, hidden(tmp_path, HIDDEN_CALC))
    assert res.returncode == 0, res.stderr
    assert manifest_of(repo, kit_home)["baseline"]["failing"] == ["test_hidden.py::test_mul_is_new"]


def test_a_package_off_sys_path_is_named_with_the_pythonpath_fix_and_the_key_works(kit_home, tmp_path):
    repo = make_repo(tmp_path / "libbed", {"lib/calc/__init__.py": CALC})
    test = hidden(tmp_path, HIDDEN_CALC)
    res = seal(repo, test)
    assert res.returncode == 1
    assert "the project's own package calc cannot be imported" in res.stderr and "lies in lib/" in res.stderr
    assert "pythonpath: [lib]" in res.stderr
    write_config(kit_home, "pythonpath: [lib]\n")
    res = seal(repo, test)
    assert res.returncode == 0, res.stderr
    assert manifest_of(repo, kit_home)["python"]["pythonpath"] == ["lib"]


def test_a_new_module_of_the_project_is_a_requirement_not_an_environment_problem(kit_home, tmp_path):
    repo = make_repo(tmp_path / "newmod", {"calc.py": CALC})
    res = seal(repo, hidden(tmp_path, "def test_new_tool():\n    import calctool\n    assert calctool.run() == 0\n"))
    assert res.returncode == 0, res.stderr
    assert "1 new requirements failing" in res.stdout


def test_the_project_pytest_is_shadowed_by_the_kit_s(py_template, kit_home, tmp_path):
    """The environment is the agent's to write, and pytest decides the verdict: the kit's is used."""
    repo = make_repo(tmp_path / "ownpytest", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    clone_venv(py_template, repo / ".venv")
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "pytest", {"pytest/__init__.py": "raise SystemExit('the project pytest ran')\n"}, version="0.0.1")
    pip(repo / ".venv" / "bin" / "python", "install", "--find-links", str(wheels), "pytest==0.0.1")
    body = ("import pytest, sys\n\ndef test_kit_pytest():\n"
            f"    assert not pytest.__file__.startswith({str(repo)!r})\n"
            "    assert sys.executable.endswith('/.venv/bin/python')\n")  # the project's (unconfined: the copy's link)
    res = seal(repo, hidden(tmp_path, body))
    assert res.returncode == 0, res.stderr
    assert manifest_of(repo, kit_home)["baseline"]["passing"] == ["test_hidden.py::test_kit_pytest"]


# -- nothing of the environment runs before the guards -----------------------------------------------

PLANTS = {
    "evil.pth": "import builtins, os; builtins.PLANTED = 'pth'; open(os.environ.get('SENTINEL_DIR', '/nonexistent') + '/pth', 'w')\n{extra}\n",
    "sitecustomize.py": "import builtins, os\nbuiltins.PLANTED = 'sitecustomize'\nopen('{sentinel}/sitecustomize', 'w')\n",
    "usercustomize.py": "import builtins\nbuiltins.PLANTED = 'usercustomize'\nopen('{sentinel}/usercustomize', 'w')\n",
}


@pytest.mark.parametrize("confine", ["off", "on"])
def test_pth_import_lines_and_sitecustomize_never_run_but_path_lines_do(py_template, tmp_path, confine):
    if confine == "on":
        from tests.support import require

        require.bwrap()
    repo = make_repo(tmp_path / "planted", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    sentinel = tmp_path / "sentinels"
    sentinel.mkdir()
    extra = tmp_path / "extra"
    (extra / "helper").mkdir(parents=True)
    (extra / "helper" / "__init__.py").write_text("OK = 1\n")
    sp = site_packages(venv)
    for name, text in PLANTS.items():
        (sp / name).write_text(text.format(sentinel=sentinel, extra=extra))
    # Honest look-alike: started the ordinary way, the planted files do run (so the test below can fail).
    control = subprocess.run([str(venv / "bin" / "python"), "-c", "import builtins; print(builtins.PLANTED)"],
                             capture_output=True, text=True, env={**os.environ, "SENTINEL_DIR": str(sentinel)}, timeout=60)
    assert control.stdout.strip() in ("sitecustomize", "usercustomize", "pth"), control.stderr
    for f in sentinel.iterdir():
        f.unlink()
    body = ("import builtins\n\ndef test_nothing_planted_ran():\n    assert not hasattr(builtins, 'PLANTED')\n\n"
            "def test_the_path_line_counts():\n    import helper\n    assert helper.OK == 1\n")
    run = runner.run(one_store(tmp_path, body), repo, timeout=120, confine=confine)
    assert run.ok and not run.failing(), (run.problem, run.failing(), run.output[-2000:])
    assert run.python["env"] == str(venv)
    assert not list(sentinel.iterdir())


def test_a_wrapper_in_place_of_the_venv_python_never_runs(py_template, tmp_path, kit_home):
    """`.venv/bin/python` replaced by a script that would answer for the tests: the run starts the
    interpreter pyvenv.cfg names instead; after the seal, a link retargeted to a script outside the
    repository changes nothing: a stop starts the binary the seal pinned."""
    repo = make_repo(tmp_path / "wrapped", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    sentinel = tmp_path / "ran"
    wrapper = f"#!/bin/sh\ntouch {sentinel}\nexit 0\n"
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").write_text(wrapper)
    (venv / "bin" / "python").chmod(0o755)
    res = seal(repo, hidden(tmp_path, "def test_add():\n    from calc import add\n    assert add(1, 1) == 2\n"))
    assert res.returncode == 0, res.stderr
    assert not sentinel.exists()
    outside = tmp_path / "outside-python"
    outside.write_text(wrapper)
    outside.chmod(0o755)
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").symlink_to(outside)
    out = run_hook(stop_payload(repo))
    assert out.returncode == 0 and not sentinel.exists(), out.stderr
    assert ledger_lines(kit_home)[-1]["verdict"] == "pass"


def test_the_environment_is_read_only_in_the_confined_run(py_template, tmp_path):
    from tests.support import require

    require.bwrap()
    repo = make_repo(tmp_path / "ro", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    target = site_packages(venv) / "dropped.py"
    body = ("import pytest\n\ndef test_cannot_write_the_env():\n"
            f"    with pytest.raises(OSError):\n        open({str(target)!r}, 'w').write('x = 1')\n")
    run = runner.run(one_store(tmp_path, body), repo, timeout=120, confine="on")
    assert run.ok and not run.failing(), (run.problem, run.failing())
    assert not target.exists()


# -- at a stop: an environment the agent cannot repair goes to a person ----------------------------

def test_an_environment_gone_at_a_stop_is_handed_over_not_counted(py_template, tmp_path, kit_home):
    repo = make_repo(tmp_path / "gone", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    clone_venv(py_template, repo / ".venv")
    res = seal(repo, hidden(tmp_path, HIDDEN_CALC))
    assert res.returncode == 0, res.stderr
    subprocess.run(["rm", "-rf", str(repo / ".venv")], check=True)
    for session in ("a", "a"):
        out = run_hook(stop_payload(repo, session=session))
        assert out.returncode == 0, out.stderr
        told = json.loads(out.stdout)["systemMessage"]
        assert "is gone" in told and "NOT verified" in told and "seal again" in told
    lines = stop_lines(kit_home)
    assert [line["verdict"] for line in lines] == ["gave_up", "gave_up"]
    assert all(line["gates"]["environment"]["problem"] for line in lines)


# -- a monorepo package ---------------------------------------------------------------------------------

def test_a_monorepo_package_is_its_own_project(py_template, tmp_path, kit_home):
    mono = make_repo(tmp_path / "mono", {
        "libs/pkg/src/pkg/__init__.py": "NAME = 'pkg'\n", "libs/pkg/pyproject.toml": SETUPTOOLS.format(name="pkg", deps="[]"),
        "libs/other/pkg/__init__.py": "NAME = 'the wrong one'\n", ".gitignore": ".venv/\n"})
    clone_venv(py_template, mono / "libs" / "pkg" / ".venv")
    body = ("import os\n\ndef test_project_root():\n    import pkg\n    assert pkg.NAME == 'pkg'\n"
            "    assert os.path.isfile('src/pkg/__init__.py')\n")  # the package's folder (unconfined: in the copy)
    pkg = mono / "libs" / "pkg"
    res = seal(pkg, hidden(tmp_path, body))
    assert res.returncode == 0, res.stderr
    m = manifest_of(pkg, kit_home)
    assert m["python"]["env"] == str(pkg / ".venv")
    assert m["baseline"]["passing"] == ["test_hidden.py::test_project_root"], res.stdout
    out = run_hook(stop_payload(pkg))
    assert out.returncode == 0, out.stderr
    assert ledger_lines(kit_home)[-1]["verdict"] == "pass"


def test_a_monorepo_package_without_its_own_venv_uses_the_shared_one_above(py_template, tmp_path, kit_home):
    mono = make_repo(tmp_path / "mono2", {"libs/pkg/src/pkg/__init__.py": "NAME = 'pkg'\n", ".gitignore": ".venv/\n"})
    clone_venv(py_template, mono / ".venv")
    pkg = mono / "libs" / "pkg"
    res = seal(pkg, hidden(tmp_path, "def test_pkg():\n    import pkg\n    assert pkg.NAME == 'pkg'\n"))
    assert res.returncode == 0, res.stderr
    m = manifest_of(pkg, kit_home)
    assert m["python"]["env"] == str(mono / ".venv") and m["python"]["source"] == "../../.venv"
    assert m["baseline"]["passing"] == ["test_hidden.py::test_pkg"]
    out = run_hook(stop_payload(pkg))
    assert out.returncode == 0, out.stderr
    assert ledger_lines(kit_home)[-1]["verdict"] == "pass"


# -- the hook's own interpreter ---------------------------------------------------------------------

def test_install_refuses_a_hook_interpreter_inside_the_repository(py_template, tmp_path):
    repo = make_repo(tmp_path / "selfhosted", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    kit_pth(venv)  # the kit installed into the project's own environment
    res = subprocess.run([str(venv / "bin" / "python"), "-m", "donegate", "install", str(repo)], capture_output=True,
                         text=True, timeout=120, cwd=KIT)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "lies inside the repository" in res.stderr and ".pth" in res.stderr and "fix:" in res.stderr
    assert not (repo / ".claude" / "settings.json").exists()
    # Honest look-alike: the kit's own interpreter, outside the repository, installs.
    ok = subprocess.run([sys.executable, "-m", "donegate", "install", str(repo), "--sandbox", "off"], capture_output=True,
                        text=True, timeout=120, cwd=KIT)
    assert ok.returncode == 0, ok.stderr


def test_doctor_reports_a_hook_interpreter_inside_the_repository_and_shows_the_project_s(py_template, tmp_path, kit_home):
    from donegate import config
    from donegate.install import diagnose as doctor, project as install
    from donegate.claude import stubs
    from donegate.claude.settings import kit_entries

    repo = make_repo(tmp_path / "doc", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    # As an install made with the project's interpreter wrote it (before install refused one): its stubs too.
    entries = kit_entries(config.defaults(), python=str(venv / "bin" / "python"), repo=repo)
    stubs.write(entries["stubs"], entries.get("links"))
    data = install.build_settings({}, sandbox=False, entries=entries)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(data))
    found = doctor.diagnose(repo)
    inside = [f for f in found if "lies inside the repository" in f.what]
    assert inside and inside[0].level == "error" and "pipx" in inside[0].fix
    shown = [f for f in found if f.what.startswith("the hidden run uses")]
    assert shown and f"{venv}/bin/python" in shown[0].what and ".venv" in shown[0].what


# -- the pieces, directly ---------------------------------------------------------------------------

def test_site_entries_take_path_lines_and_finder_mappings_never_import_lines(tmp_path):
    sp = tmp_path / "site-packages"
    (sp / "sub").mkdir(parents=True)
    (tmp_path / "mapped" / "pkg").mkdir(parents=True)
    (sp / "a.pth").write_text(f"# comment\nsub\nimport os; os.system('touch {tmp_path}/ran')\n/nonexistent\n")
    (sp / "__editable___pkg_1_finder.py").write_text(f"MAPPING: dict[str, str] = {{'pkg': '{tmp_path}/mapped/pkg'}}\n")
    (sp / "__editable__.pkg-1.pth").write_text("import __editable___pkg_1_finder; __editable___pkg_1_finder.install()\n")
    (sp / "_editable_impl_other.py").write_text(f"from editables.redirector import RedirectingFinder as F\nF.install()\n"
                                                f"F.map_module('other', '{tmp_path}/elsewhere/other/__init__.py')\n")
    (tmp_path / "elsewhere" / "other").mkdir(parents=True)
    (sp / "_editable_impl_other.pth").write_text("import _editable_impl_other\n")
    (sp / ".hidden.pth").write_text(f"{tmp_path}\n")
    got = pyenv.site_entries([str(sp)])
    assert got == [str(sp), str(tmp_path / "mapped"), str(tmp_path / "elsewhere"), str(sp / "sub")]  # .pth files A-Z
    assert not (tmp_path / "ran").exists()


def test_a_legacy_develop_install_is_a_path_line(py_template, tmp_path):
    """`setup.py develop` (no pyproject.toml): easy-install.pth, the old path style."""
    proj = tmp_path / "legacy"
    (proj / "src" / "leg").mkdir(parents=True)
    (proj / "src" / "leg" / "__init__.py").write_text("X = 1\n")
    (proj / "setup.py").write_text("from setuptools import setup\nsetup(name='leg', version='0.1', package_dir={'': 'src'}, packages=['leg'])\n")
    venv = clone_venv(py_template, tmp_path / "venv")
    editable(venv, proj, "--no-use-pep517")
    assert str(proj / "src") in pyenv.site_entries([str(site_packages(venv))])


def test_an_interpreter_inside_the_repository_is_refused(py_template, tmp_path):
    repo = make_repo(tmp_path / "copies", {"calc.py": CALC})
    venv = clone_venv(py_template, repo / ".venv")
    real = os.path.realpath(venv / "bin" / "python")
    (venv / "bin" / "python").unlink()
    subprocess.run(["cp", real, str(venv / "bin" / "python")], check=True)
    cfg = (venv / "pyvenv.cfg").read_text()
    (venv / "pyvenv.cfg").write_text("\n".join(line for line in cfg.splitlines() if not line.startswith("home")) + "\n")
    with pytest.raises(pyenv.EnvProblem, match="inside the repository"):
        pyenv.launch(repo, repo)


def test_an_interpreter_that_cannot_import_the_kit_pytest_is_an_environment_problem(tmp_path):
    """Before the plugin's hello nothing of the project has run: the run says the interpreter cannot
    run pytest (a person's to fix; the seal refuses, a stop hands over), never 'exited early'."""
    repo = make_repo(tmp_path / "nopytest", {"calc.py": CALC})
    launch = pyenv.launch(repo, repo)
    launch.pytest = []  # as on a Python the kit's pytest does not run on
    run = runner.run(one_store(tmp_path, "def test_x():\n    pass\n"), repo, timeout=60, confine="off", python=launch)
    assert not run.ok and not run.tamper
    assert run.environment.startswith(f"the project's interpreter {sys.executable}") and "cannot run the kit's pytest" in run.environment
    assert "ModuleNotFoundError" in run.environment


def test_a_pth_line_cannot_un_hide_the_home_or_the_state_root_in_the_sandbox(py_template, tmp_path, kit_home):
    """The environment's path lines are the agent's to write: one naming a folder of the user's home
    (credentials) or the state root (other stores, the ledger) is not bound back into the sandbox.
    A path line the seal saw, outside those, still is (the honest look-alike: `extra`)."""
    from tests.support import require

    require.bwrap()
    secret = Path(os.environ["HOME"]) / "secret"
    secret.mkdir()
    (secret / "creds.txt").write_text("token")
    (kit_home / "ledger.jsonl").write_text("{}\n")
    extra = tmp_path / "extra"
    (extra / "helper").mkdir(parents=True)
    (extra / "helper" / "__init__.py").write_text("OK = 1\n")
    repo = make_repo(tmp_path / "unhide", {"calc.py": CALC, ".gitignore": ".venv/\n"})
    venv = clone_venv(py_template, repo / ".venv")
    (site_packages(venv) / "honest.pth").write_text(f"{extra}\n")
    body = ("import os\n\ndef test_helper():\n    import helper\n    assert helper.OK == 1\n\n"
            f"def test_no_secret():\n    assert not os.path.exists({str(secret / 'creds.txt')!r})\n\n"
            f"def test_no_ledger():\n    assert not os.path.exists({str(kit_home / 'ledger.jsonl')!r})\n")
    res = seal(repo, hidden(tmp_path, body))
    assert res.returncode == 0, res.stderr
    # After the seal, the agent adds path lines naming the secret folder and the state root.
    (site_packages(venv) / "zz.pth").write_text(f"{secret}\n{kit_home}\n")
    launch = pyenv.sealed(manifest_of(repo, kit_home), repo)
    assert str(secret) in launch.site and secret not in launch.binds and kit_home not in launch.binds
    run = runner.run(store.load(repo, kit_home).path, repo, timeout=120, confine="on", python=launch)
    assert run.ok and not run.failing(), (run.problem, run.failing())
    # At a seal (the person's environment as it is), a folder of the home may be bound (an editable
    # install of a project kept under ~/src); the state root never is.
    fresh = pyenv.launch(repo, repo)
    assert kit_home not in fresh.binds and extra in fresh.binds


def test_at_a_stop_a_dependency_the_change_imports_but_nobody_installed_is_named(dep_project, kit_home, tmp_path):
    """The agent's change imports a package its environment lacks: the block names the module, the
    interpreter and the fix (the agent may install it), beside the failing test."""
    repo = tmp_path / "shop2"
    subprocess.run(["cp", "-a", str(dep_project), str(repo)], check=True)
    (repo / "shop2" / "__init__.py").write_text("from fmtlib import money\n\ndef total(cents):\n    return money(cents)\n\n"
                                                "def discount(cents):\n    import pricing\n    return pricing.off(cents)\n")
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace('["fmtlib"]', '["fmtlib", "pricing"]'))
    res = seal(repo, hidden(tmp_path, HIDDEN_SHOP))
    assert res.returncode == 1 and "pricing is not installed" in res.stderr  # the seal refuses it, too
    (repo / "shop2" / "__init__.py").write_text((dep_project / "shop2" / "__init__.py").read_text())
    res = seal(repo, hidden(tmp_path, HIDDEN_SHOP))
    assert res.returncode == 0, res.stderr
    (repo / "shop2" / "__init__.py").write_text("from fmtlib import money\n\ndef total(cents):\n    return money(cents)\n\n"
                                                "def discount(cents):\n    import pricing\n    return pricing.off(cents)\n")
    out = run_hook(stop_payload(repo))
    assert out.returncode == 2
    assert "pricing is not installed with the project's interpreter" in out.stderr and "imported by shop2/__init__.py" in out.stderr
    assert "test_discount_is_new" in out.stderr
