# Two commands for a newcomer: `make demo` and `make test`. Each builds .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench cluster clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/fuseforks demo

test: $(VENV)/.installed-test
	$(BIN)/ruff check fuseforks tests benchmarks
	$(BIN)/mypy fuseforks
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

$(VENV)/.installed-cluster: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[cluster]'
	touch $@

cluster: $(VENV)/.installed-cluster
	$(BIN)/fuseforks cluster

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) fuseforks.db fuseforks.db-wal fuseforks.db-shm fuseforks-cluster
