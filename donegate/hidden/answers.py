"""The second run holds no answer (issue 45 item 4): an expected value a sealed test writes as a literal stays with
the supervisor, outside every process that runs the product.

Sent with the second harness (`bare.py`; standard library only, one namespace, so every name here starts with
`answer`). The kit rewrites each test's top-level `assert <expr> == <literal>` (a literal, or arithmetic on number
literals: `9 * 430`), or unittest's `self.assertEqual(<expr>, <literal>)` (`answer_holds`; at most
`ANSWER_MAX` a test) into `HOLD(<expr>, K)`: the literal is in no code object a zygote or fork holds. In the fork:

- a value of a builtin type (numbers, str, bytes, None, and tuples, lists, dicts, sets of them; a subclass taken as
  the builtin it holds, as the equality probe takes it) is written to the fork's result pipe as it is returned
  (`answer_hold`); the supervisor compares it with the expected value by that builtin's equality;
- any other object (Decimal, a repository class, a latch) is kept until the test returned; then, with its token,
  the fork is sent the expected value among decoys of the same kind (`answer_draw.answer_ticket`: 16 in all, in an order drawn
  per test), compares the object with each by its own `==`, and writes which it equals: it must equal the expected
  value and no decoy. The candidates are shared out with a fork made first (`bare_apart.apart`): an object equal to
  the first value it is compared with (a latch) equals one on each side, never the expected value alone.

Every held assert of a test that passed must have its answer; none missing, none extra. What is not held (an
expected value computed at run time, `pytest.approx`, asserts inside a loop, `with` or `if`) is compared in the
fork as before, through the equality probe.
"""

_answer_ast = (__import__("donegate.core.lazy", fromlist=["Lazy"]).Lazy("ast", globals(), "_answer_ast")  # the kit's: at its
               if globals().get("__package__") else __import__("ast"))  # first use (`core.lazy`); a run's: here, as always
import itertools as _answer_itertools
import json as _answer_json

ANSWER_MAX = 8  # held asserts a test (each answer at most ANSWER_VALUE bytes: the zygote reads them as the fork runs)
ANSWER_LITERAL = 16384  # longer once encoded: not held (16 candidates each through the pipes: `bare.FLIGHT`)
ANSWER_VALUE = 5 * ANSWER_LITERAL  # longer: cannot equal a held literal, "L" (an equal value encodes 4.3x at most)
ANSWER_DECOYS = 15
_answer_dumps, _answer_loads = _answer_json.dumps, _answer_json.loads
_ANSWER_BASES = ((bool, None), (int, int.__int__), (float, float.__float__),
                 (complex, lambda x: complex(complex.real.__get__(x), complex.imag.__get__(x))),
                 (str, str.__str__), (bytes, lambda x: bytes(memoryview(x))),
                 (tuple, lambda x: tuple.__getitem__(x, slice(None))), (list, lambda x: list.__getitem__(x, slice(None))),
                 (dict, dict.copy), (set, set.copy), (frozenset, frozenset.copy))


def answer_encode(v, depth=0):
    """`v` as JSON-able data when it is a builtin value (a subclass of one taken as that builtin), else None."""
    if depth > 20:
        return None
    t = type(v)
    if v is None:
        return ["N"]
    for base, take in _ANSWER_BASES:
        if issubclass(t, base):  # its real class: `isinstance` believes a `__class__` property (wrapt's ObjectProxy)
            if t is not base:
                if take is None:
                    return None
                v = take(v)
            break
    else:
        return None
    if base is bool:
        return ["b", int(v)]
    if base is int:
        return ["i", str(v)]
    if base is float:
        return ["f", v.hex()]
    if base is complex:
        return ["c", v.real.hex(), v.imag.hex()]
    if base is str:
        return ["s", v]
    if base is bytes:
        return ["y", v.hex()]
    if base is dict:
        items = [[answer_encode(k, depth + 1), answer_encode(x, depth + 1)] for k, x in dict.items(v)]
        return None if any(a is None or b is None for a, b in items) else ["d", items]
    parts = [answer_encode(x, depth + 1) for x in v]
    if any(p is None for p in parts):
        return None
    return [{tuple: "t", list: "l", set: "S", frozenset: "F"}[base], parts]


def answer_decode(d):
    """The builtin value `answer_encode` gave (raises on anything it never gives)."""
    tag = d[0]
    if tag == "N":
        return None
    if tag == "b":
        return bool(d[1])
    if tag == "i":
        return int(d[1])
    if tag == "f":
        return float.fromhex(d[1])
    if tag == "c":
        return complex(float.fromhex(d[1]), float.fromhex(d[2]))
    if tag == "s" and isinstance(d[1], str):
        return d[1]
    if tag == "y":
        return bytes.fromhex(d[1])
    if tag == "d":
        return {answer_decode(k): answer_decode(x) for k, x in d[1]}
    kind = {"t": tuple, "l": list, "S": set, "F": frozenset}[tag]
    return kind(answer_decode(x) for x in d[1])


# --- the supervisor's side ----------------------------------------------------------------------------------

_ANSWER_OPS = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mult": lambda a, b: a * b,  # ast's, by name
               "FloorDiv": lambda a, b: a // b, "Mod": lambda a, b: a % b, "Div": lambda a, b: a / b}


def _answer_arith(node):
    """The value of arithmetic on number literals (`9 * 430`, `(6 * 430 + 4 * 250) * 90 // 100`), else ValueError."""
    if isinstance(node, _answer_ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, _answer_ast.UnaryOp) and isinstance(node.op, (_answer_ast.USub, _answer_ast.UAdd)):
        v = _answer_arith(node.operand)
        return -v if isinstance(node.op, _answer_ast.USub) else v
    if isinstance(node, _answer_ast.BinOp) and type(node.op).__name__ in _ANSWER_OPS:
        a, b = _answer_arith(node.left), _answer_arith(node.right)
        if abs(a) > 1e18 or abs(b) > 1e18:
            raise ValueError("too large")
        return _ANSWER_OPS[type(node.op).__name__](a, b)
    raise ValueError("not arithmetic on literals")


def _answer_literal(node):
    """(the builtin value a literal expression stands for, whether it is held): a literal, or arithmetic on numbers."""
    try:
        value = _answer_ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        try:
            value = _answer_arith(node)
        except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
            return None, False
    enc = answer_encode(value)
    return value, enc is not None and len(_answer_dumps(enc)) <= ANSWER_LITERAL


# unittest's methods held: the one list the probe reads too (`probe_unit.py`; in a run, its source shares this
# namespace); a class of the file's own that defines any of them keeps its tolerance (none held)
if globals().get("__package__"):
    from donegate.hidden.bare_plan import inherited, own_classes
    from donegate.hidden.probe_unit import UNIT_ALMOST, UNIT_COUNT, UNIT_EQ, UNIT_IN, UNIT_TRUE, _rule, unit_close
_ANSWER_UNIT = (*UNIT_EQ, *UNIT_TRUE, *UNIT_IN, *UNIT_ALMOST, *UNIT_COUNT)
# A held assert that is not `==` (`answer_rule`): its expected value (ANSWER_RULE, rule, value); "member": the product's
# value must be one of a literal container's elements, ("almost", places, delta): within unittest's tolerance of it,
# "count": the product's value listed must hold a literal list's (or tuple's) elements as often (assertCountEqual)
ANSWER_RULE = "\x00answer-rule"
ANSWER_MEMBERS = 64  # elements of a literal container held (15 decoys each; a count's objects: 64 x 1,024 compared)


def answer_rule(e):
    """(rule, value) of a held assert's expected value: ("==", e) for an assert's literal."""
    return (e[1], e[2]) if type(e) is tuple and len(e) == 3 and e[0] == ANSWER_RULE else ("==", e)


def _answer_counted(got, e):
    """assertCountEqual on builtin values: the list `got` holds the elements of `e` as often, each matched to one."""
    left = list(got) if type(got) is list else None
    for x in e if left is not None else ():
        i = next((i for i, y in enumerate(left) if y == x), None)
        if i is None:
            return False
        del left[i]
    return left == []


def _answer_unit(stmt):
    """`X == Y` of a statement `self.assertEqual(X, Y)` or `self.assertTrue(X == Y)` (a message after them a literal
    alone: the call is left out whole), as an assert's test; (rule, X, the literal) of `self.assertIn(X, LITERAL)`
    ("member"), `self.assertAlmostEqual(X, LITERAL)` (either side; ("almost", places, delta), literal numbers or
    absent) or `self.assertCountEqual(X, LITERAL list or tuple)` (either side; "count"); else None."""
    call = stmt.value if isinstance(stmt, _answer_ast.Expr) else None
    if not (isinstance(call, _answer_ast.Call) and isinstance(call.func, _answer_ast.Attribute)
            and isinstance(call.func.value, _answer_ast.Name) and call.func.value.id == "self"):
        return None
    name, args = call.func.attr, call.args
    if any(isinstance(a, _answer_ast.Starred) for a in args):
        return None
    if name in UNIT_ALMOST and 2 <= len(args) <= 5 and all(k.arg in ("places", "delta", "msg") for k in call.keywords):
        given = {**dict(zip(("places", "msg", "delta"), args[2:], strict=False)), **{k.arg: k.value for k in call.keywords}}
        try:
            rule = [_rule(given.get(w)) for w in ("places", "delta")]  # literal numbers or absent, else ValueError
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None
        if not isinstance(given.get("msg"), (_answer_ast.Constant, type(None))):
            return None
        (_, lok), (_, rok) = _answer_literal(args[0]), _answer_literal(args[1])
        return (("almost", *rule), args[0] if rok else args[1], args[1] if rok else args[0]) if lok != rok else None
    rest = [*args[2 if name in UNIT_EQ + UNIT_IN + UNIT_COUNT else 1:], *(k.value for k in call.keywords if k.arg == "msg")]
    if len(rest) > 1 or any(not isinstance(a, _answer_ast.Constant) for a in rest) or any(k.arg != "msg" for k in call.keywords):
        return None
    if name in UNIT_EQ and len(args) >= 2:  # (no Starred argument: refused above)
        return _answer_ast.Compare(args[0], [_answer_ast.Eq()], [args[1]])
    if name in UNIT_TRUE and args and isinstance(args[0], _answer_ast.Compare):
        return args[0]
    if name in UNIT_IN and len(args) >= 2:
        value, ok = _answer_literal(args[1])
        if ok and type(value) in (tuple, list, set, frozenset, dict) and 0 < len(value) <= ANSWER_MEMBERS \
                and not _answer_literal(args[0])[1]:
            return "member", args[0], args[1]
    if name in UNIT_COUNT and len(args) >= 2:  # either side the literal list or tuple
        (lv, lok), (rv, rok) = _answer_literal(args[0]), _answer_literal(args[1])
        value = rv if rok else lv
        if lok != rok and type(value) in (tuple, list) and 0 < len(value) <= ANSWER_MEMBERS:
            return "count", args[0] if rok else args[1], args[1] if rok else args[0]
    return None


def answer_holds(tree):
    """The held asserts of `tree`'s tests: each top-level `assert X == LITERAL` (or `LITERAL == X`) of a test
    function, or unittest's call that compares so (`_answer_unit`), before any top-level `return` or `raise`, at most
    `ANSWER_MAX` a test: {test qualname: [(K, expected value (`answer_rule`), the assert statement, X)]}; K counts
    through the file."""
    out, count = {}, [0]
    # a class of the file's own with an assert method of its own (a tolerance of its own): no unittest call is held
    own_asserts = any(isinstance(m, (_answer_ast.FunctionDef, _answer_ast.AsyncFunctionDef)) and m.name in _ANSWER_UNIT
              for node in tree.body if isinstance(node, _answer_ast.ClassDef) for m in node.body)

    def fn(node, qual):
        held = []
        for stmt in node.body:
            if isinstance(stmt, (_answer_ast.Return, _answer_ast.Raise)) or len(held) >= ANSWER_MAX:
                break  # what follows may never run: compared in the fork, as before
            test = stmt.test if isinstance(stmt, _answer_ast.Assert) else None if own_asserts else _answer_unit(stmt)
            if isinstance(test, tuple):  # unittest's membership or tolerance: the expected value with its rule
                rule, x, literal = test
                held.append((count[0], (ANSWER_RULE, rule, _answer_literal(literal)[0]), stmt, x))
                count[0] += 1
            elif isinstance(test, _answer_ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _answer_ast.Eq):
                left, right = test.left, test.comparators[0]
                lv, lok = _answer_literal(left)
                rv, rok = _answer_literal(right)
                if lok != rok:  # one side a literal, the other computed: held
                    held.append((count[0], rv if rok else lv, stmt, left if rok else right))
                    count[0] += 1
        if held:
            out[qual] = held

    for node in tree.body:
        if isinstance(node, _answer_ast.FunctionDef) and node.name.startswith("test"):
            fn(node, node.name)
        elif isinstance(node, _answer_ast.ClassDef):  # any name: a TestCase, a mixin of tests
            for m in node.body:
                if isinstance(m, _answer_ast.FunctionDef) and m.name.startswith("test"):
                    fn(m, f"{node.name}::{m.name}")
    for node, base, m in inherited(own_classes(tree)):  # a test inherited from the file's own classes (grandparents
        if f"{base.name}::{m.name}" in out:  # too: the plan's one walk, `bare_plan.lineage`): the same held asserts
            out[f"{node.name}::{m.name}"] = out[f"{base.name}::{m.name}"]
    return out


def answer_sources(files, name):
    """({file name: its source, each held assert (`answer_holds`) replaced by `name(X, K)` in place (every other
    line as it was, on the same line), as text the run turns back into its bytes}, {file name: {test qualname:
    [(K, expected)]}}): made by the kit, outside the run."""
    sources, held = {}, {}
    for path in files:
        raw = path.read_bytes()
        try:
            found = answer_holds(_answer_ast.parse(raw)) if b"coding" not in raw[:200] else {}
        except (SyntaxError, ValueError):
            found = {}
        if found:
            held[path.name] = {q: [(k, e) for k, e, _, _ in items] for q, items in found.items()}
            starts = [0]
            for line in raw.splitlines(keepends=True):
                starts.append(starts[-1] + len(line))

            def at(line, col, starts=starts):
                return starts[line - 1] + col
            spans = sorted({k: (at(st.lineno, st.col_offset), at(st.end_lineno, st.end_col_offset), k, x, st,
                                _answer_how(answer_rule(e)[0]))
                            for items in found.values() for k, e, st, x in items}.values())  # one a K (inherited ones too)
            for a, b, k, x, st, number in reversed(spans):  # a tolerance: an object sent as its number, a count listed
                inner = raw[at(x.lineno, x.col_offset):at(x.end_lineno, x.end_col_offset)]
                lines = (st.end_lineno - st.lineno) - (x.end_lineno - x.lineno)  # the line count kept
                raw = raw[:a] + b"%s((%s), %d%s%s)" % (name.encode(), inner, k, number, b"\n" * lines) + raw[b:]
        sources[path.name] = raw.decode("utf-8", "surrogateescape")
    return sources, held


def _answer_how(rule):
    """How the fork sends the product's value (`answer_hold`'s third argument): as is, a number (tolerance: 1), listed (2)."""
    return b", 2" if rule == "count" else b"" if rule in ("==", "member") else b", 1"


# None's and a bool's decoys (hashable: a set's element's too); a bool's of the other truth (an object whose equality is
# truthiness equalled True's "yes"): True has the 5 falsy ones beside False, a latch right 1 time in 7
_ANSWER_OTHERS: tuple = (None, False, "", "None", "null", "true", "false", "True", "False", "yes", "no", "0", "1", 2, -1, 3,
                        10, 0.5, -0.5, (), b"", frozenset())


def answer_decoys(e, rnd):
    """`ANSWER_DECOYS` values of `e`'s kind that its own equality tells from it, as plausible as it is: numbers
    spaced by a power of ten (the same last digits, so no candidate is rounder than the real one)."""
    t = type(e)
    out = []
    if e is None or t is bool:  # values of other kinds its own equality tells from it (never 1 for True, 0 for False)
        first = [] if e is None else [not e]
        pool = [d for d in _ANSWER_OTHERS if type(d) is not t and d != e and (e is None or bool(d) is not e)]
        return first + rnd.sample(pool, min(len(pool), ANSWER_DECOYS - len(first)))
    if t in (int, float, complex):
        base = e.real if t is complex else e
        if base != base or base in (float("inf"), float("-inf")):
            return [base + 1.0, base - 1.0]
        whole = t is int or abs(base) >= 1
        low = -rnd.randrange(ANSWER_DECOYS + 1)
        power = rnd.randrange(len(str(abs(int(base))))) if whole else -rnd.randrange(1, 4)
        if t is int:  # a whole power of ten: no `decimal` (1 ms of the stop's CPU) for the most common literal
            return [e + i * 10 ** power for i in range(low, low + ANSWER_DECOYS + 1) if i]
        from decimal import Decimal as _AnswerDecimal  # the kit's side only: the harness never draws decoys

        step, d = _AnswerDecimal(10) ** power, _AnswerDecimal(repr(base))
        vs = (float(d + i * step) for i in range(low, low + ANSWER_DECOYS + 1) if i)
        return [v for v in (complex(v, e.imag) if t is complex else v for v in vs) if v != e]
    if not e and t in (str, bytes, tuple, list, set, frozenset, dict):  # one element more: a letter, a small number
        return [chr(97 + i) if t is str else bytes([97 + i]) if t is bytes else {i: i} if t is dict else t([i])
                for i in range(ANSWER_DECOYS)]
    if t in (str, bytes):
        alphabet = sorted(set(e))
        # one or two letters: all of its length, replacements from a window of 32 (a short pivot's removals were one or
        # two values, the literal among them: the shortest candidate was it 13% of the time, against 6.25%)
        short, width = len(e) <= 2, 32 if len(e) <= 2 else 9
        if len(alphabet) < 4:  # too few to draw 15 from ('a', b'\x00\x02'): their neighbours too, a window drawn around
            shift, top = rnd.randrange(width), 0x10FFFF if t is str else 255  # them (centred, the literal's was the middle one)
            near = {min(max(c - shift, 0), top - width + 1) + d for c in (map(ord, alphabet) if t is str else alphabet) for d in range(width)}
            if t is str and any(0xD800 <= c < 0xE000 for c in near):  # by the surrogates: a width on either side of them
                near |= {c + d for c in map(ord, alphabet) for d in range(1 - width, width) if 0 <= c + d <= top}
            alphabet += sorted((chr(c) if t is str else c) for c in near
                               if (chr(c) if t is str else c) not in alphabet and not 0xD800 <= c < 0xE000)
        pieces = [p if t is str else bytes([p]) for p in alphabet]
        rnd.shuffle(pieces)
        # The candidates, the literal too, each one edit of a hidden pivot (one of the literal): single edits of the
        # literal made it the centre, within one edit of all (an `__eq__` picking it found it 200 times in 200).
        pivot = _answer_edit(e, pieces, rnd, e, short)
        for i in range(ANSWER_DECOYS * 12):
            if len(out) >= ANSWER_DECOYS:
                break
            v = _answer_edit(pivot, pieces, rnd, e, short)
            v = _answer_edit(v, pieces, rnd, e, short) if i >= ANSWER_DECOYS * 6 else v  # a short pivot's edits repeat: two
            if v != e and v not in out:
                out.append(v)
        more = (v for v in _answer_itertools.chain((pivot[:cut] + p + pivot[cut:] for cut in range(len(pivot) + 1) for p in pieces),
                                           (pivot + p + q for p in pieces for q in pieces)) if v != e and v not in out)
        return out + list(_answer_itertools.islice(  # one of each, lazily (`dict.fromkeys` made them all: 47 s for 15 KB)
            (v for kept in [set()] for v in more if not (v in kept or kept.add(v))), ANSWER_DECOYS - len(out)))
    if t in (tuple, list, dict) and e:
        # Around a hidden pivot (`_answer_around`): one element changed from the literal in each made it the consensus
        # (200 in 200). A bool's pool mostly its `not` (other kinds alone: all one kind was the literal, 81%), 2 others.
        keys = list(e) if t is dict else list(range(len(e)))
        put = (lambda base, new: {**base, **new}) if t is dict else (lambda base, new: t(new.get(i, x) for i, x in enumerate(base)))
        pools = [(k, p) for k, p in ((k, [x, *([not x] * 6 + [d for d in answer_decoys(x, rnd) if type(d) is not bool][:8]
                 if type(x) is bool else answer_decoys(x, rnd))]) for k, x in ((k, e[k]) for k in keys[:ANSWER_DECOYS])) if len(p) > 1]
        if not pools:  # no element has a decoy (None): one more element
            return [{**e, "".join(map(str, e)) + "_": 0} if t is dict else t([*e, 0])]  # a str key longer than any
        # bools alone: every other truth of up to 4, else 15 drawn (the fewest element types picked `(True, False)` 36%)
        n = len(keys) if all(type(x) is bool for x in (e.values() if t is dict else e)) else 0
        masks = range(1, 2 ** n) if n <= 4 else dict.fromkeys(m for m in (rnd.getrandbits(n) for _ in range(64)) if m)
        out = [put(e, {k: not e[k] for i, k in enumerate(keys) if m >> i & 1}) for m in masks]
        out += _answer_around(e, pools, lambda base, k, v: put(base, {k: v}), rnd)
        return [v for i, v in enumerate(out) if v not in out[:i]][:ANSWER_DECOYS]  # in a drawn order at the ticket
    if t in (set, frozenset):  # as a tuple's, its elements' decoys not in the set yet (the set as a list of them)
        pools = [(k, p) for k, p in ((k, [x, *(d for d in answer_decoys(x, rnd) if _answer_hashable(d) and d not in e)])
                                     for k, x in enumerate(list(e)[:ANSWER_DECOYS])) if len(p) > 1]
        drawn = _answer_around(list(e), pools, lambda base, k, v: [*base[:k], v, *base[k + 1:]], rnd) if pools else []
        vs = [v for v in map(t, drawn) if len(v) == len(e) and v != e]  # two changed to one value: a smaller set
        out += [v for i, v in enumerate(vs) if v not in vs[:i]]
        extra = (t([*e, i]) for i in range(2 * ANSWER_DECOYS) if i not in e)  # too few ({None}, {True}): one more element
        return out + list(_answer_itertools.islice(extra, ANSWER_DECOYS - len(out)))
    return []


def _answer_edit(s, pieces, rnd, avoid, replace=False):
    """One edit of `s` (not `s`, nor `avoid`): a piece put in place of one (3 in 5; always where `replace`), inserted (1
    in 5), one removed (1 in 5): the literal is an edit of the pivot drawn as the decoys are."""
    for _ in range(64):
        r = 0.0 if replace else rnd.random()
        if r < 0.6 and s:
            cut = rnd.randrange(len(s))
            v = s[:cut] + rnd.choice(pieces) + s[cut + 1:]
        elif r < 0.8 or not s:
            cut = rnd.randrange(len(s) + 1)
            v = s[:cut] + rnd.choice(pieces) + s[cut:]
        else:
            cut = rnd.randrange(len(s))
            v = s[:cut] + s[cut + 1:]
        if v != s and v != avoid:
            return v
    return s + pieces[0] + pieces[-1]


def _answer_around(e, pools, put, rnd):
    """`ANSWER_DECOYS` values around a hidden pivot (`e` with one element changed, `put(base, key, value)`), `e` among
    them, each the pivot with one element changed from its pool (`pools`: (key, [e's element, its decoys...]))."""
    k, pool = rnd.choice(pools)
    pivot = put(e, k, rnd.choice(pool[1:]))
    out = []
    for _ in range(ANSWER_DECOYS * 8):
        if len(out) >= ANSWER_DECOYS:
            break
        k, pool = rnd.choice(pools)
        v = put(pivot, k, rnd.choice(pool))
        if v != pivot and v != e and v not in out:
            out.append(v)
    return out + [pivot] if len(out) < ANSWER_DECOYS else out


def _answer_hashable(v):
    try:
        return hash(v) is not None
    except TypeError:
        return False


def answer_split(text):
    """(the fork's answers {K: (kind, data)}, the rest of what it wrote: its token or failure); None when an answer
    is malformed. Only the first answer to a K counts."""
    answers = {}
    while text[:1] == b"H":
        try:
            k, kind, size = int(text[1:5]), text[5:6], int(text[6:13])
        except ValueError:
            return None, text
        if kind not in (b"v", b"c", b"L") or size < 0 or len(text) < 13 + size:
            return None, text
        answers.setdefault(k, (kind, text[13:13 + size]))
        text = text[13 + size:]
    return answers, text


def answer_judge(answers, held, places, others=None):
    """"" when every held assert of the test got its answer and the answer is the expected value, else why not:
    judged by the kit, outside the run, with the expected values and the places only it holds. `others`: {K:
    expected} of the file's other held asserts (a test that calls another test function answers them too: a
    value is judged, an object that had no candidates is not)."""
    if answers is None:
        return "an answer the harness did not write"
    extra = {k: a for k, a in answers.items() if k not in {h for h, _ in held}}
    for k, (kind, _data) in extra.items():
        if k not in (others or {}):
            return "an answer the harness did not write"
        if kind == b"v":
            held = [*held, (k, others[k])]
    for k, e in held:
        kind, data = answers.get(k, (None, b""))
        if kind is None:
            return "a held assert gave no answer"
        if kind == b"v":
            try:
                got = answer_decode(_answer_loads(data.decode()))
            except Exception:
                return "an answer the harness did not write"
            rule, e = answer_rule(e)
            try:  # two builtin values: the builtin's own rules (1 == 1.0 == True, as pytest has it)
                right = (got in e if rule == "member" else got == e if rule == "==" else _answer_counted(got, e)
                         if rule == "count" else unit_close(got, e, *rule[1:]))
            except Exception:  # noqa: BLE001 - an unhashable value against a set, a str against a number: not right
                right = False
            if not right:
                return "the value it returned is not the expected one (held by the supervisor)"
        elif kind == b"c":
            bits, place = data.decode("ascii", "replace"), places.get(k, -1)
            if type(place) is tuple and place[:1] == ("count",):  # a count: one row of bits an element of the list
                _, at, n, times = place
                rows = [bits[i:i + n] for i in range(0, len(bits), n)] if n and len(bits) % n == 0 else None
                got = [r.find("1") for r in rows or ()]
                if rows is None or any(r.count("1") != 1 for r in rows) or [got.count(p) for p in at] != times \
                        or len(got) != sum(times):
                    return "the objects it returned are not the expected ones as often (held by the supervisor)"
            elif bits.count("1") != 1 or bits.find("1") not in (place[1] if type(place) is tuple else (place,)):
                return "the object it returned is not equal to the expected value alone (held by the supervisor)"
        else:
            return "the value it returned cannot be equal to the expected one (held by the supervisor)"
    return ""


# --- the fork's side ----------------------------------------------------------------------------------------

def answer_record(k, kind, data):
    return b"H%04d%c%07d" % (k, kind, len(data)) + data


def answer_hold(emit, later):
    """The function a held assert calls in the fork: a builtin value is sent at once (`emit`), any other object
    kept (`later`) until the test returned (`answer_later`)."""
    def hold(value, k, number=0):
        if number == 2:  # a count (`answer_sources`): listed first, as unittest's assertCountEqual lists it
            value = list(value)
            if len(value) > ANSWER_MEMBERS:  # more than any held literal holds: not as often
                emit(answer_record(k, 76, b""))
                return
        enc = answer_encode(value)
        if enc is None and number == 1:  # a tolerance: an object by its own float (Decimal, Fraction)
            try:
                enc = answer_encode(float(value))
            except Exception:  # noqa: BLE001 - no number of its own: compared with the candidates by its `==`
                enc = None
        if enc is None:
            later.append((k, value))
            return
        data = _answer_dumps(enc).encode()
        emit(answer_record(k, 76, b"") if len(data) > ANSWER_VALUE else answer_record(k, 118, data))
    return hold


def answer_later(later, blob):
    """The kept objects compared with their candidates (each by its own `==`, in the order sent): the answers."""
    pairs, counts = answer_pairs(later, blob)
    said = []
    for value, candidate, places, delta, _ in pairs:
        try:  # as the fork's program compares (`bare_fork.PROGRAM`): a tolerance as unittest's (`unit_close`)
            said.append(bool(value == candidate) or (places, delta) != (None, None)
                        and bool(unit_close(value, candidate, places, delta)))
        except Exception:  # noqa: BLE001 - an object that cannot be compared is equal to nothing
            said.append(False)
    return answer_said(later, counts, said)


def answer_pairs(later, blob):
    """([(a kept object, one of its candidates, places, delta, 0)] in the order `answer_later` compares them, how many
    candidates each object has): a fork's program compares them from its own frame (`bare_fork.PROGRAM`), not the
    harness's: equal, or (a held tolerance: places or delta not None) as close as unittest's assertAlmostEqual has it
    (`round(abs(value - candidate), places) == 0`, `abs(value - candidate) <= delta`)."""
    sets = _answer_loads(blob.decode()) if later and blob else {}
    pairs, counts = [], []
    for k, value in later:
        candidates = [answer_decode(enc) for enc in sets.get(str(k), ())]
        each = value if sets.get(f"n{k}") and type(value) is list else [value]  # a count: each element (`answer_draw.answer_ticket`)
        tol = sets.get(f"t{k}")  # a tolerance (`answer_draw.answer_ticket`): its delta, else its places (unittest's 7 by default)
        delta = tol[1] if tol else None
        places = None if not tol or delta is not None else 7 if tol[0] is None else tol[0]
        pairs.extend((v, c, places, delta, 0) for v in each for c in candidates)
        counts.append(len(each) * len(candidates))
    return pairs, counts


def answer_said(later, counts, said):
    """`answer_later`'s answers from the comparisons' results (`said`: one a pair of `answer_pairs`, in order)."""
    out, i = [], 0
    for (k, _), n in zip(later, counts, strict=False):
        out.append(answer_record(k, 99, "".join("1" if b else "0" for b in said[i:i + n]).encode()))
        i += n
    return b"".join(out)
