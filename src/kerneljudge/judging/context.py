"""The state of judging one solution, and the round trips that move it forward.

`Context` holds what the orchestrator knows about the solution being judged (secret seeds, flags, phase
times, the worst error seen) and talks to two processes: the solution's child over its private channel, and
the trusted reference process, which keeps the expected outputs and compares. Anything that ends judging is
raised as an `Outcome` carrying the verdict.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from kerneljudge.core import channel
from kerneljudge.numerics import error_classes
from kerneljudge.judging.structure import structure_ok
from kerneljudge.core.problem import Problem
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging.child import Child
from kerneljudge.judging.reference import ReferenceService

# integrity flags a solution's process may report about itself (anything else it sends is ignored)
CHILD_FLAGS = frozenset({"timer_tampered", "global_flags_changed", "thread_alive", "input_mutated"})


class Outcome(Exception):
    """Raised inside the flow to end judging with a verdict."""

    def __init__(self, verdict: str, reason: str, flags: tuple[str, ...] = (), excerpt: str = ""):
        super().__init__(reason)
        self.verdict, self.reason, self.flags, self.excerpt = verdict, reason, flags, excerpt


class ProblemOutcome(Exception):
    """Raised when the problem, not the solution, decides: its reference cannot judge at this size (kind
    "degenerate_reference") or cannot run at all ("reference_failed"). The verdict is `unjudgeable`."""

    def __init__(self, kind: str, reason: str, figures: dict[str, Any] | None = None):
        super().__init__(reason)
        self.kind, self.reason, self.figures = kind, reason, dict(figures or {})

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "reason": self.reason, "figures": self.figures}


@dataclass
class Context:
    problem: Problem
    options: JudgeOptions
    device: str
    reference: ReferenceService
    small: bool
    preset: dict[str, Any]
    held_out: list[dict[str, Any]] = field(default_factory=list)
    far_below_index: int | None = None   # which held-out shape is far below the benchmark shape (threat B13)
    planned_need: int | None = None      # device bytes the shape plan measured at this preset (shape_budget)
    # what the numerics bounds know about the problem at the current preset (numerics/arithmetic.py)
    workload: dict[str, Any] | None = None
    init_seed: int = field(default_factory=lambda: secrets.randbits(62))
    flags: set[str] = field(default_factory=set)
    child: Child | None = None
    deadline: float = math.inf
    info: dict[str, Any] = field(default_factory=dict)
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    exchange: str = ""
    outputs_written: int = 0
    transport: str = "file"  # how outputs reach the reference process: "ipc" (CUDA) or "file"
    phases: dict[str, float] = field(default_factory=dict)
    failed_in: str = ""   # the innermost phase an exception left (a verdict judged again says where the first failed)
    numerics: dict[str, Any] | None = None   # the worst error seen on any checked output
    max_error: dict[str, Any] | None = None
    expected_bytes: int = 0   # the size of the outputs the reference process keeps for the last expect()
    # the numerics contract outputs are compared under: the options' own, or fp32 where the problem is degenerate
    # under tf32 but not under fp32 (flag contract_tightened)
    contract: str = ""
    # answers a build request the child sends in the middle of a command (the trusted builder): given the
    # request and the seconds left, returns the answer to send back
    on_build: Callable[[Any, float], dict[str, Any]] | None = None

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the wall time of a block to phases[name] (the verdict shows where judging time went)."""
        started = time.monotonic()
        try:
            yield
        except BaseException:
            self.failed_in = self.failed_in or name
            raise
        finally:
            self.add_time(name, time.monotonic() - started)

    def add_time(self, name: str, seconds: float) -> None:
        self.phases[name] = round(self.phases.get(name, 0.0) + seconds, 3)

    @contextlib.contextmanager
    def judges_time(self) -> Iterator[None]:
        """A block of the reference's work (its outputs, its comparisons): it does not count against the
        solution's run time limit, which moves on by as long as the block took."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.deadline += time.monotonic() - started

    def request(self, header: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """One round trip to the solution child; a dead or silent child becomes a verdict."""
        remaining = self.deadline - time.monotonic() if timeout is None else timeout
        if remaining <= 0:
            raise Outcome("timeout", "ran past the run time limit", excerpt=self.child.output.text())
        deadline = time.monotonic() + remaining
        try:
            self.child.send(header)
            reply, _ = self.child.recv(remaining, max_payload=0)  # outputs travel as files, never here
            while reply.get("status") == "build":  # load_inline called: the judge builds, then the call goes on
                answer = self.on_build(reply.get("request"), deadline - time.monotonic()) if self.on_build \
                    else {"ok": False, "log": "this judge has no builder"}
                # time spent waiting for a free build slot is the judge's, not the solution's
                queued = answer.pop("queued_s", 0.0)
                deadline += queued if isinstance(queued, (int, float)) and queued > 0 else 0.0
                self.deadline = max(self.deadline, deadline)
                self.child.send(answer)
                reply, _ = self.child.recv(deadline - time.monotonic(), max_payload=0)
        except channel.ChannelTimeout:
            phase = "build" if header.get("cmd") == "load" else "run"
            limit = self.options.build_timeout_s if phase == "build" else self.options.run_timeout_s
            raise Outcome("timeout", f"no answer within the {phase} time limit of {limit:g} s "
                          f"(during '{header.get('cmd')}')", excerpt=self.child.output.text()) from None
        except (channel.ChannelClosed, OSError):
            how = self.child.exit_description()
            verdict = "build_error" if header.get("cmd") == "load" else "runtime_error"
            raise Outcome(verdict, f"the solution's process died during '{header.get('cmd')}' ({how})",
                          excerpt=self.child.output.text()) from None
        except channel.ProtocolError as exc:
            raise Outcome("rejected", f"the solution's process broke the judge protocol: {exc}",
                          ("protocol_violation",), self.child.output.text()) from None
        reported = reply.get("flags")
        if isinstance(reported, list):
            self.flags.update(f for f in reported if f in CHILD_FLAGS)
            if "thread_alive" in reported and header.get("cmd") != "threads":
                self._describe_threads()
        if reply.get("status") != "ok":
            raise error_outcome(reply, self.child.output.text())
        return reply

    def _describe_threads(self) -> None:
        """Once: the flag note says which threads the solution's process left running (their names and targets,
        as that process reports them: for a human to judge, never for the verdict)."""
        notes = self.info.setdefault("flag_notes", {})
        if "thread_alive" in notes:
            return
        notes["thread_alive"] = "threads left running in the solution's process: (not described)"
        try:
            threads = self.request({"cmd": "threads"}).get("threads")
        except Outcome:
            return
        if isinstance(threads, list):
            named = ", ".join(str(t)[:120] for t in threads[:5])
            notes["thread_alive"] = f"threads left running in the solution's process: {named}"[:600]

    def expect(self, preset: dict[str, Any], seeds: list[int], tighten: bool = False) -> dict[str, Any] | None:
        """The reference process computes and keeps the outputs for these seeds (indices 0..n-1). Returns None,
        or why the reference cannot judge at this preset ({"kind", "reason", "figures"}: worker/degenerate.py).
        `tighten` (the benchmark shape's first expect only): where the reference is degenerate under tf32 alone,
        the whole judgement is judged under fp32 instead (a held-out shape degenerate under tf32 is skipped, as a
        tf32-class solution right at the benchmark shape must not fail there for the problem's sake)."""
        with self.judges_time():
            kept = self.reference.expect(self.token, self.problem.path, preset, self.init_seed, seeds,
                                         self.contract, self.problem.metadata.get("TOLERANCE"), tighten)
        self.workload = kept["workload"]
        if kept.get("contract") and kept["contract"] != self.contract:
            self.contract = kept["contract"]
            self.flags.add("contract_tightened")
            self.info["contract_tightened_from"] = str(kept.get("tightened_from") or "")[:300]
        for part, seconds in (kept.get("seconds") or {}).items():   # where the reference's time went
            if isinstance(seconds, (int, float)):
                self.add_time(f"expect_{part}", seconds)
        # the reference process keeps a few expected outputs of this judgement at once (computed when compared)
        per_output = max((sum(int(n) for n in out.get("nbytes", [])) for out in kept["outputs"]), default=0)
        self.expected_bytes = per_output * int(kept.get("kept_outputs") or len(kept["outputs"]) or 1)
        return kept.get("degenerate")

    def request_output(self, header: dict[str, Any]) -> dict[str, Any]:
        """A request whose answer is an output: shared by CUDA IPC, or written to a fresh file in the exchange
        folder (the child falls back to the file when its memory cannot be shared)."""
        self.outputs_written += 1
        path = os.path.join(self.exchange, f"out{self.outputs_written}.bin")
        reply = self.request({**header, "out_path": path, "transport": self.transport})
        reply["path"] = path
        reply["held"] = bool(header.get("held"))   # shipped again as a file, the held output must be the one sent
        # IPC only when it was asked for: the child does not get to pick how the reference reads its output
        reply["transport"] = "ipc" if self.transport == "ipc" and reply.get("transport") == "ipc" else "file"
        return reply

    def compare(self, index: int, reply: dict[str, Any]) -> dict[str, Any]:
        """Have the trusted reference process compare a handed-over output with expected output `index`."""
        structure, metas = reply.get("structure"), reply.get("metas")
        if not structure_ok(structure, metas):
            raise Outcome("rejected", "the solution's process described its output in a malformed way",
                          ("protocol_violation",))
        try:
            with self.phase("outputs"), self.judges_time():
                result = self.reference.check(self.token, index, structure, reply["path"], metas,
                                              self.problem.metadata.get("TOLERANCE"), reply["transport"],
                                              self.contract, self.workload)
        finally:
            with contextlib.suppress(OSError):
                os.remove(reply["path"])
        if result.get("ipc_unavailable"):
            # the driver would not open the handle: this output, and the rest, come as files
            self.transport = "file"
            self.info["ipc_unavailable"] = str(result.get("reason", ""))[:300]
            return self.compare(index, self.request_output({"cmd": "ship", "held": reply.get("held", False)}))
        if result.get("protocol_error"):
            raise Outcome("rejected", f"the solution's process broke the judge protocol: {result['reason']}",
                          ("protocol_violation",))
        return result

    def record_error(self, detail: dict[str, Any]) -> None:
        """Keep the worst error over every checked output (the verdict's `max_error` and `numerics`)."""
        found = detail.get("numerics")
        if isinstance(found, dict):
            self.numerics = error_classes.worse(self.numerics, found)
            # the short form, as verdicts before the numerics object had it
            self.max_error = {k: self.numerics.get(k) for k in
                              ("rel_l2", "max_abs_err", "max_rel_err", "worst_element", "output")}


def error_outcome(reply: dict[str, Any], output: str) -> Outcome:
    kind = reply.get("kind", "runtime_error")
    message = str(reply.get("message", ""))
    excerpt = (message + ("\n--- output ---\n" + output if output.strip() else ""))[-4000:]
    last_line = message.strip().splitlines()[-1] if message.strip() else kind
    if kind == "build_error":
        return Outcome("build_error", f"the solution failed to build: {last_line}", excerpt=excerpt)
    if kind == "bad_output":
        if "subclass" in message:
            return Outcome("rejected", message, ("lazy_output",), excerpt)
        return Outcome("wrong_output", message, excerpt=excerpt)
    if kind == "reference_error":
        return Outcome("runtime_error", f"the problem's reference failed in the solution process: {last_line}",
                       ("reference_error",), excerpt)
    return Outcome("runtime_error", f"the solution raised: {last_line}", excerpt=excerpt)
