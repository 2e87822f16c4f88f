# rlarchive: every target sets itself up (virtual environment, pip, npm) on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PY_STAMP := $(VENV)/.installed-$(shell cat python/pyproject.toml | sha256sum | cut -c1-12)

.PHONY: setup test test-python conformance vectors vectors-check bench clean

$(PY_STAMP): python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e 'python[test,sb3]'
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(PY_STAMP)

test-python: setup
	$(PY) -m pytest -q tests/python

test: test-python

clean:
	rm -rf $(VENV)
