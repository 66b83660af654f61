#!/bin/sh
# What `make demo` runs (tests/test_demo.py runs it too): high wind and wind
# areas over 384 US weather stations on Spark, as a table in the stations'
# local times and a timeline PNG; then the Boxing Day 2010 blizzard at JFK.
#
#   ETALIS   the etalis command (default: etalis)
#   DATA     the folder of the data (default: data, in the repository)
#   OUT      where the files go (default: out/demo)
set -eu
ETALIS=${ETALIS:-etalis}
DATA=${DATA:-data}
OUT=${OUT:-out/demo}
HERE=$(dirname "$0")
CHARLEY=$DATA/weather/lsd-charley-2004-08-08-obs.csv
JFK=$DATA/weather/noaa-jfk-hourly-2010-2018.csv
COLUMNS=SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION
TIME_FORMAT='%Y-%m-%d %H:%M:%S.%f+0:00'
mkdir -p "$OUT"

echo "== High wind at 384 US weather stations, 8 August 2004 (LinkedSensorData)"
echo "\$ etalis replay $HERE/wind_area.etl --partition-by STATIONID ...   (Spark, local mode)"
$ETALIS replay "$HERE/wind_area.etl" --events "$CHARLEY" --columns "$COLUMNS" \
    --time SAMPLINGTIME --time-format "$TIME_FORMAT" --event obs --args STATIONID,WINDSPEED \
    --partition-by STATIONID --no-progress > "$OUT/wind_area.jsonl" 2> "$OUT/replay.log" \
    || { cat "$OUT/replay.log"; exit 1; }
sed -n '/^rows:/,$p' "$OUT/replay.log"
echo
$ETALIS table "$OUT/wind_area.jsonl" --names "$HERE/stations.csv"
$ETALIS plot "$OUT/wind_area.jsonl" --names "$HERE/stations.csv" -o "$OUT/timeline.png" \
    --title "High wind and wind areas, 8 August 2004" \
    --events "$CHARLEY" --columns "$COLUMNS" --time SAMPLINGTIME --time-format "$TIME_FORMAT" \
    --signal WINDSPEED --key STATIONID --ylabel "wind speed (mph)" --level 10
echo
echo "== Blizzards at JFK airport (KJFK), 2010-2018 (NOAA hourly observations, in the airport's local time)"
echo "\$ etalis run examples/blizzard/blizzard.etl ..."
$ETALIS run "$HERE/../blizzard/blizzard.etl" --events "$JFK" \
    --event reading --args VISIBILITY,WindSpeed \
    --time DATE --time-format '%d-%m-%Y %H:%M' --time-zone Etc/GMT+5 --quiet > "$OUT/blizzard.jsonl"
$ETALIS table "$OUT/blizzard.jsonl" --lines --no-args --tz America/New_York
