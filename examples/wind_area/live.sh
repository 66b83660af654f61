#!/bin/sh
# What `make live` runs (tests/test_stream.py runs it too): the wind area
# rules live on Spark Structured Streaming.  slices.py drops the 384
# stations' observations into a folder in 10-minute slices, one a second,
# while `etalis stream` prints the wind warnings and wind areas as each
# micro-batch commits them, in the stations' local times.
#
#   ETALIS         the etalis command (default: etalis)
#   PYTHON         the Python of slices.py (default: python3)
#   DATA           the folder of the data (default: data, in the repository)
#   OUT            where the files go (default: out/live); it starts afresh
#   AVAILABLE_NOW  1: drop every slice first, process them all and stop
#   PER_TRIGGER    the slices a micro-batch reads at most (default: 6)
set -eu
ETALIS=${ETALIS:-etalis}
PYTHON=${PYTHON:-python3}
DATA=${DATA:-data}
OUT=${OUT:-out/live}
HERE=$(dirname "$0")
CHARLEY=$DATA/weather/lsd-charley-2004-08-08-obs.csv
COLUMNS=SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION
rm -rf "$OUT"
mkdir -p "$OUT/incoming"

if [ "${AVAILABLE_NOW:-0}" = 1 ]; then
    $PYTHON "$HERE/slices.py" "$CHARLEY" "$OUT/incoming" --every 0
    WHEN=--available-now
else
    $PYTHON "$HERE/slices.py" "$CHARLEY" "$OUT/incoming" --every 1 &
    WHEN="--trigger 1"
fi
echo "== High wind at 384 US weather stations, live: 10-minute slices of 8 August 2004"
$ETALIS stream "$HERE/wind_area.etl" --source "$OUT/incoming" --input-format csv --columns "$COLUMNS" \
    --time SAMPLINGTIME --time-format '%Y-%m-%d %H:%M:%S.%f+0:00' --event obs --args STATIONID,WINDSPEED \
    --partition-by STATIONID --checkpoint "$OUT/checkpoint" --out "$OUT/detections" --format jsonl \
    --max-files-per-trigger "${PER_TRIGGER:-6}" $WHEN --print lines --names "$HERE/stations.csv"
