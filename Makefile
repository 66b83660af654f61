# make demo: install what is missing, then run the examples on real data: high wind
#   areas over 384 stations (Spark replay), as a table and a timeline PNG, and the
#   JFK blizzard.
# make test: install what is missing, then run the whole test suite.

VENV    ?= .venv
PYTHON  ?= python3
DATA    ?= ../shared/data
OUT     ?= out/demo
SUDO    := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: all setup swipl java venv demo test fuzz bench typecheck clean

all: test

setup: swipl java venv

# Spark (etalis replay) runs on a Java runtime.
java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "== installing a Java runtime (default-jre-headless)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq default-jre-headless >/dev/null; }

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

CHARLEY_MAPPING = \
  --columns SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION \
  --time SAMPLINGTIME --time-format '%Y-%m-%d %H:%M:%S.%f+0:00'
CHARLEY = $(DATA)/weather/lsd-charley-2004-08-08-obs.csv
JFK = $(DATA)/weather/noaa-jfk-hourly-2010-2018.csv

demo: setup
	@mkdir -p $(OUT)
	@echo "== High wind at 384 US weather stations, 8 August 2004 (LinkedSensorData)"
	@echo "\$$ etalis replay examples/wind_area/wind_area.etl --partition-by STATIONID ...   (Spark, local mode)"
	@PYTHONWARNINGS=ignore::FutureWarning $(VENV)/bin/etalis replay examples/wind_area/wind_area.etl \
	  --events $(CHARLEY) $(CHARLEY_MAPPING) --event obs --args STATIONID,WINDSPEED \
	  --partition-by STATIONID --no-progress > $(OUT)/wind_area.jsonl 2> $(OUT)/replay.log \
	  || { cat $(OUT)/replay.log; exit 1; }
	@sed -n '/^rows:/,$$p' $(OUT)/replay.log
	@echo
	@$(VENV)/bin/etalis table $(OUT)/wind_area.jsonl --names examples/wind_area/stations.csv
	@$(VENV)/bin/etalis plot $(OUT)/wind_area.jsonl --names examples/wind_area/stations.csv \
	  -o $(OUT)/timeline.png --title "High wind and wind areas, 8 August 2004" \
	  --events $(CHARLEY) $(CHARLEY_MAPPING) --signal WINDSPEED --key STATIONID --ylabel "wind speed (mph)" --level 10
	@echo
	@echo "== Blizzards at JFK airport (KJFK), 2010-2018 (NOAA hourly observations; local times)"
	@echo "\$$ etalis run examples/blizzard/blizzard.etl ..."
	@$(VENV)/bin/etalis run examples/blizzard/blizzard.etl --events $(JFK) \
	  --event reading --args VISIBILITY,WindSpeed \
	  --time DATE --time-format '%d-%m-%Y %H:%M' --quiet > $(OUT)/blizzard.jsonl
	@$(VENV)/bin/etalis table $(OUT)/blizzard.jsonl --lines --no-args

test: setup
	$(VENV)/bin/pytest -q

fuzz: setup
	$(VENV)/bin/python tests/fuzz_semantics.py --cases 100000 --seed 1

bench: setup
	$(VENV)/bin/python benchmarks/throughput.py

typecheck: setup
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis out
