"""Plain data that crosses every boundary: options in, verdict out. No torch import here."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("correct", "wrong_output", "build_error", "runtime_error", "timeout", "rejected", "unjudgeable")
# Why the problem's reference could not judge (verdict `unjudgeable`): its output is degenerate (rounding-noise
# level, moved wholesale by its own TF32 forward, or a constant output would pass), or it failed to run.
PROBLEM_OUTCOMES = ("degenerate_reference", "reference_failed")
PRECISIONS = ("fp32", "fp16", "bf16")
# The forms a solution's own kernels take (docs/architecture.md, "Adding a backend").
BACKENDS = ("cuda", "triton", "cpp", "cupy", "cuda_core", "numba", "helion", "cute", "tilelang")
CPU_BACKENDS = ("triton", "cpp")   # those the judge runs without a GPU (Triton through its interpreter)
POLICIES = ("strict", "lenient")
DEVICES = ("cpu", "cuda")
CONTRACTS = ("tf32", "fp32", "kernelbench")   # numerics contracts: docs/numerics.md
# which time `speedup` (and fast_p) uses: auto is the device clock where both sides replayed a CUDA graph, else
# end to end (docs/judging.md, "Which clock")
CLOCKS = ("auto", "end_to_end", "device")
# Held-out shapes (docs/formats.md): aligned keeps the benchmark sizes' power-of-two alignment (default), general
# uses odd sizes, none checks only the benchmark shape (upstream KernelBench's own semantics)
HELD_OUT_MODES = ("aligned", "general", "none")

# Flags that stop a correct solution from counting for fast_p (they need a human look or are cheats).
BLOCKING_FLAGS = frozenset({
    "timing_inconsistent",
    "timed_output_mismatch",
    "below_speed_of_light",
    "suspicious_speedup",
    "thread_alive",
    "timer_tampered",
    "global_flags_changed",
    "shape_specialized",
    "judge_error",
})

# Flags that change nothing about acceptance but that a reader of the verdict must see.
NOTE_FLAGS = frozenset({
    "reduced_precision",        # the output's error is of the tf32 class: timed against a TF32-allowed reference
    "kernelbench_tolerance",    # judged by upstream KernelBench's allclose(1e-2, 1e-2) rule
    "reference_time_reused",    # the reference time came from the cache (--reuse-reference-times)
    "unsandboxed",              # a layer of the solution's box was missing (verdict field `sandbox` names it)
    "profile_failed",
    "checked_alone_again",      # ran out of device memory beside other solutions' checks: judged again alone
    "preset_fitted",            # the problem's reference cannot run within the device's memory at its own sizes:
                                # judged at a derived preset that fits (verdict field `shapes` names the sizes)
    "contract_tightened",       # degenerate under the chosen contract but not under fp32: judged under fp32
    "held_out_off",             # no held-out shapes were checked (--held-out none: upstream's own semantics)
})


@dataclass(frozen=True)
class JudgeOptions:
    """How to judge. Defaults are what `kerneljudge eval` uses."""

    device: str = "auto"            # cpu | cuda | auto (cuda when present)
    precision: str = "fp32"
    policy: str = "strict"
    trials: int = 5                 # correctness trials, each with fresh inputs from a secret seed
    build_timeout_s: float = 600.0  # importing the solution (load_inline / triton compile)
    run_timeout_s: float = 300.0    # everything after the build
    time_budget_s: float = 2.0      # adaptive timing budget per model (reference, solution)
    timing: bool = True             # time correct solutions
    held_out: str = "aligned"       # held-out shapes: aligned | general | none (True / False: aligned / none)
    preset: str = "auto"            # auto (small on CPU) | default | small
    threads: int = 1                # CPU threads for reference and solution alike
    cache_dir: str | None = None    # builds and reference-time cache; default ~/.cache/kerneljudge
    speedup_review_threshold: float = 100.0  # a speedup above this blocks acceptance pending review
    numerics: str = "tf32"          # contract: tf32 | fp32 | kernelbench (docs/numerics.md)
    clock: str = "auto"             # the time `speedup` uses: auto | end_to_end (host launch included) | device
    reuse_reference_times: bool = False  # take the reference time from the cache instead of timing it now
    reserved_cores: int | None = None    # cores kept for the timing processes per device (None: automatic)
    checks_at_once: int | None = None    # solutions checked on one device at once (None: 4 on a GPU, 1 on the CPU)
    require_sandbox: bool = False   # refuse to judge when a layer of the solution's box is missing
    # bytes of device memory the whole judge keeps to on each GPU, CUDA contexts included (None: the card's own)
    device_memory: int | None = None

    def __post_init__(self) -> None:
        if self.device not in DEVICES + ("auto",):
            raise ValueError(f"device must be one of cpu, cuda, auto; got {self.device!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {self.precision!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be strict or lenient; got {self.policy!r}")
        if self.trials < 1:
            raise ValueError("trials must be at least 1")
        if isinstance(self.held_out, bool):   # the field was a bool before the modes: keep old callers working
            object.__setattr__(self, "held_out", "aligned" if self.held_out else "none")
        if self.held_out not in HELD_OUT_MODES:
            raise ValueError(f"held_out must be one of {', '.join(HELD_OUT_MODES)}; got {self.held_out!r}")
        if self.preset not in ("auto", "default", "small"):
            raise ValueError(f"preset must be auto, default or small; got {self.preset!r}")
        if self.numerics not in CONTRACTS:
            raise ValueError(f"numerics must be one of {', '.join(CONTRACTS)}; got {self.numerics!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}; got {self.clock!r}")
        if self.reserved_cores is not None and self.reserved_cores < 0:
            raise ValueError("reserved_cores must be 0 or more")
        if self.checks_at_once is not None and self.checks_at_once < 1:
            raise ValueError("checks_at_once must be at least 1")
        if self.device_memory is not None and self.device_memory < (1 << 30):
            raise ValueError("device_memory must be at least 1 GiB")


@dataclass(frozen=True)
class TimingStats:
    """Summary of one model's timed calls, in milliseconds."""

    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    std_ms: float
    ci95_low_ms: float
    ci95_high_ms: float
    samples: int
    warmup_calls: int
    clock: str                      # "cuda_event" | "host" | "host+device_idle"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    accepted: bool
    reason: str
    problem: str
    solution: str
    problem_id: str = ""
    backend: str = ""
    policy: str = "strict"
    precision: str = "fp32"
    device: str = ""
    device_name: str = ""
    speedup: float | None = None    # by the clock `clock` names; the number fast_p uses
    ref_ms: float | None = None     # reference time the speedup divides (TF32-allowed for a tf32-class solution)
    sol_ms: float | None = None
    clock: str = "end_to_end"       # the clock `speedup` was read on: end_to_end | device
    clock_rule: str = "auto"        # the --clock it was judged under (auto picks `clock` per verdict)
    contract: str = "tf32"
    speedup_end_to_end: float | None = None
    # 95% interval of speedup_end_to_end: the reference's and the solution's median intervals, worst against worst
    speedup_ci95: list[float] | None = None
    speedup_vs_fp32_reference: float | None = None
    ref_fp32_ms: float | None = None
    ref_device_ms: float | None = None
    sol_device_ms: float | None = None
    speedup_device: float | None = None
    device_clock: str | None = None  # how the device times were taken: cuda_graph | profiler | host
    ref_timing: dict[str, Any] | None = None
    sol_timing: dict[str, Any] | None = None
    flags: tuple[str, ...] = ()
    findings: tuple[dict[str, Any], ...] = ()
    max_error: dict[str, Any] | None = None
    # the worst error over every checked output and the arithmetic it fits: docs/numerics.md
    numerics: dict[str, Any] | None = None
    # sizes judged: preset, held-out shapes, sources, and which held-out shape is far below the benchmark one
    shapes: dict[str, Any] = field(default_factory=dict)
    sandbox: dict[str, Any] = field(default_factory=dict)  # the solution's box: layers active and missing
    error_excerpt: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    problem_sha256: str = ""
    solution_sha256: str = ""
    preset: str = ""
    build_s: float | None = None
    # each extension the solution built: name, ok, seconds, reused, key, lean_headers, precompiled_header
    builds: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float | None = None
    ended_at: float | None = None   # when the verdict was reached (seconds since the epoch): a run's timeline
    phases_s: dict[str, float] = field(default_factory=dict)  # where the judge's wall time went
    # top kernels/ops of one profiled call: {name, class, device_us, calls, share}, then a "(total)" row
    profile: list[dict[str, Any]] = field(default_factory=list)
    # for verdict `unjudgeable`: {"kind": <one of PROBLEM_OUTCOMES>, "reason": <one line>,
    # "figures": {<the numbers the decision was made from>}}; None for every other verdict
    problem_outcome: dict[str, Any] | None = None
    # for a verdict judged again alone after a memory failure (flag checked_alone_again): the first attempt's
    # {"verdict", "reason", "error" (its last line), "failed_in" (the phase), "wall_s", "device" (the device's turns
    # and memory in use as it ended)}; None otherwise
    first_attempt: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")
        if self.verdict == "unjudgeable":
            self._check_unjudgeable()
        elif self.problem_outcome is not None:
            raise ValueError(f"problem_outcome is for verdict 'unjudgeable' only; this verdict is {self.verdict!r}")

    def _check_unjudgeable(self) -> None:
        """The problem could not judge: nothing about the solution may count, and the outcome must say why."""
        if self.accepted:
            raise ValueError("an unjudgeable verdict cannot be accepted")
        if self.speedup is not None:
            raise ValueError("an unjudgeable verdict has no speedup")
        outcome = self.problem_outcome
        kind = outcome.get("kind") if isinstance(outcome, dict) else None
        if kind not in PROBLEM_OUTCOMES:
            raise ValueError(f"an unjudgeable verdict needs problem_outcome with a kind in "
                             f"{', '.join(PROBLEM_OUTCOMES)}; got {outcome!r}")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["flags"] = list(self.flags)
        d["findings"] = list(self.findings)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Verdict":
        known = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["flags"] = tuple(kwargs.get("flags", ()))
        kwargs["findings"] = tuple(kwargs.get("findings", ()))
        return cls(**kwargs)
