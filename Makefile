# make demo: install what is missing, then run the examples on real data: high wind
#   areas over 384 stations (Spark replay), as a table and a timeline PNG, and the
#   JFK blizzard.
# make live: the wind area rules live on Spark Structured Streaming, as slices of
#   the observations land in a folder (Ctrl-C stops it).
# make test: install what is missing, then run the whole test suite.

VENV    ?= .venv
PYTHON  ?= python3
DATA    ?= data
OUT     ?= out/demo
SUDO    := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: all setup swipl java chromium venv native demo live test fuzz bench typecheck clean

all: test

setup: swipl java chromium venv native

# The columnar hand-over of events (prolog/etalis/runtime/etalis_columns.c), built
# beside its source when a C compiler is there; without one, the package
# builds it at first use into ~/.cache/etalis-py, or events cross as text.
# The reader of JSON line blocks (src/etalis_py/inputs/etalis_read.c) is
# built the same way; without it blocks are read by pyarrow.
NATIVE  := prolog/etalis/runtime/etalis_columns.so
READER  := src/etalis_py/inputs/etalis_read.so
native:
	@if command -v $${CC:-cc} >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(NATIVE) $(READER); \
	else echo "== no C compiler: events will cross into Prolog as text"; fi

$(READER): src/etalis_py/inputs/etalis_read.c
	@echo "== building $@"
	@$${CC:-cc} -O2 -std=c99 -shared -fPIC $< -o $@

$(NATIVE): prolog/etalis/runtime/etalis_columns.c
	@echo "== building $@"
	@$${CC:-cc} -O2 -shared -fPIC -I"$$(swipl --dump-runtime-variables | sed -n 's/^PLBASE="\(.*\)";/\1/p')/include" $< -o $@

# Spark (etalis replay) runs on a Java runtime.
java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "== installing a Java runtime (default-jre-headless)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq default-jre-headless >/dev/null; }

# The test of etalis serve's live page drives Debian's Chromium (headless,
# through Playwright's Python package: no browser download); the test of
# docs/service.md runs its curl examples.
chromium:
	@command -v chromium >/dev/null 2>&1 && command -v curl >/dev/null 2>&1 || { \
	  echo "== installing Chromium and curl"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium curl >/dev/null; }

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

# examples/wind_area/demo.sh holds the commands (tests/test_demo.py runs it too)
demo: setup
	@PYTHONWARNINGS=ignore::FutureWarning ETALIS=$(VENV)/bin/etalis DATA=$(DATA) OUT=$(OUT) \
	  sh examples/wind_area/demo.sh

# examples/wind_area/live.sh holds the commands (tests/test_stream.py runs it too)
live: setup
	@PYTHONWARNINGS=ignore::FutureWarning ETALIS=$(VENV)/bin/etalis PYTHON=$(VENV)/bin/python DATA=$(DATA) \
	  OUT=out/live sh examples/wind_area/live.sh

# one worker a core; a file's tests stay on one worker, where they share its Spark session
test: setup
	$(VENV)/bin/pytest -q -n auto --dist loadfile

fuzz: setup
	PYTHONPATH=. $(VENV)/bin/python tests/fuzz_semantics.py --cases 100000 --seed 1

bench: setup
	$(VENV)/bin/python benchmarks/throughput.py

typecheck: setup
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis out $(NATIVE) $(READER)
