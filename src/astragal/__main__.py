"""``python -m astragal``: the command line, as the ``astragal`` command runs it."""

import sys

from .cli import main

sys.exit(main())
