"""The fixtures the second harness serves itself, as pytest serves them: `tmp_path` and `tmp_path_factory`'s folder,
`monkeypatch`, `capsys`, `caplog`, and pytest 9's `subtests` (`bare_shim.plan_test` makes them for a test).

Standard library only: this source is sent with `bare.py` and executed in the same namespace.
"""

import importlib
import io
import os
import sys
from collections import namedtuple


class _Skipped(BaseException):
    pass


class _Failed(Exception):
    pass


# --- served fixtures ---------------------------------------------------------------------------------------

class _MonkeyPatch:
    _NOTSET = object()

    def __init__(self):
        self._undo = []

    def _target(self, target, name, value):
        if isinstance(target, str) and value is self._NOTSET:
            mod, _, attr = target.rpartition(".")
            obj = importlib.import_module(mod)
            return obj, attr, name
        return target, name, value

    def setattr(self, target, name, value=_NOTSET, raising=True):
        target, name, value = self._target(target, name, value)
        old = getattr(target, name, self._NOTSET)
        if raising and old is self._NOTSET:
            raise AttributeError(f"{target!r} has no attribute {name!r}")
        self._undo.append(lambda: setattr(target, name, old) if old is not self._NOTSET else delattr(target, name))
        setattr(target, name, value)

    def delattr(self, target, name=_NOTSET, raising=True):
        if isinstance(target, str) and name is self._NOTSET:
            target, name, _ = self._target(target, None, self._NOTSET)
        if not hasattr(target, name):
            if raising:
                raise AttributeError(name)
            return
        old = getattr(target, name)
        self._undo.append(lambda: setattr(target, name, old))
        delattr(target, name)

    def setitem(self, mapping, key, value):
        old = mapping.get(key, self._NOTSET)
        self._undo.append(lambda: mapping.__setitem__(key, old) if old is not self._NOTSET else mapping.pop(key, None))
        mapping[key] = value

    def delitem(self, mapping, key, raising=True):
        if key not in mapping:
            if raising:
                raise KeyError(key)
            return
        old = mapping[key]
        self._undo.append(lambda: mapping.__setitem__(key, old))
        del mapping[key]

    def setenv(self, name, value, prepend=None):
        value = str(value)
        if prepend and name in os.environ:
            value = value + prepend + os.environ[name]
        self.setitem(os.environ, name, value)

    def delenv(self, name, raising=True):
        self.delitem(os.environ, name, raising)

    def syspath_prepend(self, path):
        self._undo.append(lambda: sys.path.remove(str(path)))
        sys.path.insert(0, str(path))

    def chdir(self, path):
        old = os.getcwd()
        self._undo.append(lambda: os.chdir(old))
        os.chdir(path)

    def undo(self):
        while self._undo:
            self._undo.pop()()


class _CapSys:
    def __init__(self):
        self._io = io
        self._old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()

    def readouterr(self):
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
        sys.stdout, sys.stderr = self._io.StringIO(), self._io.StringIO()
        return namedtuple("CaptureResult", "out err")(out, err)

    def close(self):
        sys.stdout, sys.stderr = self._old


class _CapLog:
    """pytest's `caplog`: a handler on the root logger for the test (every record that reaches it, as pytest's
    handler takes them), its records, messages and text in pytest's format; levels set through it are put back."""

    FORMAT = "%(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s"  # pytest's DEFAULT_LOG_FORMAT

    def __init__(self):
        import logging

        class Handler(logging.Handler):
            def __init__(self):
                super().__init__(0)
                self.records, self.stream = [], io.StringIO()
                self.setFormatter(logging.Formatter(_CapLog.FORMAT))

            def emit(self, record):
                self.records.append(record)
                self.stream.write(self.format(record) + "\n")

        self._logging, self.handler, self._levels = logging, Handler(), []
        logging.getLogger().addHandler(self.handler)

    @property
    def records(self):
        return self.handler.records

    @property
    def record_tuples(self):
        return [(r.name, r.levelno, r.getMessage()) for r in self.records]

    @property
    def messages(self):
        return [r.getMessage() for r in self.records]

    @property
    def text(self):
        return self.handler.stream.getvalue()

    def get_records(self, when):
        return self.records if when == "call" else []

    def clear(self):
        self.handler.records, self.handler.stream = [], io.StringIO()

    def set_level(self, level, logger=None):
        target = self._logging.getLogger(logger)
        self._levels.append((target, target.level, self.handler.level))
        target.setLevel(level)
        self.handler.setLevel(level)

    def at_level(self, level, logger=None):
        import contextlib

        @contextlib.contextmanager
        def scope():
            n = len(self._levels)
            self.set_level(level, logger)
            try:
                yield
            finally:
                self._restore(n)
        return scope()

    def _restore(self, n=0):
        while len(self._levels) > n:
            target, was, handler_was = self._levels.pop()
            target.setLevel(was)
            self.handler.setLevel(handler_was)

    def close(self):
        self._restore()
        self._logging.getLogger().removeHandler(self.handler)


class _TmpFactory:
    def __init__(self, base):
        self.base, self.n = base, 0

    def getbasetemp(self):
        return self.base

    def mktemp(self, basename, numbered=True):
        self.n += 1
        p = self.base / (f"{basename}{self.n}" if numbered else basename)
        p.mkdir(parents=True)
        return p


class _Subtests:
    """pytest 9's `subtests`: each `subtests.test(msg, **kwargs)` block runs; an exception in it (any but
    KeyboardInterrupt, as pytest reraises only that and its own `Exit`) is that subtest's failure, and the test goes
    on; a skip in it skips the subtest alone. Any failed subtest fails the test (`close`, a teardown: pytest turns a
    passing test with failed subtests into a failure when it reports it)."""

    def __init__(self):
        self.failures = []

    def test(self, msg=None, **kwargs):
        return _SubTest(self.failures)

    def close(self):
        if self.failures:
            raise self.failures[0]


class _SubTest:
    def __init__(self, failures):
        self.failures = failures

    def __enter__(self):
        return None

    def __exit__(self, kind, value, tb):
        if value is None or isinstance(value, KeyboardInterrupt):
            return False
        if not isinstance(value, _Skipped):
            self.failures.append(value)
        return True
