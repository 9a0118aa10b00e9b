# xlsent: `make run` and `make test` each set up .venv themselves on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run serve test bench lint setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)
	$(BIN)/xlsent models --prepare
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)  # the page test (xlsent serve)

run: setup
	$(BIN)/xlsent demo

serve: setup
	$(BIN)/xlsent serve

test: setup
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -x --durations=15

bench: setup
	$(BIN)/python benchmarks/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info
