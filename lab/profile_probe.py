"""Does the device clock disagree with the profiler, or does one profiled call run on a colder GPU? (issue 11)

    python lab/profile_probe.py --problem P.py --solution S.py [--out FILE]

The stability benchmark compares the judge's device clock (CUDA-graph replays, worker/device_clock.py) with
the profiler's device time of one profiled forward call (the verdict's `profile`). For every single-kernel
solution they agreed within 1.3% except one compute-bound CUDA kernel (1_gelu_scale__cuda.py: device clock
6% below the profiled call, in all six runs). This measures one model, in this process, four ways:
  graph       - the judge's device clock (flush, spin kernel, replay; median of replays)
  judge       - as the verdict's profile: one warm call, then single calls each under a fresh profiler
  hot         - 20 calls back to back under one profiler session, device time per call
  events      - the end-to-end clock (harness/timing.Timer: flush, synchronise, events), median
for the problem's Model and the solution's ModelNew. If `hot` agrees with `graph` while `judge` does not, the
gap is the GPU's state after the idle moments around a lone profiled call, not the device clock.
The solution is loaded as written (its load_inline compiles here, with torch's own build).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


HOT_CALLS = 20


def profiled_ms(run: dict) -> float:
    return (sum(r["us"] for r in run["rows"]) + run["left_out_us"]) / 1e3


def measure(model, make, timer) -> dict:
    import torch
    from torch.autograd import profiler

    from kerneljudge.worker import device_clock, profiling

    _, graph = device_clock.measure(model, make, 1, timer, 1.0)
    model(*make(2))
    judge = [profiled_ms(profiling.profile_call(model, make(3 + k), "cuda")) for k in range(3)]
    inputs = make(10)
    for _ in range(5):
        model(*inputs)
    torch.cuda.synchronize()
    with profiler.profile(use_kineto=True, use_cpu=True, use_device="cuda") as prof:
        for _ in range(HOT_CALLS):
            model(*inputs)
        torch.cuda.synchronize()
    hot = profiled_ms(profiling.summarize(prof.function_events, "cuda", 0.0)) / HOT_CALLS
    events = [timer.time_call(model, inputs)[1]["event_ms"] for _ in range(60)]
    return {"graph_ms": graph.get("median_ms"), "graph_method": graph.get("method"),
            "judge_profile_ms": judge, "hot_profile_ms": hot, "events_ms": statistics.median(events[10:])}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", required=True)
    p.add_argument("--solution", required=True)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    from kerneljudge.worker import loading, timing

    problem = loading.load_module(args.problem)
    solution = loading.load_module(args.solution)
    make = lambda seed: loading.make_inputs(problem, seed, "cuda", "fp32")  # noqa: E731
    timer = timing.Timer("cuda")
    report = {"problem_file": args.problem, "solution_file": args.solution}
    for name, cls in (("reference", problem.Model), ("solution", solution.ModelNew)):
        model = loading.build_model(cls, loading.make_init_inputs(problem, 1), 1, "cuda", "fp32")
        report[name] = measure(model, make, timer)
        print(name, json.dumps(report[name]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
