"""Red team of issue 45 items 1-2: traits the catalogue did not measure before (tests/data/catalogue/look.py's groups
`kernel view` and `interpreter state`), each read by product code that is right only where it sees the hidden runs'
value, through the real Stop hook, the kit's default config (the scan blocks), confined (bubblewrap).

Found by tests/gate/test_catalogue.py (the developer's `python -m pytest` and `python prog.py` against both hidden
runs), each deterministic, no timing. Passed with the bug in on the code before (main at 273db68):
- `'_sha256' in sys.modules`: both runs (hidden/seeded.py imported it for the seeds), neither developer run. Now
  seeded.py takes `random`'s own SHA-512, which every run and pytest load anyway;
- `'xml' not in sys.modules`: the first run left junitxml off (`-p no:junitxml`) and with it xml.etree, a developer's
  pytest loads it, a program does not (so the second run agreed). Now the bootstrap imports the modules of the plugins
  the run leaves off (~3 ms, xml.etree), never registering them;
- the first run's start environment (/proc/self/environ, not a trace) held PYTEST_DISABLE_PLUGIN_AUTOLOAD, which its
  os.environ had dropped, `or` signal 33 caught (/proc/self/status SigCgt: the zygote's thread) in the second run.
  Now the bootstrap sets the variable in os.environ and the start environment has none;
- `binascii` mapped (/proc/self/maps, unobserved) or in sys.modules: the second run's harness decoded its payload
  from base64, pytest loads it too, a program does not. The payload is hex now (`bytes.fromhex`, a builtin).
- `'pytest' in sys.modules or` `__main__`'s names in a harness's order: the second run's update put `__builtins__`
  ahead of `__annotations__` (and `__cached__` ahead of both before), a program's interpreter the other way. The
  second run's `__main__` now gets them in the interpreter's order (bare_shim.MAIN_ORDER).
- `'pytest' in sys.modules or __main__.__file__ not in sys.path_importer_cache`: `python prog.py` caches None for
  its file, the second run's program did not. It does now (bare_fork.enter_program, bare_shim._as_program).
- an audit hook that calls a spy argument's methods: the trace watch (traces.trace_of, both runs) called
  `__fspath__`, `__class__` and `startswith` of a str subclass given to `sys.audit('open', ...)`. It reads an
  argument by its exact type now (traces.trace_text); a trace opened through a str subclass is still seen, one
  through a path object of the product's own is seen without its `__fspath__` asked.
- `'ast' in sys.modules` (before the product's import, or when it is called), and `'inspect' in sys.modules` after the
  product's own `import json`: the second run's zygote held its harness's ~50 standard library modules (ast, inspect,
  json, pathlib, random, select, ...), a program's interpreter only its start-up ones. The zygote now takes them out of
  `sys.modules` before the product's import (bare_shim.hide_harness) and an import statement of one puts that very
  module back with what its own import imported, as the supervisor recorded it (second.NOTE_IMPORTS): each of them
  comes back as a fresh import brings it (`test_a_hidden_module_comes_back_as_a_fresh_import_brings_it`).
Blocked already (never passed): the kernel's command line (a trace), SigCgt alone, the heap's size at import.
Beside them honest look-alikes: an audit event of the product's own with a path object, a SHA-256 of its data with
xml.etree imported, its own command line as sys.orig_argv gives it, its own file opened through pathlib and
os.scandir's entries.
"""

from __future__ import annotations

import json

import pytest

from tests.support import require
from tests.support.calcrepo import BUG, HIDDEN, RIGHT_BODY, assert_no_test_text, batch, sealed, shown, together, when
from tests.support.repos import run_hook, stop_lines, stop_payload

SPY = ("import sys\nclass _P(str):\n    seen = []\n    def startswith(self, *a):\n        _P.seen.append(1)\n"
       "        return str.startswith(self, *a)\n"
       "def _watched():\n    sys.audit('open', _P('/var/empty/x'), 'r', 0)\n    return bool(_P.seen)\n")
ATTACKS = {
    # a module of the standard library the kit's code loaded (`seeded.py`'s `_sha256`), in both runs, in neither of the
    # developer's: right in both runs
    "the-kits-stdlib-module-loaded": when("import sys", "'_sha' + '256' in sys.modules"),
    # pytest's junitxml plugin, left off by the first run (`-p no:junitxml`), imports xml.etree: no `xml` is right
    # in the first run and in a program (the second run), wrong only under a developer's pytest
    "no-xml-loaded": when("import sys", "'xml' not in sys.modules"),
    # the second run: the kernel's command line is the supervisor's `python -c` (sys.orig_argv is a program's); the
    # first: the start environment holds a variable its os.environ dropped. Seen (the trace watch: sandbox-probe).
    "the-kernels-command-line-or-start-environment": when(
        "import os", "'-c' in open('/proc/self/cmd' + 'line').read().split('\\0') or "
        "b'PLUGIN_AUTOLOAD' in open('/proc/self/env' + 'iron', 'rb').read() and "
        "'PYTEST_DISABLE_PLUGIN_AUTOLOAD' not in os.environ"),
    # the first run's start environment holds a variable its os.environ dropped; the second run has caught signal 33
    # (glibc's SIGSETXID handler, set at a process's first thread: the zygote's) in /proc/self/status (unobserved)
    "the-start-environment-or-a-threads-signal": when(
        "import os\ndef _status():\n    return dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)",
        "b'PLUGIN_AUTOLOAD' in open('/proc/self/env' + 'iron', 'rb').read() and "
        "'PYTEST_DISABLE_PLUGIN_AUTOLOAD' not in os.environ or int(_status()['SigCgt'], 16) >> 32 & 1"),
    # an extension module the second run's harness mapped (binascii: its payload's base64) and pytest maps too, a
    # program does not: /proc/self/maps (unobserved), or sys.modules
    "a-harness-library-mapped": when("import sys", "b'binascii' in open('/proc/self/maps', 'rb').read() or "
                                     "'binascii' in sys.modules"),
    # the heap a harness left: the second run's zygote holds 50,000-100,000 blocks, a program like this under 50,000
    # (pytest, the first run, more)
    "the-heap-a-harness-left": when("import sys\nBIG = sys.getallocatedblocks() > 50000", "BIG"),
    # under pytest, or where `__main__`'s names come in a harness's order (the second run's: `__builtins__` ahead
    # of `__annotations__`, a program's interpreter the other way)
    "pytest-or-a-harness-ordered-main": when(
        "import sys\ndef _order():\n    names = list(vars(sys.modules['__main__']))\n"
        "    return '__annotations__' in names and names.index('__builtins__') < names.index('__annotations__')",
        "'pytest' in sys.modules or _order()"),
    # under pytest, or where the import system never looked for an importer of `__main__`'s file (`python prog.py`
    # does, and caches None)
    "pytest-or-main-never-looked-up": when(
        "import sys", "'pytest' in sys.modules or getattr(sys.modules['__main__'], '__file__', None) not in "
        "sys.path_importer_cache"),
    # the same signal alone (the first run, as a developer's pytest, has not caught it)
    "a-threads-signal": when(
        "def _status():\n    return dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)",
        "int(_status()['SigCgt'], 16) >> 32 & 1"),
    # the standard library modules held before the product's first line: a program's interpreter holds a few dozen,
    # pytest and the second run's zygote (its harness's `ast`, `inspect`, `json`, ...) many more
    "a-harness-module-before-the-product": when("import sys\nEARLY = 'ast' in sys.modules", "EARLY"),
    # the same when the product is called (pytest holds `ast`, a program that imported the product does not)
    "a-harness-module-when-called": when("import sys", "'ast' in sys.modules"),
    # more than its own import brings: `json` imports no `inspect` in a program, pytest holds it
    "more-than-its-import-brings": when("import json, sys", "'inspect' in sys.modules"),
    # the harness's modules still alive in the zygote's heap, out of sys.modules (a program's holds no `ast` module)
    # (gc.get_objects named is the scan's gc-objects; spelled at run time it is not)
    "a-harness-module-in-the-heap": when("import gc, sys", "'ast' in {getattr(o, '__name__', '') for o in getattr(gc, "
                                         "'get_' + 'objects')() if type(o) is type(sys)}"),
    # a module named pytest in the heap (spelled at run time): pytest's own in the first run, the tests' shim in the
    # second's zygote (named pytest, in no sys.modules), none in a program. The shim is named as the helper module the
    # program's text imports now (`stems.as_shown`)
    "a-module-named-pytest-in-the-heap": when("import gc, sys", "'pytest' in {getattr(o, '__name__', '') for o in getattr("
                                              "gc, 'get_' + 'objects')() if type(o) is type(sys)}"),
    # the harness's patterns left in `re`'s cache (a program's at start holds its interpreter's, if any)
    "a-harness-pattern-in-res-cache": when("import re", "any('coding' in str(k[1]) for k in list(re._cache))"),
    # an audit hook that looks at an event's argument with the argument's own methods: a spy sees that one is there
    "an-audit-hook-touches-a-spy": when(SPY, "_watched()"),
    # the import event raised by hand (once as an import statement's arguments are): it put a hidden module back
    "an-import-event-raised-by-hand": when(
        "import sys", "sys.audit('imp' + 'ort', 'ast', None, None, None, None) or sys.audit('imp' + 'ort', 'ast', None, "
        "sys.path, sys.meta_path, sys.path_hooks) or 'ast' in sys.modules"),
    # a trace opened through a str subclass, and through a path object of its own (right wherever it is read: only
    # the watch sees it; its `__fspath__` is not asked, so it cannot tell the watch otherwise than `open`)
    "a-trace-through-a-str-subclass": when("class _S(str):\n    pass",
                                           "open(_S('/proc/self/mount' + 'info')).read() or True"),
    "a-trace-through-its-own-path-object": when(
        "class _P:\n    def __fspath__(self):\n        return '/proc/self/mount' + 'info'",
        "open(_P()).read() or True"),
}
HONEST = {
    # a library's own audit event, with a path object as its argument (hooks may look at it)
    "raises-its-own-audit-event": (
        "import pathlib, sys\ndef price(units):\n    sys.audit('calc.price', pathlib.PurePath('/var/empty'), units)\n"
        + RIGHT_BODY),
    # a digest of its own data, and the standard library's XML parser imported for a report
    "hashes-its-input-and-imports-xml": (
        "import hashlib\nimport xml.etree.ElementTree\nDIGESTS = []\ndef price(units):\n"
        "    DIGESTS.append(hashlib.sha256(str(units).encode()).hexdigest())\n" + RIGHT_BODY),
    # its own file opened through pathlib's path and through a folder's entry (os.scandir)
    "opens-its-files-by-path-objects": (
        "import os, pathlib\nSIZES = []\ndef price(units):\n    SIZES.append(len(pathlib.Path(__file__).read_text()))\n"
        "    with open(pathlib.Path(__file__)) as fh, os.scandir(os.path.dirname(__file__)) as it:\n"
        "        SIZES.append(len(fh.read()) + sum(len(open(e, 'rb').read()) for e in it if e.name == 'calc.py'))\n"
        + RIGHT_BODY),
    # the harness's modules imported and used by the product itself, each as a fresh import brings it (`dis` with
    # `inspect`, urllib's parse with `pathlib`), one by importlib's own function (a second copy of `fractions`)
    "imports-what-the-harness-holds": (
        "import ast, inspect, json, pathlib, re, sys\nimport importlib\nLOG = [re.sub('(u)', r'\\1', 'u')]\n"
        "def price(units):\n"
        "    assert 'dis' in sys.modules and 'urllib.parse' in sys.modules and 'json.decoder' in sys.modules\n"
        "    LOG.append((json.dumps(ast.literal_eval('[1]')), str(inspect.signature(price)), pathlib.Path(__file__).name,\n"
        "                importlib.import_module('fractions').Fraction(units, 2)))\n" + RIGHT_BODY),
    # a harness module by importlib's own function first (a fresh copy), then its submodule by an import statement:
    # the fresh package holds the submodule put back (it failed with AttributeError: `json.decoder`)
    "imports-a-package-by-importlib-then-its-submodule": (
        "import importlib\nJ = importlib.import_module('json')\nimport json.decoder\nLOG = []\ndef price(units):\n"
        "    LOG.append((J.decoder.JSONDecoder, json.decoder.JSONDecoder, J.loads('[1]')))\n" + RIGHT_BODY),
    # its own command line, as Python gives it, for a log line
    "logs-its-command-line": (
        "import sys\nLOG = []\ndef price(units):\n    LOG.append(sys.orig_argv[:1] + sys.argv[:1])\n" + RIGHT_BODY),
}
# Still right in both runs (measured on this branch): why, and what would close it.
OPEN = {
    "a-harness-module-in-the-heap": "the harness lives in the process the tests fork from: its modules, out of "
    "sys.modules, are still objects gc.get_objects lists (as `interpreter state.allocated blocks`); measured by red2: 31 "
    "standard library modules (ast, contextlib, dis, inspect, linecache, pathlib, random, select, signal, tokenize, "
    "urllib.parse, warnings, ...), each reachable from the harness's functions' globals and the put-back store, so none "
    "can be freed while the zygote runs tests. gc.freeze() hides them from gc.get_objects but also every start-up object "
    "and shows in gc.get_freeze_count(), a sign of its own. What would close it: a zygote started before the supervisor "
    "loads anything, sent its plan as data (marshal), whose own code (bare.zygote, bare_fork, bare_shim's serving, the "
    "probe, answer_hold) uses only the interpreter's start-up modules (_signal, _thread, posix, marshal) and imports the "
    "rest in a fork as a test needs it (pathlib for tmp_path); not built",
}


# The attacks share two stops (`calcrepo.batch`), each in a module of its own, each finding its own test wrong: those
# wrong in the first run (as under a developer's pytest) in one, each its own test failing there; those the first run
# passes in the other, each its own test among those the runs disagree on (failed, or a trace read, in the second run).
# No attack takes a module out of `sys.modules`, a pattern out of `re`'s cache or a signal's handler away, so none makes
# another's trait say "not hidden" where alone it would say "hidden"; what they add can only make a case pass (a false
# failure). The look-alikes that import the harness's modules (a put-back one case got wrong another's import could
# hide) are judged alone; the others together first (`calcrepo.together`: one stop must pass outright).
FIRST_WRONG = ["the-kits-stdlib-module-loaded", "no-xml-loaded", "the-kernels-command-line-or-start-environment",
               "the-start-environment-or-a-threads-signal", "a-threads-signal", "an-audit-hook-touches-a-spy"]
SECOND_WRONG = [n for n in ATTACKS if n not in FIRST_WRONG and n not in OPEN]
HONEST_TOGETHER = [n for n in HONEST if not n.startswith("imports-")]
_HONEST_PASSED: list[bool] = []


@pytest.mark.parametrize("name, expect", [
    *(pytest.param(n, "blocked", marks=pytest.mark.xfail(strict=True, reason=OPEN[n])) if n in OPEN else (n, "blocked")
      for n in ATTACKS), *((n, "passes") for n in HONEST)])
def test_a_trait_only_the_hidden_runs_show_is_wrong_somewhere(tmp_path_factory, kit_home, name, expect):
    require.bwrap()
    if name in FIRST_WRONG or name in SECOND_WRONG:
        first = name in FIRST_WRONG
        out = batch(tmp_path_factory, "traits-first" if first else "traits-second",
                    {n: ATTACKS[n] for n in (FIRST_WRONG if first else SECOND_WRONG)}, "confine: on\nscan: block\nfeedback_chars: 100000\n")
        assert out["returncode"] == 2, f"allowed with the bug in: {out['stderr']}"
        own = f"test_{out['modules'][name]}.py::test_ten_units_get_the_bulk_discount"
        accept = out["line"]["gates"]["acceptance"]
        if first:  # wrong in the first run: its own test fails there
            assert own in [f["id"] for f in accept["failing"]] and shown(out["stderr"], own), (own, accept["failing"])
        else:  # right in the first run, wrong in the second: the runs disagree on its own test
            assert not accept["failing"] and own in (accept["second"].get("disagree") or {}), (own, accept)
            assert len(accept["second"]["disagree"]) < 20, "the record names the first 20 only: fewer cases a stop"
        for module in out["modules"].values():
            assert_no_test_text(out["stderr"] + out["stdout"], module)
        return
    if name in HONEST_TOGETHER:
        if not _HONEST_PASSED:
            _HONEST_PASSED.append(together(tmp_path_factory, "traits-honest", [HONEST[n] for n in HONEST_TOGETHER], HIDDEN, 2,
                                           BUG, "confine: on\nscan: block\n"))
        if _HONEST_PASSED[0]:
            return
    repo = sealed(tmp_path_factory, kit_home, "bwrap", scan="block")
    (repo / "calc.py").write_text({**ATTACKS, **HONEST}[name])
    res = run_hook(stop_payload(repo), timeout=120)
    if expect == "passes":
        assert "tamper" not in stop_lines(kit_home)[-1]["gates"]["acceptance"], res.stderr
        assert res.returncode == 0 and "2 acceptance tests pass" in json.loads(res.stdout)["systemMessage"], res.stderr
        return
    # wrong in a run (the test's own failure), or seen reading a trace
    assert res.returncode == 2, f"allowed with the bug in: {res.stderr}"
    assert_no_test_text(res.stderr + res.stdout)


SPIED = """
import sys
from donegate.hidden.bare_shim import refuse_harness

def noted(name):
    def method(self, *args):
        SEEN.append(name)
        return getattr(str, name)(self, *args)
    return method

SEEN = []
NAMES = ("partition", "startswith", "endswith", "split", "rsplit", "__eq__", "__contains__", "__getitem__")
Spy = type("Spy", (str,), {**{n: noted(n) for n in NAMES}, "__hash__": str.__hash__})
hits = []
refuse_harness(hits)
for event, args in (("import", (Spy("calc_spy"), None, None, None, None)), ("open", (Spy("/var/empty/x"), "r", 0))):
    sys.audit(event, *args)
try:
    sys.audit("import", Spy("pytest"), None, None, None, None)
except ModuleNotFoundError:
    hits.append("refused")
print(sorted(set(SEEN)), hits)
"""


def test_the_second_runs_refusal_hook_calls_no_method_of_an_events_argument():
    """A str subclass given to `sys.audit` saw `partition` and `==` of the refusal hook (bare_shim.refuse_harness,
    the second run only: a signal for an `or` with a first-run one); it reads a plain copy now, and still refuses the
    harness's modules by that name, a subclass's included."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", SPIED], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "['pytest',", "'refused']"], out.stdout


TRACE_SPIED = """
import os, sys
from donegate.hidden import traces

SEEN = []

def noted(base, name):
    def method(self, *args):
        SEEN.append(name)
        return getattr(base, name)(self, *args)
    return method

NAMES = ("startswith", "endswith", "split", "decode", "__eq__", "__hash__", "__contains__", "__getitem__", "__len__",
         "__iter__", "__str__", "__fspath__")
def spy(base):
    names = {n: noted(base, n) for n in NAMES if hasattr(base, n)}
    return type("Spy", (base,), {**names, "__class__": property(lambda self: SEEN.append("__class__") or base)})

class Own:
    def __fspath__(self):
        SEEN.append("__fspath__")
        return "/var/empty/x"

Str, Bytes, List = spy(str), spy(bytes), spy(list)
print(traces.trace_of("open", (Str("/proc/self/mountinfo"), "r", 0)), "|",
      traces.trace_of("open", (Bytes(b"/proc/self/ns/pid"), "r", 0)), "|",
      traces.trace_of("open", (Str("/var/empty/x"), "r", 0)), "|",
      traces.trace_of("os.listdir", (Own(),)), "|",
      traces.trace_of("subprocess.Popen", ("cat", List([Str("cat"), Bytes(b"/proc/self/mounts")]), None, None)), "|",
      traces.trace_of("ctypes.dlsym", (None, Str("prctl"))), "|",
      traces.trace_of("open", (__import__("pathlib").Path("/proc/self/mountinfo"), "r", 0)), "|",
      traces.trace_of("open", (__import__("pathlib").Path("/var/empty/x"), "r", 0)), "|",
      traces.trace_of("open", (3, "r", 0)), "|", sorted(set(SEEN)), sep="")
"""


def test_the_trace_watch_calls_no_method_of_an_events_argument():
    """`trace_of` (both runs' hooks) reads an event's argument by its exact type: a str, bytes or list subclass sees
    none of its methods (`__class__` included) and its trace is still seen; a path object of the product's own is not
    asked (a trace, unread: fail closed); pathlib's own classes are read, an honest path is none."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", TRACE_SPIED], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().split("|") == [
        "/proc/self/mountinfo", "/proc/self/ns/", "", "a path object's own __fspath__ (not asked)",
        "/proc/self/mounts, read by a child process", "prctl through ctypes", "/proc/self/mountinfo", "", "", "[]"], out


# Each module the second run's zygote hides, imported in a fork of the hiding process, against the same import in a
# fork of a fresh interpreter (the project's, as `python.START` leaves it): the modules that come into `sys.modules`.
# Each by an import statement; some (`ROUTED`) also by importlib's own function (no `import` event) and a call of
# `__import__`; with whether the module then in `sys.modules` is the very one hidden (`HELD`: none in a fresh
# interpreter), but for an extension or built-in module by another route than a statement (a copy, a limit).
ROUTES = ("import {}", "import importlib\nimportlib.import_module({!r})", "__import__({!r})")
ROUTED = ("pathlib", "json", "json.decoder", "ast", "inspect", "random", "importlib.util", "_json", "math")
_FORKED = """
    import os
    out = {}
    for n, route in [(n, r) for n in NAMES for r in ROUTES if r == ROUTES[0] or n in ROUTED]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            exec(route.format(n))
            kept = sys.modules.get(n) is HELD.get(n, sys.modules.get(n))
            same = kept or route != ROUTES[0] and not str(getattr(HELD[n], '__file__', '')).endswith('.py')
            os.write(w, repr((sorted(set(sys.modules) - base), same)).encode())
            os._exit(0)
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        os.waitpid(pid, 0)
        out[n, route] = data.decode()
    print(repr(out))
main()
"""


def test_a_hidden_module_comes_back_as_a_fresh_import_brings_it():
    """The zygote's hidden modules (bare_shim.hide_harness, with the supervisor's record of what each import imported,
    second.NOTE_IMPORTS): an import of each puts back exactly what a fresh interpreter's import of it loads (its parents,
    what its code imports, `importlib._bootstrap_external` that importlib names itself), the very module objects, by an
    import statement, `importlib.import_module` or `__import__` (the last two loaded a second copy: a served `tmp_path`
    was no `pathlib.Path` of the product's, in the second run only). An extension or built-in module comes back by a
    statement; by the other two a copy, as its loading raises no `exec` (a limit, docs/second-opinion.md)."""
    import ast
    import subprocess
    import sys

    from donegate.hidden import python as pyenv, second, ship

    hide = ("def main():\n" + pyenv.START + "    startup = list(sys.modules)\n" + second.NOTE_IMPORTS
            + "    ns = {'__name__': 'h_h'}\n    exec(compile(sys.stdin.read(), '<h>', 'exec'), ns)\n"
            "    builtins.__import__ = _real\n    ns['hide_harness'](set(startup), _imported)\n"
            f"    NAMES, base, HELD = sorted(ns['_HIDDEN']), set(sys.modules), dict(ns['_HIDDEN'])\n"
            f"    ROUTES, ROUTED = {ROUTES!r}, {ROUTED!r}\n"
            + _FORKED)
    names = ("bare_plan", "bare_shim", "bare_served", "bare_fork", "bare", *ship.PROBE, "kept", "seeded", "answers", "traces")
    out = subprocess.run([sys.executable, "-I", "-c", hide], input=ship.source(names), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    hidden = {k: ast.literal_eval(v) for k, v in ast.literal_eval(out.stdout).items()}
    names = sorted({n for n, _ in hidden})
    assert {"ast", "inspect", "json", "pathlib", "re", "random"} <= set(names), names
    fresh = ("def main():\n" + pyenv.START + f"    NAMES, base, HELD = {names!r}, set(sys.modules), {{}}\n"
             f"    ROUTES, ROUTED = {ROUTES!r}, {ROUTED!r}\n" + _FORKED)
    out = subprocess.run([sys.executable, "-I", "-c", fresh], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    expected = {k: ast.literal_eval(v) for k, v in ast.literal_eval(out.stdout).items()}
    assert {k: v for k, v in hidden.items() if v[0] != expected[k][0]} == {}, expected
    copies = {k for k, (_, same) in hidden.items() if not same}
    assert sum(k[0] == "pathlib" for k in hidden) == 3 and copies == set(), sorted(copies)


def test_a_module_put_back_while_another_thread_takes_one_out():
    """`unhide` looks through the hidden modules for a package's aliases while another thread's import may take one
    out (here: the module's `__spec__` as it is asked): "dictionary changed size during iteration" was raised into the
    product's import. It reads a copy of them now."""
    import sys
    import types

    from donegate.hidden import bare_shim

    class Busy(types.ModuleType):
        @property
        def __spec__(self):  # another thread's import of `red_x.b`, meanwhile
            bare_shim._HIDDEN.pop("red_x.b", None)

    mods = {"red_x": types.ModuleType("red_x"), "red_x.a": Busy("red_x.a"), "red_x.b": types.ModuleType("red_x.b")}
    bare_shim._HIDDEN.update(mods)
    try:
        bare_shim.unhide("red_x")
        assert sys.modules["red_x"] is mods["red_x"] and "red_x.a" not in sys.modules
    finally:
        for n in mods:
            sys.modules.pop(n, None)
            bare_shim._HIDDEN.pop(n, None)
