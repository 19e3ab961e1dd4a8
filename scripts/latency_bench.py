"""How long judging one already-built solution takes: in a `Judge` session, and as a cold `kerneljudge eval`.

    python scripts/latency_bench.py --out DIR [--device cuda] [--repeats 5] [--problem P --solution S]
                                    [--compare-cold-start]

1. builds the solution once (not counted);
2. session: one `Judge` judges it `--repeats` times in a row; the first judgement starts the session's
   reference process, the others find everything warm (the issue's bar: at most 3 s each on an H200);
3. with --compare-cold-start, step 2 again with KERNELJUDGE_WARM_START=0 (solution processes started cold
   instead of forked from a warm template), to show what the template saves;
4. eval: `--repeats` fresh `python -m kerneljudge eval --json` processes, timed from outside (bar: 8 s;
   a single judgement starts its solution process cold: a template would only add its own start).
Default options throughout (timing budget included), as a user would judge. Writes DIR/latency-bench.json
and DIR/latency-bench.md after each step.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from kerneljudge import Judge
from kerneljudge.core.paths import examples_root

EXAMPLES = examples_root()
DEFAULTS = {"cuda": ("1_gelu_scale.py", "1_gelu_scale__cuda.py"), "cpu": ("1_gelu_scale.py", "1_gelu_scale__cpp.py")}


def session_runs(problem: str, solution: str, device: str, cache: str, repeats: int) -> list[dict]:
    runs = []
    with Judge(device=device, cache_dir=cache) as judge:
        for _ in range(repeats + 1):  # the first one starts the session's reference process
            started = time.monotonic()
            verdict = judge.judge(problem, solution)
            runs.append({"wall_s": round(time.monotonic() - started, 3), "verdict": verdict.verdict,
                         "phases_s": verdict.phases_s, "started": verdict.sandbox.get("started")})
            print(f"session: {verdict.verdict} in {runs[-1]['wall_s']} s ({runs[-1]['started']} start)",
                  file=sys.stderr, flush=True)
    return runs


def eval_runs(problem: str, solution: str, device: str, cache: str, repeats: int, env: dict) -> list[dict]:
    runs = []
    command = [sys.executable, "-m", "kerneljudge", "eval", "--problem", problem, "--solution", solution,
               "--device", device, "--cache-dir", cache, "--json"]
    for _ in range(repeats):
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        wall = time.monotonic() - started
        try:
            verdict = json.loads(done.stdout)
        except ValueError:
            verdict = {"verdict": f"no JSON (exit {done.returncode}): {done.stderr[-300:]}"}
        runs.append({"wall_s": round(wall, 3), "verdict": verdict.get("verdict"), "judge_wall_s": verdict.get("wall_s"),
                     "phases_s": verdict.get("phases_s"), "started": (verdict.get("sandbox") or {}).get("started")})
        print(f"eval: {runs[-1]['verdict']} in {runs[-1]['wall_s']} s ({runs[-1]['started']} start)",
              file=sys.stderr, flush=True)
    return runs


def summary(runs: list[dict]) -> dict:
    walls = [r["wall_s"] for r in runs]
    return {"median_s": round(statistics.median(walls), 3), "max_s": max(walls), "min_s": min(walls),
            "verdicts": sorted({str(r["verdict"]) for r in runs}), "started": sorted({str(r["started"]) for r in runs})}


def session_with(problem: str, solution: str, device: str, cache: str, repeats: int, warm: bool) -> dict:
    """A Judge session with solution processes forked from the warm template, or started cold."""
    previous = os.environ.get("KERNELJUDGE_WARM_START")
    os.environ["KERNELJUDGE_WARM_START"] = "1" if warm else "0"
    try:
        session = session_runs(problem, solution, device, cache, repeats)
    finally:
        if previous is None:
            os.environ.pop("KERNELJUDGE_WARM_START", None)
        else:
            os.environ["KERNELJUDGE_WARM_START"] = previous
    return {"first": session[0], "runs": session[1:], "summary": summary(session[1:])}


def markdown(result: dict) -> str:
    lines = [f"# Latency of one already-built solution: {result['device_name'] or result['device']}", "",
             f"- date: {result['date']}", f"- device: {result['device']}, {result['cpus']} CPU cores",
             f"- versions: python {result['python']}, torch {result['torch']}",
             f"- problem / solution: {result['problem']} / {result['solution']}",
             f"- repeats: {result['repeats']} (default judge options)", "", "Command:", "",
             f"```\n{result['command']}\n```", "",
             "| how | median s | max s | min s | first s | solution processes |", "|---|---|---|---|---|---|"]
    for label, part in result["sessions"].items():
        s = part["summary"]
        lines.append(f"| Judge session, {label} | {s['median_s']} | {s['max_s']} | {s['min_s']} | "
                     f"{part['first']['wall_s']} | {', '.join(s['started'])} |")
    if result.get("eval"):
        e = result["eval"]["summary"]
        lines.append(f"| cold `kerneljudge eval` | {e['median_s']} | {e['max_s']} | {e['min_s']} | - | "
                     f"{', '.join(e['started'])} |")
    lines += ["", "Phases of the last judgement of each (s):", ""]
    for label, part in result["sessions"].items():
        lines.append(f"- Judge session, {label}: {json.dumps(part['runs'][-1]['phases_s'])}")
    if result.get("eval"):
        lines.append(f"- cold eval: {json.dumps(result['eval']['runs'][-1]['phases_s'])}")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--problem")
    p.add_argument("--solution")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cache-dir", default=None, help="build cache (default: DIR/cache)")
    p.add_argument("--compare-cold-start", action="store_true")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problem = args.problem or str(EXAMPLES / "problems" / DEFAULTS[args.device][0])
    solution = args.solution or str(EXAMPLES / "solutions" / DEFAULTS[args.device][1])
    cache = args.cache_dir or str(out / "cache")
    with Judge(device=args.device, cache_dir=cache) as judge:  # builds it (not counted)
        built = judge.judge(problem, solution)
        device_name, versions = built.device_name, built.versions
    print(f"built: {built.verdict} in {built.wall_s} s", file=sys.stderr)
    import torch

    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": args.device, "device_name": device_name,
              "cpus": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
              "versions": versions, "problem": Path(problem).name, "solution": Path(solution).name,
              "repeats": args.repeats, "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
              "build": {"verdict": built.verdict, "wall_s": built.wall_s}, "sessions": {}}

    def save() -> None:  # after every part: a run cut short still leaves what it measured
        (out / "latency-bench.json").write_text(json.dumps(result, indent=1))
        (out / "latency-bench.md").write_text(markdown(result))

    result["sessions"]["warm template"] = session_with(problem, solution, args.device, cache, args.repeats, True)
    save()
    if args.compare_cold_start:
        result["sessions"]["cold start"] = session_with(problem, solution, args.device, cache, args.repeats, False)
        save()
    env = dict(os.environ)
    runs = eval_runs(problem, solution, args.device, cache, args.repeats, env)
    result["eval"] = {"runs": runs, "summary": summary(runs)}
    save()
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
