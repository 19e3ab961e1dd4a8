"""Build directories keyed by a hash of what is built.

torch's load_inline picks its build directory from the extension's name alone, so two solutions that
reuse a name silently share (or clobber) one module, and a build killed mid-way leaves a lock file that
hangs the next load of that name. Keying the directory by a hash of every load_inline argument fixes
both; an flock (released by the kernel when a builder dies) makes a leftover lock file provably stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import inspect
import json
import os
import sys
from typing import Any, Iterator

_IGNORED_ARGS = {"build_directory", "verbose"}


def build_key(arguments: dict[str, Any]) -> str:
    import torch

    material = {k: v for k, v in sorted(arguments.items()) if k not in _IGNORED_ARGS}
    material["torch"] = torch.__version__
    material["python"] = sys.version
    material["arch"] = os.environ.get("TORCH_CUDA_ARCH_LIST", "")
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=repr).encode()).hexdigest()[:24]


@contextlib.contextmanager
def exclusive_build(directory: str) -> Iterator[None]:
    os.makedirs(directory, exist_ok=True)
    with open(directory + ".flock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        stale = os.path.join(directory, "lock")  # torch's FileBaton; nobody else can hold it now
        if os.path.exists(stale):
            os.remove(stale)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install(build_root: str) -> None:
    """Route torch.utils.cpp_extension.load_inline through hash-keyed build directories."""
    import torch.utils.cpp_extension as cpp_extension

    original = cpp_extension.load_inline
    signature = inspect.signature(original)

    @functools.wraps(original)
    def load_inline(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        if bound.arguments.get("build_directory"):
            return original(*bound.args, **bound.kwargs)
        directory = os.path.join(build_root, build_key(dict(bound.arguments)))
        bound.arguments["build_directory"] = directory
        with exclusive_build(directory):
            return original(*bound.args, **bound.kwargs)

    cpp_extension.load_inline = load_inline
