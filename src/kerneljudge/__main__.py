"""python -m kerneljudge: the command line (kerneljudge.cli)."""

import sys

from .cli import main

sys.exit(main())
