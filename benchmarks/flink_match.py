"""The replay benchmark's rule in Flink SQL's MATCH_RECOGNIZE, run by PyFlink.

    <python with apache-flink> benchmarks/flink_match.py DATA.csv > matches.jsonl

The rule of benchmarks/replay.py,

    rise(S, V1, V2) <- (reading(S, V1) seq reading(S, V2)) within 200 where V2 >= V1 + 90.

detects every pair of readings of a sensor.  MATCH_RECOGNIZE finds at most
one match per row it starts from (it has no "all matches" mode), so the
query asks for the first later reading of the sensor that qualifies
(a reluctant ``C*?`` between A and B, ``SKIP TO NEXT ROW``): for each
reading, the earliest ``rise`` that starts with it.  benchmarks/replay.py
compares these with that projection of etalis's detections.  Each match
is printed as a JSON line ``{"event": "rise", "args": [S, V1, V2],
"start": T1, "end": T2}``.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    data = sys.argv[1]
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    env.execute_sql(f"""
        CREATE TABLE readings (
            t DOUBLE, sensor STRING, `value` BIGINT,
            ts AS TO_TIMESTAMP_LTZ(CAST(ROUND(t * 1000) AS BIGINT), 3),
            WATERMARK FOR ts AS ts
        ) WITH ('connector' = 'filesystem', 'path' = '{data}', 'format' = 'csv',
                'csv.ignore-parse-errors' = 'false')""")
    result = env.execute_sql("""
        SELECT sensor, v1, v2, t1, t2 FROM readings
        MATCH_RECOGNIZE (
            PARTITION BY sensor
            ORDER BY ts
            MEASURES A.`value` AS v1, B.`value` AS v2, A.t AS t1, B.t AS t2
            ONE ROW PER MATCH
            AFTER MATCH SKIP TO NEXT ROW
            PATTERN (A C*? B) WITHIN INTERVAL '200' SECOND(3)
            DEFINE B AS B.`value` >= A.`value` + 90 AND B.t - A.t <= 200
        )""")
    out = sys.stdout
    with result.collect() as rows:
        for r in rows:
            out.write(json.dumps({"event": "rise", "args": [r[0], r[1], r[2]], "start": r[3], "end": r[4]}) + "\n")


if __name__ == "__main__":
    main()
