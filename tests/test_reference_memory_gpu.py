"""A reference process gives the device's memory back when its judgement leaves (skipped without a GPU): after its
outputs were expected and compared, parking leaves no more than a context on the device's own list, also when a
judgement's expected outputs were never forgotten; and a judgement of another problem still admitted keeps its
model there (issue 31: on the H100 sweep of 2026-12-07, reference processes serving no judgement kept up to 19 GiB)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

# the suite's own elementwise problems: 1.25 GiB in and out each, large enough to tell from a context on the
# device's list
LEVEL1 = Path(__file__).resolve().parent.parent / "src" / "kerneljudge" / "data" / "problems" / "level1"
RELU, LEAKY_RELU = str(LEVEL1 / "21_relu.py"), str(LEVEL1 / "22_leaky_relu.py")


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


def test_a_reference_process_holds_no_more_than_a_context_once_its_judgement_left(pool_and_memory):
    from kerneljudge.judging.device.memory import RESIDUAL_BYTES

    pool, memory = pool_and_memory
    service = pool.acquire("relu")
    pool.entered(service, RELU)
    token = _expect(service, RELU)
    assert memory.held_by([service.pid], fresh=True) > 2 << 30      # model, kept outputs: on the device now
    service.forget(token)
    pool.left(service, RELU, memory)
    assert service.pid is not None, "parking was enough: the process is not closed"
    assert memory.held_by([service.pid], fresh=True) <= RESIDUAL_BYTES

    pool.entered(service, RELU)
    _expect(service, RELU)                                          # expected outputs nobody forgets
    pool.left(service, RELU, memory)
    assert memory.held_by([service.pid], fresh=True) <= RESIDUAL_BYTES
    pool.release(service)


def test_a_reference_process_that_timed_its_model_gives_the_memory_back_too(pool_and_memory):
    """The timer's L2-flush buffer, made after the judgement's large tensors were freed, is cut from one of their
    cached blocks and kept that block on the device (the H100 sweep of 2026-12-07: 89 processes closed for keeping
    1.2-8.8 GiB with 0.1 GiB allocated, a 100 MiB uint8 tensor the largest)."""
    from kerneljudge.judging.device.memory import RESIDUAL_BYTES

    pool, memory = pool_and_memory
    service = pool.acquire("relu")
    pool.entered(service, RELU)
    service.forget(_expect(service, RELU))    # its kept outputs freed: cached blocks of 1.25 GiB
    service.time_round(RELU, {}, 7, calls=3)  # the timer, and its flush buffer, made now
    pool.left(service, RELU, memory)
    assert service.pid is not None, "parking was enough: the process is not closed"
    assert memory.held_by([service.pid], fresh=True) <= RESIDUAL_BYTES
    pool.release(service)


def test_a_problem_still_judged_keeps_its_model_on_the_device(pool_and_memory):
    pool, memory = pool_and_memory
    service = pool.acquire("relu")
    pool.entered(service, RELU)
    pool.entered(service, LEAKY_RELU)        # a process shared by two problems' judgements
    tokens = [_expect(service, RELU), _expect(service, LEAKY_RELU)]
    service.forget(tokens[0])
    pool.left(service, RELU, memory)
    assert pool.serving(service) == (LEAKY_RELU,)
    reply = service.park(keep=(LEAKY_RELU,))
    assert reply is not None and reply["parked"] == 0                # leaky_relu's model stays on the device
    service.forget(tokens[1])
    pool.left(service, LEAKY_RELU, memory)
    assert pool.serving(service) == ()
    pool.release(service)
