"""Small checks for the examples: raises, approx, marks, parameters and fixtures."""

import math
import re


class Failed(AssertionError):
    pass


class Skipped(Exception):
    pass


def fail(reason="", pytrace=True):
    raise Failed(reason)


def skip(reason="", allow_module_level=False):
    raise Skipped(reason)


class Mark:
    def __init__(self, name, args=(), kwargs=None):
        self.name, self.args, self.kwargs = name, args, kwargs or {}

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            args[0].__dict__.setdefault("marks", []).append(self)
            return args[0]
        return Mark(self.name, args, kwargs)


class Marks:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Mark(name)


mark = Marks()


class Param:
    def __init__(self, values, id=None, marks=()):
        self.values, self.id, self.marks = values, id, marks


def param(*values, id=None, marks=()):
    return Param(values, id, marks)


def fixture(fn=None, *, scope="function", autouse=False, name=None, params=None, ids=None):
    def mark(f):
        f.fixture = (name or f.__name__, autouse)
        return f
    return mark(fn) if callable(fn) else mark


class Raised:
    def __init__(self, expected, match):
        self.expected, self.pattern = expected, match
        self.value = self.type = self.tb = None

    def match(self, pattern):
        assert re.search(pattern, str(self.value)), f"{pattern!r} does not match {str(self.value)!r}"
        return True

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise Failed(f"DID NOT RAISE {self.expected}")
        if not issubclass(kind, self.expected):
            return False
        self.value, self.type, self.tb = value, kind, tb
        if self.pattern is not None:
            self.match(self.pattern)
        return True


def raises(expected, *args, match=None, **kwargs):
    raised = Raised(expected, match)
    if args:
        with raised:
            args[0](*args[1:], **kwargs)
    return raised


NUMBERS = (int, float, complex)


def close(got, want, rel=None, tol=None, nan_ok=False):
    """Whether `got` is `want` within the tolerance: numbers, and lists, tuples and dicts of them, by item."""
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(close(got[k], w, rel, tol, nan_ok) for k, w in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
            close(g, w, rel, tol, nan_ok) for g, w in zip(got, want, strict=True))
    if isinstance(want, bool) or isinstance(got, bool) or not isinstance(want, NUMBERS):
        return got == want
    if not isinstance(got, NUMBERS) or want != got and isinstance(want, float) and math.isinf(want):
        return False
    if isinstance(want, float) and math.isnan(want):
        return nan_ok and isinstance(got, float) and math.isnan(got)
    if want == got:
        return True
    allowed = tol if tol is not None and rel is None else max(abs(want) * (1e-6 if rel is None else rel),
                                                              1e-12 if tol is None else tol)
    return abs(got - want) <= allowed


class approx:
    def __init__(self, expected, rel=None, abs=None, nan_ok=False):
        self.expected, self.rel, self.abs, self.nan_ok = expected, rel, abs, nan_ok

    def __eq__(self, other):
        return close(other, self.expected, self.rel, self.abs, self.nan_ok)

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"approx({self.expected!r})"
