"""python -m kerneljudge.sandbox: say which layers of the box work on this machine (exit 1 if incomplete)."""

from __future__ import annotations

import json
import sys

from kerneljudge.sandbox.probing import describe, probe

report = probe()
print(describe(report))
print(json.dumps(report.to_dict(), indent=2))
sys.exit(0 if report.complete else 1)
