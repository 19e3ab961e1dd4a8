"""Candidate held-out shapes and CPU-sized presets from a problem's size constants (pure: no torch, no I/O).

Sizes are the constants roles.py calls `batch` or `feature`. Constants of equal kind, value and divisor
form one group and change together (square matrices stay square, `seq_len == max_seqlen` stays equal); constants
computed from others are recomputed, so the file's own relations hold.

Held-out values come from one of two rules (the mode, JudgeOptions.held_out). `aligned` (the default,
alignment.py): a power of two stays a power of two, other sizes keep their power-of-two factor up to 128, so a
kernel that tiles aligned sizes without tails passes and one that hard-codes a size does not. `general`
(`nearby`): a size v that must stay a multiple of d (heads, groups) becomes d * q' with q' odd, so the new value
is not a multiple of 8 (unless d is) nor of v. Either way, down: the largest such value below v; up: the
smallest above. Candidates, in order of preference (only the ones that change something):

  1. mixed: features up, batch down enough to pay for them (bytes estimated as a product of the sizes;
     the probe measures the real bytes), so a kernel that hard-codes a feature width sees a wider one;
  2. all down: every size a little below, so memory can only shrink;
  3. batch only, 4. features only: each alone, for references that reject changing both;
  5. (general only) all down to twice an odd number, for references that need even sizes (rotary embeddings);
  6. (general only) all down keeping each size's power-of-two factor (256 -> 224 = 7 x 32), for references
     that halve a size several times (U-Nets): the one family whose values may be multiples of 8.
Without a batch-like size, the largest size plays the batch's part in 1 (down, paying for the others).

The probe then drops a variant the reference rejects, whose output structure differs, or whose bytes exceed
the benchmark shape's.

Far-below variant (threat B13: code that branches on the input size, `stride = numel // 100_000_000`, never
meets a nearby shape): every size divided by one common scale, so sizes that must stay equal stay equal,
then rounded down to a value of one family (aligned: the same rule as above, 4096 -> 256; general: odd
first, FAR_BELOW_FAMILIES), never below FAR_BELOW_FLOOR.
The scale is searched with probes (far_below.py) until the input elements are at most far_below_target():
FAR_BELOW_RATIO times fewer than the base shape's, and at most FAR_BELOW_ELEMENTS.

Small preset: batch-like sizes go to at most SMALL_BATCH, then the largest size (relative to its floor) is
halved, repeatedly, until the measured counts fit the budgets below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kerneljudge.shapes import alignment
from kerneljudge.shapes import roles as R
from kerneljudge.shapes.scan import Scan, is_int, recompute

# Budgets of the small preset (CPU, one thread). Bytes as the inputs are created (fp32 for floats).
SMALL_INPUT_BYTES = 1 << 20          # each input tensor: 1 MiB (262144 fp32 elements)
SMALL_IO_BYTES = 4 << 20             # all inputs and outputs together: 4 MiB
SMALL_PARAM_BYTES = 4 << 20          # parameters and buffers: 4 MiB
SMALL_FLOPS = 100_000_000            # counted FLOPs of one forward (torch.utils.flop_counter): 1e8
SMALL_CPU_SECONDS = 0.25             # a measured forward on one CPU thread (the second of two)
SMALL_BATCH = 4                      # batch-like sizes start at most here
FEATURE_FLOOR = 8                    # halving stops here (or at the original value if smaller)
BATCH_FLOOR = SMALL_BATCH            # rows are cheap to keep, and a batch of 4 leaves room for a held-out 3
MAX_VARIANTS = 2                     # held-out variants kept per preset (besides the far-below one)
FAR_BELOW_ELEMENTS = 1 << 17         # far-below variant: input elements at most this (the small preset's scale)
FAR_BELOW_RATIO = 10                 # ... and at least this many times fewer than its base shape's
FAR_BELOW_FLOOR = 3                  # no size goes below 3 by shrinking (1 makes reductions and norms trivial)
# rounding of a shrunk size, in order of preference: an odd number of units (never a multiple of 8 unless the
# divisor is); twice an odd number (rotary embeddings, complex views); the size's power-of-two factor kept
# (U-Nets halve a size several times); plain multiples of the divisor, the last resort
FAR_BELOW_FAMILIES = ("odd", "even", "power-of-two factors kept", "plain")
ALIGNED, GENERAL = "aligned", "general"   # the held-out modes that derive shapes (core.types.HELD_OUT_MODES)

Group = tuple[str, int, int]         # (kind, value at the base shape, divisor)


@dataclass(frozen=True)
class Variant:
    label: str
    overrides: dict[str, Any]


class Derivation:
    """Sizes of one problem at a base shape (the file's defaults, or those plus a preset's overrides)."""

    def __init__(self, scan: Scan, roles: dict[str, R.Role], base: dict[str, Any] | None = None,
                 mode: str = ALIGNED):
        if mode not in (ALIGNED, GENERAL):
            raise ValueError(f"held-out shapes are derived in mode aligned or general, not {mode!r}")
        self.scan = scan
        self.roles = roles
        self.base = dict(base or {})
        self.mode = mode
        self.env: dict[str, Any] = {**scan.others, **{n: c.value for n, c in scan.constants.items()}, **self.base}
        self.divisors: dict[Group, int] = {}
        for name in R.sizes(roles):
            kind = roles[name].kind
            for v in _elements(self.env[name]):
                if is_int(v) and R.changeable(v, kind == R.BATCH):
                    self.divisors[(kind, v, roles[name].divisor)] = roles[name].divisor

    @property
    def groups(self) -> list[Group]:
        return sorted(self.divisors, key=lambda g: (g[0] != R.BATCH, -g[1]))

    def overrides(self, mapping: dict[Group, int]) -> dict[str, Any] | None:
        """Full overrides (base included) for new group values (the base itself when nothing changes);
        None when a dependent constant cannot be recomputed."""
        env = dict(self.env)
        changed: dict[str, Any] = {}
        for name in R.sizes(self.roles):
            kind, d = self.roles[name].kind, self.roles[name].divisor
            old = env[name]
            new = _map(old, lambda v: mapping.get((kind, v, d), v) if is_int(v) else v)
            if new != old:
                env[name] = changed[name] = new
        for name, const in self.scan.constants.items():
            role = self.roles[name]
            if role.kind == R.DEPENDENT and set(role.deps or const.deps) & set(changed):
                value = recompute(role.expr or const.expr, env)
                if value is None:
                    return None
                if value != env[name]:
                    env[name] = changed[name] = value
        return {**self.base, **changed}

    # ---------------------------------------------------------------------------------------- held out

    def held_out(self) -> list[Variant]:
        """Candidate held-out shapes by this derivation's rule, in order of preference, each changing something."""
        groups = self.groups
        step = alignment.aligned_nearby if self.mode == ALIGNED else nearby
        plans = self._nearby_plans(step)
        if self.mode == GENERAL:
            # for references that need even sizes (rotary embeddings, complex views): twice an odd number
            plans.append(("all sizes down, even", _known({g: nearby(g[1], g[2], even=True) for g in groups})))
            # last: for references that halve a size several times (U-Nets, pyramids), keep its power-of-two
            # factor (256 -> 224 = 7 x 32); these may be multiples of 8, but still not of the original
            kept = {g: nearby(g[1], g[2] * _pow2_unit(g[1] // g[2])) for g in groups}
            plans.append(("all sizes down, power-of-two factors kept", _known(kept)))
        variants, seen = [], []
        for label, mapping in plans:
            found = self.overrides(mapping)
            if found is not None and found != self.base and found not in seen:
                seen.append(found)
                variants.append(Variant(label, found))
        return variants

    def _nearby_plans(self, step) -> list[tuple[str, dict[Group, int]]]:
        """Candidates 1-4 of the module docstring, with `step(value, divisor, up=, limit=)` giving new values."""
        groups = self.groups
        batches = [g for g in groups if g[0] == R.BATCH]
        feats = [g for g in groups if g[0] == R.FEATURE]
        # without a batch-like size, the largest size pays for the others going up
        payers = batches or ([max(feats, key=lambda g: g[1])] if len(feats) > 1 else [])
        risers = [g for g in feats if g not in payers]
        down = {g: step(g[1], self.divisors[g]) for g in groups}
        plans: list[tuple[str, dict[Group, int]]] = []
        if payers and risers:
            up = {g: step(g[1], self.divisors[g], up=True) for g in risers}
            share = math.prod(up[g] / g[1] for g in risers if up[g]) ** (1.0 / len(payers))
            lowered = {g: step(g[1], self.divisors[g], limit=int(g[1] / share)) for g in payers}
            label = "mixed: features up, batch down" if batches else "mixed: largest size down, others up"
            plans.append((label, {**_known(up), **_known(lowered)}))
        plans.append(("all sizes down", _known(down)))
        if batches and feats:
            plans.append(("batch only, down", _known({g: down[g] for g in batches})))
            plans.append(("features only, down", _known({g: down[g] for g in feats})))
        return plans

    # ------------------------------------------------------------------------------------- far below

    def shrunk(self, scale: float, family: str, still: frozenset[Group] = frozenset()) -> dict[str, Any] | None:
        """Full overrides with every size but those in `still` divided by `scale` and rounded down to a value
        of `family` (far_below_value); None when a dependent constant cannot be recomputed."""
        mapping = {g: far_below_value(g[1], self.divisors[g], scale, family) for g in self.groups if g not in still}
        return self.overrides(mapping)

    def names(self, group: Group) -> list[str]:
        """The size constants a group's value belongs to."""
        kind, value, divisor = group
        return [n for n in R.sizes(self.roles) if self.roles[n].kind == kind and self.roles[n].divisor == divisor
                and value in _elements(self.env[n])]

    def top_scale(self, still: frozenset[Group] = frozenset(), family: str = "odd") -> float:
        """The scale past which no size shrinks any more (each at its floor); 1.0 when none can shrink."""
        if family == ALIGNED:   # the floor of an aligned size is its smallest allowed value, not one unit
            least = {g: far_below_value(g[1], self.divisors[g], math.inf, family) for g in self.groups}
            return max([g[1] / least[g] for g in self.groups if g not in still] + [1.0])
        return max([g[1] / _far_floor(self.divisors[g]) for g in self.groups if g not in still] + [1.0])

    def far_below_families(self) -> tuple[str, ...]:
        """The families a far-below size may be rounded to under this derivation's rule, in order of preference."""
        return (ALIGNED,) if self.mode == ALIGNED else FAR_BELOW_FAMILIES

    # ------------------------------------------------------------------------------------------- small

    def floor(self, group: Group) -> int:
        kind, value, d = group
        least = BATCH_FLOOR if kind == R.BATCH else FEATURE_FLOOR
        return min(value, max(d, _round_to(least, d)))

    def small_start(self) -> dict[Group, int]:
        """Batch-like groups down to at most SMALL_BATCH (a multiple of their divisor); the rest as they are."""
        start = {}
        for g in self.groups:
            if g[0] == R.BATCH and g[1] > SMALL_BATCH:
                start[g] = max(self.floor(g), _round_to(SMALL_BATCH, self.divisors[g]))
        return start

    def halve(self, current: dict[Group, int], frozen: set[Group], times: int,
              keep_alignment: bool = False) -> tuple[dict[Group, int], list[Group]]:
        """Halve the largest group (relative to its floor) `times` times; returns new values and who moved.
        `keep_alignment`: each new value keeps the base value's alignment (alignment.aligned_half)."""
        current = dict(current)
        moved: list[Group] = []
        for _ in range(max(1, times)):
            open_groups = [g for g in self.groups if g not in frozen
                           and self._halved(g, current.get(g, g[1]), keep_alignment) < current.get(g, g[1])]
            if not open_groups:
                break
            g = max(open_groups, key=lambda g: (current.get(g, g[1]) / self.floor(g), g[1]))
            current[g] = self._halved(g, current.get(g, g[1]), keep_alignment)
            moved.append(g)
        return current, moved

    def halve_all(self, current: dict[Group, int], keep_alignment: bool = False) -> dict[Group, int]:
        """Every group halved once (those at their floor stay), for sizes the reference needs to move together
        (a batch that broadcasts against a width)."""
        return {**current, **{g: self._halved(g, current.get(g, g[1]), keep_alignment) for g in self.groups}}

    def _halved(self, group: Group, value: int, keep_alignment: bool) -> int:
        """`value` of a group halved, never below the group's floor (the value itself when it cannot move)."""
        if keep_alignment:
            new = alignment.aligned_half(group[1], value, self.divisors[group])
            return new if new >= self.floor(group) else value
        d = self.divisors[group]
        return max(self.floor(group), (value // 2) // d * d) if value > self.floor(group) else value


def nearby(value: int, divisor: int = 1, *, up: bool = False, limit: int | None = None,
           even: bool = False) -> int | None:
    """A value near `value`, a multiple of `divisor` (and of 2 when `even`), an odd number of those units
    where possible, not a multiple of 8 (unless the divisor is) nor of `value`; below it (at most `limit`),
    or above it. None when there is no such value (nothing below 2)."""
    unit = divisor * 2 if even else divisor
    q = value // unit
    if up:
        order = list(range(q + 1, q + 66))
    else:
        top = q - 1 if limit is None else min(q - 1, limit // unit)
        order = list(range(top, 0, -1))
    for strict in (True, False):
        for c in order:
            new = c * unit
            if new < 2 or new % value == 0 or (new % 8 == 0 and divisor % 8 != 0):
                continue
            if strict and (c % 2 == 0 or (c < 3 and q >= 3)):
                continue
            return new
    return None


def far_below_target(base_elements: int) -> int:
    """Input elements the far-below variant aims at: FAR_BELOW_RATIO times fewer than its base shape's, and
    at most FAR_BELOW_ELEMENTS (a threshold such as `numel >= 1e6` must flip)."""
    return max(1, min(base_elements // FAR_BELOW_RATIO, FAR_BELOW_ELEMENTS))


def far_below_value(value: int, divisor: int, scale: float, family: str) -> int:
    """`value` divided by `scale`, rounded down to a multiple of `divisor` of the given family (an odd
    number of units, twice one, an odd number of the value's power-of-two unit, any number, or `aligned`:
    alignment.aligned_far_below), never below the floor (FAR_BELOW_FLOOR or the divisor); the value itself
    when it is at the floor already."""
    floor = _far_floor(divisor)
    if value <= floor:
        return value
    if family == ALIGNED:
        return alignment.aligned_far_below(value, divisor, scale, floor)
    room = max(value / scale, floor)
    if family == "plain":
        unit, odd = divisor, False
    elif family == "even":
        unit, odd = 2 * divisor, True
    elif family == "power-of-two factors kept":
        unit, odd = divisor * _pow2_unit(value // divisor), True
    else:
        unit, odd = divisor, True
    count, least = int(room // unit), -(-floor // unit)
    if odd:
        count, least = count - (count % 2 == 0), least + (least % 2 == 0)
    new = max(count, least) * unit
    return new if new < value else value


def over_budget(measured: dict[str, Any]) -> tuple[float, list[str]]:
    """How many times too large a probe result is for the small preset (<= 1: fits), and why."""
    checks = [
        ("largest input", max(measured.get("input_bytes") or [0]), SMALL_INPUT_BYTES, _mib),
        ("inputs + outputs", sum(measured.get("input_bytes") or []) + sum(measured.get("output_bytes") or []),
         SMALL_IO_BYTES, _mib),
        ("parameters and buffers", measured.get("param_bytes") or 0, SMALL_PARAM_BYTES, _mib),
        ("FLOPs", measured.get("flops") or 0, SMALL_FLOPS, lambda n: f"{n / 1e6:.3g} MFLOP"),
    ]
    seconds = measured.get("cpu_seconds")
    if isinstance(seconds, (int, float)):
        checks.append(("CPU forward", seconds, SMALL_CPU_SECONDS, lambda s: f"{s * 1e3:.3g} ms"))
    factor, why = 0.0, []
    for label, amount, budget, show in checks:
        ratio = amount / budget
        factor = max(factor, ratio)
        if ratio > 1:
            why.append(f"{label} {show(amount)} over {show(budget)}")
    return factor, why


def _pow2_unit(q: int) -> int:
    """The largest power of two dividing q that leaves a quotient of at least 8."""
    unit = 1
    while q % (unit * 2) == 0 and q // (unit * 2) >= 8:
        unit *= 2
    return unit


def _far_floor(divisor: int) -> int:
    return max(divisor, _round_to(FAR_BELOW_FLOOR + divisor - 1, divisor))


def _mib(n: float) -> str:
    return f"{n / (1 << 20):.3g} MiB"


def _round_to(value: int, divisor: int) -> int:
    return max(divisor, value // divisor * divisor)


def _known(mapping: dict[Group, int | None]) -> dict[Group, int]:
    return {g: v for g, v in mapping.items() if v is not None}


def _elements(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _map(value: Any, fn) -> Any:
    if isinstance(value, tuple):
        return tuple(fn(v) for v in value)
    if isinstance(value, list):
        return [fn(v) for v in value]
    return fn(value)
