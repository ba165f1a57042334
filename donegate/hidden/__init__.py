"""The hidden run: the sealed tests against the agent's working tree, in a process the code under test
cannot subvert. Everything that decides a verdict from inside that process lives here:

    runner.py   starts the run (a throwaway copy, a confined interpreter, the bootstrap) and reads its result
    plugin.py   the kit's pytest plugin, sent into the run on stdin: results and tripwires
    channel.py  the parent's side of the result stream, checked line by line as it arrives
    confine.py  the walls: bubblewrap (or sandbox-exec), the allow-listed environment, what is hidden
    copy.py     the throwaway copy of the working tree, and the environments shared with it read-only
    second.py   the second opinion on every pass: the same tests again under a harness unlike pytest
    bare.py     that harness, inside its confined process (sent on stdin, like the plugin)
    seeded.py   the `dg_random` fixture: test inputs drawn per stop from a secret (sent with the plugin)
    probe.py    the equality probe, in both runs: an object equal to everything is tampering
    python.py   the project's own interpreter and the sys.path it gets (`launch`: the argv prefix, the
                folders to bind; every harness that runs the project starts it from there)
    missing.py  a module not found: the environment's problem (the seal refuses it) or the feature's

The gate's acceptance stage (`donegate.gate.acceptance`), `seal`, `write` and the experiment's grading
all start it through `runner.run`; the acceptance stage alone asks `second.run` for its second opinion.
"""
