"""The upstream identity sweep's pieces that need no judge: identity copies (scripts/identity_copy.py),
how they are named and mapped (scripts/upstream_sweep.py), the GPU sampler (scripts/busy_sampler.py, with a
fake nvidia-smi); and its report (scripts/upstream_sweep_report.py) on hand-made verdicts and sample series.
The whole sweep runs on the CPU as `python scripts/upstream_sweep.py --levels 1 --limit 4 --device cpu --out DIR`."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from kerneljudge.core.mapping import find_problems, match_solution, pair_solutions

from .conftest import load_file

ROOT = Path(__file__).resolve().parent.parent


SWEEP = load_file("scripts", "upstream_sweep")   # imports the three modules beside it
COPY = sys.modules["identity_copy"]
SAMPLER = sys.modules["busy_sampler"]
REPORT = sys.modules["upstream_sweep_report"]
MARKDOWN = sys.modules["sweep_report_markdown"]

TRICKY = '''"""Model that scales its input. class Model(nn.Module) is what upstream writes."""
import torch
import torch.nn as nn

scale = 2.0  # Model's factor; note: é before Model on a line moves byte offsets


class ModelBlock(nn.Module):
    def forward(self, x):
        return x


class Model(nn.Module):
    """Model: scales x. See Model.forward."""

    label = "Model"

    def __init__(self, factor=scale):
        super(Model, self).__init__()
        self.block = ModelBlock()
        self.factor = factor
        self.Model = "an attribute, not the class"

    def forward(self, x):
        name = f"{Model.__name__} / Model"
        return self.block(x) * self.factor

    @classmethod
    def make(cls):
        return Model(factor=3.0)


def describe(Model_like=None):
    accent = "é"; kind = Model
    return dict(Model="keyword", kind=kind)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


# ---------------------------------------------------------------------------------------------------------
# identity copies


def test_identity_copy_renames_the_class_and_its_references_only():
    out = COPY.identity_source(TRICKY)
    assert "class ModelNew(nn.Module):" in out
    assert "super(ModelNew, self).__init__()" in out
    assert "return ModelNew(factor=3.0)" in out
    assert 'accent = "é"; kind = ModelNew' in out                       # after a 2-byte character
    # untouched: strings, docstrings, comments, attributes, keyword names, other names
    assert '"""Model that scales its input. class Model(nn.Module) is what upstream writes."""' in out
    assert '"""Model: scales x. See Model.forward."""' in out
    assert 'label = "Model"' in out
    assert "# Model's factor" in out
    assert 'self.Model = "an attribute, not the class"' in out
    assert 'dict(Model="keyword", kind=kind)' in out
    assert "class ModelBlock(nn.Module):" in out and "self.block = ModelBlock()" in out
    assert "def describe(Model_like=None):" in out
    assert out.count("\n") == TRICKY.count("\n")


def test_identity_copy_builds_the_same_network():
    namespace: dict = {}
    exec(compile(COPY.identity_source(TRICKY), "copy.py", "exec"), namespace)
    assert "Model" not in namespace
    model = namespace["ModelNew"]()
    (x,) = namespace["get_inputs"]()
    assert (model(x) == x * 2.0).all()
    assert type(namespace["ModelNew"].make()) is namespace["ModelNew"]
    assert namespace["describe"]()["kind"] is namespace["ModelNew"]


@pytest.mark.parametrize("source, message", [
    ("import torch\nclass Net:\n    pass\n", "0 module-level `class Model`"),
    ("class Model:\n    pass\nclass ModelNew(Model):\n    pass\n", "already uses the name ModelNew"),
    ("class Model:\n    pass\ndef build(Model):\n    return Model()\n", "also bound on line(s) [3]"),
    ("from lib import Model\nclass Model:\n    pass\n", "also bound on line(s) [1]"),
    ("class Model(:\n", "not valid Python"),
])
def test_identity_copy_refuses_what_it_cannot_rename_safely(source, message):
    with pytest.raises(COPY.IdentityError, match=re.escape(message)):
        COPY.identity_source(source)


# ---------------------------------------------------------------------------------------------------------
# naming and mapping, on real upstream names (the files' contents are written here)

UPSTREAM_NAMES = [
    "level1/1_Square_matrix_multiplication_.py",                # ends in "_": "<stem>__tag" splits early
    "level1/50_conv_standard_2D__square_input__square_kernel.py",  # "__" in the name itself
    "level2/1_Conv2D_ReLU_BiasAdd.py",                           # number 1 again, in another level
]
PROBLEM = ("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def __init__(self):\n"
           "        super(Model, self).__init__()\n\n    def forward(self, x):\n        return x + {n}\n\n"
           "def get_inputs():\n    return [torch.randn(4)]\n\ndef get_init_inputs():\n    return []\n")


@pytest.fixture
def upstream_like(tmp_path: Path) -> Path:
    root = tmp_path / "KernelBench"
    for i, name in enumerate(UPSTREAM_NAMES):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(PROBLEM.format(n=i))
    (root / "level3").mkdir()
    (root / "level3" / "helpers.py").write_text("X = 1\n")   # not a problem file
    return root


def test_copies_are_named_in_the_upstream_layout_and_map_to_their_problems(upstream_like, tmp_path):
    problems = SWEEP.select_problems(upstream_like, [1, 2, 3], None, None)
    assert [p.id for p in problems] == ["level1/1_Square_matrix_multiplication_",
                                        "level1/50_conv_standard_2D__square_input__square_kernel",
                                        "level2/1_Conv2D_ReLU_BiasAdd"]
    solutions = tmp_path / "solutions"
    staged, not_staged = SWEEP.stage(problems, solutions)
    assert sorted(staged) == ["level_1_problem_1_sample_0_kernel.py", "level_1_problem_50_sample_0_kernel.py",
                              "level_2_problem_1_sample_0_kernel.py"]
    assert not_staged == []
    assert SWEEP.mapping_errors(upstream_like, solutions, staged) == []
    pairs, unmatched = pair_solutions(solutions, find_problems(upstream_like))
    assert unmatched == []
    assert {s.name: p.id for p, s in pairs} == {name: p.id for name, p in staged.items()}
    assert SWEEP.unreadable_files(upstream_like, [1, 2, 3], problems) == ["level3/helpers.py"]


def test_stem_and_tag_names_map_upstream_names(upstream_like):
    problems = find_problems(upstream_like)
    for problem in problems:
        assert match_solution(Path(Path(problem.path).stem + "__identity.py"), problems) is problem


def test_staging_again_removes_copies_of_problems_no_longer_selected(upstream_like, tmp_path):
    solutions = tmp_path / "solutions"
    SWEEP.stage(SWEEP.select_problems(upstream_like, [1, 2], None, None), solutions)
    (solutions / "notes.py").write_text("# the user's own file\n")
    staged, _ = SWEEP.stage(SWEEP.select_problems(upstream_like, [1], None, "conv"), solutions)
    assert sorted(p.name for p in solutions.glob("*.py")) == ["level_1_problem_50_sample_0_kernel.py", "notes.py"]
    assert list(staged) == ["level_1_problem_50_sample_0_kernel.py"]


def test_selection_orders_by_number_and_limits(upstream_like):
    chosen = SWEEP.select_problems(upstream_like, [1, 2], 2, None)
    assert [p.id for p in chosen] == ["level1/1_Square_matrix_multiplication_",
                                      "level1/50_conv_standard_2D__square_input__square_kernel"]


def test_a_missing_problems_folder_is_a_clear_error(tmp_path, capsys):
    code = SWEEP.main(["--problems", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert code == SWEEP.EXIT_INPUT
    assert "fetch_upstream.sh" in capsys.readouterr().err


def test_extra_arguments_pass_through_but_not_the_policy(tmp_path):
    args = SWEEP.parse_args(["--out", str(tmp_path), "--jobs", "3", "--device", "cpu", "--", "--budget", "0.2"])
    command = SWEEP.judge_command(args, Path("/p"), Path("/s"), Path("/s/log.jsonl"))
    assert command[1:4] == ["-m", "kerneljudge", "run"]
    assert command[command.index("--policy") + 1] == "lenient"
    assert "--clock" not in command
    assert command[-2:] == ["--budget", "0.2"] and "--jobs" in command and "--device" in command
    with pytest.raises(SystemExit):
        SWEEP.parse_args(["--out", str(tmp_path), "--", "--policy", "strict"])


# ---------------------------------------------------------------------------------------------------------
# samplers


def test_nvidia_smi_lines_become_samples():
    started = __import__("datetime").datetime(2026, 12, 3, 19, 0, 0).timestamp()
    sample = SAMPLER.parse_smi_line("2026/12/03 19:00:12.500, 0, 87, 4021\n", started, 99.0)
    assert sample == {"t": 12.5, "gpu": 0, "util": 87.0, "mem_mib": 4021.0}
    assert SAMPLER.parse_smi_line("2026/12/03 19:00:12.500, 0, [N/A], [N/A]", started, 1.0) is None
    assert SAMPLER.parse_smi_line("some warning", started, 1.0) is None
    assert SAMPLER.parse_smi_line("garbled, 1, 0, 10", started, 7.25)["t"] == 7.25  # arrival time instead


FAKE_SMI = """#!/bin/sh
# stands in for nvidia-smi -lms: two GPUs, a sample every 0.1 s
case "$*" in *-lms*) ;; *) exit 1 ;; esac
if [ -n "$FAKE_SMI_FAIL" ]; then echo "NVIDIA-SMI has failed: no driver" >&2; exit 9; fi
while true; do
  now=$(date '+%Y/%m/%d %H:%M:%S.%N' | cut -c1-23)
  echo "$now, 0, 40, 1000"; echo "$now, 1, 0, 12"
  sleep 0.1
done
"""


def fake_nvidia_smi(tmp_path: Path, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(FAKE_SMI)
    (bin_dir / "nvidia-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setitem(sys.modules, "pynvml", None)   # importing it fails: the nvidia-smi path is taken


def test_gpu_sampler_reads_nvidia_smi_until_stopped(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path, monkeypatch)
    sampler = SAMPLER.GpuSampler(time.monotonic(), time.time())
    sampler.start()
    time.sleep(0.8)
    sampler.stop()
    assert sampler.status.startswith("nvidia-smi -lms 500")
    assert {s["gpu"] for s in sampler.samples} == {0, 1}
    assert all(-1.0 < s["t"] < 2.0 for s in sampler.samples)   # nvidia-smi's own time, relative to the start
    assert sampler._proc.poll() is not None                    # the background process is gone


def test_gpu_sampler_says_why_nvidia_smi_gave_nothing(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_SMI_FAIL", "1")
    sampler = SAMPLER.GpuSampler(time.monotonic(), time.time())
    sampler.start()
    sampler._thread.join(timeout=5)
    sampler.stop()
    assert sampler.samples == []
    assert sampler.status == "nvidia-smi exited with 9: NVIDIA-SMI has failed: no driver"


def test_no_gpu_tool_is_recorded_as_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pynvml", None)
    sampler = SAMPLER.GpuSampler(time.monotonic(), time.time())
    sampler.start()
    sampler.stop()
    assert sampler.status.startswith("unavailable: pynvml unavailable") and sampler.samples == []


# ---------------------------------------------------------------------------------------------------------
# the report


def verdict(problem: str, e2e: float | None, device: float | None, status: str = "correct", accepted=None,
            **extra) -> dict:
    row = {"problem_id": problem, "solution": f"/out/solutions/{problem}.py", "verdict": status,
           "accepted": (status == "correct") if accepted is None else accepted, "flags": [],
           "speedup_end_to_end": e2e, "speedup_device": device, "ref_ms": 1.0, "sol_ms": 1.0 / e2e if e2e else None,
           "device": "cuda", "device_name": "NVIDIA H200", "reason": "",
           "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0", "cuda": "13.0", "driver": "580.159.04"}}
    row.update(extra)
    return row


def sample_verdicts() -> list[dict]:
    return [
        verdict("level1/1_a", 1.00, 1.00), verdict("level1/2_b", 0.99, 1.01), verdict("level1/3_c", 1.01, 1.00),
        verdict("level1/4_d", 1.08, 1.20), verdict("level1/5_e", 1.20, 0.90),
        verdict("level1/6_f", 1.50, 1.50, accepted=False, flags=["timing_inconsistent"]),   # held: not counted
        verdict("level2/7_g", None, None, status="runtime_error", reason="CUDA error: out of memory"),
        verdict("level2/8_h", None, None, status="runtime_error", reason="CUDA error: out of memory"),
        verdict("level3/9_i", 3.0, 3.0, status="unjudgeable", accepted=False,
                problem_outcome={"kind": "nondeterministic", "reason": "reference differs from itself"}),
    ]


def test_speedup_statistics_and_false_positive_rates():
    summary = REPORT.summarize(sample_verdicts())
    e2e, device = summary["speedups"]["end_to_end"], summary["speedups"]["device"]
    # the unjudgeable row is left out: 8 judgeable copies, 6 of them timed
    assert e2e["judged"] == 8 and e2e["count"] == 6
    assert e2e["median"] == pytest.approx(1.045)                 # of 0.99, 1.0, 1.01, 1.08, 1.2, 1.5
    assert e2e["min"] == 0.99 and e2e["max"] == 1.5
    assert e2e["p5"] == pytest.approx(0.99 + 0.25 * 0.01)      # numpy's linear interpolation
    assert e2e["p95"] == pytest.approx(1.2 + 0.75 * 0.3)
    assert e2e["within_band"] == pytest.approx(3 / 6)
    assert e2e["below_band"] == 0 and e2e["above_band"] == pytest.approx(3 / 6)
    fp = e2e["false_positives"]
    assert fp["fast_1.05"]["count"] == 2 and fp["fast_1.05"]["rate"] == pytest.approx(2 / 8)
    assert [w["problem"] for w in fp["fast_1.05"]["worst"]] == ["level1/5_e", "level1/4_d"]
    assert fp["fast_1.1"]["count"] == 1 and fp["fast_1.1"]["worst"][0]["problem"] == "level1/5_e"
    assert device["false_positives"]["fast_1.1"]["worst"][0]["problem"] == "level1/4_d"
    assert device["false_positives"]["fast_1.05"]["count"] == 1


def test_verdicts_reasons_and_problem_outcomes():
    summary = REPORT.summarize(sample_verdicts())
    assert summary["verdicts"]["counts"] == {"correct": 6, "runtime_error": 2, "unjudgeable": 1}
    groups = summary["verdicts"]["not_accepted"]
    assert groups[0] == {"verdict": "runtime_error", "reason": "CUDA error: out of memory", "count": 2,
                         "problems": ["level2/7_g", "level2/8_h"]}
    assert groups[1]["verdict"] == "correct, not accepted" and groups[1]["reason"] == "flags: timing_inconsistent"
    assert summary["problem_outcomes"] == [{"problem": "level3/9_i", "kind": "nondeterministic",
                                            "reason": "reference differs from itself"}]
    assert summary["machine"]["versions"]["driver"] == {"580.159.04": 9}


def test_memory_failures_and_contracts_are_counted():
    rows = sample_verdicts() + [
        verdict("level2/10_j", 1.0, 1.0, flags=["contract_tightened"]),
        verdict("level2/11_k", None, None, status="unjudgeable", accepted=False,
                problem_outcome={"kind": "degenerate_reference", "reason": "one answer fits every input"}),
        verdict("level1/12_l", 1.0, 1.0, flags=["checked_alone_again", "preset_fitted"],
                first_attempt={"verdict": "runtime_error", "reason": "the problem's reference failed to run",
                               "error": "torch.OutOfMemoryError: CUDA out of memory.", "failed_in": "trials",
                               "wall_s": 9.5, "device": {"admitted": 3, "device_used_bytes": 78 * 2**30}}),
        verdict("level1/13_m", None, None, status="runtime_error",
                error_excerpt="RuntimeError: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate"),
        verdict("level1/14_n", 1.0, 1.0, shapes={"admitted_need": {"bytes": 90 << 30, "from": "shape_plan",
                                                                    "alone": True}}),
        verdict("level1/15_o", 1.0, 1.0, shapes={"admitted_need": {"bytes": None, "from": "even_share"}}),
        verdict("level1/16_p", 1.0, 1.0, shapes={"admitted_need": {"bytes": 1 << 30, "from": "reference"}})]
    found = REPORT.summarize(rows)["memory_and_contracts"]
    assert found["admitted_needs"] == {"shape_plan": 1, "even_share": 1, "reference": 1, "alone": 1}
    assert "- Admitted to the device with a memory need (1 from reference, 1 from shape plan, 1 from even share); " \
           "alone, their need filling the card: 1" in MARKDOWN.render_markdown(REPORT.summarize(rows))
    assert found["memory_failures"] == 3
    assert found["memory_failure_problems"] == ["level1/13_m", "level2/7_g", "level2/8_h"]
    assert found["checked_alone_again"] == 1 and found["preset_fitted"] == 1 and found["unjudgeable"] == 2
    assert found["contracts"] == {"tf32": 13, "fp32_tightened": 1, "degenerate_under_both": 1}
    text = MARKDOWN.render_markdown(REPORT.summarize(rows))
    assert "memory failure (out of memory, cuBLAS allocation, a busy device): **3**" in text
    assert found["first_attempts"] == [{"problem": "level1/12_l", "failed_in": "trials", "admitted": 3,
                                        "error": "torch.OutOfMemoryError: CUDA out of memory.", "used_gib": 78.0}]
    assert "| level1/12_l | trials | torch.OutOfMemoryError: CUDA out of memory. | 3 | 78.0 |" in text


def test_phase_totals_and_slowest():
    rows = [verdict("a", 1.0, 1.0, wall_s=3.0, phases_s={"build": 1.0, "trials": 2.0}),
            verdict("b", 1.0, 1.0, wall_s=10.0, phases_s={"build": 4.0, "trials": 1.0, "wait_for_device": 5.0}),
            verdict("c", None, None, status="build_error")]
    summary = REPORT.summarize(rows)
    assert summary["phases"]["phases"] == [{"phase": "build", "total_s": 5.0},
                                           {"phase": "wait_for_device", "total_s": 5.0},
                                           {"phase": "trials", "total_s": 3.0}]
    assert summary["phases"]["sum_wall_s"] == 13.0
    assert [r["problem"] for r in summary["slowest"]] == ["b", "a"]
    assert list(summary["slowest"][0]["top_phases"]) == ["wait_for_device", "build", "trials"]


def test_level_spans_say_when_each_level_ran_and_what_its_turns_cost():
    t0 = 1_000_000.0
    rows = [verdict("level1/1_a", 1.0, 1.0, wall_s=20.0, ended_at=t0 + 30.0,
                    phases_s={"device_time": 2.0, "profile": 1.0, "trials": 3.0, "wait_for_device": 14.0}),
            verdict("level1/2_b", 1.0, 1.0, wall_s=50.0, ended_at=t0 + 60.0,
                    phases_s={"solution_timing": 4.0, "reference_outputs": 6.0, "wait_for_device": 40.0}),
            verdict("level2/1_c", 1.0, 1.0, wall_s=30.0, ended_at=t0 + 90.0, phases_s={"held_out": 5.0}),
            verdict("level3/1_d", None, None, status="build_error")]       # no ended_at: an older log's row
    summary = REPORT.summarize(rows, run={"started_at": t0})
    assert summary["levels"] == [
        {"level": "level1", "verdicts": 2, "from_s": 10.0, "to_s": 60.0, "timing_turns_s": 7.0, "other_phases_s": 9.0},
        {"level": "level2", "verdicts": 1, "from_s": 60.0, "to_s": 90.0, "timing_turns_s": 0.0, "other_phases_s": 5.0}]
    assert "| level1 | 2 | 10.0 | 60.0 | 7.0 | 9.0 |" in MARKDOWN.render_markdown(summary)
    # without the run's start, the first judgement's start is zero
    assert REPORT.summarize(rows)["levels"][0]["from_s"] == 0.0


def series(utils: list[float], every: float = 0.5) -> list[tuple[float, float]]:
    return [(i * every, u) for i, u in enumerate(utils)]


def test_idle_stretches_leading_interior_and_trailing():
    utils = [0, 0, 0, 50, 80, 0, 0, 0, 0, 90, 0, 0]
    stretches = REPORT.idle_stretches(series(utils))
    assert [(s["start"], s["end"], s["leading"], s["trailing"]) for s in stretches] == [
        (0.0, 1.5, True, False), (2.5, 4.5, False, False), (5.0, 5.5, False, True)]
    assert stretches[1]["duration"] == 2.0
    assert REPORT.idle_stretches(series([0, 0, 0])) == [
        {"start": 0.0, "end": 1.0, "leading": True, "trailing": True, "duration": 1.0}]
    assert REPORT.idle_stretches(series([10, 20])) == []


def test_busy_share_finds_the_longest_idle_stretch_and_places_it_between_verdicts():
    # 30 s of samples: busy, then 12 s at 0% in the middle, then busy; a leading 2 s start-up
    utils = [0] * 4 + [60] * 20 + [0] * 24 + [70] * 12
    gpu = [{"t": t, "gpu": 0, "util": u, "mem_mib": 1000.0 + u} for t, u in series(utils)]
    host = [{"t": float(t), "load1": 1.0 + t / 10, "cpu_percent": None, "verdicts": t // 5} for t in range(31)]
    summary = REPORT.summarize([verdict("a", 1.0, 1.0)], gpu, host, {"started_at": 0.0})
    (g,) = summary["gpu"]
    assert g["samples"] == 60 and g["busy_share"] == pytest.approx(32 / 60)
    assert g["mean_util"] == pytest.approx((20 * 60 + 12 * 70) / 60)
    assert g["longest_idle"]["duration"] == 12.0 and g["longest_idle"]["start"] == 12.0
    assert g["longest_interior_idle"] == g["longest_idle"]
    assert g["longest_idle"]["verdicts_before"] == 2 and g["longest_idle"]["verdicts_after"] == 4
    assert g["interior_idle_over_bar"] == 1
    assert summary["host"]["max_load1"] == 4.0 and summary["host"]["mean_cpu_percent"] is None
    text = MARKDOWN.render_markdown(summary)
    assert "Longest stretch at 0%: 12.0 s from t+12.0 s (00:00:12 UTC)" in text
    assert "Such stretches over 10 s (the bar, when work was waiting): 1" in text


def test_markdown_report_without_gpu_samples():
    run = {"command": "python scripts/upstream_sweep.py --out x", "gpu_sampler": "unavailable: no nvidia-smi",
           "wall_s": 12.0, "judged_now": 8, "resumed": 1, "not_staged": [{"problem": "level3/x", "reason": "why"}]}
    text = MARKDOWN.render_markdown(REPORT.summarize(sample_verdicts(), [], [], run))
    assert "No GPU samples: utilisation was not sampled on this run." in text
    assert "Sampler: unavailable: no nvidia-smi." in text
    assert "| fast_1.05 (false positives) | 25.0% (2) | 12.5% (1) |" in text
    assert "| level3/9_i | nondeterministic | reference differs from itself |" in text
    assert "Not staged: level3/x: why" in text
    assert "8 verdicts judged now, 1 from earlier runs" in text


def test_report_from_an_existing_log(tmp_path, capsys):
    log = tmp_path / "results.jsonl"
    rows = sample_verdicts()
    stale = dict(rows[0], speedup_end_to_end=5.0)   # an earlier verdict of the same copy: the last one counts
    lines = [json.dumps(dict(row, problem_sha256=f"p{row['problem_id']}", solution_sha256="s"))
             for row in [stale] + rows]
    log.write_text("\n".join(lines) + '\n{"torn line')
    out = tmp_path / "report"
    assert SWEEP.main(["--from-jsonl", str(log), "--out", str(out)]) == 0
    summary = json.loads((out / "report.json").read_text())
    assert summary["verdicts"]["total"] == 9
    assert summary["speedups"]["end_to_end"]["max"] == 1.5
    assert summary["run"]["report_from_jsonl"] is True
    assert (out / "report.md").read_text().startswith("# Upstream KernelBench identity sweep")


def test_a_sweep_cut_off_keeps_its_samples_for_the_report(tmp_path, monkeypatch):
    """The device session ended during the sweep (2026-12-07, H100: 157 verdicts, no samples): the samples so far are
    written while the judge runs, beside a run.json naming the log, so --from-jsonl reports them."""
    fake_nvidia_smi(tmp_path, monkeypatch)
    monkeypatch.setattr(SWEEP, "SAMPLES_EVERY_S", 0.2)
    out, log = tmp_path / "sweep", tmp_path / "sweep" / "results.jsonl"
    out.mkdir()
    rows = sample_verdicts()
    log.write_text("".join(json.dumps(dict(r, problem_sha256=f"p{r['problem_id']}", solution_sha256="s")) + "\n"
                           for r in rows))
    SWEEP.run_judge([sys.executable, "-c", "import time; time.sleep(1.5)"], log, out)
    # what a run killed now would leave: the final run.json and samples are never written
    assert json.loads((out / "run.json").read_text())["cut_off"] is True
    written = SAMPLER.read_samples(out / "gpu_samples.csv")
    assert {s["gpu"] for s in written} == {0, 1} and SAMPLER.read_samples(out / "host_samples.csv")
    assert not list(out.glob("*.partial"))
    assert SWEEP.main(["--from-jsonl", str(log), "--out", str(out)]) == 0
    summary = json.loads((out / "report.json").read_text())
    assert [g["gpu"] for g in summary["gpu"]] == [0, 1] and summary["run"]["cut_off"] is True
