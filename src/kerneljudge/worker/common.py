"""What the reference and solution child processes share: start-up, pinned flags, one call, errors."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import sys
import traceback
from typing import Any, Callable, Iterator

import torch

from kerneljudge.core import channel
from kerneljudge.worker import ipc, loading

ERROR_EXCERPT_CHARS = 4000


def pin_global_flags(device: str, threads: int) -> dict[str, Any]:
    """Same numerics in every process: full fp32 matmul and conv (no TF32), fixed thread count."""
    torch.set_num_threads(max(1, threads))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.set_grad_enabled(False)
    return global_flags()


@contextlib.contextmanager
def tf32_allowed(allowed: bool) -> Iterator[None]:
    """Run a block with TF32 allowed for matmul and cuDNN (PyTorch's own speed setting), then pin full fp32
    again. Only the trusted reference process uses it: to time the reference a tf32-class solution is compared
    with, so reduced precision buys no free speedup."""
    if not allowed:
        yield
        return
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")


def global_flags() -> dict[str, Any]:
    return {
        "matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "matmul.fp16_reduced_precision": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "matmul.bf16_reduced_precision": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    }


def environment(device: str) -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__}
    try:  # from the package metadata: importing Triton for its version would cost a second of every start
        import importlib.metadata

        info["triton"] = importlib.metadata.version("triton")
    except Exception:
        if "triton" in sys.modules:  # a Triton without metadata that the solution imported already
            info["triton"] = str(getattr(sys.modules["triton"], "__version__", ""))
    if device == "cuda":
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        info.update(device_name=props.name, cuda=str(torch.version.cuda), sm_count=props.multi_processor_count,
                    l2_bytes=props.L2_cache_size, memory_bytes=props.total_memory,
                    capability=f"{props.major}.{props.minor}")
        try:
            with open("/proc/driver/nvidia/version") as f:
                found = re.search(r"\s(\d+\.\d+(?:\.\d+)?)\s", f.readline())
            if found:
                info["driver"] = found.group(1)
        except OSError:
            pass
    else:
        info["device_name"] = platform.processor() or platform.machine()
    return info


def poison_device_memory(device: str) -> None:
    """Fill memory the caching allocator will hand out next with NaN, so unwritten outputs show."""
    if device != "cuda":
        return
    free, _ = torch.cuda.mem_get_info()
    nbytes = min(free // 4, 2 << 30)
    if nbytes > 0:
        block = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
        block.fill_(float("nan"))
        del block


def error_message(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-ERROR_EXCERPT_CHARS:]


CHANNEL: tuple[int, int] = (-1, -1)  # (from the judge, to the judge), set by serve()


def ask_judge(message: dict[str, Any]) -> dict[str, Any]:
    """In the middle of a command, ask the judge something and wait for its answer (a build request)."""
    fd_in, fd_out = CHANNEL
    channel.send(fd_out, message)
    answer, _ = channel.recv(fd_in)
    return answer


def serve(handlers: dict[str, Callable[[dict[str, Any], int], None]]) -> None:
    """Read commands from the private channel until 'exit' or EOF; each handler replies itself."""
    global CHANNEL
    fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
    CHANNEL = (fd_in, fd_out)
    os.set_inheritable(fd_in, False)
    os.set_inheritable(fd_out, False)
    while True:
        try:
            msg, _ = channel.recv(fd_in)
        except channel.ChannelClosed:
            return
        cmd = msg.get("cmd")
        if cmd == "exit":
            # nothing is left to save: skip the interpreter's teardown (about a second with torch loaded)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        handler = handlers.get(cmd)
        if handler is None:
            channel.send(fd_out, {"status": "error", "kind": "protocol", "message": f"unknown command {cmd!r}"})
            continue
        handler(msg, fd_out)


def call_model(model: torch.nn.Module, inputs: list[Any], device: str) -> Any:
    out = model(*inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    return out


def send_output(fd: int, out: Any, device: str, msg: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
    """Hand an output to the reference process and reply with its structure and how it travelled.

    On CUDA, when the judge asks for it, by IPC handle (no copy leaves the device); otherwise, or if the
    output's memory cannot be shared, its bytes are written to the file msg["out_path"] in shared memory.
    """
    structure, tensors = loading.flatten_output(out, device)
    if device == "cuda" and msg.get("transport") == "ipc":
        try:
            metas = ipc.share(tensors)
        except Exception:  # e.g. memory from another allocator: the file path always works
            pass
        else:
            channel.send(fd, {"status": "ok", "structure": structure, "metas": metas, "transport": "ipc",
                              **(extra or {})})
            return
    metas = channel.write_tensors(msg["out_path"], tensors)
    channel.send(fd, {"status": "ok", "structure": structure, "metas": metas, "transport": "file",
                      **(extra or {})})
