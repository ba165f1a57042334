"""The one rule every client's e2e session holds its model requests to (Claude Code's, Codex's, Gemini CLI's, Copilot
CLI's, Qwen Code's): nothing any request carries, whole (path, headers, body), names the kit copy, the state root
(DONEGATE_HOME), the store, the kit checkout or the interpreter, nor quotes a line of the hidden tests.

The requests are searched as the strings they decode to (every key and value of the JSON body, the headers), each
also HTML-unescaped (Codex sends a block as `&lt;`): a JSON dump escapes a quote, so a hidden line holding one
(`cart.add("mug", 430, 6)`) was never found in `all_request_text()`.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from .gated import EXAMPLE, EXAMPLE_TESTS, KIT


def _lines(paths: Iterable[Path], n: int) -> set[str]:
    return {x.strip() for p in paths for x in p.read_text().splitlines() if len(x.strip()) >= n}


def hidden_lines(tests: Path = EXAMPLE_TESTS, product: Path = EXAMPLE) -> list[str]:
    """The hidden tests' lines (16+ characters) that the product's own files do not hold."""
    return sorted(_lines(tests.glob("*.py"), 16) - _lines(product.rglob("*.py"), 1))


HIDDEN_LINES = hidden_lines()
# Codex (0.169.0) lists a permission profile's denied folders to the model, twice (docs/codex.md): the kit's
# own walls, named by Codex, not by the kit. Only `unlisted(...)` drops them, for Codex's sessions.
CODEX_LISTS = (re.compile(r"<permission_profile\b.*?</permission_profile>", re.S),
               re.compile(r"## Denied filesystem reads\n[^\n]*\n(?:- (?:path|glob) `[^`]*`\n)*"))


def _strings(x: Any) -> Iterable[str]:
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)
    elif x is not None:
        yield str(x)


def decoded(api: Any) -> list[str]:
    """Every request `api` received (a `fakeapi.FakeAPI` or a `scripted.ScriptedServer`), as its decoded strings."""
    reqs = [r if isinstance(r, dict) else {"method": r.method, "path": r.path, "headers": r.headers, "body": r.body}
            for r in list(api.requests)]
    out = []
    for s in _strings(reqs):
        out.append(s)
        if "&" in s and (u := html.unescape(s)) != s:
            out.append(u)
    return out


def request_text(api: Any) -> str:
    return "\n".join(decoded(api))


# The kit's own messages: a guard's refusal (its whole template: a client may append the command, Codex does) and a
# Stop hook's reason (to the end of the string that holds it). What the agent typed is never taken out of these.
KIT_SAID = re.compile(r"donegate guard: this .*?(?:so work from that feedback\.|and a person decides\.)"
                      r"|(?:You reported the work as complete|donegate: the acceptance tests pass)[\s\S]*", re.S)


def kit_said(strings: Iterable[str]) -> str:
    return "\n".join(m.group(0) for s in strings for m in KIT_SAID.finditer(s))


def secrets(g: Any) -> dict[str, Path]:
    """The paths of a `gated.GatedRepo` no request may name."""
    return {"the kit copy": g.kit, "the state root": g.home, "the store": g.store, "the kit checkout": KIT,
            "the interpreter": Path(sys.executable).parent}


def named(text: str, paths: dict[str, Path]) -> dict[str, str]:
    """Which of `paths` `text` names: a path appears whole (then a separator, a quote or the end: a checkout at
    /tmp/cc is not named by /tmp/cc-daemon-0). The CLIs' own files are left out: here they are installed in the kit
    checkout's node_modules (Gemini CLI lists its built-in skills' paths to the model), a user's are not."""
    text = text.replace(str(KIT / "node_modules"), "<the client's own folder>")
    return {what: str(p) for what, p in paths.items() if re.search(re.escape(str(p)) + r"(?![\w.-])", text)}


def quoted(text: str, lines: Iterable[str] = HIDDEN_LINES) -> list[str]:
    return [line for line in lines if line in text]


def unlisted(text: str) -> str:
    """`text` without Codex's listings of the profile's denied folders."""
    for listing in CODEX_LISTS:
        text = listing.sub("", text)
    return text


def leaks(api: Any, g: Any, *, typed: Iterable[str] = (), codex: bool = False) -> dict[str, Any]:
    """What `api`'s requests leak of `g`'s secrets ({} when nothing). `typed`: what the scripted agent itself typed
    (its commands) and its shell's echo of them (`cat: PATH: Permission denied`), left out of the names check only
    and never out of the kit's own messages (`KIT_SAID`): what the model said is not a leak, the kit repeating it is. `codex`: Codex's own listing of the denied folders left out too."""
    strings = decoded(api)
    text = "\n".join(strings)
    out: dict[str, Any] = {}
    if hits := quoted(text):
        out["hidden lines"] = hits
    for t in sorted(typed, key=len, reverse=True):
        text = text.replace(json.dumps(t)[1:-1], "").replace(t, "")
    text += "\n" + kit_said(strings)  # the kit quoting what the agent typed is named all the same
    if names := named(unlisted(text) if codex else text, secrets(g)):
        out["names"] = names
    return out
