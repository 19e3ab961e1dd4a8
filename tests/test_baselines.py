"""Baselines: the per-GPU lock, the parallel runner (plan, resume, timeouts, deadline), the report, the
packaged data read by `kerneljudge score --baseline compile`, and installing measured ceilings.

The runner's tests use tests/fake_baseline_worker.py (no torch) so they take seconds; one test drives the
real worker on the CPU, eager only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kerneljudge.cli.main import main
from kerneljudge.core.device_lock import DeviceLock, lock_path
from kerneljudge.core.problem import read_problem
from kerneljudge.suite import baselines as B
from kerneljudge.judging import roofline
from kerneljudge.suite.baseline_runner import (BaselineRunner, RunnerConfig, TaskQueue, finished_keys, plan_tasks,
                                               read_rows)

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ("import torch\nimport torch.nn as nn\n\nN = 64\nSMALL = {'N': 16}\n\n\nclass Model(nn.Module):\n"
           "    def forward(self, x):\n        return torch.relu(x) * 2 - x\n\n\n"
           "def get_inputs():\n    return [torch.randn(N, N)]\n\n\ndef get_init_inputs():\n    return []\n")


def _problems(root: Path, ids: list[str]):
    out = []
    for pid in ids:
        path = root / f"{pid}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PROBLEM + f"# {pid}\n")   # distinct texts, distinct hashes
        out.append(read_problem(path))
    return out


def _fake_config(tmp_path: Path, **kw) -> RunnerConfig:
    base = dict(out=str(tmp_path / "raw.jsonl"), device="cpu", preset="default", workers=3, device_slots=["cpu"],
                lock_dir=str(tmp_path / "locks"), eager_timeout_s=1.5, compile_timeout_s=1.5,
                cache_dir=str(tmp_path / "cache"), worker_module="tests.fake_baseline_worker",
                extra_env={"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
                           "FAKE_WORKER_LOG": str(tmp_path / "timings.log")})
    base.update(kw)
    return RunnerConfig(**base)


# ------------------------------------------------------------------------------------------- lock

_PY = [sys.executable, "-c"]
_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
_HOLD = ("import sys, time\nfrom kerneljudge.core.device_lock import DeviceLock\n"
         "DeviceLock(sys.argv[1]).acquire()\nprint('held', flush=True)\ntime.sleep(60)\n")
_TRY = ("import sys\nfrom kerneljudge.core.device_lock import DeviceLock\n"
        "print(DeviceLock(sys.argv[1]).acquire(timeout_s=float(sys.argv[2])))\n")


def test_device_lock_excludes_other_processes_and_dies_with_its_holder(tmp_path):
    path = lock_path(tmp_path / "locks", "gpu-0")
    assert path.endswith("gpu-0.lock")
    holder = subprocess.Popen(_PY + [_HOLD, path], stdout=subprocess.PIPE, text=True, env=_ENV)
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = DeviceLock(path)
        assert mine.acquire(timeout_s=0.2) is False and not mine.held
        holder.kill()                                   # a killed holder frees the device
        holder.wait()
        assert mine.acquire(timeout_s=5.0) and mine.held and mine.wait_s < 5.0
        other = subprocess.run(_PY + [_TRY, path, "0.2"], capture_output=True, text=True, env=_ENV)
        assert other.stdout.strip() == "False"          # held here: another process cannot get in
        mine.release()
        other = subprocess.run(_PY + [_TRY, path, "5"], capture_output=True, text=True, env=_ENV)
        assert other.stdout.strip() == "True"
    finally:
        holder.kill()
        holder.wait()


# ----------------------------------------------------------------------------------- plan and resume


def test_plan_orders_eager_first_then_compile_by_level_and_resumes(tmp_path):
    probs = _problems(tmp_path, ["level1/1_a", "level1/2_b", "level2/1_c", "level3/1_d"])
    tasks = plan_tasks(probs, ("eager", "compile"), set(), "default", "cuda", "fp32")
    assert [(t.problem.id, t.mode) for t in tasks] == [
        ("level1/1_a", "eager"), ("level1/2_b", "eager"), ("level2/1_c", "eager"), ("level3/1_d", "eager"),
        ("level3/1_d", "compile"), ("level2/1_c", "compile"), ("level1/1_a", "compile"), ("level1/2_b", "compile")]
    a, b = probs[0], probs[1]
    rows = [
        {"problem_sha256": a.sha256, "mode": "eager", "preset": "default", "device": "cuda", "precision": "fp32",
         "status": "ok", "ref_ms": 1.0},
        {"problem_sha256": a.sha256, "mode": "compile", "preset": "default", "device": "cuda", "precision": "fp32",
         "status": "timeout"},
        {"problem_sha256": b.sha256, "mode": "eager", "preset": "default", "device": "cuda", "ref_ms": 2.0},  # v1 row
        {"problem_sha256": b.sha256, "mode": "compile", "preset": "small", "device": "cuda", "status": "ok"},
    ]
    done = finished_keys(rows)
    left = plan_tasks(probs, ("eager", "compile"), done, "default", "cuda", "fp32")
    assert ("level1/1_a", "compile") not in [(t.problem.id, t.mode) for t in left]    # a failure is final ...
    assert ("level1/2_b", "compile") in [(t.problem.id, t.mode) for t in left]        # another preset is not
    retry = plan_tasks(probs, ("eager", "compile"), finished_keys(rows, retry_failed=True), "default", "cuda", "fp32")
    assert ("level1/1_a", "compile") in [(t.problem.id, t.mode) for t in retry]       # ... unless retried
    assert len(plan_tasks(probs, ("eager", "compile"), done, "default", "cuda", "fp32", limit=1)) == 1   # b only
    assert {t.mode for t in plan_tasks(probs, ("eager",), set(), "default", "cuda", "fp32")} == {"eager"}
    small = plan_tasks(probs, ("eager",), set(), "small", "cpu", "fp32")
    assert small[0].preset == {"N": 16} and small[0].preset_name == "small"
    queue = TaskQueue(tasks)
    assert queue.take("compile").mode == "compile" and queue.take("eager").mode == "eager" and len(queue) == 6


# --------------------------------------------------------------------------------- runner (fake worker)


def test_runner_records_ok_errors_timeouts_crashes_without_overlapping_timings(tmp_path):
    probs = _problems(tmp_path, ["level1/1_ok_a", "level1/2_ok_b", "level2/1_ok_c", "level2/2_fail",
                                 "level3/1_hang", "level3/2_crash"])
    config = _fake_config(tmp_path, device="cuda", device_slots=["0", "1"], workers=4)
    started = time.monotonic()
    result = BaselineRunner(config, progress=None).run(probs)
    assert time.monotonic() - started < 15
    rows = read_rows(config.out)
    status = {(r["problem_id"], r["mode"]): r for r in rows}
    assert len(rows) == 12 and result.planned == 12 and result.complete
    for pid in ("level1/1_ok_a", "level1/2_ok_b", "level2/1_ok_c"):
        assert status[(pid, "eager")]["status"] == "ok" and status[(pid, "eager")]["ref_ms"] == 1.0
        assert status[(pid, "eager")]["peak_mem_bytes"] == 123
        assert status[(pid, "compile")]["ref_ms"] == 0.5 and status[(pid, "compile")]["compile_s"] == 0.1
    assert status[("level2/2_fail", "eager")]["status"] == "error"
    assert status[("level2/2_fail", "eager")]["reason"] == "RuntimeError: the problem broke"
    assert status[("level3/1_hang", "compile")]["status"] == "timeout"
    assert "no result within 2 s" in status[("level3/1_hang", "eager")]["reason"]
    assert status[("level3/2_crash", "eager")]["status"] == "error"
    assert "worker died (exited with status 7" in status[("level3/2_crash", "eager")]["reason"]
    assert (result.measured, result.failed, result.timed_out) == (6, 4, 2)
    row = status[("level1/1_ok_a", "eager")]
    assert row["machine"]["device_name"] == "Fake GPU" and row["device_slot"] in ("0", "1") and row["date"]
    # timings holding the same GPU's lock never overlap
    spans: dict[str, list[tuple[float, float]]] = {}
    for line in (tmp_path / "timings.log").read_text().splitlines():
        start, end, _, lock = line.split()
        spans.setdefault(lock, []).append((float(start), float(end)))
    assert {Path(k).name for k in spans} <= {"gpu-0.lock", "gpu-1.lock"}
    for intervals in spans.values():
        intervals.sort()
        assert all(a[1] <= b[0] for a, b in zip(intervals, intervals[1:]))
    # a re-run has nothing left to do
    again = BaselineRunner(config, progress=None).run(probs)
    assert again.planned == 0 and len(read_rows(config.out)) == 12


def test_runner_stops_at_the_deadline_and_a_rerun_finishes(tmp_path):
    probs = _problems(tmp_path, ["level1/1_slow_a", "level1/2_slow_b", "level1/3_slow_c"])
    config = _fake_config(tmp_path, workers=1, modes=("eager",), deadline_s=1.0)
    started = time.monotonic()
    result = BaselineRunner(config, progress=None).run(probs)
    assert time.monotonic() - started < 3.0
    assert not result.complete and result.measured == 1
    assert result.dropped_at_deadline + result.left == 2
    assert len(read_rows(config.out)) == 1               # nothing half-done is written
    config.deadline_s = None
    result = BaselineRunner(config, progress=None).run(probs)
    assert result.complete and result.measured == 2
    assert sorted(r["problem_id"] for r in read_rows(config.out)) == ["level1/1_slow_a", "level1/2_slow_b",
                                                                      "level1/3_slow_c"]


def test_a_worker_that_cannot_start_fails_no_problem(tmp_path):
    probs = _problems(tmp_path, ["level1/1_ok_a", "level1/2_ok_b"])
    config = _fake_config(tmp_path, workers=1, worker_module="tests.no_such_worker_module")
    result = BaselineRunner(config, progress=None).run(probs)
    assert result.left == 4 and not result.complete and result.failed == 0
    assert read_rows(config.out) == []                  # nothing recorded: a re-run measures everything


def test_real_worker_times_the_eager_reference_on_the_cpu(tmp_path):
    probs = _problems(tmp_path, ["level1/1_relu"])
    config = RunnerConfig(out=str(tmp_path / "raw.jsonl"), device="cpu", preset="small", modes=("eager",),
                          budget_s=0.05, workers=1, device_slots=["cpu"], lock_dir=str(tmp_path / "locks"),
                          cache_dir=str(tmp_path / "cache"), eager_timeout_s=60)
    result = BaselineRunner(config, progress=None).run(probs)
    [row] = read_rows(config.out)
    assert result.measured == 1, row
    assert row["status"] == "ok" and row["ref_ms"] > 0 and row["timing"]["samples"] >= 5
    assert row["preset"] == "small" and row["machine"]["torch"] and row["peak_mem_bytes"] is None
    assert row["lock_held_s"] > 0


# ------------------------------------------------------------------------------------------ report


def _row(pid, mode, status="ok", ms=None, **kw):
    level = int(pid.split("/")[0][5:])
    return {"problem_id": pid, "problem_sha256": "sha-" + pid, "level": level, "category": "c", "mode": mode,
            "preset": "default", "device": "cuda", "precision": "fp32", "status": status, "ref_ms": ms,
            "timing": {"median_ms": ms, "ci95_low_ms": ms, "ci95_high_ms": ms, "samples": 10} if ms else None,
            "date": "2026-12-01T10:00:00+00:00", "budget_s": 0.5,
            "machine": {"device_name": "NVIDIA H200", "driver": "580.1", "torch": "2.11", "cuda": "13.0",
                        "command": "scripts/baselines.py --out x"}, **kw}


def _rows():
    return [
        _row("level1/1_a", "eager", "error", reason="RuntimeError: flaky"),      # superseded by the next line
        _row("level1/1_a", "eager", ms=1.0, peak_mem_bytes=10 ** 9),
        _row("level1/1_a", "compile", ms=0.5, compile_s=12.0),
        _row("level1/2_b", "eager", ms=0.2, peak_mem_bytes=10 ** 6),
        _row("level1/2_b", "compile", "timeout", reason="no result within 150 s (compile); skipped"),
        _row("level2/1_c", "eager", ms=80.0, peak_mem_bytes=7 * 10 ** 9),
        _row("level2/1_c", "compile", ms=100.0, compile_s=30.0),
        _row("level3/1_d", "eager", "error", reason="OutOfMemoryError", oom=True),
    ]


def test_report_data_and_markdown():
    sol_rows = {"level1/1_a": {"sol_ms": 0.25, "bound_by": "compute"}, "level2/1_c": {"sol_ms": 8.0}}
    data = B.build_data(_rows(), sol_rows, suite_sha={"level1/1_a": "sha-level1/1_a", "level2/1_c": "changed"})
    p = data["problems"]
    assert data["machine"]["gpu"] == "NVIDIA H200" and data["preset"] == "default" and data["precision"] == "fp32"
    assert p["level1/1_a"]["eager_ms"] == 1.0 and p["level1/1_a"]["compile_ms"] == 0.5
    assert p["level1/1_a"]["sol_fraction"] == 0.25 and p["level1/1_a"]["peak_mem_bytes"] == 10 ** 9
    assert "reason" not in p["level1/1_a"]                          # the later success wins over the failure
    assert p["level1/2_b"]["compile_ms"] is None and p["level1/2_b"]["compile_status"] == "timeout"
    assert p["level3/1_d"]["compile_status"] == "not_measured" and "OutOfMemoryError" in p["level3/1_d"]["reason"]
    assert p["level2/1_c"]["stale"] is True
    assert data["counts"]["eager"] == {"error": 1, "ok": 3} and data["counts"]["compile"]["timeout"] == 1
    assert B.baseline_table(data, "compile") == {"level1/1_a": 0.5, "level2/1_c": 100.0}
    assert B.baseline_table(data, "compile", eager_fallback=True) == {"level1/1_a": 0.5, "level1/2_b": 0.2,
                                                                      "level2/1_c": 100.0}   # compile timed out
    assert B.baseline_table(data, "eager") == {"level1/1_a": 1.0, "level1/2_b": 0.2, "level2/1_c": 80.0}
    viol = B.size_violations(p)
    assert viol == {"under": [("level1/2_b", 0.2)], "over": [("level2/1_c", 80.0)],
                    "memory": [("level2/1_c", 7 * 10 ** 9)]}
    assert B.geomean([0.5, 1.25]) == pytest.approx(0.625 ** 0.5)
    md = B.summary_markdown(data)
    assert "NVIDIA H200" in md and "driver 580.1" in md and "`python3 scripts/baselines.py --out x`" in md
    assert "faster than 0.5 ms (1): level1/2_b (0.2 ms)" in md and "slower than 50 ms (1): level2/1_c (80 ms)" in md
    assert "peak over 6 GB (1): level2/1_c (7 GB)" in md
    assert f"over 2 problems: {0.625 ** 0.5:.3g}" in md
    assert "| all | 4 | 3 | 2 | 1 | 1 | 1 |" in md
    with pytest.raises(B.BaselineError):
        B.select_rows(_rows() + [{**_rows()[1], "preset": "small"}], None, None, None)
    assert len(B.select_rows(_rows() + [{**_rows()[1], "preset": "small"}], "cuda", "default", "fp32")) == 8


def test_score_against_the_packaged_compile_baseline(tmp_path, monkeypatch, capsys):
    run = tmp_path / "verdicts.jsonl"
    run.write_text("\n".join(json.dumps(v) for v in [
        {"problem_id": "level1/1_a", "verdict": "correct", "accepted": True, "speedup": 4.0, "sol_ms": 0.25,
         "device_name": "NVIDIA H200"},
        {"problem_id": "level2/1_c", "verdict": "correct", "accepted": True, "speedup": 1.6, "sol_ms": 80.0,
         "device_name": "NVIDIA H200"},
    ]) + "\n")
    monkeypatch.setattr(B, "PACKAGED", tmp_path / "none.json")
    assert main(["score", str(run), "--baseline", "compile", "--n-boot", "0"]) == 3
    assert "no baselines file" in capsys.readouterr().err
    packaged = tmp_path / "baselines_h200.json"
    packaged.write_text(json.dumps(B.build_data(_rows())))
    monkeypatch.setattr(B, "PACKAGED", packaged)
    assert main(["score", str(run), "--json", "--baseline", "compile", "--baseline", "eager", "--n-boot", "0"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["baselines"]["eager"]["fast_p"]["fast_1.5"]["value"] == 1.0     # the run's own eager speedups
    assert summary["baselines"]["compile"]["fast_p"]["fast_1.5"]["value"] == 0.5   # 0.5/0.25 = 2; 100/80 = 1.25
    assert summary["baselines"]["eager_h200"]["fast_p"]["fast_1"]["value"] == 0.5  # 1/0.25 = 4; 80/80 = 1
    assert "packaged compile reference times of 3 problems, NVIDIA H200" in captured.err
    assert "1 of them eager times where torch.compile failed or timed out" in captured.err
    run.write_text(json.dumps({"problem_id": "level1/1_a", "verdict": "correct", "accepted": True, "sol_ms": 0.1,
                               "device_name": "NVIDIA A100"}) + "\n")
    assert main(["score", str(run), "--baseline", "compile", "--n-boot", "0"]) == 0
    assert "compare different machines" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------- ceilings


def test_ceilings_install(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("ceilings_script", ROOT / "scripts" / "ceilings.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    target = tmp_path / "data" / "h200_ceilings.json"
    monkeypatch.setattr(roofline, "H200_CEILINGS", target)
    good = {"gpu": "NVIDIA H200", "date": "2026-12-01T10:00:00+00:00", "memory_bandwidth": 4.4e12,
            "fp32_flops": 5e13, "tf32_flops": 3.5e14, "bf16_flops": 7e14, "fp16_flops": 7.2e14}
    src = tmp_path / "measured.json"
    src.write_text(json.dumps({**good, "gpu": "NVIDIA A100-SXM4-80GB"}))
    assert script.install(str(src), force=False) == 3 and not target.exists()
    src.write_text(json.dumps({**good, "quick": True}))
    assert script.install(str(src), force=False) == 3 and not target.exists()
    src.write_text(json.dumps({**good, "memory_bandwidth": 2.6e8}))        # a botched measurement
    assert script.install(str(src), force=False) == 3 and not target.exists()
    src.write_text(json.dumps(good))
    assert script.install(str(src), force=False) == 0
    spec = roofline.spec_from("NVIDIA H200", roofline.H200_DATASHEET, roofline._packaged_ceilings(target, "H200"))
    assert spec.memory_bandwidth == 4.4e12 and spec.fp16_flops == 7.2e14
    assert all(s.startswith("measured 2026-12-01 on NVIDIA H200") for s in spec.source.values())
