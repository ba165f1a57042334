#!/usr/bin/env python3
"""`make experiment`: the bundled experiment (shop.yaml) against the scripted Messages API.

A real pipeline: `donegate experiment run` with the real Claude Code binary (node_modules/.bin/claude)
for the agent, the writer and the reviewers, pointed at the project's scripted server
(tests/support/fakeapi.py) whose answers come from tests/support/shop_agents.py. Everything lives in
a fresh folder under the kit's state/experiments/ (its own DONEGATE_HOME, ledger and HOME): the kit's own
ledger is untouched. It passes `--scripted`: the run lines say `"source": "scripted"`, and the progress
line, the summary and the table label the dollars as computed from token counts, no money spent.

    python examples/experiment/scripted.py [SPEC] [-- extra arguments of `experiment run`]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(KIT))

from tests.support import shop_agents  # noqa: E402
from tests.support.fakeapi import FakeAPI  # noqa: E402
from tests.support.session import _clean_env, find_claude  # noqa: E402


def environment(api: FakeAPI, base: Path) -> dict[str, str]:
    home = Path(tempfile.mkdtemp(prefix="donegate-experiment-home-"))  # Claude Code's HOME: outside what the sandbox hides
    env = _clean_env({"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}, home=home)
    env["DONEGATE_HOME"] = str(base / "donegate-home")
    env.pop("DONEGATE_NESTED", None)
    return env


def main(argv: list[str]) -> int:
    spec = Path(argv[0]) if argv and not argv[0].startswith("-") else KIT / "examples" / "experiment" / "shop.yaml"
    extra = argv[1:] if argv and not argv[0].startswith("-") else argv
    extra = [a for a in extra if a != "--"]
    try:
        find_claude()
    except BaseException as exc:  # pytest's skip outside pytest: the binary is missing or broken
        print(f"donegate experiment: {exc}\nRun `make setup` first.", file=sys.stderr)
        return 2
    import yaml

    name = yaml.safe_load(spec.read_text(encoding="utf-8")).get("experiment", spec.stem)
    shop_agents.load_requests(spec)
    # Under the kit's own (git-ignored) state folder: what the runs' sandbox hides, so the ledger of
    # earlier runs is out of the agents' sight, as it must be for a real experiment.
    (KIT / "state" / "experiments").mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=KIT / "state" / "experiments"))
    ledger = base / "ledger.jsonl"
    print(f"experiment {name} with scripted models (no key, no network); everything in {base}", flush=True)
    with FakeAPI(respond=shop_agents.respond) as api:
        cmd = [sys.executable, "-m", "donegate", "experiment", "run", str(spec), "--ledger", str(ledger), "--scripted", *extra]
        code = subprocess.run(cmd, cwd=KIT, env=environment(api, base)).returncode
        if api.errors:
            print("scripted server errors:\n  " + "\n  ".join(api.errors), file=sys.stderr)
            code = code or 1
    print(f"\nledger: {ledger}\nagain: donegate report --experiment {name} {ledger} [--markdown|--json|--csv]")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
