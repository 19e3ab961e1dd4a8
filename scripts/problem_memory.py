"""Estimate each problem's device-memory need on the meta device: no GPU, no memory, no time (a child process of
scripts/memory_subset.py, so that torch and problem code stay out of the sweep's own process).

    python scripts/problem_memory.py [--precision fp32|fp16|bf16] PROBLEM.py ...

For each file, one JSON line as soon as it is known (a problem that kills this process costs only itself):
    {"path": ..., "model_bytes": ..., "input_bytes": ..., "activation_bytes": ..., "need_bytes": ...}
or {"path": ..., "error": "..."}. The three figures are the reference process's own estimate
(kerneljudge.worker.reference_memory.estimate, with the model built on the meta device instead of the CPU, or on
the CPU as the reference builds it where its constructor needs values: `model_built_on` says which) and
need_bytes is what the judge admits a judgement by before the reference's peak is measured
(judging/reference.py ReferenceService.device_need): 2 x weights + INPUTS_PER_JUDGEMENT x the larger of the
inputs and the largest tensor the forward makes. Problems run at their default sizes (what a GPU judges).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")   # shapes only: one thread is plenty

import torch

from kerneljudge.judging.reference import estimated_need
from kerneljudge.worker import loading, reference_memory


def need_bytes(figures: dict[str, int]) -> int:
    """ReferenceService.device_need's estimate for a problem whose peak has not been measured yet."""
    return estimated_need(figures) or 0


def estimate(path: str, precision: str) -> dict[str, Any]:
    problem = loading.load_module(path)
    init_inputs = loading.make_init_inputs(problem, 0)
    built = "meta"
    try:
        with torch.device("meta"):
            model = problem.Model(*init_inputs)
        if precision != "fp32":
            model = model.to(loading.DTYPES[precision])
    except Exception:   # a constructor that reads values (.item()) needs real tensors: built as the reference is
        model, built = loading.build_model(problem.Model, init_inputs, 0, "cpu", precision), "cpu"
    figures = reference_memory.estimate(problem, model, precision, init_inputs)
    return {**figures, "need_bytes": need_bytes(figures), "model_built_on": built}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="problem_memory.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--precision", choices=sorted(loading.DTYPES), default="fp32")
    parser.add_argument("paths", nargs="+", metavar="PROBLEM.py")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for path in args.paths:
        try:
            line = {"path": path, **estimate(path, args.precision)}
        except Exception as exc:  # the problem's code failed on the meta device: say so, go on with the next
            line = {"path": path, "error": f"{type(exc).__name__}: {exc}"[:300]}
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
