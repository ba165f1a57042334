"""pytest's configuration files as pytest reads them: the `[pytest]` table of an ini, a setup.cfg's `[tool:pytest]`,
pyproject.toml's `[tool.pytest.ini_options]`, pytest 9's `pytest.toml` and `.pytest.toml` (`reads_toml`: whether the
kit's pytest reads those). Split from `donegate.seal.excluded`, which compares what they hold.
"""

from __future__ import annotations

import re
from pathlib import Path

from donegate.core.util import READS_TOML, parsed_ini, parsed_toml


def pytest_section(path: Path) -> dict[str, str] | None:
    """The pytest options of one configuration file ({} for a section without options), None without one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if path.name == "pyproject.toml":
        if not READS_TOML:  # Python 3.10: the keys read are plain enough for a look by line
            if not re.search(r"^\[tool\.pytest(\.ini_options)?\]", text, re.M):
                return None
            m = re.search(r"^testpaths\s*=\s*(\[[^\]]*\]|\"[^\"]*\")", text, re.M)
            return {"testpaths": " ".join(re.findall(r"\"([^\"]*)\"", m.group(1)))} if m else {}
        data = parsed_toml(text)
        tool = (data or {}).get("tool", {})
        if not isinstance(tool, dict) or not isinstance(tool.get("pytest"), dict):
            return None
        opts = tool["pytest"].get("ini_options") if "ini_options" in tool["pytest"] else tool["pytest"]
        tp = (opts if isinstance(opts, dict) else {}).get("testpaths", [])
        return {"testpaths": " ".join(tp) if isinstance(tp, list) else str(tp)}
    if path.name in ("pytest.toml", ".pytest.toml"):  # pytest 9's: its `[pytest]` table, always the configuration
        return _toml_table(text)
    parser = parsed_ini(text)
    if parser is None:
        return None
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    return dict(parser.items(section))


def _toml_table(text: str) -> dict[str, str] | None:
    """The `[pytest]` table of a pytest.toml ({} without one), its values as an ini file gives them: a list of
    arguments (`addopts`) joined as the shell would split it, of lines (`filterwarnings`) one a line."""
    import shlex

    data = parsed_toml(text)  # (None on Python 3.10: none read, as before pytest.toml was known)
    if data is None:
        return None
    table = data.get("pytest", {})
    return {k: ("\n".join(map(str, v)) if k in ("filterwarnings", "markers") else shlex.join(map(str, v)))
            if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in (table if isinstance(table, dict) else {}).items()}


def reads_toml() -> bool:
    """Whether the kit's pytest, which runs the suite, reads pytest.toml and .pytest.toml (pytest 9; its source
    looked at, not imported: asked only where such a file is)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("_pytest")
        return b'"pytest.toml"' in (Path(spec.origin).parent / "config" / "findpaths.py").read_bytes()  # type: ignore[union-attr,arg-type]
    except (OSError, TypeError, AttributeError, ImportError, ValueError):
        return False
