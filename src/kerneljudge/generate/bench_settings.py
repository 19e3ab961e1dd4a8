"""What a `kerneljudge bench` run is asked for, and what its run folder records of that.

BenchSettings holds the request; the functions here check it, resolve what it leaves open (backend,
temperature, judge workers), turn it into the judge's options and the model provider, and write the
run folder's config.json: its "identity" holds the settings a resumed run must share (IDENTITY).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from kerneljudge.core.problem import Problem
from kerneljudge.core.types import BACKENDS, CPU_BACKENDS, JudgeOptions
from kerneljudge.generate.bench_parts import BenchError
from kerneljudge.generate.runfolder import FORMAT, now, safe_url

IDENTITY = ("model", "backend", "shots", "temperature", "max_tokens", "seed", "precision", "policy", "device",
            "hardware")             # settings a resumed run must share with the run folder


@dataclass
class BenchSettings:
    model: str                              # PROVIDER:NAME (openai:..., anthropic:..., replay:FOLDER)
    problems: str                           # "suite" or a folder of problem files
    out: str
    level: int | None = None
    samples: int = 1
    turns: int = 1
    all_turns: bool = False                 # keep refining after an accepted turn
    backend: str | None = None              # None: cuda on a CUDA device, triton on the CPU
    shots: str = "0"                        # 0, 1 or few
    device: str = "auto"
    policy: str = "strict"
    precision: str = "fp32"
    hardware: str = "auto"                  # auto (H200 block on an H200), none, h200
    limit: int | None = None                # only the first N problems
    problem_ids: list[str] | None = None
    temperature: float | None = None        # None: 0.0 for one sample, 0.7 for several
    max_tokens: int = 8192
    seed: int | None = None                 # request seed = seed + sample (None: no seed sent)
    base_url: str | None = None
    concurrency: int = 4                    # model requests in flight
    max_attempts: int = 6
    request_timeout: float = 600.0
    judge_workers: int | None = None        # None: 1 on the CPU, 4 on a GPU (builds overlap)
    trials: int = 5
    budget: float = 2.0
    run_timeout: float = 300.0
    build_timeout: float = 600.0
    timing: bool = True
    threads: int = 1
    held_out: str = "aligned"               # held-out shapes: aligned | general | none (core.types.HELD_OUT_MODES)
    cache_dir: str | None = None            # the judge's build / reference-time cache


# ------------------------------------------------------------------------------- checks and resolution


def check_settings(s: BenchSettings) -> None:
    """Raise BenchError for a setting out of range."""
    for name, value, low in (("samples", s.samples, 1), ("turns", s.turns, 1), ("concurrency", s.concurrency, 1),
                             ("trials", s.trials, 1), ("max_tokens", s.max_tokens, 1),
                             ("max_attempts", s.max_attempts, 1)):
        if value < low:
            raise BenchError(f"--{name.replace('_', '-')} must be at least {low}")
    if s.shots not in ("0", "1", "few"):
        raise BenchError("--shots must be 0, 1 or few")
    if s.judge_workers is not None and s.judge_workers < 1:
        raise BenchError("--judge-workers must be at least 1")


def choose_backend(s: BenchSettings, device: str) -> str:
    """The backend the model writes for: the setting, else cuda on a CUDA device and triton on the CPU."""
    backend = s.backend or ("cuda" if device == "cuda" else "triton")
    if backend not in BACKENDS:
        raise BenchError(f"--backend must be one of {', '.join(BACKENDS)}")
    if backend not in CPU_BACKENDS and device != "cuda":
        raise BenchError(f"--backend {backend} needs a CUDA device (this run judges on the CPU); "
                         f"use {' or '.join(CPU_BACKENDS)}")
    return backend


def sampling_temperature(s: BenchSettings) -> float:
    """The setting, else 0.0 for one sample and 0.7 for several."""
    return s.temperature if s.temperature is not None else (0.0 if s.samples == 1 else 0.7)


def judge_worker_count(s: BenchSettings, device: str) -> int:
    """The setting, else 4 on a GPU (builds overlap) and 1 on the CPU."""
    return s.judge_workers or (4 if device == "cuda" else 1)


def judge_options(s: BenchSettings, device: str) -> JudgeOptions:
    return JudgeOptions(device=device, precision=s.precision, policy=s.policy, trials=s.trials,
                        time_budget_s=s.budget, run_timeout_s=s.run_timeout, build_timeout_s=s.build_timeout,
                        timing=s.timing, threads=s.threads, cache_dir=s.cache_dir, held_out=s.held_out)


def make_provider(s: BenchSettings, cache_dir: Path):
    """The model provider of s.model; a network provider caches its replies in cache_dir."""
    from kerneljudge.generate.providers.registry import get_provider, load_provider_class, parse_spec

    name, _ = parse_spec(s.model)
    cls = load_provider_class(name)
    options: dict[str, Any] = {}
    if getattr(cls, "network", True):
        options.update(cache_dir=str(cache_dir), concurrency=s.concurrency,
                       max_attempts=s.max_attempts, timeout=s.request_timeout)
        if s.base_url:
            options["base_url"] = s.base_url
    elif s.base_url:
        raise BenchError(f"--base-url does not apply to the {name} provider")
    return get_provider(s.model, **options)


# ---------------------------------------------------------------------------- the run folder's record


def run_identity(s: BenchSettings, backend: str, device: str, temperature: float,
                 hardware: dict[str, Any] | None) -> dict[str, Any]:
    """The IDENTITY settings of a run, as config.json keeps them."""
    return {"model": s.model, "backend": backend, "shots": s.shots, "temperature": temperature,
            "max_tokens": s.max_tokens, "seed": s.seed, "precision": s.precision,
            "policy": s.policy, "device": device, "hardware": hardware}


def run_config(s: BenchSettings, ident: Mapping[str, Any], judge_workers: int, problems: list[Problem],
               stems: Mapping[str, str], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """config.json of the run folder: this run's settings (ident from run_identity), merged with the one
    there before (previous; None for a new folder): its creation time, problems, and most samples and turns."""
    from kerneljudge import __version__

    known = {p["id"]: p for p in (previous or {}).get("problems") or [] if isinstance(p, Mapping) and "id" in p}
    for p in problems:
        known[p.id] = {"id": p.id, "level": p.level, "path": p.path, "sha256": p.sha256,
                       "item_stem": stems[p.id]}
    samples = max(s.samples, int(((previous or {}).get("generation") or {}).get("samples") or 0))
    turns = max(s.turns, int(((previous or {}).get("generation") or {}).get("turns") or 0))
    source = s.problems if s.problems == "suite" else str(Path(s.problems).resolve())
    return {
        "format": FORMAT,
        "kerneljudge": __version__,
        "created": (previous or {}).get("created") or now(),
        "updated": now(),
        "model": s.model,
        "provider": {"spec": s.model, "base_url": safe_url(s.base_url), "concurrency": s.concurrency,
                     "max_attempts": s.max_attempts, "request_timeout_s": s.request_timeout,
                     "cache_dir": "cache"},
        "generation": {"samples": samples, "turns": turns, "all_turns": s.all_turns,
                       "backend": ident["backend"], "shots": s.shots, "temperature": ident["temperature"],
                       "max_tokens": s.max_tokens, "seed": s.seed, "hardware": ident["hardware"],
                       "precision": s.precision},
        "judge": {"device": ident["device"], "policy": s.policy, "precision": s.precision,
                  "trials": s.trials, "time_budget_s": s.budget, "run_timeout_s": s.run_timeout,
                  "build_timeout_s": s.build_timeout, "timing": s.timing, "threads": s.threads,
                  "preset": "auto", "held_out": s.held_out, "judge_workers": judge_workers},
        "selection": {"problems": source,
                      "level": s.level, "problem_ids": s.problem_ids, "limit": s.limit},
        "identity": dict(ident),
        "problems": list(known.values()),
    }


def check_resume(root: Path, previous: Mapping[str, Any] | None, ident: Mapping[str, Any]) -> None:
    """Raise BenchError when the run folder at root holds a run whose identity differs from ident."""
    if not previous or "identity" not in previous:
        return
    old, new = previous["identity"], ident
    diff = [f"{k}: {old.get(k)!r} there, {new.get(k)!r} now" for k in IDENTITY if old.get(k) != new.get(k)]
    if diff:
        raise BenchError(f"{root} holds a run with other settings ({'; '.join(diff)}); "
                         "use another --out, or the same settings to resume it")
