"""What a test's report says, sent with the plugin (`runner`): the standard library only, in the run's process.

`failure_text`: the line a failure is shown by. `subtest_label`: a subtest's report (unittest's `self.subTest`,
pytest 9's `subtests` fixture) is a `call` report of its test, one per subtest, before the test's own; it travels
labelled (`[msg] (k=v, ...)`, as pytest prints it), so the result channel takes it as a subtest's, never as a second
result for the test (`channel.Stream`: a subtest only ever adds a failure to its test).
"""


def failure_text(report) -> str:
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _error_first(crash.message)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, line, reason)
        return str(longrepr[2])
    text = str(longrepr or "").strip()
    lines = text.splitlines()
    if "Expected:" in lines and "Got:" in lines:  # a doctest's (ReprFailDoctest): its last line is only where it is
        start = lines.index("Expected:")
        example = [line.split(">>>", 1)[1].strip() for line in lines[:start] if ">>>" in line][-1:]
        return "\n".join([*(f">>> {e}" for e in example), *(line for line in lines[start:-1] if line.strip())])
    # Collection errors end with the exception line(s) starting with "E   ".
    errs = [line[1:].strip() for line in lines if line.startswith("E ")]
    return "\n".join(errs) if errs else (lines[-1] if lines else "")


def _error_first(message: str) -> str:
    """A SyntaxError's text (`File "...", line N`, the line, a caret, then `SyntaxError: why`) with its error line first:
    a block shows a message's first line, which was only `File "<string>", line 3` (attrs' `make_class` given a
    keyword as a field's name, the failing example hypothesis found)."""
    lines = message.splitlines()
    if len(lines) > 1 and lines[0].lstrip().startswith('File "'):
        for i, line in enumerate(lines[1:], 1):
            if line and not line[0].isspace():
                return "\n".join([line, *lines[:i], *lines[i + 1:]])
    return message


def subtest_label(report) -> "str | None":
    """`[msg] (k=v, ...)` for a subtest's report (pytest's `SubtestReport`, its `context`), None for a test's own."""
    context = getattr(report, "context", None)
    if context is None or not hasattr(context, "kwargs") or report.when != "call":
        return None
    msg, kwargs = getattr(context, "msg", None), getattr(context, "kwargs", None) or {}
    parts = ([f"[{msg}]"] if msg is not None else []) + (
        ["(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")"] if kwargs else [])
    return " ".join(parts) or "(<subtest>)"
