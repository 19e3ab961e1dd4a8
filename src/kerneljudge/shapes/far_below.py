"""The held-out shape far below a base shape (threat B13), searched with a probe (pure: the probe is given).

Nearby held-out shapes never meet code that branches on the input size (`stride = numel // 100_000_000`, a
`numel >= 1e6` fast path). So every held-out list gets one shape with at least FAR_BELOW_RATIO times fewer
input elements than its base shape: a listed one when there is one, else one found here and appended.

    record = choose(derivation, base_result, listed, probe, notes, "held-out", small=False, slow=False)

Candidates come from Derivation.shrunk (derive.py): every size divided by one scale, rounded to a family of
values (by the derivation's mode: aligned sizes, or odd ones first). A candidate counts when the probe
accepts it with the base's output structure, at most its bytes, and a finite output that changes with the
inputs (checked for real on the CPU where it fits). The scale is searched until the input elements fall
between target / FAR_BELOW_SLACK and the target (derive.far_below_target); failing that, the accepted
candidate with the fewest elements is used.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from kerneljudge.shapes import derive

Probe = Callable[..., dict[str, Any]]    # probe(overrides, unknown_ok=..., flops=..., values=...) -> result
Listed = tuple[dict[str, Any], int | None, str]   # (overrides, input elements or None, source)

FAR_BELOW_PROBES = 24               # probes spent searching a far-below variant (per preset)
FAR_BELOW_SLOW_PROBES = 8           # ... when probes are slow (recurrent networks run op by op on meta)
FAR_BELOW_ROUNDS = 8                # probes at most on one family of sizes
FAR_BELOW_SLACK = 16                # target / 16 .. target input elements ends the search
INSENSITIVE_LIMIT = 2               # candidates whose output ignores the inputs before the search gives up
HOPELESS_REJECTIONS = 3             # a family rejected this often before any acceptance is given up


class _Insensitive(Exception):
    """The reference's output ignored its inputs at several candidates: a search is pointless."""


def listed_variants(metadata: list[dict[str, Any]] | None, nearby: list[tuple[dict[str, Any], dict[str, Any]]],
                    probe: Probe, small: bool) -> list[Listed]:
    """The held-out variants a preset already has, each with its input elements (None when the reference
    cannot be measured there) and its source: the problem's metadata (probed here), else the nearby ones
    (with the probe results they were kept with)."""
    if metadata is None:
        return [(o, input_elements(r), "derived") for o, r in nearby]
    listed: list[Listed] = []
    for overrides in metadata:
        result = probe(overrides, unknown_ok=small, flops=False)
        listed.append((overrides, input_elements(result) if result["ok"] else None, "metadata"))
    return listed


def choose(d: derive.Derivation, base: dict[str, Any], listed: list[Listed], probe: Probe, notes: list[str],
           what: str, small: bool, slow: bool) -> dict[str, Any] | None:
    """The far-below record of a held-out list ({index, source, input_elements, base_input_elements}): a
    listed variant that already has FAR_BELOW_RATIO times fewer input elements (a derived one must also be
    at most far_below_target), else one found by shrinking
    every size, which is to be appended (its overrides under "overrides") when it has fewer input elements
    than every listed one; None when there is none (the notes say why). `small`: the base is the CPU preset
    (candidates may run on the CPU to be sized); `slow`: probes are slow, spend fewer."""
    base_elements = input_elements(base)
    if not base_elements:
        notes.append(f"{what} far below: the base shape has no input elements to shrink (or they could not be "
                     f"measured), none chosen")
        return None
    target = derive.far_below_target(base_elements)
    for index, (overrides, elements, source) in enumerate(listed):
        # a nearby derived shape can be 10x smaller too (the aligned rule halves every size: 16x for four of
        # them) without reaching the far-below scale; only the problem's own listed shapes count by ratio alone
        far_enough = source == "metadata" or (elements is not None and elements <= target)
        if elements is not None and elements * derive.FAR_BELOW_RATIO <= base_elements and far_enough:
            notes.append(f"{what} far below: listed {show(overrides)} already has {base_elements / elements:.3g}x "
                         f"fewer input elements than its base shape")
            return _record(index, source, elements, base_elements)
    found = _search(d, base, probe, notes, what, small, slow)
    if found is None:
        return None
    overrides, elements = found
    least = min((e for _, e, _ in listed if e is not None), default=None)
    if least is not None and elements >= least:
        notes.append(f"{what} far below: {show(overrides)} is not smaller than a listed variant, not added")
        return None
    return {**_record(len(listed), "derived", elements, base_elements), "overrides": overrides}


def _record(index: int, source: str, elements: int, base_elements: int) -> dict[str, Any]:
    return {"index": index, "source": source, "input_elements": elements, "base_input_elements": base_elements}


def _search(d: derive.Derivation, base: dict[str, Any], probe: Probe, notes: list[str], what: str, small: bool,
            slow: bool) -> tuple[dict[str, Any], int] | None:
    """Every size divided by one scale and rounded to a family of values: aligned (the derivation's mode
    `aligned`), then aligned with one size left as it is; or odd, even, odd with one size left as it is (a
    width the reference needs a power of two for), then the other families (mode `general`). The first
    candidate at or below the target wins; else the one with the fewest input elements."""
    base_elements = input_elements(base) or 0
    target = derive.far_below_target(base_elements)
    families = list(d.far_below_families())
    attempts = [(family, frozenset()) for family in families[:2]]
    if len(d.groups) > 1:
        attempts += [(families[0], frozenset({g})) for g in d.groups]
    attempts += [(family, frozenset()) for family in families[2:]]
    # budget[0]: probes left; budget[1]: candidates so far whose output ignored the inputs
    budget = [FAR_BELOW_SLOW_PROBES if slow else FAR_BELOW_PROBES, 0]
    best: tuple[dict[str, Any], int, str] | None = None
    for family, still in attempts:
        if budget[0] <= 0:
            break
        try:
            found = _scale_search(d, base, family, still, target, probe, small, budget)
        except _Insensitive:
            notes.append(f"{what} far below: the reference's output is the same for two input seeds at "
                         f"{INSENSITIVE_LIMIT} smaller shapes (it ignores its inputs there), none chosen")
            return None
        label = family + (f", {'/'.join(d.names(next(iter(still))))} kept" if still else "")
        if found is not None and (best is None or found[1] < best[1]):
            best = (found[0], found[1], label)
        if best is not None and best[1] <= target:
            break
    if best is None or best[1] >= base_elements:
        notes.append(f"{what} far below: no shape with fewer input elements that the reference accepts was found")
        return None
    overrides, elements, label = best
    reached = "" if elements <= target else f", the smallest accepted (aim: at most {target})"
    notes.append(f"{what} far below ({label}) {show(overrides)}: {elements} input elements, "
                 f"{base_elements / elements:.3g}x fewer than its base shape{reached}")
    return overrides, elements


def _scale_search(d: derive.Derivation, base: dict[str, Any], family: str, still: frozenset, target: int,
                  probe: Probe, small: bool, budget: list[int]) -> tuple[dict[str, Any], int] | None:
    """A scale whose candidate has between target / FAR_BELOW_SLACK and `target` input elements (the closest
    to `target` found), else the accepted candidate with the fewest. Each next scale comes from the rate at
    which elements fell so far (elements ~ scale ** -rate), kept strictly between the largest scale that
    shrank too little and the smallest that was rejected or shrank too much (else their geometric middle)."""
    base_elements = input_elements(base) or 0
    top = d.top_scale(still, family)
    if top <= 1.0:
        return None
    low, high = 1.0, math.inf      # shrank too little / rejected or shrank too much
    scale = min(top, max(2.0, math.sqrt(base_elements / max(target, 1))))   # as if elements fall with scale**2
    fit: tuple[dict[str, Any], int] | None = None       # at most target, the most elements
    least: tuple[dict[str, Any], int] | None = None     # accepted, the fewest elements
    tried: list[dict[str, Any]] = []
    for _ in range(FAR_BELOW_ROUNDS):
        overrides = d.shrunk(scale, family, still)
        if overrides is None or overrides == d.base or overrides in tried or budget[0] <= 0:
            break
        tried.append(overrides)
        budget[0] -= 1
        elements = _candidate(overrides, base, probe, small, budget)
        if elements is None:
            high, wanted = scale, None
            if least is None and len(tried) >= HOPELESS_REJECTIONS:
                break
        else:
            least = (overrides, elements) if least is None or elements < least[1] else least
            if elements <= target and (fit is None or elements > fit[1]):
                fit = (overrides, elements)
            if target >= elements * FAR_BELOW_SLACK:
                high = scale
            elif elements > target:
                low = scale
            else:
                break   # inside the band
            fell = 0 < elements < base_elements
            rate = max(1.0, math.log(base_elements / elements) / math.log(scale)) if fell else 1.0
            wanted = min(top, scale * (max(elements, 1) / (target / 2)) ** (1.0 / rate))
        if low >= top or high / low < 1.15:
            break
        scale = wanted if wanted is not None and low < wanted < high else math.sqrt(low * min(high, top))
    return fit or least


def _candidate(overrides: dict[str, Any], base: dict[str, Any], probe: Probe, small: bool,
               budget: list[int]) -> int | None:
    """Input elements of a candidate the reference accepts with the base's output structure, at most its bytes,
    and (where it fits the probe's values limit) a finite output that changes with the inputs; None otherwise.
    Raises _Insensitive at the INSENSITIVE_LIMIT-th candidate whose output ignored the inputs."""
    result = probe(overrides, unknown_ok=small, flops=False, values=True)
    if result.get("stage") == "insensitive":
        budget[1] += 1
        if budget[1] >= INSENSITIVE_LIMIT:
            raise _Insensitive()
    if not result["ok"] or result.get("structure") != base.get("structure") or total_bytes(result) > total_bytes(base):
        return None
    return input_elements(result)


def input_elements(result: dict[str, Any]) -> int | None:
    """Elements of all input tensors of a probe result together (None when the probe could not make them)."""
    shapes = result.get("input_shapes")
    return None if shapes is None else sum(math.prod(shape) for shape in shapes)


def total_bytes(result: dict[str, Any]) -> int:
    """Inputs, parameters and outputs of a probe result, in bytes."""
    return sum(result.get("input_bytes") or []) + int(result.get("param_bytes") or 0) + \
        sum(result.get("output_bytes") or [])


def show(overrides: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items())
