# Two commands for a fresh machine: `make run` (the whole pipeline) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find engine workers api -name '*.py' -o -name '*.lua' -o -name '*.c' -o -path '*/ui/*') pyproject.toml setup.py

.PHONY: install run test test-fast lint bench clean

install: $(VENV)/.installed

# strict editable mode links each module into build/, so import-linter sees the real package tree
$(VENV)/.installed: $(SOURCES)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "assocmem needs Python 3.11 or newer")'
	@echo "installing assocmem and its dependencies into $(VENV): a few minutes the first time, seconds after"
	@$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed: on Debian/Ubuntu, apt-get install python3-venv"; exit 1; }
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,integrations]' --config-settings editable_mode=strict
	@$(BIN)/python -c 'from assocmem.engine.state.note_concepts import NATIVE, NOT_NATIVE; NATIVE or print("note:", NOT_NATIVE)'
	@$(BIN)/python -c 'from assocmem.engine.recall.dominance import NATIVE, NOT_NATIVE; NATIVE or print("note:", NOT_NATIVE)'
	@# bytecode now, as pip writes it for a regular install: where PYTHONDONTWRITEBYTECODE is
	@# set, every process would otherwise compile our modules again at each start
	$(BIN)/python -m compileall -q build
	@touch $@
	@echo "installed: $(BIN)/assocmem"

run: install
	$(BIN)/assocmem up

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# The suite on two processes, each test file on one of them (pytest-xdist): most tests wait
# for processes they started, so two take about two thirds of the time even on two cores.
# PYTEST_PROCESSES=0 runs it in one.
PYTEST_PROCESSES ?= 2
# The ten slowest tests close each pass: a test that starts taking a minute shows there.
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_PROCESSES) --dist loadfile --durations=10

# then the end-to-end tests but the slow ones again on `up --cluster 3` (the failover test
# and the store contract run on a cluster in the first pass already)
test: lint
	$(PYTEST)
	$(PYTEST) --redis-cluster -m "not slow" tests/e2e

test-fast: lint
	$(PYTEST) -m "not slow"

bench: install
	@echo "see bench/README.md: each benchmark takes the corpus path as an argument"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
