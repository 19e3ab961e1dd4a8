"""Why does the end-to-end clock of a sub-millisecond model move between judge runs? (issue 11, diagnosis)

    python lab/e2e_probe.py --problem P.py --solution S.py [--processes 3] [--calls 300] [--cores 15]
                                [--hash-seeds 0,0,1] [--aslr on,off] [--ways tight,pipe]

Times the problem's Model and the solution's ModelNew with the judge's own Timer (worker/timing.py: fresh
inputs, L2 flushed, device synchronised, CUDA events) in fresh processes, in four ways of spending the time
between two timed calls, the way the judge's processes do:
  tight  - nothing between calls (the reference process's rounds)
  sleep  - the process sleeps 1 ms (like a solution process blocked on the judge's next message)
  spin   - the process spins 1 ms on the CPU instead
  pipe   - the process blocks on a pipe that a helper thread writes after 1 ms (what the solution process does)
For each process, way and model it prints the median, the quantiles and the minimum of the call's time and of
its launch overhead (event time - the model's device time from a CUDA graph replay). Writes --out as JSON.
--hash-seeds and --aslr set each process's PYTHONHASHSEED and address-space randomisation in turn, to see
whether a process's launch-overhead level follows its memory layout (CPython's method cache is indexed by
the addresses of attribute names, so collisions there differ from one process to the next).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


WAYS = ("tight", "sleep", "spin", "pipe")


def quantiles(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    q = lambda f: s[min(len(s) - 1, int(f * len(s)))]  # noqa: E731
    return {"min": s[0], "p10": q(0.10), "p25": q(0.25), "median": statistics.median(s), "p75": q(0.75),
            "p90": q(0.90)}


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag, as `setarch -R`


def without_aslr() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    current = libc.personality(0xFFFFFFFF)
    if libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
        raise OSError(ctypes.get_errno(), "personality(ADDR_NO_RANDOMIZE) failed")


def one_process(problem_path: str, solution_path: str, calls: int, ways: tuple[str, ...]) -> dict:
    import torch

    from kerneljudge.worker import device_clock, loading, timing

    problem = loading.load_module(problem_path)
    solution = loading.load_module(solution_path)
    init = loading.make_init_inputs(problem, 1)
    models = {"reference": loading.build_model(problem.Model, init, 1, "cuda", "fp32"),
              "solution": loading.build_model(solution.ModelNew, loading.make_init_inputs(problem, 1), 1, "cuda", "fp32")}
    timer = timing.Timer("cuda")
    read_fd, write_fd = os.pipe()

    def between(way: str) -> None:
        if way == "sleep":
            time.sleep(0.001)
        elif way == "spin":
            end = time.perf_counter() + 0.001
            while time.perf_counter() < end:
                pass
        elif way == "pipe":
            threading.Timer(0.001, os.write, (write_fd, b"x")).start()
            os.read(read_fd, 1)

    out: dict = {}
    for name, model in models.items():
        inputs = loading.make_inputs(problem, 2, "cuda", "fp32")
        make = lambda seed: loading.make_inputs(problem, seed, "cuda", "fp32")  # noqa: E731
        _, device = device_clock.measure(model, make, 2, timer, 0.3, None)
        device_ms = device.get("median_ms")
        for _ in range(20):
            timer.time_call(model, inputs)
        per_way: dict = {}
        for block in range(3):  # the ways alternate in blocks, so drift is not mistaken for a way's effect
            for way in ways:
                for i in range(calls // 3):
                    between(way)
                    fresh = loading.make_inputs(problem, 1000 * block + i, "cuda", "fp32")
                    _, t = timer.time_call(model, fresh)
                    per_way.setdefault(way, {"event": [], "host": []})
                    per_way[way]["event"].append(t["event_ms"])
                    per_way[way]["host"].append(t["host_ms"])
        out[name] = {"device_ms": device_ms,
                     "ways": {w: {"event_ms": quantiles(v["event"]), "host_ms": quantiles(v["host"])}
                              for w, v in per_way.items()}}
    torch.cuda.synchronize()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", required=True)
    p.add_argument("--solution", required=True)
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--calls", type=int, default=300, help="timed calls per way and model (default 300)")
    p.add_argument("--cores", default="15", help="taskset core list for the probed processes (default 15)")
    p.add_argument("--hash-seeds", default=None, metavar="S,S,...",
                   help="PYTHONHASHSEED of each process in turn, or 'random' (default: random, as the judge's processes)")
    p.add_argument("--aslr", default=None, metavar="on|off,...",
                   help="address-space randomisation of each process in turn (default: on, as the judge's)")
    p.add_argument("--ways", default=",".join(WAYS), help=f"ways of waiting between calls (default {','.join(WAYS)})")
    p.add_argument("--out", default=None)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    ways = tuple(args.ways.split(","))
    if set(ways) - set(WAYS):
        p.error(f"--ways: choose from {', '.join(WAYS)}")
    if args.child:
        print(json.dumps(one_process(args.problem, args.solution, args.calls, ways)))
        return 0
    results = []
    seeds = args.hash_seeds.split(",") if args.hash_seeds else []
    aslr = args.aslr.split(",") if args.aslr else []
    if set(aslr) - {"on", "off"}:
        p.error("--aslr: a comma-separated list of on and off")
    for k in range(args.processes):
        command = ["taskset", "-c", args.cores, sys.executable, __file__, "--child", "--problem", args.problem,
                   "--solution", args.solution, "--calls", str(args.calls), "--ways", args.ways]
        env = dict(os.environ)
        env.pop("PYTHONHASHSEED", None)
        if seeds and seeds[k % len(seeds)] != "random":
            env["PYTHONHASHSEED"] = seeds[k % len(seeds)]
        randomised = aslr[k % len(aslr)] if aslr else "on"
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                              preexec_fn=None if randomised == "on" else without_aslr)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        got = json.loads(done.stdout.strip().splitlines()[-1])
        got["hash_seed"] = env.get("PYTHONHASHSEED", "random")
        got["aslr"] = randomised
        results.append(got)
        for name, part in got.items():
            if name in ("hash_seed", "aslr"):
                continue
            dev = part["device_ms"]
            for way, q in part["ways"].items():
                e = q["event_ms"]
                over = {k: round((v - dev) * 1e3, 1) for k, v in e.items()} if dev else {}
                print(f"process {k} (hash seed {got['hash_seed']}, aslr {randomised}) {name:9s} {way:5s} event median {e['median']:.4f} ms  overhead us {over}")
    if args.out:
        Path(args.out).write_text(json.dumps({"problem": args.problem, "solution": args.solution,
                                              "cores": args.cores, "processes": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
