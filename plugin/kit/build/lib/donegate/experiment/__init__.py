"""The experiment (`donegate experiment`, in `commands/experiment.py`): configurations x tasks x repetitions, each run a real Claude Code session
scored by grading tests it never saw; `donegate report --experiment NAME` prints the table.

spec.py (the YAML spec, validated), source.py (the tasks' repositories), harness.py (the runs),
table.py (the report).
"""
