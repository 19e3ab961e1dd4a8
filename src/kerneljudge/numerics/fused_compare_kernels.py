"""The Triton kernels of numerics/fused_compare.py (imported only where Triton is).

Each program walks tiles pid, pid + programs, ... and keeps per-lane partial results, summed once at its end
into one row of the caller's buffers. Every elementwise value is computed as numerics/classes.py computes it:
float64 from exact conversions, a finite test of (x - x) == 0 on the output's own dtype, and the kernelbench
isclose in the output's dtype with torch's op order. Scalars come from a float64 tensor: Triton would pass a
Python float as fp32.
"""

import triton
import triton.language as tl


@triton.jit
def _finite(x):
    return (x - x) == 0


@triton.jit(do_not_specialize=["n", "tiles"])   # one compile for every size
def first_pass_kernel(r_ptr, s_ptr, r_bits_ptr, s_bits_ptr, n, tiles, params_ptr, sums_ptr, counts_ptr,
                      ISCLOSE: tl.constexpr, BLOCK: tl.constexpr):
    """Row pid of sums: ref_sq, diff_sq, max_abs_err; of counts: finite reference positions, positions whose
    bits differ, kernelbench isclose failures, NaN/Inf mismatches, solution NaN/Inf where the reference is
    finite. params: atol, rtol of the kernelbench isclose, counted only with ISCLOSE (fp32 and fp64 outputs:
    torch rounds the scalars of a half tensor's ops differently across versions and devices)."""
    pid = tl.program_id(0).to(tl.int64)   # tile * BLOCK passes 2^31 on large outputs
    programs = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    atol = tl.load(params_ptr)
    rtol = tl.load(params_ptr + 1)
    ref_sq = tl.zeros([BLOCK], dtype=tl.float64)
    diff_sq = tl.zeros([BLOCK], dtype=tl.float64)
    max_abs = tl.zeros([BLOCK], dtype=tl.float64)
    count = tl.zeros([BLOCK], dtype=tl.int32)
    bit_diff = tl.zeros([BLOCK], dtype=tl.int32)
    not_close = tl.zeros([BLOCK], dtype=tl.int32)
    mismatch = tl.zeros([BLOCK], dtype=tl.int32)
    sol_bad = tl.zeros([BLOCK], dtype=tl.int32)
    for tile in range(pid, tiles, programs):
        offs = tile * BLOCK + lanes
        inside = offs < n
        r = tl.load(r_ptr + offs, mask=inside, other=0.0)
        s = tl.load(s_ptr + offs, mask=inside, other=0.0)
        r_bits = tl.load(r_bits_ptr + offs, mask=inside, other=0)
        s_bits = tl.load(s_bits_ptr + offs, mask=inside, other=0)
        bit_diff += (inside & (r_bits != s_bits)).to(tl.int32)
        if ISCLOSE:   # torch.isclose(s, r, atol, rtol): s == r, or |s - r| finite and <= atol + |rtol * r|
            allowed = atol.to(r.dtype) + tl.abs(rtol.to(r.dtype) * r)
            actual = tl.abs(s - r)
            close = (s == r) | (_finite(actual) & (actual <= allowed))
            not_close += (inside & (close == 0)).to(tl.int32)
        ref_ok = _finite(r)
        sol_ok = _finite(s)
        r64 = r.to(tl.float64)
        s64 = s.to(tl.float64)
        same = (r64 == s64) | ((r64 != r64) & (s64 != s64))
        mismatch += (inside & (ref_ok == 0) & (same == 0)).to(tl.int32)
        counted = inside & ref_ok
        sol_bad += (counted & (sol_ok == 0)).to(tl.int32)
        err = tl.where(counted, tl.abs(tl.where(sol_ok, s64, 0.0) - r64), 0.0)
        count += counted.to(tl.int32)
        ref_sq += tl.where(counted, r64 * r64, 0.0)
        diff_sq += err * err
        max_abs = tl.maximum(max_abs, err)
    tl.store(sums_ptr + pid * 3, tl.sum(ref_sq, axis=0))
    tl.store(sums_ptr + pid * 3 + 1, tl.sum(diff_sq, axis=0))
    tl.store(sums_ptr + pid * 3 + 2, tl.max(max_abs, axis=0))
    tl.store(counts_ptr + pid * 5, tl.sum(count.to(tl.int64), axis=0))
    tl.store(counts_ptr + pid * 5 + 1, tl.sum(bit_diff.to(tl.int64), axis=0))
    tl.store(counts_ptr + pid * 5 + 2, tl.sum(not_close.to(tl.int64), axis=0))
    tl.store(counts_ptr + pid * 5 + 3, tl.sum(mismatch.to(tl.int64), axis=0))
    tl.store(counts_ptr + pid * 5 + 4, tl.sum(sol_bad.to(tl.int64), axis=0))


@triton.jit(do_not_specialize=["n", "tiles"])
def second_pass_kernel(r_ptr, s_ptr, n, tiles, params_ptr, floats_ptr, ints_ptr,
                       HAS_OVERRIDE: tl.constexpr, BLOCK: tl.constexpr):
    """Row pid of floats: the largest rel error, sum m^2, sum m^4, max m^2 (m = max(S, |ref|) where the
    reference is finite); of ints: the first index of that largest error, elements over the limit, elements
    outside the override's atol * S + rtol * |ref|. params: S, limit, atol * S, rtol."""
    pid = tl.program_id(0).to(tl.int64)   # tile * BLOCK passes 2^31 on large outputs
    programs = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    scale = tl.load(params_ptr)
    limit = tl.load(params_ptr + 1)
    o_atol = tl.load(params_ptr + 2)
    o_rtol = tl.load(params_ptr + 3)
    best = tl.full([BLOCK], -1.0, dtype=tl.float64)
    best_at = tl.zeros([BLOCK], dtype=tl.int64)
    m2_sum = tl.zeros([BLOCK], dtype=tl.float64)
    m4_sum = tl.zeros([BLOCK], dtype=tl.float64)
    m2_max = tl.zeros([BLOCK], dtype=tl.float64)
    over = tl.zeros([BLOCK], dtype=tl.int32)
    misses = tl.zeros([BLOCK], dtype=tl.int32)
    for tile in range(pid, tiles, programs):
        offs = tile * BLOCK + lanes
        inside = offs < n
        r = tl.load(r_ptr + offs, mask=inside, other=0.0)
        s = tl.load(s_ptr + offs, mask=inside, other=0.0)
        ref_ok = inside & _finite(r)
        both = ref_ok & _finite(s)
        r64 = tl.where(both, r.to(tl.float64), 0.0)
        s64 = tl.where(both, s.to(tl.float64), 0.0)
        err = tl.abs(s64 - r64)
        m = tl.where(ref_ok, tl.maximum(tl.abs(r64), scale), 0.0)
        rel = tl.where(m > 0, err / m, tl.where(err > 0, float("inf"), 0.0))
        rel = tl.where(inside, rel, -1.0)
        better = rel > best          # strictly: a lane keeps its first index of its largest error
        best = tl.where(better, rel, best)
        best_at = tl.where(better, offs, best_at)
        over += (inside & (rel > limit)).to(tl.int32)
        m2 = m * m
        m2_sum += m2
        m4_sum += m2 * m2
        m2_max = tl.maximum(m2_max, m2)
        if HAS_OVERRIDE:
            allowed = o_atol + o_rtol * tl.abs(r64)
            misses += (inside & (err > allowed)).to(tl.int32)
    top = tl.max(best, axis=0)
    first = tl.min(tl.where(best == top, best_at, 9223372036854775807), axis=0)
    tl.store(floats_ptr + pid * 4, top)
    tl.store(floats_ptr + pid * 4 + 1, tl.sum(m2_sum, axis=0))
    tl.store(floats_ptr + pid * 4 + 2, tl.sum(m4_sum, axis=0))
    tl.store(floats_ptr + pid * 4 + 3, tl.max(m2_max, axis=0))
    tl.store(ints_ptr + pid * 3, first)
    tl.store(ints_ptr + pid * 3 + 1, tl.sum(over.to(tl.int64), axis=0))
    tl.store(ints_ptr + pid * 3 + 2, tl.sum(misses.to(tl.int64), axis=0))
