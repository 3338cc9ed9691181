# Two commands for a newcomer: `make demo` and `make test`. Each builds .venv itself; `make test`
# also installs the distribution's Chromium (the console's browser tests) when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CHROMIUM := /usr/bin/chromium

.PHONY: demo test bench bench-peers cluster clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@ $(VENV)/.installed

# Only when missing: apt-get as root, through sudo otherwise.
$(CHROMIUM):
	@echo "installing Chromium from the distribution's packages (the console's browser tests)"
	@as_root=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	$$as_root apt-get update -qq >/dev/null && \
	$$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null

demo: $(VENV)/.installed
	$(BIN)/fuseforks demo

test: $(VENV)/.installed-test | $(CHROMIUM)
	$(BIN)/ruff check fuseforks tests benchmarks
	$(BIN)/mypy fuseforks
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 --dist loadfile

$(VENV)/.installed-cluster: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[cluster]'
	touch $@

cluster: $(VENV)/.installed-cluster
	$(BIN)/fuseforks cluster

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

# fuseforks beside the peer frameworks (benchmarks/bench_peers.py), in a venv of their own with the
# peers' pinned versions; not part of `make test` or `make bench`. ARGS="--turns 8" for a short run.
PEERS_VENV := .venv-peers
PEERS_REQUIREMENTS := benchmarks/peers/requirements.txt

$(PEERS_VENV)/.installed: pyproject.toml $(PEERS_REQUIREMENTS)
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet -r $(PEERS_REQUIREMENTS) -e '.[cluster]'
	touch $@

bench-peers: $(PEERS_VENV)/.installed
	$(PEERS_VENV)/bin/python -m benchmarks.bench_peers $(ARGS)

clean:
	rm -rf $(VENV) $(PEERS_VENV) fuseforks.db fuseforks.db-wal fuseforks.db-shm fuseforks-cluster
