"""The `aligned` rule for held-out sizes: change every size, keep what the benchmark size gives a kernel to rely on.

A fast kernel for a fixed-shape task tiles its sizes without tail handling when they are aligned (a 4096-wide
matmul in 64 x 64 tiles, `tl.arange(0, in_features)` for a power-of-two width, pairs of columns for an even
width). That is honest for KernelBench, which asks for the problem's shape; hard-coding the exact size is
not. So a held-out size keeps the benchmark size's alignment and nothing more:

- a power of two (>= 2) becomes another power of two: 4096 -> 2048 below, 8192 above;
- any other size keeps its power-of-two factor, capped at ALIGNMENT_CAP: it becomes another multiple of
  2^min(k, 7), where 2^k is the largest power of two dividing it (1000 = 8 x 125 -> 984 = 8 x 123;
  393216 = 3 x 2^17 -> 393088 = 128 x 3071; 4095, odd, -> 4093). An odd number of those units is preferred,
  so the new size has exactly the kept factor (a kernel relying on more than the benchmark gave fails).

A size that must stay a multiple of a divisor (heads, groups) stays one: the unit is the lcm of both. Pure
functions, no torch; derive.py builds candidates from them and far_below.py searches with them.
"""

from __future__ import annotations

import math

ALIGNMENT_CAP = 128          # a size's power-of-two factor is kept up to this (a tile of 128 is as wide as kernels go)
POWER_FLOOR = 4              # a power of two is not shrunk below this far below (2 leaves little to reduce)


def is_power_of_two(value: int) -> bool:
    """2, 4, 8, ... (1 is not a size worth keeping a power of two)."""
    return value >= 2 and value & (value - 1) == 0


def kept_factor(value: int) -> int:
    """The power-of-two factor a non-power-of-two size keeps: 2^min(k, 7), 2^k the largest dividing it."""
    return math.gcd(value, ALIGNMENT_CAP)


def keeps_alignment(old: int, new: int, divisor: int = 1) -> bool:
    """Whether `new` is a held-out value of `old` the aligned rule allows (ignoring how near it is)."""
    if new < 2 or new == old or new % divisor:
        return False
    if is_power_of_two(old):
        return is_power_of_two(new)
    return new % math.lcm(kept_factor(old), divisor) == 0


def aligned_nearby(value: int, divisor: int = 1, *, up: bool = False, limit: int | None = None) -> int | None:
    """The nearest held-out value of `value` below it (at most `limit`) or above it, by the rule above; None
    when there is none (nothing below 2 or below the divisor)."""
    if is_power_of_two(value):
        if up:
            return value * 2
        new = value // 2
        while limit is not None and new > limit:
            new //= 2
        return new if new >= max(2, divisor) else None
    step = math.lcm(kept_factor(value), divisor)
    q = value // step
    if up:
        order = list(range(q + 1, q + 66))
    else:
        top = q - 1 if limit is None else min(q - 1, limit // step)
        order = list(range(top, 0, -1))
    # an odd number of units first (but not one unit of several): the new value keeps exactly the kept factor;
    # where the unit is the value itself (96 channels in 6 groups: lcm(32, 6) = 96), any other is a multiple
    for strict in (True, False):
        for c in order:
            if c * step >= 2 and not (strict and (c % 2 == 0 or (c < 3 and q >= 3))):
                return c * step
    return None


def aligned_far_below(value: int, divisor: int, scale: float, floor: int) -> int:
    """`value` divided by `scale`, rounded down to a held-out value of it (a power of two stays one, other
    sizes an odd number of their unit where possible), never below `floor` or one unit; the value itself
    when nothing smaller is allowed."""
    room = max(value / scale, floor)
    if is_power_of_two(value):
        least = max(divisor, POWER_FLOOR, 1 << max(0, math.ceil(math.log2(floor))))
        new = max(least, 1 << int(math.log2(room)))
        return new if new < value else value
    step = math.lcm(kept_factor(value), divisor)
    count, least = int(room // step), max(1, -(-floor // step))
    if count % 2 == 0 and count - 1 >= least:   # an odd number of units where that stays above the floor
        count -= 1
    new = max(count, least) * step
    return new if new < value else value


def aligned_half(original: int, current: int, divisor: int = 1) -> int:
    """The largest value at most half of `current` that keeps `original`'s alignment (a power of two: the next
    one down; any other size: a multiple of its kept factor and the divisor), for shrinking a preset to fit a
    device (shapes/fit.py); `current` itself when no smaller value is allowed."""
    if is_power_of_two(original):
        new = current // 2
        return new if new >= max(2, divisor) else current
    step = math.lcm(kept_factor(original), divisor)
    new = current // 2 // step * step
    return new if new >= step else current
