"""The sealed doctests of the product's own modules (`donegate.seal.doctested`), made pytest's doctest items in the own
suite's runs: sent with the plugin, in the run's process (pytest and the standard library only).

Each module is imported by its name from the project as the run sees it (pytest's `prepend` import mode: the folder
above its packages first on sys.path), and each of its sealed docstrings, as it was at the seal, becomes a
`DoctestItem` with that module's namespace, the configuration's option flags and pytest's own checker and runner:
the ids (`calc.py::calc.twice`), the report of a failure (`Expected:` / `Got:`) and the fixtures (`getfixture`,
`doctest_namespace`) are pytest's. A module that no longer imports is a collection error of its file, as in pytest.
"""


def sealed_doctest_plugins(sealed: "dict | None", skip: "list | None", own: bool = False) -> list:
    """The plugin adding the items, for `pytest.main(plugins=...)`; none outside the own suite's runs (`own`).
    `sealed`: {file: {"module", "base", "tests": {name: {"text", "doc", ...}}}} (own-suite.json's `doctests`); `skip`:
    the paths the run leaves out (the files the stop's change cannot reach, and the folders holding only those).

    Every doctest item of the run (these, and pytest's own of the test folders) is given `_obj`, its `DocTest`: the
    tripwires read each test's function as `_obj` (`plugin._functions`), which a doctest item lacks, and a run of more
    than 200 tests holding one read as every test replaced (inflect 7.4.0: 223 tests, its seal refused)."""
    if not sealed and not own:
        return []
    import importlib
    import os
    import sys

    import pytest
    from _pytest import doctest as pd
    from _pytest.runner import collect_one_node

    left_out = frozenset(skip or ())

    class SealedModule(pd.DoctestModule):
        entry: dict = {}

        def _getobj(self):
            module, base = self.entry["module"], self.entry["base"]
            here = os.getcwd()  # the project's folder, as the run sees it
            folder = os.path.join(here, base) if base else here
            if folder not in sys.path:
                sys.path.insert(0, folder)
            try:
                got = importlib.import_module(module)
            except Exception as exc:
                raise self.CollectError(f"{type(exc).__name__}: {exc}") from exc
            where = os.path.realpath(getattr(got, "__file__", None) or "")
            if where != os.path.realpath(os.path.join(here, self.rel)):
                raise self.CollectError(f"{module} is imported from {where or 'nowhere'}, not from the project's {self.rel}")
            return got

        def collect(self):
            module = self.obj
            self.session._fixturemanager.parsefactories(self)
            runner = pd._get_runner(verbose=False, optionflags=pd.get_optionflags(self.config), checker=pd._get_checker(),
                                    continue_on_failure=pd._get_continue_on_failure(self.config))
            import doctest  # here: an own run with no sealed doctests imports none (a developer's pytest holds none)

            parser = doctest.DocTestParser()
            for name, sealed_test in sorted(self.entry["tests"].items()):
                test = parser.get_doctest(sealed_test["text"], module.__dict__.copy(), name, module.__file__,
                                          sealed_test["doc"])
                if test.examples:
                    yield pd.DoctestItem.from_parent(self, name=name, runner=runner, dtest=test)

    class SealedDoctests:
        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_modifyitems(self, session, config, items):
            root = str(config.rootpath)
            for rel, entry in sorted((sealed or {}).items()):
                path = os.path.join(root, rel)
                if any(p in left_out for p in (path, *_parents(path, root))):
                    continue  # the stop's change cannot reach it
                node = SealedModule.from_parent(session, path=config.rootpath / rel)
                node.entry, node.rel = entry, rel
                report = collect_one_node(node)
                session.ihook.pytest_collectreport(report=report)
                if report.passed:
                    items.extend(report.result)
            for item in items:
                if isinstance(item, pd.DoctestItem) and not hasattr(item, "_obj"):
                    item._obj = item.dtest

    return [SealedDoctests()]


def _parents(path: str, root: str) -> list:
    import os

    out: list = []
    while True:
        path = os.path.dirname(path)
        if len(path) <= len(root):
            return out
        out.append(path)
