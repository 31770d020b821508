# Set-up is two commands on a fresh machine (Python >= 3.11):
#   make example   # creates .venv, installs adk-eval, runs the clinician example suite
#                  # (adk-eval run examples/clinician)
#   make test      # the same install, then lint, type check and the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

# litellm must not try to fetch its cost map from the internet.
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: example test lint install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

example: $(STAMP)
	$(BIN)/adk-eval run examples/clinician

lint: $(STAMP)
	$(BIN)/ruff format --check src tests examples
	$(BIN)/ruff check src tests examples
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
