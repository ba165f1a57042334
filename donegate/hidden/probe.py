"""The equality probe: a passing `==` (or a failing `!=`) in a test's assert is answered again by the rules of the
value the test expects (`make_probe`). Against a value of a builtin type, the product's object is compared as
that builtin (a subclass) or must be equal to it again and to nothing next to it (any other object): equal
within a tolerance or only once, the assert fails. An object equal to a fresh value it cannot equal is equal
to everything: tampering (never appealable).

Both runs use it: the pytest run inserts `res = probe(left, right, op, res)` after each comparison pytest's
assertion rewriter makes (`probe_unit.rewrite_probes`, on the tree pytest has rewritten), the second harness
rewrites the test's asserts itself (`probe_unit.compare_probes`). This file is self-contained (the standard library
only): its source is sent into the hidden run with the plugin's or the harness's and executed there; nothing of the
kit is imported.

A class is never trusted for what it says of itself (`__module__`, its code's `co_filename`): against a
builtin value only the test's own wildcards keep their equality (pytest's approx, `unittest.mock.ANY`, known
by identity); between two objects, a class whose equality runs in the namespace of a module loaded from a
file outside the repository (the standard library, an installed package) is not probed. Honest equality
returns False, NotImplemented or raises against a stranger, so it is never trapped.
"""

import os as _os

# unittest's tolerance, one rule with the supervisor's: `probe_unit.py` (sent before this source, one namespace)
if globals().get("__package__"):
    from donegate.hidden.probe_unit import unit_close

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type(), not a builtin


def make_probe(repo, alarm):
    """The probe function: probe(left, right, op, result) -> the comparison's answer, calling `alarm(what)` on an
    object equal to everything. Every builtin it uses is bound now, before the code under test is imported.

    When one side is a value of a builtin type (`pure`: numbers, str, bytes, None and tuples, lists, dicts,
    sets of them, each of exactly its type), the answer is that type's own equality (`same`): a subclass of a
    builtin type (an IntEnum, a namedtuple, an int with its own `__eq__`) is compared as the builtin it is; any
    other object (Decimal, Fraction, a repository class) must be equal to the value again, and to no value
    next to it (`near`): equal within a tolerance, or only the first time, it is not equal. Whose object it is
    does not count here (what a class says of its module or its code's file is its own to write): only the
    test's own wildcards (pytest's approx, the shim's, `unittest.mock.ANY`) keep their equality, known by
    identity. Neither side pure: the old rule, an object whose equality is the repository's (`own`) must not
    equal a fresh value."""
    import sys
    from random import Random as _Random  # now: imported at a comparison, it put `random` back in the second run's
    # sys.modules (a program that never imports it holds none; pytest does)

    repo = repo.rstrip("/") + "/"
    _type, _bool, _getattr, _isinstance, _len, _abs, _any = type, bool, getattr, isinstance, len, abs, any
    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    modules, isabs, urandom = sys.modules, _os.path.isabs, _os.urandom
    _int, _float, _complex, _str, _bytes, _tuple, _list, _dict = int, float, complex, str, bytes, tuple, list, dict
    _set, _frozenset, _slice, _none = set, frozenset, slice, type(None)
    numbers = (_bool, _int, _float, _complex)
    scalars = (*numbers, _str, _bytes, _none)
    # A builtin base, and how to take a subclass's value as exactly that base, whatever the subclass overrides.
    # (`complex.__complex__` and `bytes.__bytes__` are 3.11's: the parts and the buffer serve any version.)
    real, imag, view = _complex.real.__get__, _complex.imag.__get__, memoryview
    bases = ((_int, _int.__int__), (_float, _float.__float__), (_complex, lambda x: _complex(real(x), imag(x))),
             (_str, _str.__str__), (_bytes, lambda x: _bytes(view(x))), (_tuple, lambda x: _tuple.__getitem__(x, _slice(None))),
             (_list, lambda x: _list.__getitem__(x, _slice(None))), (_dict, _dict.copy), (_set, _set.copy),
             (_frozenset, _frozenset.copy))
    approx = modules.get("_pytest.approx") or modules.get("_pytest.python_api")
    wild = {v for v in vars(approx).values() if _isinstance(v, type) and v.__name__.startswith("Approx")} if approx else set()
    if _isinstance(globals().get("_Approx"), type):  # the second harness's shim, and its kinds (`bare_shim._approx`)
        wild.update([globals()["_Approx"], *globals().get("_APPROX_KINDS", {}).values()])

    mode = ["=="]  # the operator the test used: a lie may sit in `__ne__` alone

    def eq(a, b):
        return _bool(a == b) if mode[0] == "==" else not _bool(a != b)

    def wildcard(tp):
        if tp in wild:
            return True
        mock = modules.get("unittest.mock")
        return mock is not None and tp is _type(_getattr(mock, "ANY", None))

    def own(tp, names=("__eq__", "__ne__")):
        """True when `tp`'s equality (`names`: its methods) is not known to be the interpreter's or a module's outside
        the repository: a method is known by the module whose namespace it runs in (its globals, a module loaded from
        a file outside the repository, whose file its code names too), never by `__module__` or `co_filename` alone."""
        for name in names:
            for cls in mro_of(tp):
                d = dict_of(cls)
                if name not in d:
                    continue
                if not flags_of(cls) & _HEAPTYPE:
                    break  # int, str, object: the interpreter's own equality
                fn = _getattr(d[name], "__func__", d[name])
                g = _getattr(fn, "__globals__", None)
                mod = modules.get(g.get("__name__")) if _isinstance(g, _dict) and _isinstance(g.get("__name__"), _str) else None
                if mod is None or _getattr(mod, "__dict__", None) is not g:
                    return True
                where = _getattr(_getattr(mod, "__spec__", None), "origin", None)
                code = _getattr(fn, "__code__", None)
                if (not _isinstance(where, _str) or not isabs(where) or where.startswith(repo)
                        or _getattr(code, "co_filename", None) != where):
                    return True
                break
        return False

    def pure(v, depth=0):
        t = _type(v)
        if t in scalars:
            return True
        if depth > 20:
            return False
        if t is _tuple or t is _list or t is _set or t is _frozenset:
            return all(pure(x, depth + 1) for x in v)
        if t is _dict:
            return all(pure(k, depth + 1) and pure(x, depth + 1) for k, x in v.items())
        return False

    def strangers(other):
        """Fresh values `x` cannot honestly equal: an instance of a new class, and `other` changed."""
        tag = urandom(6).hex()
        out = [_type("_Stranger" + tag, (), {})()]
        try:
            kind = _type(other)
            if kind is _bool:
                out.append(not other)
            elif kind is _int:
                out.append(other + 982451653)
            elif kind is _float and other == other and other not in (float("inf"), float("-inf")):
                out.append(other * 3 + 1e9 + 0.5)
            elif kind is _str:
                out.append(other + "\x00" + tag)
            elif kind is _bytes:
                out.append(other + b"\x00" + tag.encode())
            elif kind in (_tuple, _list):
                out.append(other + kind([out[0]]))
            elif kind is _dict:
                out.append({**other, tag: out[0]})
        except Exception:  # an exotic value: the fresh instance is probe enough
            pass
        return out

    def near(e):
        """Values next to `e` that its own equality tells from it: one apart, a millionth apart, another case."""
        t = _type(e)
        if t is _int:
            return [e + 1, e - 1]
        if t is _float and e == e and _abs(e) != float("inf"):
            d = max(_abs(e), 1.0) * 1e-6
            return [e + d, e - d]
        if t is _str:
            return [e + " "] + ([e.swapcase()] if e.swapcase() != e else [])
        if t is _bytes:
            return [e + b" "]
        return []

    def stands_in(x, e):
        """`x` (an object of no builtin type) against `e` (pure): equal again, and to nothing next to it.
        False, or "stranger" when it equals a fresh value too (equal to everything)."""
        try:
            if not (eq(x, e) and eq(x, e)):
                return False
            for s in strangers(e):
                if eq(x, s):
                    return "stranger"
            for s in near(e):
                if eq(x, s):
                    return False
        except Exception:
            return False
        return True

    def same(x, e, depth=0):
        """`x` equal to the pure value `e` by `e`'s own rules: True, False, or "stranger"."""
        tx, te = _type(x), _type(e)
        if tx in scalars and te in scalars:
            return x == e  # both exactly builtin: the builtin's own equality (1 == 1.0 == True)
        if te is _none:
            return x is None
        if depth > 20:
            return x == e
        for base, take in bases:
            # A subclass by its real MRO: `isinstance` believes a `__class__` property (wrapt's ObjectProxy says it
            # is the int it wraps), and `int.__int__` then refuses the proxy: its honest `== 15` failed. Such an
            # object is any other object here (`stands_in`).
            if tx is not base and base in mro_of(tx):
                r = same(take(x), e, depth + 1)
                if r is False and not wildcard(tx):  # it said equal: to a fresh value too?
                    try:
                        if any(eq(x, s) for s in strangers(e)):
                            return "stranger"
                    except Exception:
                        pass
                return r
        if tx is te and te in (_tuple, _list):
            if _len(x) != _len(e):
                return False
            for i in range(_len(e)):
                r = same(x[i], e[i], depth + 1)
                if r is not True:
                    return r
            return True
        if tx is _dict and te is _dict:
            if _len(x) != _len(e):
                return False
            for k, v in e.items():
                if k not in x:
                    return False
                r = same(_dict.__getitem__(x, k), v, depth + 1)
                if r is not True:
                    return r
            return True
        if tx in (_set, _frozenset, _tuple, _list, _dict) or tx in scalars:
            return x == e  # builtin against builtin of another kind: their own answer
        if wildcard(tx):
            return eq(x, e)
        return stands_in(x, e)

    _repr, _str_ = repr, str

    def records(x, e, before):
        """True when `x`'s repr grew with the values the probe compares it with (one apart, a fresh one): an object
        that records what it is compared with carries a test's expected values out in a later failure's repr."""
        values = [*near(e), *strangers(e)[1:]]
        for v in values:
            try:
                eq(x, v)
            except Exception:
                pass
        try:
            after = _repr(x)
        except Exception:
            return False
        return after != before and any(_str_(v) in after and _str_(v) not in before for v in values)

    def lied(x):
        name = _getattr(_type(x), "__qualname__", "?")
        alarm(f"an object of the class {name} compared equal to a fresh value it cannot equal: "
              "an object equal to everything is not a result")

    def probe(left, right, op, result):
        if op != "==" and op != "!=":  # unittest's other comparisons (`probe_unit`), after the call passed
            return unit_check(left, right, op)
        try:
            holds = _bool(result) if op == "==" else not _bool(result)
        except Exception:
            return result
        if not holds:
            return result
        try:
            lp, rp = pure(left), pure(right)
        except Exception:
            return result
        if lp != rp:  # one side a builtin value: its own equality decides
            x, e = (right, left) if lp else (left, right)
            mode[0] = op
            try:
                before = _repr(x)
            except Exception:
                before = None
            try:
                answer = same(x, e)
            except Exception:
                answer = False
            if answer == "stranger":
                lied(x)
                answer = False
            elif answer is True and before is not None and not wildcard(_type(x)) and records(x, e, before):
                name = _getattr(_type(x), "__qualname__", "?")
                alarm(f"an object of the class {name} records what it is compared with (its repr grew with the "
                      "values the probe compared it with): a value that carries a test's expected values out")
                answer = False
            return answer if op == "==" else not answer
        if lp:
            return result
        for x, other in ((left, right), (right, left)):
            try:
                if wildcard(_type(x)) or not own(_type(x)):
                    continue
            except Exception:
                continue
            for s in strangers(other):
                try:
                    hit = _bool(x == s) if op == "==" else not _bool(x != s)
                except Exception:
                    hit = False
                if hit:
                    lied(x)
                    return op != "=="
        return result

    def member(x, c, op):
        """Whether `x` is in `c` by the rules of the side that is a builtin value: a builtin container's elements
        each by their own rules (`same`); a member that is a builtin value must not be in the product's container
        with a fresh value (for "member"; "stranger" if it is); neither side one, the call's answer."""
        if pure(c):
            if pure(x):
                return x in c
            if _type(c) is _str or _type(c) is _bytes:  # a substring: of the member's builtin value (its real class)
                return any(base in mro_of(_type(x)) and take(x) in c for base, take in bases if base is _type(c))
            found = False
            for el in _list(c)[:256]:  # a dict's keys
                r = same(x, el)
                if r == "stranger":
                    return r
                if r is True:
                    found = True
                    break
            return found
        if pure(x) and op == "member":
            for s in strangers(x):
                try:
                    if s in c:
                        return "stranger"
                except Exception:
                    pass
        return op == "member"

    def number(x):
        """`x` as a builtin number (a subclass as its base, an object by its own `float`), or None. A subclass by its
        real MRO, as in `same`: `isinstance` believes a `__class__` property (a proxy's refused by `float.__float__`;
        an object that says it is a str was no number, its own `float` never asked)."""
        tx = _type(x)
        if tx in numbers:
            return x
        mro = mro_of(tx)
        for base, take in bases[:3]:
            if base in mro:
                return take(x)
        if _str in mro or _bytes in mro:
            return None
        try:
            return _float(x)
        except Exception:
            return None

    def almost(left, right, places, delta):
        lp, rp = pure(left), pure(right)
        if lp == rp:
            return unit_close(left, right, places, delta) if lp else True
        x, e = (right, left) if lp else (left, right)
        v = number(x)
        if v is not None:
            return unit_close(v, e, places, delta)
        if eq(x, e):  # equal, as the call found first: by the expected value's rules
            return same(x, e)
        if _type(e) not in numbers:
            return True
        # No number, not equal: the call passed by unittest's own rule, the difference (`x - e`), a number within
        # the tolerance; as small to a fresh value, it is no difference (an object whose `__sub__` says 0 to anything).
        if not apart(x, e, places, delta):
            return False
        return "stranger" if any(apart(x, s, places, delta) for s in strangers(e)) else True

    def apart(x, e, places, delta):  # `x - e` a real number within unittest's tolerance
        try:
            d = number(x - e)
            return d is not None and _type(d) is not _complex and unit_close(_abs(d), 0, places, delta)
        except Exception:
            return False

    def counted(xs, es):
        """Whether the lists `xs` and `es` (`listed`) hold the same elements as often, one matched to each by the
        rules of the side that is a builtin value (`same`); neither side one, the call's answer."""
        lp, rp = pure(xs), pure(es)
        if not (lp or rp):
            return True
        x, e = (es, xs) if lp and not rp else (xs, es)
        if _len(x) != _len(e):
            return False
        if _len(e) > 256:
            return True
        left = _list(x)
        for el in e:
            for i in range(_len(left)):
                r = same(left[i], el)
                if r == "stranger":
                    return r
                if r is True:
                    del left[i]
                    break
            else:
                return False
        return True

    def unit_check(left, right, op):
        """unittest's other comparisons answered again, by the rules of the side that is a builtin value: `op`
        "member", "not member", "count", ("almost", places, delta) (`probe_unit`)."""
        mode[0] = "=="
        try:
            if op == "member" or op == "not member":
                r = member(left, right, op)
            elif op == "count":
                r = counted(left, right)
            elif _type(op) is _tuple and op[0] == "almost":
                r = almost(left, right, op[1], op[2])
            else:
                return True
        except Exception:
            return False
        if r == "stranger":  # named by its class: the container's, the member's, a list's first element of no builtin
            x = right if op in ("member", "not member") and pure(left) else left
            lied(next((v for v in x if not pure(v)), x) if op == "count" and _type(x) is _list else x)
            return False
        return r if op != "not member" else not r

    def decoys_for(x, y, op):
        """The decoys `x` is compared with first (`decoys`) for unittest's comparison `op`: values unlike the expected
        `y` by its rules (not almost equal; not in the container); for a membership whose container is the
        product's, `(x,)` when it holds a fresh value (equal to everything), else ()."""
        try:
            if op == "member" and pure(x) and not pure(y):
                if not own(_type(y), ("__contains__", "__iter__", "__getitem__", "__eq__")):
                    return ()
                return (x,) if member(x, y, op) == "stranger" else ()
            if op == "member":
                elements = _list(y)[:15] if pure(y) and _type(y) not in (_str, _bytes) else []
                out = [d for el in elements for d in decoys(x, el)[:4]]
                return _tuple(d for d in out if not any(d == el for el in y))  # none in the container: honest code is in it
            if _type(op) is _tuple and op[0] == "almost" and _type(y) in numbers:
                return _tuple(d for d in decoys(x, y) if not unit_close(d, y, op[1], op[2]))
        except Exception:
            pass
        return ()

    def decoys(x, e):
        """Values of the expected `e`'s kind (an int, a float, a str, bytes, None or a bool, or a tuple, list, dict, set
        or frozenset of them, empty too) its own equality
        tells from it, as plausible as it is (`answers.answer_decoys`), that an object of the repository's `x` is
        compared with before `e`, in the test's own frame (`compare_probes`): a value that latches onto the first value
        it is compared with latches onto one of them, and the probe says so. A container's decoy is of its type and
        length with one element changed. () for anything else (a builtin, a wildcard, another library's object)."""
        try:
            draw = globals().get("answer_decoys")
            if _type(e) not in kinds or pure(x) or wildcard(_type(x)) or not own(_type(x)) or draw is None:
                return ()
            return _tuple(drawn(e, draw, _Random(urandom(16)), 0))
        except Exception:
            return ()

    kinds = (_none, _bool, _int, _float, _str, _bytes, _tuple, _list, _dict, _set, _frozenset)
    last = [None]  # the last comparison's decoys as `placed` hands them out: [the expected value's place, how many, ...]

    def placed(x, e):
        """`decoys(x, e)` with `e` itself at a drawn place after the first, as the test's frame compares them (`x in ...`,
        stopping at the first equal): `e` came last every time, so an object equal to the value after its decoys (15 of
        an int, 4 of a float), or to the first under pytest, passed both runs (review C). `first` reads how far it
        went: equal to `e` at its place, the decoys after it are compared then; unequal there, equal at the end, a lie."""
        last[0] = None
        ds = decoys(x, e)
        if not ds:
            return ()
        # never first: a latch onto the first value it is compared with still latches onto a decoy, every time
        state = last[0] = [_Random(urandom(8)).randrange(1, _len(ds) + 1), 0, ds, e]

        def among():
            for i in range(_len(ds) + 1):
                state[1] = i + 1
                yield e if i == state[0] else ds[i - (i > state[0])]
        return among()

    def drawn(e, draw, rnd, depth):
        t = _type(e)
        if t is _float:  # as an int's, a power of ten apart (`answer_decoys` takes floats through decimal)
            whole = _int(e) if e == e and _abs(e) != float("inf") else 0
            step = 10.0 ** (_len(_str(_abs(whole))) - 1)
            return [v for v in (e + i * step for i in (-2, -1, 1, 2)) if v != e]
        if t in (_none, _int, _str, _bool, _bytes):  # None and bools: values of other kinds (`answer_decoys`)
            return draw(e, rnd)
        if t not in (_tuple, _list, _dict, _set, _frozenset) or depth > 3:
            return []
        if not e:  # empty: one element more (`answer_decoys`' own, as plausible; one alone, a latch passed one time in 2)
            return draw(e, rnd)
        keys = _list(e) if t in (_dict, _set, _frozenset) else _list(range(_len(e)))
        rnd.shuffle(keys)
        out = []
        # one element changed in each, the elements in a drawn order (a latch latches onto the first), each element's
        # decoys taken in turn until there are 15 (a one-element tuple had one, a latch passed one time in 2)
        each = [(k, drawn(k if t in (_set, _frozenset) else e[k], draw, rnd, depth + 1)) for k in keys[:15]]
        for r in range(15):
            for k, ds in each:
                if r >= _len(ds) or _len(out) >= 15:
                    continue
                d = ds[r]
                if t is _dict:
                    out.append({**e, k: d})
                elif t in (_set, _frozenset):
                    try:
                        if d not in e:
                            out.append(t([*(x for x in e if x is not k), d]))
                    except TypeError:  # an element's decoy that cannot be in a set
                        pass
                else:
                    out.append(t([*e[:k], d, *e[k + 1:]]))
        if out:
            return out
        tag = urandom(6).hex()
        return [{**e, tag: None}] if t is _dict else [t([*e, tag])]

    def first(left, right, op, before, result):
        """The second harness's probe (`compare_probes`): `before`, whether `left` equalled a decoy of `right` (or the
        expected value at its place among them: `placed`)."""
        state, last[0] = last[0], None
        if state is not None and (state[3] is right or state[3] is left):
            k, n, ds, e = state
            x, at = left if state[3] is right else right, before and n == k + 1
            if at:  # equal to the expected value at its place: then to none of the decoys after it
                before = _any(_bool(d == x) for d in ds[k:])
            if not before and n > k and _bool(result) != at and op == "==":  # compared with it there, and said otherwise
                name = _getattr(_type(x), "__qualname__", "?")
                alarm(f"an object of the class {name} compared unequal to the expected value among its decoys and equal "
                      "to it at the end (or the other way): a value that counts what it is compared with is not a result")
                return False
        if before:
            name = _getattr(_type(right if pure(left) else left), "__qualname__", "?")
            alarm(f"an object of the class {name} compared equal to a value unlike the expected one, compared with "
                  "it first: a value that latches onto what it is compared with is not a result")
            return op == "!="
        return probe(left, right, op, result)

    def unit(method):
        """Whether `method` is unittest's own assert method (a TestCase's, not overridden by a class of the project's,
        whose own tolerance is its to keep): only those are probed (`unit_probes`)."""
        case = modules.get("unittest.case")
        fn = _getattr(method, "__func__", None)
        return case is not None and fn is not None and any(fn is v for v in dict_of(case.TestCase).values())

    probe.decoys, probe.first, probe.unit, probe.decoys_for, probe.listed = decoys, first, unit, decoys_for, _list
    probe.placed = placed
    return probe
