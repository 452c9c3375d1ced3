# jaxtour: `make tour` runs the tour, `make test` runs the test suite.
# Both create .venv/ from the pinned lock file on first use (no sudo, no system Graphviz).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
COMPILED := $(VENV)/.compiled

# The second test run: the newest JAX (pinned in requirements-latest.lock) on the newest
# Python 3.12+ the machine has (.ci/newest-python finds it; override with PYTHON_LATEST=...).
VENV_LATEST   := .venv-latest
STAMP_LATEST  := $(VENV_LATEST)/.installed
VENV_NEWEST   := .venv-newest

# pytest runs in PYTEST_WORKERS processes (pytest-xdist; 0 runs in this one). A test file
# runs whole in one worker (--dist loadfile): a lesson's cells stay in order in one kernel
# and a module's fixtures run once; files go out in the order tests/markers.py's
# LONGEST_FIRST gives (--no-loadscope-reorder: xdist would start the files with the most
# tests first). Markers (pyproject.toml) pick the runs: the fast one
# leaves out what is slow, drives a browser or executes a lesson; the newest-JAX one
# leaves out the plumbing no JAX release changes.
# Two on two cores: a third adds a collection and contention, not speed (benchmarks/suite_history.json).
PYTEST_WORKERS ?= 2

# pip compiles what it installs to bytecode on one core, half of an install's time from
# pip's cache, so it installs with --no-compile. The test suite writes the bytecode of what
# its processes import (conftest.py clears PYTHONDONTWRITEBYTECODE, which the machines
# here set), about half of the venv's source, at no cost a run can measure: a set-up
# compileall -j 0 only added its 12 s to `make test` (benchmarks/suite_history.json). `make tour` compiles
# the venv once (COMPILED): where PYTHONDONTWRITEBYTECODE is set nothing else writes
# bytecode, and every process of the tour would compile jax and its kin again (2 s more
# per start). Like pip, it lets a file that does not compile go, and keeps quiet about the
# SyntaxWarnings in packages' own tests. It leaves out what the tour never imports: scipy
# (a sixth of the source), pip and setuptools (used before it), mypy (compiled to C).
PIP_INSTALL = -m pip install --quiet --no-compile
NOT_IMPORTED = scipy|mypy|mypyc|pip|setuptools
COMPILE      = -m compileall -qq -j 0 -x '/site-packages/($(NOT_IMPORTED))/'
PYTEST         := python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder \
                  --durations=15

.PHONY: tour test test-fast test-latest test-newest lint format lock notebooks clean help

help:
	@echo "make tour   set up .venv and run the jaxtour tour (writes build/)"
	@echo "make test   set up .venv and run lint, type check and the whole test suite"
	@echo "make test-fast  the inner loop: the tests that are not slow, use no browser and execute no lesson"
	@echo "make test-latest  the tests that touch JAX, on the newest JAX (requirements-latest.lock)"
	@echo "make test-newest  the test suite on whatever JAX is newest today, unpinned (maintainers)"
	@echo "make format lay the code out in the house style (ruff, 88 columns)"
	@echo "make lock   re-resolve both lock files (needs uv and network; maintainers only)"

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else \
	  "jaxtour needs Python 3.11 or newer; found " + sys.version.split()[0] + \
	  ". Run: make PYTHON=python3.12 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python $(PIP_INSTALL) --require-hashes -r requirements.lock
	$(BIN)/python $(PIP_INSTALL) --no-deps -e .
	@touch $@

$(COMPILED): $(STAMP)
	-PYTHONWARNINGS=ignore $(BIN)/python $(COMPILE) $(VENV)/lib
	@touch $@

$(STAMP_LATEST): requirements-latest.lock pyproject.toml
	@py="$${PYTHON_LATEST:-$$(sh .ci/newest-python)}" || exit 1; \
	  echo "$$py -m venv $(VENV_LATEST)"; "$$py" -m venv $(VENV_LATEST)
	$(VENV_LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_LATEST)/bin/python $(PIP_INSTALL) --require-hashes -r requirements-latest.lock
	$(VENV_LATEST)/bin/python $(PIP_INSTALL) --no-deps -e .
	@touch $@

tour: $(COMPILED)
	$(BIN)/jaxtour tour

# mypy runs inside the suite (tests/test_types.py), beside the other tests
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/$(PYTEST)

test-fast: $(STAMP)
	$(BIN)/$(PYTEST) -m "not slow and not browser and not notebooks"

test-latest: $(STAMP_LATEST)
	$(VENV_LATEST)/bin/python -c 'import jax, sys; print("newest JAX run: jax", jax.__version__, "on Python", sys.version.split()[0])'
	$(VENV_LATEST)/bin/$(PYTEST) -m "not plumbing"

test-newest:
	@py="$${PYTHON_LATEST:-$$(sh .ci/newest-python)}" || exit 1; "$$py" -m venv $(VENV_NEWEST)
	$(VENV_NEWEST)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_NEWEST)/bin/python -m pip install --quiet --upgrade -e ".[test]" jax jaxlib
	$(VENV_NEWEST)/bin/python -c 'import jax; print("unpinned run: jax", jax.__version__)'
	$(VENV_NEWEST)/bin/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Each notebooks/NN_topic.ipynb is the STUDENT view of NN_topic.py (no solutions, no checks).
notebooks: $(STAMP)
	$(BIN)/python -m jaxtour.lesson notebooks

lock:
	uv pip compile pyproject.toml --universal --python-version 3.11 --extra test \
	  --generate-hashes -c lock-constraints.txt -o requirements.lock
	uv pip compile pyproject.toml --universal --python-version 3.12 --extra test \
	  --generate-hashes -o requirements-latest.lock

clean:
	rm -rf build .pytest_cache $(VENV_NEWEST)
