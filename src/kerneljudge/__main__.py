"""python -m kerneljudge: the command line (kerneljudge.cli.main)."""

import sys

from kerneljudge.cli.main import main

sys.exit(main())
