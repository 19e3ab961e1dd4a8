"""compare: paired differences over shared problems, worked out by hand; intervals that keep pairs."""

from __future__ import annotations

import json
import math

import pytest

from kerneljudge.results.compare import compare, compare_text

from .verdict_logs import cli, unjudgeable, verdict, write_run_log


def rows_a() -> list[dict]:
    return [verdict("p1", speedup=2.0), verdict("p2", "wrong_output"), verdict("p3", speedup=1.5),
            verdict("p4", speedup=9.0)]


def rows_b() -> list[dict]:
    return [verdict("p1", speedup=4.0), verdict("p2", speedup=1.2), verdict("p3", "build_error"),
            verdict("p5", speedup=9.0)]


def test_paired_values_by_hand():
    c = compare(rows_a(), rows_b(), thresholds=(0, 1, 1.5, 2), n_boot=0)
    assert c["problems"] == {"shared": 3, "only_a": 1, "only_b": 1, "only_a_ids": ["p4"], "only_b_ids": ["p5"],
                             "unjudgeable": 0, "unjudgeable_ids": []}
    assert c["a"]["left_out"] == {"rows": 0, "problems": 0, "by_kind": {}}
    fast = c["baselines"]["eager"]["fast_p"]
    # shared p1..p3: A accepted p1 (2x), p3 (1.5x); B accepted p1 (4x), p2 (1.2x)
    assert fast["fast_0"]["a"]["value"] == pytest.approx(2 / 3) and fast["fast_0"]["b"]["value"] == pytest.approx(2 / 3)
    assert fast["fast_0"]["diff"]["value"] == 0 and (fast["fast_0"]["b_better"], fast["fast_0"]["a_better"]) == (1, 1)
    assert fast["fast_1.5"]["a"]["value"] == pytest.approx(1 / 3)   # 1.5 is not strictly above 1.5
    assert fast["fast_2"]["a"]["value"] == 0 and fast["fast_2"]["diff"]["value"] == pytest.approx(1 / 3)
    assert fast["fast_2"]["diff"]["ci"] is None  # n_boot=0
    geo = c["baselines"]["eager"]["geomean_speedup"]
    assert geo["problems"] == 1 and geo["ratio"]["value"] == pytest.approx(2.0)
    assert geo["a"]["value"] == pytest.approx(2.0) and geo["b"]["value"] == pytest.approx(4.0)


def test_intervals_resample_pairs_together():
    # B equals A (half the problems solved) except on one problem it also solves: every paired difference
    # is 0 or +1, so no resample can make B - A negative. Resampling the runs apart would (A and B each
    # vary by about +-0.18 on 30 problems).
    a = [verdict(f"p{i}", speedup=2.0) if i % 2 else verdict(f"p{i}", "wrong_output") for i in range(30)]
    b = [dict(v) for v in a]
    b[0] = verdict("p0", speedup=2.0)
    c = compare(a, b, thresholds=(0,), n_boot=500, seed=3)
    entry = c["baselines"]["eager"]["fast_p"]["fast_0"]
    assert entry["diff"]["value"] == pytest.approx(1 / 30)
    lo, hi = entry["diff"]["ci"]
    assert lo == 0 and 0 < hi <= 0.15
    lo_a, hi_a = entry["a"]["ci"]
    assert hi_a - lo_a > 0.25  # the runs' own intervals are wide; the difference's is not
    same = compare(a, [dict(v) for v in a], thresholds=(0, 1), n_boot=200)
    for e in same["baselines"]["eager"]["fast_p"].values():
        assert e["diff"]["value"] == 0 and e["diff"]["ci"] == [0, 0]
    assert same["baselines"]["eager"]["geomean_speedup"]["ratio"]["ci"] == [1.0, 1.0]


def test_baseline_and_warnings():
    a, b = rows_a(), rows_b()
    for v in b:
        v["device_name"] = "NVIDIA A100"
    c = compare(a, b, baselines={"compile": {"p1": 1.0, "p2": 1.0, "p3": 1.0}}, n_boot=0, thresholds=(1,))
    assert set(c["baselines"]) == {"eager", "compile"}
    # against compile: sol_ms = 2/speedup; A p1 1.0 ms -> 1x, p3 1.33 ms; B p1 0.5 ms -> 2x, p2 1.67 ms
    comp = c["baselines"]["compile"]["fast_p"]["fast_1"]
    assert comp["a"]["value"] == 0 and comp["b"]["value"] == pytest.approx(1 / 3)
    assert any("device_name differs" in w for w in c["warnings"])
    text = compare_text(c)
    assert "against compile" in text and "warning: device_name differs" in text and "B/A 2.00x" in text


def test_compare_command(tmp_path, capsys):
    a = write_run_log(tmp_path / "a" / "run.jsonl", rows_a())
    b = write_run_log(tmp_path / "b" / "run.jsonl", rows_b())
    assert cli("compare", str(a), str(b), "--json", "--n-boot", "100", "--labels", "before,after") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["a"]["label"] == "before" and out["problems"]["shared"] == 3
    lo, hi = out["baselines"]["eager"]["fast_p"]["fast_0"]["diff"]["ci"]
    assert lo <= 0 <= hi and not math.isnan(lo)
    assert cli("compare", str(a), str(b), "--p", "0,1") == 0
    text = capsys.readouterr().out
    assert "fast_0" in text and "fast_1 " in text and "fast_2" not in text
    c = write_run_log(tmp_path / "c" / "run.jsonl", [verdict("other", speedup=1.0)])
    assert cli("compare", str(a), str(c)) == 3
    assert "share no problem" in capsys.readouterr().err
    assert cli("compare", str(a), str(tmp_path / "missing.jsonl")) == 3


def test_unjudgeable_rows_are_left_out_and_counted():
    plain = compare(rows_a(), rows_b(), thresholds=(0, 1), n_boot=50)
    # A: p1 could not be judged in one of its two samples; B: p2 could not be judged at all, p6 only in B
    a = rows_a() + [unjudgeable("p1", sample=1)]
    b = rows_b() + [unjudgeable("p6", "reference_failed")]
    b[1] = unjudgeable("p2")
    c = compare(a, b, thresholds=(0, 1), n_boot=50)
    assert c["problems"]["shared"] == 2 and c["problems"]["unjudgeable"] == 1
    assert c["problems"]["unjudgeable_ids"] == ["p2"] and c["problems"]["only_b_ids"] == ["p5", "p6"]
    assert c["a"]["left_out"] == {"rows": 1, "problems": 0, "by_kind": {"degenerate_reference": 1}}
    assert c["b"]["left_out"] == {"rows": 2, "problems": 2,
                                  "by_kind": {"degenerate_reference": 1, "reference_failed": 1}}
    # p1 and p3 compare as before: A's unjudgeable sample is not a trajectory of p1
    fast0 = c["baselines"]["eager"]["fast_p"]["fast_0"]
    assert fast0["a"]["value"] == 1.0 and fast0["b"]["value"] == 0.5
    assert plain["baselines"]["eager"]["fast_p"]["fast_0"]["a"]["value"] == pytest.approx(2 / 3)
    text = compare_text(c)
    assert "A: left out of every score: 1 unjudgeable row(s)" in text
    assert "1 problem(s) in both runs not compared" in text
    assert "left out" not in compare_text(plain)
