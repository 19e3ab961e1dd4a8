"""`kerneljudge shapes`: the shapes the judge would use for a problem, and where each came from.

    kerneljudge shapes --problem FILE [--held-out aligned|general|none] [--device-memory SIZE] [--json]
                       [--no-cache] [--timeout S] [--cache-dir DIR]

Exit codes follow the main CLI: 0 when a plan was made (even an empty one), 3 for an unreadable problem.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kerneljudge.cli.options import ExitCode, add_held_out_option, device_memory_size


def register(subparsers: Any) -> None:
    """Add the `shapes` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "shapes", help="show the small (CPU) preset and held-out shapes the judge uses for a problem",
        description="Prints, for the small preset (what --preset auto uses on a CPU) and for the held-out "
                    "shapes (checked for correctness at the default and at the small preset), the constant "
                    "overrides the judge uses and where they come from: the problem's own SMALL / HELD_OUT / "
                    "HELD_OUT_SMALL ('metadata'), derived from its size constants and checked by running the "
                    "reference in a child process ('derived'), or nothing ('none'); the held-out shape far "
                    "below the benchmark size (threat B13) is marked; --held-out picks the rule the judge would "
                    "use (the same option as eval's). Plans are cached. "
                    "Rules and budgets: docs/formats.md, 'Derived presets and held-out shapes'.")
    p.add_argument("--problem", required=True, metavar="FILE", help="problem .py (class Model, get_inputs, ...)")
    add_held_out_option(p)
    p.add_argument("--device-memory", type=device_memory_size, default=None, metavar="SIZE",
                   help="show the preset fitted to a device of this much memory (24GiB, 24G, 24000MiB) where the "
                        "problem's judgement cannot fit at its default shape, as eval --device-memory would judge it")
    p.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    p.add_argument("--no-cache", action="store_true", help="derive again instead of using a cached plan")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds allowed per reference probe (default 120)")
    p.add_argument("--cache-dir", default=None, help="cache folder (default ~/.cache/kerneljudge)")
    p.set_defaults(func=cmd_shapes)


def cmd_shapes(args: argparse.Namespace) -> int:
    from kerneljudge.judging.shapes import resolve
    from kerneljudge.judging.device.turns import judgement_memory_budget
    from kerneljudge.core.problem import ProblemError, read_problem

    try:
        problem = read_problem(args.problem)
    except ProblemError as exc:
        print(f"kerneljudge: {exc}", file=sys.stderr)
        return ExitCode.INPUT
    budget = judgement_memory_budget(args.device_memory) if args.device_memory else None
    plan = resolve(problem, args.cache_dir, timeout_s=args.timeout, use_cache=not args.no_cache,
                   mode=args.held_out, memory_budget=budget)
    if args.json:
        print(plan.to_json())
        return ExitCode.OK
    print(render(problem.id, plan.to_dict()))
    return ExitCode.OK


def render(problem_id: str, plan: dict[str, Any]) -> str:
    """A plain-text table of a plan (ShapePlan.to_dict())."""
    lines = [f"shapes for {problem_id}", ""]
    fitted = plan.get("fitted") or {}
    if fitted:   # judged at this preset instead of the default on a device of that memory
        lines.append(f"{'fitted':<15} {'derived':<9} {_overrides(fitted['overrides'])}   <- needs "
                     f"{fitted['need_bytes'] / 2**30:.3g} GiB of {fitted['budget_bytes'] / 2**30:.3g} GiB "
                     f"(the default shape {fitted['base_need_bytes'] / 2**30:.3g} GiB)")
    rows = [("small", [plan["small"]] if plan["small"] or plan["source"]["small"] != "none" else []),
            ("held_out", plan["held_out"]), ("held_out_small", plan["held_out_small"])]
    for preset, shapes in rows:
        source = plan["source"][preset]
        shown = [_overrides(s) for s in shapes] or ["(none)"]
        far = (plan.get("far_below") or {}).get(preset)
        if far:
            ratio = far["base_input_elements"] / max(far["input_elements"], 1)
            shown[far["index"]] += f"   <- far below ({far['source']}): {ratio:.3g}x fewer input elements"
        lines.append(f"{preset:<15} {source:<9} {shown[0]}")
        lines += [f"{'':<25} {s}" for s in shown[1:]]
    small = (plan.get("measured") or {}).get("small") or {}
    if small.get("cpu_seconds") is not None:
        lines += ["", f"small preset: one CPU forward (one thread) takes {small['cpu_seconds'] * 1e3:.3g} ms"]
    if plan["notes"]:
        lines += ["", "notes:"] + [f"  - {n}" for n in plan["notes"]]
    return "\n".join(lines)


def _overrides(overrides: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "(the default shape)"
