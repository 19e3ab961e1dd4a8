"""Counting a problem's work on a device gives the meta device's counts, without importing torch._dynamo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import json, sys, types
sys.path.insert(0, sys.argv[1])
from kerneljudge.worker import work_count
problem = types.ModuleType("problem")
exec('''
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
    def forward(self, x):
        return torch.nn.functional.gelu(self.lin(x)).softmax(-1) @ x.T
def get_inputs():
    return [torch.randn(48, 32)]
def get_init_inputs():
    return [32]
''', problem.__dict__)
found = {}
work_count._count_in(problem, sys.argv[2], found)
print(json.dumps({"found": found, "dynamo": "torch._dynamo" in sys.modules}))
"""


def _count(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "src"), mode], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_device_count_matches_the_meta_count_and_needs_no_dynamo():
    on_device, on_meta = _count("cpu"), _count("meta")
    assert on_device["found"] == on_meta["found"]
    assert on_device["found"]["flops"] == 2 * 48 * 32 * 32 + 2 * 48 * 32 * 48  # the linear and the product
    assert on_device["found"]["outputs"]["float_elems"] == 48 * 48
    assert not on_device["dynamo"]  # gelu's meta kernel is what imports it (1.5-3 s), not the counter
