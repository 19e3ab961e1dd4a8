"""Child process that lints problem files (runs problem code only, on the CPU) and counts their work.

Two commands, each answered with one JSON frame:

  lint: runs the reference at a preset, in eval mode without gradients, and checks that it is a usable
        judging target: deterministic, its output depends on the inputs (each of them) and on the init seed,
        it is not an input passed through, a zero or constant output would fail the fp32 comparison, it
        leaves its inputs alone, and its output is finite in fp32, fp16 and bf16.
  sol:  builds the model and inputs at the problem's DEFAULT size on the "meta" device (nothing is
        allocated) and counts the FLOPs of one forward (torch.utils.flop_counter) and the bytes of the
        inputs, parameters/buffers and outputs, for the speed-of-light bound (kerneljudge.judging.roofline).

One process serves many problems in a row; the parent restarts it after a crash or a timeout.

    python -m kerneljudge.worker.lint FD_IN FD_OUT
"""

from __future__ import annotations

import gc
import math
import sys
import time
from typing import Any

import torch

from kerneljudge.core import channel
from kerneljudge.numerics import compare
from kerneljudge.worker import loading, work_count, common as worker

INIT_SEED = 20260101
INIT_SEED_ALT = 31415926
INPUT_SEED = 1234
INPUT_SEED_ALT = 98765
LOW_PRECISIONS = ("fp16", "bf16")

# The order checks are reported in; a check missing from a reply was skipped (see "skipped").
CHECK_NAMES = (
    "runs", "output_acceptable", "init_deterministic", "deterministic", "finite_fp32", "inputs_unchanged",
    "depends_on_inputs", "depends_on_each_input", "depends_on_init", "not_passthrough",
    "zero_output_fails", "constant_output_fails", "finite_fp16", "finite_bf16",
)


class _Lint:
    """Collects check results and reasons for one problem."""

    def __init__(self) -> None:
        self.checks: dict[str, bool] = {}
        self.reasons: list[str] = []
        self.skipped: list[str] = []
        self.info: dict[str, Any] = {}

    def record(self, name: str, ok: bool, reason: str = "") -> bool:
        self.checks[name] = bool(self.checks.get(name, True) and ok)
        if not ok and reason:
            self.reasons.append(f"{name}: {reason}")
        return ok

    def skip(self, name: str, why: str) -> None:
        self.skipped.append(f"{name}: {why}")

    def reply(self, started: float) -> dict[str, Any]:
        checks = {n: self.checks[n] for n in CHECK_NAMES if n in self.checks}
        return {"status": "ok", "degenerate": bool(self.reasons) or not all(checks.values()),
                "reasons": self.reasons, "checks": checks, "skipped": self.skipped, "info": self.info,
                "seconds": round(time.perf_counter() - started, 4)}


# ----------------------------------------------------------------------------------------------- lint


def handle_lint(msg: dict[str, Any], fd: int) -> None:
    started = time.perf_counter()
    result = _Lint()
    module = None
    try:
        reset_globals(msg.get("threads", 1))
        module = loading.load_module(msg["problem_path"], msg.get("preset") or {})
        _lint(module, result)
    except Exception as exc:  # the problem file itself failed (import, constructor, get_inputs)
        result.record("runs", False, f"problem code raised {work_count.short_error(exc)}")
        result.info["traceback"] = worker.error_message(exc)
    finally:
        _forget(module)
    channel.send(fd, result.reply(started))


def _lint(problem: Any, lint: _Lint) -> None:
    tolerance = getattr(problem, "TOLERANCE", None)
    tolerance = tolerance if isinstance(tolerance, dict) else None
    fp32 = "fp32"

    model = _build(problem, INIT_SEED, fp32)
    # the judge builds the model in two processes under one seed: the init must be reproducible
    twin = _build(problem, INIT_SEED, fp32)
    init_reproducible = _same_state(model, twin)
    del twin
    inputs_a = loading.make_inputs(problem, INPUT_SEED, "cpu", fp32)
    pristine_a = loading.snapshot_inputs(inputs_a)
    out_a = _forward(model, inputs_a)
    lint.record("runs", True)
    lint.info["inputs"] = [_describe(x) for x in pristine_a]
    try:
        ref = _detached(loading.flatten_output(out_a, "cpu"))
    except loading.OutputError as exc:
        lint.record("output_acceptable", False, str(exc))
        return
    tensors = ref[1]
    lint.record("output_acceptable", bool(tensors), "the output holds no tensor")
    lint.info["outputs"] = [_describe(t) for t in tensors]
    if not tensors:
        return

    lint.record("init_deterministic", init_reproducible,
                "two models built under the same seed have different parameters or buffers")

    # the same seed twice: bitwise equal
    inputs_again = loading.make_inputs(problem, INPUT_SEED, "cpu", fp32)
    if not _same_values(pristine_a, inputs_again):
        lint.record("deterministic", False, "get_inputs() gives different tensors for the same seed")
    else:
        again = _flatten(_forward(model, inputs_again))
        lint.record("deterministic", again is not None and _bitwise_equal(ref, again),
                    "two forwards on the same inputs differ bitwise")
    del inputs_again

    nonfinite = [i for i, t in enumerate(tensors) if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    lint.record("finite_fp32", not nonfinite, f"output tensor(s) {nonfinite} hold NaN/Inf in fp32")
    lint.record("inputs_unchanged", loading.inputs_unchanged(inputs_a, pristine_a),
                "the reference modifies its inputs in place (a solution doing the same is rejected)")

    # another input seed must change the output
    inputs_b = loading.make_inputs(problem, INPUT_SEED_ALT, "cpu", fp32)
    pristine_b = loading.snapshot_inputs(inputs_b)
    out_b = _flatten(_forward(model, inputs_b))
    same = out_b is not None and compare.compare_outputs(ref, out_b, fp32, tolerance).ok
    lint.record("depends_on_inputs", not same,
                "the output for another input seed matches the first (it ignores its inputs)")

    # ... and so must changing each input alone: catches an ignored argument. An input counts as ignored
    # only when swapping it leaves the output unchanged from both seeds (one seed can hide it by chance).
    varying = [i for i, (a, b) in enumerate(zip(pristine_a, pristine_b))
               if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and not _same_tensor(a, b)]
    if len(varying) < 2:
        lint.skip("depends_on_each_input", "fewer than two inputs vary with the seed")
    elif not same and out_b is not None:
        for i in varying:
            ignored = True
            for base, base_out, donor in ((pristine_a, ref, pristine_b), (pristine_b, out_b, pristine_a)):
                mixed = loading.snapshot_inputs(base)
                mixed[i] = donor[i].clone()
                try:
                    out_mixed = _flatten(_forward(model, mixed))
                except Exception as exc:
                    lint.skip("depends_on_each_input",
                              f"input {i} from another seed raised {work_count.short_error(exc)}")
                    ignored = False
                    break
                if out_mixed is None or not compare.compare_outputs(base_out, out_mixed, fp32, tolerance).ok:
                    ignored = False
                    break
            lint.record("depends_on_each_input", not ignored,
                        f"changing input {i} ({_describe(pristine_a[i])}) alone leaves the output unchanged")
    del inputs_b, pristine_b, out_b

    # another init seed must change the output, when there is something to initialise
    has_params = any(True for _ in model.parameters())
    if not has_params:
        lint.skip("depends_on_init", "the model has no parameters")
    else:
        other = _build(problem, INIT_SEED_ALT, fp32)
        out_other = _flatten(_forward(other, loading.snapshot_inputs(pristine_a)))
        same_init = out_other is not None and compare.compare_outputs(ref, out_other, fp32, tolerance).ok
        lint.record("depends_on_init", not same_init,
                    "a model built under another init seed gives the same output (its parameters do not matter)")
        del other, out_other

    # not an input passed through
    for i, t in enumerate(tensors):
        for j, x in enumerate(pristine_a):
            if isinstance(x, torch.Tensor) and tuple(x.shape) == tuple(t.shape) and t.numel() > 0:
                if _matches(x, t, compare.tolerance(fp32, tolerance)):
                    lint.record("not_passthrough", False, f"output tensor {i} equals input {j} "
                                f"({_describe(x)}): the reference passes its input through")
    lint.record("not_passthrough", True)

    # a zero or constant output must fail the fp32 comparison
    tol = compare.tolerance(fp32, tolerance)
    for i, t in enumerate(tensors):
        if t.numel() == 0:
            continue
        for name, fake in (("zero_output_fails", _zeros(t)), ("constant_output_fails", _constant(t))):
            passes = compare.compare_tensor(t, fake, tol).ok
            lint.record(name, not passes, f"output tensor {i} ({_describe(t)}) is matched by "
                        f"{'zeros' if name.startswith('zero') else 'a constant'} within the fp32 tolerance")
    del model, inputs_a

    # low precisions: model and floating inputs cast, output stays finite
    for precision in LOW_PRECISIONS:
        name = f"finite_{precision}"
        try:
            low_model = _build(problem, INIT_SEED, precision)
            low_inputs = loading.make_inputs(problem, INPUT_SEED, "cpu", precision)
            low = _flatten(_forward(low_model, low_inputs))
        except Exception as exc:
            lint.record(name, False, f"the reference raised in {precision}: {work_count.short_error(exc)}")
            continue
        if low is None:
            lint.record(name, False, f"the {precision} output is not a plain tensor structure")
            continue
        bad = [i for i, t in enumerate(low[1]) if t.is_floating_point() and not bool(torch.isfinite(t).all())]
        lint.record(name, not bad, f"output tensor(s) {bad} hold NaN/Inf in {precision}")
        lint.info[f"{precision}_rel_l2"] = _rel_l2(tensors, low[1])
        del low_model, low_inputs, low


def _build(problem: Any, seed: int, precision: str) -> torch.nn.Module:
    init_inputs = loading.make_init_inputs(problem, seed)
    return loading.build_model(problem.Model, init_inputs, seed, "cpu", precision)


def _forward(model: torch.nn.Module, inputs: list[Any]) -> Any:
    with torch.no_grad():
        return worker.call_model(model, inputs, "cpu")


def _flatten(out: Any):
    try:
        return _detached(loading.flatten_output(out, "cpu"))
    except loading.OutputError:
        return None


def _detached(flat: tuple[Any, list[torch.Tensor]]) -> tuple[Any, list[torch.Tensor]]:
    """Copies, so a model that updates a returned buffer on its next call cannot change this result."""
    return flat[0], [t.clone() for t in flat[1]]


def _same_state(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    if sa.keys() != sb.keys():
        return False
    return all(_same_tensor(sa[k], sb[k]) for k in sa if isinstance(sa[k], torch.Tensor))


def _same_values(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and _same_tensor(x, y)):
                return False
        elif x != y:
            return False
    return True


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN payloads included): same shape, dtype and bytes."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    return torch.equal(_bytes_of(a), _bytes_of(b))


def _bytes_of(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1).contiguous()
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    return flat.view(torch.uint8)


def _bitwise_equal(a: tuple[Any, list[torch.Tensor]], b: tuple[Any, list[torch.Tensor]]) -> bool:
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    return all(_same_tensor(x, y) for x, y in zip(a[1], b[1]))


def _matches(x: torch.Tensor, t: torch.Tensor, tol: dict[str, float]) -> bool:
    """Is output t the input x (exactly, or within the comparison tolerance)?"""
    if x.dtype == t.dtype and torch.equal(x, t):
        return True
    if x.is_floating_point() and t.is_floating_point():
        return compare.compare_tensor(t, x.to(t.dtype), tol).ok
    if x.dtype == torch.bool or t.dtype == torch.bool or x.is_floating_point() or t.is_floating_point():
        return False
    return bool((x.to(torch.int64) == t.to(torch.int64)).all())


def _zeros(t: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(t)


def _constant(t: torch.Tensor) -> torch.Tensor:
    """The best constant guess for an output: its mean (finite values), or its most common value."""
    if t.dtype == torch.bool:
        return torch.full_like(t, bool(t.sum() * 2 >= t.numel()))
    if t.is_floating_point():
        finite = t[torch.isfinite(t)]
        return torch.full_like(t, float(finite.double().mean()) if finite.numel() else 0.0)
    if t.is_complex():
        return torch.full_like(t, complex(t.mean()))
    return torch.full_like(t, int(torch.mode(t.reshape(-1).to(torch.int64)).values))


def _rel_l2(ref: list[torch.Tensor], low: list[torch.Tensor]) -> float | None:
    """How far the low-precision output lands from fp32 (informative only)."""
    num = den = 0.0
    for r, s in zip(ref, low):
        if r.is_floating_point() and s.shape == r.shape and bool(torch.isfinite(s).all()):
            num += float(((s.double() - r.double()) ** 2).sum())
            den += float((r.double() ** 2).sum())
    if den == 0.0:
        return None
    return math.sqrt(num / den)


def _describe(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}"
    return type(x).__name__


# ------------------------------------------------------------------------------------------------ sol


def handle_sol(msg: dict[str, Any], fd: int) -> None:
    """Count one forward's FLOPs and the bytes it must move, at the default size, on the meta device."""
    started = time.perf_counter()
    module = None
    reply: dict[str, Any] = {"status": "ok", "notes": []}
    try:
        reset_globals(msg.get("threads", 1))
        module = loading.load_module(msg["problem_path"], msg.get("preset") or {})
        work_count.count(module, reply)
    except Exception as exc:
        reply = {"status": "error", "kind": "problem_error", "message": work_count.short_error(exc),
                 "traceback": worker.error_message(exc)}
    finally:
        _forget(module)
    reply["seconds"] = round(time.perf_counter() - started, 4)
    channel.send(fd, reply)


# --------------------------------------------------------------------------------------------- shared


def reset_globals(threads: int) -> None:
    """Undo what the previous problem may have changed in this long-lived process."""
    torch.set_default_dtype(torch.float32)
    worker.pin_global_flags("cpu", threads)


def _forget(module: Any) -> None:
    if module is not None:
        sys.modules.pop(module.__name__, None)
    gc.collect()


def handle_ping(msg: dict[str, Any], fd: int) -> None:
    channel.send(fd, {"status": "ok", "torch": torch.__version__})


def main() -> None:
    worker.serve({"ping": handle_ping, "lint": handle_lint, "sol": handle_sol})


if __name__ == "__main__":
    main()
