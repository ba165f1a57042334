"""The candidates of a test's held asserts (`answer_ticket`), drawn by the kit outside the run: each held assert's
expected value among decoys of its kind (`answers.answer_decoys`), in an order drawn per test, and the real one's
place, which only the kit keeps (`answers.answer_judge` reads it). Not sent with the second harness."""

import json

from donegate.hidden.answers import ANSWER_DECOYS, answer_decoys, answer_encode, answer_rule
from donegate.hidden.probe_unit import unit_close


def _elements(container):
    """A literal container's elements (a dict's keys), one of each that equal each other by their own rules."""
    out = []
    for x in container:
        if not any(x == y for y in out):
            out.append(x)
    return out


def _width(places, delta):
    """How far from the expected value a tolerance (`unit_close`'s) takes a value as close, at most."""
    return delta if delta is not None else 10.0 ** -(7 if places is None else places)


def _near(d, e, places, delta):
    """Whether a decoy `d` is within twice the tolerance of `e`: a value within it of `e` (honest) may be within it of
    `d` too (places=0: 0.6 for 0.3 is close to a decoy 0.9), so such a decoy is not drawn."""
    return unit_close(d, e, places, delta) or abs(d - e) <= 2 * _width(places, delta)


def _wide(e, places, delta, rnd):
    """Decoys of a tolerance's number `e` spaced by a power of ten wider than twice the tolerance (a delta of 0.5, or
    places=0, left none of `answer_decoys`' within it: an object equal to anything was the expected value alone)."""
    width = _width(places, delta)
    if type(e) not in (int, float) or e != e or not 0 < width < 1e15:
        return []
    step = 1.0
    while step <= 2 * width:
        step *= 10
    while step / 10 > 2 * width:
        step /= 10
    low = -rnd.randrange(ANSWER_DECOYS + 1)
    return [e + i * step for i in range(low, low + ANSWER_DECOYS + 1) if i]


def answer_ticket(held, rnd):
    """(the candidates of a test's held asserts, as sent to its fork after the test returned: {K: encoded
    candidates in a drawn order}; the real one's place in each, which only the kit keeps: a number for `==` and a
    tolerance, ("member", (the elements' places)) for a membership, ("count", the elements' places, candidates,
    [each element's times]) for a count, told apart by their tag, not by their length)."""
    sets, places = {}, {}
    for k, e in held:
        rule, e = answer_rule(e)
        each = rule in ("member", "count")
        right = _elements(e) if each else [e]  # a membership: any one of the elements; a count: each one's
        decoys = [d for x in right for d in answer_decoys(x, rnd)]
        if rule != "==":  # none in the container, or within the tolerance: honest code would equal it
            decoys = [d for d in decoys if not (any(d == x for x in right) if each else _near(d, e, *rule[1:]))]
        if type(rule) is tuple and len(decoys) < ANSWER_DECOYS:  # a tolerance wider than the draw: spaced beyond it
            decoys += [d for d in _wide(e, *rule[1:], rnd) if not _near(d, e, *rule[1:])][:ANSWER_DECOYS - len(decoys)]
        cands = [*right, *decoys]
        order = list(range(len(cands)))
        rnd.shuffle(order)
        sets[k] = [answer_encode(cands[i]) for i in order]
        if type(rule) is tuple:  # a tolerance: each candidate also by the object's `-`, as assertAlmostEqual
            sets[f"t{k}"] = [rule[1], rule[2]]  # (places, delta): an object of no float is close by it
        places[k] = order.index(0) if not each else ("member", tuple(order.index(i) for i in range(len(right))))
        if rule == "count":  # each element of the kept list compared with every candidate (`answer_pairs`)
            sets[f"n{k}"] = 1
            places[k] = ("count", places[k][1], len(cands), [sum(1 for x in e if x == r) for r in right])
    return json.dumps(sets).encode(), places
