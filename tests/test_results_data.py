"""Verdicts as a flat table: flatten_row, load_results (pandas), export (parquet, csv), the documented
columns, and the error when the optional extra is missing."""

from __future__ import annotations

import math
import re
import sys

import pytest

from kerneljudge.results.export import COLUMN_NAMES, COLUMNS, flatten_row

from .conftest import ROOT
from .verdict_logs import PROFILE, cli, numerics, verdict, write_bench_run, write_run_log


def test_flatten_a_full_verdict():
    v = verdict("level3/9_attn", speedup=2.0, flags=["suspicious_speedup", "profile_failed"],
                numerics=numerics("tf32", 1e-3), profile=PROFILE, sol_device_ms=0.5, ref_device_ms=1.2,
                speedup_device=2.4, clock="device",
                speedup_vs_fp32_reference=1.7, contract="tf32", sandbox={"layers": ["seccomp", "netns"], "missing": []},
                shapes={"default": {}, "held_out_0": {"n": 3}}, sample=2, turn=1, model="openai:m",
                findings=[{"code": "torch_compute", "line": 3}], usage={"prompt_tokens": 10, "completion_tokens": 5})
    row = flatten_row(v, run="r", source="/x")
    assert list(row) == COLUMN_NAMES
    assert row["problem_id"] == "level3/9_attn" and row["level"] == 3 and row["sample"] == 2 and row["turn"] == 1
    assert row["speedup"] == 2.0 and row["ref_ms"] == 2.0 and row["sol_ms"] == 1.0
    assert (row["sol_device_ms"], row["ref_device_ms"], row["speedup_device"]) == (0.5, 1.2, 2.4)
    assert row["speedup_vs_fp32_reference"] == 1.7 and row["clock"] == "device"
    assert row["flags"] == "suspicious_speedup;profile_failed" and row["blocking_flags"] == "suspicious_speedup"
    assert row["finding_codes"] == "torch_compute"
    assert row["numerics_class"] == "tf32" and row["max_abs_err"] == 1e-3 and row["max_rel_err"] == 1e-2
    assert row["contract"] == "tf32" and row["frac_over_tol"] == 0.0
    assert row["sandbox_layers"] == "seccomp;netns" and row["sandbox_missing"] == ""
    assert row["shapes"] == "default;held_out_0"
    assert row["profile_top_kernel"] == "my_softmax_kernel" and row["profile_custom_share"] == 0.9
    assert row["torch_version"] == "2.11.0" and row["versions"] == '{"cuda": "13.0", "torch": "2.11.0"}'
    assert row["prompt_tokens"] == 10 and row["timing_clock"] == "cuda_event" and row["sol_samples"] == 20


def test_flatten_a_bare_verdict_and_legacy_max_error():
    row = flatten_row({"verdict": "wrong_output", "problem_id": "p",
                       "max_error": {"max_abs_err_at": {"abs_err": 0.25}, "rel_l2": 0.1}, "speedup": float("nan")})
    assert row["accepted"] is False and row["speedup"] is None and row["level"] == 0
    assert row["max_abs_err"] == 0.25 and row["rel_l2"] == 0.1 and row["numerics_class"] is None
    assert row["flags"] == "" and row["sample"] is None


def test_load_results_one_row_per_verdict(tmp_path):
    pd = pytest.importorskip("pandas")
    from kerneljudge.results.export import load_results

    bench = write_bench_run(tmp_path / "bench")
    log = write_run_log(tmp_path / "log" / "run.jsonl")
    df = load_results(bench, log, labels=["b", "l"])
    assert isinstance(df, pd.DataFrame) and list(df.columns) == COLUMN_NAMES
    assert len(df) == 16 and df["run"].tolist() == ["b"] * 12 + ["l"] * 4
    for name, dtype, _, _ in COLUMNS:
        assert str(df[name].dtype) == dtype, name
    assert df["accepted"].sum() == 8
    assert df.loc[0, "numerics_class"] == "fp32" and df.loc[0, "sol_device_ms"] == 1.1
    assert df["speedup"].isna().sum() == 7
    assert pd.isna(df.loc[12, "sample"]) and df.loc[12, "source"] == str(log)
    assert df.groupby("level")["problem_id"].nunique().to_dict() == {1: 2, 2: 4}


def test_export_parquet_and_csv_round_trip(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    bench = write_bench_run(tmp_path / "bench")
    assert cli("export", str(bench), "--out", str(tmp_path / "out" / "v.parquet")) == 0
    assert "12 verdict row(s)" in capsys.readouterr().err
    back = pd.read_parquet(tmp_path / "out" / "v.parquet")
    assert list(back.columns) == COLUMN_NAMES and len(back) == 12
    assert str(back["speedup"].dtype) == "Float64" and str(back["level"].dtype) == "Int64"
    assert cli("export", str(bench), "--format", "csv", "--out", str(tmp_path / "v.txt")) == 0
    csv = pd.read_csv(tmp_path / "v.txt")
    assert len(csv) == 12 and math.isclose(csv["speedup"].max(), 120.0)
    assert csv["flags"].fillna("").str.split(";").map(lambda f: "suspicious_speedup" in f).sum() == 1
    assert cli("export", str(bench), "--out", str(tmp_path / "v.xlsx")) == 2
    assert cli("export", str(tmp_path / "nowhere"), "--out", str(tmp_path / "v.csv")) == 3


def test_missing_pandas_names_the_extra(tmp_path, monkeypatch):
    from kerneljudge.core.extras import MissingExtra
    from kerneljudge.results.export import load_results

    monkeypatch.setitem(sys.modules, "pandas", None)
    log = write_run_log(tmp_path / "run.jsonl")
    with pytest.raises(MissingExtra, match=r"pandas.*kerneljudge\[report\]"):
        load_results(log)


def test_docs_list_every_column():
    doc = (ROOT / "docs" / "results.md").read_text()
    documented = re.findall(r"^\| `([a-z0-9_]+)` \| ([A-Za-z0-9]+) \|", doc, re.M)
    assert [(name, dtype) for name, dtype, _, _ in COLUMNS] == documented


def test_load_results_is_exported_from_the_package():
    import kerneljudge
    from kerneljudge.results import export as results_data

    assert kerneljudge.load_results is results_data.load_results
    assert "load_results" in kerneljudge.__all__


def test_unjudgeable_rows_carry_their_outcome_kind(tmp_path):
    from .verdict_logs import unjudgeable

    row = flatten_row(unjudgeable("level1/3_sum", "reference_failed"))
    assert row["verdict"] == "unjudgeable" and row["problem_outcome_kind"] == "reference_failed"
    assert row["accepted"] is False and row["speedup"] is None
    assert flatten_row(verdict("p", speedup=1.0))["problem_outcome_kind"] is None      # old logs: missing
    pd = pytest.importorskip("pandas")
    from kerneljudge.results.export import load_results

    log = write_run_log(tmp_path / "run.jsonl", [verdict("p", speedup=1.0), unjudgeable("q")])
    df = load_results(log)
    assert str(df["problem_outcome_kind"].dtype) == "string"
    assert df["problem_outcome_kind"].tolist()[1] == "degenerate_reference"
    assert pd.isna(df.loc[0, "problem_outcome_kind"])
