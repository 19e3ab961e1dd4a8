"""Child process that tries a problem's reference at other sizes (held-out and small-preset candidates).

One command besides `ping`, answered with one JSON frame:

  probe: loads the problem with the given constant overrides, runs get_init_inputs(), builds Model, makes the inputs and
         runs one forward, and reports whether the reference accepts that shape, the bytes of each input, of the
         parameters/buffers and of each output, the output shapes and structure, and (unless `flops: false`) the FLOPs
         (torch.utils.flop_counter). The forward runs on the "meta" device (nothing is allocated), else with fake
         tensors, else on the CPU but only when the inputs and parameters (measured on meta) fit in `cpu_max_bytes` (or,
         with `cpu_unknown_ok`, when get_inputs() itself needs data, so its size cannot be measured without making it:
         the parent asks for that only at CPU-preset sizes, and the data limit below still applies). With `cpu: true` it
         also builds everything for real on the CPU and times two forwards on one thread (the small preset must run
         quickly), under the same size limit. With `values: true` (asked for the far-below held-out variant) it also
         builds everything for real on the CPU, when inputs and parameters fit in `values_max_bytes`, and checks that
         the output is finite and changes with the inputs (another input seed): a shape where the reference's answer is
         trivial would let a wrong solution pass there. With `activations: true` (asked when a preset is fitted to a
         device's memory) it also reports `activation_bytes`, the largest tensor one op of the forward makes, found on
         the meta device as the reference process finds it (worker/reference_memory.py).

Problem code is trusted but never runs in the orchestrator; this process also caps its data segment
(DATA_LIMIT_BYTES), so a problem that allocates at import time fails here instead of exhausting the machine.
One process serves many problems in a row; the parent restarts it after a crash or a timeout.

    python -m kerneljudge.worker.shapes FD_IN FD_OUT
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from typing import Any

import torch

from kerneljudge.core import channel
from kerneljudge.numerics import compare
from kerneljudge.worker import loading, common as worker
from kerneljudge.worker.reference_memory import largest_activation_bytes
from kerneljudge.worker.lint import reset_globals, handle_ping
from kerneljudge.worker.work_count import short_error as _short_error, state_tensors as _state_tensors

INIT_SEED = 20260101
INPUT_SEED = 1234
INPUT_SEED_ALT = 98765
DATA_LIMIT_BYTES = 6 << 30
DEFAULT_CPU_MAX_BYTES = 256 << 20
DEFAULT_VALUES_MAX_BYTES = 64 << 20


class _Failed(Exception):
    def __init__(self, stage: str, exc: BaseException):
        super().__init__(f"{stage}: {_short_error(exc)}")
        self.stage = stage
        self.needs_data = _needs_data(exc)


def _needs_data(exc: BaseException) -> bool:
    """Did the shape fail only because there were no data (fake tensors cannot answer), rather than
    because the reference rejects it (a ValueError, a shape mismatch, an assertion)?"""
    if isinstance(exc, NotImplementedError):
        return True
    try:
        from torch._subclasses import fake_tensor
    except ImportError:
        return False
    kinds = tuple(getattr(fake_tensor, n) for n in ("DataDependentOutputException", "DynamicOutputShapeException",
                                                     "UnsupportedOperatorException", "UnsupportedFakeTensorException")
                  if hasattr(fake_tensor, n))
    return isinstance(exc, kinds)


def handle_probe(msg: dict[str, Any], fd: int) -> None:
    started = time.perf_counter()
    reply: dict[str, Any] = {"status": "ok", "ok": False}
    module = None
    try:
        reset_globals(msg.get("threads", 1))
        try:
            module = loading.load_module(msg["problem_path"], msg.get("overrides") or {})
        except Exception as exc:
            raise _Failed("import", exc) from None
        _probe(module, msg, reply)
    except _Failed as exc:
        reply.update(ok=False, stage=exc.stage, error=str(exc))
    finally:
        if module is not None:
            sys.modules.pop(module.__name__, None)
        if msg.get("cpu") or reply.get("mode") == "cpu":
            gc.collect()   # real tensors were made (~0.2 s; meta probes allocate nothing worth collecting)
    reply["seconds"] = round(time.perf_counter() - started, 4)
    channel.send(fd, reply)


def _probe(problem: Any, msg: dict[str, Any], reply: dict[str, Any]) -> None:
    limit = int(msg.get("cpu_max_bytes", DEFAULT_CPU_MAX_BYTES))
    flops = bool(msg.get("flops", True))
    failures: list[_Failed] = []
    estimate: dict[str, Any] = {}
    for mode in ("meta", "fake"):
        found: dict[str, Any] = {}
        try:
            _run(problem, mode, found, flops)
        except _Failed as exc:
            failures.append(exc)
            estimate = estimate or found
            continue
        reply.update(found, ok=True, mode=mode)
        break
    if not reply["ok"]:
        why = (str(failures[0]) if str(failures[0]) == str(failures[1])
               else f"{failures[0]} (fake tensors: {failures[1]})")
        if not failures[-1].needs_data:   # fake tensors ran into a real error: the reference rejects it
            reply.update(stage=failures[-1].stage, error=why)
            return
        unknown_ok = bool(msg.get("cpu_unknown_ok")) and "input_bytes" not in estimate
        if not (_fits(estimate, limit) or unknown_ok):
            reply.update(estimate=estimate, unchecked=True, stage=failures[0].stage,
                         error=f"{why}; not run on the CPU: {_size_text(estimate, limit)}")
            return
        found = {}
        _run(problem, "cpu", found, flops)   # raises _Failed: the reference rejects this shape
        reply.update(found, ok=True, mode="cpu", note=f"ran on the CPU: {why}")
    if msg.get("activations"):
        init_inputs = _stage("construct", lambda: loading.make_init_inputs(problem, INIT_SEED))
        reply["activation_bytes"] = largest_activation_bytes(problem, init_inputs, "fp32")
    if msg.get("values"):
        reply["values_checked"] = _fits(reply, int(msg.get("values_max_bytes", DEFAULT_VALUES_MAX_BYTES)))
        if reply["values_checked"]:
            _check_values(problem)   # raises _Failed: no usable answer at this shape
    if msg.get("cpu"):
        if not _fits(reply, limit):
            reply.update(ok=False, unchecked=True, stage="cpu", error=f"not run on the CPU: {_size_text(reply, limit)}")
            return
        reply.update(_timed_cpu(problem))


def _run(problem: Any, mode: str, found: dict[str, Any], flops: bool = True) -> None:
    """Build and run one forward in `mode` (meta, fake or cpu), filling `found` stage by stage; FLOPs are
    counted only when asked (the counter slows a forward of many small ops, such as an RNN's, by ~25%)."""
    from contextlib import nullcontext

    from torch.utils.flop_counter import FlopCounterMode

    if mode == "meta":
        context: Any = torch.device("meta")
    elif mode == "fake":
        from torch._subclasses.fake_tensor import FakeTensorMode

        context = FakeTensorMode(allow_non_fake_inputs=True)
    else:
        context = torch.device("cpu")
    with context:
        model = _stage("construct", lambda: _construct(problem))
        found["param_bytes"] = sum(_nbytes(t) for t in _state_tensors(model))
        inputs = _stage("inputs", lambda: _inputs(problem))
        found["input_bytes"] = [_nbytes(x) for x in inputs if isinstance(x, torch.Tensor)]
        found["input_shapes"] = [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)]
        counter = FlopCounterMode(display=False) if flops else None
        with torch.no_grad(), counter or nullcontext():
            out = _stage("forward", lambda: model(*inputs))
        tensors: list[torch.Tensor] = []
        found["structure"] = json.dumps(_structure(out, tensors), sort_keys=True)
    found["output_bytes"] = [_nbytes(t) for t in tensors]
    found["output_shapes"] = [list(t.shape) for t in tensors]
    found["flops"] = int(counter.get_total_flops()) if counter is not None else None


def _construct(problem: Any) -> torch.nn.Module:
    init_inputs = loading.make_init_inputs(problem, INIT_SEED)
    torch.manual_seed(INIT_SEED)
    return problem.Model(*init_inputs).eval()


def _inputs(problem: Any) -> list[Any]:
    torch.manual_seed(INPUT_SEED)
    return list(problem.get_inputs())


def _stage(stage: str, fn):
    try:
        return fn()
    except Exception as exc:
        raise _Failed(stage, exc) from None


def _timed_cpu(problem: Any) -> dict[str, Any]:
    """Real tensors on the CPU, built as the judge builds them; two forwards on one thread, timed."""
    init_inputs = _stage("cpu", lambda: loading.make_init_inputs(problem, INIT_SEED))
    model = _stage("cpu", lambda: loading.build_model(problem.Model, init_inputs, INIT_SEED, "cpu", "fp32"))
    inputs = _stage("cpu", lambda: loading.make_inputs(problem, INPUT_SEED, "cpu", "fp32"))
    times = []
    out = None
    for _ in range(2):
        began = time.perf_counter()
        out = _stage("cpu", lambda: worker.call_model(model, inputs, "cpu"))
        times.append(time.perf_counter() - began)
    try:
        _, tensors = loading.flatten_output(out, "cpu")
    except loading.OutputError as exc:
        raise _Failed("cpu", exc) from None
    nonfinite = [i for i, t in enumerate(tensors) if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if nonfinite:
        raise _Failed("cpu", ValueError(f"output tensor(s) {nonfinite} hold NaN/Inf"))
    return {"cpu_first_seconds": round(times[0], 6), "cpu_seconds": round(times[1], 6)}


def _check_values(problem: Any) -> None:
    """Real tensors on the CPU: the output is finite and differs for inputs from another seed."""
    init_inputs = _stage("values", lambda: loading.make_init_inputs(problem, INIT_SEED))
    model = _stage("values", lambda: loading.build_model(problem.Model, init_inputs, INIT_SEED, "cpu", "fp32"))
    outputs = []
    for seed in (INPUT_SEED, INPUT_SEED_ALT):
        inputs = _stage("values", lambda: loading.make_inputs(problem, seed, "cpu", "fp32"))
        with torch.no_grad():
            out = _stage("values", lambda: worker.call_model(model, inputs, "cpu"))
        try:
            flat = loading.flatten_output(out, "cpu")
        except loading.OutputError as exc:
            raise _Failed("values", exc) from None
        nonfinite = [i for i, t in enumerate(flat[1]) if t.is_floating_point() and not bool(torch.isfinite(t).all())]
        if nonfinite:
            raise _Failed("values", ValueError(f"output tensor(s) {nonfinite} hold NaN/Inf"))
        outputs.append(flat)
    # the fp32 contract's bounds: a mean over many terms moves little with the inputs, but more than rounding
    if compare.compare_outputs(outputs[0], outputs[1], "fp32", None, contract="fp32").ok:
        raise _Failed("insensitive", ValueError("the output is the same for inputs from two seeds"))


def _structure(node: Any, tensors: list[torch.Tensor]) -> Any:
    """What the output is made of, without sizes: nesting, tensor dtypes and ranks."""
    if isinstance(node, torch.Tensor):
        tensors.append(node)
        return f"tensor:{str(node.dtype).replace('torch.', '')}:{node.dim()}"
    if isinstance(node, (tuple, list)):
        return [_structure(n, tensors) for n in node]
    if isinstance(node, dict):
        return {str(k): _structure(v, tensors) for k, v in node.items()}
    return type(node).__name__


def _nbytes(t: torch.Tensor) -> int:
    return int(t.numel() * t.element_size())


def _fits(found: dict[str, Any], limit: int) -> bool:
    if "param_bytes" not in found or "input_bytes" not in found:
        return False
    return found["param_bytes"] + sum(found["input_bytes"]) <= limit


def _size_text(found: dict[str, Any], limit: int) -> str:
    if "param_bytes" not in found or "input_bytes" not in found:
        return "its size is unknown"
    total = found["param_bytes"] + sum(found["input_bytes"])
    return f"inputs and parameters {total / 2**20:.4g} MiB, over {limit / 2**20:.4g} MiB"


def _cap_memory() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = DATA_LIMIT_BYTES if hard == resource.RLIM_INFINITY else min(DATA_LIMIT_BYTES, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def _meta_nonzero() -> None:
    """Let nonzero() run on meta (assuming every element nonzero: the largest result), so routing code such
    as a mixture of experts can be shape-checked without data; only this process is affected."""
    try:
        import torch.fx.experimental._config as fx_config

        fx_config.meta_nonzero_assume_all_nonzero = True
    except (ImportError, AttributeError):
        pass


def main() -> None:
    _cap_memory()
    _meta_nonzero()
    worker.serve({"ping": handle_ping, "probe": handle_probe})


if __name__ == "__main__":
    main()
