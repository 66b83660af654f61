"""The ``etalis`` command: run | replay | stream | check | compile | table | plot | import-etalis | serve.

One module per command or family of commands (:mod:`.running`, :mod:`.spark`
for replay and stream, :mod:`.checking` for check and compile,
:mod:`.readable` for table and plot, :mod:`.serve`), the options they
share in :mod:`.options`, and the parser and the errors in words in
:mod:`.entry`."""

from .checking import check
from .entry import main, parse, parser
from .options import (EXIT_BUG, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_LIMIT, EXIT_OK, EXIT_RULES, EXIT_TERMINATED,
                      EXIT_USAGE)
from .readable import readable_output
from .running import run
from .spark import replay, stream

__all__ = ["EXIT_BUG", "EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_LIMIT", "EXIT_OK", "EXIT_RULES", "EXIT_TERMINATED",
           "EXIT_USAGE", "check", "main", "parse", "parser", "readable_output", "replay", "run", "stream"]
