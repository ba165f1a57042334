"""A copy of the project's own frame read that does with the caller's frame what the project did at the seal is the
project's (issue 46 item 3); anything more is the change's (issue 45 item 6). The scan on a real git repository holding
typeguard 4.3.0's `_functions.py` (tests/data/libs), whose `check_type` reads `sys._getframe(1)` and hands the caller's
namespaces to `TypeCheckMemo`: the seal's baseline keeps that hand-over, a stop compares the new function's with it.

Beside the honest copy (`is_type`, as typeguard's own style writes it), each attack keeps the copied lines and adds
one way to get a value out of the calling test's namespace: read it, return what it was handed to, choose the string
resolved in it, hand it to the change's own callback, keep the exception that holds it, walk further, read it again by
name (`eval`, `locals()`), keep the frame alive (a generator), or copy the lines into another module.
"""

from __future__ import annotations

import tarfile
import textwrap

import pytest

from donegate.gate import scan_rules
from donegate.tree import git as dgit
from tests.support import sdist
from tests.support.repos import make_repo
from tests.support.typeguard_is_type import TYPEGUARD_NEW, TYPEGUARD_OLD

FUNCTIONS = "src/typeguard/_functions.py"
ANCHOR = TYPEGUARD_OLD
IS_TYPE = TYPEGUARD_NEW[:-len(TYPEGUARD_OLD)]  # the honest change of test_real_libraries, as typeguard's style writes it
# Each attack: (old text of IS_TYPE, new text); the copied `frame = sys._getframe(1)` stays in every one.
ATTACKS = {
    "reads-the-callers-local": ("    return True\n\n\n", "    return frame.f_locals.get('expected', True)\n\n\n"),
    "returns-what-the-namespace-was-handed-to": ("    return True\n\n\n", "    return memo.locals['expected']\n\n\n"),
    "chooses-the-name-resolved-in-the-callers-namespace": (
        "        check_type_internal(value, expected_type, memo)",
        "        expected_type = 'Literal[expected]'\n        check_type_internal(value, expected_type, memo)"),
    "a-default-resolved-in-the-callers-namespace": ("    expected_type: Any,\n", "    expected_type: Any = 'expected',\n"),
    "hands-it-to-the-changes-callback": (
        "        collection_check_strategy=collection_check_strategy,\n    )",
        "        collection_check_strategy=collection_check_strategy,\n        typecheck_fail_callback=_leak,\n    )\n"
        "    config.typecheck_fail_callback(None, None)"),
    "keeps-the-exception-that-holds-it": ("    except TypeCheckError:\n        return False",
                                          "    except TypeCheckError as exc:\n        SEEN.append(exc)\n        return False"),
    "keeps-the-exception-by-exc-info": ("    except TypeCheckError:\n        return False",
                                        "    except TypeCheckError:\n        SEEN.append(sys.exc_info())\n        return False"),
    "walks-one-further": ("    frame = sys._getframe(1)\n", "    frame = sys._getframe(1)\n    frame = frame.f_back\n"),
    "two-up": ("    frame = sys._getframe(1)\n", "    frame = sys._getframe(2)\n"),
    "reads-it-again-by-eval": ("    return True\n\n\n", "    return eval('memo').locals['expected']\n\n\n"),
    "reads-it-again-by-locals": ("    return True\n\n\n", "    return locals()['frame'].f_locals['expected']\n\n\n"),
    "keeps-the-frame-alive-in-a-generator": ("    return True\n\n\n", "    yield True\n\n\n"),
    "hands-the-traceback-to-a-with-exit": ("    try:\n        check_type_internal(value, expected_type, memo)",
                                           "    try:\n        with _Keep():\n"
                                           "            check_type_internal(value, expected_type, memo)"),
    # code run after the read with the namespaces in this function's locals: another copy called from here would
    # resolve a name it is handed in them (a call, or an operator's method)
    "a-call-after-the-read": ("    return True\n\n\n", "    _leak(None, None)\n    return True\n\n\n"),
    "an-operator-after-the-read": ("    return True\n\n\n", "    return value == 'Literal[memo]'\n\n\n"),
    "a-read-in-a-loop": ("    frame = sys._getframe(1)\n", "    for _ in range(2):\n        frame = sys._getframe(1)\n"),
    "a-profiler-that-sees-the-return": ("    frame = sys._getframe(1)\n", "    sys.setprofile(_leak)\n    frame = sys._getframe(1)\n"),
    "stores-it-in-a-global": ("    frame = sys._getframe(1)\n", "    global frame\n    frame = sys._getframe(1)\n"),
}


def _sealed(tmp_path):
    """A repository holding typeguard's `_functions.py` as released, and the seal's baseline of it."""
    (archive,) = (sdist.DATA / "libs").glob("typeguard-*.tar.gz")
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(FUNCTIONS))
        text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    assert text.count(ANCHOR) == 1 and "    frame = sys._getframe(1)\n" in text
    repo = make_repo(tmp_path / "typeguard", {FUNCTIONS: text, "src/typeguard/_leaky.py": ""})
    base = dgit.head(repo)
    sealed = scan_rules.baseline(repo, [FUNCTIONS, "src/typeguard/_leaky.py"], tmp_path / "kit")
    assert [(e[0], e[1], e[3]) for e in sealed[FUNCTIONS]] == [("frame-walk", "frame = sys._getframe(1)", "check_type")]
    return repo, base, sealed, text


def _scan(tmp_path, repo, base, sealed):
    return [(f["file"], f["rule"], f.get("where")) for f in scan_rules.scan(repo, base, tmp_path / "kit", sealed=sealed)]


# The honest copy written otherwise: statements of its own around the hand-over that touch neither the frame nor what
# was made of it (a loop, a `with`, a helper, a handler that only returns), and a method of a class.
OTHERWISE = {
    "its-own-statements": ("    frame = sys._getframe(1)\n",
                           "    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n"
                           "    for _ in range(1):\n        pass\n    frame = sys._getframe(1)\n"),
    "a-method": ("", ""),
}


def test_a_copy_of_the_projects_hand_over_of_its_callers_namespaces_is_the_projects(tmp_path):
    repo, base, sealed, text = _sealed(tmp_path)
    (repo / FUNCTIONS).write_text(text.replace(ANCHOR, IS_TYPE + ANCHOR))
    assert _scan(tmp_path, repo, base, sealed) == []


@pytest.mark.parametrize("name", list(OTHERWISE))
def test_the_honest_copy_written_otherwise_is_the_projects_too(tmp_path, name):
    repo, base, sealed, text = _sealed(tmp_path)
    old, new = OTHERWISE[name]
    copy = IS_TYPE.replace(old, new) if old else "class Checker:\n    @staticmethod\n" + textwrap.indent(IS_TYPE, "    ")
    (repo / FUNCTIONS).write_text("import warnings\n" + text.replace(ANCHOR, copy + ANCHOR))
    assert _scan(tmp_path, repo, base, sealed) == []


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_copy_that_does_more_with_the_callers_frame_is_the_changes(tmp_path, name):
    repo, base, sealed, text = _sealed(tmp_path)
    old, new = ATTACKS[name]
    assert IS_TYPE.count(old) == 1, old
    attack = IS_TYPE.replace(old, new)
    (repo / FUNCTIONS).write_text(text.replace(ANCHOR, attack + ANCHOR).replace(
        "\n\ndef check_type(", "\n\nSEEN: list = []\n\n\ndef _leak(exc, memo):\n    SEEN.append(memo)\n\n\ndef check_type(", 1))
    assert (FUNCTIONS, "frame-walk", "is_type") in _scan(tmp_path, repo, base, sealed)


def test_a_name_it_hands_over_with_bound_otherwise_than_at_the_seal_is_the_changes(tmp_path):
    """The copy's lines as the seal's, but `TypeCheckMemo` (what the namespaces are handed to) now the change's own."""
    repo, base, sealed, text = _sealed(tmp_path)
    assert text.count("from ._memo import TypeCheckMemo\n") == 1
    (repo / FUNCTIONS).write_text(text.replace(ANCHOR, IS_TYPE + ANCHOR).replace(
        "from ._memo import TypeCheckMemo\n", "from ._leaky import Memo as TypeCheckMemo\n"))
    assert (FUNCTIONS, "frame-walk", "is_type") in _scan(tmp_path, repo, base, sealed)


def test_the_same_lines_in_another_module_are_the_changes(tmp_path):
    """The hand-over is the project's in the file that held it: in a module of the change's own, the names it calls
    may be anything."""
    repo, base, sealed, _ = _sealed(tmp_path)
    (repo / "src/typeguard/_leaky.py").write_text(
        "import sys\nfrom typing import Any\n\nfrom ._memo import TypeCheckMemo\n\n\n" + IS_TYPE)
    assert ("src/typeguard/_leaky.py", "frame-walk", "is_type") in _scan(tmp_path, repo, base, sealed)


def test_the_projects_own_function_changed_to_read_its_callers_local_is_the_changes(tmp_path):
    """The look-alike on the other side: the hand-over is the seal's, not today's text of the function that held it."""
    repo, base, sealed, text = _sealed(tmp_path)
    edited = text.replace("    memo = TypeCheckMemo(frame.f_globals, frame.f_locals, config=config)\n",
                          "    memo = TypeCheckMemo(frame.f_globals, frame.f_locals, config=config)\n"
                          "    value = frame.f_locals.get('expected', value)\n", 1)
    copy = IS_TYPE.replace("    return True\n\n\n", "    value = frame.f_locals.get('expected', value)\n    return True\n\n\n")
    (repo / FUNCTIONS).write_text(edited.replace(ANCHOR, copy + ANCHOR))
    assert (FUNCTIONS, "frame-walk", "is_type") in _scan(tmp_path, repo, base, sealed)
