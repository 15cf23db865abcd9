# spmdc — `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help install demo demo-multiprocess demo-sharded test test-slow lint bench sz fuzz ecosystem clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 19

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install spmdc with its test tools

demo: $(STAMP)  ## data-parallel MLP training with pmap on 8 virtual CPU devices
	$(PY) examples/train_data_parallel.py

demo-multiprocess: $(STAMP)  ## the same training as 2 processes x 4 devices (Gloo collectives)
	$(PY) -m spmdc.launch -n 2 --devices-per-process 4 examples/train_data_parallel.py

demo-sharded: $(STAMP)  ## the same training with jit over a sharded batch, as 2 processes x 4 devices
	$(PY) -m spmdc.launch -n 2 --devices-per-process 4 examples/train_sharded.py

test: $(STAMP)  ## the whole test suite (what CI runs)
	SPMDC_CHECKS=1 HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n 2 -m "not slow" tests

test-slow: $(STAMP)  ## the slow variants only (e.g. every random draw under every transformation)
	SPMDC_CHECKS=1 HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n 2 -m slow tests

lint: $(STAMP)  ## ruff
	$(VENV)/bin/ruff check spmdc tests tools examples

bench: $(STAMP)  ## spmdc vs JAX benchmarks (installs the optional jax extra)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) tools/bench.py $(BENCH_ARGS)   # e.g. make bench BENCH_ARGS='--only W1,W6 --quick'

N ?= 200
fuzz: $(STAMP)  ## differential testing: N random programs vs the reference (and JAX if importable)
	$(PY) tools/fuzz -n $(N) $(FUZZ_ARGS)   # e.g. make fuzz N=5000 FUZZ_ARGS='--jax-python /path/to/python'

ecosystem:  ## JAX's libraries' imports, test suites and docs examples: JAX vs spmdc (docs/TESTING.md)
	$(PYTHON) tools/ecosystem.py $(ECOSYSTEM_ARGS)   # e.g. make ecosystem ECOSYSTEM_ARGS='--libs optax,chex --cap 600'

sz: $(STAMP)  ## lines of code per package, the number of primitives, coverage of JAX's modules
	$(PY) tools/sz.py

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache
