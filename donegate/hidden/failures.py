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
        return crash.message
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, line, reason)
        return str(longrepr[2])
    text = str(longrepr or "").strip()
    lines = text.splitlines()
    # Collection errors end with the exception line(s) starting with "E   ".
    errs = [line[1:].strip() for line in lines if line.startswith("E ")]
    return "\n".join(errs) if errs else (lines[-1] if lines else "")


def subtest_label(report) -> "str | None":
    """`[msg] (k=v, ...)` for a subtest's report (pytest's `SubtestReport`, its `context`), None for a test's own."""
    context = getattr(report, "context", None)
    if context is None or not hasattr(context, "kwargs") or report.when != "call":
        return None
    msg, kwargs = getattr(context, "msg", None), getattr(context, "kwargs", None) or {}
    parts = ([f"[{msg}]"] if msg is not None else []) + (
        ["(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")"] if kwargs else [])
    return " ".join(parts) or "(<subtest>)"
