"""Verdicts as a table: one flat row per verdict (`flatten_row`), a pandas DataFrame (`load_results`), and
`kerneljudge export RUN --format parquet|csv --out FILE`.

The columns are fixed and documented in docs/results.md (COLUMNS below is the source of that table; a
test keeps them in step). Fields a verdict lacks (older logs, `run` logs without bench fields, verdicts
without numerics) come out as missing values, never as errors. List-valued fields (flags, finding
codes, sandbox layers, shape presets) are joined with ";" into one string ("" when empty) so the table
stays flat in CSV and parquet alike; `df.flags.str.split(";")` gives the lists back.

pandas and pyarrow are the optional extra `report`: imported only when called.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from kerneljudge.results import verdict_rows
from kerneljudge.core.extras import MissingExtra, require
from kerneljudge.core.types import BLOCKING_FLAGS

Getter = Callable[[Mapping[str, Any]], Any]


# -------------------------------------------------------------------------------------------- helpers


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _str(x: Any) -> str | None:
    return None if x is None else str(x)


def _dict(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def _joined(items: Any) -> str:
    if isinstance(items, str):
        return items
    if not isinstance(items, (list, tuple)):
        return ""
    return ";".join(str(i) for i in items)


def _field(name: str) -> Getter:
    return lambda v: v.get(name)


def _in(outer: str, inner: str) -> Getter:
    return lambda v: _dict(v.get(outer)).get(inner)


def numerics_value(v: Mapping[str, Any], key: str) -> Any:
    """numerics[key]; for verdicts without numerics, the same quantity from max_error where it has one."""
    numerics = _dict(v.get("numerics"))
    if key in numerics:
        return numerics[key]
    legacy = _dict(v.get("max_error"))
    if key == "max_abs_err":
        return _dict(legacy.get("max_abs_err_at")).get("abs_err")
    if key == "rel_l2":
        return legacy.get("rel_l2")
    return None


def _profile_total(v: Mapping[str, Any]) -> Mapping[str, Any]:
    rows = v.get("profile")
    if isinstance(rows, list):
        for r in rows:
            if isinstance(r, Mapping) and r.get("class") == "total":
                return r
    return {}


def top_kernel(v: Mapping[str, Any]) -> str | None:
    rows = v.get("profile")
    if isinstance(rows, list):
        for r in rows:
            if isinstance(r, Mapping) and r.get("class") not in ("total", "error"):
                return _str(r.get("name"))
    return None


def _shapes(v: Mapping[str, Any]) -> str:
    shapes = v.get("shapes")
    if isinstance(shapes, Mapping):
        return ";".join(str(k) for k in shapes)
    return _joined(shapes)


# ------------------------------------------------------------------------------------------- columns

# (column, pandas dtype, meaning, getter). The order is the DataFrame's column order.
COLUMNS: list[tuple[str, str, str, Getter]] = [
    ("run", "string", "label of the run the row came from (the folder or file name unless given)", _field("run")),
    ("source", "string", "the run folder or JSONL log the row was read from", _field("source")),
    ("problem_id", "string", "problem id, e.g. level1/19_ReLU", lambda v: verdict_rows.problem_of(v)),
    ("level", "Int64", "the problem's level (from the row, else from a levelN/ problem id; 0 when unknown)",
     lambda v: verdict_rows.level_of(v)),
    ("backend", "string", "cuda, triton, cpp or torch (what the solution's kernels are written in)", _field("backend")),
    ("model", "string", "bench: the --model spec; missing for `run` logs", _field("model")),
    ("sample", "Int64", "bench: 0-based sample (trajectory) of the problem", lambda v: _int(v.get("sample"))),
    ("turn", "Int64", "bench: 0-based refinement turn", lambda v: _int(v.get("turn"))),
    ("item", "string", "bench: the item's file-name stem (<problem stem>__s<S>_t<T>)", _field("item")),
    ("verdict", "string", "correct, wrong_output, build_error, runtime_error, timeout, rejected, unjudgeable "
     "(bench: also no_code)", _field("verdict")),
    ("accepted", "boolean", "counts for fast_p: correct and no blocking flag", lambda v: bool(v.get("accepted"))),
    ("reason", "string", "the verdict's one-line reason", _field("reason")),
    ("problem_outcome_kind", "string", "unjudgeable only: why the problem could not judge, degenerate_reference or "
     "reference_failed (scores leave these rows out)", _in("problem_outcome", "kind")),
    ("speedup", "Float64", "eager reference time / solution time (end to end); missing unless correct and timed",
     lambda v: _num(v.get("speedup"))),
    ("ref_ms", "Float64", "the reference's median time, ms", lambda v: _num(v.get("ref_ms"))),
    ("sol_ms", "Float64", "the solution's median time, ms", lambda v: _num(v.get("sol_ms"))),
    ("ref_device_ms", "Float64", "the reference's device time, ms (where measured)",
     lambda v: _num(v.get("ref_device_ms"))),
    ("sol_device_ms", "Float64", "the solution's device time, ms (where measured)",
     lambda v: _num(v.get("sol_device_ms"))),
    ("speedup_device", "Float64", "ref_device_ms / sol_device_ms", lambda v: _num(v.get("speedup_device"))),
    ("speedup_vs_fp32_reference", "Float64", "speedup against a reference run in full fp32 (where measured)",
     lambda v: _num(v.get("speedup_vs_fp32_reference"))),
    ("clock", "string", "which clock `speedup` is on: end_to_end or device (where recorded)", _field("clock")),
    ("clock_rule", "string", "the --clock judged under: auto, end_to_end or device (where recorded)",
     _field("clock_rule")),
    ("timing_clock", "string", "the solution timer: cuda_event, host, host+device_idle",
     lambda v: _dict(v.get("sol_timing")).get("clock")),
    ("ref_samples", "Int64", "timed calls of the reference", lambda v: _int(_dict(v.get("ref_timing")).get("samples"))),
    ("sol_samples", "Int64", "timed calls of the solution", lambda v: _int(_dict(v.get("sol_timing")).get("samples"))),
    ("sol_std_ms", "Float64", "standard deviation of the solution's timed calls, ms",
     lambda v: _num(_dict(v.get("sol_timing")).get("std_ms"))),
    ("sol_ci95_low_ms", "Float64", "95% interval of the solution's median time, low end, ms",
     lambda v: _num(_dict(v.get("sol_timing")).get("ci95_low_ms"))),
    ("sol_ci95_high_ms", "Float64", "95% interval of the solution's median time, high end, ms",
     lambda v: _num(_dict(v.get("sol_timing")).get("ci95_high_ms"))),
    ("flags", "string", "flags joined with ';' ('' for none)", lambda v: _joined(v.get("flags"))),
    ("blocking_flags", "string", "the flags that stop acceptance (types.BLOCKING_FLAGS), joined with ';'",
     lambda v: ";".join(f for f in v.get("flags") or [] if f in BLOCKING_FLAGS)),
    ("finding_codes", "string", "static-analysis finding codes joined with ';'",
     lambda v: ";".join(str(_dict(f).get("code", "")) for f in v.get("findings") or [])),
    ("numerics_class", "string", "exact, fp32, tf32, fp16, bf16 or wrong (verdicts with numerics only)",
     _in("numerics", "class")),
    ("contract", "string", "the numerics contract judged against: tf32, fp32 or kernelbench (where recorded)",
     lambda v: v.get("contract") or _dict(v.get("numerics")).get("contract")),
    ("max_abs_err", "Float64", "largest absolute error (numerics, else max_error)",
     lambda v: _num(numerics_value(v, "max_abs_err"))),
    ("max_rel_err", "Float64", "largest relative error (numerics only)",
     lambda v: _num(numerics_value(v, "max_rel_err"))),
    ("rel_l2", "Float64", "relative L2 error of the output (numerics, else max_error)",
     lambda v: _num(numerics_value(v, "rel_l2"))),
    ("frac_over_tol", "Float64", "share of output elements over the contract's tolerance (numerics only)",
     lambda v: _num(numerics_value(v, "frac_over_tol"))),
    ("device", "string", "cpu or cuda", _field("device")),
    ("device_name", "string", "the judge's device, e.g. NVIDIA H200", _field("device_name")),
    ("precision", "string", "fp32, fp16 or bf16", _field("precision")),
    ("policy", "string", "strict or lenient", _field("policy")),
    ("preset", "string", "problem sizes judged: default, small, or fitted (to the device's memory: flag "
     "preset_fitted)", _field("preset")),
    ("shapes", "string", "shape presets checked, joined with ';' (where recorded)", _shapes),
    ("torch_version", "string", "versions.torch", _in("versions", "torch")),
    ("cuda_version", "string", "versions.cuda", _in("versions", "cuda")),
    ("triton_version", "string", "versions.triton", _in("versions", "triton")),
    ("python_version", "string", "versions.python", _in("versions", "python")),
    ("versions", "string", "all of versions as a JSON object",
     lambda v: json.dumps(v.get("versions") or {}, sort_keys=True)),
    ("problem_sha256", "string", "sha256 of the problem file judged", _field("problem_sha256")),
    ("solution_sha256", "string", "sha256 of the solution file judged", _field("solution_sha256")),
    ("build_s", "Float64", "seconds to build the solution", lambda v: _num(v.get("build_s"))),
    ("wall_s", "Float64", "seconds the judgement took", lambda v: _num(v.get("wall_s"))),
    ("profile_top_kernel", "string", "the profiled call's most expensive kernel or op", top_kernel),
    ("profile_custom_share", "Float64", "share of profiled time in the solution's own kernels",
     lambda v: _num(_profile_total(v).get("custom_share"))),
    ("profile_library_share", "Float64", "share of profiled time in library compute",
     lambda v: _num(_profile_total(v).get("library_compute_share"))),
    ("sandbox_layers", "string", "isolation layers in force, joined with ';' (where recorded)",
     lambda v: _joined(_dict(v.get("sandbox")).get("layers"))),
    ("sandbox_missing", "string", "isolation layers that could not be set up, joined with ';'",
     lambda v: _joined(_dict(v.get("sandbox")).get("missing"))),
    ("extraction", "string", "bench: ok or no_code", _field("extraction")),
    ("finish_reason", "string", "bench: stop or length", _field("finish_reason")),
    ("prompt_tokens", "Int64", "bench: prompt tokens of the request",
     lambda v: _int(_dict(v.get("usage")).get("prompt_tokens"))),
    ("completion_tokens", "Int64", "bench: completion tokens of the reply",
     lambda v: _int(_dict(v.get("usage")).get("completion_tokens"))),
    ("cost_usd", "Float64", "bench: estimated cost of the request", lambda v: _num(v.get("cost_usd"))),
    ("gen_latency_s", "Float64", "bench: seconds the model request took", lambda v: _num(v.get("gen_latency_s"))),
    ("solution", "string", "path of the file judged (bench: a private copy that no longer exists)", _field("solution")),
    ("solution_file", "string", "bench: the solution's path relative to the run folder", _field("solution_file")),
    ("error_excerpt", "string", "bounded excerpt of the build or runtime error", _field("error_excerpt")),
]

COLUMN_NAMES = [c[0] for c in COLUMNS]


def flatten_row(v: Mapping[str, Any], run: str = "", source: str = "") -> dict[str, Any]:
    """One verdict as a flat dict over COLUMN_NAMES (plain Python values; None where missing)."""
    row = {**v, "run": run, "source": source}
    return {name: get(row) for name, _, _, get in COLUMNS}


# ------------------------------------------------------------------------------------------- pandas


def rows_frame(flat: Iterable[Mapping[str, Any]]):
    """A DataFrame over COLUMNS from flattened rows, with the documented dtypes."""
    pd = require("pandas", "report", "loading results into a DataFrame")
    df = pd.DataFrame(list(flat), columns=COLUMN_NAMES)
    return df.astype({name: dtype for name, dtype, _, _ in COLUMNS})


def load_results(run: str | os.PathLike, *more: str | os.PathLike, labels: Sequence[str] | None = None):
    """A pandas DataFrame with one row per verdict of one or more runs (bench run folders or JSONL logs),
    columns as in docs/results.md. Raises reporting.runs.RunError for a missing or empty run and
    extras.MissingExtra when pandas is not installed."""
    from kerneljudge.results.runs import load_runs

    require("pandas", "report", "kerneljudge.load_results")
    runs = load_runs([run, *more], labels)
    return rows_frame(flatten_row(v, r.label, str(r.source)) for r in runs for v in r.rows)


FORMATS = ("parquet", "csv")


def export(runs: Sequence[str | os.PathLike], out: str | os.PathLike, fmt: str | None = None,
           labels: Sequence[str] | None = None) -> int:
    """Write the runs' verdicts to out as parquet or csv (fmt None: from the file's suffix); the row count."""
    fmt = fmt or Path(out).suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"cannot tell the format of {out}: give --format parquet or --format csv")
    if fmt == "parquet":
        require("pyarrow", "report", "parquet export")
    df = load_results(*runs, labels=labels)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(out).with_name(f".{Path(out).name}.tmp")
    if fmt == "parquet":
        df.to_parquet(tmp, index=False, engine="pyarrow")
    else:
        df.to_csv(tmp, index=False)
    os.replace(tmp, out)
    return len(df)


# ---------------------------------------------------------------------------------------------- CLI


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export", help="write verdicts as one flat table (parquet or CSV)",
        description="One row per verdict of the given runs (bench run folders or JSONL logs), with the columns "
                    "documented in docs/results.md; the same table kerneljudge.load_results(RUN) returns. "
                    "Needs pip install 'kerneljudge[report]'.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="a bench run folder or a verdicts JSONL file")
    p.add_argument("--out", required=True, metavar="FILE", help="the file to write (replaced if it exists)")
    p.add_argument("--format", choices=FORMATS, default=None, help="default: from the --out suffix")
    p.add_argument("--labels", type=lambda t: [x.strip() for x in t.split(",")], default=None, metavar="A,B",
                   help="names for the runs in the 'run' column (default: folder or file names)")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from kerneljudge.results.runs import RunError

    try:
        n = export(args.runs, args.out, args.format, args.labels)
    except (RunError, ValueError) as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return 3 if isinstance(exc, RunError) else 2
    except MissingExtra as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return 3
    print(f"export: {n} verdict row(s) -> {args.out}", file=sys.stderr)
    return 0


__all__ = ["COLUMNS", "COLUMN_NAMES", "flatten_row", "rows_frame", "load_results", "export", "register"]
