"""Shared test setup: one build/reference-time cache for the whole run, so C++ builds happen once."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CACHE = os.environ.get("KERNELJUDGE_TEST_CACHE", str(ROOT / ".kj-cache" / "tests"))
# each test's own build folder would make its own 800 MB precompiled header in the background:
# tests/test_pch.py turns it on where it is the subject
os.environ.setdefault("KERNELJUDGE_PCH", "0")


def load_file(folder: str, name: str) -> ModuleType:
    """A script of the repository's `folder` (scripts/, lab/: not installed) imported as module `name`, registered
    in sys.modules so the modules it imports from beside it are found the same way."""
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def wait_for(predicate, timeout: float = 20.0, every: float = 0.1) -> bool:
    """Poll `predicate` until it holds (True) or `timeout` seconds pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(every)
    return False


def has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.fixture(scope="session")
def cache_dir() -> str:
    Path(CACHE).mkdir(parents=True, exist_ok=True)
    return CACHE


def pytest_collection_modifyitems(config, items):
    from .labels import Labelled, skip_reason

    # a labelled fixture whose library (# needs: cuda,cupy) is not importable here is skipped, not failed
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        for value in params.values():
            reason = skip_reason(value) if isinstance(value, Labelled) else None
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
                break
    if has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
