"""Scores over verdict dicts: fast_p variants, pass@k, turns, baselines, levels, bootstrap, summary."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest

from kerneljudge.results import bootstrap_intervals, score, trajectory_scores, verdict_rows


def row(pid: str, accepted: bool, speedup: float | None = None, **extra) -> dict:
    sol_ms = (1.0 / speedup) if speedup else None
    return {"problem_id": pid, "accepted": accepted, "speedup": speedup, "sol_ms": sol_ms,
            "verdict": "correct" if accepted else "wrong_output", **extra}


# --- the original functions keep their behaviour -----------------------------------------------------------


def test_fast_p_and_table_unchanged():
    rows = [row("a", True, 2.5), row("b", True, 1.0), row("c", False), row("d", True, None)]
    assert verdict_rows.fast_p(rows, 0) == 0.75               # fast_0: the accepted share, timed or not
    assert verdict_rows.fast_p(rows, 1.0) == 0.25             # strictly faster than p
    assert verdict_rows.fast_p([], 1) == 0.0
    assert verdict_rows.fast_p_table(rows) == {"fast_0": 0.75, "fast_0.5": 0.5, "fast_1": 0.25, "fast_1.5": 0.25,
                                               "fast_2": 0.25}
    assert verdict_rows.verdict_counts(rows) == {"correct": 3, "wrong_output": 1}
    assert score.FAST_P_SET == (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)


def test_fast_p_avg_equals_fast_p_with_one_row_per_problem():
    rng = random.Random(3)
    rows = [row(f"p{i}", rng.random() < 0.6, rng.choice([None, 0.3, 0.8, 0.81, 1.2, 3.0])) for i in range(50)]
    for p in score.FAST_P_SET:
        assert trajectory_scores.fast_p_avg(rows, p) == pytest.approx(verdict_rows.fast_p(rows, p))
    assert trajectory_scores.fast_p_avg([], 1.0) == 0.0


def test_fast_p_avg_weights_problems_equally():
    rows = [row("a", True, 2.0, sample=s) for s in range(4)] + [row("b", False, sample=0)]
    assert verdict_rows.fast_p(rows, 0) == 0.8        # rows
    assert trajectory_scores.fast_p_avg(rows, 0) == 0.5    # problems


# --- baselines -----------------------------------------------------------------------------------------


def test_alternative_baseline():
    rows = [row("a", True, 2.0), row("b", True, 4.0), row("c", True, 3.0), row("d", False)]
    compiled = {"a": 0.25, "b": 0.5}                  # ms; c has no baseline
    assert verdict_rows.speedup_of(rows[0], compiled) == pytest.approx(0.5)    # 0.25 ms / 0.5 ms
    assert verdict_rows.speedup_of(rows[1], compiled) == pytest.approx(2.0)
    assert verdict_rows.speedup_of(rows[2], compiled) is None
    assert verdict_rows.speedup_of(rows[3], compiled) is None
    assert trajectory_scores.fast_p_avg(rows, 1.0, baseline=compiled) == 0.25
    assert trajectory_scores.fast_p_avg(rows, 0.0, baseline=compiled) == 0.75  # fast_0 does not depend on the baseline
    rebased = verdict_rows.rebaseline(rows, compiled)
    assert [r["speedup"] for r in rebased] == pytest.approx([0.5, 2.0, None, None])
    assert rebased[0]["speedup_eager"] == 2.0 and rows[0]["speedup"] == 2.0   # inputs untouched
    assert verdict_rows.fast_p(rebased, 1.0) == trajectory_scores.fast_p_avg(rows, 1.0, baseline=compiled)
    assert trajectory_scores.geomean_speedup(rows, baseline=compiled) == pytest.approx(1.0)


# --- pass@k --------------------------------------------------------------------------------------------


def brute_force_pass_at_k(n: int, c: int, k: int) -> Fraction:
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(outcomes[i] for i in s) for s in subsets), len(subsets))


def test_pass_at_k_estimator_matches_enumeration():
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert trajectory_scores.pass_at_k_estimate(n, c, k) == pytest.approx(
                    float(brute_force_pass_at_k(n, c, k)), abs=1e-12)


def test_pass_at_k_estimator_arguments():
    assert trajectory_scores.pass_at_k_estimate(10, 0, 3) == 0.0
    assert trajectory_scores.pass_at_k_estimate(10, 10, 1) == 1.0
    assert trajectory_scores.pass_at_k_estimate(200, 1, 1) == pytest.approx(1 / 200)
    for bad in ((3, 4, 1), (3, 1, 0), (3, 1, 4), (3, -1, 1)):
        with pytest.raises(ValueError):
            trajectory_scores.pass_at_k_estimate(*bad)


def test_pass_at_k_over_rows():
    rows = ([row("a", s < 2, 1.5, sample=s) for s in range(5)]       # 2 of 5 correct
            + [row("b", s == 4, 3.0, sample=s) for s in range(5)])   # 1 of 5
    expected = (float(brute_force_pass_at_k(5, 2, 2)) + float(brute_force_pass_at_k(5, 1, 2))) / 2
    assert trajectory_scores.pass_at_k(rows, 2) == pytest.approx(expected)
    assert trajectory_scores.pass_at_k(rows, 1) == pytest.approx((2 / 5 + 1 / 5) / 2)
    assert trajectory_scores.pass_at_k(rows, 1, p=2.0) == pytest.approx((0 + 1 / 5) / 2)    # fast_2 version
    with pytest.raises(ValueError, match="at least 6 samples"):
        trajectory_scores.pass_at_k(rows, 6)


# --- samples and fast_p@k ----------------------------------------------------------------------------------


def test_fast_p_at_k_uses_the_first_k_samples_by_index():
    rows = [row("a", False, sample=0), row("a", False, sample=1), row("a", True, 2.0, sample=2),
            row("b", True, 1.2, sample=0), row("b", True, 3.0, sample=1),
            row("c", False, sample=0)]                           # c has a single sample
    random.Random(0).shuffle(rows)
    assert trajectory_scores.fast_p_at_k(rows, 0, 1) == pytest.approx(1 / 3)
    assert trajectory_scores.fast_p_at_k(rows, 0, 2) == pytest.approx(1 / 3)
    assert trajectory_scores.fast_p_at_k(rows, 0, 3) == pytest.approx(2 / 3)
    assert trajectory_scores.fast_p_at_k(rows, 1.5, 1) == 0.0
    assert trajectory_scores.fast_p_at_k(rows, 1.5, 2) == pytest.approx(1 / 3)
    assert trajectory_scores.fast_p_at_k(rows, 1.5, 3) == pytest.approx(2 / 3)
    assert trajectory_scores.fast_p_at_k(rows, 0, 100) == trajectory_scores.fast_p_at_k(rows, 0, 3)
    with pytest.raises(ValueError):
        trajectory_scores.fast_p_at_k(rows, 0, 0)


def test_trajectories_defaults():
    rows = [row("a", True), row("a", False), row("b", False, turn=0), row("b", True, turn=1),
            row("c", False, sample=1), row("c", True)]
    groups = trajectory_scores.trajectories(rows)
    assert [len(t) for t in groups["a"]] == [1, 1]            # no sample, no turn: separate samples
    assert [len(t) for t in groups["b"]] == [2]               # turns without sample: one trajectory
    assert [t[0]["accepted"] for t in groups["c"]] == [False, True]   # numbered first, then unnumbered
    assert verdict_rows.level_of({"problem_id": "level3/7_x"}) == 3
    assert verdict_rows.level_of({"problem_id": "level3/7_x", "level": 1}) == 1
    assert verdict_rows.level_of({"problem_id": "custom"}) == 0


# --- refinement turns ----------------------------------------------------------------------------------


def test_fast_p_by_turn_is_best_so_far():
    rows = [
        row("a", False, turn=0), row("a", True, 0.9, turn=1), row("a", True, 1.6, turn=2),
        row("b", True, 2.5, turn=0),                                     # stopped after turn 0
        row("c", False, turn=0), row("c", False, turn=1), row("c", True, 1.1, turn=2),
        row("d", True, 1.2, turn=0), row("d", False, turn=1), row("d", False, turn=2),   # got worse: keeps best
    ]
    assert trajectory_scores.fast_p_by_turn(rows, 0) == {0: 0.5, 1: 0.75, 2: 1.0}
    assert trajectory_scores.fast_p_by_turn(rows, 1.0) == {0: 0.5, 1: 0.5, 2: 1.0}
    assert trajectory_scores.fast_p_by_turn(rows, 1.5) == {0: 0.25, 1: 0.25, 2: 0.5}
    assert trajectory_scores.fast_p_avg(rows, 1.0, max_turn=1) == 0.5
    assert trajectory_scores.fast_p_avg(rows, 1.0) == 1.0
    assert trajectory_scores.fast_p_by_turn([], 0) == {}
    # samples x turns: per problem the share of its trajectories
    both = [row("x", False, sample=0, turn=0), row("x", True, 2.0, sample=0, turn=1),
            row("x", False, sample=1, turn=0), row("x", False, sample=1, turn=1)]
    assert trajectory_scores.fast_p_by_turn(both, 0) == {0: 0.0, 1: 0.5}


# --- geometric mean ------------------------------------------------------------------------------------


def test_geomean_speedup():
    rows = [row("a", True, 2.0), row("b", True, 0.5), row("c", True, 4.0), row("d", False),
            {"problem_id": "e", "accepted": False, "verdict": "correct", "speedup": 500.0}]   # flagged: ignored
    assert trajectory_scores.geomean_speedup(rows) == pytest.approx((2.0 * 0.5 * 4.0) ** (1 / 3))
    assert trajectory_scores.geomean_speedup([row("a", False)]) is None
    turns = [row("a", True, 1.0, turn=0), row("a", True, 4.0, turn=1)]
    assert trajectory_scores.geomean_speedup(turns) == pytest.approx(4.0)           # best per trajectory
    assert trajectory_scores.geomean_speedup(turns, max_turn=0) == pytest.approx(1.0)


# --- levels --------------------------------------------------------------------------------------------


def test_by_level():
    rows = [row("level1/1_a", True, 2.0), row("level1/2_b", False), row("level2/1_c", True, 0.5),
            row("mine", True, 3.0, level=4)]
    assert trajectory_scores.by_level(rows, trajectory_scores.fast_p_avg, 0) == {1: 0.5, 2: 1.0, 4: 1.0}
    assert trajectory_scores.by_level(rows, trajectory_scores.fast_p_avg, 1.0) == {1: 0.5, 2: 0.0, 4: 1.0}
    assert trajectory_scores.by_level(rows, trajectory_scores.geomean_speedup) == {
        1: pytest.approx(2.0), 2: pytest.approx(0.5), 4: pytest.approx(3.0)}


# --- bootstrap -----------------------------------------------------------------------------------------


def _dataset(n: int = 40, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        for s in range(3):
            ok = rng.random() < 0.5
            rows.append(row(f"level{1 + i % 2}/{i}_p", ok, rng.lognormvariate(0, 0.6) if ok else None, sample=s))
    return rows


def test_bootstrap_is_deterministic_for_a_seed():
    rows = _dataset()
    stat = lambda rs: trajectory_scores.fast_p_avg(rs, 1.0)   # noqa: E731
    a = bootstrap_intervals.bootstrap_ci(rows, stat, n_boot=300, seed=11)
    b = bootstrap_intervals.bootstrap_ci(list(rows), stat, n_boot=300, seed=11)
    c = bootstrap_intervals.bootstrap_ci(list(reversed(rows)), stat, n_boot=300, seed=11)   # row order does not matter
    assert a == b == c
    assert bootstrap_intervals.bootstrap_ci(rows, stat, n_boot=300, seed=12) != a
    low, high = a
    assert low <= trajectory_scores.fast_p_avg(rows, 1.0) <= high and low < high


def test_bootstrap_resamples_problems_as_wholes():
    rows = _dataset(n=10)
    # every resample has 10 problems (a problem drawn twice counts twice) with all 3 samples each
    assert bootstrap_intervals.bootstrap_ci(rows, lambda rs: len({verdict_rows.problem_of(r) for r in rs}),
                                            n_boot=50) == (10, 10)
    assert bootstrap_intervals.bootstrap_ci(rows, lambda rs: len(rs), n_boot=50) == (30, 30)
    assert bootstrap_intervals.bootstrap_ci([], len) is None
    assert bootstrap_intervals.bootstrap_ci(rows, lambda rs: None, n_boot=10) is None
    with pytest.raises(ValueError):
        bootstrap_intervals.bootstrap_ci(rows, len, confidence=1.5)


# --- summary -------------------------------------------------------------------------------------------


def test_summary_is_json_and_consistent():
    rows = _dataset()
    compiled = {verdict_rows.problem_of(r): 0.9 for r in rows}
    summary = score.summary(rows, baselines={"compile": compiled}, ks=(1, 2, 3, 5), n_boot=200, seed=5)
    assert json.loads(json.dumps(summary)) == summary
    assert summary == score.summary(rows, baselines={"compile": compiled}, ks=(1, 2, 3, 5), n_boot=200, seed=5)
    assert summary["rows"] == 120 and summary["problems"] == 40 and summary["samples"] == {"min": 3, "max": 3}
    eager = summary["baselines"]["eager"]
    assert list(eager["fast_p"]) == ["fast_0", "fast_0.5", "fast_0.8", "fast_1", "fast_1.5", "fast_2"]
    for p in score.FAST_P_SET:
        entry = eager["fast_p"][f"fast_{p:g}"]
        assert entry["value"] == pytest.approx(trajectory_scores.fast_p_avg(rows, p))
        assert entry["ci"][0] <= entry["value"] <= entry["ci"][1]
    assert eager["geomean_speedup"]["value"] == pytest.approx(trajectory_scores.geomean_speedup(rows))
    assert set(eager["by_level"]) == {"1", "2"} and eager["by_level"]["1"]["problems"] == 20
    assert eager["by_level"]["2"]["fast_p"]["fast_1"]["value"] == pytest.approx(
        trajectory_scores.by_level(rows, trajectory_scores.fast_p_avg, 1.0)[2])
    assert list(eager["pass_at_k"]) == ["1", "2", "3"]            # k <= the fewest samples
    assert eager["pass_at_k"]["2"]["value"] == pytest.approx(trajectory_scores.pass_at_k(rows, 2))
    assert eager["fast_p_at_k"]["3"]["fast_1"] == pytest.approx(trajectory_scores.fast_p_at_k(rows, 1.0, 3))
    assert "fast_p_by_turn" not in eager                          # a single turn
    compile_block = summary["baselines"]["compile"]
    assert compile_block["fast_p"]["fast_1"]["value"] == pytest.approx(
        trajectory_scores.fast_p_avg(rows, 1.0, baseline=compiled))
    assert compile_block["fast_p"]["fast_0"]["value"] == eager["fast_p"]["fast_0"]["value"]
    table = score.summary_table(summary)
    assert "against eager" in table and "against compile" in table and "level 2" in table and "pass@2" in table


def test_summary_with_turns_and_empty():
    rows = [row("a", False, turn=0), row("a", True, 1.5, turn=1), row("b", True, 0.7, turn=0)]
    summary = score.summary(rows, n_boot=50)
    assert summary["turns"] == 2
    assert summary["baselines"]["eager"]["fast_p_by_turn"]["fast_1"] == {"0": 0.0, "1": 0.5}
    assert "best so far by turn" in score.summary_table(summary)
    empty = score.summary([], n_boot=10)
    assert empty["rows"] == 0 and empty["baselines"]["eager"]["fast_p"]["fast_0"]["value"] is None
    assert isinstance(score.summary_table(empty), str)


# --- unjudgeable rows: the problem could not judge, so no score counts them -------------------------------


def unjudgeable(pid: str, kind: str = "degenerate_reference", **extra) -> dict:
    return {"problem_id": pid, "accepted": False, "speedup": None, "sol_ms": None, "verdict": "unjudgeable",
            "reason": "the reference output is at rounding-noise level",
            "problem_outcome": {"kind": kind, "reason": "noise", "figures": {"ref_rms": 1e-9}}, **extra}


def test_unjudgeable_rows_leave_fast_p_of_the_others_unchanged():
    judged = [row("a", True, 2.5), row("b", True, 1.0), row("c", False), row("d", True, None)]
    mixed = judged[:2] + [unjudgeable("e"), unjudgeable("f", "reference_failed")] + judged[2:]
    assert verdict_rows.fast_p_table(mixed) == verdict_rows.fast_p_table(judged)
    for p in score.FAST_P_SET:
        assert trajectory_scores.fast_p_avg(mixed, p) == trajectory_scores.fast_p_avg(judged, p)
        assert trajectory_scores.fast_p_at_k(mixed, p, 1) == trajectory_scores.fast_p_at_k(judged, p, 1)
    assert trajectory_scores.pass_at_k(mixed, 1) == trajectory_scores.pass_at_k(judged, 1)
    assert trajectory_scores.geomean_speedup(mixed) == trajectory_scores.geomean_speedup(judged)
    assert verdict_rows.fast_p([unjudgeable("e")], 0) == 0.0
    assert trajectory_scores.fast_p_avg([unjudgeable("e")], 0) == 0.0
    assert verdict_rows.verdict_counts(mixed) == {"correct": 3, "wrong_output": 1, "unjudgeable": 2}


def test_left_out_counts_rows_problems_and_kinds():
    rows = [row("a", True, 2.0), unjudgeable("a"),                      # a keeps a judgeable row
            unjudgeable("b"), unjudgeable("b", sample=1),               # b has none: left out
            unjudgeable("c", "reference_failed"), row("d", False)]
    assert verdict_rows.left_out(rows) == {"rows": 4, "problems": 2,
                                "by_kind": {"degenerate_reference": 3, "reference_failed": 1}}
    assert verdict_rows.left_out([row("a", True)]) == {"rows": 0, "problems": 0, "by_kind": {}}
    assert verdict_rows.left_out([{"verdict": "unjudgeable", "problem_id": "x"}])["by_kind"] == {"unknown": 1}
    line = verdict_rows.left_out_line(verdict_rows.left_out(rows))
    assert "4 unjudgeable" in line and "3 degenerate_reference" in line and "2 problem(s)" in line
    assert verdict_rows.left_out_line(verdict_rows.left_out([row("a", True)])) == ""


def test_an_all_unjudgeable_problem_is_left_out_of_per_problem_averages():
    judged = [row("a", True, 2.0, sample=0), row("a", False, sample=1), row("b", False, sample=0),
              row("b", False, sample=1)]
    rows = judged + [unjudgeable("c", sample=0), unjudgeable("c", sample=1)]
    assert trajectory_scores.fast_p_avg(rows, 0) == 0.25                    # (0.5 + 0) / 2, not / 3
    assert trajectory_scores.pass_at_k(rows, 2) == trajectory_scores.pass_at_k(judged, 2)
    assert trajectory_scores.by_level(rows, trajectory_scores.fast_p_avg, 0.0) == {0: 0.25}
    stat = lambda rs: trajectory_scores.fast_p_avg(rs, 0)                   # noqa: E731
    assert bootstrap_intervals.bootstrap_ci(rows, stat, n_boot=100) == bootstrap_intervals.bootstrap_ci(
        judged, stat, n_boot=100)
    # a sample whose only row is unjudgeable is not a trajectory of its problem
    partial = [row("a", True, 2.0, sample=0), unjudgeable("a", sample=1)]
    assert trajectory_scores.fast_p_avg(partial, 0) == 1.0


def test_summary_reports_what_it_left_out():
    judged = [row("a", False, turn=0), row("a", True, 1.5, turn=1), row("level2/b", True, 0.7, turn=0)]
    rows = judged + [unjudgeable("level3/c", turn=0), unjudgeable("a", "reference_failed", turn=2)]
    summary = score.summary(rows, n_boot=50)
    plain = score.summary(judged, n_boot=50)
    assert summary["baselines"] == plain["baselines"]       # every score as if the rows were not there
    assert summary["rows"] == 5 and summary["problems"] == 3 and summary["turns"] == 2
    assert summary["verdicts"]["unjudgeable"] == 2
    assert summary["left_out"] == {"rows": 2, "problems": 1,
                                   "by_kind": {"degenerate_reference": 1, "reference_failed": 1}}
    assert "3" not in summary["baselines"]["eager"]["by_level"]
    assert json.loads(json.dumps(summary)) == summary
    table = score.summary_table(summary)
    assert table.splitlines()[-1] == verdict_rows.left_out_line(summary["left_out"])
    assert "left out" not in score.summary_table(plain) and plain["left_out"]["rows"] == 0


# --- the verdict type ------------------------------------------------------------------------------------


def _outcome(kind: str = "degenerate_reference") -> dict:
    return {"kind": kind, "reason": "reference output at rounding-noise level", "figures": {"ref_rms": 1e-9}}


def test_an_unjudgeable_verdict_must_say_why_and_count_for_nothing():
    from kerneljudge.core.types import PROBLEM_OUTCOMES, VERDICTS, Verdict

    assert "unjudgeable" in VERDICTS and PROBLEM_OUTCOMES == ("degenerate_reference", "reference_failed")
    base = dict(verdict="unjudgeable", reason="r", problem="p.py", solution="s.py")
    ok = Verdict(accepted=False, problem_outcome=_outcome("reference_failed"), **base)
    assert Verdict.from_dict(json.loads(ok.to_json())) == ok
    for bad in (dict(accepted=True, problem_outcome=_outcome()),
                dict(accepted=False, speedup=2.0, problem_outcome=_outcome()),
                dict(accepted=False, problem_outcome=None),
                dict(accepted=False, problem_outcome={"kind": "flaky", "reason": "", "figures": {}})):
        with pytest.raises(ValueError):
            Verdict(**base, **bad)
    with pytest.raises(ValueError):   # only an unjudgeable verdict carries a problem outcome
        Verdict(verdict="correct", accepted=True, reason="", problem="p", solution="s", problem_outcome=_outcome())


def test_old_logs_without_problem_outcome_still_load_and_score():
    from kerneljudge.core.types import Verdict

    old = {"verdict": "correct", "accepted": True, "reason": "matches", "problem": "p.py", "solution": "s.py",
           "problem_id": "level1/1_x", "speedup": 1.5, "flags": [], "an_old_field": 1}
    v = Verdict.from_dict(old)
    assert v.problem_outcome is None and v.to_dict()["problem_outcome"] is None
    assert verdict_rows.fast_p([old], 1.0) == 1.0 and verdict_rows.left_out([old])["rows"] == 0


def test_run_summary_text_shows_the_outcome_and_the_left_out_line():
    from kerneljudge.results import text_tables as report
    from kerneljudge.judging.batch import _summary

    rows = [row("a", True, 2.5), row("b", False), unjudgeable("c"), unjudgeable("d", "reference_failed")]
    table = report.verdict_table(rows)
    assert "degenerate_reference: the reference output is at rounding-noise level" in table
    assert "unjudgeable" in table.splitlines()[-1]
    text = report.fast_p_line(rows)
    assert "2 unjudgeable" in text.splitlines()[0]
    assert "fast_0=0.50" in text.splitlines()[1]                # 1 of the 2 judgeable solutions
    assert text.splitlines()[2] == verdict_rows.left_out_line(verdict_rows.left_out(rows))
    assert len(report.fast_p_line(rows[:2]).splitlines()) == 2   # nothing left out: no extra line
    assert _summary(unjudgeable("c")).startswith("unjudgeable (degenerate_reference) - the reference output")
    outcome = report.problem_outcome_text(unjudgeable("c")["problem_outcome"])
    assert "degenerate_reference (ref_rms=1e-09)" in outcome and "leave this verdict out" in outcome
