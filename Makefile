# donegate: `make demo` runs the gate on the bundled example, `make test` runs the test suite.
# Both set up what they need first: a Python venv (.venv) and the pinned agent CLIs (node_modules: Claude Code,
# Codex, Gemini CLI, Copilot CLI, Qwen Code).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CLAUDE := node_modules/.bin/claude
CODEX  := node_modules/.bin/codex

.PHONY: setup demo lint test test-fast e2e e2e-compat bench experiment report report-html review write install uninstall doctor clean

# The venv and the CLIs side by side: `make test` counts its setup. A fresh clone here, one after the other: 17 s then
# 29 s (~37 CPU-s, much of the rest waiting on the indexes); the whole setup 46-91 s in turn, 45-54 s side by side
# (a machine loaded 6-8 by other runs: noisy).
setup:
	@$(MAKE) --no-print-directory -j2 $(VENV)/.installed node_modules/.installed

# No `pip install --upgrade pip`: the venv's own pip (ensurepip's, 23.2 on Python 3.11) installs all of it, compat
# editable mode included, and the upgrade was a download and an install on the venv's lane (5-14 s, loaded machine).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# compat mode: a plain path in a .pth file; the default editable finder costs ~20 ms at every
	# interpreter start, and each stop starts two (the hook and the hidden run).
	$(PY) -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

node_modules/.installed: package.json package-lock.json
	# Not `npm ci`: it refuses this lock (Qwen Code 0.15.10 lists optional packages, @teddyzhu/clipboard-darwin-*,
	# -win32-*, that were never published, so no lock can hold them) after ~5 s of asking the registry, every time;
	# npm install installs the locked versions.
	npm install --no-save --no-audit --no-fund --loglevel=error
	$(CLAUDE) --version
	# Codex writes helper links into CODEX_HOME even for --version: a throwaway one, never ~/.codex.
	h=$$(mktemp -d "$(CURDIR)/.codex-home.XXXXXX") && CODEX_HOME=$$h $(CODEX) --version; rc=$$?; rm -rf "$$h"; exit $$rc
	# Gemini CLI, Copilot CLI and Qwen Code (docs/gemini.md, copilot.md, qwen.md): their links there, as the tests find
	# them (tests/support/clientrun.py: the version npm installed, no `--version`); a broken install fails the first
	# test that runs the client, with its output. Their `--version` here, side by side in throwaway HOMEs, cost 5.3
	# CPU-s and 24 s on the npm lane (load 17), after npm install.
	for c in gemini copilot qwen; do test -e node_modules/.bin/$$c || { echo "node_modules/.bin/$$c is missing"; exit 1; }; done
	touch $@

demo: setup
	$(PY) examples/demo.py

# ruff (pyflakes, syntax errors, bugbear) on the package, the benches and the tests, mypy on the package; config in
# pyproject.toml.
lint: setup
	$(VENV)/bin/ruff check donegate/ bench/ tests/
	$(VENV)/bin/mypy

# Six workers (pytest-xdist) on these 2 cores: a worker spends much of its time waiting on its subprocesses
# (Claude Code, the hook, the hidden runs), so two left a core idle. Measured on a quiet 2-core machine,
# the same tree: -n 2 9:32, -n 4 8:21 (7:12 once the runs stopped compiling the standard library). Later, a clean
# clone: -n 4 9:54-10:08, -n 6 9:28 (one run). A per-test profile (cgroup per test: 1,117 CPU-s in the tests, with
# each test's wait) replayed on 2 cores with xdist's load scheduling: -n 4 615 s, -n 5 568 s, -n 6 579 s, -n 8 582 s
# (the floor, both cores busy throughout: 559 s); with the waits taken longer, -n 4 737, -n 6 655, -n 8 616.
TEST_WORKERS ?= 6
# At most 16 tests sent to a worker at a time (xdist's --maxschedchunk): by default each worker is first sent a quarter
# of its share in one piece, and the run ended on a tail of one or two workers still busy. A whole-suite profile
# (bench/suite_profile.py, quiet machine, 3041 tests, 764.7 CPU-s, floor 382 s on 2 cores) replayed 430-464 s with the
# default, 389-403 s with chunks of 8-32; measured one after the other on a clean clone, quiet: 7:40 and 7:33 (the
# default) against 6:33 (16).
TEST_CHUNK = --maxschedchunk 16
# The test modules' assertion rewriting cached first, in one process: on a fresh clone each worker rewrote all of
# them itself (they collect side by side, none finds another's cache). Six collections side by side, measured twice
# (cgroup, load 19-24): 24.7 and 32.5 CPU-s cold, 13.9 and 13.4 with this pass first, wall lower too (58-83 s against
# 80-145 s, loaded). Run with PYTHONDONTWRITEBYTECODE unset: where the shell sets it (these machines do), no worker
# writes a cache and each rewrote and compiled everything (a fresh clone, -n 6 collecting only, /usr/bin/time, load
# 12-16: 41.9 CPU-s, 153 s, against 6.5 for this pass plus 10.6 for the six, 48 s); the workers read the cache this
# pass leaves whether or not they may write one. The run itself goes without it too (BYTECODE): the kit's processes
# a test starts keep their bytecode (tests/conftest.py drops the variable for each test), and so do those a pool or a
# session-scoped fixture starts between tests; tests of the variable set it themselves (tests/gate/test_hook_env.py).
# Its collection errors are the run's to show.
BYTECODE = env -u PYTHONDONTWRITEBYTECODE
WARM_REWRITES = $(BYTECODE) $(PY) -m pytest -q --collect-only -p no:xdist >/dev/null 2>&1 || true
test: setup
	@$(WARM_REWRITES)
	$(BYTECODE) $(PY) -m pytest -q -n $(TEST_WORKERS) $(TEST_CHUNK)

test-fast: setup
	@$(WARM_REWRITES)
	$(BYTECODE) $(PY) -m pytest -q -n $(TEST_WORKERS) $(TEST_CHUNK) -m "not e2e"

# The end-to-end tests, one file at a time. CLAUDE_VERSION=X drives Claude Code X instead of the pinned
# one, installed apart in .claude-versions/X (the kit's commands in the tests get it as DONEGATE_CLAUDE).
E2E ?= $(sort $(wildcard tests/e2e/test_*.py))
# The short compatibility set CI runs against the oldest supported release (donegate/claude/binary.py OLDEST).
COMPAT_VERSION := $(shell sed -n 's/^OLDEST = "\(.*\)"/\1/p' donegate/claude/binary.py)
COMPAT := tests/e2e/test_fakeapi.py tests/e2e/test_harness.py tests/e2e/test_nothing_named_e2e.py \
	tests/e2e/test_gate_e2e.py::test_blocks_with_the_assertion_then_passes_after_an_edit \
	tests/e2e/test_gate_e2e.py::test_a_settings_file_claude_code_drops_silently_means_no_gate
OTHER_CLAUDE = $(CURDIR)/.claude-versions/$(CLAUDE_VERSION)/node_modules/.bin/claude

.claude-versions/%/node_modules/.bin/claude:
	mkdir -p .claude-versions/$*
	printf '{"private": true, "dependencies": {"@anthropic-ai/claude-code": "%s"}}\n' $* > .claude-versions/$*/package.json
	cd .claude-versions/$* && npm install --no-audit --no-fund --loglevel=error
	$@ --version

e2e: setup $(if $(CLAUDE_VERSION),.claude-versions/$(CLAUDE_VERSION)/node_modules/.bin/claude)
	set -e; for f in $(E2E); do \
	  $(if $(CLAUDE_VERSION),DGTEST_CLAUDE=$(OTHER_CLAUDE)) $(PY) -m pytest -q $$f $(ARGS); \
	done

e2e-compat:
	$(MAKE) e2e CLAUDE_VERSION=$(COMPAT_VERSION) E2E="$(COMPAT)"

bench: setup
	$(PY) bench/run.py

# The bundled experiment (examples/experiment/shop.yaml) against the scripted Messages API: prints the table.
experiment: setup
	$(PY) examples/experiment/scripted.py examples/experiment/shop.yaml -- --jobs 2 $(ARGS)

report: setup
	$(PY) -m donegate report $(ARGS)

# The HTML report of an example ledger written by the real gate, and its screenshot (build/report-html/).
report-html: setup
	$(PY) examples/report_html.py

write: setup
	$(PY) -m donegate write "$(REPO)" --request "$(REQUEST)"

review: setup
	$(PY) -m donegate review "$(REPO)" $(ARGS)

install: setup
	$(PY) -m donegate install "$(REPO)" $(ARGS)

uninstall: setup
	$(PY) -m donegate uninstall "$(REPO)"

doctor: setup
	$(PY) -m donegate doctor "$(REPO)"

clean:
	rm -rf $(VENV) node_modules state logs
