"""Does a verdict change when its solution is judged alone? (issue 31's bar: "no honest solution's verdict changes
between a batch and `kerneljudge eval` of the same pair alone").

    python3 lab/batch_vs_alone.py RUN_LOG.jsonl [RUN_LOG ...] --out REPORT.md [--count 20] [--seed 1]

Takes up to --count verdicts from the batch run logs (accepted ones first, then the rest that ran on the device:
neither rejected by the static checks nor unjudgeable), judges each pair again with `kerneljudge eval --json` in a
process of its own, under the policy, device and held-out mode the batch used, and writes a table of both
verdicts. Exit status 1 if any verdict or acceptance differs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "verdict" in row:
                rows.append(row)
    return rows


def choose(rows: list[dict], count: int, seed: int) -> list[dict]:
    """Accepted verdicts first, then other ones the device decided, in a seeded random order."""
    ran = [r for r in rows if r["verdict"] not in ("rejected", "unjudgeable")]
    random.Random(seed).shuffle(ran)
    ran.sort(key=lambda r: not r.get("accepted"))
    return ran[:count]


def judge_alone(row: dict, timeout_s: float) -> dict:
    command = [sys.executable, "-m", "kerneljudge", "eval", "--problem", row["problem"], "--solution", row["solution"],
               "--json", "--policy", row.get("policy", "strict"), "--device", row.get("device", "auto"),
               "--held-out", (row.get("shapes") or {}).get("held_out_mode", "aligned")]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        return json.loads(done.stdout)
    except (subprocess.TimeoutExpired, ValueError) as exc:
        return {"verdict": "eval_failed", "accepted": None, "reason": f"{type(exc).__name__}: {exc}"[:200]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    chosen = choose(read_rows(args.logs), args.count, args.seed)
    lines = ["| problem | solution | batch | alone | same |", "|---|---|---|---|---|"]
    differ = 0
    for n, row in enumerate(chosen, 1):
        alone = judge_alone(row, args.timeout)
        same = (alone.get("verdict"), alone.get("accepted")) == (row["verdict"], row.get("accepted"))
        differ += not same
        lines.append(f"| {row.get('problem_id')} | {Path(row['solution']).name} | {row['verdict']}"
                     f"{' (accepted)' if row.get('accepted') else ''} | {alone.get('verdict')}"
                     f"{' (accepted)' if alone.get('accepted') else ''} | {'yes' if same else 'NO: ' + str(alone.get('reason'))[:160]} |")
        print(f"[{n}/{len(chosen)}] {row.get('problem_id')}: {row['verdict']} / {alone.get('verdict')}", flush=True)
    summary = f"{len(chosen) - differ} of {len(chosen)} verdicts the same when judged alone"
    Path(args.out).write_text(f"# Batch against alone\n\n{summary}.\n\n" + "\n".join(lines) + "\n")
    print(summary)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
