"""Measure reference baselines for the bundled suite with the judge's own timing method.

    python scripts/baselines.py --out results/baselines-h200.jsonl [--mode eager|compile|both] [--level N]
                                [--limit N] [--budget 0.5] [--preset default|small] [--device cuda|cpu]

One JSON line per (problem, mode): the reference's median time and statistics, the machine (GPU, driver,
torch, CUDA, Triton), the date, and, at the default size, the speed-of-light time of `kerneljudge suite`
and the reference's fraction of it. Re-running skips lines already in --out (same problem hash, mode,
preset, device), so a long measurement can be split over several calls. Eager and torch.compile times
let fast_p be reported against either baseline without re-timing the reference (score.rebaseline).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from kerneljudge.execute import environment  # noqa: E402
from kerneljudge.execute.reference import ReferenceError, ReferenceService  # noqa: E402
from kerneljudge.suite.catalog import list_problems  # noqa: E402


def _read_rows(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a line torn by a crash
    return rows


def _key(row: dict) -> tuple:
    return row.get("problem_sha256"), row.get("mode"), row.get("preset"), row.get("device")


def _speed_of_light(problem) -> float | None:
    try:
        from kerneljudge.suite.sol import sol_problem

        return sol_problem(problem).get("sol_ms")
    except Exception:  # counting is best effort: a baseline is still worth recording without it
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", choices=("eager", "compile", "both"), default="eager")
    parser.add_argument("--level", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="at most this many new measurements")
    parser.add_argument("--budget", type=float, default=0.5, help="timing budget per problem and mode (s)")
    parser.add_argument("--preset", choices=("default", "small"), default="default")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32")
    args = parser.parse_args()

    device = environment.resolve_device(args.device)
    out = Path(args.out)
    done = {_key(r) for r in _read_rows(out) if r.get("ref_ms") is not None}
    modes = ["eager", "compile"] if args.mode == "both" else [args.mode]
    service = ReferenceService(device, args.precision, 1, environment.default_cache_dir())
    machine = service.hello()
    measured = 0
    try:
        for problem in list_problems(args.level):
            preset = problem.preset("small") if args.preset == "small" else {}
            for mode in modes:
                row_key = (problem.sha256, mode, args.preset, device)
                if row_key in done or (args.limit is not None and measured >= args.limit):
                    continue
                started = time.monotonic()
                row = {"problem_id": problem.id, "problem_sha256": problem.sha256, "mode": mode,
                       "preset": args.preset, "device": device, "precision": args.precision,
                       "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                       "machine": machine}
                try:
                    stats = service.timing(problem.sha256, problem.path, preset, secrets.randbits(62), args.budget,
                                           use_cache=False, compiled=(mode == "compile"))
                    row.update(ref_ms=stats["median_ms"], timing=stats)
                except ReferenceError as exc:
                    row.update(ref_ms=None, error=str(exc)[-2000:])
                if args.preset == "default" and row.get("ref_ms"):
                    sol_ms = _speed_of_light(problem)
                    row.update(sol_ms=sol_ms, fraction_of_sol=(sol_ms / row["ref_ms"]) if sol_ms else None)
                row["wall_s"] = round(time.monotonic() - started, 2)
                with out.open("a") as f:
                    f.write(json.dumps(row, sort_keys=True) + "\n")
                measured += 1
                print(f"{problem.id} {mode}: {row.get('ref_ms')} ms ({row['wall_s']} s)", file=sys.stderr, flush=True)
    finally:
        service.close()
    print(f"{measured} new measurement(s) in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
