"""Child-side loading: problem modules, solution modules, models, inputs and outputs.

Runs only inside the reference and solution child processes, never in the orchestrator.
"""

from __future__ import annotations

import contextlib
import importlib.util
import linecache
import os
import sys
import types
import uuid
from typing import Any, Iterator

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class OutputError(Exception):
    """The model returned something the judge cannot accept as an output."""


def load_module(path: str, overrides: dict[str, Any] | None = None, source: str | None = None) -> types.ModuleType:
    """Execute a .py file as a fresh module, then apply constant overrides (a preset).

    With `source`, that text is executed as the file `path` without reading it: a boxed process gets its
    problem's text from the judge, so it never depends on reading the file again inside its box."""
    name = f"kj_mod_{uuid.uuid4().hex[:12]}"
    if source is not None:
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        # tracebacks and inspect.getsource find the lines here, as they would in the file
        linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
        exec(compile(source, path, "exec"), module.__dict__)
    else:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling inside user code expect this
        spec.loader.exec_module(module)
    for key, value in (overrides or {}).items():
        setattr(module, key, value)
    return module


def library_shims() -> None:
    """Settings kernel libraries need in a solution's process, made before the solution is imported.

    numpy.row_stack: numba-cuda 0.30 calls it, numpy 2.5 dropped it (an alias of numpy.vstack), so every Numba
    solution failed where both are installed; put back as the alias it was.
    tqdm's monitor thread: torch.fx's interpreter makes a (disabled) tqdm bar whenever it runs a graph, which
    Helion's compile does, and tqdm then starts a monitor thread that stays: every honest Helion solution was
    flagged thread_alive. With tqdm.monitor_interval 0 tqdm starts none (it only refreshed stalled bars)."""
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None and not hasattr(numpy, "row_stack") and hasattr(numpy, "vstack"):
        numpy.row_stack = numpy.vstack
    try:
        import tqdm
    except ImportError:
        return
    tqdm.tqdm.monitor_interval = 0


def make_init_inputs(problem: types.ModuleType, seed: int) -> list[Any]:
    torch.manual_seed(seed)
    return list(problem.get_init_inputs())


def build_model(cls: type, init_inputs: list[Any], seed: int, device: str, precision: str) -> torch.nn.Module:
    """Construct a model as upstream KernelBench does: seed, construct on the CPU, then move and cast.

    Construction on the CPU means every initialiser draws from the CPU generator in program order, whatever
    mix of `nn.Linear` and `nn.Parameter(torch.Tensor(...))` a model uses (under `torch.device("cuda")` the
    legacy `torch.Tensor(...)` constructor still allocates on the CPU while `nn.Linear` draws on the GPU, so a
    solution that rebuilds a reference's layers in the same order would get other weights). Init inputs that
    are tensors are moved to the device first, as upstream does."""
    init_inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in init_inputs]
    torch.manual_seed(seed)
    with torch.device("cpu"), construction_threads():
        model = cls(*init_inputs)
    model = model.to(device)
    if precision != "fp32":
        model = model.to(DTYPES[precision])
    return model.eval()


@contextlib.contextmanager
def construction_threads() -> Iterator[None]:
    """Construct with every core this process may use, then go back to the pinned thread count: a model's
    initial weights are drawn on the CPU (4.3 GB for upstream's nn.Linear(32768, 32768)), which on one thread
    takes most of a minute. The draws come out the same whatever the thread count."""
    before = torch.get_num_threads()
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    torch.set_num_threads(max(before, cores))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def copy_matching_weights(source: torch.nn.Module, target: torch.nn.Module) -> list[str]:
    """Give the solution the reference's initial parameters and buffers where names and shapes match."""
    target_state = target.state_dict(keep_vars=True)
    copied = []
    with torch.no_grad():
        for key, value in source.state_dict(keep_vars=True).items():
            dest = target_state.get(key)
            if isinstance(dest, torch.Tensor) and isinstance(value, torch.Tensor) and dest.shape == value.shape:
                dest.copy_(value.to(dest.dtype))
                copied.append(key)
    return copied


def make_inputs(problem: types.ModuleType, seed: int, device: str, precision: str) -> list[Any]:
    """Inputs from the problem's get_inputs() under a seed, created on the run device.

    Only floating tensors are cast to the run precision; integer and bool inputs keep their dtype.
    """
    torch.manual_seed(seed)
    with torch.device(device):
        raw = problem.get_inputs()
    dtype = DTYPES[precision]
    inputs = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if x.is_floating_point():
                x = x.to(dtype)
        inputs.append(x)
    return inputs


def flatten_output(out: Any, device: str) -> tuple[Any, list[torch.Tensor]]:
    """Split an output into a JSON structure and its tensors; refuse anything but plain tensors."""
    tensors: list[torch.Tensor] = []
    return _walk_output(out, device, tensors), tensors


def _walk_output(node: Any, device: str, tensors: list[torch.Tensor]) -> Any:
    # a module-level function on purpose: a nested one that calls itself is a reference cycle holding
    # `tensors`, and the output then stays alive (a gigabyte per call on a GPU) until Python's cycle
    # collector happens to run
    if isinstance(node, torch.Tensor):
        if type(node) is not torch.Tensor:
            raise OutputError(f"output is a {type(node).__name__}, a Tensor subclass; only plain tensors count")
        if node.is_meta or node.device.type != device:
            raise OutputError(f"output tensor is on {node.device}, expected {device}")
        tensors.append(node)
        return {"tensor": len(tensors) - 1}
    if isinstance(node, (tuple, list)):
        return {"seq": [_walk_output(n, device, tensors) for n in node]}
    if node is None or isinstance(node, (bool, int, float)):
        return {"value": node}
    raise OutputError(f"output contains a {type(node).__name__}; expected tensors (or tuples of them)")


def snapshot_inputs(inputs: list[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def inputs_unchanged(inputs: list[Any], pristine: list[Any]) -> bool:
    for x, p in zip(inputs, pristine):
        if isinstance(x, torch.Tensor):
            if x.shape != p.shape or x.dtype != p.dtype or not torch.equal(x, p):
                return False
    return True
