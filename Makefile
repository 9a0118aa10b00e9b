# xlsent: `make run` and `make test` each set up .venv themselves on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

.PHONY: run serve test bench lint setup clean

# $(call venv,FOLDER,EXTRA): a virtual environment with torch and xlsent with EXTRA. torch comes through pip, which
# reads this machine's pip configuration (a local CPU wheel); everything else through uv (from PyPI, installed by pip
# here), which downloads in parallel and keeps a cache. Both compile bytecode at install: without it, every Ray worker
# process of the tests compiled torch's modules again (the Ray tests took 2-3x as long).
define venv
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	$(1)/bin/pip install -q torch==2.13.0 uv
	$(1)/bin/uv pip install -q --compile-bytecode --python $(1)/bin/python -e '.[$(2)]'
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

# two test processes on a 2-core machine: the suite waits on processes (Ray workers, CLI runs, OpenVINO compiles) more
# than it computes
# Plugins named, not autoloaded: pytest rewrites the asserts of every module of a package that registers a plugin
# (schemathesis, hypothesis, anyio: ~350 modules), in each test process, and caches nothing where bytecode is not
# written (PYTHONDONTWRITEBYTECODE); src is compiled first for the same reason (every Ray worker and CLI subprocess
# compiled xlsent's modules again)
PYTEST_PLUGINS := -p xdist.plugin -p _hypothesis_pytestplugin -p schemathesis.pytest.plugin -p anyio.pytest_plugin
test: setup
	$(BIN)/lint-imports
	$(BIN)/python -m compileall -q src
	PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(BIN)/python -m pytest $(PYTEST_PLUGINS) -q -x -n auto --maxprocesses 4 \
		--durations=15

bench: setup $(BENCH_STAMP)
	$(BENCH_VENV)/bin/python benchmarks/run.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) $(BENCH_VENV) build *.egg-info
