"""The orchestrator's handle on the trusted reference process, with a disk cache of reference times.

Only times are cached on disk (never outputs or seeds). The cache is written and read here, in the
orchestrator, never by a solution; since reference and solution are timed in interleaved rounds, a cached
time only sizes those rounds, unless the user asks to reuse it (--reuse-reference-times).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from kerneljudge.core import atomic_file
from kerneljudge.judging import environment
from kerneljudge.numerics.error_classes import WORKLOAD_KEYS
from kerneljudge.judging.child import Child
from kerneljudge.judging.cores import pin_tree


# a judgement's device memory in inputs' worth, before the reference's peak is measured: the solution's inputs,
# outputs and intermediates (3), the reference's (3), its kept outputs beyond them (2), and the float64 copies of
# input and output its floor makes (4), with room to spare (eight ran two 6 GB elementwise problems into an OOM)
INPUTS_PER_JUDGEMENT = 14


def estimated_need(figures: dict[str, int]) -> int | None:
    """A judgement's device memory before its reference's peak is measured, from the meta-device figures of
    worker/reference_memory.estimate: each side's weights, and INPUTS_PER_JUDGEMENT inputs' worth, where an input's
    worth is the larger of the inputs and the largest tensor the forward makes (a transposed convolution's output
    may be many times its input). None when nothing is known."""
    data = max(figures.get("input_bytes", 0), figures.get("activation_bytes", 0))
    if figures.get("model_bytes") or data:
        return 2 * figures.get("model_bytes", 0) + INPUTS_PER_JUDGEMENT * data
    return None


CLOSE_WAIT_S = 120.0   # close() waits at most this long for a request in flight (a model drawn on the CPU, say)


class ReferenceError(RuntimeError):
    """The problem itself failed to run (not the solution's fault)."""


class ReferenceService:
    def __init__(self, device: str, precision: str, threads: int, cache_dir: str, timeout_s: float = 900.0,
                 env: dict[str, str] | None = None, cores: tuple[int, ...] = (), models_kept: int = 1):
        self.env = dict(env or {})
        self.models_kept = models_kept  # reference models kept built at once (one per solution checked at once)
        self.cores = tuple(cores)  # the slot's quiet cores (judging/cores.py); empty: not pinned
        self.device, self.precision, self.threads = device, precision, threads
        self.cache_dir = cache_dir
        self.timeout_s = timeout_s
        self._child: Child | None = None
        self._start_lock = threading.Lock()
        # one request and its answer at a time: solutions checked at once share this process (judging/device/turns.py)
        self._talk = threading.RLock()
        self._hello_pending = False   # the hello sent by start() has not been answered yet
        # per token, its judgement's last expect request: given again where the process no longer holds the token
        self._expect_requests: dict[str, dict[str, Any]] = {}
        self.environment: dict[str, Any] = {}
        self.flags: dict[str, Any] = {}
        # per problem path, what its memory on the device was found to be (worker/reference_memory.py)
        self.memory: dict[str, dict[str, int]] = {}

    def start(self) -> None:
        """Start the process and send its hello without waiting for the answer (the next request reads it), so
        that the process's start (importing torch, initialising the device) overlaps the judge's other work."""
        with self._start_lock:
            if not self._running():
                self._spawn()

    def _running(self) -> bool:
        return self._child is not None and self._child.proc.poll() is None

    def _spawn(self) -> None:
        if self._child is not None:
            self._child.kill()
        self._child = Child("kerneljudge.worker.reference",
                            environment.child_env(self.device, self.threads, self.cache_dir, self.env))
        pin_tree(self._child.proc.pid, self.cores)
        self._child.send({"cmd": "hello", "device": self.device, "threads": self.threads,
                          "models_kept": self.models_kept})
        self._hello_pending = True

    def _ensure(self) -> Child:
        with self._talk, self._start_lock:
            if not self._running():
                self._spawn()
            if self._hello_pending:
                self._hello_pending = False
                reply = self._answer()[0]
                self.environment = reply.get("environment", {})
                self.flags = reply.get("flags", {})
        return self._child

    def _request(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """Send one request (starting the process if need be) and read its answer, while no other thread talks."""
        with self._talk:
            self._ensure()
            try:
                self._child.send(header)
            except Exception:
                pass  # a dead process: _answer says why
            return self._answer()

    def _answer(self) -> tuple[dict[str, Any], list[Any]]:
        child = self._child
        try:
            reply, tensors = child.recv(self.timeout_s)
        except Exception as exc:
            detail = child.output.text()
            self.close()
            raise ReferenceError(f"reference process failed ({type(exc).__name__}): {detail}") from None
        if reply.get("status") != "ok":
            raise ReferenceError(reply.get("message", "reference error"))
        return reply, tensors

    def hello(self) -> dict[str, Any]:
        self._ensure()
        return self.environment

    @property
    def pid(self) -> int | None:
        child = self._child   # read once: another thread may close the process meanwhile
        return child.proc.pid if child is not None and child.proc.poll() is None else None

    def prepare(self, problem_path: str, preset: dict[str, Any], init_seed: int) -> None:
        """Build the problem's reference model on the CPU, ahead of its first judgement (no device work: it
        moves to the device when the first solution's outputs are expected)."""
        reply, _ = self._request({"cmd": "prepare", "problem_path": problem_path, "preset": preset,
                                  "init_seed": init_seed, "device": self.device, "precision": self.precision})
        self._note_memory(problem_path, reply.get("memory"))

    def _note_memory(self, problem_path: str, found: Any) -> None:
        if isinstance(found, dict):
            known = self.memory.setdefault(problem_path, {})
            for key, value in found.items():   # the largest seen (held-out shapes may be smaller)
                if isinstance(value, (int, float)) and value > known.get(key, 0):
                    known[key] = int(value)

    def device_need(self, problem_path: str) -> int | None:
        """Bytes of device memory a judgement of this problem is expected to hold, for admission
        (judging/device/turns.py): twice the reference's measured peak (the solution's process holds about as much
        as the reference's), else estimated_need's estimate from its weights and inputs, else None (not known
        yet)."""
        known = self.memory.get(problem_path, {})
        if known.get("peak_bytes"):
            return 2 * known["peak_bytes"]
        return estimated_need(known)

    def park(self, wait: bool = True, keep: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """Move this process's models to host memory, but those of the problems in `keep` (best effort: a dead
        process holds none). wait=False: not if the process is answering another request now (building a model on
        the CPU, say). Returns the reply (what it moved, and with nothing kept, what torch still holds on the
        device: worker/reference_memory.still_held), or None where nothing was asked."""
        if self.device != "cuda" or not self._running() or not self._talk.acquire(blocking=wait):
            return None
        try:
            return self._request({"cmd": "park", "device": self.device, "keep": list(keep)})[0]
        except ReferenceError:
            return None
        finally:
            self._talk.release()

    def expect(self, token: str, problem_path: str, preset: dict[str, Any], init_seed: int,
               seeds: list[int], contract: str = "tf32", tolerance: dict[str, Any] | None = None,
               tighten: bool = False) -> dict[str, Any]:
        """Give the reference process a judgement's seeds (under `token`); it computes the first outputs now and
        the others when a solution output is compared with them, keeping "kept_outputs" at once.

        Returns {"outputs": for the first seeds, the output's structure and tensor sizes (the values never leave
        that process), "workload": the counts the numerics bounds use (numerics/arithmetic.py) or None,
        "floors": the reference's own TF32 and fp32 errors per output, "degenerate": None, or why this
        reference cannot judge under `contract` (worker/degenerate.py), "contract": the contract it judges under
        ("fp32" where it is degenerate under tf32 alone), "tightened_from": then why tf32 could not judge}.
        """
        header = {"cmd": "expect", "token": token, "problem_path": problem_path, "preset": preset,
                  "init_seed": init_seed, "seeds": seeds, "device": self.device, "precision": self.precision,
                  "contract": contract, "tolerance": tolerance, "tighten": tighten}
        reply, _ = self._request(header)
        self._expect_requests[token] = header
        self._note_memory(problem_path, {"peak_bytes": reply.get("peak_bytes")})
        return {"outputs": reply["outputs"], "workload": reply.get("workload"), "floors": reply.get("floors"),
                "degenerate": reply.get("degenerate"), "kept_outputs": reply.get("kept_outputs"),
                "seconds": reply.get("seconds"), "contract": reply.get("contract"),
                "tightened_from": reply.get("tightened_from")}

    def check(self, token: str, index: int, structure: Any, path: str, metas: list[dict[str, Any]],
              tolerance: dict[str, Any] | None, transport: str = "file", contract: str = "tf32",
              workload: dict[str, Any] | None = None) -> dict[str, Any]:
        """Compare a solution output with kept output `index` under a numerics contract: {"ok", "reason",
        "detail"}, where detail["numerics"] is the error and its arithmetic class (docs/numerics.md).

        The output is in the file `path`, or with transport="ipc" behind the CUDA IPC handles in `metas`.

        Where the process no longer holds the token (closed and started again to free the device, or parked with
        nothing kept, between the judgement's expect and this check: on the H100 a judgement of level 2 problem 31
        came out `runtime_error` on a KeyError of its token), its expect is given again, as it was, and the check
        asked once more: the kept outputs are the judge's state, never the solution's verdict.
        """
        header = {"cmd": "check", "token": token, "index": index, "structure": structure, "path": path,
                  "metas": metas, "precision": self.precision, "tolerance": tolerance, "transport": transport,
                  "contract": contract, **{k: (workload or {}).get(k) for k in WORKLOAD_KEYS}}
        with self._talk:   # no other request between the expect given again and the check
            reply, _ = self._request(header)
            if reply.get("token_unknown") and token in self._expect_requests:
                self._request(self._expect_requests[token])
                reply, _ = self._request(header)
        if reply.get("token_unknown"):
            raise ReferenceError(f"the reference process holds no expected outputs for judgement {token}")
        return reply

    def forget(self, token: str) -> None:
        """Free kept outputs; best effort (a dead reference process has freed them already)."""
        self._expect_requests.pop(token, None)
        if self._running():
            try:
                self._request({"cmd": "forget", "token": token, "device": self.device})
            except ReferenceError:
                pass

    def time_round(self, problem_path: str, preset: dict[str, Any], init_seed: int, *, calls: int = 0,
                   warm: bool = False, tf32: bool = False, budget_s: float = 2.0) -> dict[str, Any]:
        """One round of reference timing (or, with warm=True, its warm-up): {"samples", "overheads", "clocks"}
        or {"warm": [...]}. The orchestrator interleaves these rounds with the solution's."""
        reply, _ = self._request({"cmd": "time_round", "problem_path": problem_path, "preset": preset,
                                  "init_seed": init_seed, "device": self.device, "precision": self.precision,
                                  "calls": calls, "warm": warm, "tf32": tf32, "budget_s": budget_s})
        return reply

    def device_time(self, problem_path: str, preset: dict[str, Any], init_seed: int, seed: int, *,
                    tf32: bool = False, budget_s: float = 0.5, block: bool = False,
                    method: str | None = None) -> dict[str, Any]:
        """The reference's device time: {"method", "median_ms", "times_ms", ...} (worker/device_clock.py). With
        `block`, one block of an interleaved measurement: the graph stays held until release_graph().
        method="profiler": measured by the profiler, never by graph replays."""
        reply, _ = self._request({"cmd": "device_time", "problem_path": problem_path, "preset": preset,
                                  "init_seed": init_seed, "seed": seed, "device": self.device,
                                  "precision": self.precision, "tf32": tf32, "budget_s": budget_s,
                                  "block": block, "method": method})
        return reply

    def release_graph(self) -> None:
        """Drop the graph a device_time(block=True) left held."""
        self._request({"cmd": "release_graph"})

    def count(self, problem_path: str) -> dict[str, Any]:
        """The problem's FLOPs and bytes at its default size, counted in this warm process on its GPU or on the
        meta device (the reply of the lint worker's "sol" command; see judging/roofline.py)."""
        try:
            return self._request({"cmd": "count", "problem_path": problem_path, "device": self.device})[0]
        except ReferenceError as exc:  # the problem cannot be counted (or the process failed and was closed)
            return {"status": "error", "message": str(exc)}

    def cached_timing(self, problem_sha: str, preset: dict[str, Any], tf32: bool = False) -> dict[str, Any] | None:
        """Reference statistics measured by an earlier judge run, or None. This process alone writes them."""
        path = self._cache_path(problem_sha, preset, "-tf32" if tf32 else "")
        try:
            cached = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cached if isinstance(cached, dict) and isinstance(cached.get("median_ms"), (int, float)) else None

    def store_timing(self, problem_sha: str, preset: dict[str, Any], stats: dict[str, Any], tf32: bool = False) -> None:
        atomic_file.write_json(self._cache_path(problem_sha, preset, "-tf32" if tf32 else ""),
                               {k: v for k, v in stats.items() if k != "cached"})

    def _cache_path(self, problem_sha: str, preset: dict[str, Any], suffix: str) -> Path:
        return Path(self.cache_dir) / "reference_times" / f"{self._cache_key(problem_sha, preset)}{suffix}.json"

    def _cache_key(self, problem_sha: str, preset: dict[str, Any]) -> str:
        env = self.environment
        material = [problem_sha, json.dumps(preset, sort_keys=True), env.get("device_name"), env.get("torch"),
                    env.get("cuda"), self.precision, self.threads, self.device]
        return hashlib.sha256(json.dumps(material).encode()).hexdigest()[:32]

    def close(self, wait: bool = True) -> None:
        """End the process; the next request starts a new one, whose models are built again. With `wait`, a request
        being answered finishes first (at most CLOSE_WAIT_S), so that no judgement's request fails for it."""
        held = self._talk.acquire(timeout=CLOSE_WAIT_S) if wait else False
        try:
            self._hello_pending = False
            if self._child is not None:
                self._child.close()
                self._child = None
        finally:
            if held:
                self._talk.release()
