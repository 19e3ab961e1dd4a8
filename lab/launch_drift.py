"""Does the host launch time of one solution move between fresh processes on a quiet host? (issue 11)

    python lab/launch_drift.py --solution benchmarks/solutions/level1/39_rmsnorm__triton.py [--runs 6] [--out DIR]

The stability benchmark (docs/evidence/2026-12-02-h200-stability-merged.md) shows the device clock of a solution
steady to <1% while its end-to-end time minus its device time (the host's launch path) moves by up to 2x
between runs, quiet ones included. This judges one solution with `kerneljudge eval` in `--runs` fresh
processes, one after the other on an otherwise idle machine (the first run, not counted, fills the build
cache), and prints per run: end-to-end and device times of reference and solution, their differences (the
launch overhead the end-to-end clock includes), and the clock of every core as /proc/cpuinfo reports it
before and after the run, so a change in CPU frequency can be told from a change in the process.

Problems are found as the stability benchmark finds them: a bundled example's solution under
src/kerneljudge/data/examples/, a suite problem's under benchmarks/solutions/levelN/. Writes DIR/launch-drift.json
and prints a table (no GPU needed to read the result; a GPU to make it).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from kerneljudge.core.paths import examples_root, problems_root

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = examples_root()
SUITE = problems_root()


def problem_of(solution: Path) -> Path:
    """The problem a solution file is named after (<problem stem>__<tag>.py)."""
    stem = solution.stem.split("__", 1)[0]
    level = solution.parent.name
    candidates = [SUITE / level / f"{stem}.py", EXAMPLES / "problems" / f"{stem}.py"]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise SystemExit(f"{solution}: no problem named {stem}.py in {', '.join(str(c.parent) for c in candidates)}")


def core_clocks() -> list[float]:
    """MHz per core from /proc/cpuinfo (empty where it is not reported)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    return [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)]


def judge_once(problem: Path, solution: Path, device: str, cache: Path) -> dict:
    cmd = [sys.executable, "-m", "kerneljudge", "eval", "--problem", str(problem), "--solution", str(solution),
           "--json", "--device", device, "--cache-dir", str(cache)]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    wall = time.monotonic() - started
    try:
        verdict = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"kerneljudge eval printed no verdict (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return {"verdict": verdict, "wall_s": round(wall, 1)}


def row(run: int, verdict: dict, before: list[float], after: list[float]) -> dict:
    get = verdict.get
    sol, ref, sol_dev, ref_dev = get("sol_ms"), get("ref_ms"), get("sol_device_ms"), get("ref_device_ms")
    gap = (lambda a, b: None if a is None or b is None else round((a - b) * 1e3, 1))
    return {"run": run, "verdict": get("verdict"), "sol_ms": sol, "sol_device_ms": sol_dev, "ref_ms": ref,
            "ref_device_ms": ref_dev, "sol_launch_us": gap(sol, sol_dev), "ref_launch_us": gap(ref, ref_dev),
            "speedup": get("speedup_end_to_end"), "speedup_device": get("speedup_device"),
            "mhz_before": _span(before), "mhz_after": _span(after)}


def _span(clocks: list[float]) -> str:
    return f"{min(clocks):.0f}-{max(clocks):.0f}" if clocks else "-"


def spread(values: list[float]) -> float | None:
    values = [v for v in values if isinstance(v, (int, float)) and v > 0]
    return round(max(values) / min(values) - 1, 4) if len(values) > 1 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solution", type=Path, action="append", required=True, help="repeat for several")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/kj-launch-drift"))
    parser.add_argument("--out", type=Path, default=None, help="folder for launch-drift.json")
    args = parser.parse_args()
    report = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "solutions": {}}
    for solution in args.solution:
        solution = solution.resolve()
        problem = problem_of(solution)
        judge_once(problem, solution, args.device, args.cache_dir)   # fills the build and Triton caches
        rows = []
        for run in range(1, args.runs + 1):
            before = core_clocks()
            got = judge_once(problem, solution, args.device, args.cache_dir)
            rows.append({**row(run, got["verdict"], before, core_clocks()), "wall_s": got["wall_s"]})
            print(json.dumps(rows[-1]), flush=True)
        summary = {"spread_speedup": spread([r["speedup"] for r in rows]),
                   "spread_speedup_device": spread([r["speedup_device"] for r in rows]),
                   "sol_launch_us": _range([r["sol_launch_us"] for r in rows]),
                   "ref_launch_us": _range([r["ref_launch_us"] for r in rows])}
        report["solutions"][solution.name] = {"problem": str(problem.relative_to(ROOT)), "runs": rows,
                                              "summary": summary}
        print(f"{solution.name}: {json.dumps(summary)}", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "launch-drift.json").write_text(json.dumps(report, indent=1))


def _range(values: list) -> str:
    values = [v for v in values if isinstance(v, (int, float))]
    if not values:
        return "-"
    return f"{min(values):.0f}-{max(values):.0f} (median {statistics.median(values):.0f})"


if __name__ == "__main__":
    main()
