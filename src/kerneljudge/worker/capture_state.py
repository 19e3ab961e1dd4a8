"""After a CUDA-graph capture fails: put the process's device state back and check it, so that nothing the judge
tried there becomes the solution's (or the reference's) fault later.

torch's capture stops at the first error, and a capture that fails (a forward that calls `.item()` or
synchronises, a side stream, no memory left) leaves the process unlike it was:

* the default CUDA generator: capture_begin registered it with the graph and put its state in capture mode;
  capture_end raises at cudaStreamEndCapture before the epilogue that takes it out again, so the generator's
  next draw outside a capture raises "Offset increment outside graph capture encountered unexpectedly." Every
  input the judge draws afterwards (the held-out shapes come after the device clock) is drawn with it;
* the current stream: torch.cuda.graph's exit never restores the stream it made current when capture_end
  raised, so later work would run on the capture stream;
* the caching allocator: still routing the capture stream's allocations into the graph's private pool (its
  `endAllocateToPool` comes after the failing call);
* the capture stream itself: still capturing where capture_end never reached cudaStreamEndCapture (a forward
  that left another stream current);
* the runtime's last error, left for the next check to find.

`restore` undoes each one and verifies with a draw on the device and a synchronisation; its report says whether
the state could be verified, so the judge can run the rest of a judgement in a fresh process if not.
"""

from __future__ import annotations

from typing import Any

import torch

from kerneljudge.worker import timing


def restore(stream_before: torch.cuda.Stream, capture_stream: torch.cuda.Stream | None,
            pool: Any | None) -> dict[str, Any]:
    """Undo what a failed capture left; {"verified": bool, "note": what was found and done}."""
    done: list[str] = []
    # in this order: the generator's state can be read only once no stream is capturing and the current stream
    # is an ordinary one
    steps = (("ending the capture", lambda: _end_open_capture(capture_stream)),
             ("restoring the stream", lambda: _restore_stream(stream_before)),
             ("ending the pool", lambda: _end_pool_routing(pool)),
             ("clearing the error", _clear_last_error),
             ("renewing the generator", _fresh_generator))
    for what, step in steps:
        try:
            found = step()
        except Exception as exc:   # a step that cannot run is reported; the verification decides
            found = f"{what} failed: {type(exc).__name__}: {str(exc).strip()[:150]}"
        if found:
            done.append(found)
    problem = verify()
    if problem:
        done.append(problem)
    return {"verified": not problem, "note": "; ".join(done)[:600]}


def verify() -> str:
    """'' when the device works as before a capture: no stream capturing, a draw with the default generator and
    a synchronisation succeed; else what failed."""
    try:
        if torch.cuda.is_current_stream_capturing():
            return "the current stream is still capturing"
        probe = torch.rand(16, device="cuda")  # the default generator, as every input the judge draws
        total = float((probe * 2.0).sum())
        torch.cuda.synchronize()
    except Exception as exc:
        return f"the device state could not be verified: {type(exc).__name__}: {str(exc).strip()[:200]}"
    if not 0.0 <= total <= 32.0:
        return f"the device state could not be verified: a draw of 16 uniforms summed (x2) to {total}"
    return ""


def _end_open_capture(stream: torch.cuda.Stream | None) -> str:
    if stream is None:
        return ""
    with torch.cuda.stream(stream):
        capturing = torch.cuda.is_current_stream_capturing()
    if not capturing:
        return ""
    status = timing.runtime.end_capture(stream.cuda_stream) if timing.runtime is not None else None
    return f"the capture stream was still capturing (ended: CUDA status {status})"


def _restore_stream(before: torch.cuda.Stream) -> str:
    if torch.cuda.current_stream() == before:
        return ""
    torch.cuda.set_stream(before)
    return "the current stream was left at the capture stream (set back)"


def _end_pool_routing(pool: Any | None) -> str:
    """Stop routing allocations into the failed graph's pool and hand the pool back. Ending fails where the
    capture got that far itself; the pool then belongs to the graph object, which frees it when dropped."""
    end = getattr(torch._C, "_cuda_endAllocateToPool", None)
    release = getattr(torch._C, "_cuda_releasePool", None)
    if pool is None or end is None or release is None:
        return ""
    device = torch.cuda.current_device()
    try:
        end(device, pool)
    except RuntimeError:
        return ""
    release(device, pool)
    return "the allocator still routed the capture stream into the graph's pool (ended, pool released)"


def _clear_last_error() -> str:
    code = timing.runtime.clear_last_error() if timing.runtime is not None else 0
    return f"CUDA error {code} cleared" if code else ""


def _fresh_generator() -> str:
    """Where the current device's default generator cannot draw (left in capture mode), give it a state of its
    own, with the same seed and offset, that no graph has registered or put in capture mode."""
    try:
        torch.empty(4, device="cuda").uniform_()
        return ""
    except RuntimeError as exc:
        stuck = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
    index = torch.cuda.current_device()
    default = torch.cuda.default_generators[index]
    fresh = torch.Generator(device=f"cuda:{index}")
    try:
        fresh.set_state(default.get_state())
    except RuntimeError:   # the state cannot be read: the same seed, from its start
        fresh.manual_seed(default.initial_seed())
    default.graphsafe_set_state(fresh)
    return f"the default CUDA generator could not draw ({stuck}): given a fresh state"
