"""A real library with introspection of its own, set up offline as its developers set it up (issue 37).

environs 11.0.0 (MIT) walks the call stack itself: `Env.read_env` takes `inspect.currentframe().f_back` to find
its caller's folder. Its sdist and its dependencies' (marshmallow 3.21.3, MIT; python-dotenv 1.0.1, BSD) are
vendored in tests/data/environs (marshmallow's `packaging` is copied from the kit's environment, pytest's own); the repository gets an in-repo `.venv` whose site-packages hold the
dependencies and a `.pth` line for `src/` (what `pip install -e .` leaves). An agent's honest edit, a `port`
parser inserted above `read_env` (every upstream line below it moves), passes the real Stop hook outright with
the scan on; a frame walk of the agent's own that reads its caller's locals is still a finding."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sdist import extract
from tests.support.repos import KIT, make_repo, run_hook, stop_lines, stop_payload, write_config

DATA = Path(__file__).resolve().parents[1] / "data" / "environs"
HIDDEN = '''import environs


def test_port_parses_an_integer(monkeypatch):
    monkeypatch.setenv("PORT", "8080")
    assert environs.Env().port("PORT") == 8080


def test_port_falls_back_to_its_default(monkeypatch):
    monkeypatch.delenv("PORT", raising=False)
    assert environs.Env().port("PORT", 5000) == 5000


def test_read_env_still_looks_beside_its_caller():
    assert environs.Env().read_env() in (True, False)
'''
PORT = '''    def port(self, name: str, default: typing.Any = None) -> int:
        """A TCP port: an integer from 1 to 65535."""
        raw = os.environ.get(name)
        value = int(raw) if raw is not None else default
        if not isinstance(value, int) or not 0 < value < 65536:
            raise EnvError(f"Environment variable {name!r} is not a port: {raw!r}")
        return value

'''


def _extract(sdist: str, member_prefix: str, into: Path) -> None:
    extract(DATA / sdist, member_prefix, into)


@pytest.fixture
def environs_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "environs"
    _extract("environs-11.0.0.tar.gz", "", repo)
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
    make_repo(repo, {})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    (site,) = (repo / ".venv" / "lib").glob("python*/site-packages")
    _extract("marshmallow-3.21.3.tar.gz", "src/", site)
    _extract("python-dotenv-1.0.1.tar.gz", "src/", site)
    import packaging  # marshmallow's own dependency: pytest's too, so the kit's environment has it offline

    shutil.copytree(Path(packaging.__file__).parent, site / "packaging", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "environs.pth").write_text(str(repo / "src") + "\n")  # pip install -e .
    return repo


def _seal(repo: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    test = tmp_path / "hidden" / "test_port.py"
    test.parent.mkdir()
    test.write_text(HIDDEN)
    return subprocess.run([sys.executable, "-m", "donegate", "seal", str(repo), str(test)],
                          capture_output=True, text=True, timeout=300, cwd=KIT)


def test_an_honest_parser_added_to_environs_passes_outright(environs_repo, tmp_path, kit_home):
    # own_tests: off: environs' own suite needs dj_database_url, not installed here (a default seal names it, with the fix)
    write_config(kit_home, "scan: block\nown_tests: off\n")
    res = _seal(environs_repo, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "2 new requirements failing, 1 already passing" in res.stdout
    assert "environs/.venv/bin/python" in res.stdout  # the project's own interpreter, as its developers run it
    assert "frame-walk" in res.stdout and "src/environs/__init__.py" in res.stdout  # the project's own walk, named
    src = environs_repo / "src" / "environs" / "__init__.py"
    text = src.read_text()
    assert "current_frame.f_back" in text
    src.write_text(text.replace("    @staticmethod\n    def read_env(", PORT + "    @staticmethod\n    def read_env(", 1))
    out = run_hook(stop_payload(environs_repo), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "3 acceptance tests pass" in json.loads(out.stdout)["systemMessage"]
    line = stop_lines(kit_home)[-1]
    assert line["gates"]["scan"]["findings"] == [] and "tamper" not in line["gates"]["acceptance"]

    # the agent's own walk to its caller's locals, in the same file: a finding, named in the block
    src.write_text(src.read_text().replace(
        PORT, PORT + "    def _caller_locals(self) -> dict:\n        return dict(inspect.currentframe().f_back.f_locals)\n\n", 1))
    out = run_hook(stop_payload(environs_repo, session="s2"), timeout=300)
    assert out.returncode == 2 and "[frame-walk]" in out.stderr, out.stderr
    found = stop_lines(kit_home)[-1]["gates"]["scan"]["findings"]
    assert [f["code"] for f in found] == ["return dict(inspect.currentframe().f_back.f_locals)"]
