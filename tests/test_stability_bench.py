"""The stability benchmark's arithmetic, bars and report (scripts/stability_report.py) on synthetic verdicts,
and the runner's pieces that need no judge (scripts/stability_bench.py): the solution set, the run order,
the options and the CPU load. The whole benchmark runs on the CPU as
`scripts/stability_bench.py --device cpu --budget 0.2 --runs-quiet 1 --runs-busy 1 --out-dir DIR`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kerneljudge.core.paths import examples_root, problems_root

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, folder: str = "scripts"):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BENCH = load("stability_bench")
REPORT = sys.modules.get("stability_report") or load("stability_report")

RUN_ORDER = [("quiet-1", "quiet"), ("busy-1", "busy"), ("quiet-2", "quiet"), ("busy-2", "busy"),
             ("quiet-3", "quiet"), ("busy-3", "busy")]


def verdict(solution: str, speedup: float, sol_ms: float, device_speedup: float, device_ms: float,
            profile_us: float, kernels: int = 1, status: str = "correct") -> dict:
    return {"solution": f"/staged/solutions/{solution}", "problem_id": f"level1/{solution.split('__')[0]}",
            "verdict": status, "accepted": status == "correct", "flags": [],
            "speedup": speedup if status == "correct" else None, "speedup_end_to_end": speedup,
            "speedup_device": device_speedup, "sol_ms": sol_ms, "ref_ms": sol_ms * speedup,
            "sol_device_ms": device_ms, "ref_device_ms": device_ms * device_speedup, "device_clock": "cuda_graph",
            "device_name": "NVIDIA H200", "versions": {"torch": "2.11.0", "cuda": "13.0", "driver": "580.1"},
            "profile": [{"name": "_kernel", "class": "custom", "device_us": profile_us, "calls": kernels},
                        {"name": "(total)", "class": "total", "device_us": profile_us, "calls": kernels,
                         "clock": "cuda"}]}


def synthetic_runs(walls: dict[str, float] | None = None) -> list[dict]:
    """Three solutions over six runs with known spreads:
    - long__triton.py (2 ms): speedups 1.000-1.005 (0.5%), device 1.000-1.004, profiler 1% below the device clock
    - short__triton.py (0.3 ms): speedups 1.00-1.05 (5%, busy runs 5% higher), device clock stable, profiler 5% off
    - flaky__triton.py: wrong in busy-2, so it is left out of every bar."""
    long_e2e = [1.000, 1.002, 1.005, 1.003, 1.001, 1.004]
    long_dev = [1.000, 1.001, 1.004, 1.002, 1.003, 1.001]
    short_e2e = [1.00, 1.05, 1.00, 1.05, 1.01, 1.04]
    runs = []
    for i, (name, condition) in enumerate(RUN_ORDER):
        verdicts = [
            verdict("long__triton.py", long_e2e[i], 2.0, long_dev[i], 1.9, 1.9 / 1.01 * 1e3),
            verdict("short__triton.py", short_e2e[i], 0.3, 2.0, 0.25, 0.25 / 1.05 * 1e3),
            verdict("flaky__triton.py", 1.5, 0.5, 1.5, 0.5, 500.0, kernels=3,
                    status="wrong_output" if name == "busy-2" else "correct"),
        ]
        runs.append({"name": name, "condition": condition, "wall_s": (walls or {}).get(name, 60.0),
                     "verdicts": verdicts})
    return runs


def test_spread_and_change():
    assert REPORT.spread([1.0, 1.01, 1.005]) == pytest.approx(0.01)
    assert REPORT.spread([2.0]) is None
    assert REPORT.spread([0.0, 1.0]) is None
    assert REPORT.spread([None, 1.0, 1.2]) == pytest.approx(0.2)
    assert REPORT.relative_change(1.01, 1.0) == pytest.approx(0.01)
    assert REPORT.relative_change(1.0, None) is None


def test_rows_measure_each_solution():
    rows = {r["solution"]: r for r in REPORT.solution_rows(synthetic_runs())}
    long, short, flaky = rows["long__triton.py"], rows["short__triton.py"], rows["flaky__triton.py"]
    assert long["spread_e2e"] == pytest.approx(0.005)
    assert long["spread_device"] == pytest.approx(0.004)
    assert long["spread_sol_device_ms"] == pytest.approx(0.0)
    assert long["device_over_profiler"] == pytest.approx(1.01)
    assert long["single_kernel"] and long["complete"]
    # busy runs 1.05, 1.05, 1.04 (median 1.05) against quiet 1.00, 1.00, 1.01 (median 1.00)
    assert short["busy_vs_quiet"] == pytest.approx(0.05)
    assert short["spread_e2e"] == pytest.approx(0.05)
    assert short["runs"]["busy-1"]["speedup"] == 1.05
    assert not flaky["complete"] and flaky["not_accepted_runs"] == {"busy-2": "wrong_output"}
    assert not flaky["single_kernel"]


def test_summary_against_the_bars():
    walls = {"quiet-1": 60.0, "quiet-2": 63.0, "quiet-3": 70.0, "busy-1": 90.0}
    runs = synthetic_runs(walls)
    summary = REPORT.summarize(REPORT.solution_rows(runs), runs)
    bars = summary["bars"]
    assert bars["spread_e2e_long"]["status"] == "PASS" and bars["spread_e2e_long"]["checked"] == 1
    assert bars["spread_e2e_short"]["status"] == "FAIL"
    assert bars["spread_e2e_short"]["failures"] == ["short__triton.py"]
    assert bars["spread_device"]["status"] == "PASS" and bars["spread_device"]["checked"] == 2
    assert bars["device_vs_profiler"]["failures"] == ["short__triton.py"]
    assert bars["device_vs_profiler"]["worst"] == pytest.approx(0.05)
    assert bars["busy_vs_quiet"]["failures"] == ["short__triton.py"]
    # quiet-3 made 60/70 = 86% of quiet-1's solutions per hour; busy-1 is slower but not a bar
    assert bars["throughput"]["failures"] == ["quiet-3"]
    assert bars["throughput"]["worst"] == pytest.approx(60 / 70)
    rates = {t["run"]: t for t in summary["throughput"]}
    assert rates["quiet-1"]["per_hour"] == pytest.approx(3 / 60 * 3600)
    assert rates["busy-1"]["vs_first_quiet"] == pytest.approx(60 / 90)
    assert rates["busy-2"]["correct"] == 2
    assert list(summary["incomplete"]) == ["flaky__triton.py"]


def test_no_busy_runs_means_no_busy_bar():
    runs = [r for r in synthetic_runs() if r["condition"] == "quiet"]
    summary = REPORT.summarize(REPORT.solution_rows(runs), runs)
    assert summary["bars"]["busy_vs_quiet"]["status"] == "n/a"
    assert summary["bars"]["spread_e2e_long"]["status"] == "PASS"


def test_markdown_table():
    runs = synthetic_runs()
    rows = REPORT.solution_rows(runs, {"long__triton.py": {"kind": "matmul", "baseline_ms": 2.79}})
    text = REPORT.render_markdown({"title": "Stability benchmark: NVIDIA H200", "gpu": "NVIDIA H200",
                                   "command": "python scripts/stability_bench.py"}, rows, runs,
                                  REPORT.summarize(rows, runs))
    assert text.startswith("# Stability benchmark: NVIDIA H200")
    assert "python scripts/stability_bench.py" in text
    table = [line for line in text.splitlines() if line.startswith("| long__triton.py")]
    assert len(table) == 1
    cells = [c.strip() for c in table[0].strip("|").split("|")]
    assert cells[1:3] == ["matmul", "2.790"]
    assert cells[6:12] == ["1", "1.002", "1.005", "1.003", "1.001", "1.004"]  # the six runs in order
    assert cells[12] == "0.50%" and cells[-4] == "1.0100 (1 kernel)" and cells[-2] == "100-100"
    assert "| speedup spread over the runs, end-to-end clock, solutions of 0.05-1 ms | <= 3% | **FAIL** |" in text
    assert "| quiet-2 | quiet | 60.0 | 3 | 3 |" in text
    assert "flaky__triton.py: " in text  # listed as not counted


def test_schedule_alternates():
    assert BENCH.schedule(3, 3) == RUN_ORDER
    assert BENCH.schedule(2, 0) == [("quiet-1", "quiet"), ("quiet-2", "quiet")]
    assert [n for n, _ in BENCH.schedule(1, 2)] == ["quiet-1", "busy-1", "busy-2"]


def test_selection():
    cpu = BENCH.select("cpu", [])
    cuda = BENCH.select("cuda", [])
    assert all("cuda" not in e.kind and "__cuda" not in e.solution.name for e in cpu)
    assert {e.kind for e in cuda if e.kind.startswith("bundled")} == {"bundled example (cuda)",
                                                                     "bundled example (triton)"}
    assert not any("wrong" in e.solution.name for e in cuda)
    suite = [e for e in cuda if not e.kind.startswith("bundled")]
    assert len(suite) >= 24 and all(e.problem.exists() and e.kind for e in suite)
    assert sum(e.baseline_ms is not None and e.baseline_ms < 1.0 for e in suite) >= 8
    only = BENCH.select("cuda", ["*softmax*"])
    assert only and all("softmax" in e.solution.name for e in only)


def test_options():
    assert BENCH.parse_args([]).deadline_min == 9.5
    cpu = BENCH.parse_args(["--device", "cpu", "--budget", "0.2", "--runs-quiet", "1", "--runs-busy", "1"])
    assert cpu.deadline_min is None and cpu.runs_busy == 1
    assert BENCH.parse_args(["--shard", "2/3"]).shard == (2, 3)
    for bad in (["--runs-quiet", "0"], ["--shard", "0/2"], ["--shard", "3/2"], ["--shard", "half"]):
        with pytest.raises(SystemExit):
            BENCH.parse_args(bad)


def test_report_files_and_merge(tmp_path):
    runs = synthetic_runs()
    rows = REPORT.solution_rows(runs)
    assert [r["solution"] for r in rows] == ["flaky__triton.py", "long__triton.py", "short__triton.py"]
    info = {"title": "t", "date": "2026-12-01T10:00:00+00:00", "gpu": "NVIDIA H200", "command": "c",
            "notes": ["a note"]}
    # two shards: the first holds flaky and long, the second short (with its own, slower runs)
    first, summary = BENCH.write_report(tmp_path / "a", {**info, "shard": "1/2"}, rows[:2], runs)
    assert first == tmp_path / "a" / "2026-12-01-h200-stability-shard1of2"
    data = json.loads(first.with_suffix(".json").read_text())
    assert data["info"]["notes"] == ["a note"] and len(data["solutions"]) == 2
    assert "verdicts" not in data["runs"][0] and (data["runs"][0]["solutions"], data["runs"][0]["correct"]) == (3, 3)
    assert "a note" in first.with_suffix(".md").read_text()
    assert summary["bars"]["spread_e2e_long"]["status"] == "PASS"
    slower = [{**r, "wall_s": 2 * r["wall_s"]} for r in runs]
    second, _ = BENCH.write_report(tmp_path / "b", {**info, "shard": "2/2"}, rows[2:], slower)
    merged, summary = BENCH.merge_reports([first.with_suffix(".json"), second.with_suffix(".json")], tmp_path)
    data = json.loads(merged.with_suffix(".json").read_text())
    assert merged == tmp_path / "2026-12-01-h200-stability"
    assert [r["solution"] for r in data["solutions"]] == [r["solution"] for r in rows]
    quiet1 = next(t for t in summary["throughput"] if t["run"] == "quiet-1")
    assert (quiet1["solutions"], quiet1["correct"], quiet1["wall_s"]) == (6, 6, 180.0)
    assert summary["bars"]["spread_e2e_short"]["failures"] == ["short__triton.py"]
    assert list(summary["incomplete"]) == ["flaky__triton.py"]
    assert "Merged from 2 shard reports" in merged.with_suffix(".md").read_text()
    with pytest.raises(ValueError, match="in two of the reports"):
        BENCH.merge_reports([first.with_suffix(".json"), first.with_suffix(".json")], tmp_path)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


def test_cpu_load_starts_pinned_and_stops():
    core = sorted(os.sched_getaffinity(0))[0]
    load = BENCH.CpuLoad((core,))
    load.start()
    try:
        (proc,) = load.procs
        assert proc.poll() is None and os.sched_getaffinity(proc.pid) == {core}
    finally:
        load.stop()
    assert proc.poll() is not None and load.procs == []
    load.stop()  # a second stop is harmless


def test_busy_loop_ends_when_its_parent_dies():
    parent = ("import subprocess, sys, os\n"
              f"p = subprocess.Popen([sys.executable, '-S', '-c', {BENCH.BUSY_LOOP!r}, str(os.getpid())])\n"
              "print(p.pid, flush=True)\n")
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=30)
    child = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_launch_drift_finds_problems_and_reads_launch_time():
    drift = load("launch_drift", "lab")
    suite = drift.problem_of(ROOT / "benchmarks" / "solutions" / "level1" / "39_rmsnorm__triton.py")
    assert suite == problems_root() / "level1" / "39_rmsnorm.py"
    example = drift.problem_of(examples_root() / "solutions" / "2_softmax_rows__cuda.py")
    assert example.name == "2_softmax_rows.py" and example.exists()
    with pytest.raises(SystemExit):
        drift.problem_of(ROOT / "benchmarks" / "solutions" / "level1" / "no_such_problem__x.py")
    got = drift.row(1, {"verdict": "correct", "sol_ms": 0.3655, "sol_device_ms": 0.2569, "ref_ms": 0.8839,
                        "ref_device_ms": 0.8342}, [2300.0, 2400.0], [])
    assert got["sol_launch_us"] == 108.6 and got["ref_launch_us"] == 49.7 and got["mhz_before"] == "2300-2400"
    assert drift.spread([2.418, 2.678, None, 2.392]) == round(2.678 / 2.392 - 1, 4) and drift.spread([1.0]) is None
