"""The judge's own noise floor on the CPU (issue 33): identity copies of 20 bundled problems (each problem's `Model`
renamed `ModelNew`), judged in one batch on the host clock. Reference and solution run the same code in two
processes; a systematic difference between those processes (how a call's request reaches it, what its allocator
holds, hooks left installed, a profiler left attached) shows here as a false speedup for every copy at once.

While the reference's rounds came in one request and the solution's calls one request each, the median copy of
these 20 was at 0.87 (a call made right after its request arrives pays the process's wake-up). With both sides
called alike it is at 0.93-0.96 on this 2-core VM over six runs: a tilt of about 5% against the solution's process
remains on calls of tens of microseconds (not found yet: not the box, not the worker's state, not the garbage
collector; lab/host_bias_probe.py and the notes of issue 33), and single copies move by several percent either
way. So the median is held to 10% and each copy to 30%: the old bias fails, host jitter passes. One batch's single
copies strayed past 30% in about one run of eight (level 3 S4D at 0.63 and 1.38, level 2 cosine GEMM at 1.42, on
2026-12-07, at the code of that morning too), so each copy is judged in two batches and held by the geometric mean
of its two speedups."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kerneljudge.core.problem import read_problem
from kerneljudge.core.types import JudgeOptions
from kerneljudge.judging.batch import Job, run_batch

from .conftest import load_file

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "src" / "kerneljudge" / "data" / "problems"
MEDIAN_LOW, MEDIAN_HIGH = 0.90, 1.10   # the 20 copies' median: a bias between the processes moves all of them
LOW, HIGH = 0.70, 1.30                 # each copy: host jitter on 2 shared cores, not a bias


def _identity_copy():
    return load_file("scripts", "identity_copy").identity_source


def problems() -> list[Path]:
    """20 problems spread evenly over levels 1-3 in file order: matmuls, elementwise, reductions, norms,
    convolutions, attention and small networks alike."""
    every = sorted(BUNDLED.glob("level[123]/*.py"), key=lambda p: (p.parent.name, int(p.name.split("_")[0])))
    return every[::max(1, len(every) // 20)][:20]


@pytest.mark.slow
def test_identity_copies_of_twenty_bundled_problems_are_one_on_the_host_clock(tmp_path, cache_dir):
    identity = _identity_copy()
    jobs = []
    for path in problems():
        copy = tmp_path / "solutions" / f"{path.stem}__identity.py"
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(identity(path.read_text()))
        jobs.append(Job(read_problem(path), copy))
    assert len(jobs) == 20
    options = JudgeOptions(device="cpu", policy="lenient", trials=2, held_out="none", time_budget_s=1.0,
                           cache_dir=cache_dir)
    # each copy judged in two batches, its speedup the geometric mean of the two: a bias between the processes shows
    # in both, a burst of load on the 2 shared cores during one copy's timing rarely does
    runs = [run_batch(jobs, options, tmp_path / f"run{n}.jsonl", progress=lambda message: None) for n in (1, 2)]
    judged = [[v for v in verdicts if v["verdict"] != "unjudgeable"] for verdicts in runs]
    assert all(len(j) >= 18 for j in judged), [(v["problem_id"], v["verdict"], v["reason"]) for r in runs for v in r]
    wrong = [(v["problem_id"], v["verdict"], v["reason"][:120]) for j in judged for v in j if v["verdict"] != "correct"]
    assert not wrong, wrong
    both = {v["problem_id"]: [v["speedup_end_to_end"]] for v in judged[0]}
    for v in judged[1]:
        both.get(v["problem_id"], []).append(v["speedup_end_to_end"])
    means = {pid: math.sqrt(s[0] * s[1]) for pid, s in both.items() if len(s) == 2 and all(s)}
    assert len(means) >= 18, both
    outside = [(pid, both[pid], mean) for pid, mean in means.items() if not LOW <= mean <= HIGH]
    assert not outside, outside
    speedups = sorted(means.values())
    median = speedups[len(speedups) // 2]
    assert MEDIAN_LOW <= median <= MEDIAN_HIGH, speedups
