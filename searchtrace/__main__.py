"""``python -m searchtrace``: the command line."""

import sys

from searchtrace.cli import main

sys.exit(main())
