"""--executor ray on a local Ray cluster with the CPU judge (C++ and Triton-interpreter kernels): the same
verdicts as a local run, and a judging worker killed mid-run costs no verdict and records none twice."""

from __future__ import annotations

import json
import os
import signal

import pytest

from .conftest import FIXTURES
from .labels import read_labels
from .service_proc import descendants

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'kerneljudge[ray]')")

from kerneljudge.judging.batch import Job, run_batch  # noqa: E402
from kerneljudge.core.problem import read_problem  # noqa: E402
from kerneljudge.core.types import JudgeOptions  # noqa: E402

# refused from the source (cheap), then C++ (one shared build) and Triton kernels that build and run
STATIC = ["build_no_modelnew.py", "build_syntax_error.py", "hack_background_thread.py", "hack_caller_frame_answer.py",
          "hack_decoy_cpp.py", "hack_fake_verdict.py", "hack_fallback_torch.py", "hack_fallback_triton.py",
          "hack_forge_channel_replies.py", "hack_gc_answer.py", "hack_global_flags_deterministic.py",
          "hack_global_flags_tf32.py", "hack_lazy_tensor.py", "hack_patch_cuda_timing.py", "hack_patch_timer.py",
          "hack_reference_model_small_batch.py", "hack_side_stream_triton.py", "hack_torch_mm_epilogue.py",
          "noisy_spawns_sleeper.py", "torch_plain.py"]
RUNNING = ["correct_cpp_scale_relu.py", "crash_cpp_segfault.py", "correct_triton_row_sum.py", "wrong_returns_input.py"]
# 16 more Triton kernels (interpreted), correct, wrong and crashing, to make the 40; several of them
# are caught only by the timed phase, which this CPU batch skips, so for these the bar is the same verdict
# with and without Ray, not their label. None reads memory it did not write (hack_atomic_add_empty does:
# which check catches it first then varies between runs, with or without Ray)
MORE = ["correct_triton_small_matmul.py", "correct_triton_matmul_flags.py", "correct_triton_weight_cache.py",
        "correct_triton_split_rows.py", "hack_fast_path_after_validation.py", "hack_precompute_at_import.py",
        "hack_precompute_at_init.py", "wrong_values_scale_relu.py", "hack_constant_output.py",
        "wrong_returns_zeros.py", "hack_own_get_inputs.py", "wrong_nan_row_sum.py", "wrong_shape_row_sum.py",
        "crash_os_exit.py", "hack_lazy_tensor_hook.py", "hack_scratch_input.py"]


@pytest.fixture(scope="module")
def local_ray():
    for name, value in (("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0"), ("RAY_AUTH_MODE", "disabled"),
                        ("RAY_USAGE_STATS_ENABLED", "0")):
        os.environ.setdefault(name, value)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 << 20, log_to_driver=False)
    yield
    ray.shutdown()


def jobs_for(names: list[str]) -> list[Job]:
    out = []
    for name in names:
        label = read_labels(FIXTURES / "solutions" / name)
        out.append(Job(read_problem(FIXTURES / "problems" / label.problem), FIXTURES / "solutions" / name))
    return out


def options(cache_dir: str) -> JudgeOptions:
    return JudgeOptions(device="cpu", timing=False, trials=2, build_timeout_s=600, run_timeout_s=60,
                        cache_dir=cache_dir)


def comparable(v: dict) -> tuple:
    return (v["solution"], v["problem_id"], v["verdict"], v["accepted"], tuple(sorted(v["flags"])),
            v["problem_sha256"], v["solution_sha256"], v["backend"], v["device"], v["preset"])


@pytest.mark.slow
def test_ray_gives_the_same_verdicts_as_a_local_run(local_ray, tmp_path, cache_dir):
    jobs = jobs_for(STATIC + RUNNING + MORE)
    assert len(jobs) == 40
    local = run_batch(jobs, options(cache_dir), tmp_path / "local.jsonl", jobs_in_parallel=2, progress=lambda m: None)
    on_ray = run_batch(jobs, options(cache_dir), tmp_path / "ray.jsonl", jobs_in_parallel=2, progress=lambda m: None,
                       executor="ray")
    assert [comparable(v) for v in on_ray] == [comparable(v) for v in local]
    for job, verdict in zip(jobs, on_ray):
        if job.solution.name not in MORE:
            assert verdict["verdict"] == read_labels(job.solution).expect, (job.solution.name, verdict["reason"])
    assert len({v["verdict"] for v in on_ray}) >= 5   # the batch is varied: not all refused, not all correct
    rows = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert len(rows) == len(jobs)
    # resumable like a local run: nothing left to judge
    again = run_batch(jobs, options(cache_dir), tmp_path / "ray.jsonl", executor="ray", progress=lambda m: None)
    assert [comparable(v) for v in again] == [comparable(v) for v in on_ray]
    assert len((tmp_path / "ray.jsonl").read_text().splitlines()) == len(jobs)


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing(local_ray, tmp_path, cache_dir):
    from kerneljudge.judging.executors.ray import RayPool

    names = ["correct_triton_row_sum.py", "wrong_returns_input.py", "correct_cpp_scale_relu.py",
             "hack_zero_input.py"]
    jobs = jobs_for(names)
    pool = RayPool(options(cache_dir), workers=2)
    killed: list[int] = []

    def kill_after_first(message: str) -> None:
        if killed or not message.startswith("[1/"):
            return
        pid = pool.describe()[0]["pid"]
        below = descendants(pid)              # its judge's children, each in its own process group
        os.kill(pid, signal.SIGKILL)
        for child in below:
            try:
                os.killpg(child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed.append(pid)

    try:
        verdicts = run_batch(jobs, options(cache_dir), tmp_path / "run.jsonl", progress=kill_after_first,
                             executor=pool)
        resent = pool.resent
        after = pool.describe()[0]["pid"]
    finally:
        pool.close()
    assert killed and after != killed[0]            # the actor was killed, and Ray started a new one
    assert resent >= 1                               # its jobs in flight went out again
    for job, verdict in zip(jobs, verdicts):
        assert verdict["verdict"] == read_labels(job.solution).expect, (job.solution.name, verdict["reason"])
    rows = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert sorted(r["solution_sha256"] for r in rows) == sorted(v["solution_sha256"] for v in verdicts)
