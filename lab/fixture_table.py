"""Verdicts of a fixture run log against the fixtures' labels, as a markdown table (for docs/evidence/).

    python lab/fixture_table.py RUN.jsonl [--policy strict]

Reads the labels at the top of tests/fixtures/solutions/*.py (tests/labels.py); a verdict whose fixture has
no label there (renamed or removed since the run) is listed with expected "?".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kerneljudge.core.jsonl import read_objects  # noqa: E402
from tests.labels import collect  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--policy", default="strict")
    args = parser.parse_args(argv)
    labels = {case.path.name: case for case in collect(ROOT / "tests" / "fixtures" / "solutions")}
    rows = [v for v in read_objects(Path(args.log)) if "verdict" in v]
    matched = 0
    print("| fixture | threat | expected | got | ok | flags | speedup | device clock | numerics | reason |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for v in sorted(rows, key=lambda v: Path(v["solution"]).name):
        name = Path(v["solution"]).name
        case = labels.get(name)
        expected = (case.expect_lenient or case.expect) if case and args.policy == "lenient" else \
            (case.expect if case else "?")
        ok = v["verdict"] == expected
        matched += ok
        speedup = f"{v['speedup']:.3g}" if v.get("speedup") else ""
        reason = v.get("reason", "").replace("|", "/")[:110]
        print(f"| {name} | {(case.threat if case else '') or ''} | {expected} | {v['verdict']} | {'yes' if ok else 'NO'} | "
              f"{', '.join(v.get('flags') or [])} | {speedup} | {v.get('device_clock') or ''} | "
              f"{(v.get('numerics') or {}).get('class') or ''} | {reason} |")
    print(f"\n{matched}/{len(rows)} verdicts match their fixture's label.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
