"""Why the profiler clock and graph replays disagree on some identity copies (issue 33's 3% bar, H100 of 2026-12-07).

    python lab/profile_vs_graph_probe.py [--out FILE]

On upstream's sweep, 39 of 464 sides were more than 3% off: recurrent models at 1.96-2.05x (one call is ~6,000
kernels of 1-3 us), cuDNN FFT transposed convolutions at 1.16-1.18x, and many-tiny-kernel models at 0.80-0.92x.
For models shaped like those three groups (written here, not upstream's files) this prints, per model:
  graph_ms         graph replays (worker/device_clock.measure)
  eager_busy_ms    the profiler clock: union of the activities' intervals of one eager call (device_clock.profiled)
  eager_events_ms  CUDA events around one eager call (gaps between kernels included)
  replay_busy_ms   the same profiler around one graph replay, and its activity count beside the eager call's
  raw_busy         one eager call's busy time read from the profiler's own events (profiling.busy_of_call, what the
                   device clock now reads) and from torch's FunctionEvents of the same profile: they must agree
Reading: replay_busy close to eager_busy (both far above graph) means CUPTI itself lengthens short kernels; replay_busy
close to graph with the same activity count means eager calls ran other kernels than the captured ones (cuDNN picked
another algorithm under capture); eager_events close to graph with eager_busy below both means the gaps between
kernels are what the union leaves out. Takes about a minute on an H100; writes JSON with --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(128, 256, num_layers=6, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0][:, -1]


def models() -> dict[str, tuple[nn.Module, Callable[[int], list[Any]]]]:
    return {
        "lstm_6x256_seq512": (Recurrent(), lambda s: [torch.randn(10, 512, 128, device="cuda",
                                                                  generator=torch.Generator("cuda").manual_seed(s))]),
        "conv_transpose_3x3": (nn.ConvTranspose2d(64, 64, 3), lambda s: [torch.randn(
            8, 64, 256, 256, device="cuda", generator=torch.Generator("cuda").manual_seed(s))]),
        "encoder_layer_small": (nn.TransformerEncoderLayer(128, 4, 256, batch_first=True), lambda s: [torch.randn(
            8, 16, 128, device="cuda", generator=torch.Generator("cuda").manual_seed(s))]),
    }


def eager_events_ms(model, inputs, calls: int = 10) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start.record()
        model(*inputs)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def probe(name: str, model: nn.Module, make) -> dict:
    from kerneljudge.worker import busy_time, device_clock, profiling, timing

    model = model.cuda().eval()
    with torch.no_grad():
        eager = profiling.profile_call(model, make(1), "cuda")
        events = eager_events_ms(model, make(2))
        _, graph = device_clock.measure(model, make, 3, timing.Timer("cuda"), budget_s=5.0)
        inputs = make(4)
        captured, _ = device_clock._capture(model, inputs)
        replay = profiling.profile_call(lambda: captured.replay(), [], "cuda")
        prof, _ = profiling._profiled_once(model, make(5), "cuda")
        raw = busy_time.busy(profiling.raw_events(prof, "cuda") or [], "cuda")
        full = busy_time.busy(prof.function_events, "cuda")
    row = {"model": name, "graph_ms": graph.get("median_ms"), "eager_busy_ms": eager["busy_us"] / 1e3,
           "eager_summed_ms": eager["summed_us"] / 1e3, "eager_activities": eager["activities"],
           "eager_events_ms": events, "replay_busy_ms": replay["busy_us"] / 1e3,
           "replay_activities": replay["activities"], "graph_profiler_ms": (graph.get("profiler") or {}).get("median_ms"),
           "raw_busy": {"raw_us": raw["busy_us"], "function_events_us": full["busy_us"],
                        "raw_activities": raw["activities"], "function_events_activities": full["activities"]}}
    if row["graph_ms"]:
        row["eager_busy_vs_graph"] = round(row["eager_busy_ms"] / row["graph_ms"], 3)
        row["replay_busy_vs_graph"] = round(row["replay_busy_ms"] / row["graph_ms"], 3)
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("profile_vs_graph_probe: needs a CUDA device", file=sys.stderr)
        return 2
    rows = []
    for name, (model, make) in models().items():
        try:
            rows.append(probe(name, model, make))
        except Exception as exc:   # one model's failure must not hide the others
            rows.append({"model": name, "error": f"{type(exc).__name__}: {exc}"[:300]})
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
