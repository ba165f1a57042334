"""Coverage's threshold as coverage.py reads it: `fail_under` in `.coveragerc`, setup.cfg's or tox.ini's
`[coverage:report]`, pyproject.toml's `[tool.coverage.report]`, and which of them it reads (split from
`donegate.seal.excluded`, which compares pytest-cov's in `addopts`)."""

from __future__ import annotations

import re

from donegate.core.util import parsed_ini, parsed_toml

COVERAGE_FILES = (".coveragerc", ".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml")


def _fail_under(name: str, text: str | None) -> float | None:
    """The coverage threshold a file sets (`fail_under`, as coverage.py reads it: `_section`), None for none."""
    value = (_section(name, text, "report") or {}).get("fail_under")
    try:
        return float(str(value)) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _section(name: str, text: str | None, part: str) -> dict[str, object] | None:
    """{key: value} of coverage's `[run]` or `[report]` (`part`) in a file, read as coverage.py reads it (coverage's
    config.py, 7.x): pyproject.toml's `[tool.coverage.PART]` (tomllib), and `.coveragerc.toml`'s, else its `[PART]`; an ini file's `[coverage:PART]`, and in
    `.coveragerc`, coverage's own file, `[PART]` where there is no `[coverage:PART]` (configparser, no
    interpolation); None for none, or a file that does not parse (coverage.py stops on it)."""
    if not text:
        return None
    if name.endswith(".toml"):
        data = parsed_toml(text) or {}
        tool = data.get("tool")
        coverage = tool.get("coverage") if isinstance(tool, dict) else None
        table = coverage.get(part) if isinstance(coverage, dict) else None
        if not isinstance(table, dict) and name.rsplit("/", 1)[-1] == ".coveragerc.toml":
            table = data.get(part)  # (coverage's own file: [PART] where there is no [tool.coverage.PART])
        return dict(table) if isinstance(table, dict) else None
    parser = parsed_ini(text)
    if parser is None:
        return None
    prefixes = ("coverage:", "") if name.rsplit("/", 1)[-1] == ".coveragerc" else ("coverage:",)
    section = next((p + part for p in prefixes if parser.has_section(p + part)), None)
    return dict(parser.items(section)) if section else None


def _read_by_coverage(texts: dict[str, str | None]) -> str | None:
    """The file coverage.py reads its configuration from: `.coveragerc` where there is one (even empty), else
    `.coveragerc.toml` (coverage 7.x), else the first of setup.cfg, tox.ini and pyproject.toml holding a coverage section."""
    for own in (".coveragerc", ".coveragerc.toml"):  # (coverage's own files: read where they are, even empty)
        if texts.get(own) is not None:
            return own
    return next((n for n, pattern in (("setup.cfg", r"^\[coverage:"), ("tox.ini", r"^\[coverage:"),
                                      ("pyproject.toml", r"^\[tool\.coverage\.")) if re.search(pattern, texts.get(n) or "", re.M)), None)


# Lines of ordinary code: an exclusion pattern matching one takes code out of the measure, not a `pragma: no cover`.
ORDINARY = ("def add(a, b):", "    return a + b", "import os", "x = 1", "class Calc:", "    if a < 0:",
            "        raise ValueError(a)", "    for item in items:", "    total += item")


def _keys(name: str, text: str | None, part: str) -> dict[str, list[str]]:
    """{key: its values} of coverage's `[run]` or `[report]` (`part`) in a file, as coverage.py reads them."""
    table = _section(name, text, part) or {}
    if name.endswith(".toml"):
        return {k: [str(x) for x in v] if isinstance(v, list) else [str(v)] for k, v in table.items()}
    return {k: [x.strip() for x in str(v).replace(",", "\n").splitlines() if x.strip()] for k, v in table.items()}


def _taken_out(read: str | None, sealed: str | None, reads: str | None, now: str | None,
               product: list[str]) -> list[str]:
    """What coverage's configuration now takes out of the measure that it did not at the seal: an exclusion pattern
    matching ordinary code (`exclude_lines = .`), an `omit` matching a product module the agent changed."""
    import fnmatch

    out = []
    before = {k: v for part in ("run", "report") for k, v in _keys(read or "", sealed, part).items()}
    after = {k: v for part in ("run", "report") for k, v in _keys(reads or "", now, part).items()}
    for pattern in sorted(set(after.get("exclude_lines", []) + after.get("exclude_also", []))
                          - set(before.get("exclude_lines", []) + before.get("exclude_also", []))):
        try:
            hit = next((line for line in ORDINARY if re.search(pattern, line)), None)
        except re.error:
            continue
        if hit:
            out.append(f"excludes ordinary code ({pattern!r} matches {hit.strip()!r})")
    product = [p for p in product if not (set(p.split("/")[:-1]) & {"tests", "test", "testing"} or any(
        fnmatch.fnmatch(p.rsplit("/", 1)[-1], n) for n in ("test_*.py", "*_test.py", "conftest.py")))]
    for pattern in sorted(set(after.get("omit", [])) - set(before.get("omit", []))):
        hit = next((p for p in product if fnmatch.fnmatch(p, pattern.removeprefix("./")) or fnmatch.fnmatch(
            "/" + p, pattern)), None)
        if hit:
            out.append(f"omits {hit} ({pattern!r})")
    return out


def findings(sealed: dict[str, str | None], current: dict[str, str | None],
             product: list[str] | None = None) -> list[dict[str, str]]:
    """A coverage threshold lowered or removed, in its file or by another file coverage.py now reads first (an
    empty `.coveragerc` added over setup.cfg's); code taken out of the measure (`_taken_out`; `product`: the
    product's Python files the agent changed)."""
    read, reads = _read_by_coverage(sealed), _read_by_coverage({**sealed, **current})
    at = _fail_under(read, sealed.get(read)) if read else None
    after = _fail_under(reads, {**sealed, **current}.get(reads)) if reads else None
    out = [{"test": reads or read, "rule": "coverage-lowered", "what": f"coverage.py now reads {reads or 'no file'} "
            f"where it read {read}: fail_under {at:g} became {'none' if after is None else f'{after:g}'}"}] \
        if read and reads != read and at is not None and (after is None or after < at) else []
    texts = {**sealed, **current}
    out += [{"test": reads or "", "rule": "coverage-lowered", "what": f"coverage's configuration {what}"}
            for what in _taken_out(read, sealed.get(read or ""), reads, texts.get(reads or ""), product or [])] if reads else []
    for name in sorted(current):
        before, now = _fail_under(name, sealed.get(name)), _fail_under(name, current.get(name))
        if current.get(name) is None and after is not None and before is not None and after >= before:
            continue  # (the file removed, the threshold held as high where coverage.py reads it now)
        if before is not None and (now is None or now < before):
            out.append({"test": name, "rule": "coverage-lowered",
                        "what": f"fail_under {before:g} became {'none' if now is None else f'{now:g}'}"})
    return out
