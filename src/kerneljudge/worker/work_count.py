"""Counting one forward's work: FLOPs (torch's FLOP counter) and the bytes of inputs, parameters/buffers
and outputs. On a GPU the reference process counts one real forward on its device (milliseconds); elsewhere
the forward runs on the "meta" device (nothing allocated) or, where it needs data, with fake tensors.
Runs in trusted children only (the lint worker, the reference process, the shape probe): the counts feed
the speed-of-light bound (judging/roofline.py) and the numerics bounds' reduction length.

Why the device first where there is one: torch's meta kernels for many operations are Python functions
wrapped in torch._dynamo.disable, whose first call imports torch._dynamo (1.5-3 s), and torch wraps its
FLOP counter's dispatch mode the same way. A forward on the GPU calls neither, and the counter here is
the same counter with that wrapper taken off (numerics/dispatch_mode.py says why nothing here is compiled).
"""

from __future__ import annotations

from typing import Any

import torch

from kerneljudge.worker import loading

INIT_SEED = 20260101
INPUT_SEED = 1234


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:300]


def count(problem: Any, reply: dict[str, Any], device: str = "cpu") -> None:
    """Count on `device` when it is a GPU, else (or when that fails) on the meta device; when the forward
    needs data (.item(), a data-dependent branch), retry with fake tensors (libraries such as transformers
    skip their data-dependent checks for those)."""
    notes = reply["notes"]
    failures = []
    partial: dict[str, Any] = {}
    modes = (device, "meta", "fake") if device.startswith("cuda") else ("meta", "fake")
    for mode in modes:
        found: dict[str, Any] = {}
        try:
            _count_in(problem, mode, found)
        except Exception as exc:
            failures.append(f"{mode}: {short_error(exc)}")
            partial = partial or found
            continue
        reply.update(found)
        if mode == "fake":
            notes.append(f"counted with fake tensors ({'; '.join(failures)})")
        elif mode == "meta" and failures:
            notes.append(f"counted on the meta device ({failures[0]})")
        return
    reply.update({"flops": None, "outputs": None, "params": partial.get("params"), "inputs": partial.get("inputs")})
    notes.append(f"flops unknown: one forward cannot run without data ({'; '.join(failures)})")
    notes.append("output bytes unknown")


def _count_in(problem: Any, mode: str, found: dict[str, Any]) -> None:
    """Build model and inputs at the default size (on a GPU, or without allocating), run one forward under the
    FLOP counter.

    Fills `found` as it goes (params, inputs, then flops and outputs), so a failing forward leaves the byte
    tallies that could be made.
    """
    if mode != "fake":
        context = torch.device(mode)
    else:
        from torch._subclasses.fake_tensor import FakeTensorMode

        context = FakeTensorMode(allow_non_fake_inputs=True)
    with context:
        init_inputs = loading.make_init_inputs(problem, INIT_SEED)
        torch.manual_seed(INIT_SEED)
        model = problem.Model(*init_inputs).eval()
        found["params"] = _tally(state_tensors(model))
        raw = _make_raw_inputs(problem)
        found["inputs"] = _tally([x for x in raw if isinstance(x, torch.Tensor)])
        inputs = [x.to(torch.float32) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in raw]
        with torch.no_grad(), flop_counter() as counter, _CausalDiscount(counter) as causal:
            out = model(*inputs)
        outputs: list[torch.Tensor] = []
        _collect_tensors(out, outputs)
        found["outputs"] = _tally(outputs)
    found["flops"] = int(counter.get_total_flops() - causal.discount)
    by_op = counter.get_flop_counts().get("Global", {})
    found["flops_by_op"] = {str(op).split(".")[-1]: int(n) for op, n in by_op.items()}
    if causal.discount:
        found["flops_by_op"]["causal_mask_skipped"] = -int(causal.discount)


def flop_counter() -> Any:
    """torch's FlopCounterMode, with its dispatch mode's torch._dynamo.disable wrapper taken off where this
    torch has the same internals (else the plain counter: the same counts, after the import)."""
    from torch.utils import flop_counter as fc

    from kerneljudge.numerics.dispatch_mode import UncompiledMode

    inner = getattr(fc, "_FlopCounterMode", None)
    dispatch = getattr(inner.__dict__.get("__torch_dispatch__"), "__wrapped__", None) if inner else None
    if dispatch is None:
        return fc.FlopCounterMode(display=False)

    class Dispatching(inner, UncompiledMode):
        __torch_dispatch__ = dispatch

    class Counter(fc.FlopCounterMode):
        def __enter__(self):
            # FlopCounterMode.__enter__ makes its dispatch mode from the module's name for the class
            saved, fc._FlopCounterMode = fc._FlopCounterMode, Dispatching
            try:
                return super().__enter__()
            finally:
                fc._FlopCounterMode = saved

    return Counter(display=False)


class _CausalDiscount(torch.overrides.TorchFunctionMode):
    """Causal attention needs only the unmasked part of its products; the FLOP counter counts them all.

    scaled_dot_product_attention(..., is_causal=True) keeps, per query row i, min(i + 1, Lk) keys
    (torch aligns the mask top-left), so that fraction of the products it counted is what any kernel must
    do; the rest is taken off, or the bound would claim more work than a causal kernel does.
    """

    def __init__(self, counter: Any):
        super().__init__()
        self.counter = counter
        self.discount = 0.0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.nn.functional.scaled_dot_product_attention:
            return func(*args, **kwargs)
        causal = kwargs.get("is_causal", args[5] if len(args) > 5 else False)
        before = self.counter.get_total_flops()
        out = func(*args, **kwargs)
        if causal is True:
            lq, lk = args[0].shape[-2], args[1].shape[-2]
            kept = sum(min(i + 1, lk) for i in range(lq)) / max(lq * lk, 1)
            self.discount += (self.counter.get_total_flops() - before) * (1.0 - kept)
        return out


def _make_raw_inputs(problem: Any) -> list[Any]:
    torch.manual_seed(INPUT_SEED)
    return list(problem.get_inputs())


def state_tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    seen: set[int] = set()
    found = []
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            found.append(t)
    return found


def _collect_tensors(node: Any, into: list[torch.Tensor]) -> None:
    if isinstance(node, torch.Tensor):
        into.append(node)
    elif isinstance(node, (tuple, list)):
        for n in node:
            _collect_tensors(n, into)
    elif isinstance(node, dict):
        for n in node.values():
            _collect_tensors(n, into)


def _tally(tensors: list[torch.Tensor]) -> dict[str, int]:
    """Floating elements (their bytes depend on the run precision) and the bytes of everything else."""
    float_elems = other_bytes = 0
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            float_elems += t.numel() * (2 if t.is_complex() else 1)
        else:
            other_bytes += t.numel() * t.element_size()
    return {"float_elems": int(float_elems), "other_bytes": int(other_bytes), "count": len(tensors)}
