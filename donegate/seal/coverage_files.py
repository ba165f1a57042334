"""Coverage's threshold as coverage.py reads it: `fail_under` in `.coveragerc`, setup.cfg's or tox.ini's
`[coverage:report]`, pyproject.toml's `[tool.coverage.report]`, and which of them it reads (split from
`donegate.seal.excluded`, which compares pytest-cov's in `addopts`)."""

from __future__ import annotations

import re

COVERAGE_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")


def _fail_under(name: str, text: str | None) -> float | None:
    """The coverage threshold a file sets (`fail_under`), None for none."""
    if not text:
        return None
    if name.endswith("pyproject.toml"):
        m = re.search(r"^\[tool\.coverage\.report\][^\[]*?^fail_under\s*=\s*([0-9.]+)", text, re.M | re.S)
    else:
        section = r"\[report\]" if name.endswith(".coveragerc") else r"\[coverage:report\]"
        m = re.search(section + r"[^\[]*?^fail_under\s*[=:]\s*([0-9.]+)", text, re.M | re.S)
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


def _read_by_coverage(texts: dict[str, str | None]) -> str | None:
    """The file coverage.py reads its configuration from: `.coveragerc` where there is one (even empty), else the
    first of setup.cfg, tox.ini and pyproject.toml holding a coverage section."""
    if texts.get(".coveragerc") is not None:
        return ".coveragerc"
    return next((n for n, pattern in (("setup.cfg", r"^\[coverage:"), ("tox.ini", r"^\[coverage:"),
                                      ("pyproject.toml", r"^\[tool\.coverage\.")) if re.search(pattern, texts.get(n) or "", re.M)), None)


def findings(sealed: dict[str, str | None], current: dict[str, str | None]) -> list[dict[str, str]]:
    """A coverage threshold lowered or removed, in its file or by another file coverage.py now reads first (an
    empty `.coveragerc` added over setup.cfg's)."""
    read, reads = _read_by_coverage(sealed), _read_by_coverage({**sealed, **current})
    at = _fail_under(read, sealed.get(read)) if read else None
    after = _fail_under(reads, {**sealed, **current}.get(reads)) if reads else None
    out = [{"test": reads or read, "rule": "coverage-lowered", "what": f"coverage.py now reads {reads or 'no file'} "
            f"where it read {read}: fail_under {at:g} became {'none' if after is None else f'{after:g}'}"}] \
        if read and reads != read and at is not None and (after is None or after < at) else []
    for name in sorted(current):
        before, now = _fail_under(name, sealed.get(name)), _fail_under(name, current.get(name))
        if before is not None and (now is None or now < before):
            out.append({"test": name, "rule": "coverage-lowered",
                        "what": f"fail_under {before:g} became {'none' if now is None else f'{now:g}'}"})
    return out
