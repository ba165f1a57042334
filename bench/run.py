"""`make bench`: every figure is a ratio (or a rate) measured side by side in this one run."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from hook_bench import bench_copy, bench_hook, bench_large, bench_large_edited, bench_package, bench_tree_key  # noqa: E402
from report_bench import bench_report  # noqa: E402
from report_html_bench import bench_html  # noqa: E402
from review_bench import bench_review  # noqa: E402
from suite_bench import bench_suites  # noqa: E402
from own_bench import bench_own  # noqa: E402
from where_bench import bench_where  # noqa: E402
from guard_bench import bench_guard  # noqa: E402


def main() -> int:
    print("== the gate ==")
    print("\n".join(bench_hook() + bench_package() + bench_large() + bench_large_edited() + bench_tree_key() + bench_copy()
                      + bench_where() + bench_guard()))
    print("\n== large hidden suites ==")
    print("\n".join(bench_suites()))
    print("\n== the project's own suite ==")
    print("\n".join(bench_own()))
    print("\n== the report ==")
    if not shutil.which("jq"):
        print("jq is not installed (apt-get install jq); the report is timed without the jq comparison")
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        print("\n".join(bench_report(Path(tmp))))
    print("\n== the HTML report ==")
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        print("\n".join(bench_html(Path(tmp))))
    print("\n== the reviewers ==")
    print("\n".join(bench_review()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
