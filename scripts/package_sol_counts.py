"""Count every bundled suite problem's FLOPs and bytes once and package them with the suite.

The judge's speed-of-light check (threat C4) and `kerneljudge suite` then read the counts by problem hash
instead of starting a worker for each problem (suite/data/sol_counts.json; counts are independent of the
machine: the forward runs on torch's "meta" device). Problems whose counting needs a missing library
(level 4 needs `transformers`) are left out and counted at judging time as before.

    python scripts/package_sol_counts.py [--out src/kerneljudge/data/suite/sol_counts.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from kerneljudge.core.problem import read_problem
from kerneljudge.judging import roofline
from kerneljudge.suite.catalog import problem_files
from kerneljudge.judging.lint import LintWorker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(roofline.PACKAGED_COUNTS))
    args = parser.parse_args(argv)
    counts, skipped = {}, []
    with tempfile.TemporaryDirectory() as scratch, LintWorker(scratch) as worker:
        files = problem_files()
        for n, path in enumerate(files, 1):
            problem = read_problem(path)
            found = roofline.measure_with(worker, problem, use_cache=False)
            keep = {k: found.get(k) for k in ("flops", "flops_by_op", "inputs", "params", "outputs", "notes")}
            if found.get("error"):
                skipped.append(f"{problem.id}: {found['error'][:120]}")
            else:
                counts[problem.sha256] = {**keep, "problem": problem.id}
            print(f"[{n}/{len(files)}] {problem.id}", file=sys.stderr, flush=True)
    Path(args.out).write_text(json.dumps({"count_version": roofline.COUNT_VERSION, "counts": counts},
                                         sort_keys=True, indent=0) + "\n")
    print(f"packaged counts of {len(counts)} problems in {args.out}; left out {len(skipped)}", file=sys.stderr)
    for line in skipped:
        print(f"  {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
