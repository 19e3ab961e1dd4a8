#!/usr/bin/env python
"""Calibrate the numerics classes on the bundled suite: reduced-precision variants of each problem's own
reference, judged under every numerics contract (issue 9, part 7; docs/numerics.md).

For every problem (one child process each, so a crash or a hang costs one row), the reference runs in
fp32 at the chosen preset; then variants of the same forward (numerics/reduced_precision.py):
  tf32            matmul/conv operands rounded to a 10-bit mantissa (CPU), or torch's TF32 switches (CUDA)
  tf32_truncate   operands truncated to a 10-bit mantissa, as Triton's tl.dot does by default
  fp16_operands   operands cast to fp16 and back      bf16_operands   the same with bf16
  tanh_gelu       exact GELU replaced by its tanh form (only where the problem has a GELU)
  bf16_results    every op's result rounded to bf16 (a kernel computing in bf16 where no TF32 path exists)
  split_k, fp64   honest fp32 controls: another summation order; the forward in float64
Each problem is also asked what the judge asks before any solution output is compared: can its reference
tell a right answer from a wrong one (worker/degenerate.py)? No bundled problem may be degenerate.
Each variant's output is compared with the reference by compare.compare_outputs under the tf32, fp32 and
kernelbench contracts, with the workload counted by numerics/arithmetic.py (what the judge passes).

  python scripts/calibrate_numerics.py --device cpu --preset small --out docs/evidence/DATE-cpu-numerics-calibration.md
  python scripts/calibrate_numerics.py --device cuda --preset default --jobs 12 --deadline-min 8.5 \
      --out docs/evidence/DATE-h200-numerics-calibration.md

Writes FILE.md (summary with the issue's bars, then one row per problem) and FILE.json (every number).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import fnmatch
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kerneljudge.core.paths import problems_root
from kerneljudge.core.types import CONTRACTS

ROOT = Path(__file__).resolve().parents[1]
SUITE = problems_root()
VARIANTS = ("tf32", "tf32_truncate", "fp16_operands", "bf16_operands", "tanh_gelu", "bf16_results", "split_k",
            "fp64")
INIT_SEED, INPUT_SEED, FLOOR_SEED = 1234, 5678, 91011


# ------------------------------------------------------------------------------------------ child side

def run_problem(path: str, device: str, preset_name: str, variants: list[str]) -> dict[str, Any]:
    """One problem: reference, workload, then every variant under every contract (runs in a child)."""
    import torch

    from kerneljudge.numerics import compare, reduced_precision
    from kerneljudge.worker import degenerate, fp64_floor, loading, tf32_floor, common as worker
    from kerneljudge.numerics.arithmetic import arithmetic_profile
    from kerneljudge.numerics.error_classes import WORKLOAD_KEYS
    from kerneljudge.core.problem import read_problem

    worker.pin_global_flags(device, 1)
    problem = read_problem(path)
    row: dict[str, Any] = {"id": problem.id, "category": problem.category}
    module = loading.load_module(problem.path, problem.preset(preset_name))
    init_inputs = loading.make_init_inputs(module, INIT_SEED)
    model = loading.build_model(module.Model, init_inputs, INIT_SEED, device, "fp32")
    inputs = loading.make_inputs(module, INPUT_SEED, device, "fp32")
    ref = loading.flatten_output(model(*loading.snapshot_inputs(inputs)), device)
    workload = arithmetic_profile(model, loading.snapshot_inputs(inputs))
    row["workload"] = workload
    judged: dict[str, Any] = {"workload": {k: workload[k] for k in WORKLOAD_KEYS}}
    # the floors as the judge measures them (worker/tf32_floor.py, worker/fp64_floor.py), but on other inputs
    # than the variants run on, so that no variant is judged against a floor measured on its own values
    floor_seeds = [FLOOR_SEED + k for k in range(tf32_floor.FLOOR_SEEDS)]
    with torch.no_grad():
        floor_outs = [loading.flatten_output(model(*loading.make_inputs(module, seed, device, "fp32")), device)
                      for seed in floor_seeds]
    floor_refs = [tensors for _, tensors in floor_outs]
    judged["tf32_floors"] = tf32_floor.measure(module, model, floor_seeds, device, floor_refs)
    judged["fp64_floors"] = fp64_floor.measure(module, model, floor_seeds[0], device, floor_refs[0])
    row["tf32_floors"], row["fp64_floors"] = judged["tf32_floors"], judged["fp64_floors"]
    # the judge's degenerate-reference test, on as many inputs as it uses (the first ones are the floors')
    outputs: dict[int, Any] = dict(enumerate(floor_outs))

    def output(i: int) -> Any:
        if i not in outputs:
            with torch.no_grad():
                outputs[i] = loading.flatten_output(
                    model(*loading.make_inputs(module, FLOOR_SEED + i, device, "fp32")), device)
        return outputs[i]

    row["degenerate"] = {contract: degenerate.check(contract, "fp32", output, 1 + degenerate.OTHER_INPUTS,
                                                    judged["workload"], module.__dict__.get("TOLERANCE"),
                                                    judged["tf32_floors"], judged["fp64_floors"])
                         for contract in ("tf32", "fp32")}
    row["variants"] = {}
    for name in variants:
        try:
            out, calls = _run_variant(name, model, inputs, device, reduced_precision, loading, torch)
        except Exception as exc:  # a variant the problem cannot run (dtype mismatch in float64, ...)
            row["variants"][name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            continue
        if name == "tanh_gelu" and calls == 0:
            row["variants"][name] = {"not_applicable": "no exact GELU in the forward"}
            continue
        found: dict[str, Any] = {"calls": calls, "identical": _identical(ref, out)}
        for contract in CONTRACTS:
            result = compare.compare_outputs(ref, out, "fp32", None, contract, **judged)
            found[contract] = {"ok": result.ok, "reason": result.reason[:300]}
            if contract == "tf32":
                numerics = result.detail.get("numerics") or {}
                found.update({k: numerics.get(k) for k in ("class", "rel_l2", "max_rel_err", "bounds")})
                found["floor_raised"] = ((numerics.get("basis") or {}).get("tf32_floor") or {}).get("raised", [])
                found["use"] = {cls: _use(numerics, cls) for cls in found["bounds"] or {}}
        if name in ("split_k", "fp64"):
            # the same control with the brief's FLOP-based reduction length, for comparison
            flop_k = workload.get("flops_reduction_length") or 1
            alt = compare.compare_outputs(ref, out, "fp32", None, "fp32",
                                          workload={**judged["workload"], "reduction_length": flop_k})
            found["fp32_with_flop_k"] = alt.ok
        row["variants"][name] = found
        del out
    return row


def _run_variant(name: str, model: Any, inputs: list[Any], device: str, rp: Any, loading: Any,
                 torch: Any) -> tuple[Any, int]:
    with torch.no_grad():
        if name == "fp64":
            twin, twin_inputs = rp.as_fp64(model, inputs)
            structure, tensors = loading.flatten_output(twin(*twin_inputs), device)
            return (structure, [t.float() if t.is_floating_point() else t for t in tensors]), 0
        with rp.running_as(name, device) as found:
            out = loading.flatten_output(model(*loading.snapshot_inputs(inputs)), device)
        return out, found["calls"]


def _use(numerics: dict[str, Any], cls: str) -> float | None:
    """How much of class `cls`'s bounds the error uses: the larger of its two ratios (1 = at the bound)."""
    limit = numerics["bounds"][cls]
    if numerics.get("rel_l2") is None or numerics.get("max_rel_err") is None:
        return None
    return max(numerics["rel_l2"] / limit["rel_l2"], numerics["max_rel_err"] / limit["max_rel_err"])


def _identical(ref: tuple[Any, list[Any]], out: tuple[Any, list[Any]]) -> bool:
    import torch

    return ref[0] == out[0] and all(r.dtype == o.dtype and r.shape == o.shape and torch.equal(r, o)
                                    for r, o in zip(ref[1], out[1]))


def child_main(path: str, device: str, preset: str, variants: list[str]) -> None:
    started = time.monotonic()
    where = _problem_id(Path(path))
    try:
        row = run_problem(path, device, preset, variants)
    except ModuleNotFoundError as exc:
        row = {"path": where, "skipped": f"needs the {exc.name!r} package"}
    except Exception as exc:
        row = {"path": where, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    row["seconds"] = round(time.monotonic() - started, 2)
    print("\nCALIBRATION-ROW " + json.dumps(row, default=_jsonable))


def _jsonable(x: Any) -> Any:
    return str(x)


# ----------------------------------------------------------------------------------------- parent side

def _problem_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def find_problems(levels: list[int] | None, pattern: str | None) -> list[Path]:
    paths = []
    for level_dir in sorted(SUITE.glob("level*")):
        level = int(level_dir.name.removeprefix("level"))
        if levels and level not in levels:
            continue
        for p in sorted(level_dir.glob("*.py"), key=lambda q: (int(q.stem.split("_")[0]), q.stem)):
            pid = f"level{level}/{p.stem}"
            if pattern and not any(fnmatch.fnmatch(pid, one) or fnmatch.fnmatch(p.name, one)
                                   for one in pattern.split(",")):
                continue
            paths.append(p)
    return paths


def run_child(path: Path, args: argparse.Namespace, stop_at: float) -> dict[str, Any]:
    """One problem in its own child process; a problem the deadline leaves no time for is skipped, not failed."""
    left = stop_at - time.monotonic()
    if left < 5:
        return {"path": _problem_id(path), "skipped": "not run: --deadline-min reached"}
    cmd = [sys.executable, __file__, "--one", str(path), "--device", args.device, "--preset", args.preset,
           "--variants", ",".join(args.variants)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=min(args.timeout, left), env=env)
    except subprocess.TimeoutExpired:
        if left < args.timeout:
            return {"path": _problem_id(path), "skipped": "stopped at --deadline-min"}
        return {"path": _problem_id(path), "error": f"timed out after {args.timeout} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("CALIBRATION-ROW "):
            return json.loads(line.removeprefix("CALIBRATION-ROW "))
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"path": _problem_id(path), "error": f"child exited {done.returncode}: {' | '.join(tail)[:300]}"}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's bars and the controls, counted over the rows."""
    ran = [r for r in rows if "variants" in r]

    def variants(name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [(r, r["variants"][name]) for r in ran if name in r["variants"] and "class" in r["variants"][name]]

    def rejected(name: str, contract: str) -> list[str]:
        return [r["id"] for r, v in variants(name) if not v[contract]["ok"]]

    matmul_conv = [(r, v) for r, v in variants("tf32") if r["workload"]["matmul_stages"] > 0 and not v["identical"]]
    # no matmul-like op: the tf32 class is the fp32 class there (with approximate transcendentals, a little wider)
    no_matmul = [(r, v) for r, v in variants("bf16_results") if r["workload"]["matmul_stages"] == 0
                 and not v["identical"]]
    bf16 = variants("bf16_operands")
    bf16_beyond = [(r, v) for r, v in bf16 if not v["identical"] and v["class"] == "wrong"]
    bf16_within = [r["id"] for r, v in bf16 if not v["identical"] and v["class"] != "wrong"]
    return {
        "problems": len(rows), "ran": len(ran),
        "skipped": {r["path"]: r["skipped"] for r in rows if "skipped" in r},
        "errors": {r.get("id", r.get("path")): r["error"] for r in rows if "error" in r},
        "bar_tf32_no_false_rejections": {
            name: {"judged": len(variants(name)), "rejected": rejected(name, "tf32")}
            for name in ("tf32", "tf32_truncate", "fp16_operands")},
        "bar_fp32_rejects_tf32_on_matmul_conv": {
            "judged": len(matmul_conv), "accepted": [r["id"] for r, v in matmul_conv if v["fp32"]["ok"]],
            "identical_not_counted": [r["id"] for r, v in variants("tf32")
                                      if r["workload"]["matmul_stages"] > 0 and v["identical"]]},
        "bar_bf16_beyond_tf32_bound_rejected": {
            "beyond": len(bf16_beyond),
            "accepted_under_tf32": [r["id"] for r, v in bf16_beyond if v["tf32"]["ok"]],
            "accepted_under_fp32": [r["id"] for r, v in bf16_beyond if v["fp32"]["ok"]],
            "within_tf32_bound": bf16_within},
        "bar_bf16_results_without_matmul_rejected": {
            "judged": len(no_matmul), "accepted_under_tf32": [r["id"] for r, v in no_matmul if v["tf32"]["ok"]],
            "accepted_under_fp32": [r["id"] for r, v in no_matmul if v["fp32"]["ok"]]},
        "degenerate": {contract: {r["id"]: r["degenerate"][contract]["reason"] for r in ran
                                  if (r.get("degenerate") or {}).get(contract)} for contract in ("tf32", "fp32")},
        "tanh_gelu": {"judged": len(variants("tanh_gelu")), "rejected_under_tf32": rejected("tanh_gelu", "tf32")},
        "controls_fp32": {
            name: {"judged": len(variants(name)), "rejected_under_fp32": rejected(name, "fp32"),
                   "rejected_under_fp32_with_flop_k": [r["id"] for r, v in variants(name)
                                                       if not v.get("fp32_with_flop_k", True)]}
            for name in ("split_k", "fp64")},
        "kernelbench_accepts": {name: sum(v["kernelbench"]["ok"] for _, v in variants(name)) for name in VARIANTS},
        "largest_use": {name: _largest_use(variants(name), "fp32" if name in ("split_k", "fp64") else "tf32")
                        for name in VARIANTS if name not in ("bf16_operands", "bf16_results")},
        "smallest_use_bf16_beyond": min((v["use"]["tf32"] for _, v in bf16_beyond), default=None),
        "classes": {name: _count(v["class"] for _, v in variants(name)) for name in VARIANTS},
        "tf32_floor_raised": sorted({r["id"] for r, v in variants("tf32_truncate") + variants("fp16_operands")
                                     if v.get("floor_raised")}),
    }


def _largest_use(found: list[tuple[dict[str, Any], dict[str, Any]]], cls: str) -> dict[str, Any] | None:
    """The variant that comes closest to class `cls`'s bounds (a use of 1 is at the bound)."""
    used = [(v["use"].get(cls), r["id"]) for r, v in found if not v["identical"] and v["use"].get(cls) is not None]
    if not used:
        return None
    use, pid = max(used)
    return {"class": cls, "use": use, "problem": pid}


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for x in items:
        counts[x] = counts.get(x, 0) + 1
    return counts


def environment(device: str) -> dict[str, Any]:
    import torch

    env = {"python": platform.python_version(), "torch": torch.__version__, "machine": platform.machine(),
           "cpu": _cpu_name(), "cpus": os.cpu_count(), "device": device}
    if device == "cuda" and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        env["cuda"] = torch.version.cuda
    return env


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _cell(v: dict[str, Any] | None) -> str:
    if v is None:
        return ""
    if "error" in v:
        return "error"
    if "not_applicable" in v:
        return "n/a"
    marks = "".join("✓" if v[c]["ok"] else "✗" for c in CONTRACTS)
    if v["identical"]:
        return f"identical {marks}"
    return f"{v['class']} {v['rel_l2']:.1e} {marks}"


def write_markdown(out: Path, meta: dict[str, Any], summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    bars = summary["bar_tf32_no_false_rejections"]
    fp32 = summary["bar_fp32_rejects_tf32_on_matmul_conv"]
    bf16 = summary["bar_bf16_beyond_tf32_bound_rejected"]
    lines = [
        f"# Numerics calibration ({meta['device']}, preset {meta['preset']})", "",
        f"- date: {meta['date']}", f"- machine: {meta['env']['cpu']} ({meta['env']['cpus']} CPUs)"
        + (f", {meta['env']['gpu']}, CUDA {meta['env']['cuda']}" if "gpu" in meta["env"] else ""),
        f"- versions: python {meta['env']['python']}, torch {meta['env']['torch']}, kerneljudge at {meta['commit']}",
        f"- command: `{meta['command']}`", f"- wall time: {meta['seconds']:.0f} s", "",
        "Variants of each problem's own reference (scripts/calibrate_numerics.py, docs/numerics.md), compared",
        "with the fp32 reference under the tf32, fp32 and kernelbench contracts.", "", "## The issue's bars", "",
        f"Problems: {summary['problems']}; ran {summary['ran']}; skipped {len(summary['skipped'])}; "
        f"errors {len(summary['errors'])}.", "",
        "| bar | judged | result |", "|---|---|---|",
    ]
    for name in ("tf32", "tf32_truncate", "fp16_operands"):
        b = bars[name]
        lines.append(f"| under tf32, no false rejection of `{name}` | {b['judged']} | "
                     f"{len(b['rejected'])} rejected{_names(b['rejected'])} |")
    lines.append(f"| under fp32, every `tf32` variant of a matmul/conv problem rejected | {fp32['judged']} | "
                 f"{len(fp32['accepted'])} accepted{_names(fp32['accepted'])} |")
    lines.append(f"| `bf16_operands` beyond the tf32 bound rejected under tf32 and fp32 | {bf16['beyond']} | "
                 f"{len(bf16['accepted_under_tf32'])} accepted under tf32, {len(bf16['accepted_under_fp32'])} "
                 "under fp32 |")
    nb = summary["bar_bf16_results_without_matmul_rejected"]
    lines.append("| `bf16_results` of a problem with no matmul-like op rejected under tf32 and fp32 | "
                 f"{nb['judged']} | "
                 f"{len(nb['accepted_under_tf32'])} accepted under tf32{_names(nb['accepted_under_tf32'])}, "
                 f"{len(nb['accepted_under_fp32'])} under fp32{_names(nb['accepted_under_fp32'])} |")
    for contract, found in summary["degenerate"].items():
        lines.append(f"| no problem degenerate under {contract} (worker/degenerate.py) | {summary['ran']} | "
                     f"{len(found)} degenerate{_names(sorted(found))} |")
    lines += ["", "Not counted in the fp32 bar (the variant's output is bitwise the reference's): "
              + (", ".join(fp32["identical_not_counted"]) or "none") + ".",
              f"`bf16_operands` variants within the tf32 bound (classed tf32, so accepted under tf32): "
              f"{len(bf16['within_tf32_bound'])}{_names(bf16['within_tf32_bound'])}.", "", "## Controls", ""]
    tg = summary["tanh_gelu"]
    lines.append(f"- `tanh_gelu` (problems with a GELU): {tg['judged']} judged, "
                 f"{len(tg['rejected_under_tf32'])} rejected under tf32{_names(tg['rejected_under_tf32'])}.")
    for name, c in summary["controls_fp32"].items():
        lines.append(f"- `{name}` (honest fp32): {c['judged']} judged, {len(c['rejected_under_fp32'])} rejected "
                     f"under fp32{_names(c['rejected_under_fp32'])}; with the FLOP-based reduction length "
                     f"instead: {len(c['rejected_under_fp32_with_flop_k'])} rejected"
                     f"{_names(c['rejected_under_fp32_with_flop_k'])}.")
    lines.append("- closest to the bound (1 = at it): " + "; ".join(
        f"{k} uses {v['use']:.2f} of the {v['class']} bound ({v['problem']})"
        for k, v in summary["largest_use"].items() if v) + (
        f"; the bf16_operands variant nearest the tf32 bound from beyond uses "
        f"{summary['smallest_use_bf16_beyond']:.2f} of it." if summary["smallest_use_bf16_beyond"] else "."))
    lines.append("- accepted under kernelbench: " + ", ".join(f"{k} {v}" for k, v in
                                                                summary["kernelbench_accepts"].items()) + ".")
    lines.append("- classes: " + "; ".join(f"{k}: " + ", ".join(f"{c} {n}" for c, n in sorted(v.items()))
                                           for k, v in summary["classes"].items()) + ".")
    raised = summary.get("tf32_floor_raised", [])
    lines.append(f"- tf32 bounds raised by the reference's own TF32 error (worker/tf32_floor.py): "
                 f"{len(raised)}{_names(raised, 40)}.")
    if summary["skipped"] or summary["errors"]:
        lines += ["", "Skipped or failed problems:", ""]
        late = [k for k, v in summary["skipped"].items() if "--deadline-min" in v]
        lines += [f"- {k}: {v}" for k, v in {**summary["skipped"], **summary["errors"]}.items() if k not in late]
        if late:
            lines.append(f"- not run, the --deadline-min came first: {len(late)}{_names(late, 40)}")
    lines += ["", "## Per problem", "",
              "K = reduction length, D = matmul stages, E = op stages (numerics/arithmetic.py); K_flops = FLOPs /"
              " (2 x outputs). A cell: class, relative L2 error, then pass (✓) or fail (✗) under tf32, fp32,"
              " kernelbench.", "",
              "| problem | K | D | E | K_flops | " + " | ".join(VARIANTS) + " |",
              "|---|---|---|---|---|" + "---|" * len(VARIANTS)]
    for r in rows:
        if "variants" not in r:
            continue
        w = r["workload"]
        cells = [_cell(r["variants"].get(name)) for name in VARIANTS]
        lines.append(f"| {r['id']} | {w['reduction_length']} | {w['matmul_stages']} | {w['op_stages']} | "
                     f"{w['flops_reduction_length']} | " + " | ".join(cells) + " |")
    out.write_text("\n".join(lines) + "\n")


def _names(ids: list[str], limit: int = 12) -> str:
    if not ids:
        return ""
    shown = ", ".join(ids[:limit]) + (f", and {len(ids) - limit} more" if len(ids) > limit else "")
    return f" ({shown})"


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--preset", choices=("small", "default"), default=None,
                    help="problem sizes: each problem's SMALL dict, or its own constants (default: small on "
                         "the CPU, default on CUDA)")
    ap.add_argument("--level", type=int, action="append", help="only this suite level (repeatable)")
    ap.add_argument("--problems", help="only problems whose id (level1/1_square_matmul) or file name matches this glob "
                    "(several: comma-separated)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated subset of {', '.join(VARIANTS)}")
    ap.add_argument("--jobs", type=int, default=1, help="problems run at once (one child process each)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per problem")
    ap.add_argument("--deadline-min", type=float, default=None,
                    help="start no problem after this many minutes and stop the running ones then, so a session "
                         "with a time limit still ends with a report (the rest are listed as not run)")
    ap.add_argument("--out", type=Path, help="write FILE.md and FILE.json (default: print the summary only)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.preset = args.preset or ("small" if args.device == "cpu" else "default")
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    if args.one:
        child_main(args.one, args.device, args.preset, args.variants)
        return 0
    paths = find_problems(args.level, args.problems)
    if not paths:
        ap.error("no suite problem matches --level/--problems")
    started = time.monotonic()
    stop_at = started + (args.deadline_min * 60 if args.deadline_min else float("inf"))
    rows: list[dict[str, Any]] = [{}] * len(paths)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_child, p, args, stop_at): i for i, p in enumerate(paths)}
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[future]
            rows[i] = future.result()
            label = rows[i].get("id") or rows[i].get("path")
            state = "skipped" if "skipped" in rows[i] else "error" if "error" in rows[i] else "ok"
            print(f"[{n}/{len(paths)}] {label}: {state}", file=sys.stderr, flush=True)
    summary = summarize(rows)
    meta = {"date": datetime.date.today().isoformat(), "device": args.device, "preset": args.preset,
            "env": environment(args.device), "commit": _commit(), "seconds": time.monotonic() - started,
            "command": "python scripts/calibrate_numerics.py " + shlex.join(argv if argv is not None else sys.argv[1:])}
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows},
                                                            indent=1, default=_jsonable) + "\n")
        write_markdown(args.out.with_suffix(".md"), meta, summary, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
