"""A reference process gives the device's memory back when its judgement leaves (skipped without a GPU): after its
outputs were expected and compared, parking leaves no more than a context on the device's own list, also when a
judgement's expected outputs were never forgotten; and a judgement of another problem still admitted keeps its
model there (issue 31: on the H100 sweep of 2026-12-07, reference processes serving no judgement kept up to 19 GiB)."""

from __future__ import annotations

import secrets

import pytest

pytestmark = pytest.mark.gpu

# about 1 GiB of input and as much output: large enough to tell from a context on the device's list
PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(16384, 16384)]


def get_init_inputs():
    return []
"""


@pytest.fixture
def pool_and_memory(tmp_path):
    from kerneljudge.judging.device.memory import DeviceMemory
    from kerneljudge.judging.device.reference_pool import ReferencePool
    from kerneljudge.judging.reference import ReferenceService

    memory = DeviceMemory.of_gpu("0")
    if memory is None or memory.processes(fresh=True) is None:
        pytest.skip("nvidia-smi lists no processes here")
    pool = ReferencePool(lambda: ReferenceService("cuda", "fp32", 1, str(tmp_path / "cache"), models_kept=2), limit=2)
    yield pool, memory
    pool.close()


def _expect(service, path: str) -> str:
    token = secrets.token_hex(8)
    service.expect(token, path, {}, 7, [secrets.randbits(62) for _ in range(3)])
    return token


def test_a_reference_process_holds_no_more_than_a_context_once_its_judgement_left(tmp_path, pool_and_memory):
    from kerneljudge.judging.device.memory import RESIDUAL_BYTES

    pool, memory = pool_and_memory
    path = tmp_path / "relu.py"
    path.write_text(PROBLEM)
    service = pool.acquire("relu")
    pool.entered(service, str(path))
    token = _expect(service, str(path))
    assert memory.held_by([service.pid], fresh=True) > 2 << 30      # model, kept outputs: on the device now
    service.forget(token)
    pool.left(service, str(path), memory)
    assert service.pid is not None, "parking was enough: the process is not closed"
    assert memory.held_by([service.pid], fresh=True) <= RESIDUAL_BYTES

    pool.entered(service, str(path))
    _expect(service, str(path))                                     # expected outputs nobody forgets
    pool.left(service, str(path), memory)
    assert memory.held_by([service.pid], fresh=True) <= RESIDUAL_BYTES
    pool.release(service)


def test_a_problem_still_judged_keeps_its_model_on_the_device(tmp_path, pool_and_memory):
    pool, memory = pool_and_memory
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(PROBLEM)
    second.write_text(PROBLEM.replace("16384, 16384", "8192, 8192"))
    service = pool.acquire("a")
    pool.entered(service, str(first))
    pool.entered(service, str(second))       # a process shared by two problems' judgements
    tokens = [_expect(service, str(first)), _expect(service, str(second))]
    service.forget(tokens[0])
    pool.left(service, str(first), memory)
    assert pool.serving(service) == (str(second),)
    reply = service.park(keep=(str(second),))
    assert reply is not None and reply["parked"] == 0                # b's model stays on the device
    service.forget(tokens[1])
    pool.left(service, str(second), memory)
    assert pool.serving(service) == ()
    pool.release(service)
