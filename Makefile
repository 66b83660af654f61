# make demo: install what is missing, then run the blizzard example on real data.
# make test: install what is missing, then run the whole test suite.

VENV    ?= .venv
PYTHON  ?= python3
DATA    ?= ../shared/data
SUDO    := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: all setup swipl venv demo test fuzz bench typecheck clean

all: test

setup: swipl venv

swipl:
	@command -v swipl >/dev/null 2>&1 || { \
	  echo "== installing SWI-Prolog (swi-prolog-nox)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq swi-prolog-nox >/dev/null; }
	@swipl --version

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@echo "== preparing $(VENV)"
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --upgrade pip >/dev/null 2>&1 || true
	@$(VENV)/bin/pip install -q -e '.[test]'
	@touch $@

demo: setup
	@echo "== blizzards at JFK, 2010-2018 (NOAA hourly observations)"
	$(VENV)/bin/etalis run examples/blizzard/blizzard.etl \
	  --events $(DATA)/weather/noaa-jfk-hourly-2010-2018.csv \
	  --event reading --args VISIBILITY,WindSpeed \
	  --time DATE --time-format '%d-%m-%Y %H:%M' --quiet

test: setup
	$(VENV)/bin/pytest -q

fuzz: setup
	$(VENV)/bin/python tests/fuzz_semantics.py --cases 100000 --seed 1

bench: setup
	$(VENV)/bin/python benchmarks/throughput.py

typecheck: setup
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis
