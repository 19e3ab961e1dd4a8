"""JudgePool: the lanes it makes, one solution per lane at a time, per-job options, closing."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError

import pytest

from .conftest import FIXTURES

from kerneljudge.judging.executors import local as pool_module
from kerneljudge.judging.executors.local import JudgePool, PoolClosed, visible_gpus
from kerneljudge.core.problem import read_problem
from kerneljudge.core.types import JudgeOptions

SCALE_RELU = FIXTURES / "problems" / "scale_relu.py"
ROW_SUM = FIXTURES / "problems" / "row_sum.py"


def test_one_lane_per_visible_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,6")
    assert visible_gpus() == ["3", "5", "6"]
    monkeypatch.setattr(pool_module.environment, "resolve_device", lambda d: "cuda")
    pool = JudgePool(JudgeOptions(device="cuda"), workers=4)
    try:
        assert [lane.name for lane in pool.lanes] == ["cuda:3", "cuda:5", "cuda:6"]
        assert [lane.env["CUDA_VISIBLE_DEVICES"] for lane in pool.lanes] == ["3", "5", "6"]
        assert all(lane.env["MAX_JOBS"] == "2" or int(lane.env["MAX_JOBS"]) >= 2 for lane in pool.lanes)
        # jobs spread over the least busy lanes
        picked = [pool.lanes[pool._pick_lane()].name for _ in range(6)]
        assert sorted(picked) == ["cuda:3", "cuda:3", "cuda:5", "cuda:5", "cuda:6", "cuda:6"]
    finally:
        pool.close()
    pool = JudgePool(JudgeOptions(device="cuda"), gpus=["1"])
    assert [lane.name for lane in pool.lanes] == ["cuda:1"]
    pool.close()


def test_a_lane_shares_its_turns_across_reference_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    monkeypatch.setattr(pool_module.environment, "resolve_device", lambda d: "cuda")
    pool = JudgePool(JudgeOptions(device="cuda", cache_dir=str(tmp_path)), gpus=["2", "3"], workers=2)
    try:
        a = pool.slots.get(JudgeOptions(device="cuda", precision="fp32", cache_dir=str(tmp_path)))
        b = pool.slots.get(JudgeOptions(device="cuda", precision="fp16", cache_dir=str(tmp_path)))
        c = pool.slots.get(JudgeOptions(device="cuda", precision="fp32", cache_dir=str(tmp_path), trials=9))
        assert a is c and a[0] is not b[0] and a[0].reference is not b[0].reference
        # one device, one set of turns on it, whatever the precision
        assert [s.turns for s in a] == [s.turns for s in b] == [lane.turns for lane in pool.lanes]
        # each slot's children and reference see only its lane's GPU (not the index's)
        assert [s.env["CUDA_VISIBLE_DEVICES"] for s in a] == ["2", "3"]
        assert [s.reference.env["CUDA_VISIBLE_DEVICES"] for s in b] == ["2", "3"]
    finally:
        pool.close()


def test_pool_judges_and_refuses_another_device(cache_dir):
    options = JudgeOptions(device="cpu", timing=False, trials=2, cache_dir=cache_dir)
    with JudgePool(options, workers=2) as pool:
        started = threading.Event()
        future = pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "torch_plain.py", on_start=started.set)
        verdict = future.result(60)
        assert started.is_set() and verdict.verdict == "rejected" and verdict.device == "cpu"
        lenient = pool.submit(read_problem(SCALE_RELU), FIXTURES / "solutions" / "torch_plain.py",
                              JudgeOptions(device="cpu", policy="lenient", timing=False, trials=2,
                                           cache_dir=cache_dir)).result(120)
        assert lenient.verdict == "correct" and lenient.policy == "lenient"
        with pytest.raises(ValueError, match="judges on cpu"):
            pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "torch_plain.py", JudgeOptions(device="cuda"))
        missing = pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "no_such_file.py")
        with pytest.raises(OSError):
            missing.result(30)
        assert pool.status()["lanes"][0]["judged"] == 2
        assert pool.device_name() == lenient.device_name != ""


def test_close_cancels_queued_jobs_and_refuses_new_ones(cache_dir):
    options = JudgeOptions(device="cpu", timing=False, trials=2, build_timeout_s=60, cache_dir=cache_dir)
    pool = JudgePool(options, workers=1)
    slow = pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "timeout_import_sleep.py")
    queued = pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "torch_plain.py")
    time.sleep(1.0)
    t0 = time.monotonic()
    pool.close(wait_s=1.0)
    assert time.monotonic() - t0 < 15
    with pytest.raises(CancelledError):
        queued.result(1)
    assert isinstance(slow.exception(timeout=30), PoolClosed)    # its sleeping child was killed by close()
    from .service_proc import descendants
    import os
    assert not [p for p in descendants(os.getpid()) if "solution_worker" in _cmdline(p)]
    with pytest.raises(PoolClosed):
        pool.submit(read_problem(ROW_SUM), FIXTURES / "solutions" / "torch_plain.py")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""



def test_a_batch_submits_solutions_that_compile_nothing_first_with_workers_of_their_own(tmp_path, monkeypatch):
    from kerneljudge.judging.batch import Job, batch_workers, builds_last

    sources = {
        "cuda_a.py": "from torch.utils.cpp_extension import load_inline\nm = load_inline('a', '', cuda_sources='x')\n",
        "triton_a.py": "import triton\n@triton.jit\ndef k(x):\n    pass\n",
        "cpp_a.py": "from torch.utils.cpp_extension import load_inline\nm = load_inline('b', cpp_sources='int f();')\n",
        "torch_a.py": "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n",
        "triton_b.py": "import triton\n@triton.jit\ndef k(x):\n    pass\n",
        "unreadable.py": None,
    }
    for name, text in sources.items():
        if text is not None:
            (tmp_path / name).write_text(text)
    problem = read_problem(SCALE_RELU)
    todo = [(Job(problem, tmp_path / name), name) for name in sources]
    ordered, nothing_to_build = builds_last(todo)
    assert [key for _, key in ordered] == ["triton_a.py", "torch_a.py", "triton_b.py", "cuda_a.py", "cpp_a.py",
                                           "unreadable.py"]
    assert nothing_to_build == 3
    # on a GPU the three that compile nothing get workers of their own, beyond one per core, memory permitting
    from kerneljudge.judging import batch

    cores = pool_module.default_workers("cuda")
    monkeypatch.setattr(batch, "available_memory", lambda: 1 << 50)
    assert batch_workers(nothing_to_build, "cuda") == cores + min(cores, 3)
    assert batch_workers(nothing_to_build, "cpu") == pool_module.default_workers("cpu")
    monkeypatch.setattr(batch, "available_memory", lambda: (cores + 1) * batch.WORKER_MEMORY_BYTES)
    assert batch_workers(nothing_to_build, "cuda") == cores + 1
    monkeypatch.setattr(batch, "available_memory", lambda: 0)
    assert batch_workers(nothing_to_build, "cuda") == cores
