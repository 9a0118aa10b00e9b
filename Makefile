# xlsent: `make run` and `make test` each set up .venv themselves on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

.PHONY: run serve test bench lint setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# the benchmark's own environment: sentence-transformers with its ONNX and OpenVINO extras (optimum), which pin an
# older transformers than the runtime's
$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH_VENV)/bin/python || $(PY) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --upgrade pip
	$(BENCH_VENV)/bin/pip install -q torch==2.13.0
	$(BENCH_VENV)/bin/pip install -q -e '.[bench]'
	touch $(BENCH_STAMP)

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

bench: setup $(BENCH_STAMP)
	$(BENCH_VENV)/bin/python benchmarks/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) $(BENCH_VENV) build *.egg-info
