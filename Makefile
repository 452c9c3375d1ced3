# jaxtour: `make tour` runs the tour, `make test` runs the test suite.
# Both create .venv/ from the pinned lock file on first use (no sudo, no system Graphviz).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: tour test lint lock notebooks clean help

help:
	@echo "make tour   set up .venv and run the jaxtour tour (writes build/)"
	@echo "make test   set up .venv and run lint + the whole test suite"
	@echo "make lock   re-resolve requirements.lock (needs network; maintainers only)"

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else \
	  "jaxtour needs Python 3.11 or newer; found " + sys.version.split()[0] + \
	  ". Run: make PYTHON=python3.12 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

tour: $(STAMP)
	$(BIN)/jaxtour tour

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

notebooks: $(STAMP)
	$(BIN)/jupytext --sync notebooks/*.py

lock:
	uv pip compile pyproject.toml --universal --python-version 3.11 --extra test \
	  --generate-hashes -c lock-constraints.txt -o requirements.lock

clean:
	rm -rf build .pytest_cache
