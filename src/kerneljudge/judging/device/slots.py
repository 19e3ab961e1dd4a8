"""The devices a judge uses: one Slot per device (its turns, reference processes, child environment, pinned
cores, builder and box), made by make_slots with the core layout of docs/judging.md.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from kerneljudge.core.paths import default_cache_dir
from kerneljudge.core.problem import Problem
from kerneljudge.core.types import JudgeOptions
from kerneljudge.sandbox.probing import SandboxReport
from kerneljudge.judging import boxing, cores, environment, warm_start
from kerneljudge.judging.device import turns
from kerneljudge.judging.device.memory import DeviceMemory, query_gpus, read_mib
from kerneljudge.judging.build.store import Builder
from kerneljudge.judging.process_group import process_tree
from kerneljudge.judging.reference import ReferenceService
from kerneljudge.judging.device.reference_pool import ReferencePool
from kerneljudge.judging.device.turns import DeviceTurns


@dataclass
class Slot:
    """One device the judge may use: whose turn it is there, its trusted reference processes (one per problem:
    judging/device/reference_pool.py), its child environment, and the cores its timing processes are pinned to (empty:
    no pinning)."""

    reference: ReferencePool
    env: dict[str, str] = field(default_factory=dict)
    turns: DeviceTurns = field(default_factory=DeviceTurns)
    # CUDA outputs reach the reference process by IPC handle; KERNELJUDGE_IPC=0 forces files in /dev/shm
    ipc: bool = field(default_factory=lambda: os.environ.get("KERNELJUDGE_IPC", "1") != "0")
    timing_cores: tuple[int, ...] = ()
    other_cores: tuple[int, ...] = ()
    builder: Builder | None = None    # the trusted builder (shared by every slot of a judge)
    box: SandboxReport | None = None  # what the box is made of on this machine
    warm_start: bool = True           # fork solution processes from a warm template (judging/warm_start.py)
    # one init seed per problem text: every solution of a problem is judged against the same reference model,
    # so its process builds that model (and measures its workload and floors) once, not once per solution
    init_seeds: dict[str, int] = field(default_factory=dict)

    def init_seed(self, problem: Problem) -> int:
        return self.init_seeds.setdefault(problem.sha256, secrets.randbits(62))


def make_slots(device: str, options: JudgeOptions, count: int, env: dict[str, str] | None = None,
               warm: bool = True, references: int = 1) -> list[Slot]:
    """One slot per device, with the core layout of docs/judging.md (`--reserved-cores`), the box this machine
    offers (raises boxing.SandboxRequired under --require-sandbox when it is incomplete) and one builder.

    `warm`: solution processes fork from a warm template, started here. Right for a judge that will judge
    several solutions; for a single one a template only adds its own start to the way (it imports Triton
    too, and checks a fork of it can use the GPU), so it is started cold. `references`: reference processes
    per slot (reference_pool.process_limit for a batch; one for a judge of one solution at a time)."""
    cache = options.cache_dir or default_cache_dir()
    report = boxing.session_report(options.require_sandbox)
    layout = cores.plan_cores(count, device, options.threads, options.reserved_cores)
    build_env = environment.child_env(device, options.threads, cache, env)
    # a box missing a layer could let a solution touch a build folder: then nothing built is reused
    builder = Builder(environment.build_root(cache), build_env, cuda_arch_list=_arch_list(device),
                      reuse=report.complete, cores=layout.builds if layout.active else ())
    slots = []
    for i in range(count):
        slot_env = {**(env or {}), **_device_env(device, i)}
        if warm and warm_start.enabled():  # the slot's solution processes fork from it; its imports start now
            warm_start.prepare(boxing.start_env(environment.child_env(device, options.threads, cache, slot_env)))
        def service(slot_env: dict[str, str] = slot_env,
                    timing: tuple[int, ...] = layout.timing[i]) -> ReferenceService:
            return ReferenceService(device, options.precision, options.threads, cache, env=slot_env, cores=timing,
                                    models_kept=turns.checks_at_once(options, device) + 1)
        reference = ReferencePool(service, references, layout.builds if layout.active else ())
        slots.append(Slot(reference, env=slot_env, turns=device_turns(device, slot_env, options, reference.reclaim),
                          timing_cores=layout.timing[i], other_cores=layout.builds, builder=builder, box=report,
                          warm_start=warm))
    return slots


def _arch_list(device: str) -> str:
    """The GPU's own architecture for CUDA builds ("9.0"), read without initialising CUDA here."""
    if device != "cuda":
        return ""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    return ";".join(sorted(set(query_gpus("compute_cap"))))


def device_turns(device: str, env: dict[str, str], options: JudgeOptions,
                 reclaim: Callable[[DeviceMemory], Any] | None = None) -> DeviceTurns:
    """The turns of one device, admitting against the card's own memory account where nvidia-smi reads it
    (`--device-memory` makes the account smaller than the card), by count alone on the CPU. While a judgement
    waits for memory, `reclaim` closes the reference processes that serve no admitted judgement."""
    if device != "cuda":
        return DeviceTurns()
    gpu = env.get("CUDA_VISIBLE_DEVICES", "0")
    memory = DeviceMemory.of_gpu(gpu, options.device_memory)
    if memory is None:   # no reading: the card's size (or the option) as a fixed budget, else count alone
        return DeviceTurns(options.device_memory or device_memory_total(gpu))
    return DeviceTurns(memory=memory, reclaim=reclaim)


def device_memory_total(gpu: str) -> int:
    """The GPU's memory in bytes (no CUDA context here); 0 where it cannot be read."""
    return read_mib("memory.total", gpu) or 0


def _device_env(device: str, index: int) -> dict[str, str]:
    if device != "cuda":
        return {}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [d for d in visible.split(",") if d.strip()] if visible else None
    return {"CUDA_VISIBLE_DEVICES": ids[index] if ids else str(index)}


GONE_WAIT_S = 30.0   # how long a judgement tried again alone waits for closed processes to leave the device's list


def clear_device(slot: Slot, keep: ReferenceService, close_others: bool = True) -> dict[str, int] | None:
    """Make the device's memory one judgement's, once no other judgement is admitted. `close_others` (a judgement
    tried again after a memory failure, a reference tried again alone): every other reference process is closed,
    busy or not, and the device's own list is read until none of them is on it; otherwise (a judgement admitted
    alone by choice) the others park their models. Then wait until the card's use stops falling. Returns the card's
    figures then (memory.describe, with "others_bytes": what the device lists for processes other than `keep`'s,
    where it lists them), or None where the card cannot be read."""
    memory = slot.turns.memory
    if not close_others:
        slot.reference.park_others(keep)
        return memory.describe(memory.settle()) if memory else None
    closed = slot.reference.close_all_but(keep)
    if memory is None:
        return None
    deadline = time.monotonic() + GONE_WAIT_S
    while closed and time.monotonic() < deadline and memory.held_by(closed, fresh=True):
        time.sleep(0.2)
    figures = memory.describe(memory.settle())
    listed = memory.processes(fresh=True)
    if listed is not None:
        ours = set(process_tree(keep.pid)) if keep.pid else set()
        figures["others_bytes"] = sum(used for pid, used in listed.items() if pid not in ours)
    return figures
