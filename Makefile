# xlsent: `make run` and `make test` each set up .venv themselves on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

.PHONY: run serve test bench lint setup clean

# $(call venv,FOLDER,EXTRA): a virtual environment with torch (the local CPU wheel) and xlsent with EXTRA
define venv
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	$(1)/bin/pip install -q --upgrade pip
	$(1)/bin/pip install -q torch==2.13.0
	$(1)/bin/pip install -q -e '.[$(2)]'
	touch $(1)/.installed
endef

$(STAMP): pyproject.toml
	$(call venv,$(VENV),dev)

# the benchmark's own environment: sentence-transformers with its ONNX and OpenVINO extras (optimum), which pin an
# older transformers than the runtime's
$(BENCH_STAMP): pyproject.toml
	$(call venv,$(BENCH_VENV),bench)

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
