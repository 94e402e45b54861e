# Two entry points for a newcomer: `make run` (the suite against the embedded reference host)
# and `make test` (the project's own tests). Both create .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: run test test-slow test-every-scenario lint format bench constraints clean

# Both distributions of this repository, editable: the grading one (with its dev tools) and the
# reference host (`host/`, through the grading one's `host` extra), at the versions in constraints.txt.
$(STAMP): pyproject.toml host/pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ./host -e '.[dev,host]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/openwop-memory-conformance run --report reports/embedded.json

# The quick tier: everything but the tests marked `slow` (a sample of the mutants, not all of them).
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow" tests

# CI's second tier: the full mutant matrix (every mutant caught, nothing else changed) and the slow
# tests (cold subprocess runs, schemathesis, kill -9, load).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m slow tests

# Every mutant against every scenario on one host: its declared outcomes still hold (about 15-30 min).
test-every-scenario: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m every_scenario tests/selfvalidation/test_mutants.py

# Re-pin after changing a range in either pyproject.toml (names and versions only, no addresses).
constraints: $(STAMP)
	{ sed -n '1,3p' constraints.txt; $(BIN)/pip freeze --all --exclude-editable | grep -v -i '^openwop'; } > constraints.new
	mv constraints.new constraints.txt

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) reports .pytest_cache build dist *.egg-info
