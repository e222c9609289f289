# The two commands of the README: `make demo` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# A bare `torch` requirement pulls a multi-GB CUDA build; the CPU build is installed first.
# Elsewhere: make install TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
STAMP := $(VENV)/.skillbank-installed
PYTEST_ARGS ?=

.PHONY: install demo test bench lint format clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(PIP) install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/skillbank demo

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

bench: install
	$(PY) -m bench

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache
