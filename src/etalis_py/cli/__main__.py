"""``python -m etalis_py.cli``: the ``etalis`` command."""

import sys

from .entry import main

sys.exit(main())
