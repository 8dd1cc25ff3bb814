"""`python -m stancelab` runs the command line."""

import sys

from stancelab.core.cli import main

sys.exit(main())
