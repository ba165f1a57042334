"""The options and ini keys of the pytest plugins the runs leave off (`runner.PYTEST_ARGS`: cacheprovider, stepwise,
junitxml, pastebin), taken and ignored; sent with the plugin, the standard library only.

A project's configuration that names one (async-lru 2.0.4: `addopts = ... --cache-clear`, `junit_family = xunit2`)
had its own suite refused by pytest ("unrecognized arguments: --cache-clear"). In a run of a fresh copy each is what
pytest's own plugin would make of it there: no cache to clear or read (`--lf`, `--ff`: every test runs), no report
file anyone reads. `--sw` (stop at the first failure) runs every test here: more than the project's run, never less.
Where the plugin is loaded, its own options stay (a name it added is refused here, and the plugin is left alone).
"""

_PLUGINS = (
    ((("--lf", "--last-failed"), "store_true"), (("--ff", "--failed-first"), "store_true"),
     (("--nf", "--new-first"), "store_true"), (("--cache-clear",), "store_true"),
     (("--lfnf", "--last-failed-no-failures"), "store")), ("cache_dir",),
    ((("--sw", "--stepwise"), "store_true"), (("--sw-skip", "--stepwise-skip"), "store_true"),
     (("--sw-reset", "--stepwise-reset"), "store_true")), (),
    ((("--junitxml", "--junit-xml"), "store"), (("--junitprefix", "--junit-prefix"), "store")),
    ("junit_suite_name", "junit_logging", "junit_log_passing_tests", "junit_duration_report", "junit_family"),
    ((("--pastebin",), "store"),), (),
)


def add_inert(parser) -> None:
    """Each left-off plugin's options and ini keys, inert (`pytest_addoption`)."""
    for options, inis in zip(_PLUGINS[::2], _PLUGINS[1::2], strict=True):
        try:
            for names, action in options:
                parser.addoption(*names, action=action, dest="dg_inert_" + names[-1].strip("-").replace("-", "_"),
                                 help="taken and ignored: the plugin is off in the kit's runs")
        except ValueError:  # the plugin is loaded: its options are its own
            continue
        for name in inis:
            parser.addini(name, "taken and ignored: the plugin is off in the kit's runs")
