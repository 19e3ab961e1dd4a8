"""Disposable child process that builds and runs one solution.

Everything it reports is checked by the orchestrator where it can be: outputs are compared there, times
are cross-checked against the orchestrator's own clock and the reference's overhead, and the outputs of
timed calls are shipped for re-checking on request after the call has returned. Outputs are written to a
file the orchestrator names (in shared memory) and compared by the trusted reference process. Seeds arrive one call
at a time, so no future input can be predicted; the expected outputs never enter this process.

    python -m kerneljudge.worker.solution FD_IN FD_OUT
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from typing import Any

import torch

from kerneljudge.core import channel
from kerneljudge.worker import builds, device_clock, ipc, loading, timing, common as worker


class State:
    device = "cpu"
    precision = "fp32"
    problem_path = ""
    problem_source: str | None = None   # the problem's text, sent by the judge (never read from disk in the box)
    solution_module: Any = None
    problem: Any = None
    model: torch.nn.Module | None = None
    timer: timing.Timer | None = None
    clocks: dict[str, Any] = {}
    flags_at_start: dict[str, Any] = {}
    threads_at_start: set[int] = set()
    last_output: Any = None
    previous_inputs: Any = None
    held_output: Any = None     # an earlier call's output, kept to see whether a later call overwrites it
    kept_inputs: Any = None     # an earlier call's inputs, rewritten in place for the next call
    preset: Any = None          # the preset init built the models at
    reference_model: Any = None  # (init seed, preset, the problem's Model as init built it), for the profile


S = State()


def _error(fd: int, kind: str, exc: BaseException) -> None:
    channel.send(fd, {"status": "error", "kind": kind, "message": worker.error_message(exc)})


def _integrity_flags() -> list[str]:
    flags = []
    if timing.tampered(S.clocks):
        flags.append("timer_tampered")
    if worker.global_flags() != S.flags_at_start:
        flags.append("global_flags_changed")
    if _new_threads():
        flags.append("thread_alive")
    return flags


def _new_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.is_alive() and t.ident not in S.threads_at_start]


def handle_threads(msg: dict[str, Any], fd: int) -> None:
    """The threads started since the solution loaded and still running, by name and target (for the flag's note)."""
    described = []
    for thread in _new_threads():
        target = getattr(thread, "_target", None) or type(thread).run
        where = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
        described.append(f"{thread.name} ({where})")
    channel.send(fd, {"status": "ok", "threads": described, "flags": _integrity_flags()})


def handle_box(msg: dict[str, Any], fd: int) -> None:
    """Before any solution code: narrow the box if the launcher left a narrower one pending, and say what the box
    is. This reply is the last one the solution cannot have influenced. The device is not touched here: the
    process creates its CUDA context when its judgement first uses the device (after admission,
    judging/device/turns.py), so a process that builds, loads or waits holds no device memory."""
    from kerneljudge.sandbox import landlock, namespaces

    try:
        narrowed = landlock.apply_pending().to_dict()
    except Exception as exc:
        _error(fd, "runtime_error", exc)
        return
    record = namespaces.RECORD
    channel.send(fd, {"status": "ok", "layers": list(record.get("active", [])),
                      "missing": dict(record.get("missing", {})), "landlock": record.get("landlock"),
                      "narrowed": narrowed})


def _request_build(request: dict[str, Any]) -> str:
    """The judge's trusted builder compiles the extension and copies it into this process's scratch folder."""
    answer = worker.ask_judge({"status": "build", "request": request})
    if answer.get("ok") and isinstance(answer.get("path"), str):
        return answer["path"]
    raise builds.BuildFailed(str(answer.get("log", "the judge refused the build")))


def handle_load(msg: dict[str, Any], fd: int) -> None:
    """Build phase: import the solution (load_inline and Triton compiles happen here)."""
    S.device, S.precision, S.problem_path = msg["device"], msg["precision"], msg["problem_path"]
    S.problem_source = msg.get("problem_source")
    S.flags_at_start = worker.pin_global_flags(S.device, msg.get("threads", 1))
    S.clocks = timing.clock_identities()
    S.threads_at_start = {t.ident for t in threading.enumerate()}
    builds.install(_request_build)
    environment = worker.environment(S.device)   # the device's properties: no CUDA context is made for them
    start = time.perf_counter()
    loading.library_shims()
    try:
        S.solution_module = loading.load_module(msg["solution_path"])
    except BaseException as exc:  # SystemExit from solution code is a build failure too
        _error(fd, "build_error", exc)
        return
    if not isinstance(getattr(S.solution_module, "ModelNew", None), type):
        channel.send(fd, {"status": "error", "kind": "build_error",
                          "message": "the solution defines no class ModelNew"})
        return
    channel.send(fd, {"status": "ok", "build_s": time.perf_counter() - start, "environment": environment,
                      "flags": _integrity_flags()})


def handle_init(msg: dict[str, Any], fd: int) -> None:
    """Construct Model (for its initial weights) and ModelNew for a preset; hand the weights over."""
    S.model = S.reference_model = None
    S.last_output = S.previous_inputs = S.held_output = S.kept_inputs = None
    S.preset = msg.get("preset")
    try:
        S.problem = loading.load_module(S.problem_path, msg.get("preset"), S.problem_source)
        init_inputs = loading.make_init_inputs(S.problem, msg["init_seed"])
        reference = loading.build_model(S.problem.Model, init_inputs, msg["init_seed"], S.device, S.precision)
    except Exception as exc:
        _error(fd, "reference_error", exc)
        return
    try:
        init_inputs = loading.make_init_inputs(S.problem, msg["init_seed"])
        model = loading.build_model(S.solution_module.ModelNew, init_inputs, msg["init_seed"], S.device, S.precision)
        copied = loading.copy_matching_weights(reference, model)
    except Exception as exc:
        kind = "build_error" if "Error building extension" in str(exc) else "runtime_error"
        _error(fd, kind, exc)
        return
    # kept for the profile (handle_profile), which compares its library work with the solution's: built again
    # there, a model of gigabytes would be drawn on the CPU while the judge holds the device alone
    S.reference_model = (msg["init_seed"], msg.get("preset"), reference)
    worker.poison_device_memory(S.device)
    S.model = model
    if S.timer is None:
        S.timer = timing.Timer(S.device)
    channel.send(fd, {"status": "ok", "copied": copied, "flags": _integrity_flags()})


def handle_call(msg: dict[str, Any], fd: int) -> None:
    """A correctness call: inputs from the seed, output shipped, inputs checked against a pristine copy.

    Outputs belong to the caller, so three options serve the ownership checks: "hold": true keeps this
    call's output object, which "ship" with "held": true sends again after later calls (an output a later call overwrote
    is caught); "keep_inputs": true keeps this call's input tensors, and "rewrite": true makes the next call
    reuse exactly those tensors with the new seed's values copied into them in place (a result computed for
    the old values, e.g. a stale CUDA graph keyed on the tensor objects, is caught)."""
    S.last_output = None
    ipc.release()
    if msg.get("rewrite"):
        S.held_output = None   # the held output's check ran after the previous call: its memory goes
    try:
        fresh = loading.make_inputs(S.problem, msg["seed"], S.device, S.precision)
        inputs = _rewrite_kept_inputs(fresh) if msg.get("rewrite") else fresh
        if msg.get("rewrite"):
            S.kept_inputs = None   # rewritten once; this call's inputs keep them alive until it returns
            del fresh
        pristine = loading.snapshot_inputs(inputs)
        out = worker.call_model(S.model, inputs, S.device)
        mutated = not loading.inputs_unchanged(inputs, pristine)
        flags = _integrity_flags() + (["input_mutated"] if mutated else [])
        S.last_output = out  # kept so the judge can ask for it again as a file if IPC fails
        if msg.get("hold"):
            S.held_output = out
        if msg.get("keep_inputs"):
            S.kept_inputs = inputs
        worker.send_output(fd, out, S.device, msg, {"flags": flags})
    except loading.OutputError as exc:
        channel.send(fd, {"status": "error", "kind": "bad_output", "message": str(exc)})
    except Exception as exc:
        _error(fd, "runtime_error", exc)


def _rewrite_kept_inputs(fresh: list[Any]) -> list[Any]:
    """The kept input objects, with the fresh values written into them (the same tensors, new contents)."""
    kept = S.kept_inputs if S.kept_inputs is not None else fresh
    for old, new in zip(kept, fresh):
        if isinstance(old, torch.Tensor) and isinstance(new, torch.Tensor) and old.shape == new.shape:
            old.copy_(new)
    timing.sync(S.device)
    return kept


def handle_timed(msg: dict[str, Any], fd: int) -> None:
    """One timed call. Fresh values each time, at shifting addresses (a random pad, previous inputs alive)."""
    ipc.release()
    _drop_ownership_state()
    try:
        pad = torch.empty(secrets.randbelow(1 << 22) + 4096, dtype=torch.uint8, device=S.device)
        inputs = loading.make_inputs(S.problem, msg["seed"], S.device, S.precision)
        S.last_output = None
        out, t = S.timer.time_call(S.model, inputs)
        loading.flatten_output(out, S.device)  # plain, materialised tensors only
        S.last_output = out
        S.previous_inputs = inputs
        del pad
        channel.send(fd, {"status": "ok", **t, "flags": _integrity_flags()})
    except loading.OutputError as exc:
        channel.send(fd, {"status": "error", "kind": "bad_output", "message": str(exc)})
    except Exception as exc:
        _error(fd, "runtime_error", exc)


def _drop_ownership_state() -> None:
    """The ownership checks are over once timing or the device clock starts: what they kept (an output, input
    tensors) would otherwise sit on the device beside every timed call (on upstream's 6 GiB elementwise problems,
    12 GiB of a solution's process that the judge, not the solution, held)."""
    S.held_output = None
    S.kept_inputs = None


def handle_ship(msg: dict[str, Any], fd: int) -> None:
    """Send the last call's output (with "held": true, the held one), as it is now: after the device went
    idle, and after any later calls."""
    try:
        timing.sync(S.device)
        worker.send_output(fd, S.held_output if msg.get("held") else S.last_output, S.device, msg)
    except loading.OutputError as exc:
        channel.send(fd, {"status": "error", "kind": "bad_output", "message": str(exc)})
    except Exception as exc:
        _error(fd, "runtime_error", exc)


def handle_profile(msg: dict[str, Any], fd: int) -> None:
    """Calls under torch's profiler (threat C3): which kernels did the work, as plain data.

    A warm call comes first, so first-call work after a re-init stays out of the profiles. The model is
    profiled once per seed; then the problem's reference Model, built here from the same init seed, is
    profiled on the same inputs, so the judge can compare the library work of both under the same profiler.
    A profiler that fails is reported as `profile_error`; the judge records it and moves on."""
    from kerneljudge.worker import profiling

    seeds = [int(x) for x in msg["seeds"]]
    make = lambda seed: loading.make_inputs(S.problem, seed, S.device, S.precision)  # noqa: E731
    S.last_output = S.previous_inputs = None   # the timed calls' (timing is over): not beside the profiled ones
    _drop_ownership_state()
    ipc.release()
    try:
        worker.call_model(S.model, make(msg["warm_seed"]), S.device)
    except Exception as exc:
        _error(fd, "runtime_error", exc)
        return
    try:
        runs = [profiling.profile_call(S.model, make(seed), S.device) for seed in seeds]
    except Exception as exc:
        channel.send(fd, {"status": "ok", "profile_error": worker.error_message(exc)[-1500:],
                          "flags": _integrity_flags()})
        return
    reply: dict[str, Any] = {"status": "ok", "profiles": runs, "reference_profiles": []}
    try:
        if msg.get("reference", True):   # the judge compares them under strict only
            reference = _reference_model(msg["init_seed"])
            worker.call_model(reference, make(msg["warm_seed"]), S.device)
            reply["reference_profiles"] = [profiling.profile_call(reference, make(seed), S.device) for seed in seeds]
            del reference
    except Exception as exc:  # the comparison is optional; the solution's own profile still counts
        reply["reference_error"] = worker.error_message(exc)[-500:]
    reply["flags"] = _integrity_flags()
    channel.send(fd, reply)


def _reference_model(init_seed: int) -> torch.nn.Module:
    """The problem's Model as init built it (same seed and preset), else built now."""
    kept = getattr(S, "reference_model", None)
    if kept is not None and kept[0] == init_seed and kept[1] == S.preset:
        return kept[2]
    init_inputs = loading.make_init_inputs(S.problem, init_seed)
    return loading.build_model(S.problem.Model, init_inputs, init_seed, S.device, S.precision)


def handle_device_time(msg: dict[str, Any], fd: int) -> None:
    """The solution's device time (CUDA graph replays, else the profiler: worker/device_clock.py). A graph's
    output becomes the last output, so the judge can ship it and check the replays computed the right thing."""
    S.last_output = None
    S.previous_inputs = None   # kept only so that timed calls see shifting addresses; timing is over
    _drop_ownership_state()
    ipc.release()
    make = lambda seed: loading.make_inputs(S.problem, seed, S.device, S.precision)  # noqa: E731
    try:
        out, stats = device_clock.measure(S.model, make, int(msg["seed"]), S.timer, float(msg["budget_s"]),
                                          "profiler" if msg.get("method") == "profiler" else None,
                                          hold=("solution", int(msg["seed"])) if msg.get("block") else None)
    except Exception as exc:
        device_clock.release()
        _error(fd, "runtime_error", exc)
        return
    S.last_output = out
    channel.send(fd, {"status": "ok", **stats, "has_output": out is not None, "flags": _integrity_flags()})


def handle_release_graph(msg: dict[str, Any], fd: int) -> None:
    """Drop the graph held between the blocks of an interleaved device-time measurement."""
    device_clock.release()
    channel.send(fd, {"status": "ok", "flags": _integrity_flags()})


def main() -> None:
    worker.serve({"box": handle_box, "load": handle_load, "init": handle_init, "call": handle_call,
                  "timed": handle_timed, "ship": handle_ship, "profile": handle_profile,
                  "device_time": handle_device_time, "release_graph": handle_release_graph,
                  "threads": handle_threads})
    # no interpreter teardown: in the narrowed box torch could not remove its IPC counter file and would
    # abort; the judge removes that file and this process's folders itself
    os._exit(0)


if __name__ == "__main__":
    main()
