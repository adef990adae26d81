# Two commands set everything up on a fresh machine that has python3 and make:
#   make demo   creates .venv, installs the tool with the local AWS emulator, runs the demo audit
#   make test   creates .venv, installs the dev extras, then lint, types, the docs, the test suite and the installed-wheel check
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint docs check-install bench bench-scale clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-demo: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/audit demo

# In this order: lint and types, the docs (strict: a broken link or page fails), the suite (editable
# install, with tests/test_docs.py holding the docs to the code), then the built wheel as users get it.
# The suite runs on every core (pytest-xdist: a worker per CPU, each with its own emulator; whole files
# to a worker, so a module's seeded emulator is built once) and measures the package's line coverage
# (pytest-cov; the emulator, the tests' peer, is neither traced nor counted: pyproject.toml and
# tests/conftest.py); after it, the ten files least covered and the total (`.venv/bin/coverage report`: all).
PYTEST_PARALLEL ?= -n auto --dist loadfile
test: $(VENV)/.installed-dev
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory docs
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --cov --cov-report=
	@$(BIN)/coverage report | sed -n '1,12p;/^TOTAL/,$$p'
	$(MAKE) --no-print-directory check-install

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check auditor auditor_emulator tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# The reference in docs/ as a site in site/ (MkDocs, Material theme); --strict turns warnings into failures.
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --quiet -d site/

# Builds the sdist and wheel, installs the wheel in a fresh venv outside the checkout, runs it there.
check-install: $(VENV)/.installed-dev
	.ci/check-installed.sh $(BIN)/python

bench: $(VENV)/.installed-demo
	$(BIN)/python bench/bench_audit.py

bench-scale: $(VENV)/.installed-demo
	$(BIN)/python bench/bench_scale.py

clean:
	rm -rf $(VENV) audit-demo build dist site *.egg-info .coverage .coverage.*
