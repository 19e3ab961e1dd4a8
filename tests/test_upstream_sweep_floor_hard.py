"""The upstream sweep's noise floor (scripts/sweep_floor_report.py, floor.json) and its memory-pressure subset
(`--hard N`: scripts/memory_subset.py, scripts/problem_memory.py in a real child process), on hand-made verdicts
and small problem files. No judge runs here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kerneljudge.core.mapping import find_problems
from kerneljudge.results import noise_floor as NF

from .conftest import load_file

ROOT = Path(__file__).resolve().parent.parent


SWEEP = load_file("scripts", "upstream_sweep")      # puts scripts/ on sys.path and imports the modules beside it
REPORT = sys.modules["upstream_sweep_report"]
MARKDOWN = sys.modules["sweep_report_markdown"]
SUBSET = sys.modules["memory_subset"]


def identity(pid: str, e2e: float | None, device: float | None, method: str = "cuda_graph", **extra) -> dict:
    correct = e2e is not None
    row = {"problem_id": pid, "verdict": "correct" if correct else "runtime_error", "accepted": correct,
           "speedup": e2e, "speedup_end_to_end": e2e, "speedup_device": device,
           "speedup_ci95": [e2e * 0.99, e2e * 1.01] if correct else None,
           "device_clock": method if device else None, "device_name": "NVIDIA H200", "reason": "",
           "problem_sha256": f"sha-{pid}", "solution_sha256": "s"}
    row.update(extra)
    return row


ROWS = [identity("level1/1_a", 1.0, 1.0), identity("level1/2_b", 1.03, 0.97), identity("level1/3_c", 0.94, 1.06),
        identity("level1/4_d", 1.01, 1.2, method="profiler"), identity("level2/5_e", None, None)]


# ---------------------------------------------------------------------------------------------------------
# the noise floor in the report


def test_shares_per_clock_and_per_device_clock():
    summary = REPORT.summarize(ROWS)
    e2e, device = summary["speedups"]["end_to_end"], summary["speedups"]["device"]
    assert e2e["within_band"] == pytest.approx(2 / 4) and e2e["outside_wide"] == pytest.approx(1 / 4)
    assert device["outside_wide"] == pytest.approx(2 / 4) and device["wide_band"] == [0.95, 1.05]
    assert summary["device_clock_shares"] == {
        "cuda_graph": {"count": 3, "within_near": pytest.approx(1 / 3), "outside_wide": pytest.approx(1 / 3)},
        "profiler": {"count": 1, "within_near": 0.0, "outside_wide": 1.0}}


def test_floor_per_problem_in_the_summary_and_the_markdown():
    summary = REPORT.summarize(ROWS)
    floor = summary["floor"]
    assert sorted(floor["problems"]) == ["level1/1_a", "level1/2_b", "level1/3_c", "level1/4_d"]
    b = floor["problems"]["level1/2_b"]
    assert b["end_to_end"]["speedup"] == 1.03 and b["end_to_end"]["ci95"] == pytest.approx([1.0197, 1.0403])
    assert b["device"]["speedup"] == 0.97 and b["device"]["device_clock"] == "cuda_graph"
    assert floor["problems"]["level1/4_d"]["device"]["device_clock"] == "profiler"
    text = MARKDOWN.render_markdown(summary)
    assert "## Noise floor per problem" in text
    assert "| outside [0.95, 1.05] | 25.0% | 50.0% |" in text
    assert "| level1/2_b | 1.030 [1.020, 1.040] | 0.961-1.040 | 0.970 | cuda_graph | 0.970-1.031 |" in text
    assert "| profiler | 1 | 0.0% | 100.0% |" in text


def test_the_sweep_writes_a_floor_score_can_read(tmp_path, capsys):
    log = tmp_path / "results.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out"
    assert SWEEP.main(["--from-jsonl", str(log), "--out", str(out)]) == 0
    floor = NF.read_floor(out / "floor.json")
    assert len(floor["problems"]) == 4
    where, _ = NF.position({"problem_id": "level1/2_b", "accepted": True, "speedup": 1.035,
                            "problem_sha256": "sha-level1/2_b"}, floor)
    assert where == "within_noise"


# ---------------------------------------------------------------------------------------------------------
# --hard N


class FakeProblem:
    def __init__(self, pid: str, sha: str = ""):
        self.id, self.sha256, self.path = pid, sha or f"sha-{pid}", f"/p/{pid}.py"
        self.level, self.number, self.name = int(pid[5]), int(pid.split("/")[1].split("_")[0]), pid


def test_estimates_are_cached_by_hash_and_failures_asked_again(tmp_path):
    asked: list[list[str]] = []

    def run(paths, precision):
        asked.append(list(paths))
        return {p: ({"path": p, "error": "boom"} if "bad" in p else {"path": p, "need_bytes": len(p)})
                for p in paths}

    problems = [FakeProblem("level1/1_a"), FakeProblem("level1/2_bad")]
    found = SUBSET.estimates(problems, "fp32", str(tmp_path), run)
    assert found["level1/1_a"] == {"need_bytes": len("/p/level1/1_a.py")} and "error" in found["level1/2_bad"]
    again = SUBSET.estimates(problems, "fp32", str(tmp_path), run)
    assert again == found
    assert asked == [["/p/level1/1_a.py", "/p/level1/2_bad.py"], ["/p/level1/2_bad.py"]]
    SUBSET.estimates(problems, "bf16", str(tmp_path), run)      # another precision is another estimate
    assert len(asked[-1]) == 2
    changed = [FakeProblem("level1/1_a", sha="other")]          # a changed file is asked about again
    SUBSET.estimates(changed, "fp32", str(tmp_path), run)
    assert asked[-1] == ["/p/level1/1_a.py"]


def test_hardest_ranks_by_need_with_failures_last():
    problems = [FakeProblem(f"level1/{i}_p") for i in range(1, 6)]
    found = {"level1/1_p": {"need_bytes": 5}, "level1/2_p": {"need_bytes": 50}, "level1/3_p": {"error": "x"},
             "level1/4_p": {"need_bytes": 50}, "level1/5_p": {"need_bytes": 7}}
    assert [p.id for p in SUBSET.hardest(problems, 3, found)] == ["level1/2_p", "level1/4_p", "level1/5_p"]
    assert SUBSET.hardest(problems, 9, found)[-1].id == "level1/3_p"
    lines = SUBSET.describe(SUBSET.hardest(problems, 5, found), found)
    assert lines[-1] == "  level1/3_p: no estimate (x)"


def test_hard_then_limit_in_level_order(monkeypatch, tmp_path, capsys):
    problems = [FakeProblem(pid) for pid in ("level1/1_a", "level1/2_b", "level2/3_c", "level2/4_d")]
    needs = {"level1/1_a": 1, "level1/2_b": 40 << 30, "level2/3_c": 30 << 30, "level2/4_d": 20 << 30}
    monkeypatch.setattr(SUBSET, "estimates", lambda ps, precision, cache: {
        p.id: {"need_bytes": needs[p.id], "model_bytes": 0, "input_bytes": 0, "activation_bytes": 0} for p in ps})
    args = SWEEP.parse_args(["--out", str(tmp_path), "--hard", "3", "--limit", "2", "--", "--precision", "bf16"])
    chosen, record = SWEEP.hardest_subset(problems, args)
    assert [p.id for p in chosen] == ["level1/2_b", "level2/3_c"]
    assert record["precision"] == "bf16" and record["need_bytes"] == {"level1/2_b": 40 << 30, "level2/3_c": 30 << 30}
    err = capsys.readouterr().err
    assert "level1/2_b: 40.00 GiB" in err and "level1/1_a" not in err
    text = MARKDOWN.render_markdown(REPORT.summarize(ROWS, run={"hard": record}))
    assert "- Subset: --hard 3, the problems expected to need the most device memory (bf16, estimated on the " \
           "meta device): level1/2_b (40.0 GiB), level2/3_c (30.0 GiB)" in text
    with pytest.raises(SystemExit):
        SWEEP.parse_args(["--out", str(tmp_path), "--hard", "0"])
    assert SWEEP.passed_option(["--budget", "1", "--precision=fp16"], "--precision") == "fp16"
    assert SWEEP.passed_option(["--budget", "1"], "--precision") is None


SMALL = """import torch
import torch.nn as nn

{top}

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)
        {init}

    def forward(self, x):
        return self.linear(x).repeat(1, 4)

def get_inputs():
    return [torch.randn(128, 256)]

def get_init_inputs():
    return [256]
"""


@pytest.mark.slow
def test_estimates_in_a_child_that_survives_a_dying_problem(tmp_path):
    root = tmp_path / "KernelBench" / "level1"
    root.mkdir(parents=True)
    (root / "1_plain.py").write_text(SMALL.format(top="", init="pass"))
    (root / "2_dies.py").write_text(SMALL.format(top="import os\nos._exit(7)", init="pass"))
    (root / "3_reads_values.py").write_text(SMALL.format(top="", init="self.k = int(torch.ones(1).item())"))
    problems = sorted(find_problems(tmp_path / "KernelBench"), key=lambda p: p.number)
    found = SUBSET.estimates(problems, "fp32", str(tmp_path / "cache"))
    plain, dies, reads = (found[p.id] for p in problems)
    weights = (256 * 256 + 256) * 4
    assert plain["model_bytes"] == weights and plain["input_bytes"] == 128 * 256 * 4
    assert plain["activation_bytes"] == 128 * 1024 * 4                     # repeat(1, 4): the largest tensor
    assert plain["need_bytes"] == 2 * weights + 14 * 128 * 1024 * 4 and plain["model_built_on"] == "meta"
    assert "exited with status 7" in dies["error"]
    assert reads["model_built_on"] == "cpu" and reads["model_bytes"] == weights
