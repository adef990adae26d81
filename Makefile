# Two commands set everything up on a fresh machine that has python3 and make:
#   make demo   creates .venv, installs the tool with the local AWS emulator, runs the demo audit
#   make test   creates .venv, installs the dev extras, runs the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/audit demo

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-demo
	$(BIN)/python bench/bench_audit.py

clean:
	rm -rf $(VENV) audit-demo build *.egg-info
