"""Probe (issue 33): which step of the reference process's life makes identical forward code slower there than in
a solution's process. One fresh process per problem runs the reference worker's own handlers in order (hello,
prepare, expect, count, device_time, a plain profiler session, park) and, before the first and after each, times the problem's model with the reference's
own timing round (worker/reference_timing.py timed_round: end-to-end, host launch included). Prints one JSON line per problem
and TEARDOWN_CUPTI setting (0: kineto leaves CUPTI attached after a profile; 1: it detaches it, as the judge's
children now run).

    python lab/host_bias_probe.py PROBLEM.py [PROBLEM.py ...] [--calls 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import json, os, secrets, statistics, sys, threading
import torch
from kerneljudge.worker import reference as R, reference_timing as RT, loading, common

path, calls = sys.argv[1], int(sys.argv[2])
read_fd, write_fd = os.pipe()
threading.Thread(target=lambda: [os.read(read_fd, 1 << 20) for _ in iter(int, 1)], daemon=True).start()
seed = secrets.randbits(62)
base = {"problem_path": path, "preset": {}, "init_seed": seed, "device": "cuda", "precision": "fp32"}
R.handle_hello({"device": "cuda", "threads": 1, "models_kept": 5}, write_fd)
problem = loading.load_module(path)
model = loading.build_model(problem.Model, loading.make_init_inputs(problem, seed), seed, "cuda", "fp32")

def timed(label, which=None):
    timer = RT.timer_for("cuda")
    RT.timed_round(problem, which or model, timer, "cuda", "fp32", 5)
    samples = RT.timed_round(problem, which or model, timer, "cuda", "fp32", calls)["samples"]
    return label, round(statistics.median(samples), 4)

rows = [timed("fresh")]
R.handle_prepare(dict(base), write_fd); rows.append(timed("after prepare (meta estimate)"))
import sys as _s; rows.append(("torch._dynamo imported", "torch._dynamo" in _s.modules))
R.handle_expect({**base, "token": "t", "seeds": [secrets.randbits(62) for _ in range(8)], "contract": "tf32",
                 "tolerance": None}, write_fd); rows.append(timed("after expect (workload, floors, degenerate)"))
rows.append(timed("the reference's own model (prepared on the CPU, moved)", next(iter(R._models.values()))[1]))
R.handle_count({"problem_path": path, "device": "cuda"}, write_fd); rows.append(timed("after count"))
R.handle_device_time({**base, "seed": secrets.randbits(62), "budget_s": 0.5, "tf32": False}, write_fd)
rows.append(timed("after device_time (profiler, graph capture and replays)"))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]):
    model(*loading.make_inputs(problem, 1, "cuda", "fp32")); torch.cuda.synchronize()
rows.append(timed("after a plain torch.profiler session"))
R.handle_forget({"token": "t", "device": "cuda"}, write_fd)
R.handle_park({"device": "cuda"}, write_fd); rows.append(timed("after park"))
print(json.dumps({"problem": os.path.basename(path), "rows": rows}), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problems", nargs="+")
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    for path in args.problems:
        for teardown in ("0", "1"):   # kineto's TEARDOWN_CUPTI: whether CUPTI is detached when a profile ends
            env = {**os.environ, "TEARDOWN_CUPTI": teardown}
            done = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(path), str(args.calls)],
                                  capture_output=True, text=True, timeout=300, env=env)
            print(f"TEARDOWN_CUPTI={teardown}", done.stdout.strip() or done.stderr[-2000:], flush=True)


if __name__ == "__main__":
    main()
