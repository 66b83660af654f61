"""``python -m etalis_py``: the ``etalis`` command."""

import sys

from .cli import main

sys.exit(main())
