"""The noise floor (results/noise_floor.py): built from identity copies' verdicts, written and read back, and each
speedup placed on it; `kerneljudge score --floor` and `kerneljudge report --floor`. Synthetic verdict rows."""

from __future__ import annotations

import json
import math

import pytest

from kerneljudge.cli.main import main
from kerneljudge.results import noise_floor as NF

from .verdict_logs import cli, verdict, write_run_log

SHA = "ab" * 32     # verdict_logs.verdict's problem_sha256


def identity(pid: str, e2e: float, ci: list[float] | None, device: float | None = None, dev_ci=None,
             method: str = "cuda_graph", **extra) -> dict:
    """An identity copy's verdict: its speedups under both clocks, with intervals."""
    row = verdict(pid, speedup=e2e, speedup_end_to_end=e2e, speedup_ci95=ci, speedup_device=device,
                  device_clock=method if device else None, **extra)
    if device is not None and dev_ci is not None:
        row["ref_timing"]["device"] = {"method": method, "median_ms": 1.0, "ci95_ms": dev_ci[0]}
        row["sol_timing"]["device"] = {"method": method, "median_ms": 1.0, "ci95_ms": dev_ci[1]}
    return row


def test_band_is_the_farthest_point_both_ways_on_a_log_scale():
    low, high = NF.band(1.03, [0.99, 1.06])
    assert high == pytest.approx(1.06) and low == pytest.approx(1 / 1.06)
    assert NF.band(0.9) == pytest.approx((0.9, 1 / 0.9))
    assert NF.band(1.0, [1.0, 1.0]) == (1.0, 1.0)


def test_floor_from_identity_copies():
    rows = [identity("level1/a", 1.03, [0.99, 1.06], device=0.98, dev_ci=([0.97, 0.99], [0.99, 1.0])),
            identity("level1/b", 0.95, None),
            verdict("level1/c", "runtime_error"),                       # not timed: no floor
            identity("level1/d", 1.2, [1.0, 1.4], accepted=False),      # held back: not a measurement
            {**verdict("level1/e", "unjudgeable", accepted=False)}]
    floor = NF.build_floor(rows)
    assert floor["kind"] == NF.KIND and floor["version"] == 1
    assert sorted(floor["problems"]) == ["level1/a", "level1/b"]
    a = floor["problems"]["level1/a"]
    assert a["problem_sha256"] == SHA
    assert a["end_to_end"]["speedup"] == 1.03 and a["end_to_end"]["ci95"] == [0.99, 1.06]
    assert a["end_to_end"]["band"] == pytest.approx([1 / 1.06, 1.06], abs=1e-6)
    assert a["device"]["device_clock"] == "cuda_graph"
    assert a["device"]["ci95"] == pytest.approx([0.97 / 1.0, 0.99 / 0.99])
    assert "device" not in floor["problems"]["level1/b"]
    assert floor["device_names"] == {"NVIDIA H200": 4}


def test_several_copies_of_a_problem_take_the_widest():
    rows = [identity("level1/a", 1.01, [0.99, 1.03]), identity("level1/a", 0.96, [0.94, 0.98]),
            identity("level1/a", 1.02, None, device=1.1, method="profiler"),
            identity("level1/a", 1.0, None, device=1.01, method="cuda_graph"),
            identity("level1/a", 1.0, None, device=0.99, method="cuda_graph")]
    entry = NF.build_floor(rows)["problems"]["level1/a"]
    assert entry["end_to_end"]["speedup"] == 0.96 and entry["end_to_end"]["ci95"] == [0.94, 1.03]
    assert entry["end_to_end"]["copies"] == 5
    # one device clock per entry, the one most copies were timed by
    assert entry["device"]["device_clock"] == "cuda_graph" and entry["device"]["copies"] == 2


def test_write_read_and_reject(tmp_path):
    floor = NF.build_floor([identity("level1/a", 1.03, [0.99, 1.06])])
    path = tmp_path / "floor.json"
    NF.write_floor(path, floor)
    assert NF.read_floor(path) == json.loads(path.read_text())
    for bad, words in (("not json", "cannot read"), (json.dumps({"problems": {}}), "not a noise floor"),
                       (json.dumps({"kind": NF.KIND, "problems": {"x": {"end_to_end": {"speedup": -1}}}}),
                        "positive speedup"),
                       (json.dumps({"kind": NF.KIND, "problems": {"x": {"end_to_end": {"speedup": 1.0,
                                                                                         "ci95": [2, 1]}}}}),
                        "ci95"),
                       (json.dumps({"kind": NF.KIND, "problems": {"x": 3}}), "not an object")):
        path.write_text(bad)
        with pytest.raises(ValueError, match=words):
            NF.read_floor(path)
    with pytest.raises(ValueError, match="cannot read"):
        NF.read_floor(tmp_path / "missing.json")


FLOOR = NF.build_floor([identity("level1/a", 1.03, [0.99, 1.06], device=1.01, dev_ci=([0.99, 1.01], [0.99, 1.01])),
                        identity("level1/b", 1.0, [0.995, 1.005])])


@pytest.mark.parametrize("speedup, where", [(1.05, "within_noise"), (1.061, "above_noise"), (0.95, "within_noise"),
                                            (0.9, "below_noise"), (2.0, "above_noise")])
def test_position_against_the_band(speedup, where):
    got, found = NF.position(verdict("level1/a", speedup=speedup), FLOOR)
    assert got == where and found["clock"] == "end_to_end"


def test_position_needs_a_comparable_floor():
    assert NF.position(verdict("level1/a", "wrong_output"), FLOOR) == (None, {"why": NF.NOT_TIMED})
    assert NF.position(verdict("level9/z", speedup=1.01), FLOOR)[1]["why"] == "no floor for the problem"
    changed = verdict("level1/a", speedup=1.01, problem_sha256="cd" * 32)
    assert "differs" in NF.position(changed, FLOOR)[1]["why"]
    # the device clock: compared with the device floor, and only one taken the same way
    on_graph = verdict("level1/a", speedup=1.02, clock="device", device_clock="cuda_graph")
    got, found = NF.position(on_graph, FLOOR)
    assert got == "within_noise" and found["clock"] == "device"
    assert NF.position(dict(on_graph, speedup=1.2), FLOOR)[0] == "above_noise"
    assert "device clock" in NF.position(dict(on_graph, device_clock="profiler"), FLOOR)[1]["why"]
    assert "no device floor" in NF.position(verdict("level1/b", speedup=1.0, clock="device",
                                                    device_clock="cuda_graph"), FLOOR)[1]["why"]


def test_floor_summary_counts_and_names_within_noise_rows():
    rows = [verdict("level1/a", speedup=1.05), verdict("level1/a", speedup=0.97), verdict("level1/b", speedup=1.5),
            verdict("level1/b", speedup=0.5), verdict("level9/z", speedup=1.01), verdict("level1/a", "wrong_output")]
    s = NF.floor_summary(rows, FLOOR, "floor.json")
    assert (s["timed"], s["within_noise"], s["above_noise"], s["below_noise"], s["no_floor"]) == (5, 2, 1, 1, 1)
    assert s["within_noise_faster"] == 1
    assert [r["speedup"] for r in s["within_noise_rows"]] == [1.05, 0.97]
    line = NF.floor_line(s)
    assert "2 within noise (1 of them above 1x)" in line and "level1/a 1.050x" in line


def test_a_floor_from_another_device_is_warned_about():
    assert NF.other_device_warning([verdict("level1/a", speedup=1.0)], FLOOR) is None
    warning = NF.other_device_warning([verdict("level1/a", speedup=1.0, device_name="NVIDIA H100")], FLOOR)
    assert "H200" in warning and "H100" in warning


def _floor_file(tmp_path):
    path = tmp_path / "floor.json"
    NF.write_floor(path, FLOOR)
    return path


def test_score_command_with_a_floor(tmp_path, capsys):
    log = write_run_log(tmp_path / "run.jsonl", [verdict("level1/a", speedup=1.04), verdict("level1/b", speedup=1.3)])
    floor = _floor_file(tmp_path)
    assert main(["score", str(log), "--floor", str(floor), "--n-boot", "0"]) == 0
    assert "1 within noise (1 of them above 1x), 1 above" in capsys.readouterr().out
    assert main(["score", str(log), "--floor", str(floor), "--json", "--n-boot", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["noise_floor"]["within_noise"] == 1 and data["noise_floor"]["file"] == str(floor)
    (tmp_path / "bad.json").write_text("{}")
    assert main(["score", str(log), "--floor", str(tmp_path / "bad.json")]) == 3
    assert "not a noise floor" in capsys.readouterr().err


def test_report_marks_speedups_within_noise(tmp_path):
    pytest.importorskip("matplotlib", reason="the report needs the 'report' extra (matplotlib)")
    log = write_run_log(tmp_path / "run.jsonl", [verdict("level1/a", speedup=1.04), verdict("level1/b", speedup=1.3),
                                                 verdict("level1/a", "wrong_output")])
    out = tmp_path / "r.html"
    assert cli("report", str(log), "--out", str(out), "--floor", str(_floor_file(tmp_path)), "--n-boot", "10",
               "--band-boot", "0") == 0
    page = out.read_text(encoding="utf-8")
    assert 'data-type="text">noise</th>' in page and 'data-type="num">ref ms</th>' in page   # still sorts as numbers
    assert page.count(">within noise<") == 1 and page.count(">above noise<") == 1
    band = math.exp(abs(math.log(1.06)))
    assert f"within noise: band [{1 / band:.3f}, {band:.3f}] on the end_to_end clock" in page
    assert "Noise floor: a speedup inside" in page
    plain = tmp_path / "plain.html"
    assert cli("report", str(log), "--out", str(plain), "--n-boot", "10", "--band-boot", "0") == 0
    assert ">within noise<" not in plain.read_text(encoding="utf-8")
