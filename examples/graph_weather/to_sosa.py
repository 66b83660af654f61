"""Convert the LinkedSensorData observations of Hurricane Charley's day
(``lsd-charley-2004-08-08-obs.csv``, ``lsd-stations.csv``) to a stream of
SOSA/SSN observation graphs, one named graph per station and sampling time,
in N-Quads, and the stations to Turtle background knowledge.

    python examples/graph_weather/to_sosa.py data/weather \\
        --stations 3065,3114,3269,3435,3489 --out examples/graph_weather

writes ``observations.nq`` and ``stations.ttl`` into ``--out``.  Each graph
holds a ``wt:WindObservation`` (wind speed, mph) and a
``wt:TemperatureObservation`` (air temperature, degrees F) of the station's
sensor, each with its result and result time; a missing reading is left
out.  The graph's time is the triple ``<graph> prov:generatedAtTime T`` in
the default graph.  ``stations.ttl`` says which station (a ``sosa:Platform``
with its code, latitude, longitude and altitude) hosts each sensor.
"""

from __future__ import annotations

import argparse
import csv
from datetime import datetime, timezone
from pathlib import Path

LSD = "http://example.org/etalis-py/lsd/"
SOSA = "http://www.w3.org/ns/sosa/"
WT = "http://example.org/etalis-py/weather#"
GEO = "http://www.w3.org/2003/01/geo/wgs84_pos#"
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD = "http://www.w3.org/2001/XMLSchema#"
#: Columns of the observation file (it has no header), as its README lists them.
COLUMNS = ("SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,WINDDIRECTION,"
           "WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,SOILTEMPERATURE,VISIBILITY,"
           "PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION").split(",")
READINGS = (("WINDSPEED", "wind", "WindObservation", "windSpeed"),
            ("AIRTEMPERATURE", "temperature", "TemperatureObservation", "airTemperature"))


def number(text: str) -> str:
    """An N-Quads literal of a reading: an xsd:integer or an xsd:decimal."""
    value = float(text)
    if value.is_integer() and "." not in text:
        return f'"{int(value)}"^^<{XSD}integer>'
    return f'"{text}"^^<{XSD}decimal>'


def observation_graph(row: dict[str, str]) -> list[str]:
    """The N-Quads lines of one row: its time in the default graph, then its graph."""
    when = datetime.strptime(row["SAMPLINGTIME"], "%Y-%m-%d %H:%M:%S.%f+0:00").replace(tzinfo=timezone.utc)
    stamp = f'"{when.strftime("%Y-%m-%dT%H:%M:%SZ")}"^^<{XSD}dateTime>'
    station = row["STATIONID"]
    key = f"{station}-{when.strftime('%H%M')}"
    graph = f"<{LSD}graph/{key}>"
    lines = [f"{graph} {PROV_AT} {stamp} .\n"]
    for column, name, kind, prop in READINGS:
        if not row[column]:
            continue
        obs = f"<{LSD}observation/{key}/{name}>"
        for p, o in ((RDF_TYPE, f"<{WT}{kind}>"),
                     (f"<{SOSA}madeBySensor>", f"<{LSD}sensor/{station}>"),
                     (f"<{SOSA}observedProperty>", f"<{WT}{prop}>"),
                     (f"<{SOSA}hasSimpleResult>", number(row[column])),
                     (f"<{SOSA}resultTime>", stamp)):
            lines.append(f"{obs} {p} {o} {graph} .\n")
    return lines


def station_triples(row: list[str]) -> str:
    """The Turtle of one station of ``lsd-stations.csv`` and its sensor."""
    code, alt, lat, lon, station = row
    lines = [f"<{LSD}sensor/{station}> sosa:isHostedBy <{LSD}station/{code}> .",
             f"<{LSD}station/{code}> a sosa:Platform ;",
             f'    lsd:code "{code}"']
    for prop, value in (("geo:alt", alt), ("geo:lat", lat), ("geo:long", lon)):
        if value:
            lines[-1] += " ;"
            lines.append(f"    {prop} {value}")
    return "\n".join(lines) + " .\n"


def convert(data: Path, stations: set[str], out: Path) -> tuple[int, int]:
    """Write ``observations.nq`` and ``stations.ttl``; the numbers of graphs
    and stations written."""
    graphs = 0
    with (data / "lsd-charley-2004-08-08-obs.csv").open(newline="") as f, \
            (out / "observations.nq").open("w") as nq:
        for values in csv.reader(f):
            row = dict(zip(COLUMNS, values))
            if row["STATIONID"] in stations:
                nq.writelines(observation_graph(row))
                graphs += 1
    found = 0
    with (data / "lsd-stations.csv").open(newline="") as f, (out / "stations.ttl").open("w") as ttl:
        ttl.write(f"@prefix lsd: <{LSD}> .\n@prefix sosa: <{SOSA}> .\n@prefix geo: <{GEO}> .\n\n")
        for station in csv.reader(f):
            if station[4] in stations:
                ttl.write(station_triples(station))
                found += 1
    return graphs, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the folder of lsd-charley-2004-08-08-obs.csv and lsd-stations.csv")
    parser.add_argument("--stations", required=True, help="station ids, comma-separated")
    parser.add_argument("--out", type=Path, default=Path("."), help="the folder to write into")
    ns = parser.parse_args()
    try:
        ns.out.mkdir(parents=True, exist_ok=True)
        graphs, stations = convert(ns.data, set(ns.stations.split(",")), ns.out)
    except OSError as e:  # a missing data file, a folder that cannot be written
        parser.exit(1, f"to_sosa.py: error: {e.strerror}: {e.filename}\n")
    print(f"{graphs} observation graphs, {stations} stations")


if __name__ == "__main__":
    main()
