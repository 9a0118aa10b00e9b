# xlsent: `make run` and `make test` each set up .venv themselves on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench lint setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)
	$(BIN)/xlsent models --prepare

run: setup
	$(BIN)/xlsent demo

test: setup
	$(BIN)/python -m pytest -q -x --durations=15

bench: setup
	$(BIN)/python benchmarks/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) build *.egg-info
