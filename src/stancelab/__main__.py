"""`python -m stancelab` runs the command line."""

import sys

from stancelab.cli import main

sys.exit(main())
