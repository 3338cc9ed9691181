# Two commands for a newcomer: `make demo` and `make test`. Each builds .venv itself; `make test`
# also installs the distribution's Chromium (the console's browser tests) when it is missing, and
# the npm packages the tests run (MCP servers and a client other people wrote) from their lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CHROMIUM := /usr/bin/chromium
# The npm packages the tests run, at the exact versions of tests/npm/package-lock.json.
NPM_TESTS := tests/npm
NPM_INSTALLED := $(NPM_TESTS)/node_modules/.installed
# The test environment is installed from a lock of exact versions the suite passed with
# (`requirements/test.txt`, made by uv from `requirements/test.in`); `make demo` installs fuseforks
# as a user does, its dependencies' newest releases within the lower bounds of pyproject.toml.
LOCK := requirements/test.txt
UV_VERSION := 0.13.9
LOCK_COMMAND := uv pip compile requirements/test.in --python-version 3.11 --universal \
	--no-emit-package fuseforks --custom-compile-command 'make lock' -o $(LOCK)

.PHONY: demo test npm lock test-latest bench bench-peers cluster clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setuptools says, as a warning, that an install is editable: information, not a fault.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e .
	touch $@

# Exactly the locked set (no resolving), then fuseforks itself, built with the locked setuptools.
$(VENV)/.installed-test: pyproject.toml $(LOCK) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	touch $@ $(VENV)/.installed

# Only when missing: apt-get as root, through sudo otherwise.
$(CHROMIUM):
	@echo "installing Chromium from the distribution's packages (the console's browser tests)"
	@as_root=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	$$as_root apt-get update -qq >/dev/null && \
	$$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null

# Only when node_modules is missing or older than the lock: `npm ci` installs exactly the lock.
# @playwright/mcp drives the distribution's Chromium (the tests name it), so Playwright downloads
# no browser of its own.
$(NPM_INSTALLED): $(NPM_TESTS)/package.json $(NPM_TESTS)/package-lock.json
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix $(NPM_TESTS) --no-audit --no-fund \
		--loglevel=error
	touch $@

npm: $(NPM_INSTALLED)

demo: $(VENV)/.installed
	$(BIN)/fuseforks demo

test: $(VENV)/.installed-test $(NPM_INSTALLED) | $(CHROMIUM)
	$(BIN)/ruff check fuseforks tests benchmarks
	$(BIN)/mypy fuseforks
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 --dist loadfile

$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)

# The lock again from requirements/test.in, keeping every version it can (after an edit there).
lock: $(BIN)/uv
	$(BIN)/$(LOCK_COMMAND)

# Move forward on purpose: the lock refreshed to the newest releases, installed, and the suite run
# against it. Green: commit requirements/test.txt on its own. Red: the failure names a real
# incompatibility to mend, or `git checkout requirements/test.txt` goes back.
test-latest: $(BIN)/uv
	$(BIN)/$(LOCK_COMMAND) --upgrade
	$(MAKE) test

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
	rm -rf $(VENV) $(PEERS_VENV) $(NPM_TESTS)/node_modules fuseforks.db fuseforks.db-wal fuseforks.db-shm fuseforks-cluster
