"""The kit's own pytest plugin: results come from here, never from parsing pytest's output.

It runs inside the hidden test process, where the code under test runs too, so nothing here is
trusted by the parent on its own word (see `donegate.channel`, which checks the stream):

- every result leaves the process as its test phase ends, one JSON line on an inherited pipe (the
  channel): nothing is kept in memory to rewrite later, and there is no file path to guess;
- tripwires: before the repository's code is imported, it fingerprints what the verdict depends on
  (registered plugins and hook implementations, pytest's runner, call, report, outcome and assertion
  functions, the `pytest` namespace, every collected test function and its code, `sys.meta_path`,
  `sys.path_hooks`, trace and profile functions, the builtins, this reporter), and checks them after
  every test and at the end. A change is reported as `tamper`, naming what changed and during which
  test. Tripwires catch the known families of in-process tricks; they are not the wall: code that
  runs in the process can in principle defeat anything the process checks. The wall is the
  confinement around the process (`donegate.confine`).

The parent loads this file's source (it is sent on stdin and executed by the bootstrap, so no kit path
is needed inside the sandbox).
"""

import builtins
import json
import os
import sys
import threading

_dumps, _write = json.dumps, os.write  # bound now: a later patch of json or os cannot reach the channel

# Module-level names of these pytest modules, and the attributes of their classes, are fingerprinted.
_MODULES = (
    "pytest", "_pytest.runner", "_pytest.python", "_pytest.reports", "_pytest.outcomes", "_pytest.skipping",
    "_pytest.main", "_pytest.fixtures", "_pytest.nodes", "_pytest.raises", "_pytest.approx", "_pytest.python_api",
    "_pytest.assertion", "_pytest.assertion.rewrite", "_pytest.assertion.util", "_pytest.unittest",
    "_pytest.capture", "_pytest.warnings", "_pytest.recwarn", "_pytest.monkeypatch", "pluggy", "pluggy._hooks",
    "pluggy._manager", "pluggy._callers", "pluggy._result",
)
# Set by pytest itself around every test (assertion comparison hooks): not the code under test's doing.
_VOLATILE = {("_pytest.assertion.util", "_reprcompare"), ("_pytest.assertion.util", "_assertion_pass"),
             ("_pytest.assertion.util", "_config")}


def _message(report) -> str:
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, line, reason)
        return str(longrepr[2])
    text = str(longrepr or "").strip()
    lines = text.splitlines()
    # Collection errors end with the exception line(s) starting with "E   ".
    errs = [line[1:].strip() for line in lines if line.startswith("E ")]
    return "\n".join(errs) if errs else (lines[-1] if lines else "")


def _fp(value):
    """What identifies a callable: the object, and for functions their code, defaults and closure.
    A bound method is made anew at every access: it is identified by its object and function."""
    owner = getattr(value, "__self__", None)
    if owner is not None and hasattr(value, "__func__"):
        return (id(owner), _fp(value.__func__))
    if isinstance(value, property):
        return (id(value), _fp(value.fget), _fp(value.fset))
    func = getattr(value, "__func__", value)  # classmethod/staticmethod
    code = getattr(func, "__code__", None)
    return (id(value), id(func), id(code), id(getattr(func, "__defaults__", None)),
            id(getattr(func, "__kwdefaults__", None)), id(getattr(func, "__closure__", None)))


def _namespace(label: str, ns, out: dict, depth: int = 1) -> None:
    for name, value in list(vars(ns).items()):
        if name.startswith("__") and name.endswith("__") and name not in ("__init__", "__call__", "__eq__", "__exit__", "__enter__", "__new__", "__getattribute__", "__getattr__", "__bool__"):
            continue
        if not (callable(value) or isinstance(value, (property, classmethod, staticmethod))):
            continue  # flags and counters pytest keeps on its classes change as it runs
        out[f"{label}.{name}"] = _fp(value)
        if depth and isinstance(value, type) and getattr(value, "__module__", "").split(".")[0] in ("_pytest", "pytest", "pluggy"):
            _namespace(f"{label}.{name}", value, out, depth - 1)


class Tripwires:
    """Fingerprints of what the verdict depends on, taken before the code under test is imported."""

    def __init__(self, config, reporter) -> None:
        self.config, self.reporter = config, reporter
        self.items: list = []
        self.base = self.take()

    def take(self) -> dict:
        out: dict = {}
        for mod in _MODULES:
            m = sys.modules.get(mod)
            if m is None:
                continue
            out[f"sys.modules[{mod}]"] = (id(m),)
            _namespace(mod, m, out)
        for key in _VOLATILE:
            out.pop(".".join(key), None)
        pm = self.config.pluginmanager
        out["plugins"] = tuple(sorted((str(name), id(p)) for name, p in pm.list_name_plugin()))
        for name, caller in list(vars(pm.hook).items()):
            impls = getattr(caller, "get_hookimpls", None)
            if impls is not None:
                out[f"hook {name}"] = tuple((id(i.plugin), _fp(i.function), i.hookwrapper, i.wrapper, i.tryfirst, i.trylast) for i in impls())
            out[f"hook {name} caller"] = (id(caller), id(type(caller)), _fp(getattr(caller, "_hookexec", None)))
        out["pluginmanager._hookexec"] = (_fp(getattr(pm, "_hookexec", None)), _fp(getattr(pm, "_inner_hookexec", None)))
        out["sys.meta_path"] = tuple(id(f) for f in sys.meta_path)
        out["sys.path_hooks"] = tuple(id(h) for h in sys.path_hooks)
        out["sys.settrace"] = (id(sys.gettrace()),)
        out["sys.setprofile"] = (id(sys.getprofile()),)
        out["threading.settrace"] = (id(getattr(threading, "_trace_hook", None)),)
        out["threading.setprofile"] = (id(getattr(threading, "_profile_hook", None)),)
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            out["sys.monitoring"] = tuple(monitoring.get_tool(i) for i in range(6))
        for name, value in vars(builtins).items():
            if name != "_":  # the interactive display hook and gettext set it
                out[f"builtins.{name}"] = (id(value),)
        r = self.reporter
        out["reporter"] = tuple(sorted((k, id(v)) for k, v in vars(r).items() if k not in ("wires", "open")))
        out["reporter class"] = tuple(sorted((k, _fp(v)) for k, v in vars(type(r)).items()))
        out["plugin globals"] = tuple(sorted((k, id(v)) for k, v in globals().items()))
        for item in self.items:
            own = vars(item)
            out[f"test {item.nodeid}"] = (id(type(item)), _fp(own.get("_obj")), id(own.get("runtest")), id(own.get("obj")),
                                          id(own.get("ihook")), id(own.get("config")), id(own.get("session")))
        return out

    def collected(self, items) -> None:
        """Add the collected tests (their functions and code) to the fingerprints."""
        self.items = list(items)
        self.base = self.take()

    def changed(self) -> list:
        now = self.take()
        keys = set(now) | set(self.base)
        return sorted(k for k in keys if now.get(k) != self.base.get(k) and not (k.startswith("builtins.") and k not in self.base))


def describe(changed: list, where: str) -> str:
    """One plain line naming what changed, for the agent and the ledger."""
    def kind(key: str) -> str:
        if key == "plugins":
            return "a pytest plugin was registered or removed"
        if key.startswith("hook "):
            return f"the pytest hook {key.split()[1]} was changed"
        if key.startswith("test "):
            return f"the test function {key[5:]} was replaced"
        if key.startswith("reporter"):
            return "the kit's reporter was changed"
        if key.startswith("builtins."):
            return f"the builtin {key[9:]} was replaced"
        if key.startswith(("sys.", "threading.")):
            return f"{key} was changed"
        return f"pytest's {key} was replaced"
    kinds = list(dict.fromkeys(kind(k) for k in changed))
    more = f" (and {len(kinds) - 2} more)" if len(kinds) > 2 else ""
    return f"the code under test changed the test harness: {'; '.join(kinds[:2])}{more} {where}"


def _send(fd: int, msg: dict) -> None:
    _write(fd, (_dumps(msg) + "\n").encode())


class Reporter:
    def __init__(self, fd: int, nonce: str) -> None:
        self.fd = fd
        self.nonce = nonce
        self.wires = None
        self.open = ""
        self.tampered = False

    def _send(self, **msg) -> None:
        _send(self.fd, msg)

    def pytest_configure(self, config) -> None:
        self._send(ev="hello", nonce=self.nonce)

    def pytest_collection(self, session) -> None:
        # The last moment before the test modules (and so the repository's code) are imported.
        self.wires = Tripwires(session.config, self)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._send(ev="collecterror", id=report.nodeid, message=_message(report), detail=str(report.longrepr)[:4000])

    def pytest_collection_finish(self, session) -> None:
        self._check("during collection")
        if self.wires is not None:
            self.wires.collected(session.items)
        self._send(ev="collected", ids=[item.nodeid for item in session.items])

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self._send(ev="start", id=nodeid)

    def pytest_runtest_logreport(self, report) -> None:
        outcome = report.outcome
        message = ""
        if report.failed:
            message = _message(report)
        elif report.skipped:
            outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
            message = report.wasxfail if outcome == "xfailed" else _message(report)
        elif report.when == "call" and hasattr(report, "wasxfail"):
            outcome, message = "xpassed", report.wasxfail or ""
        self._send(ev="report", id=report.nodeid, when=report.when, outcome=outcome, message=message[:4000])

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        self._check(f"during {nodeid}")
        self._send(ev="end", id=nodeid)

    def _check(self, where: str) -> None:
        if self.wires is None or self.tampered:
            return
        changed = self.wires.changed()
        if changed:
            self.tampered = True  # the first change is the one that matters; later checks would repeat it
            self._send(ev="tamper", what=describe(changed, where), keys=changed[:20])

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self._check("at the end of the run")
        self._send(ev="finish", nonce=self.nonce, exitstatus=int(exitstatus))
