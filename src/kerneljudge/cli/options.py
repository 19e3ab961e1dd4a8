"""What the commands share: the exit codes and the judge options (eval, run, examples and serve take the same)."""

from __future__ import annotations

import argparse
import re
from enum import IntEnum

from kerneljudge.core.types import CLOCKS, CONTRACTS, DEVICES, HELD_OUT_MODES, POLICIES, PRECISIONS, JudgeOptions


class ExitCode(IntEnum):
    """0 whenever the command did its job (a verdict was reached, even a wrong or crashing solution)."""

    OK = 0
    INCOMPLETE = 1      # some of the work could not be done (a provider failed, a run is unfinished)
    USAGE = 2           # bad arguments
    INPUT = 3           # unreadable or unusable input files
    NO_SANDBOX = 4      # --require-sandbox given and the box is incomplete here
    INTERRUPTED = 130   # Ctrl-C; what was reached is kept


HELD_OUT_HELP = ("held-out shapes, never shown to a model: aligned (default) changes every size but keeps the "
                 "benchmark size's alignment (a power of two stays one, other sizes keep their power-of-two factor "
                 "up to 128); general uses odd sizes (tail handling required); none checks only the benchmark "
                 "shape, as upstream KernelBench does (every verdict carries the note flag held_out_off)")


# memory sizes: a number and a unit; K, M, G, T mean powers of 1024 with or without "B" or "iB" (24G = 24GB = 24GiB,
# as memory is sold and nvidia-smi counts it), a bare number is bytes
SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def memory_size(text: str) -> int:
    """Bytes of a size such as 24GiB, 24G, 24000MiB or 1073741824 (argparse type: raises ArgumentTypeError)."""
    found = _SIZE.match(text)
    if not found:
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size (for example 24GiB, 24G or 24000MiB)")
    return int(float(found.group(1)) * SIZE_UNITS[found.group(2).lower()])


def device_memory_size(text: str) -> int:
    """--device-memory's argparse type: a memory size of at least 1 GiB (JudgeOptions.device_memory's rule)."""
    size = memory_size(text)
    if size < 1 << 30:
        raise argparse.ArgumentTypeError(f"{text!r} is less than 1 GiB")
    return size


def add_held_out_option(p: argparse.ArgumentParser) -> None:
    """--held-out aligned|general|none (every judging command, bench and shapes)."""
    p.add_argument("--held-out", choices=HELD_OUT_MODES, default=HELD_OUT_MODES[0], help=HELD_OUT_HELP)


def add_judge_options(p: argparse.ArgumentParser) -> None:
    """The options every judging command takes (eval, run, examples, serve)."""
    p.add_argument("--device", choices=DEVICES + ("auto",), default="auto",
                   help="where to run (default: cuda if present, else cpu at the problem's small preset)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32", help="run precision (default fp32)")
    p.add_argument("--policy", choices=POLICIES, default="strict",
                   help="strict: work must happen in the solution's own kernels; lenient: any PyTorch allowed")
    p.add_argument("--trials", type=int, default=5, help="correctness trials with fresh secret inputs (default 5)")
    p.add_argument("--budget", type=float, default=2.0, help="timing budget per model in seconds (default 2)")
    p.add_argument("--no-timing", action="store_true", help="check correctness only")
    p.add_argument("--preset", choices=("auto", "default", "small"), default="auto",
                   help="problem sizes: auto = small on CPU, default on CUDA")
    add_held_out_option(p)
    p.add_argument("--build-timeout", type=float, default=600.0, help="seconds allowed to build (default 600)")
    p.add_argument("--run-timeout", type=float, default=300.0, help="seconds allowed after the build (default 300)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for reference and solution (default 1)")
    p.add_argument("--cache-dir", default=None, help="builds and reference-time cache (default ~/.cache/kerneljudge)")
    p.add_argument("--numerics", choices=CONTRACTS, default="tf32",
                   help="numerics contract (docs/numerics.md): tf32 (default) accepts fp32- and tf32-class errors "
                        "and times a tf32-class solution against a TF32-allowed reference; fp32 accepts only "
                        "fp32-class errors; kernelbench is upstream's allclose(atol=rtol=1e-2)")
    p.add_argument("--clock", choices=CLOCKS, default="auto",
                   help="the time `speedup` and fast_p use: auto (default: the device clock where both sides "
                        "replayed a CUDA graph, else end to end), end_to_end (host launch included, as in "
                        "KernelBench) or device (CUDA-graph replays or profiler device time). Both are reported")
    p.add_argument("--reuse-reference-times", action="store_true",
                   help="take the reference's time from the cache of an earlier run instead of timing it now, "
                        "interleaved with the solution (faster, less exact; the verdict says so)")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to judge when a layer of the solution's box (user, network or PID namespace, "
                        "Landlock, no_new_privs) is missing here; without it such verdicts carry `unsandboxed`")
    p.add_argument("--reserved-cores", type=int, default=None, metavar="N",
                   help="CPU cores kept per device for the processes that time there; builds use the rest "
                        "(default: 2 per GPU when enough cores remain; on the CPU --threads when two cores stay "
                        "for builds; 0: no pinning)")
    p.add_argument("--device-memory", type=device_memory_size, default=None, metavar="SIZE",
                   help="device memory the judge keeps to on each GPU (24GiB, 24G, 24000MiB; default: the card's "
                        "own): admission counts against it, and a problem whose judgement cannot fit in its share "
                        "is judged at a preset fitted to it (verdict flag preset_fitted, sizes under shapes.fitted); "
                        "also on the CPU with --preset default. Without it a problem is fitted to the card only "
                        "once its reference has run out of memory with the card to itself")
    p.add_argument("--checks-at-once", type=int, default=None, metavar="N",
                   help="solutions whose correctness is checked on one device at the same time (timing always "
                        "has the device alone; default: 4 on a GPU, 1 on the CPU)")


def judge_options(args: argparse.Namespace) -> JudgeOptions:
    """JudgeOptions from parsed arguments of add_judge_options."""
    return JudgeOptions(device=args.device, precision=args.precision, policy=args.policy, trials=args.trials,
                        time_budget_s=args.budget, timing=not args.no_timing, preset=args.preset,
                        build_timeout_s=args.build_timeout, run_timeout_s=args.run_timeout,
                        threads=args.threads, cache_dir=args.cache_dir, numerics=args.numerics, clock=args.clock,
                        reuse_reference_times=args.reuse_reference_times, reserved_cores=args.reserved_cores,
                        checks_at_once=args.checks_at_once, require_sandbox=args.require_sandbox,
                        held_out=args.held_out, device_memory=args.device_memory)
