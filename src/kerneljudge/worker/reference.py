"""Trusted child process: runs only problem code, never solution code.

It holds the secret seeds of a judgement the orchestrator sends, computes the expected output for a seed when
a solution output is to be compared with it (a few kept at once, on the device: memory does not grow with the
number of trials, and no comparison falls back to host memory), compares on request, and times the reference
with the same method the solution is timed with, in rounds the orchestrator interleaves with the solution's.
It can serve many problems in a row (batch runs keep one alive).

    python -m kerneljudge.worker.reference FD_IN FD_OUT
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from kerneljudge.core import channel
from kerneljudge.numerics import bounds
from kerneljudge.numerics import compare
from kerneljudge.worker import (
    degenerate, device_clock, fp64_floor, ipc, loading, reference_memory, reference_timing, tf32_floor, timing,
    work_count, common as worker,
)
from kerneljudge.numerics.arithmetic import arithmetic_profile

# the reference models in use, most recent last: as many as solutions are checked at once, plus the one being
# timed (the hello says how many), so that solutions of different problems do not rebuild each other's models
_models: OrderedDict[tuple, tuple[Any, torch.nn.Module]] = OrderedDict()
_prepared: dict[tuple, tuple[Any, torch.nn.Module]] = {}   # models built on the CPU ahead of their first use
_limits = {"models": 1}
SMALL_ENTRIES = 64   # per-model counts (workload, floor) kept at most
FP64_FLOOR_MAX_FORWARD_S = 2.0
# expected outputs kept at once per judgement: trial 1's (compared again after trial 2), the current one, a spare
KEPT_OUTPUTS = 3
_workloads: dict[tuple, dict[str, Any] | None] = {}
# per model: the reference's own errors, per output tensor ({"tf32": [...], "fp64": [...]}; see _floors)
_floors: dict[tuple, dict[str, list[dict[str, float] | None]]] = {}


@dataclass
class Expected:
    """One judgement's expected outputs at one preset: its seeds, and the outputs computed so far (a few)."""
    request: dict[str, Any]           # the expect message: problem, preset, init seed, device, precision
    floors: dict[str, list[Any]] = field(default_factory=dict)
    kept: OrderedDict = field(default_factory=OrderedDict)   # index -> (structure, tensors)
    forward_s: float = 0.0   # how long the last forward took (the fp64 floor is skipped after a very slow one)

    def output(self, index: int) -> tuple[Any, list[torch.Tensor]]:
        """The reference's output for seed `index`, computed now if it is not kept (the oldest kept goes)."""
        if index in self.kept:
            self.kept.move_to_end(index)
            return self.kept[index]
        seed = self.request["seeds"][index]   # an IndexError is a judge bug, reported as such
        problem, model = _model_for(self.request)
        device = self.request["device"]
        inputs = loading.make_inputs(problem, seed, device, self.request["precision"])
        started = time.perf_counter()
        structure, tensors = loading.flatten_output(worker.call_model(model, inputs, device), device)
        timing.sync(device)
        self.forward_s = time.perf_counter() - started
        del inputs
        while len(self.kept) >= KEPT_OUTPUTS:
            self.kept.popitem(last=False)
        # a view would keep its whole base alive (an output sliced out of a large intermediate): copy those
        self.kept[index] = (structure, [t.detach() if t._base is None else t.detach().clone() for t in tensors])
        return self.kept[index]


_expected: dict[str, Expected] = {}
_degenerate_found: dict[tuple, dict[str, Any] | None] = {}   # per model and contract: worker/degenerate.py


def _model_key(msg: dict[str, Any]) -> tuple:
    return (msg["problem_path"], repr(sorted(msg.get("preset", {}).items())), msg["init_seed"], msg["device"],
            msg["precision"])


def _workload(msg: dict[str, Any], problem: Any, model: torch.nn.Module) -> dict[str, Any] | None:
    """What the numerics bounds need to know about this problem at this preset (numerics/arithmetic.py),
    counted once per model on one forward; None if it cannot be counted (the bounds then assume 1)."""
    key = _model_key(msg)
    if key not in _workloads:
        _bound(_workloads)
        try:
            inputs = loading.make_inputs(problem, msg["seeds"][0], msg["device"], msg["precision"])
            _workloads[key] = arithmetic_profile(model, inputs, flops=False)
        except Exception:
            _workloads[key] = None
    return _workloads[key]


def _floors_of(msg: dict[str, Any], problem: Any, model: torch.nn.Module, expected: list[list[torch.Tensor]],
               forward_s: float) -> dict[str, list[dict[str, float] | None]]:
    """The reference's own errors per output, measured once per model on the first seeds' inputs: "tf32" (its
    TF32 forward, worker/tf32_floor.py) and "fp64" (its fp32 output against float64, worker/fp64_floor.py;
    skipped after an fp32 forward slower than FP64_FLOOR_MAX_FORWARD_S, since float64 convolutions can be
    many times slower still). fp32 runs only (the other precisions have no tf32 class and keep their own rule)."""
    if msg["precision"] != "fp32" or not expected:
        return {"tf32": [], "fp64": []}
    key = _model_key(msg)
    if key not in _floors:
        _bound(_floors)
        fp64 = fp64_floor.measure(problem, model, msg["seeds"][0], msg["device"], expected[0]) \
            if forward_s <= FP64_FLOOR_MAX_FORWARD_S else [None] * len(expected[0])
        _floors[key] = {"tf32": tf32_floor.measure(problem, model, msg["seeds"], msg["device"], expected),
                        "fp64": fp64}
    return _floors[key]


def _bound(kept: dict) -> None:
    while len(kept) >= SMALL_ENTRIES:
        kept.pop(next(iter(kept)))


def _model_for(msg: dict[str, Any]) -> tuple[Any, torch.nn.Module]:
    key = _model_key(msg)
    if key in _models:
        _models.move_to_end(key)
        return _models[key]
    while len(_models) >= _limits["models"]:  # a bounded number of models keeps device memory bounded
        _models.popitem(last=False)
        if msg["device"] == "cuda":
            torch.cuda.empty_cache()
    prepared = _prepared.pop(key, None)
    if prepared is not None:   # built on the CPU ahead of time (handle_prepare): only the move is left
        problem, model = prepared
        model = model.to(msg["device"])
    else:
        problem = loading.load_module(msg["problem_path"], msg.get("preset"))
        model = _build(msg, problem, loading.make_init_inputs(problem, msg["init_seed"]), msg["device"])
    _models[key] = (problem, model)
    return _models[key]


def _build(msg: dict[str, Any], problem: Any, init_inputs: list[Any], device: str) -> torch.nn.Module:
    return loading.build_model(problem.Model, init_inputs, msg["init_seed"], device, msg["precision"])


def handle_prepare(msg: dict[str, Any], fd: int) -> None:
    """Build a problem's model on the CPU ahead of its first judgement, with every core this process may use
    (the orchestrator has it on the build cores meanwhile): no device work, so no turn on the device is needed.
    A problem whose init inputs hold tensors is left to be built on the device as usual: its constructor may
    keep them as plain attributes, which a later move to the device would not carry."""
    key = _model_key(msg)
    memory: dict[str, int] = {}
    try:
        if key not in _models and key not in _prepared and msg["device"] != "cpu":
            problem = loading.load_module(msg["problem_path"], msg.get("preset"))
            init_inputs = loading.make_init_inputs(problem, msg["init_seed"])
            if not any(isinstance(x, torch.Tensor) for x in init_inputs):
                while len(_prepared) >= _limits["models"]:
                    _prepared.pop(next(iter(_prepared)))
                _prepared[key] = (problem, _build(msg, problem, init_inputs, "cpu"))
                memory = reference_memory.estimate(problem, _prepared[key][1], msg["precision"], init_inputs)
    except Exception as exc:
        channel.send(fd, {"status": "error", "kind": "reference_error", "message": worker.error_message(exc)})
        return
    channel.send(fd, {"status": "ok", "memory": memory})


def handle_park(msg: dict[str, Any], fd: int) -> None:
    """A judgement left the device: move the models of the problems no admitted judgement uses here (all but
    "keep") to host memory and give the device's memory back. With nothing kept, this process serves no admitted
    judgement: whatever is still held (a graph, a timed call's inputs, expected outputs nobody forgot) goes too,
    and the reply says what torch still holds on the device (the judge closes a process that keeps memory)."""
    keep = frozenset(msg.get("keep") or ())
    device = str(msg.get("device") or "cpu")
    dropped = 0
    if not keep:
        device_clock.release()
        reference_timing.release()
        dropped = len(_expected)
        _expected.clear()
    moved = reference_memory.park(_models, _prepared, keep) if device == "cuda" else 0
    channel.send(fd, {"status": "ok", "parked": moved, "dropped_expected": dropped,
                      **reference_memory.still_held(device, describe=not keep)})


def handle_hello(msg: dict[str, Any], fd: int) -> None:
    _limits["models"] = max(1, int(msg.get("models_kept") or 1))
    flags = worker.pin_global_flags(msg["device"], msg.get("threads", 1))
    channel.send(fd, {"status": "ok", "environment": worker.environment(msg["device"]), "flags": flags})


def handle_expect(msg: dict[str, Any], fd: int) -> None:
    """Take a judgement's seeds; compute the first two outputs (the first trials'), and, once per model, the
    workload, the floors and whether the reference can judge (worker/degenerate.py). The rest are computed when
    a solution output is compared with them. Replies with the outputs' shapes only: the values stay here, on the
    device, so the solution's outputs are compared here and nothing large travels through the orchestrator. The
    reply's "seconds" says where the time went (the verdict shows it as expect_* phases)."""
    _expected.pop(msg["token"], None)
    seconds: dict[str, float] = {}
    reference_memory.start_peak(msg["device"])
    try:
        with _timed(seconds, "model"):
            problem, model = _model_for(msg)
        expected = Expected(msg)
        with _timed(seconds, "outputs"):
            first = [expected.output(i) for i in range(min(2, len(msg["seeds"])))]
        with _timed(seconds, "workload"):
            workload = _workload(msg, problem, model) if msg["seeds"] else None
        with _timed(seconds, "floors"):
            expected.floors = _floors_of(msg, problem, model, [tensors for _, tensors in first], expected.forward_s)
        with _timed(seconds, "degenerate"):
            found = _degenerate(msg, expected, workload)
            contract, tightened_from = msg.get("contract") or "tf32", None
            # the tf32 allowance is what makes it degenerate? Then the problem judges under fp32 bounds
            if found and msg.get("tighten") and contract == "tf32" and msg["precision"] == "fp32" \
                    and _degenerate({**msg, "contract": "fp32"}, expected, workload) is None:
                found, contract, tightened_from = None, "fp32", found["reason"]
    except Exception as exc:
        channel.send(fd, {"status": "error", "kind": "reference_error", "message": worker.error_message(exc)})
        return
    _expected[msg["token"]] = expected
    peak_bytes = reference_memory.peak(msg["device"])
    reference_memory.release_cached(msg["device"])
    channel.send(fd, {"status": "ok", "workload": workload, "degenerate": found, "floors": expected.floors,
                      "peak_bytes": peak_bytes, "contract": contract, "tightened_from": tightened_from,
                      "kept_outputs": KEPT_OUTPUTS, "seconds": seconds, "outputs": [
                          {"structure": st, "nbytes": [t.numel() * t.element_size() for t in ts]} for st, ts in first]})


@contextlib.contextmanager
def _timed(seconds: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = round(time.perf_counter() - started, 4)


def _degenerate(msg: dict[str, Any], expected: Expected, workload: dict[str, Any] | None) -> dict[str, Any] | None:
    """Whether this reference can judge (worker/degenerate.py), decided once per model and contract: a property
    of the problem at this size, not of the judgement (the first judgement's inputs decide)."""
    key = (*_model_key(msg), msg.get("contract") or "tf32", repr(msg.get("tolerance")))
    if key not in _degenerate_found:
        _bound(_degenerate_found)
        _degenerate_found[key] = degenerate.check(
            msg.get("contract") or "tf32", msg["precision"], expected.output, len(msg["seeds"]), workload,
            msg.get("tolerance"), expected.floors["tf32"], expected.floors["fp64"])
    return _degenerate_found[key]


def handle_check(msg: dict[str, Any], fd: int) -> None:
    """Compare a solution output (opened by CUDA IPC, or read from the file it wrote) with the expected one. A token
    this process does not hold (it was started again, or parked with nothing kept, since the judgement's expect) is
    said so: the judge gives its seeds again and asks once more."""
    if msg["token"] not in _expected:
        channel.send(fd, {"status": "ok", "token_unknown": True})
        return
    try:
        kept = _expected[msg["token"]]
        structure, expected = kept.output(int(msg["index"]))
        limit = 2 * sum(t.numel() * t.element_size() for t in expected) + (1 << 20)
        if msg.get("transport") == "ipc":
            got = ipc.receive(msg["metas"], limit)
        else:
            got = channel.read_tensors(msg["path"], msg["metas"], limit)
        device = expected[0].device if expected else torch.device("cpu")
        got = [t.to(device) for t in got]
        floors = kept.floors
        result = compare.compare_outputs((structure, expected), (msg["structure"], got), msg["precision"],
                                         msg.get("tolerance"), msg.get("contract") or "tf32",
                                         tf32_floors=floors.get("tf32"), fp64_floors=floors.get("fp64"),
                                         workload=bounds.Workload.of(msg))
    except channel.ProtocolError as exc:
        channel.send(fd, {"status": "ok", "ok": False, "protocol_error": True, "reason": str(exc), "detail": {}})
        return
    except ipc.IpcUnavailable as exc:
        channel.send(fd, {"status": "ok", "ok": False, "ipc_unavailable": True, "reason": str(exc), "detail": {}})
        return
    except Exception as exc:
        channel.send(fd, {"status": "error", "kind": "reference_error", "message": worker.error_message(exc)})
        return
    channel.send(fd, {"status": "ok", "ok": result.ok, "reason": result.reason, "detail": result.detail})


def handle_forget(msg: dict[str, Any], fd: int) -> None:
    expected = _expected.pop(msg["token"], None)
    reference_timing.release()
    if expected is not None:
        del expected
        reference_memory.release_cached(msg.get("device") or "cpu")
    channel.send(fd, {"status": "ok"})


def _drop_kept_outputs() -> None:
    """Timing and the device clock run with the device to themselves, after the trials: the expected outputs kept
    for the trials are not needed beside them (one asked for later is computed again). Kept, three 6 GiB outputs of
    upstream's elementwise problems sat beside two timed calls' inputs and outputs, and the reference ran out of
    memory on an 80 GB card with a single judgement on it. Their memory stays in this process's allocator cache, for
    the timed calls to reuse: handed back to the driver, the next timed call would pay for allocating it."""
    for expected in _expected.values():
        expected.kept.clear()


def handle_time_round(msg: dict[str, Any], fd: int) -> None:
    """One round of reference timing, interleaved by the orchestrator with rounds of the solution's calls.

    With "warm": true, warm-up calls until the last three agree (the same plan the solution gets); otherwise
    exactly "calls" timed calls, each with fresh inputs. "tf32": true times with TF32 allowed (the reference a
    tf32-class solution is compared with). Replies with the samples and, per call, the time spent outside
    the window (inputs, flush, sync): the orchestrator's yardstick for the solution's unreported time.
    """
    device, precision = msg["device"], msg["precision"]
    _drop_kept_outputs()
    try:
        problem, model = _model_for(msg)
        timer = reference_timing.timer_for(device)
        with worker.tf32_allowed(bool(msg.get("tf32"))):
            if msg.get("warm"):
                budget_s = float(msg["budget_s"])
                reply = {"warm": reference_timing.warm(problem, model, timer, device, precision, budget_s)}
            else:
                reply = reference_timing.timed_round(problem, model, timer, device, precision, int(msg["calls"]))
    except Exception as exc:
        channel.send(fd, {"status": "error", "kind": "reference_error", "message": worker.error_message(exc)})
        return
    channel.send(fd, {"status": "ok", **reply})


def handle_device_time(msg: dict[str, Any], fd: int) -> None:
    """The reference's device time (CUDA graph replays, else the profiler): see worker/device_clock.py."""
    device, precision = msg["device"], msg["precision"]
    reference_timing.release()   # the last timed call's inputs and output: kept for the timed rounds only
    _drop_kept_outputs()
    try:
        problem, model = _model_for(msg)
        make = lambda seed: loading.make_inputs(problem, seed, device, precision)  # noqa: E731
        hold = (_model_key(msg), int(msg["seed"]), bool(msg.get("tf32"))) if msg.get("block") else None
        with worker.tf32_allowed(bool(msg.get("tf32"))):
            out, stats = device_clock.measure(model, make, int(msg["seed"]), reference_timing.timer_for(device),
                                              float(msg["budget_s"]),
                                              "profiler" if msg.get("method") == "profiler" else None, hold=hold)
        del out
    except Exception as exc:
        device_clock.release()
        channel.send(fd, {"status": "error", "kind": "reference_error", "message": worker.error_message(exc)})
        return
    channel.send(fd, {"status": "ok", **stats})


def handle_release_graph(msg: dict[str, Any], fd: int) -> None:
    """Drop the graph held between the blocks of an interleaved device-time measurement."""
    device_clock.release()
    channel.send(fd, {"status": "ok"})


def handle_count(msg: dict[str, Any], fd: int) -> None:
    """Count the problem's work at its default size (for the speed-of-light bound): on this process's GPU,
    else on the meta device (worker/work_count.py). This process is warm, so a new problem costs well under
    a second. Counting leaves no device state behind, and its cached memory is handed back."""
    started = time.perf_counter()
    reply: dict[str, Any] = {"status": "ok", "notes": []}
    module = None
    try:
        module = loading.load_module(msg["problem_path"])
        work_count.count(module, reply, str(msg.get("device") or "cpu"))
    except Exception as exc:
        reply = {"status": "error", "kind": "problem_error", "message": work_count.short_error(exc)}
    finally:
        if module is not None:
            sys.modules.pop(module.__name__, None)
        # what the count allocated stays in torch's cache otherwise: 17 GB in the general process on the H200
        reference_memory.release_cached(str(msg.get("device") or "cpu"))
    reply["seconds"] = round(time.perf_counter() - started, 4)
    channel.send(fd, reply)


def main() -> None:
    worker.serve({"hello": handle_hello, "prepare": handle_prepare, "expect": handle_expect, "check": handle_check,
                  "forget": handle_forget, "time_round": handle_time_round, "device_time": handle_device_time,
                  "release_graph": handle_release_graph, "count": handle_count, "park": handle_park})


if __name__ == "__main__":
    main()
