"""Inputs: event stream files, tables, DataFrames, graph streams and the
streams of ETALIS test drivers, read into batches of engine input."""
