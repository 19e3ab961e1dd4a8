"""numerics/classes.py's two passes over a large output on the GPU, each in one Triton kernel.

The chunk loop of numerics.measure runs about forty elementwise torch passes over float64 copies of each
chunk; on an H200 that is ~80 ms for a 1.25 GiB output, and a judgement compares a dozen such outputs. Here
each pass reads the two outputs once, in their own dtype, and computes every elementwise value in the same
arithmetic as the torch path (the float64 conversions are exact, each op rounds once: FMA contraction is
off; the kernelbench isclose of fp16/bf16 outputs is torch's own, whose rounding of its scalars has changed
between versions). Counts, maxima and the worst element are therefore the same; only the float64 sums
(ref_sq, diff_sq, m2, m4) are added in another order, a difference of about 1e-16 relative that no bound
can notice.

Used for CUDA outputs of at least MIN_ELEMENTS elements when Triton is importable; KERNELJUDGE_FUSED_COMPARE=0
turns it off. tests/fused_compare_probe.py checks it against the torch path: on the CPU through Triton's
interpreter (tests/test_numerics.py runs it), and on a GPU with `--device cuda`.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

import torch

MIN_ELEMENTS = 1 << 20        # below this the torch path is as fast and needs no compile
CHUNK = 1 << 24               # elements per torch.isclose of a half output
BLOCK = 1024
PROGRAMS_PER_SM = 4
_INT_VIEW = {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
             torch.bfloat16: torch.int16}


_broken: list[str] = []       # why the kernels failed in this process, once they have


def usable(r: torch.Tensor, s: torch.Tensor) -> bool:
    """The fused passes serve this pair of outputs (the caller falls back to the torch path otherwise)."""
    if os.environ.get("KERNELJUDGE_FUSED_COMPARE", "1") == "0" or _broken:
        return False
    if r.device.type != "cuda" or r.dtype not in _INT_VIEW or r.numel() < MIN_ELEMENTS:
        return False
    if (s.device, s.dtype, s.shape) != (r.device, r.dtype, r.shape):
        return False
    return _kernels() is not None


@functools.lru_cache(maxsize=1)
def _kernels() -> Any:
    """The two jitted kernels, or None where Triton cannot be imported."""
    try:
        from kerneljudge.numerics import fused_compare_kernels
    except Exception:   # no Triton here (or one too old for these kernels)
        return None
    return fused_compare_kernels


def give_up(exc: BaseException) -> None:
    """A kernel failed (a compile or launch error): this process compares through the torch passes from now on."""
    if not _broken:
        _broken.append(f"{type(exc).__name__}: {exc}"[:500])
        print(f"kerneljudge: the fused GPU compare failed; using the torch passes ({_broken[0]})", file=sys.stderr)


def _grid(r: torch.Tensor) -> tuple[int, int, int]:
    """(elements, tiles of BLOCK, programs): each program walks every programs-th tile."""
    n = r.numel()
    tiles = -(-n // BLOCK)
    if r.device.type != "cuda":
        return n, tiles, min(tiles, 2)   # the interpreter (tests): each program walks several tiles
    sms = torch.cuda.get_device_properties(r.device).multi_processor_count
    return n, tiles, max(1, min(tiles, sms * PROGRAMS_PER_SM))


def _launch_options(r: torch.Tensor) -> dict[str, Any]:
    # separate roundings for a * b + c, as torch's one-op-per-kernel path has (the interpreter knows no options)
    return {"enable_fp_fusion": False} if r.device.type == "cuda" else {}


def first_pass(r: torch.Tensor, s: torch.Tensor, atol: float, rtol: float) -> dict[str, Any]:
    """numerics.FirstPass's fields for flat, contiguous r and s of one dtype; kernelbench isclose(atol, rtol)."""
    k = _kernels()
    n, tiles, programs = _grid(r)
    sums = torch.zeros((programs, 3), dtype=torch.float64, device=r.device)   # ref_sq, diff_sq, max_abs_err
    counts = torch.zeros((programs, 5), dtype=torch.int64, device=r.device)
    params = torch.tensor([atol, rtol], dtype=torch.float64, device=r.device)
    own_isclose = r.dtype in (torch.float32, torch.float64)
    k.first_pass_kernel[(programs,)](
        r, s, r.view(_INT_VIEW[r.dtype]), s.view(_INT_VIEW[s.dtype]), n, tiles, params, sums, counts,
        ISCLOSE=own_isclose, BLOCK=BLOCK, **_launch_options(r))
    ref_sq, diff_sq = sums[:, 0].sum(), sums[:, 1].sum()
    total = torch.cat([torch.stack([ref_sq, diff_sq, sums[:, 2].max()]), counts.sum(0).double()]).tolist()
    ref_sq_f, diff_sq_f, max_abs, count, bit_diff, not_close, nonfinite_mismatch, sol_nonfinite = total
    if not own_isclose:   # fp16/bf16: torch's own isclose, whose rounding of the scalars varies by version
        not_close = sum(int((~torch.isclose(s[i:i + CHUNK], r[i:i + CHUNK], atol=atol, rtol=rtol)).sum())
                        for i in range(0, n, CHUNK))
    return {"count": int(count), "bitwise_equal": bit_diff == 0, "nonfinite_mismatch": int(nonfinite_mismatch),
            "sol_nonfinite": int(sol_nonfinite), "ref_sq": ref_sq_f, "diff_sq": diff_sq_f,
            "max_abs_err": max_abs, "not_close": int(not_close)}


def second_pass(r: torch.Tensor, s: torch.Tensor, scale: float, limit: float,
                override: dict[str, float] | None) -> dict[str, Any]:
    """numerics.SecondPass's sums for flat, contiguous r and s; the worst element's index (-1 when empty)."""
    k = _kernels()
    n, tiles, programs = _grid(r)
    floats = torch.zeros((programs, 4), dtype=torch.float64, device=r.device)  # max rel, m2, m4, m_peak
    ints = torch.zeros((programs, 3), dtype=torch.int64, device=r.device)      # worst index, over, override misses
    o_atol = (override or {}).get("atol", 0.0) * scale    # a Python float product, as the torch path makes it
    o_rtol = (override or {}).get("rtol", 0.0)
    params = torch.tensor([scale, limit, o_atol, o_rtol], dtype=torch.float64, device=r.device)
    k.second_pass_kernel[(programs,)](
        r, s, n, tiles, params, floats, ints, HAS_OVERRIDE=override is not None, BLOCK=BLOCK,
        **_launch_options(r))
    best = floats[:, 0].max()
    first_at = torch.where(floats[:, 0] == best, ints[:, 0], torch.iinfo(torch.int64).max).min()
    head = torch.stack([best, floats[:, 1].sum(), floats[:, 2].sum(), floats[:, 3].max()]).tolist()
    tail = torch.stack([first_at, ints[:, 1].sum(), ints[:, 2].sum()]).tolist()
    max_rel, m2, m4, m_peak = head
    at, over, override_misses = tail
    return {"max_rel": max(max_rel, 0.0), "at": int(at) if n else -1, "over": int(over), "m2": m2, "m4": m4,
            "m_peak": m_peak, "override_ok": override_misses == 0}


