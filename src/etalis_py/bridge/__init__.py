"""The bridge to the embedded SWI-Prolog: its requests and replies, the
Engine, batches as packed columns, checkpoints, and the client of an
engine served over HTTP."""
