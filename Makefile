# dexviz: `make demo` and `make test` are the two set-up commands (see README.md).
# Both create or reuse .venv and install the Graphviz binary when it is missing and apt-get can
# install it. `make demo` installs dexviz with only the extras the demo draws with
# (DEMO_EXTRAS); `make test` and every other target install every extra and the test and docs
# tools (ALL_EXTRAS), as CI does.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Reinstalls only when pyproject.toml is newer than the stamp.
STAMP := $(VENV)/.dexviz-installed
DEMO_STAMP := $(VENV)/.dexviz-demo-installed
# `dexviz demo` renders graphs (graphviz), draws the timeline (matplotlib) and writes the
# executions table (pandas); nothing of Jupyter, the test tools or the docs site.
DEMO_EXTRAS := graph,plot,table
ALL_EXTRAS := all,test,docs
DEMO_OUT := demo-output
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
NBVAL_SANITIZE := notebooks/nbval-sanitize.cfg

.PHONY: help venv venv-demo graphviz demo test lint unit notebooks-test docs wheel-check notebook clean distclean

help:
	@echo "make demo      install dexviz[$(DEMO_EXTRAS)] into .venv and Graphviz, then run"
	@echo "               'dexviz demo' into $(DEMO_OUT)/"
	@echo "make test      install dexviz[$(ALL_EXTRAS)] into .venv and Graphviz, then ruff, mypy,"
	@echo "               pytest, the notebooks, the docs site and the wheel check"
	@echo "               (every target below installs dexviz[$(ALL_EXTRAS)] too)"
	@echo "make notebook  open the tutorial notebooks in JupyterLab"
	@echo "make docs      build the documentation site into site/ (offline, strict)"
	@echo "make wheel-check  build the wheel and run it in a fresh venv"
	@echo "make lint      ruff and mypy only"
	@echo "make bench     every benchmark in fresh processes against the reference engine"
	@echo "make clean     remove caches and $(DEMO_OUT)/ (distclean also removes .venv)"

venv: $(STAMP)

venv-demo: $(DEMO_STAMP)

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "make: no python3.11 or python3 on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Bytecode is compiled once here: with PYTHONDONTWRITEBYTECODE set, every import would
# otherwise recompile dexviz from source (about 100 ms).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[$(ALL_EXTRAS)]'
	$(BIN)/python -m compileall -q dexviz
	touch $@

# A venv that has every extra already has the demo's.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then \
		echo "venv: every extra is installed already"; \
	else \
		$(BIN)/python -m pip install -e '.[$(DEMO_EXTRAS)]'; \
		$(BIN)/python -m compileall -q dexviz; \
	fi
	touch $@

graphviz:
	@if command -v dot >/dev/null 2>&1; then \
		echo "graphviz: $$(dot -V 2>&1)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "graphviz: 'dot' is missing; installing graphviz and fonts-noto-cjk with apt-get"; \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y graphviz fonts-noto-cjk; } \
			|| echo "graphviz: apt-get failed; SVG/PNG rendering will be unavailable (DOT text still works)"; \
	else \
		echo "graphviz: 'dot' is not on PATH. Install Graphviz to render SVG/PNG:"; \
		echo "  Debian/Ubuntu: sudo apt-get install graphviz fonts-noto-cjk"; \
		echo "  macOS: brew install graphviz    conda: conda install -c conda-forge graphviz"; \
		echo "Continuing: DOT text output works without it; tests that need 'dot' are skipped."; \
	fi

demo: venv-demo graphviz
	$(BIN)/dexviz demo --out $(DEMO_OUT)

lint: venv
	$(BIN)/ruff check dexviz tests
	$(BIN)/mypy dexviz

# pytest exits 5 when it collected no tests; that must fail the build, never pass quietly.
# -v names each test as it runs and --durations lists the 20 slowest, so a slow run never looks
# hung; pyproject.toml gives every test a timeout.
unit: venv
	@status=0; $(BIN)/pytest -rs tests/ -v --durations=20 || status=$$?; \
	if [ $$status -eq 5 ]; then \
		echo "make: pytest collected no tests in tests/ (exit 5); failing" >&2; \
	fi; \
	exit $$status

notebooks-test: venv
ifneq ($(NOTEBOOKS),)
	@status=0; $(BIN)/pytest -rs --nbval-lax --nbval-current-env \
		--nbval-sanitize-with $(NBVAL_SANITIZE) notebooks/ || status=$$?; \
	if [ $$status -eq 5 ]; then \
		echo "make: pytest collected no notebook cells in notebooks/ (exit 5); failing" >&2; \
	fi; \
	exit $$status
else
	@echo "notebooks-test: no notebooks/*.ipynb yet; nothing to run"
endif

# The documentation site, offline: strict (a broken link or reference fails), then a check
# that no page loads anything from the network.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
	$(BIN)/python scripts/check_site.py site

# Build the wheel, install it with every extra in a fresh venv, run `dexviz demo` and
# `dexviz report` with it outside the source tree.
wheel-check: venv
	$(BIN)/python scripts/check_wheel.py

# Speed and memory goals, as ratios against the reference engine (benchmarks/README.md).
bench: venv graphviz
	$(BIN)/python -m compileall -q dexviz
	$(BIN)/python benchmarks/bench.py --runs 3

test: venv graphviz lint unit notebooks-test docs wheel-check

# Jupyter refuses to start as root (containers, dev boxes) unless told it may.
notebook: venv
	$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/

clean:
	rm -rf $(DEMO_OUT) site .cache .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV)
