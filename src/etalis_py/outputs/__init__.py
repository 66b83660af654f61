"""Outputs: detections written for programs (JSON lines, CSV, Parquet) and
for people (tables, timelines), and the progress line."""
