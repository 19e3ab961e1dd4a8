"""Threat C4: a solution time no hardware can deliver (`below_speed_of_light`).

Runs in the orchestrator after a correct, timed GPU run whose device the judge knows (the trusted
reference process names it; `judging/roofline.py` holds the ceilings, e.g. the H200). The counts (FLOPs, bytes of
inputs, outputs and parameters) come from one forward of the problem on the "meta" device in the trusted
lint worker child, never from the solution's process, and are cached on disk per problem.

Two bounds, used for two different things:

* The floor (`below_speed_of_light`, blocking). It must never exceed what an honest kernel can reach, so it
  is built to be loose:
  - bytes: inputs plus outputs only. Parameters are left out (a solution may fold, pre-pack or compress
    weights once); two L2 capacities are subtracted (outputs may stay in L2, and the flush before each
    timed call may leave part of the inputs there). Read at the fastest bandwidth known for the GPU
    (measured or datasheet, whichever is higher).
  - FLOPs: only for plain matrix products (category `matmul`), at twice the fastest tensor-core rate of
    the GPU at any precision (room for 3xTF32 / split-bf16 emulation and for algorithms that do fewer
    multiplications than the reference, such as Strassen). Convolutions are left out (Winograd and FFT
    algorithms skip most multiplications), and so are fused and multi-op problems: algebra can remove
    work (folding a sum into weights, re-associating matmuls).
  - problems whose answer does not need every input element are skipped: TAGS/CATEGORY or source text
    that show masks, causal or sliding windows, gathers/scatters/embeddings, triangular or diagonal
    operands, sparsity, routing, strides or dilation, slicing in forward, broadcast views.
  The flag is raised when the solution's median time is below MARGIN (0.8) x floor.
* The speed-of-light time of `kerneljudge suite` (all bytes, FLOPs at the run precision's peak). When the
  solution is no faster than it, its speed is physically plausible, and a large speedup only says the
  reference is slow: `suspicious_speedup` (the >100x review flag) is dropped. Where no bound is available
  (another GPU, a CPU run, a small preset, counts that failed) `suspicious_speedup` stays the fallback.
"""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path
from typing import Any, Callable

from kerneljudge.core import pyast
from kerneljudge.core.problem import Problem
from kerneljudge.judging import roofline

MARGIN = 0.8                      # flag only below 80% of the floor (timer noise, unmodelled effects)
COMPUTE_SLACK = 2.0               # FLOPs counted at twice the fastest tensor-core rate
COMPUTE_CATEGORIES = frozenset({"matmul"})  # not conv: Winograd and FFT convolutions skip multiplications
DEFAULT_L2_BYTES = 64 << 20       # when the device does not report its L2 size

STRUCTURE_TAGS = frozenset({
    "causal", "mask", "padding-mask", "sliding-window", "window-attention", "decay-mask", "gather", "scatter",
    "scatter-add", "gather-scatter", "index-select", "index-add", "embedding", "embedding-bag", "one-hot",
    "sparse", "dense-adjacency", "graph", "gnn", "message-passing", "paged", "kv-cache", "decode", "moe",
    "routing", "router", "top-1", "top-k", "topk", "shared-experts", "fine-grained-experts", "switch",
    "strided", "dilated", "segment-reduce", "sampling", "low-rank", "where", "upsample", "padding",
})
STRUCTURE_CATEGORIES = frozenset({"indexing", "moe", "llm-model", "hf-model", "ssm", "scan", "rnn"})
STRUCTURE_WORDS = re.compile(
    r"\b(tril|triu|diag|diagonal|diag_embed|masked_fill|masked_select|masked_scatter|gather|scatter\w*|"
    r"index_select|index_add|index_copy|index_put|index_fill|take|take_along_dim|embedding\w*|one_hot|sparse\w*|"
    r"nonzero|is_causal|attn_mask|causal|bincount|unique|searchsorted|bucketize|narrow|stride|dilation|"
    r"interpolate|expand|broadcast_to|as_strided|where|topk|cache_len\w*|seq_lens?|lengths?)\b")

_lock = threading.Lock()
_known_counts: dict[tuple[str, str], dict[str, Any]] = {}


def spec_for(device_name: str):
    """The suite's ceilings for this device (matched by name, e.g. "NVIDIA H200"), or None."""
    name = (device_name or "").lower()
    for key, spec in roofline.GPUS.items():
        if key.lower() in name:
            return key, spec
    return None


def _ceilings(key: str, spec: Any) -> tuple[float, float]:
    """The fastest bandwidth and the fastest tensor-core rate known for the GPU (measured or datasheet)."""
    sheet = getattr(roofline, f"{key.upper()}_DATASHEET", None) or {}
    bandwidth = max(float(spec.memory_bandwidth), float(sheet.get("memory_bandwidth", 0.0)))
    rates = [float(getattr(spec, f, 0.0)) for f in ("tf32_flops", "bf16_flops", "fp16_flops")]
    rates += [float(sheet.get(f, 0.0)) for f in ("tf32_flops", "bf16_flops", "fp16_flops")]
    return bandwidth, max(rates)


def structure(problem: Problem, text: str | None = None) -> str | None:
    """Why the problem's counts may overstate the least work (its structure), or None."""
    tags = {str(t).lower() for t in (problem.metadata.get("TAGS") or []) if isinstance(t, str)}
    hit = sorted(tags & STRUCTURE_TAGS)
    if hit:
        return f"tagged {', '.join(hit)}"
    if problem.category.lower() in STRUCTURE_CATEGORIES:
        return f"category {problem.category}"
    if text is None:
        try:
            text = Path(problem.path).read_text()
        except OSError as exc:
            return f"unreadable ({exc})"
    words = sorted(set(STRUCTURE_WORDS.findall(_code_only(text))))
    if words:
        return f"uses {', '.join(words[:4])}"
    if _slices_in_forward(text):
        return "indexes or slices tensors in forward"
    return None


def _code_only(text: str) -> str:
    """The source without comments and docstrings (a docstring that says "gather" changes nothing)."""
    try:
        tree = pyast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0].value.value = ""
    try:
        return ast.unparse(tree)
    except Exception:  # unparse failing on an odd tree must not crash the judge
        return text


def _slices_in_forward(text: str) -> bool:
    """Subscripts in any forward (or module-level function) other than shape lookups."""
    try:
        tree = pyast.parse(text)
    except SyntaxError:
        return True
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in ("get_inputs", "get_init_inputs")]
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        funcs += [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name != "__init__"]
    for func in funcs:
        for node in ast.walk(func):
            if isinstance(node, ast.Subscript):
                value = node.value
                if isinstance(value, ast.Attribute) and value.attr in ("shape",):
                    continue
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size":
                    continue
                return True
    return False


def _counts(problem: Problem, cache_dir: str, timeout_s: float,
            count: Callable[[str], dict[str, Any]] | None = None) -> dict[str, Any]:
    """FLOP and byte counts at the default size: packaged with the suite, cached on disk, or counted by
    `count` (the warm trusted reference process: well under a second) or else a fresh lint worker."""
    key = (problem.sha256, cache_dir)
    with _lock:
        if key in _known_counts:
            return _known_counts[key]
    counts = roofline.known_counts(problem, cache_dir)
    if counts is None and count is not None:
        try:
            counts = roofline.counts_from_reply(count(problem.path))
        except Exception as exc:  # the reference process could not count: a lint worker still can
            counts = {"error": str(exc)}
        if "error" in counts:
            counts = None
        else:
            roofline.store_counts(problem, cache_dir, counts)
    if counts is None:
        counts = roofline.measure(problem, timeout_s=timeout_s, cache_dir=cache_dir)
    if not counts.get("error"):
        with _lock:
            _known_counts[key] = counts
    return counts


def _io_bytes(tally: Any, width: int) -> int | None:
    if not isinstance(tally, dict):
        return None
    return int(tally.get("float_elems", 0)) * width + int(tally.get("other_bytes", 0))


def floor_ms(counts: dict[str, Any], bandwidth: float, tc_rate: float, precision: str, l2_bytes: int,
             use_flops: bool) -> dict[str, Any] | None:
    """The floor (see the module docstring) from counts; None when the inputs' size is unknown."""
    width = roofline.FLOAT_BYTES[precision]
    inputs = _io_bytes(counts.get("inputs"), width)
    if inputs is None:
        return None
    outputs = _io_bytes(counts.get("outputs"), width) or 0
    moved = max(0, inputs + outputs - 2 * l2_bytes)
    memory_s = moved / bandwidth
    flops = counts.get("flops") if use_flops else None
    compute_s = flops / (COMPUTE_SLACK * tc_rate) if isinstance(flops, (int, float)) and flops > 0 else 0.0
    return {"floor_ms": max(memory_s, compute_s) * 1e3, "bytes": moved, "flops": flops if compute_s else None,
            "bound_by": "compute" if compute_s > memory_s else "memory"}


def assess(problem: Problem, preset: dict[str, Any], precision: str, environment: dict[str, Any],
           sol_ms: float, cache_dir: str, timeout_s: float = 120.0,
           count: Callable[[str], dict[str, Any]] | None = None) -> dict[str, Any]:
    """What C4 concludes for one correct GPU run: {"add": [...flags], "drop": [...flags], "note": str}."""
    out: dict[str, Any] = {"add": [], "drop": [], "note": ""}
    found = spec_for(str(environment.get("device_name", "")))
    if found is None:
        out["note"] = "no speed-of-light ceilings for this device"
        return out
    if preset:
        out["note"] = "speed of light is defined at the default size only"
        return out
    key, spec = found
    counts = _counts(problem, cache_dir, timeout_s, count)
    if counts.get("error"):
        out["note"] = f"counts unavailable: {str(counts['error'])[:200]}"
        return out
    standard = roofline.bound(counts, spec, precision).get("sol_ms")
    if isinstance(standard, (int, float)) and standard > 0 and sol_ms >= standard:
        out["drop"].append("suspicious_speedup")  # physically plausible: the reference is merely slow
    why_not = structure(problem)
    if why_not:
        out["note"] = f"no floor: the problem's counts may overstate the least work ({why_not})"
        return out
    bandwidth, tc_rate = _ceilings(key, spec)
    l2 = environment.get("l2_bytes")
    l2_bytes = int(l2) if isinstance(l2, int) and l2 > 0 else DEFAULT_L2_BYTES
    floor = floor_ms(counts, bandwidth, tc_rate, precision, l2_bytes,
                     problem.category.lower() in COMPUTE_CATEGORIES)
    if floor is None or floor["floor_ms"] <= 0:
        out["note"] = "no floor: the bytes that must move are unknown or fit in L2"
        return out
    out["floor_ms"] = floor["floor_ms"]
    if sol_ms < MARGIN * floor["floor_ms"]:
        what = (f"{floor['flops'] / 1e9:.3g} GFLOP at {COMPUTE_SLACK:g}x {tc_rate / 1e12:.0f} TFLOP/s"
                if floor["bound_by"] == "compute" else
                f"{floor['bytes'] / 1e6:.4g} MB of inputs and outputs beyond two L2 capacities at "
                f"{bandwidth / 1e12:.2g} TB/s")
        out["add"].append("below_speed_of_light")
        out["drop"] = [f for f in out["drop"] if f != "suspicious_speedup"]
        out["note"] = (f"{sol_ms:.4g} ms is below {MARGIN:g}x the least time any {spec.name} needs for this "
                       f"problem ({floor['floor_ms']:.4g} ms: {what})")
    return out


__all__ = ["MARGIN", "COMPUTE_SLACK", "assess", "floor_ms", "spec_for", "structure"]
