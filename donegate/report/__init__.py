"""`donegate report` and `donegate label`: reading the ledger back for a person.

The summary answers, per configuration label (or per repository or day): sessions and stops seen,
blocks and whether a person agreed with them (labels), loops that gave up, sessions that ended
passing, the requirement pass rate at each session's last stop, what the gates cost in money and
time, and how many sessions are left for a person. `--session ID` prints one session stop by stop;
`--verify` walks the hash chain. `docs/ledger.md` defines every field and every count.

Reading is built for large ledgers (a million lines in a few seconds): a line the kit wrote is read
with a few anchored regular expressions instead of `json.loads`, which is five times slower; any line
they do not recognise goes through `json.loads` and is either used or counted as skipped, never a
crash. Memory grows with the number of sessions, never with the number of lines. Large files are
read by two processes, each a range of whole lines; their partial counts merge in file order.

`donegate report` keeps what it has read of each ledger (`resume`, under `state/report/`): the next
report reads only the lines added since, and prints what a reading of the whole file would.

The package: `rows` (verdict codes, what a line means, the slow path), `read` (the fast path, one pass
for every count), `parallel` (ranges of a large file read by several processes), `resume` (what was
read, kept), `summary`, `text` (rendering), `timeline` (`--session`), `labels`, `html` (the page). The names below are the ones the commands, the experiment table and the tests use.
"""

from __future__ import annotations

from donegate.report.read import APPEAL_LABELS, BY, FAILING, LABELS, VERDICTS, agent_of, fast_line, canonical_time, review_cost, stop_row  # noqa: F401
from donegate.report.parallel import default_jobs, ranges  # noqa: F401
from donegate.report.summary import parse_since, summarize  # noqa: F401
from donegate.report.text import COLUMNS, inside_lines, notes, render, render_table, render_verify  # noqa: F401
from donegate.report.timeline import _dict, finding_text, render_timeline, session_timeline, timeline_stop, verdict_code  # noqa: F401
from donegate.report.labels import decided_sessions, decisions, find_stop, label_stop  # noqa: F401
