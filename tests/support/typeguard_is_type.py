"""typeguard 4.3.0's honest new `is_type` (tests/data/libs), in the library's own style: inserted above
`check_argument_types` in `src/typeguard/_functions.py`, it repeats `check_type`'s `frame = sys._getframe(1)` and
hands the caller's namespaces to `TypeCheckMemo` as `check_type` does (`tests/gate/test_real_libraries.py` through
the hook, `tests/gate/test_scan_handover.py` beside the attacks that copy it)."""

TYPEGUARD_OLD = '''def check_argument_types(
'''
TYPEGUARD_NEW = '''def is_type(
    value: object,
    expected_type: Any,
    *,
    forward_ref_policy: ForwardRefPolicy = TypeCheckConfiguration().forward_ref_policy,
    collection_check_strategy: CollectionCheckStrategy = (
        TypeCheckConfiguration().collection_check_strategy
    ),
) -> bool:
    """
    Return ``True`` if ``value`` matches ``expected_type``, ``False`` if not.

    Forward references are resolved in the caller's namespace, as in :func:`check_type`.

    :param value: value to be checked against ``expected_type``
    :param expected_type: a class or generic type instance, or a tuple of such things
    :return: whether ``value`` matches ``expected_type``

    """
    if type(expected_type) is tuple:
        expected_type = Union[expected_type]

    config = TypeCheckConfiguration(
        forward_ref_policy=forward_ref_policy,
        collection_check_strategy=collection_check_strategy,
    )

    if _suppression.type_checks_suppressed or expected_type is Any:
        return True

    frame = sys._getframe(1)
    memo = TypeCheckMemo(frame.f_globals, frame.f_locals, config=config)
    try:
        check_type_internal(value, expected_type, memo)
    except TypeCheckError:
        return False

    return True


''' + TYPEGUARD_OLD
