"""fast_p's interval rule (results/speedup_interval.py): a speedup whose 95% interval includes 1.0 is not counted
faster at p >= 1, on either clock or against another baseline; score.summary and its table report fast_p both
ways. Synthetic verdict rows and a JSONL log read by `kerneljudge score`."""

from __future__ import annotations

import json

import pytest

from kerneljudge.cli.main import main
from kerneljudge.results import score, speedup_interval as SI

from .verdict_logs import verdict, write_run_log


def timed(pid: str, speedup: float, ci: list[float] | None, **extra) -> dict:
    """An accepted row on the end-to-end clock with its speedup's interval (None: the row has none)."""
    row = verdict(pid, speedup=speedup, **extra)
    if ci is not None:
        row["speedup_ci95"] = ci
    return row


def device_row(pid: str, speedup: float, ref_ci, sol_ci, method: str = "cuda_graph") -> dict:
    row = verdict(pid, speedup=speedup, clock="device", device_clock=method, speedup_device=speedup,
                  speedup_ci95=[1.5, 1.6])   # the end-to-end interval, clear of 1: must not be the one used
    row["ref_timing"]["device"] = {"method": method, "median_ms": 2.0, **({"ci95_ms": ref_ci} if ref_ci else {})}
    row["sol_timing"]["device"] = {"method": method, "median_ms": 2.0 / speedup,
                                   **({"ci95_ms": sol_ci} if sol_ci else {})}
    return row


def test_end_to_end_interval_and_the_rule():
    clear, noisy, bare = timed("a", 1.3, [1.1, 1.5]), timed("b", 1.05, [0.95, 1.15]), timed("c", 2.5, None)
    assert SI.speedup_interval(clear) == (1.1, 1.5)
    assert SI.speedup_interval(bare) is None
    assert SI.qualifies_by_interval(clear, 1.0) and SI.qualifies_by_interval(clear, 1.2)
    assert not SI.qualifies_by_interval(clear, 1.5)            # the point rule still applies
    assert not SI.qualifies_by_interval(noisy, 1.0)            # 1.05x, but its interval includes 1
    assert not SI.qualifies_by_interval(bare, 2.0)             # no interval: not counted faster
    for row in (clear, noisy, bare):                           # below p = 1 nothing changes
        assert SI.qualifies_by_interval(row, 0.5) and SI.qualifies_by_interval(row, 0.0)
    assert not SI.qualifies_by_interval(timed("d", 1.3, [1.1, 1.5], accepted=False), 0.0)


@pytest.mark.parametrize("bad", [[1.2], [1.3, 1.1], [0.0, 1.2], ["1", 2], [1.0, float("inf")], None, "1,2"])
def test_malformed_intervals_count_as_unknown(bad):
    row = timed("a", 1.3, None, speedup_ci95=bad)
    assert SI.speedup_interval(row) is None
    assert not SI.qualifies_by_interval(row, 1.0)


def test_device_clock_interval_comes_from_both_sides_device_times():
    row = device_row("a", 1.25, ref_ci=[1.9, 2.1], sol_ci=[1.5, 1.7])
    low, high = SI.speedup_interval(row)
    assert (low, high) == pytest.approx((1.9 / 1.7, 2.1 / 1.5))
    assert SI.qualifies_by_interval(row, 1.0)
    overlapping = device_row("b", 1.1, ref_ci=[1.8, 2.2], sol_ci=[1.7, 1.9])
    assert SI.speedup_interval(overlapping)[0] < 1.0 and not SI.qualifies_by_interval(overlapping, 1.0)
    profiler = device_row("c", 1.5, ref_ci=None, sol_ci=None, method="profiler")
    assert SI.speedup_interval(profiler) is None and not SI.qualifies_by_interval(profiler, 1.0)
    # the CPU's device clock is the host clock: its interval is the end-to-end one
    host = timed("d", 1.4, [1.2, 1.6], clock="device", device_clock="host", speedup_device=1.4)
    assert SI.speedup_interval(host) == (1.2, 1.6)


def test_another_baseline_divides_by_the_solutions_interval():
    row = timed("level1/a", 2.0, [0.9, 1.1])     # sol median 1 ms, interval [0.99, 1.02] (verdict_logs.TIMING)
    baseline = {"level1/a": 1.5}
    low, high = SI.speedup_interval(row, baseline)
    assert (low, high) == pytest.approx((1.5 / 1.02, 1.5 / 0.99))
    assert SI.qualifies_by_interval(row, 1.0, baseline)           # 1.47-1.52x against the baseline
    assert not SI.qualifies_by_interval(row, 1.0)                 # its eager interval includes 1
    assert SI.speedup_interval(row, {"other": 1.0}) is None


def test_summary_reports_fast_p_both_ways():
    rows = [timed("level1/a", 1.3, [1.1, 1.5]), timed("level1/b", 1.05, [0.95, 1.15]), timed("level1/c", 2.5, None),
            verdict("level2/d", "wrong_output")]
    s = score.summary(rows, n_boot=20)
    eager = s["baselines"]["eager"]
    assert eager["fast_p"]["fast_1"]["value"] == pytest.approx(0.75)
    assert eager["fast_p_interval_rule"]["fast_1"]["value"] == pytest.approx(0.25)
    assert eager["fast_p_interval_rule"]["fast_0.5"]["value"] == eager["fast_p"]["fast_0.5"]["value"]
    assert eager["fast_p_interval_rule"]["fast_2"]["value"] == 0.0     # 2.5x with no interval
    assert eager["interval_rule"] == {"faster": 3, "clear": 1, "includes_1": 1, "unknown": 1}
    assert eager["by_level"]["1"]["fast_p_interval_rule"]["fast_1"]["value"] == pytest.approx(1 / 3)
    json.dumps(s)
    text = score.summary_table(s)
    assert "all, interval rule" in text and "level 1, interval rule" in text
    assert "3 accepted row(s) above 1x, 1 clear of 1, 1 with an interval that includes 1, 1 with no interval" in text
    off = score.summary(rows, n_boot=0, interval_rule=False)["baselines"]["eager"]
    assert "fast_p_interval_rule" not in off and "interval_rule" not in off


def test_score_command_prints_and_writes_both(tmp_path, capsys):
    log = write_run_log(tmp_path / "run.jsonl", [timed("level1/a", 1.3, [1.1, 1.5]),
                                                 timed("level1/b", 1.05, [0.95, 1.15])])
    assert main(["score", str(log), "--n-boot", "10"]) == 0
    out = capsys.readouterr().out
    assert "all, interval rule" in out
    assert main(["score", str(log), "--json", "--n-boot", "10"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baselines"]["eager"]["fast_p"]["fast_1"]["value"] == 1.0
    assert data["baselines"]["eager"]["fast_p_interval_rule"]["fast_1"]["value"] == 0.5
