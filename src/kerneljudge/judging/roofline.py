"""Speed-of-light bound: the least time any kernel could take for a problem at its default size on a GPU.

    SOL time = max(FLOPs / peak FLOP/s, bytes / memory bandwidth)

FLOPs: one forward under torch.utils.flop_counter.FlopCounterMode. It counts matmuls, convolutions and
attention (the work with a known formula); elementwise, reduction and normalisation ops count zero, which
keeps the bound a lower bound. Causal scaled_dot_product_attention counts only its unmasked products.
Bytes: the fewest that must move once: every input tensor, every parameter and buffer, and every output
tensor, read or written once (floating tensors at the run precision's size, others at their own).

The counting runs in the lint worker child (problem code never runs in this process) with the model and
inputs built on the "meta" device, so default sizes allocate nothing. When a forward cannot run on meta
(data-dependent shapes, .item(), ...), the FLOPs are unknown and the bound is the bytes alone (marked).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TextIO

from kerneljudge.core import atomic_file
from kerneljudge.core.paths import suite_tables_root
from kerneljudge.core.problem import Problem, ProblemError, read_problem
from kerneljudge.judging.lint import LintWorker, WorkerFailure

COUNT_VERSION = 4   # bump when the counting changes, to invalidate cached counts
PACKAGED_COUNTS = suite_tables_root() / "sol_counts.json"
FLOAT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_bandwidth: float     # bytes/s, counting reads plus writes (what a device-to-device copy achieves)
    fp32_flops: float           # FLOP/s without tensor cores (the judge runs fp32 with TF32 off)
    tf32_flops: float
    bf16_flops: float
    fp16_flops: float
    source: dict[str, str] = field(default_factory=dict)   # per field: "measured <date>" or "datasheet"

    def peak_flops(self, precision: str, tf32: bool = False) -> float:
        if precision == "fp32":
            return self.tf32_flops if tf32 else self.fp32_flops
        if precision == "tf32":
            return self.tf32_flops
        if precision == "bf16":
            return self.bf16_flops
        if precision == "fp16":
            return self.fp16_flops
        raise ValueError(f"unknown precision {precision!r}")


CEILING_FIELDS = ("memory_bandwidth", "fp32_flops", "tf32_flops", "bf16_flops", "fp16_flops")
DATA_DIR = suite_tables_root()
H200_CEILINGS = DATA_DIR / "h200_ceilings.json"   # written by scripts/ceilings.py --install

# NVIDIA's H200 SXM datasheet, dense (no sparsity) tensor-core rates. A ceiling that was not measured
# falls back to these; they are at least as high as what the chip reaches, so a bound built on them
# stays a lower bound on time (only a looser one).
H200_DATASHEET: dict[str, float] = {
    "memory_bandwidth": 4.8e12,
    "fp32_flops": 6.7e13,
    "tf32_flops": 4.945e14,
    "bf16_flops": 9.89e14,
    "fp16_flops": 9.89e14,
}


class CeilingsError(ValueError):
    """A ceilings file that cannot be used."""


def read_ceilings(path: str | Path) -> dict[str, Any]:
    """A measured ceilings file (scripts/ceilings.py): the GPU, the date, and some of CEILING_FIELDS."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CeilingsError(f"cannot read ceilings {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("gpu"), str):
        raise CeilingsError(f"ceilings {path}: expected a JSON object with a 'gpu' name")
    for key in CEILING_FIELDS:
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            raise CeilingsError(f"ceilings {path}: {key} = {value!r} is not a positive number")
    return data


def spec_from(name: str, datasheet: dict[str, float], measured: dict[str, Any] | None,
              datasheet_label: str = "datasheet") -> GpuSpec:
    """A GpuSpec whose fields come from `measured` (a read_ceilings() dict) where it has them, else from
    the datasheet; GpuSpec.source says which, with the date, GPU, driver and torch of the measurement."""
    values: dict[str, float] = {}
    source: dict[str, str] = {}
    where = ""
    if measured:
        parts = [measured.get("gpu")] + [f"{k} {measured[k]}" for k in ("driver", "torch") if measured.get(k)]
        where = f"measured {str(measured.get('date', '?'))[:10]} on " + ", ".join(str(p) for p in parts if p)
    for key in CEILING_FIELDS:
        value = (measured or {}).get(key)
        if value is not None:
            values[key] = float(value)
            source[key] = where
        else:
            values[key] = float(datasheet[key])
            source[key] = datasheet_label
    return GpuSpec(name=name, source=source, **values)


def _packaged_ceilings(path: Path, expect: str) -> dict[str, Any] | None:
    """The packaged measurement, or None when absent, unreadable or from another GPU (warned)."""
    if not path.exists():
        return None
    try:
        data = read_ceilings(path)
    except CeilingsError as exc:
        print(f"kerneljudge: ignoring {exc}; using datasheet ceilings", file=sys.stderr)
        return None
    if expect.lower() not in data["gpu"].lower():
        print(f"kerneljudge: ignoring {path}: measured on {data['gpu']}, not an {expect}", file=sys.stderr)
        return None
    return data


# The H200 ceilings: measured on an H200 with scripts/ceilings.py where the packaged file has them
# (memory bandwidth from a large device-to-device copy, counting reads plus writes; FLOP/s from large
# square matmuls in fp32 with TF32 off, tf32, bf16 and fp16), the datasheet otherwise. H200.source says which.
H200 = spec_from("NVIDIA H200", H200_DATASHEET, _packaged_ceilings(H200_CEILINGS, "H200"),
                 "datasheet (H200 SXM, dense)")

GPUS: dict[str, GpuSpec] = {"h200": H200}


def count_bytes(counts: dict[str, Any], precision: str = "fp32") -> dict[str, int | None]:
    """Bytes of inputs, parameters/buffers and outputs from the worker's element tallies."""
    width = FLOAT_BYTES[precision]
    parts: dict[str, int | None] = {}
    for key in ("inputs", "params", "outputs"):
        tally = counts.get(key)
        parts[key] = None if tally is None else int(tally["float_elems"]) * width + int(tally["other_bytes"])
    known = [v for v in parts.values() if v is not None]
    parts["total"] = sum(known) if known else None
    return parts


def bound(counts: dict[str, Any], spec: GpuSpec = H200, precision: str = "fp32", tf32: bool = False) -> dict[str, Any]:
    """The speed-of-light numbers for one problem from its counts (see measure())."""
    flops = counts.get("flops")
    parts = count_bytes(counts, precision)
    nbytes = parts["total"]
    notes = list(counts.get("notes", []))
    t_compute = flops / spec.peak_flops(precision, tf32) if flops is not None else None
    t_memory = nbytes / spec.memory_bandwidth if nbytes is not None else None
    times = [t for t in (t_compute, t_memory) if t is not None]
    sol_s = max(times) if times else None
    if flops is None and sol_s is not None:
        notes.append("bound from bytes only")
    if parts["outputs"] is None and nbytes is not None:
        notes.append("bytes exclude the outputs")
    bound_by = None
    if t_compute is not None and t_memory is not None:
        bound_by = "compute" if t_compute >= t_memory else "memory"
    elif t_memory is not None:
        bound_by = "memory"
    return {
        "gpu": spec.name, "precision": precision, "flops": flops, "bytes": nbytes,
        "input_bytes": parts["inputs"], "param_bytes": parts["params"], "output_bytes": parts["outputs"],
        "intensity": (flops / nbytes) if flops is not None and nbytes else None,
        "compute_s": t_compute, "memory_s": t_memory, "sol_s": sol_s,
        "sol_ms": sol_s * 1e3 if sol_s is not None else None, "bound_by": bound_by, "notes": notes,
    }


def _as_problem(item: str | Path | Problem) -> Problem:
    return item if isinstance(item, Problem) else read_problem(item)


def measure_with(worker: LintWorker, problem: Problem, timeout_s: float = 120.0,
                 use_cache: bool = True) -> dict[str, Any]:
    """FLOPs and byte tallies of one forward at the default size: packaged with the suite, cached on disk, or
    counted in the worker.

    Counts depend only on the problem text and the library versions, so they are cached on disk under the
    worker's cache folder (a problem edit changes its hash and so its key).
    """
    base = {"problem": problem.id, "path": problem.path, "level": problem.level, "category": problem.category}
    known = known_counts(problem, worker.cache_dir) if use_cache else None
    if known is not None:
        return {**base, **known, "cached": True}
    try:
        reply = worker.request({"cmd": "sol", "problem_path": problem.path, "preset": {}}, timeout_s)
    except WorkerFailure as exc:
        return {**base, "flops": None, "inputs": None, "params": None, "outputs": None,
                "notes": [f"flops unknown: {exc}"], "error": str(exc)}
    counts = counts_from_reply(reply)
    if "error" not in counts:
        store_counts(problem, worker.cache_dir, counts)
    return {**base, **counts, "cached": False}


def counts_from_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """The counts a trusted child sent (the lint worker's "sol" or the reference process's "count")."""
    if reply.get("status") != "ok":
        message = reply.get("message", "error")
        return {"flops": None, "inputs": None, "params": None, "outputs": None,
                "notes": [f"flops unknown: the problem failed ({message})"], "error": message}
    return {"flops": reply.get("flops"), "flops_by_op": reply.get("flops_by_op", {}),
            "inputs": reply.get("inputs"), "params": reply.get("params"), "outputs": reply.get("outputs"),
            "notes": list(reply.get("notes", [])), "seconds": reply.get("seconds")}


def known_counts(problem: Problem, cache_dir: str) -> dict[str, Any] | None:
    """Counts without counting: packaged with the suite (by problem hash), else from the disk cache."""
    packaged = _packaged().get(problem.sha256)
    if packaged is not None:
        return dict(packaged)
    try:
        return json.loads(_cache_path(cache_dir, problem).read_text())
    except (OSError, ValueError):
        return None


def store_counts(problem: Problem, cache_dir: str, counts: dict[str, Any]) -> None:
    cache = _cache_path(cache_dir, problem)
    try:
        atomic_file.write_json(cache, counts)
    except OSError:
        pass


_PACKAGED: dict[str, dict[str, Any]] | None = None


def _packaged() -> dict[str, dict[str, Any]]:
    """suite/data/sol_counts.json (scripts/package_sol_counts.py): counts of every bundled problem, keyed by
    the problem text's sha256, valid for this COUNT_VERSION."""
    global _PACKAGED
    if _PACKAGED is None:
        try:
            data = json.loads(PACKAGED_COUNTS.read_text())
            _PACKAGED = data["counts"] if data.get("count_version") == COUNT_VERSION else {}
        except (OSError, ValueError, KeyError, TypeError):
            _PACKAGED = {}
    return _PACKAGED


def _cache_path(cache_dir: str, problem: Problem) -> Path:
    material = [COUNT_VERSION, problem.sha256, _version("torch"), _version("transformers")]
    key = hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]
    return Path(cache_dir) / "sol_counts" / f"{key}.json"


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def measure(path: str | Path | Problem, timeout_s: float = 120.0, cache_dir: str | None = None,
            use_cache: bool = True) -> dict[str, Any]:
    """Counts for one problem in a fresh worker. Raises ProblemError when the file is unreadable."""
    problem = _as_problem(path)
    with LintWorker(cache_dir) as worker:
        return measure_with(worker, problem, timeout_s, use_cache)


def sol_problem(path: str | Path | Problem, spec: GpuSpec = H200, precision: str = "fp32",
                timeout_s: float = 120.0, cache_dir: str | None = None, use_cache: bool = True) -> dict[str, Any]:
    """Counts plus the bound for one problem."""
    counts = measure(path, timeout_s, cache_dir, use_cache)
    return {**_identity(counts), **bound(counts, spec, precision)}


def sol_many(paths: Iterable[str | Path | Problem], spec: GpuSpec = H200, precision: str = "fp32",
             timeout_s: float = 120.0, cache_dir: str | None = None, progress: bool | TextIO = False,
             use_cache: bool = True) -> list[dict[str, Any]]:
    """Bounds for many problems, counted in ONE worker process (restarted only after a failure)."""
    items = list(paths)
    stream = sys.stderr if progress is True else (progress or None)
    rows = []
    with LintWorker(cache_dir) as worker:
        for n, item in enumerate(items, 1):
            try:
                problem = _as_problem(item)
            except ProblemError as exc:
                counts = {"problem": str(item), "path": str(item), "level": 0, "category": "", "flops": None,
                          "inputs": None, "params": None, "outputs": None, "notes": [f"unreadable: {exc}"]}
            else:
                counts = measure_with(worker, problem, timeout_s, use_cache)
            rows.append({**_identity(counts), **bound(counts, spec, precision)})
            if stream is not None:
                print(f"[{n}/{len(items)}] {counts['problem']}", file=stream, flush=True)
    return rows


def _identity(counts: dict[str, Any]) -> dict[str, Any]:
    return {k: counts.get(k) for k in ("problem", "path", "level", "category")}
